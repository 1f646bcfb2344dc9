"""Handing the unused end of a large array's memory back to the operating system."""
from __future__ import annotations

import ctypes
import mmap
import sys

MADV_DONTNEED = 4
MIN_RELEASE = 1 << 20  # below a megabyte, not worth a system call

try:
    _madvise = ctypes.CDLL(None, use_errno=True).madvise if sys.platform.startswith("linux") else None
    if _madvise is not None:
        _madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        _madvise.restype = ctypes.c_int
except (OSError, AttributeError):  # no C library to call: keep the pages
    _madvise = None


def release_after(a, used):
    """Drop the whole memory pages of the contiguous array ``a`` past its first
    ``used`` items (Linux ``madvise(MADV_DONTNEED)``; elsewhere nothing is done).
    Only for an array of which nothing reads those items again: each such page is
    given back at once, and would read as zeros. Returns the bytes released.

    Why: a kernel that writes its result into a room larger than the result (the kNN
    graph, ``affinity._graph.symmetric_max_knn``) returns a view of its first items,
    and the rest of the room, touched as scratch, would stay resident as long as the
    result does."""
    if _madvise is None or not a.flags.c_contiguous:
        return 0
    page = mmap.PAGESIZE
    start = a.ctypes.data
    lo = -(-(start + int(used) * a.itemsize) // page) * page  # pages wholly past the items kept,
    hi = (start + a.nbytes) // page * page  # and wholly inside the array
    if hi - lo < MIN_RELEASE:
        return 0
    if _madvise(lo, hi - lo, MADV_DONTNEED) != 0:
        return 0
    return hi - lo
