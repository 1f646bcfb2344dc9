"""The stable counting sort of samples by leaf id, per tree: the leaf members of the
affinity kernels and the leaf order in which the forest routes samples."""
from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(parallel=True, cache=True)
def members_by_leaf(by_tree):
    """Per tree, the samples of each leaf (a stable counting sort by leaf id) from the
    transposed leaves ``by_tree`` (T, n): ``members`` (T, n) int32, ``offsets`` (T, L + 1)
    int64 and ``n_leaves`` (T,) int64, as ``hmlkit.affinity.leaf_members`` documents them;
    negative ids are skipped. Trees in parallel."""
    T, n = by_tree.shape
    n_leaves = np.zeros(T, np.int64)
    for t in nb.prange(T):
        mx = -1
        for i in range(n):
            if by_tree[t, i] > mx:
                mx = by_tree[t, i]
        n_leaves[t] = mx + 1
    L = 1
    for t in range(T):
        if n_leaves[t] > L:
            L = n_leaves[t]
    offsets = np.zeros((T, L + 1), np.int64)
    members = np.empty((T, n), np.int32)
    for t in nb.prange(T):
        for i in range(n):
            if by_tree[t, i] >= 0:
                offsets[t, by_tree[t, i] + 1] += 1
        for l in range(L):
            offsets[t, l + 1] += offsets[t, l]
        fill = offsets[t].copy()
        for i in range(n):
            l = by_tree[t, i]
            if l >= 0:
                members[t, fill[l]] = i
                fill[l] += 1
    return members, offsets, n_leaves
