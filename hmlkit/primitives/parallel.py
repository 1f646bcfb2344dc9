"""Row chunks for the kernels' ``prange`` loops."""
from __future__ import annotations

import numba as nb
import numpy as np


def chunk_bounds(nq):
    """Split nq query rows into chunks for prange (a few per thread), so
    per-thread scratch arrays are allocated once per chunk, not per row."""
    n_chunks = max(1, min(nq, 4 * nb.get_num_threads()))
    return np.linspace(0, nq, n_chunks + 1).astype(np.int64)
