"""Numba kernels for tag completion: HML-RF(LN) (Eq. 11) and AM kept sparse (Eq. 13)."""
from __future__ import annotations

import numba as nb
import numpy as np

from ..primitives.prefetch import prefetch1d
from ..primitives.topk import push_top


@nb.njit(parallel=True, cache=True)
def local_neighbourhood_scores(query_leaves, members, offsets, self_index, y_indptr, y_indices, m, bounds):
    """p(x, j) = |P+_j| / (|P+_j| + |P-_j|) over the trees (Eq. 11).

    In each tree, the query's neighbourhood is its leaf without the query
    itself. The leaf is a positive neighbourhood for tag j when every
    neighbour has tag j observed (pdf = 1), negative when none has (pdf = 0);
    otherwise it is ignored. Trees where the query has no neighbour are
    skipped. A tag with no confident neighbourhood scores 0.
    """
    nq, T = query_leaves.shape
    out = np.zeros((nq, m), np.float32)
    n_chunks = bounds.shape[0] - 1
    for c in nb.prange(n_chunks):
        pos = np.zeros(m, np.int32)
        unc = np.zeros(m, np.int32)
        cnt = np.zeros(m, np.int32)
        touched = np.empty(m, np.int64)
        for q in range(bounds[c], bounds[c + 1]):
            used = 0
            me = self_index[q]
            for t in range(T):
                l = query_leaves[q, t]
                if l < 0:
                    continue
                size = 0
                nt = 0
                for p in range(offsets[t, l], offsets[t, l + 1]):
                    j = members[t, p]
                    if j == me:
                        continue
                    size += 1
                    for a in range(y_indptr[j], y_indptr[j + 1]):
                        tag = y_indices[a]
                        if cnt[tag] == 0:
                            touched[nt] = tag
                            nt += 1
                        cnt[tag] += 1
                if size == 0:
                    continue
                used += 1
                for a in range(nt):
                    tag = touched[a]
                    if cnt[tag] == size:
                        pos[tag] += 1
                    else:
                        unc[tag] += 1
                    cnt[tag] = 0
            for tag in range(m):
                denom = used - unc[tag]
                if denom > 0:
                    out[q, tag] = pos[tag] / denom
                pos[tag] = 0
                unc[tag] = 0
    return out


@nb.njit(parallel=True, cache=True)
def affinity_measure_top_rows(idx, w, y_indptr, y_indices, m, n_top, bounds):
    """Eq. 13's AM scores kept sparse: each query's ``n_top`` best tags, from the tags
    of its neighbours ``idx`` (-1: none) weighted by their affinity ``w``, the tags
    given as the CSR structure of the 0/1 tag matrix (every stored entry a 1). A query
    costs its neighbours' tag counts, not m. Ties go to the lower tag index; the
    scores are not divided by kappa (the caller does). Returns (tags (q, n_top)
    int64, -1 pads; scores (q, n_top) float64, 0 pads)."""
    nq, k = idx.shape
    tags = np.full((nq, n_top), -1, np.int64)
    top = np.zeros((nq, n_top), np.float64)
    for c in nb.prange(bounds.shape[0] - 1):
        acc = np.zeros(m, np.float64)
        seen = np.zeros(m, np.uint8)
        touched = np.empty(m + 1, np.int64)  # one spare: written before the count says if it is kept
        for q in range(bounds[c], bounds[c + 1]):
            # the neighbours' row pointers two queries ahead and their tags one ahead: the
            # neighbours are random rows of a tag matrix larger than the caches
            if q + 2 < bounds[c + 1]:
                for b in range(k):
                    if idx[q + 2, b] >= 0:
                        prefetch1d(y_indptr, idx[q + 2, b])
            if q + 1 < bounds[c + 1]:
                for b in range(k):
                    if idx[q + 1, b] >= 0:
                        prefetch1d(y_indices, y_indptr[idx[q + 1, b]])
            nt = 0
            for b in range(k):
                j = idx[q, b]
                if j < 0:
                    continue
                wb = w[q, b]
                for a in range(y_indptr[j], y_indptr[j + 1]):
                    # a tag's first vote without a branch: whether it is new is a coin toss
                    # that the CPU mispredicts, and each miss stalls the loads behind it
                    t = y_indices[a]
                    touched[nt] = t
                    nt += 1 - seen[t]
                    seen[t] = 1
                    acc[t] += wb
            cnt = 0
            for a in range(nt):
                t = touched[a]
                s = acc[t]
                acc[t] = 0.0
                seen[t] = 0
                if s <= 0.0:
                    continue
                cnt = push_top(top[q], tags[q], tags[q], cnt, s, t, t)  # a tag is its own tie key
    return tags, top


@nb.njit(parallel=True, cache=True)
def count_bad_ids(idx, n):
    """How many neighbour ids in ``idx`` name no row of an n-row matrix (-1, "none", is
    fine): one parallel pass, 2 ms at a million samples x 20 neighbours, where the
    kernels above read the named rows unchecked (a check inside their loops cost 7 %)."""
    flat = idx.reshape(-1)
    nbad = 0
    for i in nb.prange(flat.shape[0]):
        j = flat[i]
        nbad += (j < -1) | (j >= n)
    return nbad
