"""Best-k lists for the kNN kernels (leaf k-NN, cosine k-NN, the completer's top tags),
with one fixed order among equal scores: a hash of the pair, not the lower index (a
query that is no training sample enters the pair by a hash of its content)."""
from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, inline="always")
def _splitmix64(z):
    """One splitmix64 step of the uint64 ``z``: a bijection that spreads every input bit."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True, inline="always")
def tie_key(i, j):
    """splitmix64 of the pair (i, j): a fixed, well-spread order among equal similarities."""
    return _splitmix64((np.uint64(i) << np.uint64(32)) ^ np.uint64(j))


@nb.njit(cache=True, inline="always")
def content_key(ids):
    """A uint64 hash of a row of ids >= -1 (a sample's leaf in each tree), chained
    splitmix64: the row part of ``tie_key`` for a query that is no training sample, so
    that its order among ties follows from what it is, not from where it sits in a batch
    (equal rows, equal order)."""
    h = np.uint64(ids.shape[0])
    for t in range(ids.shape[0]):
        h = _splitmix64(h ^ np.uint64(np.int64(ids[t]) + 1))
    return h


@nb.njit(cache=True)
def tie_keys(rows, cols):
    """``tie_key`` of each pair (rows[e], cols[e]): the order of equal affinities that
    ``knn_affinity`` shares with the kernels' kNN rows."""
    out = np.empty(rows.shape[0], np.uint64)
    for e in range(rows.shape[0]):
        out[e] = tie_key(rows[e], cols[e])
    return out


@nb.njit(cache=True, inline="always")
def push_top(val, ids, keys, m, s, j, h):
    """Offer candidate ``j`` with score ``s`` and tie key ``h`` to a best-k list held
    sorted in ``val`` (score descending), ``ids`` and ``keys`` (tie key ascending among
    equal scores), of which the first ``m`` entries are filled; returns the new ``m``.
    ``keys`` may be ``ids`` itself when a candidate is its own tie key."""
    k = val.shape[0]
    if m == k and (s < val[k - 1] or (s == val[k - 1] and h > keys[k - 1])):
        return m
    pos = m if m < k else k - 1
    while pos > 0 and (val[pos - 1] < s or (val[pos - 1] == s and keys[pos - 1] > h)):
        val[pos] = val[pos - 1]
        ids[pos] = ids[pos - 1]
        keys[pos] = keys[pos - 1]
        pos -= 1
    val[pos] = s
    ids[pos] = j
    keys[pos] = h
    return m + 1 if m < k else m
