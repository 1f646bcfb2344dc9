"""What a study's result depends on, so that ``make studies`` reruns only what changed.

A result (``results/<study>.nc``) stores in its ``attrs``:

``run_key``   set by the runner before the notebook starts: a digest of the notebook's code
              cells, the resolved parameters (profile and every ``--set``; not the thread
              count nor the output folders, which do not change a result) and the versions
              of the numerical libraries;
``run_deps``  set by the notebook's kernel when it saves: the content digest of every
              module of the kit loaded in the kernel (``sys.modules``) and of the kit's
              package data; and every file the kit's data layer (``hmlkit.data``) opened, by
              the path it was opened by, the file that path led to and its content digest.

Why the loaded modules are the right per-study code digest: code that ran in the kernel
belongs to a module the kernel imported, so a change anywhere else cannot move the result;
and a change that makes the study import a new module changes a module it already loaded
(the importer), so the study reruns and records the new set. Library code running in
another process (joblib, Dask workers) is imported by the kernel too, to be sent there.

A study is up to date when its result, figure and executed notebook exist, no failed
notebook of a later run lies beside them, no commit of its files was cut short, its
``run_key`` is the one computed now, and every file in its ``run_deps`` is still reached
by its path and has the recorded digest. A failed or interrupted run commits nothing (``hmlkit.studies.runner``),
so it stores no key; a commit killed midway (SIGKILL, power loss) leaves its marker
(:func:`commit_marker`), and moves the file carrying the key last.

Keys are compared as canonical JSON text (:func:`canonical`): JSON writes each value with
its type (``1``, ``1.0`` and ``true`` are three texts), where Python's ``==`` calls 1, 1.0
and True equal although a notebook reads them apart. A data file's recorded target makes
a symlink pointed at other data a reason to rerun. A stored key that cannot be read (made by
hand, by another tool, or by an earlier format of this one) makes its study rerun, with
the reason; it never stops a run.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from importlib import metadata
from pathlib import Path

from .._paths import REPO_ROOT

PACKAGE_DIR = REPO_ROOT / "hmlkit"
ENV_KEY = "HMLKIT_RUN_KEY"  # the runner hands its key to the kernel through the environment
LIBRARIES = ("numpy", "scipy", "scikit-learn", "numba", "torch")
# parameters that change where or how fast a study runs, never what it finds
# (results are identical for any thread count: tests/test_forest.py and others)
NOT_IN_KEY = ("n_jobs", "results_dir", "figures_dir")
# the layout of run_key / run_deps this kit writes: a result stored in another is rerun
# (2: the format and each data file's path, target and digest recorded)
KEY_FORMAT = 2

_READS = set()  # files opened by hmlkit.data in this process (recorded under the runner only)


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


_DIGESTS = {}  # file stamp (_stamp) -> sha256, within one run (forget_digests)
# A stamp this recent may not tell two writes apart: a file system keeps times to a second
# or two (FAT, some network mounts) or to its clock tick, so a same-size rewrite in that
# time keeps the stamp. Such a file is read every time.
_SETTLE_SECONDS = 2.0


def _stamp(path, st):
    return (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def forget_digests():
    """Forget every remembered digest: the runner calls this as a run starts, so that a
    file rewritten between two runs of one process (JupyterLab) is read again."""
    _DIGESTS.clear()


def file_digest(path):
    """sha256 of a file's content; remembered within a run by its path, inode, size and
    modification and change times, once these are older than the file system can blur."""
    st = os.stat(path)
    stamp = _stamp(path, st)
    if stamp in _DIGESTS:
        return _DIGESTS[stamp]
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    settled = time.time() - max(st.st_mtime_ns, st.st_ctime_ns) / 1e9 > _SETTLE_SECONDS
    if settled and _stamp(path, os.stat(path)) == stamp:  # unchanged while it was read
        _DIGESTS[stamp] = h.hexdigest()
    return h.hexdigest()


def canonical(value):
    """The canonical text of a JSON value, keys sorted: two keys are the same when their
    texts are. JSON writes each value with its type, so 1, 1.0 and True (``1``, ``1.0``,
    ``true``) differ, as they do to the notebook, and NaN equals NaN."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def notebook_value(value):
    """``value`` as the runner passes it to a notebook, and as its key records it. papermill
    writes None, text, booleans, numbers, lists and dicts (text keys) into the notebook as
    they are and anything else as the text of the value (the tuple (1, 2) arrives as the
    string "(1, 2)"): a tuple becomes a list and a numpy value a Python one first, so that
    the notebook gets the sequence or number meant; the rest is as papermill sends it."""
    import numpy as np

    if isinstance(value, (np.generic, np.ndarray)):
        value = value.tolist()
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):
        return {str(k): notebook_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [notebook_value(v) for v in value]
    return str(value)


def notebook_digest(path):
    """Digest of a notebook's code cells, in order (text cells, outputs and metadata do
    not change what it computes)."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    code = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb["cells"] if c["cell_type"] == "code"]
    return _sha256(json.dumps(code).encode())


def library_versions():
    """{library: version} of the numerical libraries a result depends on (None: absent)."""
    out = {"python": ".".join(map(str, sys.version_info[:3]))}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def run_key(notebook, parameters):
    """The key the runner computes for one study: {"format", "notebook", "parameters",
    "versions"}; the parameters as the notebook receives them (:func:`notebook_value`)."""
    params = {k: notebook_value(v) for k, v in parameters.items() if k not in NOT_IN_KEY}
    return {"format": KEY_FORMAT, "notebook": notebook_digest(notebook), "parameters": params,
            "versions": library_versions()}


def _relative(path):
    """``path`` relative to the repository (``../shared/data/...`` for the shared data), so
    that a stored key names no folder of one machine."""
    return os.path.relpath(Path(path).resolve(), REPO_ROOT)


def _data_roots():
    """(placeholder, folder) of the folders a data file is found in through a setting: a
    result names its data files by these, so that pointing the setting elsewhere (other
    data) makes it stale instead of re-reading the files it was made from."""
    from .._paths import shared_data_dir
    from ..data.fetch import data_cache_dir

    return (("$HMLKIT_SHARED_DATA", shared_data_dir()), ("$HMLKIT_DATA_DIR", data_cache_dir()))


def _data_name(path, resolve=True):
    """A data file's name in a result: under a data folder of a setting, relative to it
    (``$HMLKIT_SHARED_DATA/corel5k/...``); else relative to the repository. ``resolve``:
    the file ``path`` leads to (symlinks followed), else the path as given."""
    p = Path(os.path.realpath(path) if resolve else os.path.abspath(path))
    for placeholder, root in _data_roots():
        for r in dict.fromkeys((Path(os.path.abspath(root)), Path(os.path.realpath(root)))):
            try:
                return f"{placeholder}/{p.relative_to(r).as_posix()}"
            except ValueError:
                continue
    return os.path.relpath(p, REPO_ROOT)


def _absolute(name):
    for placeholder, root in _data_roots() if name.startswith("$") else ():
        if name.startswith(placeholder + "/"):
            return Path(root) / name[len(placeholder) + 1:]
    return Path(name) if os.path.isabs(name) else REPO_ROOT / name


# ---- in the kernel ---------------------------------------------------------------------

def _from_data_layer():
    """True when the current call comes from a module of ``hmlkit.data``, not through
    the import system (whose reads of modules are the code digest's business)."""
    f = sys._getframe(2)
    while f is not None:
        name = f.f_globals.get("__name__", "")
        if name.startswith("importlib"):
            return False
        if name.startswith("hmlkit.data"):
            return True
        f = f.f_back
    return False


# where no data set lives: the system's pseudo-files (a library reading /proc/self/maps
# under a loader's call) and the Python installation (modules are the code digest's)
_NOT_DATA = tuple(os.path.join(os.path.realpath(p), "") for p in
                  ("/proc", "/sys", "/dev", sys.prefix, sys.base_prefix, sys.exec_prefix))


def _audit(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)) and _from_data_layer():
        mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
        given = os.path.abspath(os.fsdecode(args[0]))  # as opened: a symlink stays one
        if not any(c in mode for c in "wax+") and not os.path.realpath(given).startswith(_NOT_DATA):
            _READS.add(given)


def record_reads():
    """Record the files ``hmlkit.data`` opens from now on in this process (audit hooks
    cannot be removed, so this runs only under the runner, once)."""
    if not getattr(record_reads, "installed", False):
        sys.addaudithook(_audit)
        record_reads.installed = True


def package_files(suffixes):
    """The kit's files whose suffix is in ``suffixes``, sorted (caches left out): what the
    run keys (package data) and the fit cache's kit digest (sources too) read."""
    return [f for f in sorted(PACKAGE_DIR.rglob("*"))
            if f.suffix in suffixes and f.is_file() and "__pycache__" not in f.parts]


def dependencies():
    """{"modules": {file: sha256}, "data": {path: {"target": file, "sha256": sha256}}} of
    this process so far: the kit's loaded modules and package data, and the data files
    ``hmlkit.data`` read, each by the path it was opened by, the file it led to and that
    file's digest."""
    modules = {}
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if (name == "hmlkit" or name.startswith("hmlkit.")) and f and Path(f).is_file():
            modules[_relative(f)] = file_digest(f)
    for f in package_files((".json", ".csv")):
        modules[_relative(f)] = file_digest(f)
    data = {_data_name(f, resolve=False): {"target": _data_name(f), "sha256": file_digest(f)}
            for f in sorted(_READS) if os.path.isfile(f)}
    return {"modules": dict(sorted(modules.items())), "data": data}


def result_attrs():
    """The attrs :func:`hmlkit.studies.saving.save` adds to a result: the runner's key
    (if run by it) and this kernel's dependencies."""
    key = os.environ.get(ENV_KEY)
    if not key:
        return {}
    return {"run_key": key, "run_deps": json.dumps(dependencies(), sort_keys=True)}


if os.environ.get(ENV_KEY):
    record_reads()


# ---- in the runner ---------------------------------------------------------------------

def stored_attrs(nc_path):
    """The ``run_key`` and ``run_deps`` attrs of a result file ({} if it has none), as
    stored (text, or whatever else a tool wrote); ``ValueError`` naming the file if it
    cannot be read."""
    import netCDF4

    try:
        with netCDF4.Dataset(str(nc_path)) as ds:
            return {k: ds.getncattr(k) for k in ("run_key", "run_deps") if k in ds.ncattrs()}
    except Exception as exc:  # noqa: BLE001 - whatever the netCDF library raises on a bad file
        raise ValueError(f"cannot read {nc_path}: {type(exc).__name__}: {exc}") from None


class StoredKeyError(ValueError):
    """A result's stored key or dependencies cannot be used; the message says why (a reason
    for the study to rerun)."""


def _kind(value):
    return "null" if value is None else type(value).__name__


def _json_attr(attrs, name):
    text = attrs[name]
    if not isinstance(text, str):
        raise StoredKeyError(f"its stored key cannot be read ({name} is a {_kind(text)}, not JSON text)")
    try:
        value = json.loads(text)
    except ValueError:
        raise StoredKeyError(f"its stored key cannot be read ({name} is not JSON)") from None
    if not isinstance(value, dict):
        raise StoredKeyError(f"its stored key cannot be read ({name} is a JSON {_kind(value)}, not a mapping)")
    return value


def _mapping_of(value, what, item):
    """``value`` if it is a mapping of text to values passing ``item`` (a predicate)."""
    if not isinstance(value, dict) or not all(isinstance(k, str) and item(v) for k, v in value.items()):
        raise StoredKeyError(f"its stored key cannot be read ({what} is not a mapping of the expected form)")
    return value


def read_stored(attrs):
    """(run_key, run_deps) from a result's attrs (:func:`stored_attrs`), each checked to have
    this kit's form; :class:`StoredKeyError` saying why not (no key, another format, a
    malformed key), never another error."""
    if "run_key" not in attrs or "run_deps" not in attrs:
        raise StoredKeyError("its result stores no key (made before keys or outside the runner)")
    key, deps = _json_attr(attrs, "run_key"), _json_attr(attrs, "run_deps")
    fmt = key.get("format")
    if fmt is None:
        raise StoredKeyError("its stored key is in an older format, from an earlier version of the kit")
    if canonical(fmt) != canonical(KEY_FORMAT):
        raise StoredKeyError(f"its stored key is in another format ({canonical(fmt)[:40]}; "
                             f"this kit reads format {KEY_FORMAT})")
    if not isinstance(key.get("notebook"), str):
        raise StoredKeyError("its stored key cannot be read (no notebook digest)")
    _mapping_of(key.get("parameters"), "its parameters", lambda v: True)
    _mapping_of(key.get("versions"), "its library versions", lambda v: v is None or isinstance(v, str))
    _mapping_of(deps.get("modules"), "its modules", lambda v: isinstance(v, str))
    _mapping_of(deps.get("data"), "its data files",
                lambda v: isinstance(v, dict) and isinstance(v.get("target"), str) and isinstance(v.get("sha256"), str))
    return key, deps


def _describe_key_change(old, new):
    if old.get("notebook") != new["notebook"]:
        return "its notebook's code changed"
    a, b = old["parameters"], new["parameters"]
    diff = [f"{k} {_shown(a, k)} -> {_shown(b, k)}" for k in sorted(set(a) | set(b))
            if k not in a or k not in b or canonical(a[k]) != canonical(b[k])]
    if diff:
        return "parameters changed: " + ", ".join(diff)
    a, b = old["versions"], new["versions"]
    diff = [f"{k} {a.get(k)} -> {b.get(k)}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    if diff:
        return "library versions changed: " + ", ".join(diff)
    return "its stored key differs from the current one"


def _shown(params, k):
    return repr(params[k]) if k in params else "(default)"


def _limited(changed, limit=3):
    if len(changed) > limit:
        return changed[:limit] + [f"{len(changed) - limit} more"]
    return changed


def _changed_modules(recorded):
    return _limited([name for name, digest in recorded.items()
                     if not _absolute(name).is_file() or file_digest(_absolute(name)) != digest])


def _changed_data(recorded):
    """The data files whose path now leads to another file (a symlink repointed, a setting's
    folder moved) or whose content changed, each said so."""
    changed = []
    for name, rec in recorded.items():
        p = _absolute(name)
        if not p.is_file():
            changed.append(f"{name} (gone)")
            continue
        target = _data_name(p)
        if target != rec["target"]:
            changed.append(f"{name} (now leads to {target}, was {rec['target']})")
        elif file_digest(p) != rec["sha256"]:
            changed.append(name)
    return _limited(changed)


FAILED_KEY = "hmlkit_run_key"  # a failed run's notebook metadata: the key it ran under


def mark_failed_run(notebook, key):
    """Store ``key`` in the metadata of the failed run's ``notebook`` (in place)."""
    path = Path(notebook)
    nb = json.loads(path.read_text(encoding="utf-8"))
    nb.setdefault("metadata", {})[FAILED_KEY] = key
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def failed_run_key(notebook):
    """The key a failed run's notebook stored, or None (unreadable, or kept before keys were)."""
    try:
        return json.loads(Path(notebook).read_text(encoding="utf-8")).get("metadata", {}).get(FAILED_KEY)
    except (OSError, ValueError, AttributeError):
        return None


def commit_marker(executed_dir, name):
    """The file that says a commit of study ``name``'s files is under way: the runner writes
    it before the first rename and removes it after the last, so that one killed midway
    (SIGKILL, power loss) leaves it, and the study reruns."""
    return Path(executed_dir) / f"{name}.committing"


def status(name, key, results_dir, figures_dir, executed_dir):
    """Why study ``name`` must run under ``key`` (:func:`run_key`), or None if its stored
    result is up to date. Whatever a result file stores, this says why it reruns rather
    than raise."""
    nc = Path(results_dir) / f"{name}.nc"
    if not nc.is_file():
        return "no result"
    if commit_marker(executed_dir, name).exists():
        return "the commit of its last run was cut short (its files may come from two runs)"
    failed = Path(executed_dir) / f"{name}.failed.ipynb"
    if failed.is_file():
        failed_key = failed_run_key(failed)
        if failed_key is None or canonical(failed_key) == canonical(key):
            # a failure of another run (a bad --set value, code since changed) leaves the stored
            # result as good as it was: it is judged below on its own key
            return "its last run failed"
    for p, what in ((Path(figures_dir) / f"{name}.png", "figure"), (Path(executed_dir) / f"{name}.ipynb",
                                                                     "executed notebook")):
        if not p.is_file():
            return f"no {what} ({p.name})"
    try:
        old, deps = read_stored(stored_attrs(nc))
    except ValueError as exc:  # StoredKeyError, or the file cannot be read
        return str(exc)
    if canonical(old) != canonical(key):
        return _describe_key_change(old, key)
    for what, find, recorded in (("kit code changed", _changed_modules, deps["modules"]),
                                 ("data changed", _changed_data, deps["data"])):
        changed = find(recorded)
        if changed:
            return f"{what}: {', '.join(changed)}"
    return None
