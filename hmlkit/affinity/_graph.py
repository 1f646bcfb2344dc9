"""Numba kernel of the symmetric kNN graph: max(S, S^T) of a directed edge list in
CSR, S the list with duplicate edges summed (the matrix scipy's ``W.maximum(W.T)``
of ``csr_matrix((w, (rows, cols)))`` gives).

Why not scipy: its transpose is one counting-sort pass that scatters every edge to a
random spot of the (nnz,)-long output, a cache and TLB miss per edge once the graph
outgrows the caches. Here a scatter is two stable passes (``_group_by``): by the
key's high bits into at most ``2**RADIX_BITS`` buckets, whose write fronts stay in
cache, then within each bucket, whose entries do. On kNN lists
(``symmetric_max_knn``) the buckets are laid out in the output arrays themselves and
each bucket is merged while in cache, so the only fresh pages are about the graph's.
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
    shift, n_buckets = _buckets(n)
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
    start, front = _write_fronts(count, np.zeros(n_buckets, np.int64))
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


@nb.njit(cache=True, inline="always")
def _write_fronts(count, room):
    """Each chunk's write front in each bucket (``count[c, b]`` entries of chunk c go to
    bucket b): buckets in order, chunks in order within one (a stable layout), each
    bucket's entries followed by ``room[b]`` free slots. Returns (where each bucket
    starts, and the end; the fronts)."""
    P, n_buckets = count.shape
    start = np.empty(n_buckets + 1, np.int64)
    front = np.empty((P, n_buckets), np.int64)
    s = 0
    for b in range(n_buckets):
        start[b] = s
        for c in range(P):
            front[c, b] = s
            s += count[c, b]
        s += room[b]
    start[n_buckets] = s
    return start, front


@nb.njit(cache=True, inline="always")
def _buckets(n):
    """(shift, number of buckets): keys [0, n) in at most ``2**RADIX_BITS`` buckets of
    ``2**shift`` keys; a key's offset within its bucket fits 16 bits (more buckets past
    2**24 nodes)."""
    bits = 0
    while (1 << bits) < n:
        bits += 1
    shift = min(16, max(0, bits - RADIX_BITS))
    return shift, ((n - 1) >> shift) + 1 if n > 0 else 0


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
def symmetric_max_knn(idx, w, n, n_blocks):
    """``symmetric_max`` of the kNN lists' edges i -> idx[i, a], weight w[i, a]
    (negative idx: padding, skipped; a neighbour named twice in a list: its weights
    summed in float64, in list order, as scipy sums duplicates). ``n_blocks``: how
    many runs of buckets are merged side by side (the number of threads; the arrays
    are the same whatever it is). Returns (indptr, indices, data, nnz): the graph is
    the first nnz entries of ``indices`` and ``data``.

    One pair of arrays of k n + nnz(S) entries is both the scratch and the output, so
    the only fresh pages are about the graph's own (at a million nodes, where every
    page of a fresh array faults and pages freed are unmapped, about 0.45 GB where
    separate scratch for the sorted rows, the transpose and its counts took 0.9):

    1. each edge i -> j is put in j's bucket of that room (chunks of rows, each its own
       part of every bucket: stable), as (i, w) with j's offset in the bucket;
    2. bucket by bucket, in cache: its entries grouped by j (so j's list of S^T, rows
       ascending), then each row i of the bucket merged with its own list, sorted on
       the fly from ``idx`` (no copy of S), and written compactly from the bucket's
       start on (never past the bucket's room; each thread's run of buckets one
       compact block);
    3. the blocks closed up, and the row pointers counted."""
    q, k = idx.shape
    shift, n_buckets = _buckets(n)
    width = 1 << shift
    P = max(1, min(GROUP_CHUNKS, (q * k) // 65536))
    count = np.zeros((P, n_buckets), np.int64)
    for c in nb.prange(P):
        for i in range(q * c // P, q * (c + 1) // P):
            for a in range(k):
                j = idx[i, a]
                if j >= 0:
                    count[c, j >> shift] += 1
    # bucket b's room: its edges' entries first (where step 1 puts them), then k per row of the bucket
    room = np.empty(n_buckets, np.int64)
    for b in range(n_buckets):
        room[b] = k * max(0, min(q, (b << shift) + width) - (b << shift))
    start, front = _write_fronts(count, room)
    s = start[n_buckets]
    indices = np.empty(s, np.int32)
    data = np.empty(s, np.float64)
    # float32 weights: an entry's (w, i) share its 8-byte data slot and the offset goes in
    # indices, which step 2 overwrites; float64 weights need the offsets apart
    packed = w.itemsize == 4
    data_w = data.view(np.float32)
    data_i = data.view(np.int32)
    low = np.empty(0 if packed else s, np.uint16)
    mask = width - 1
    for c in nb.prange(P):
        for i in range(q * c // P, q * (c + 1) // P):
            for a in range(k):
                j = idx[i, a]
                if j >= 0:
                    b = j >> shift
                    p = front[c, b]
                    front[c, b] = p + 1
                    if packed:
                        indices[p] = j & mask
                        data_w[2 * p] = w[i, a]
                        data_i[2 * p + 1] = i
                    else:
                        low[p] = j & mask
                        indices[p] = i
                        data[p] = w[i, a]
    indptr = np.empty(n + 1, np.int64)  # row sizes first, then the pointers
    indptr[0] = 0
    G = max(1, min(n_blocks, n_buckets))  # numba.get_num_threads() here would keep the kernel out of the disk cache
    first_bucket = np.empty(G + 1, np.int64)
    for g in range(G + 1):
        first_bucket[g] = n_buckets * g // G
    made = np.zeros(G, np.int64)
    for g in nb.prange(G):
        o = start[first_bucket[g]]
        for b in range(first_bucket[g], first_bucket[g + 1]):
            lo = b << shift
            o = _merge_bucket(idx, w, lo, min(n, lo + width), start[b], front[P - 1, b], low, packed, indices, data,
                              indptr, o)
        made[g] = o - start[first_bucket[g]]
    # close up: block g moves left to where the blocks before it end (never onto entries
    # not yet moved, so a forward copy), then each block's row pointers
    at = np.empty(G, np.int64)
    nnz = 0
    for g in range(G):
        at[g] = nnz
        src = start[first_bucket[g]]
        if src != nnz:
            for e in range(made[g]):
                indices[nnz + e] = indices[src + e]
                data[nnz + e] = data[src + e]
        nnz += made[g]
    for g in nb.prange(G):
        p = at[g]
        for i in range(min(n, first_bucket[g] << shift), min(n, first_bucket[g + 1] << shift)):
            p += indptr[i + 1]
            indptr[i + 1] = p
    return indptr, indices, data, nnz


@nb.njit(cache=True)
def _merge_bucket(idx, w, lo, hi, s, t, low, packed, indices, data, sizes, o):
    """Step 2 of ``symmetric_max_knn`` on the bucket of nodes lo..hi, its entries at
    s..t: rows lo..hi of the graph written from ``o`` on, their sizes in
    ``sizes[i + 1]``; returns where they end."""
    first = np.zeros(hi - lo + 1, np.int64)
    for e in range(s, t):
        first[(indices[e] if packed else low[e]) + 1] += 1
    for j in range(hi - lo):
        first[j + 1] += first[j]
    put = first[:hi - lo].copy()
    trow = np.empty(t - s, np.int32)
    tw = np.empty(t - s, np.float64)
    data_w = data.view(np.float32)
    data_i = data.view(np.int32)
    for e in range(s, t):  # copied out first: the rows written below overwrite the bucket's entries
        j = indices[e] if packed else low[e]
        p = put[j]
        put[j] = p + 1
        if packed:
            trow[p] = data_i[2 * e + 1]
            tw[p] = data_w[2 * e]
        else:
            trow[p] = indices[e]
            tw[p] = data[e]
    q, k = idx.shape
    fcol = np.empty(k, np.int32)
    fw = np.empty(k, np.float64)
    for i in range(lo, hi):
        m = 0
        if i < q:
            for a in range(k):
                j = idx[i, a]
                if j >= 0:
                    fcol[m] = j
                    fw[m] = w[i, a]
                    m += 1
            m = _sort_row(fcol, fw, 0, m)
        made = _merge_row(fcol, fw, 0, m, trow, tw, first[i - lo], first[i - lo + 1], True, indices, data, o)
        sizes[i + 1] = made
        o += made
    return o


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
    """Row i of max(S, S^T): the merge of its sorted lists in S (a..ae, duplicates
    summed) and S^T (b..be, where a row repeated, from a kNN list naming a neighbour
    twice, is summed here in order), entries of 0 left out; written from ``q`` on
    when ``fill``; returns their count."""
    q0 = q
    tc = 0
    tx = 0.0
    b_next = b  # where the run of S^T at b ends (b_next == b: not read yet)
    while a < ae or b < be:
        if b < be and b_next == b:
            tc = trow[b]
            tx = tw[b]
            b_next = b + 1
            while b_next < be and trow[b_next] == tc:
                tx += tw[b_next]
                b_next += 1
        if b >= be or (a < ae and fcol[a] < tc):
            c, x = fcol[a], max(fw[a], 0.0)
            a += 1
        elif a >= ae or tc < fcol[a]:
            c, x = tc, max(tx, 0.0)
            b = b_next
        else:
            c, x = fcol[a], max(fw[a], tx)
            a += 1
            b = b_next
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
