"""Keep numba's disk cache in step with the sources.

numba keys each cached function on its own file's time stamp only. A kernel
that calls a kernel of another file (the split search calls the sort of
``forest/_keys.py`` and the sweeps of ``forest/_criterion.py``) has that callee
compiled into its own cached code, and keeps running the old callee after its
file alone is edited or updated (a ``git pull`` into an editable install). So at
import a digest of the package's sources is compared with the one the cache was
built from, and on any difference every cache file of the package is removed
(numba then compiles afresh, once).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

STAMP = "numba_sources.sha1"
WARMED = "numba_warmed.sha1"  # beside STAMP: every kernel compiled from these sources (hmlkit.warm)


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


def cache_folders(root, cache_dir=None):
    """Where numba caches the kernels of the package at ``root``: the ``__pycache__`` of each
    of its folders, or, with ``NUMBA_CACHE_DIR`` (``cache_dir``) set, the folder numba names
    after each source folder inside it (its ``<folder name>_<sha1 of the folder's absolute
    path>``, numba's ``_CacheLocator.get_suitable_cache_subpath``)."""
    root = Path(root)
    folders = sorted({f.parent for f in root.rglob("*.py")})
    if not cache_dir:
        return [d / "__pycache__" for d in folders]
    out = []
    for d in folders:
        path = os.path.abspath(d)
        out.append(Path(cache_dir) / f"{os.path.split(path)[-1]}_{hashlib.sha1(path.encode()).hexdigest()}")
    return out


def _where(root, cache_dir):
    root = Path(root or Path(__file__).parent)
    if cache_dir is None:
        cache_dir = os.environ.get("NUMBA_CACHE_DIR") or None
    return root, cache_dir


def _stamp(root, cache_dir, name):
    if cache_dir:
        tag = hashlib.sha1(os.path.abspath(root).encode()).hexdigest()[:12]
        return Path(cache_dir) / f"{root.name}_{tag}.{name}"
    return root / "__pycache__" / name


def _warm_text(root):
    import numba

    return f"{sources_digest(root)} numba {numba.__version__}"


def mark_warm(root=None, cache_dir=None):
    """Record that every kernel of the current sources is in the cache (``hmlkit.warm``)."""
    root, cache_dir = _where(root, cache_dir)
    try:
        _write_stamp(_stamp(root, cache_dir, WARMED), _warm_text(root))
    except OSError:
        pass  # a cache that cannot be written: the next run warms again


def _write_stamp(stamp, text):
    """Write ``text`` to ``stamp`` atomically: a concurrent import reads the old stamp or the new."""
    stamp.parent.mkdir(parents=True, exist_ok=True)
    tmp = stamp.with_name(f"{stamp.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, stamp)


def is_warm(root=None, cache_dir=None):
    """Whether ``hmlkit.warm`` compiled every kernel of the current sources and numba
    version into the cache (a run then skips warming: loading it takes seconds anyway,
    but two processes' worth of imports each time a study run starts)."""
    root, cache_dir = _where(root, cache_dir)
    try:
        stamp = _stamp(root, cache_dir, WARMED)
        return stamp.is_file() and stamp.read_text().strip() == _warm_text(root)
    except OSError:
        return False


def refresh(root=None, cache_dir=None):
    """Remove the package's numba cache files (``*.nbi``, ``*.nbc``) when the sources
    differ from those the cache was built from; returns the number removed. The cache is
    the package's own folders, or those of ``cache_dir`` (default numba's
    ``NUMBA_CACHE_DIR``), each with its own stamp. A cache that cannot be written
    (numba then caches elsewhere, or not at all) is left alone.

    Not covered: a process that imported the package before its sources changed and
    compiles a kernel for the first time after a newer process refreshed the cache
    saves code built from the old sources, which the stamp then vouches for; restart
    long-lived kernels and Dask workers after an update (or ``python -m hmlkit.warm``
    after removing the cache)."""
    root, cache_dir = _where(root, cache_dir)
    stamp = _stamp(root, cache_dir, STAMP)
    try:
        digest = sources_digest(root)
        if stamp.is_file() and stamp.read_text().strip() == digest:
            return 0
        removed = 0
        for folder in cache_folders(root, cache_dir):
            if not folder.is_dir():
                continue
            for pattern in ("*.nbi", "*.nbc"):
                for f in folder.glob(pattern):
                    f.unlink(missing_ok=True)
                    removed += 1
        _write_stamp(stamp, digest)
        return removed
    except OSError:
        return 0
