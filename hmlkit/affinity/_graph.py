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
GROUP_CHUNKS = 16  # most chunks of the first pass (each one write front per bucket)


@nb.njit(cache=True, parallel=True)
def _group_by(key, other, w, n, ptr, o_out, w_out):
    """Stable sort of the entries (key, other, w), key in [0, n), other < 2**32, by
    key: fills ``ptr`` (n + 1) and the grouped ``o_out``, ``w_out`` (each group in
    input order). The entries are cut into chunks, each scattered by its own thread
    to its own part of every bucket (chunk-major within a bucket: stable), then the
    buckets are grouped in parallel; the result is the same whatever the threads."""
    _group(key, other, np.empty(0, np.int64), w, n, ptr, o_out, w_out)


@nb.njit(cache=True, parallel=True)
def _transpose(fptr, fcol, fw, n, ptr, o_out, w_out):
    """``_group_by(fcol, rows, fw, ...)`` of a row-grouped matrix (row pointers
    ``fptr``), each entry's row read off ``fptr``: its transpose, rows ascending
    within each column, without an nnz-long array of rows."""
    _group(fcol, np.empty(0, np.int32), fptr, fw, n, ptr, o_out, w_out)


@nb.njit(cache=True, inline="always")
def _group(key, other, rowptr, w, n, ptr, o_out, w_out):
    """``_group_by``; with ``rowptr`` not empty, the entries' ``other`` is their row."""
    by_row = rowptr.shape[0] > 0
    E = key.shape[0]
    bits = 0
    while (1 << bits) < n:
        bits += 1
    # a key's offset within its bucket fits 16 bits (more buckets past 2**24 nodes)
    shift = min(16, max(0, bits - RADIX_BITS))
    n_buckets = ((n - 1) >> shift) + 1 if n > 0 else 0
    P = max(1, min(GROUP_CHUNKS, E // 65536))
    cut = np.empty(P + 1, np.int64)  # first entry of each chunk
    row_cut = np.zeros(P + 1, np.int64)  # and, by rows, its first row
    for c in range(P + 1):
        cut[c] = E * c // P
    if by_row:  # chunks end at row ends
        for c in range(P + 1):
            row_cut[c] = np.searchsorted(rowptr, cut[c], side="left") if c < P else rowptr.shape[0] - 1
            cut[c] = rowptr[row_cut[c]]
    count = np.zeros((P, n_buckets), np.int64)
    for c in nb.prange(P):
        for e in range(cut[c], cut[c + 1]):
            count[c, key[e] >> shift] += 1
    # each chunk's write front in each bucket: buckets in order, chunks in order within one
    start = np.zeros(n_buckets + 1, np.int64)
    front = np.empty((P, n_buckets), np.int64)
    s = 0
    for b in range(n_buckets):
        start[b] = s
        for c in range(P):
            front[c, b] = s
            s += count[c, b]
    start[n_buckets] = s
    # the first pass writes straight into the outputs, each entry in its bucket's span,
    # beside its key's offset in the bucket (2 bytes): the only scratch as long as the
    # entries, where a packed (key, other) copy and one of the weights took 16 bytes, all
    # of it fresh pages at a million nodes
    low = np.empty(E, np.uint16)
    mask = (1 << shift) - 1
    for c in nb.prange(P):
        if by_row:
            for i in range(row_cut[c], row_cut[c + 1]):
                for e in range(rowptr[i], rowptr[i + 1]):
                    b = key[e] >> shift
                    p = front[c, b]
                    front[c, b] = p + 1
                    low[p] = key[e] & mask
                    o_out[p] = i
                    w_out[p] = w[e]
        else:
            for e in range(cut[c], cut[c + 1]):
                b = key[e] >> shift
                p = front[c, b]
                front[c, b] = p + 1
                low[p] = key[e] & mask
                o_out[p] = other[e]
                w_out[p] = w[e]
    width = 1 << shift
    ptr[0] = 0
    for b in nb.prange(n_buckets):
        _group_bucket(low, start[b], start[b + 1], b << shift, min(n, (b << shift) + width), ptr, o_out, w_out)


@nb.njit(cache=True)
def _group_bucket(low, s, t, base, hi, ptr, o_out, w_out):
    """The second pass of ``_group_by`` on one bucket (entries s..t of ``o_out`` and
    ``w_out``, keys base..hi, ``low`` their offsets from base): grouped in place, through
    a copy of the bucket's entries, which stays in cache."""
    local = np.zeros(hi - base + 1, np.int64)
    for e in range(s, t):
        local[low[e] + 1] += 1
    for j in range(hi - base):
        local[j + 1] += local[j]
        ptr[base + j + 1] = s + local[j + 1]
    o_copy = o_out[s:t].copy()
    w_copy = w_out[s:t].copy()
    for e in range(s, t):
        j = low[e]
        p = s + local[j]
        local[j] += 1
        o_out[p] = o_copy[e - s]
        w_out[p] = w_copy[e - s]


@nb.njit(cache=True)
def _sort_row(cols, w, s, t):
    """Entries s..t sorted by column, stable (insertion sort for short rows, as kNN rows
    are); duplicate columns summed in that order, moved to the front; returns their count."""
    if t - s > 32:
        o = np.argsort(cols[s:t], kind="mergesort")
        c2 = cols[s:t][o]
        w2 = w[s:t][o]
        cols[s:t] = c2
        w[s:t] = w2
    else:
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
    q = s
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
    return q - s


@nb.njit(cache=True, parallel=True)
def _sort_rows_sum_duplicates(ptr, cols, w):
    """Each row's entries sorted by column, duplicate columns summed (canonical CSR,
    in place, ``ptr`` updated); returns the number of entries. Rows in parallel; the
    rows are closed up afterwards only where duplicates were summed."""
    n = ptr.shape[0] - 1
    kept = np.empty(n, np.int64)
    for i in nb.prange(n):
        kept[i] = _sort_row(cols, w, ptr[i], ptr[i + 1])
    q = ptr[0]
    s = ptr[0]
    for i in range(n):
        t = ptr[i + 1]
        if q != s:
            for a in range(kept[i]):
                cols[q + a] = cols[s + a]
                w[q + a] = w[s + a]
        q += kept[i]
        ptr[i + 1] = q
        s = t
    return q


@nb.njit(cache=True)
def symmetric_max(rows, cols, w, n):
    """CSR (indptr int64, indices int32, data float64) of max(S, S^T), S the
    directed edges rows -> cols with weights w (duplicates summed); an absent edge
    counts as 0 and entries of 0 are not stored (as scipy's ``maximum``)."""
    E = rows.shape[0]
    fcol = np.empty(E, np.int32)
    fw = np.empty(E, np.float64)
    ascending = True
    for e in range(1, E):
        if rows[e] < rows[e - 1]:
            ascending = False
            break
    if ascending:  # kNN lists come row by row: S's rows are already grouped
        count = np.zeros(n, np.int64)
        for e in range(E):
            count[rows[e]] += 1
            fcol[e] = cols[e]
            fw[e] = w[e]
        fptr = _row_pointers(count)
    else:
        fptr = np.empty(n + 1, np.int64)
        _group_by(rows, cols, w, n, fptr, fcol, fw)
    return _max_with_transpose(fptr, fcol, fw, _sort_rows_sum_duplicates(fptr, fcol, fw), n)


@nb.njit(cache=True, parallel=True)
def symmetric_max_knn(idx, w, n):
    """``symmetric_max`` of the kNN lists' edges i -> idx[i, a], weight w[i, a]
    (negative idx: padding, skipped), read from the lists in place: no edge arrays.
    The scratch keeps the weights' own float type (leaf_knn's float32: 160 MB fewer
    fresh pages at a million nodes; a maximum of float32s is exact), unless a list
    names a neighbour twice, whose weights are then summed in float64, as scipy does."""
    fptr, fcol, fw = _rows_of_lists(idx, w, n)
    nnz = _sort_rows_sum_duplicates(fptr, fcol, fw)
    if nnz < fcol.shape[0] and fw.itemsize < 8:  # duplicates summed in float32: again, wide
        fptr, fcol, fw64 = _rows_of_lists(idx, w.astype(np.float64), n)
        return _max_with_transpose(fptr, fcol, fw64, _sort_rows_sum_duplicates(fptr, fcol, fw64), n)
    return _max_with_transpose(fptr, fcol, fw, nnz, n)


@nb.njit(cache=True, parallel=True)
def _rows_of_lists(idx, w, n):
    """The kNN lists' edges grouped by row (row pointers, columns, weights in w's type)."""
    q, k = idx.shape
    kept = np.zeros(n, np.int64)
    for i in nb.prange(q):
        for a in range(k):
            if idx[i, a] >= 0:
                kept[i] += 1
    fptr = _row_pointers(kept)
    fcol = np.empty(fptr[n], np.int32)
    fw = np.empty(fptr[n], w.dtype)
    for i in nb.prange(q):
        e = fptr[i]
        for a in range(k):
            j = idx[i, a]
            if j >= 0:
                fcol[e] = j
                fw[e] = w[i, a]
                e += 1
    return fptr, fcol, fw


@nb.njit(cache=True, parallel=True)
def _max_with_transpose(fptr, fcol, fw, nnz, n):
    """max(S, S^T) in CSR, S given row-grouped (``fptr``, ``fcol``, ``fw``), each row
    sorted with its duplicates summed (``_sort_rows_sum_duplicates``: ``nnz`` entries)."""
    # S^T: S's entries grouped by column; stable, so each group's rows ascend
    tptr = np.empty(n + 1, np.int64)
    trow = np.empty(nnz, np.int32)
    tw = np.empty(nnz, fw.dtype)
    _transpose(fptr, fcol[:nnz], fw[:nnz], n, tptr, trow, tw)
    # the merge of each row's two sorted lists, twice: count, then fill arrays of the exact size
    size = np.empty(n, np.int64)
    for i in nb.prange(n):  # counting only: the output arrays passed (trow, tw) are not written
        size[i] = _merge_row(fcol, fw, fptr[i], fptr[i + 1], trow, tw, tptr[i], tptr[i + 1], False, trow, tw, 0)
    indptr = _row_pointers(size)
    indices = np.empty(indptr[n], np.int32)
    data = np.empty(indptr[n], np.float64)
    for i in nb.prange(n):
        _merge_row(fcol, fw, fptr[i], fptr[i + 1], trow, tw, tptr[i], tptr[i + 1], True, indices, data, indptr[i])
    return indptr, indices, data


@nb.njit(cache=True)
def _row_pointers(count):
    """CSR row pointers (n + 1) of rows holding ``count[i]`` entries each."""
    ptr = np.zeros(count.shape[0] + 1, np.int64)
    for i in range(count.shape[0]):
        ptr[i + 1] = ptr[i] + count[i]
    return ptr


@nb.njit(cache=True, inline="always")
def _merge_row(fcol, fw, a, ae, trow, tw, b, be, fill, indices, data, q):
    """Row i of max(S, S^T): the merge of its sorted lists in S (a..ae) and S^T (b..be),
    entries of 0 left out; written from ``q`` on when ``fill``; returns their count."""
    q0 = q
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
    return q - q0


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
