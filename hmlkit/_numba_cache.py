"""The kit's numba disk cache: in step with the sources, healed when a file is damaged,
never emptied by an import.

numba caches each kernel in an index file (``<kernel>.nbi``) and data files
(``<kernel>.<n>.nbc``) in the ``__pycache__`` beside its source (or in ``NUMBA_CACHE_DIR``),
and keys the index on that one source file's content. A kernel that calls a kernel of
another file (the split search calls the sort of ``forest/_keys.py`` and the sweeps of
``forest/_criterion.py``) has that callee compiled into its own cached code, and would keep
running the old callee after the callee's file alone is edited or updated (a ``git pull``
into an editable install).

So the kit's kernels get a cache locator of their own (:class:`KitCacheLocator`, put first
in numba's list by :func:`install`, which ``import hmlkit`` calls): the folders numba would
use, and a source stamp that adds to the kernel's own file a digest of every source of the
package that uses numba (:func:`sources_digest`). After an edit of any of them numba's own
index check finds the stored stamp stale, compiles afresh and overwrites the entry. Nothing
is deleted, by an import or anything else: importing the kit (a runner's dry run, say)
reads the sources and leaves every cache file in place; cache files are only written by
numba when a kernel is compiled.

Damaged files heal: a truncated, empty or garbled ``.nbi`` / ``.nbc`` of a kit kernel (a
disk that filled, a copy cut short) used to fail every fit with ``UnpicklingError`` or
``EOFError``, naming no file. Loading and saving a kit kernel's cache is now guarded: a file
that cannot be read is named once (:class:`NumbaCacheWarning`), removed with its index and
the kernel's other data files, and the kernel compiled afresh. Before a data file is read,
the index is checked to name only data files of its own kernel in its own folder.

Trust boundary: numba's cache files are pickles, and unpickling one can run code. They are
as trusted as the ``.py`` files beside them: whoever can write ``hmlkit/**/__pycache__`` can
also edit the kit's sources. The checks above catch damage, not an attacker; never point
``NUMBA_CACHE_DIR`` at a folder others can write to (a shared ``/tmp``, a team share).

Not covered: a user's ``NUMBA_CACHE_LOCATOR_CLASSES`` replaces numba's list of locators, and
the kit's kernels then get numba's plain cache. A process computes the digest once, when its
first kit kernel is defined; one that loaded the kit before its sources changed and compiles
a kernel for the first time after the change stores code of the new sources under the old
digest (later processes, seeing new sources, compile afresh; only a revert of the change
would find it). Restart long-lived kernels and Dask workers after an update.
"""
from __future__ import annotations

import hashlib
import os
import re
import threading
import warnings
from pathlib import Path

WARMED = "numba_warmed.sha1"  # in the package's __pycache__: every kernel compiled from these sources (hmlkit.warm)
_MARK = "hmlkit-sources"  # first item of a kit kernel's source stamp

_ROOTS = []  # packages whose kernels the kit's locator serves (this package, tests' own)
_DIGESTS = {}  # root -> sources digest, once per process
_WARNED = set()
_LOCK = threading.Lock()


class NumbaCacheWarning(UserWarning):
    """A numba cache file of a kit kernel could not be read and was removed."""


class DamagedCacheFile(Exception):
    """A cache file that cannot be read (not an ``OSError``: numba takes those for a miss)."""

    def __init__(self, path, why):
        super().__init__(f"{path}: {why}")
        self.path, self.why = str(path), why


def sources_digest(root):
    """SHA-1 of the ``.py`` files under ``root`` that use numba (only those hold kernels, or
    the intrinsics kernels inline), names and contents: an edit elsewhere keeps the cache."""
    h = hashlib.sha1()
    for f in sorted(Path(root).rglob("*.py")):
        text = f.read_bytes()
        if b"numba" not in text:
            continue
        h.update(f.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(text)
    return h.hexdigest()


def _digest(root):
    with _LOCK:
        if root not in _DIGESTS:
            _DIGESTS[root] = sources_digest(root)
        return _DIGESTS[root]


def _root_of(py_file):
    path = os.path.abspath(py_file)
    for root in _ROOTS:
        if path.startswith(root + os.sep):
            return root
    return None


class _Locator:
    """Methods of :class:`KitCacheLocator` (made a numba ``_CacheLocator`` by :func:`install`,
    so that this module imports without numba)."""

    def __init__(self, inner, root):
        self._inner, self._root = inner, root

    def __getattr__(self, name):  # numba reads e.g. ``_py_file`` of the locator it was given
        if name == "_inner":
            raise AttributeError(name)
        return getattr(self._inner, name)

    def ensure_cache_path(self):
        return self._inner.ensure_cache_path()

    def get_cache_path(self):
        return self._inner.get_cache_path()

    def get_disambiguator(self):
        return self._inner.get_disambiguator()

    def get_source_stamp(self):
        return (_MARK, _digest(self._root), self._inner.get_source_stamp())

    @classmethod
    def from_function(cls, py_func, py_file):
        """The locator numba would choose for a function of a registered package, wrapped;
        None for any other function (numba's own locators then serve it)."""
        root = _root_of(py_file)
        if root is None:
            return None
        from numba.core.caching import CacheImpl

        for other in CacheImpl._locator_classes:
            if other is cls:
                continue
            inner = other.from_function(py_func, py_file)
            if inner is not None:
                return cls(inner, root)
        return None


KitCacheLocator = None  # the class, once install() has made it


def _is_kit_file(cache_file):
    stamp = getattr(cache_file, "_source_stamp", None)
    return isinstance(stamp, tuple) and len(stamp) == 3 and stamp[0] == _MARK


def _is_kit_cache(cache):
    impl = getattr(cache, "_impl", None)
    return KitCacheLocator is not None and isinstance(getattr(impl, "locator", None), KitCacheLocator)


def _data_files(cache_file):
    """Names of the data files in the folder of ``cache_file`` that belong to its kernel."""
    base = cache_file._index_name[:-len(".nbi")]
    own = re.compile(re.escape(base) + r"\.[1-9][0-9]*\.nbc")
    try:
        return [n for n in os.listdir(cache_file._cache_path) if own.fullmatch(n)]
    except OSError:
        return []


def _check_index(cache_file, overloads):
    """The unpickled index must map to data files of its own kernel (a name like
    ``../elsewhere.nbc`` would make numba unpickle any file)."""
    if not isinstance(overloads, dict):
        raise DamagedCacheFile(cache_file._index_path, f"its index is a {type(overloads).__name__}, not a dict")
    base = cache_file._index_name[:-len(".nbi")]
    own = re.compile(re.escape(base) + r"\.[1-9][0-9]*\.nbc")
    for name in overloads.values():
        if not (isinstance(name, str) and own.fullmatch(name)):
            raise DamagedCacheFile(cache_file._index_path, f"it names {name!r}, not a data file of its kernel")
    return overloads


def _heal(cache, exc):
    """Remove the index and the data files of ``cache``'s kernel, and say so once per file."""
    cache_file = cache._cache_file
    bad = exc.path if isinstance(exc, DamagedCacheFile) else cache_file._index_path
    why = exc.why if isinstance(exc, DamagedCacheFile) else f"{type(exc).__name__}: {exc}"
    if isinstance(why, BaseException):
        why = f"{type(why).__name__}: {why}" if str(why) else type(why).__name__
    removed, failed = [], []
    for name in [cache_file._index_name] + _data_files(cache_file):
        path = os.path.join(cache_file._cache_path, name)
        try:
            os.unlink(path)
            removed.append(name)
        except FileNotFoundError:
            pass
        except OSError as err:
            failed.append(f"{name} ({err.strerror or err})")
    if bad in _WARNED:
        return
    _WARNED.add(bad)
    func = getattr(cache, "_py_func", None)
    what = f"{func.__module__}.{func.__qualname__}" if func is not None else "its kernel"
    msg = (f"numba cache file {bad} is damaged ({why}); removed it with its index and data files "
           f"({len(removed)} file(s)) and compiling {what} afresh")
    if failed:
        msg += f"; could not remove {', '.join(failed)}"
    # reported at the file itself: the code that called the kernel is not at fault
    warnings.warn_explicit(msg, NumbaCacheWarning, bad, 0, module=__name__)


def install(root=None):
    """Serve the numba kernels of the package at ``root`` (default: this package) with
    :class:`KitCacheLocator`, and guard the loading and saving of their cache files.
    Idempotent; call before the package's kernels are defined (``import hmlkit`` does)."""
    global KitCacheLocator
    root = os.path.abspath(root or Path(__file__).parent)
    from numba.core import caching

    with _LOCK:
        if root not in _ROOTS:
            _ROOTS.append(root)
        if KitCacheLocator is not None:
            return
        KitCacheLocator = type(caching._CacheLocator)("KitCacheLocator", (_Locator, caching._CacheLocator), {
            "__doc__": "numba's locator for a kit kernel, with a stamp of every kernel source of the kit.",
            "__module__": __name__})
        caching.CacheImpl._locator_classes.insert(0, KitCacheLocator)
        _guard(caching)


def _guard(caching):
    """Wrap numba's cache loading and saving; functions of other packages pass straight through."""
    index_file, cache_cls = caching.IndexDataCacheFile, caching.Cache
    load_index, load_data = index_file._load_index, index_file._load_data
    load_overload, save_overload = cache_cls.load_overload, cache_cls.save_overload

    def _load_index(self):
        if not _is_kit_file(self):
            return load_index(self)
        try:
            overloads = load_index(self)
        except OSError:
            raise
        except Exception as exc:  # truncated, empty, garbled: EOFError, UnpicklingError, ValueError...
            raise DamagedCacheFile(self._index_path, exc) from exc
        return _check_index(self, overloads)

    def _load_data(self, name):
        if not _is_kit_file(self):
            return load_data(self, name)
        try:
            return load_data(self, name)
        except OSError:
            raise  # removed meanwhile: numba's load() takes it for a miss
        except Exception as exc:
            raise DamagedCacheFile(self._data_path(name), exc) from exc

    def _load_overload(self, sig, target_context):
        if not _is_kit_cache(self):
            return load_overload(self, sig, target_context)
        try:
            return load_overload(self, sig, target_context)
        except Exception as exc:  # unreadable, or read but not a compile result numba can rebuild
            _heal(self, exc)
            return None  # numba compiles it and saves afresh

    def _save_overload(self, sig, data):
        if not _is_kit_cache(self):
            return save_overload(self, sig, data)
        try:
            return save_overload(self, sig, data)
        except DamagedCacheFile as exc:  # the index it would add to cannot be read
            _heal(self, exc)
            return save_overload(self, sig, data)

    index_file._load_index, index_file._load_data = _load_index, _load_data
    cache_cls.load_overload, cache_cls.save_overload = _load_overload, _save_overload


def _stamp_path(root, cache_dir, name):
    if cache_dir:
        tag = hashlib.sha1(os.path.abspath(root).encode()).hexdigest()[:12]
        return Path(cache_dir) / f"{root.name}_{tag}.{name}"
    return root / "__pycache__" / name


def _where(root, cache_dir):
    root = Path(root or Path(__file__).parent)
    if cache_dir is None:
        cache_dir = os.environ.get("NUMBA_CACHE_DIR") or None
    return root, cache_dir


def _warm_text(root):
    import numba

    return f"{sources_digest(root)} numba {numba.__version__}"


def _write_stamp(stamp, text):
    """Write ``text`` to ``stamp`` atomically: a concurrent reader sees the old stamp or the new."""
    stamp.parent.mkdir(parents=True, exist_ok=True)
    tmp = stamp.with_name(f"{stamp.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, stamp)
    finally:
        tmp.unlink(missing_ok=True)


def mark_warm(root=None, cache_dir=None):
    """Record that every kernel of the current sources is in the cache (``hmlkit.warm``)."""
    root, cache_dir = _where(root, cache_dir)
    try:
        _write_stamp(_stamp_path(root, cache_dir, WARMED), _warm_text(root))
    except OSError:
        pass  # a cache that cannot be written: the next run warms again


def is_warm(root=None, cache_dir=None):
    """Whether ``hmlkit.warm`` compiled every kernel of the current sources and numba
    version into the cache (a run then skips warming: loading it takes seconds anyway,
    but two processes' worth of imports each time a study run starts). Reads only."""
    root, cache_dir = _where(root, cache_dir)
    try:
        stamp = _stamp_path(root, cache_dir, WARMED)
        return stamp.is_file() and stamp.read_text().strip() == _warm_text(root)
    except OSError:
        return False
