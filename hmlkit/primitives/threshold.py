"""The split threshold both forests of the kit put between two adjacent values."""
from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, error_model="numpy")
def midpoint(a, b):
    """A float32 threshold t with a < t <= b (midpoint unless rounding hits a)."""
    t = np.float32((np.float64(a) + np.float64(b)) * 0.5)
    if t <= a:
        t = b
    return t
