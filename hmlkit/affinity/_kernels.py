"""Numba kernels for leaf co-membership (Eq. 10) without any dense n x n matrix.

A forest is summarised by ``leaves`` (n, T) int32: the compact leaf index of
each sample in each tree. Per tree, the members of every leaf are listed once
(``members``/``offsets``, a counting sort), and a sample's co-leaf
neighbours are counted in a per-thread table that is reset after each row (a
small hash table for the k-NN, a dense counter for the full affinity):
O(T * leaf size) per row, no sort over all pairs.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ..primitives.counting import members_by_leaf
from ..primitives.parallel import chunk_bounds  # noqa: F401 (the kernels' callers chunk their rows with it)
from ..primitives.prefetch import prefetch2d
from ..primitives.topk import content_key, push_top, tie_key


@nb.njit(parallel=True, cache=True)
def compact_ids(leaves, query_leaves, width, out, q_out):
    """Per tree, leaf ids renumbered 0..L-1 in ascending order of the ids present in
    ``leaves`` (the inverse of ``np.unique``), by a presence table of ``width`` (> every
    id) per tree: linear in n, where sorting each tree's ids cost O(n log n) (at 1M
    samples x 100 trees, half of the leaf k-NN's time). Negative ids give -1; so does a
    query id absent from ``leaves``. Trees in parallel."""
    n, T = leaves.shape
    for t in nb.prange(T):
        rank = np.zeros(width, np.int32)
        for i in range(n):
            if leaves[i, t] >= 0:
                rank[leaves[i, t]] = 1
        tot = 0
        for l in range(width):
            if rank[l]:
                rank[l] = tot
                tot += 1
            else:
                rank[l] = -1
        for i in range(n):
            l = leaves[i, t]
            out[i, t] = rank[l] if l >= 0 else -1
        for i in range(query_leaves.shape[0]):
            l = query_leaves[i, t]
            q_out[i, t] = rank[l] if 0 <= l < width else -1


# rows per block of the leaves' transpose: a block's rows (T ids each) stay in the L2
# cache while every tree's ids are copied out of them
TRANSPOSE_ROWS = 256


@nb.njit(parallel=True, cache=True)
def transpose_leaves(leaves):
    """``leaves.T`` (T, n) as a C-contiguous array, copied by blocks of rows."""
    n, T = leaves.shape
    out = np.empty((T, n), leaves.dtype)
    n_blocks = (n + TRANSPOSE_ROWS - 1) // TRANSPOSE_ROWS
    for b in nb.prange(n_blocks):
        lo = b * TRANSPOSE_ROWS
        hi = min(n, lo + TRANSPOSE_ROWS)
        for t in range(T):
            for i in range(lo, hi):
                out[t, i] = leaves[i, t]
    return out


def leaf_members(leaves):
    """Per tree, the samples of each leaf, as flat arrays.

    Negative leaf ids (non-members) are skipped; ids need not be compact (an id
    no sample has is an empty leaf). Returns ``members`` (T, n) int32 (samples
    ordered by leaf in each tree), ``offsets`` (T, max_id + 2) int64 start of
    each leaf in ``members[t]`` and ``n_leaves`` (T,) int64 (largest id + 1).

    The three passes over each tree's ids read them from the transpose: read down
    a column of (n, T) ``leaves``, every id is a cache line of its own, and at a
    million samples the lines of one tree (64 MB) no longer stay in the L3 cache for
    the next (1.2-1.3 s at 1M x 100 trees, 15 times the 100k time)."""
    return members_by_leaf(transpose_leaves(leaves))


@nb.njit(cache=True)
def _count_row(q, query_leaves, members, offsets, self_index, counter, touched):
    """Count, into ``counter``, co-leaf occurrences of query ``q``; returns the
    number of distinct neighbours written to ``touched``."""
    T = query_leaves.shape[1]
    nt = 0
    for t in range(T):
        # the leaf's offsets 8 trees ahead and its members 4 ahead (their offsets loaded by
        # then): per tree a leaf is a random spot of arrays far larger than the caches
        if t + 8 < T and query_leaves[q, t + 8] >= 0:
            prefetch2d(offsets, t + 8, query_leaves[q, t + 8])
        if t + 4 < T and query_leaves[q, t + 4] >= 0:
            prefetch2d(members, t + 4, offsets[t + 4, query_leaves[q, t + 4]])
        l = query_leaves[q, t]
        if l < 0:
            continue
        for p in range(offsets[t, l], offsets[t, l + 1]):
            j = members[t, p]
            if j == self_index:
                continue
            if counter[j] == 0:
                touched[nt] = j
                nt += 1
            counter[j] += 1
    return nt


@nb.njit(parallel=True, cache=True)
def cooccurrence_rows(query_leaves, members, offsets, n_ref, self_index, include_self, bounds):
    """Sparse rows of co-leaf counts for each query sample (CSR parts).

    ``self_index[q]`` is the reference index of query q (or -1); it is
    excluded from the counting, and added back with count T when
    ``include_self`` (Eq. 10 gives A_ii = 1).
    """
    nq, T = query_leaves.shape
    n_chunks = bounds.shape[0] - 1
    nnz = np.zeros(nq + 1, np.int64)
    for c in nb.prange(n_chunks):
        counter = np.zeros(n_ref, np.int32)
        touched = np.empty(n_ref, np.int32)
        for q in range(bounds[c], bounds[c + 1]):
            nt = _count_row(q, query_leaves, members, offsets, self_index[q], counter, touched)
            for a in range(nt):
                counter[touched[a]] = 0
            nnz[q + 1] = nt + (1 if (include_self and self_index[q] >= 0) else 0)
    indptr = np.cumsum(nnz)
    indices = np.empty(indptr[-1], np.int32)
    data = np.empty(indptr[-1], np.float32)
    for c in nb.prange(n_chunks):
        counter = np.zeros(n_ref, np.int32)
        touched = np.empty(n_ref, np.int32)
        for q in range(bounds[c], bounds[c + 1]):
            nt = _count_row(q, query_leaves, members, offsets, self_index[q], counter, touched)
            start = indptr[q]
            extra = 0
            if include_self and self_index[q] >= 0:
                touched[nt] = self_index[q]
                counter[self_index[q]] = T
                extra = 1
            row = np.sort(touched[: nt + extra])
            for a in range(nt + extra):
                j = row[a]
                indices[start + a] = j
                data[start + a] = counter[j] / T
                counter[j] = 0
    return indptr, indices, data


def knn_rows(query_leaves, members, offsets, n_ref, self_index, k, bounds):
    """The k reference samples sharing most leaves with each query sample.

    Returns ``idx`` (nq, k) int32 and ``w`` (nq, k) float32 (fraction of
    trees); rows with fewer than k co-leaf neighbours are padded with -1 / 0.
    Equal counts are ordered by a hash of (row, neighbour) (:func:`tie_key`, the
    row being ``self_index[q]``, as in the cosine kNN). A query that is no training
    sample (``self_index[q]`` negative) enters the hash by its leaves
    (:func:`content_key` of its row): its neighbours are then those of the sample
    alone, whatever its place in the batch and the batch's other rows (its row index
    made them change with the batch's order). Broken by the lower index, ties made
    the first samples hubs: most of a row's k best share as many trees with it as
    many others do (at 1M samples x 100 trees, 16 of the 20 on average), and the
    lowest indices won them all
    (the first 1 % of samples had a mean in-degree of 315, the last 1 % of 3.8;
    on Corel5k, 100 trees, the first 5 % 28.7 and the last 5 % 12.4).
    """
    # uint16 co-leaf counts while the trees allow (int32 beyond)
    counter = np.zeros(0, np.uint16 if query_leaves.shape[1] <= np.iinfo(np.uint16).max else np.int32)
    return _knn_rows(query_leaves, members, offsets, n_ref, self_index, k, bounds, counter)


# A row's co-leaf neighbours are counted in a small hash table (open addressing, linear
# probing) of HASH_SLOTS entries, which stays in the L1 cache: a row has about T times the
# mean leaf size of them (~400 at 100 trees), whatever n. A dense n-long counter costs a
# cache miss per neighbour once n outgrows the L2 cache (at 1M samples x 100 trees, 6-11
# s of counting against 0.4 s at 100k). A row with more than HASH_LOAD distinct neighbours
# (load factor 1/2) is counted again in the dense counter.
HASH_BITS = 12
HASH_SLOTS = 1 << HASH_BITS
HASH_LOAD = HASH_SLOTS // 2


@nb.njit(cache=True, inline="always")
def _hash_slot(j):
    """Fibonacci hashing of a sample index to a slot of the row's table (the product's
    low 32 bits, of which the top ``HASH_BITS``; numba computes it in 64 bits)."""
    return np.int64(((np.int64(j) * 0x9E3779B1) & 0xFFFFFFFF) >> (32 - HASH_BITS))


@nb.njit(cache=True)
def _count_row_hashed(q, query_leaves, members, offsets, self_index, hkey, hcount, slots):
    """``_count_row`` into the hash table ``hkey`` (sample, -1 empty) / ``hcount``: returns
    the number of distinct neighbours, whose slots are ``slots[:nt]``, or -1 (the table
    left empty) when there are more than ``HASH_LOAD``."""
    T = query_leaves.shape[1]
    nt = 0
    for t in range(T):
        if t + 8 < T and query_leaves[q, t + 8] >= 0:
            prefetch2d(offsets, t + 8, query_leaves[q, t + 8])
        if t + 4 < T and query_leaves[q, t + 4] >= 0:
            prefetch2d(members, t + 4, offsets[t + 4, query_leaves[q, t + 4]])
        l = query_leaves[q, t]
        if l < 0:
            continue
        for p in range(offsets[t, l], offsets[t, l + 1]):
            j = members[t, p]
            if j == self_index:
                continue
            h = _hash_slot(j)
            while hkey[h] != j and hkey[h] >= 0:
                h = (h + 1) & (HASH_SLOTS - 1)
            if hkey[h] < 0:
                if nt == HASH_LOAD:
                    for a in range(nt):
                        hkey[slots[a]] = -1
                        hcount[slots[a]] = 0
                    return -1
                hkey[h] = j
                slots[nt] = h
                nt += 1
            hcount[h] += 1
    return nt


@nb.njit(parallel=True, cache=True)
def _knn_rows(query_leaves, members, offsets, n_ref, self_index, k, bounds, counter_type):
    """``knn_rows``, its counts of ``counter_type``'s dtype."""
    nq, T = query_leaves.shape
    idx = np.full((nq, k), -1, np.int32)
    w = np.zeros((nq, k), np.float32)
    n_chunks = bounds.shape[0] - 1
    for c in nb.prange(n_chunks):
        hkey = np.full(HASH_SLOTS, -1, np.int32)
        hcount = np.zeros(HASH_SLOTS, counter_type.dtype)
        slots = np.empty(HASH_LOAD, np.int64)
        # the dense counter of the rows beyond the table, allocated with the chunk's other
        # scratch: made lazily (reassigned inside the loop, which numba hoists out of the
        # prange) it crashed the kernel once the row loop changed around it
        counter = np.zeros(n_ref, counter_type.dtype)
        touched = np.empty(n_ref, np.int32)
        best = np.empty(k, np.int64)
        best_id = np.empty(k, np.int64)
        best_tie = np.empty(k, np.uint64)
        for q in range(bounds[c], bounds[c + 1]):
            # both branches uint64: numba would unify an int64 and a uint64 to float64
            row = np.uint64(self_index[q]) if self_index[q] >= 0 else content_key(query_leaves[q])
            nt = _count_row_hashed(q, query_leaves, members, offsets, self_index[q], hkey, hcount, slots)
            hashed = nt >= 0
            if not hashed:
                nt = _count_row(q, query_leaves, members, offsets, self_index[q], counter, touched)
            # the k best by (count descending, tie key ascending), kept sorted as the row's
            # neighbours are offered (and their counts reset): at a million samples x 100
            # trees most rows' k-th best neighbour shares one tree with the row, as do most
            # of its ~350 neighbours, so sorting those cost more than the counting
            m = 0
            for a in range(nt):
                if hashed:
                    h = slots[a]
                    j = np.int64(hkey[h])
                    cj = np.int64(hcount[h])
                    hkey[h] = -1
                    hcount[h] = 0
                else:
                    j = np.int64(touched[a])
                    cj = np.int64(counter[j])
                    counter[j] = 0
                m = push_top(best, best_id, best_tie, m, cj, j, tie_key(row, j))
            for a in range(m):
                idx[q, a] = np.int32(best_id[a])
                w[q, a] = best[a] / T
    return idx, w


@nb.njit(cache=True)
def csr_top_k(indptr, indices, data, k):
    """Each row's ``k`` largest entries of a canonical CSR matrix, the diagonal and zeros
    left out, equal values ordered by ``tie_key`` (as ``leaf_knn``): returns (rows, cols,
    values), row by row, best first within a row (``knn_affinity``'s edges)."""
    n = indptr.shape[0] - 1
    count = np.zeros(n + 1, np.int64)
    val = np.empty(k)
    ids = np.empty(k, np.int64)
    keys = np.empty(k, np.uint64)
    for i in range(n):
        m = 0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j != i and data[p] != 0.0:
                m += 1
        count[i + 1] = count[i] + min(m, k)
    rows = np.empty(count[n], np.int64)
    cols = np.empty(count[n], np.int64)
    vals = np.empty(count[n])
    for i in range(n):
        m = 0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j != i and data[p] != 0.0:
                m = push_top(val, ids, keys, m, data[p], j, tie_key(i, j))
        for r in range(m):
            rows[count[i] + r] = i
            cols[count[i] + r] = ids[r]
            vals[count[i] + r] = val[r]
    return rows, cols, vals
