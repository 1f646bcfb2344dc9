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


def refresh(root=None):
    """Remove the package's numba cache files (``*.nbi``, ``*.nbc``) when the sources
    differ from those of the last call; returns the number removed. A package folder
    that cannot be written (numba then caches elsewhere, or not at all) is left alone."""
    root = Path(root or Path(__file__).parent)
    stamp = root / "__pycache__" / STAMP
    try:
        digest = sources_digest(root)
        if stamp.is_file() and stamp.read_text().strip() == digest:
            return 0
        removed = 0
        for pattern in ("*.nbi", "*.nbc"):
            for f in root.rglob(pattern):
                f.unlink(missing_ok=True)
                removed += 1
        stamp.parent.mkdir(exist_ok=True)
        tmp = stamp.with_name(f"{STAMP}.{os.getpid()}.tmp")
        tmp.write_text(digest)
        os.replace(tmp, stamp)  # atomic: a concurrent import reads the old stamp or the new
        return removed
    except OSError:
        return 0
