"""Numba kernel of the symmetric kNN graph: max(S, S^T) of a directed edge list in
CSR, S the list with duplicate edges summed (the matrix scipy's ``W.maximum(W.T)``
of ``csr_matrix((w, (rows, cols)))`` gives).

Why not scipy: its transpose is one counting-sort pass that scatters every edge to a
random spot of the (nnz,)-long output, a cache and TLB miss per edge once the graph
outgrows the caches. Here a scatter is two stable passes (``_group_by``): by the
key's high bits into at most ``2**RADIX_BITS`` buckets, whose write fronts stay in
cache, then within each bucket, whose entries do.
"""
from __future__ import annotations

import numba as nb
import numpy as np

RADIX_BITS = 8  # first-pass buckets: 256 write fronts (two arrays) stay in L1/L2 and the TLB


@nb.njit(cache=True)
def _group_by(key, other, w, n, ptr, o_out, w_out):
    """Stable sort of the entries (key, other, w), key in [0, n), other < 2**32, by
    key: fills ``ptr`` (n + 1) and the grouped ``o_out``, ``w_out`` (each group in
    input order)."""
    E = key.shape[0]
    bits = 0
    while (1 << bits) < n:
        bits += 1
    shift = max(0, bits - RADIX_BITS)
    n_buckets = ((n - 1) >> shift) + 1 if n > 0 else 0
    start = np.zeros(n_buckets + 1, np.int64)
    for e in range(E):
        start[(key[e] >> shift) + 1] += 1
    for b in range(n_buckets):
        start[b + 1] += start[b]
    fill = start[:-1].copy()
    packed = np.empty(E, np.int64)  # key << 32 | other: one write front per bucket, not two
    w1 = np.empty(E, np.float64)
    for e in range(E):
        b = key[e] >> shift
        p = fill[b]
        fill[b] = p + 1
        packed[p] = (np.int64(key[e]) << 32) | np.int64(other[e])
        w1[p] = w[e]
    width = 1 << shift
    local = np.zeros(width + 1, np.int64)
    ptr[0] = 0
    for b in range(n_buckets):
        s, t = start[b], start[b + 1]
        base = b << shift
        hi = min(n, base + width)
        for j in range(hi - base + 1):
            local[j] = 0
        for e in range(s, t):
            local[(packed[e] >> 32) - base + 1] += 1
        for j in range(hi - base):
            local[j + 1] += local[j]
            ptr[base + j + 1] = s + local[j + 1]
        for e in range(s, t):
            j = (packed[e] >> 32) - base
            p = s + local[j]
            local[j] += 1
            o_out[p] = packed[e] & 0xFFFFFFFF
            w_out[p] = w1[e]


@nb.njit(cache=True)
def _sort_rows_sum_duplicates(ptr, cols, w):
    """Each row's entries sorted by column, duplicate columns summed (canonical CSR,
    in place, ``ptr`` updated); returns the number of entries."""
    n = ptr.shape[0] - 1
    q = 0
    s = ptr[0]
    for i in range(n):
        t = ptr[i + 1]
        if t - s > 32:
            o = np.argsort(cols[s:t], kind="mergesort")
            c2 = cols[s:t][o]
            w2 = w[s:t][o]
            cols[s:t] = c2
            w[s:t] = w2
        else:  # insertion sort (kNN rows are short), stable
            for a in range(s + 1, t):
                c = cols[a]
                x = w[a]
                b = a - 1
                while b >= s and cols[b] > c:
                    cols[b + 1] = cols[b]
                    w[b + 1] = w[b]
                    b -= 1
                cols[b + 1] = c
                w[b + 1] = x
        a = s
        while a < t:
            c = cols[a]
            x = w[a]
            a += 1
            while a < t and cols[a] == c:
                x += w[a]
                a += 1
            cols[q] = c
            w[q] = x
            q += 1
        ptr[i + 1] = q
        s = t
    return q


@nb.njit(cache=True)
def symmetric_max(rows, cols, w, n):
    """CSR (indptr int64, indices int32, data float64) of max(S, S^T), S the
    directed edges rows -> cols with weights w (duplicates summed); an absent edge
    counts as 0 and entries of 0 are not stored (as scipy's ``maximum``)."""
    E = rows.shape[0]
    fptr = np.empty(n + 1, np.int64)
    fcol = np.empty(E, np.int32)
    fw = np.empty(E, np.float64)
    ascending = True
    for e in range(1, E):
        if rows[e] < rows[e - 1]:
            ascending = False
            break
    if ascending:  # kNN lists come row by row: S's rows are already grouped
        fptr[:] = 0
        for e in range(E):
            fptr[rows[e] + 1] += 1
            fcol[e] = cols[e]
            fw[e] = w[e]
        for i in range(n):
            fptr[i + 1] += fptr[i]
    else:
        _group_by(rows, cols, w, n, fptr, fcol, fw)
    return _max_with_transpose(fptr, fcol, fw, n)


@nb.njit(cache=True)
def symmetric_max_knn(idx, w, n):
    """``symmetric_max`` of the kNN lists' edges i -> idx[i, a], weight w[i, a]
    (negative idx: padding, skipped), read from the lists in place: no edge arrays."""
    q, k = idx.shape
    E = 0
    for i in range(q):
        for a in range(k):
            if idx[i, a] >= 0:
                E += 1
    fptr = np.empty(n + 1, np.int64)
    fcol = np.empty(E, np.int32)
    fw = np.empty(E, np.float64)
    fptr[0] = 0
    e = 0
    for i in range(q):
        for a in range(k):
            j = idx[i, a]
            if j >= 0:
                fcol[e] = j
                fw[e] = w[i, a]
                e += 1
        fptr[i + 1] = e
    for i in range(q, n):
        fptr[i + 1] = e
    return _max_with_transpose(fptr, fcol, fw, n)


@nb.njit(cache=True)
def _max_with_transpose(fptr, fcol, fw, n):
    """max(S, S^T) in CSR, S given row-grouped (``fptr``, ``fcol``, ``fw``; rows not
    yet sorted, duplicates not yet summed: done here, in place)."""
    nnz = _sort_rows_sum_duplicates(fptr, fcol, fw)
    src = np.empty(nnz, np.int32)
    for i in range(n):
        for a in range(fptr[i], fptr[i + 1]):
            src[a] = i
    # S^T: S's entries grouped by column; stable, so each group's rows ascend
    tptr = np.empty(n + 1, np.int64)
    trow = np.empty(nnz, np.int32)
    tw = np.empty(nnz, np.float64)
    _group_by(fcol[:nnz], src, fw[:nnz], n, tptr, trow, tw)
    # the merge of each row's two sorted lists, twice: count, then fill arrays of the exact size
    indptr = np.zeros(n + 1, np.int64)
    indices = np.empty(0, np.int32)
    data = np.empty(0, np.float64)
    for fill in (False, True):
        if fill:
            indices = np.empty(indptr[n], np.int32)
            data = np.empty(indptr[n], np.float64)
        q = 0
        for i in range(n):
            a, ae = fptr[i], fptr[i + 1]
            b, be = tptr[i], tptr[i + 1]
            while a < ae or b < be:
                if b >= be or (a < ae and fcol[a] < trow[b]):
                    c, x = fcol[a], max(fw[a], 0.0)
                    a += 1
                elif a >= ae or trow[b] < fcol[a]:
                    c, x = trow[b], max(tw[b], 0.0)
                    b += 1
                else:
                    c, x = fcol[a], max(fw[a], tw[b])
                    a += 1
                    b += 1
                if x != 0.0:
                    if fill:
                        indices[q] = c
                        data[q] = x
                    q += 1
            indptr[i + 1] = q
    return indptr, indices, data


@nb.njit(cache=True, parallel=True)
def scale_entries(indptr, indices, data, inv, out):
    """out[e] = data[e] * (inv[i] * inv[j]) for every stored (i, j) of a CSR matrix:
    D^-1/2 W D^-1/2 entry by entry, with numpy's operation order (so the same floats
    as ``data * (inv[rows] * inv[indices])``, without its four nnz-long temporaries;
    a float32 ``out`` rounds each once, as ``astype`` would)."""
    n = indptr.shape[0] - 1
    for i in nb.prange(n):
        a = inv[i]
        for e in range(indptr[i], indptr[i + 1]):
            out[e] = data[e] * (a * inv[indices[e]])
