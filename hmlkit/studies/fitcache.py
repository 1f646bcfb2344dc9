"""A disk cache of the studies' fits and cells that loads no code: a fit several studies make
is made once, and a rerun computes only what no earlier run stored.

Table 1's rows at full tags are Fig 5's points at 0 % removed, Fig 5's HML-RF row is Fig 6's
full model at every rate, Fig 8's phi = 3 point is Table 1's HML-RF row: the same method on
the same data with the same seed and settings. A study's cell (one method, mode, fold, rate
or parameter value) is stored the same way, so that a run stopped after hours loses only its
unfinished cells.

API
---
``cached(what, settings, data, seed, compute, check=None)``
    ``compute()``'s value, from the cache when stored before under the same key, else
    computed, stored and returned. With the cache off (``HMLKIT_FIT_CACHE=off``) it only
    calls ``compute()``.
``load(what, settings, data, seed, check=None)``
    The stored value, or None when there is none (or it failed a check: then warned).
``store(what, settings, data, seed, value, check=None)``
    Store ``value``; returns the entry's path, or None when the cache is off or the write
    failed (a warning says why: a full disk never fails the fit itself).
``cached_labels(what, settings, data, n_clusters, seed, compute)``
    A clustering's labels: int64, shape (n_samples,), each in [0, n_samples).
``entry_key(what, settings, data, seed)``
    The canonical key text of an entry (what the file name is a digest of).
``cache_dir()``
    The cache folder, or None when off; raises :class:`FitCacheError` for a bad
    ``HMLKIT_FIT_CACHE``.

The key: ``what`` (a string naming the method or cell), ``settings`` (numbers, strings,
bools, None, lists, dicts with string keys, numpy arrays; ``n_jobs`` and ``verbose`` left
out at any depth, as they change how fast a fit runs, never what it finds), ``data`` (a
``TaggedData``, keyed by the content of what a method may read of it: features, observed
tags, hierarchy, tag names, groups; or a string the caller made, e.g. a digest of data
files; or None), ``seed`` (an int or None) and the kit's code (every source and package
data file) with the versions of the numerical libraries. Keys are canonical typed text:
``1``, ``1.0`` and ``True`` are three different settings, ``(1, 2)`` and ``[1, 2]`` one.

The value: a numpy array (any dtype but ``object``), or a flat dict with string keys
whose values are numpy arrays (not ``object``) or JSON scalars: float (NaN and infinities
too), int, bool, str, None, or a flat list of floats and ints. It comes back as it went
in: arrays with their dtype and shape, a float as a float, an int as an int, a list as a
list (a tuple as a list, a numpy scalar as the Python number). Anything else is refused
with a ``TypeError`` when stored.

On disk: one ``.npz`` file per entry, ``<cache>/<what>/<sha256 of the key>.npz``, holding
the arrays and a JSON record (``__meta__``, UTF-8 bytes) of the full key, the value's
layout (each array's dtype and shape, each scalar with its type) and the kit modules the
computing process had loaded. Nothing in it is a pickle, and it is read with
``allow_pickle=False``: a file planted in the cache folder (a team share, ``/tmp``) cannot
run code. Before use an entry is checked: it is a ``.npz`` of exactly the members its
record names, its key is the key asked for, every array has the recorded dtype and shape,
every scalar the recorded type, and the caller's ``check(value)`` passes (it raises, or
returns False, to refuse). An entry that fails any check is ignored, with one warning
naming the file (:class:`FitCacheWarning`), and recomputed and overwritten. Entries are
written to a temporary file in the same folder and renamed into place, so several
processes (runner workers, Dask workers on a shared folder) may store the same entry at
once: a reader sees a whole entry or none, and a failed write (a full disk) leaves no
temporary file.

The studies' own keys stay right: a hit imports the kit's modules the computing process
had loaded (only modules of the installed kit, by name), so the study records them in its
``run_deps`` as if it had made the fit itself (:mod:`hmlkit.studies.keys`).

The cache lives in ``data/cache/fits`` (ignored by git). ``HMLKIT_FIT_CACHE`` names another
folder (created if need be), or ``off`` (any case, surrounding spaces ignored) turns it off;
a value naming a file, or a folder that cannot be created or written, is an error naming the
variable, raised at the first use. Entries of the earlier ``joblib`` cache (``joblib/``,
pickles) are never read; remove that folder at will.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import io
import json
import numbers
import os
import re
import sys
import uuid
import warnings
from pathlib import Path

import numpy as np

from .._files import file_mode
from .._paths import REPO_ROOT
from .keys import PACKAGE_DIR, file_digest, library_versions, package_files

ENV = "HMLKIT_FIT_CACHE"
DEFAULT_DIR = REPO_ROOT / "data" / "cache" / "fits"
# settings that change how fast a fit runs, never what it finds
NOT_IN_KEY = ("n_jobs", "verbose")
FORMAT = 1
META = "__meta__"

_KIT = {}  # the kit digest, once per process
_FOLDERS = {}  # HMLKIT_FIT_CACHE value -> the checked folder, None (off) or the error it gave
_WARNED = set()
_MODULE_NAME = re.compile(r"hmlkit(\.[A-Za-z_][A-Za-z0-9_]*)*")


class FitCacheError(ValueError):
    """``HMLKIT_FIT_CACHE`` names no usable folder."""


class FitCacheWarning(UserWarning):
    """A cache entry was ignored (failed a check) or could not be written."""


# ---- where -----------------------------------------------------------------------------
def cache_dir():
    """The cache folder, or None when ``HMLKIT_FIT_CACHE=off``. Checked once per process and
    value: a file, or a folder that cannot be created or written to, raises
    :class:`FitCacheError` naming the variable and the path (the default folder that cannot
    be written only turns the cache off, with a warning)."""
    raw = os.environ.get(ENV)
    if raw not in _FOLDERS:
        _FOLDERS[raw] = _resolve(raw)
    got = _FOLDERS[raw]
    if isinstance(got, FitCacheError):
        raise FitCacheError(str(got))
    return got


def _resolve(raw):
    from .._files import check_folder

    value = (raw or "").strip()
    if value.lower() == "off":
        return None
    if not value:
        try:
            return check_folder(DEFAULT_DIR, "the fit cache's folder")
        except ValueError as exc:
            warnings.warn(f"{exc}: fits are not cached (set {ENV} to a writable folder, or to off)",
                          FitCacheWarning, stacklevel=4)
            return None
    try:
        return check_folder(Path(value).expanduser().absolute(), ENV)  # where it was at first use
    except ValueError as exc:
        return FitCacheError(f"{exc}: set {ENV} to a writable folder, or to off")


# ---- the key ---------------------------------------------------------------------------
def kit_digest():
    """sha256 of every source file and package data file of the kit, and of the library
    versions: the code a cached fit was made with."""
    if "digest" not in _KIT:
        h = hashlib.sha256(json.dumps(library_versions(), sort_keys=True).encode())
        for f in package_files((".py", ".json", ".csv")):
            h.update(str(f.relative_to(PACKAGE_DIR)).encode())
            h.update(file_digest(f).encode())
        _KIT["digest"] = h.hexdigest()
    return _KIT["digest"]


def _update(h, a):
    a = np.ascontiguousarray(a)
    h.update(f"{a.dtype.str}{a.shape}".encode())
    h.update(a.tobytes())


def data_digest(data):
    """sha256 of what a clustering method may read of a TaggedData: its features, observed
    tags, hierarchy, tag names and groups (never ``Y_true``, which no method reads)."""
    import scipy.sparse as sp

    h = hashlib.sha256()
    _update(h, data.X)
    Y = sp.csr_matrix(data.Y)
    Y.sort_indices()
    for a in (Y.indptr, Y.indices, Y.data, np.asarray(Y.shape)):
        _update(h, a)
    h.update(json.dumps([[int(t) for t in layer] for layer in data.layers] if data.layers is not None else None)
             .encode())
    h.update(json.dumps(None if data.tag_names is None else [str(t) for t in data.tag_names]).encode())
    _update(h, np.asarray([] if data.groups is None else data.groups))
    return h.hexdigest()


def _typed(v, where, strip=False):
    """``v`` as JSON that keeps its type: 1, 1.0 and True give different text."""
    if isinstance(v, (bool, np.bool_)):
        return ["bool", bool(v)]
    if isinstance(v, numbers.Integral):
        return ["int", int(v)]
    if isinstance(v, numbers.Real):
        return ["float", repr(float(v))]  # repr: exact, and 'nan' / 'inf' as text
    if isinstance(v, str):
        return ["str", v]
    if v is None:
        return ["none"]
    if isinstance(v, (list, tuple)):
        return ["list", [_typed(x, f"{where}[{i}]", strip) for i, x in enumerate(v)]]
    if isinstance(v, dict):
        bad = [k for k in v if not isinstance(k, str)]
        if bad:
            raise TypeError(f"fit cache key: {where} has a key {bad[0]!r} that is not a string")
        return ["dict", [[k, _typed(x, f"{where}[{k!r}]", strip)] for k, x in sorted(v.items())
                         if not (strip and k in NOT_IN_KEY)]]
    if isinstance(v, np.ndarray) and v.dtype != object:
        h = hashlib.sha256()
        _update(h, v)
        return ["array", v.dtype.str, list(v.shape), h.hexdigest()]
    raise TypeError(f"fit cache key: {where} is a {type(v).__name__}; give a number, string, bool, None, "
                    "list, dict or numpy array")


def entry_key(what, settings, data, seed):
    """The canonical text of the key of an entry (see the module's docstring)."""
    if not isinstance(what, str) or not what:
        raise TypeError(f"fit cache: what must be a non-empty string, not {what!r}")
    if isinstance(data, str):
        data_id = ["given", data]
    elif data is None:
        data_id = ["none"]
    elif hasattr(data, "X") and hasattr(data, "Y"):
        data_id = ["tagged", data_digest(data)]
    else:
        raise TypeError(f"fit cache: data must be a TaggedData, a string or None, not a {type(data).__name__}")
    if seed is not None and (isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral)):
        raise TypeError(f"fit cache: seed must be an integer or None, not {seed!r}")
    key = {"format": FORMAT, "what": what, "settings": _typed(settings, "settings", strip=True),
           "data": data_id, "seed": _typed(seed, "seed"), "kit": kit_digest()}
    return json.dumps(key, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _entry_path(where, what, key):
    folder = re.sub(r"[^A-Za-z0-9_.-]+", "_", what).strip("._")[:60] or "_"
    return Path(where) / folder / f"{hashlib.sha256(key.encode()).hexdigest()}.npz"


# ---- the value -------------------------------------------------------------------------
def _scalar(v, where):
    """A JSON scalar of a value (numpy scalars as Python numbers), and its type's name."""
    if isinstance(v, (bool, np.bool_)):
        return "bool", bool(v)
    if isinstance(v, numbers.Integral):
        return "int", int(v)
    if isinstance(v, numbers.Real):
        return "float", float(v)
    if isinstance(v, str):
        return "str", v
    if v is None:
        return "none", None
    if isinstance(v, (list, tuple)):
        out = []
        for i, x in enumerate(v):
            if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
                raise TypeError(f"fit cache value: {where}[{i}] is a {type(x).__name__}; a list holds floats "
                                "and ints only")
            out.append(int(x) if isinstance(x, numbers.Integral) else float(x))
        return "list", out
    raise TypeError(f"fit cache value: {where} is a {type(v).__name__}; give a numpy array, a float, int, bool, "
                    "str, None or a list of numbers")


def _array(v, where):
    if v.dtype == object:
        raise TypeError(f"fit cache value: {where} is an array of Python objects; only plain dtypes are stored")
    return v


def _layout(value):
    """(the value as stored and returned, {member: array}, the JSON layout of the value)."""
    if isinstance(value, np.ndarray):
        arr = _array(value, "the value")
        return arr, {"a0": arr}, {"kind": "array", "arrays": {"a0": [arr.dtype.str, list(arr.shape)]}}
    if not isinstance(value, dict):
        raise TypeError(f"fit cache value: a numpy array or a dict, not a {type(value).__name__}")
    out, members, items = {}, {}, []
    for k, v in value.items():
        if not isinstance(k, str):
            raise TypeError(f"fit cache value: key {k!r} is not a string")
        if isinstance(v, np.ndarray):
            member = f"a{len(members)}"
            out[k] = members[member] = _array(v, f"value[{k!r}]")
            items.append([k, "array", member, v.dtype.str, list(v.shape)])
        else:
            kind, out[k] = _scalar(v, f"value[{k!r}]")
            items.append([k, kind, out[k]])
    return out, members, {"kind": "dict", "items": items}


_SCALAR_TYPES = {"bool": (bool,), "int": (int,), "float": (float,), "str": (str,), "none": (type(None),),
                 "list": (list,)}


def _read_value(z, layout):
    """The value an entry's layout describes, from its members ``z``; ValueError if they
    disagree in any way."""
    def array(member, dtype, shape):
        if member not in z:
            raise ValueError(f"member {member} is missing")
        a = z[member]
        if a.dtype.str != dtype or list(a.shape) != list(shape):
            raise ValueError(f"member {member} is {a.dtype.str}{list(a.shape)}, its record says {dtype}{list(shape)}")
        return a

    kind = layout.get("kind")
    if kind == "array":
        arrays = layout.get("arrays")
        if not (isinstance(arrays, dict) and list(arrays) == ["a0"]):
            raise ValueError("its record has no array")
        names = {"a0"}
        value = array("a0", *arrays["a0"])
    elif kind == "dict":
        value, names = {}, set()
        for item in layout.get("items", ()):
            k, t = item[0], item[1]
            if not isinstance(k, str) or k in value:
                raise ValueError(f"its record has a bad key {k!r}")
            if t == "array":
                names.add(item[2])
                value[k] = array(*item[2:5])
            elif t in _SCALAR_TYPES:
                v = item[2]
                if type(v) not in _SCALAR_TYPES[t] or (
                        t == "list" and not all(type(x) in (int, float) for x in v)):
                    raise ValueError(f"{k!r} is a {type(v).__name__}, its record says {t}")
                value[k] = v
            else:
                raise ValueError(f"{k!r} has an unknown type {t!r}")
    else:
        raise ValueError(f"its record's kind is {kind!r}")
    extra = set(z.files) - names - {META}
    if extra:
        raise ValueError(f"it holds members its record does not name: {sorted(extra)}")
    return value


def _passes(check, value):
    """Whether ``check`` accepts ``value`` (it raises, or returns False, to refuse), and why not."""
    if check is None:
        return True, ""
    try:
        ok = check(value)
        refused = ok is not None and not bool(ok)  # None (no verdict) passes, False refuses
    except Exception as exc:
        return False, f"{type(exc).__name__}: {exc}"
    return not refused, "refused by its check"


# ---- reading and writing ---------------------------------------------------------------
def _warn(path, msg):
    if str(path) in _WARNED:
        return
    _WARNED.add(str(path))
    warnings.warn(f"fit cache entry {path}: {msg}", FitCacheWarning, stacklevel=4)


def _import_modules(modules):
    """Import the kit modules a computing process had loaded: names of installed kit modules
    only (nothing else a file could name is imported)."""
    if not isinstance(modules, list):
        raise ValueError("its record's module list is not a list")
    for name in modules:
        if not (isinstance(name, str) and _MODULE_NAME.fullmatch(name)) or name.endswith(".__main__"):
            raise ValueError(f"its record names {name!r}, not a module of the kit")
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        origin = getattr(spec, "origin", None)
        if not origin or not Path(origin).resolve().is_relative_to(PACKAGE_DIR.resolve()):
            raise ValueError(f"its record names {name!r}, not a module of this kit")
        importlib.import_module(name)


def _read(path, key, check):
    """The value of the entry at ``path`` for ``key``, or None (missing, or failed a check:
    then warned once)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        _warn(path, f"cannot be read ({exc.strerror or exc}); recomputing")
        return None
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            if not hasattr(z, "files") or META not in z.files:
                raise ValueError("not a fit cache entry")
            meta_raw = z[META]
            if meta_raw.dtype != np.uint8 or meta_raw.ndim != 1:
                raise ValueError("its record is not text")
            meta = json.loads(meta_raw.tobytes().decode("utf-8"))
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                raise ValueError("not an entry of this format")
            if meta.get("key") != key:
                raise ValueError("its key is not the key of its name")
            value = _read_value(z, meta.get("layout") or {})
        ok, why = _passes(check, value)
        if not ok:
            raise ValueError(why)
        _import_modules(meta.get("modules"))
    except Exception as exc:  # a pickle, a truncated zip, a wrong shape...: never used
        _warn(path, f"ignored ({exc}); recomputing and overwriting it")
        return None
    return value


def _kit_modules():
    """The kit's modules loaded in this process, as :func:`_import_modules` accepts them (a
    command line's ``__main__`` is no code a fit ran)."""
    return sorted(n for n, m in list(sys.modules.items())
                  if _MODULE_NAME.fullmatch(n) and not n.endswith(".__main__") and getattr(m, "__file__", None))


def _write(path, key, members, layout):
    """Write an entry atomically: a temporary file in the same folder, renamed into place;
    removed on any failure. Returns ``path``, or None when the write failed (warned)."""
    meta = {"format": FORMAT, "key": key, "layout": layout, "modules": _kit_modules()}
    text = json.dumps(meta, sort_keys=True, allow_nan=True).encode("utf-8")
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:12]}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, file_mode())
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **{META: np.frombuffer(text, dtype=np.uint8)}, **members)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        return path
    except OSError as exc:  # a full disk, a folder made read-only meanwhile: the fit stands
        _warn(path, f"not written ({exc.strerror or exc}); the value is used uncached")
        return None
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        except OSError:
            pass


def load(what, settings, data, seed, check=None):
    """The value stored for this key, or None (none stored, the cache off, or the entry
    failed a check: then it is named in a :class:`FitCacheWarning`)."""
    where = cache_dir()
    if where is None:
        return None
    key = entry_key(what, settings, data, seed)
    return _read(_entry_path(where, what, key), key, check)


def store(what, settings, data, seed, value, check=None):
    """Store ``value`` under this key (a value ``check`` refuses is a ``ValueError``: it
    would never be read back). Returns the entry's path, or None (cache off, write failed)."""
    where = cache_dir()
    if where is None:
        return None
    key = entry_key(what, settings, data, seed)
    value, members, layout = _layout(value)
    ok, why = _passes(check, value)
    if not ok:
        raise ValueError(f"fit cache: the value of {what!r} fails its own check ({why})")
    return _write(_entry_path(where, what, key), key, members, layout)


def cached(what, settings, data, seed, compute, check=None):
    """``compute()``: the value of ``what`` with ``settings`` on ``data`` with seed ``seed``,
    from the cache when it was stored before (see the module's docstring for what the
    arguments and the value may be, and :func:`store` for ``check``)."""
    where = cache_dir()
    if where is None:
        return compute()
    key = entry_key(what, settings, data, seed)
    path = _entry_path(where, what, key)
    value = _read(path, key, check)
    if value is not None:
        return value
    value, members, layout = _layout(compute())
    ok, why = _passes(check, value)
    if not ok:
        raise ValueError(f"fit cache: the computed value of {what!r} fails its check ({why})")
    _write(path, key, members, layout)
    return value


def labels_check(n_samples):
    """The check of a clustering's labels of ``n_samples`` samples: int64, shape
    (n_samples,), each in [0, n_samples) (a method may find more clusters than asked for)."""
    def check(labels):
        if not isinstance(labels, np.ndarray) or labels.dtype != np.int64 or labels.shape != (n_samples,):
            shape = getattr(labels, "shape", None)
            raise ValueError(f"labels are {getattr(labels, 'dtype', type(labels).__name__)}{shape}, "
                             f"not int64 ({n_samples},)")
        if n_samples and (labels.min() < 0 or labels.max() >= n_samples):
            raise ValueError(f"labels range over [{labels.min()}, {labels.max()}], not within [0, {n_samples})")
        return True
    return check


def cached_labels(what, settings, data, n_clusters, seed, compute):
    """The labels ``compute()`` of clustering ``what`` with ``settings`` on ``data`` into
    ``n_clusters`` clusters with seed ``seed``, from the cache when that fit was made before."""
    n = int(data.X.shape[0])
    return cached(what, {**settings, "n_clusters": int(n_clusters)}, data, seed,
                  lambda: np.asarray(compute(), dtype=np.int64), check=labels_check(n))


__all__ = ["cached", "cached_labels", "load", "store", "entry_key", "cache_dir", "labels_check",
           "FitCacheError", "FitCacheWarning"]
