"""Forest affinity (Eq. 10) and its kappa-NN graph, kept sparse throughout.

The public functions are here; their numba kernels (leaf members, co-leaf counts,
kappa-NN selection) are in :mod:`hmlkit.affinity._kernels`."""
from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from .._pages import release_after
from .._validation import check_int, unshared
from ..executors import executor_for
from . import _graph as G
from . import _kernels as K
from ..primitives.topk import tie_keys


def _check_leaves(leaves, name="leaves"):
    leaves = np.asarray(leaves)
    if leaves.ndim != 2 or leaves.shape[1] < 1:
        raise ValueError(f"{name} must be a 2-D (n_samples, n_trees) array of leaf indices, got shape {leaves.shape}")
    if not np.issubdtype(leaves.dtype, np.integer):
        raise ValueError(f"{name} must hold integer leaf indices (-1: not in that tree), got dtype {leaves.dtype}")
    if leaves.dtype.itemsize > 4 or leaves.dtype == np.uint32:
        lo, hi = (int(leaves.min()), int(leaves.max())) if leaves.size else (0, 0)
        if hi > np.iinfo(np.int32).max or lo < np.iinfo(np.int32).min:  # the cast would wrap them
            raise ValueError(f"{name} holds leaf ids in [{lo}, {hi}], beyond int32: renumber them per tree "
                             f"(e.g. np.unique(column, return_inverse=True)), the same way for leaves and queries")
    return np.ascontiguousarray(leaves, dtype=np.int32)


# ids up to this multiple of n are renumbered through a presence table per tree
# (``compact_ids``); a forest's own leaf or node ids are below 2n
COMPACT_TABLE_MAX = 8


def _compact(leaves, query_leaves=None):
    """Renumber leaf ids per tree to 0..L-1 (the kernels index leaves densely).

    Any forest's leaf ids work (e.g. scikit-learn's node ids). A negative
    id means "not a member in this tree" and stays -1. Query leaves are
    renumbered with the same map; a query leaf holding no member gets -1
    (no co-leaf neighbours in that tree).
    """
    if query_leaves is not None and query_leaves.shape[1] != leaves.shape[1]:
        raise ValueError(f"query_leaves has {query_leaves.shape[1]} trees but leaves has {leaves.shape[1]}")
    out = np.empty_like(leaves)
    q_out = np.empty((0, leaves.shape[1]), np.int32) if query_leaves is None else np.empty_like(query_leaves)
    top = int(leaves.max(initial=-1))
    if top < COMPACT_TABLE_MAX * max(leaves.shape[0], 1):
        # a presence table per tree (linear); ids far beyond n (e.g. hashes) are sorted instead
        K.compact_ids(leaves, q_out if query_leaves is None else query_leaves, top + 1, out, q_out)
        return out if query_leaves is None else (out, q_out)
    for t in range(leaves.shape[1]):
        col = leaves[:, t]
        valid = col >= 0
        uniq, inv = np.unique(col[valid], return_inverse=True)
        out[:, t] = -1
        out[valid, t] = inv
        if query_leaves is not None and len(uniq) == 0:
            q_out[:, t] = -1
        elif query_leaves is not None:
            pos = np.searchsorted(uniq, query_leaves[:, t])
            pos = np.minimum(pos, len(uniq) - 1)
            q_out[:, t] = np.where((uniq[pos] == query_leaves[:, t]) & (query_leaves[:, t] >= 0), pos, -1)
    return out if query_leaves is None else (out, q_out)


def _leaf_ids(leaves):
    """A training forest's ``leaves`` as the kernels index them: as they are when every
    id is below n (a forest's own leaves; an id no sample holds is an empty leaf, and
    the per-tree tables are no longer than n), else renumbered (``_compact``). The
    neighbours are the same either way; the copy costs 0.05 s at 100,000 samples x 100
    trees and 1.5 s at a million."""
    if int(leaves.max(initial=-1)) < leaves.shape[0]:
        return leaves
    return _compact(leaves)


def leaf_affinity(leaves, query_leaves=None):
    """A_ij = fraction of trees in which samples i and j share a leaf (Eq. 10).

    Parameters
    ----------
    leaves : (n, T) int array
        Leaf index of every training sample in every tree (any forest);
        -1 where a sample is not a member of that tree (e.g. out of bag).
    query_leaves : (q, T) int array, optional
        Leaves of other samples (routed through the same trees). Then the
        result is the (q, n) affinity of those samples to the training ones.

    Returns
    -------
    csr_matrix float32, (n, n) with unit diagonal, or (q, n).
    """
    leaves = _check_leaves(leaves)
    n, T = leaves.shape
    if query_leaves is None:
        leaves = _leaf_ids(leaves)
        members, offsets, _ = K.leaf_members(leaves)
        self_index = np.arange(n, dtype=np.int64)
        indptr, indices, data = K.cooccurrence_rows(leaves, members, offsets, n, self_index, True, K.chunk_bounds(n))
        return sp.csr_matrix((data, indices, indptr), shape=(n, n))
    leaves, q = _compact(leaves, _check_leaves(query_leaves, "query_leaves"))
    members, offsets, _ = K.leaf_members(leaves)
    self_index = np.full(q.shape[0], -1, np.int64)
    indptr, indices, data = K.cooccurrence_rows(q, members, offsets, n, self_index, False, K.chunk_bounds(q.shape[0]))
    return sp.csr_matrix((data, indices, indptr), shape=(q.shape[0], n))


def leaf_knn(leaves, n_neighbors=20, query_leaves=None, self_index=None):
    """The ``n_neighbors`` samples with highest leaf affinity to each sample.

    A sample is never its own neighbour. ``query_leaves`` (q, T): other
    samples' leaves (-1 = skip that tree for that query); ``self_index``
    (q,): the training index of each query, excluded from its neighbours
    (default: none for external queries). Returns ``(idx, w)``, both
    (q, n_neighbors), w = fraction of all trees; missing neighbours (fewer
    co-leaf samples than asked) are -1 with weight 0.
    """
    leaves = _check_leaves(leaves)
    n = leaves.shape[0]
    n_neighbors = check_int(n_neighbors, "n_neighbors")
    if query_leaves is None:
        leaves = _leaf_ids(leaves)
        q, self_index = leaves, np.arange(n, dtype=np.int64)
    else:
        ql = _check_leaves(query_leaves, "query_leaves")
        leaves, q = _compact(leaves, ql)
        q[ql < 0] = -1
        if self_index is None:
            self_index = np.full(q.shape[0], -1, np.int64)
        else:  # the kernel reads it per query, unchecked
            self_index = np.asarray(self_index)
            if self_index.shape != (q.shape[0],) or not np.issubdtype(self_index.dtype, np.integer):
                raise ValueError(f"self_index must be ({q.shape[0]},) integers, one per query, got shape "
                                 f"{self_index.shape} and dtype {self_index.dtype}")
            if self_index.size and (self_index.min() < -1 or self_index.max() >= n):
                raise ValueError(f"self_index must hold training indices in [0, {n}) or -1 (none)")
            self_index = self_index.astype(np.int64)
    members, offsets, _ = K.leaf_members(leaves)
    if query_leaves is None:  # one block here, or row blocks on the workers of joblib's dask backend
        executor = executor_for()
        bounds = executor.row_blocks(n)
        parts = executor.map(_knn_shared, (leaves, members, offsets), len(bounds),
                             lambda i: (*bounds[i], n_neighbors), name="hmlkit-leaf-knn")
        return parts[0] if len(parts) == 1 else tuple(np.concatenate(p) for p in zip(*parts))
    return K.knn_rows(q, members, offsets, n, self_index, n_neighbors, K.chunk_bounds(q.shape[0]))


def _knn_shared(shared, a, b, k):
    """The leaf k-NN of training rows a..b-1 (``shared``: leaves, members, offsets)."""
    leaves, members, offsets = shared.arrays
    return K.knn_rows(leaves[a:b], members, offsets, leaves.shape[0], np.arange(a, b, dtype=np.int64), k,
                      K.chunk_bounds(b - a))


def knn_affinity(A, n_neighbors=20):
    """Keep each row's ``n_neighbors`` largest off-diagonal affinities, then
    symmetrise by the element-wise maximum ("or" kNN graph). Equal affinities
    are ordered by a hash of the pair (row, column), as in ``leaf_knn``.

    ``A`` may be sparse or dense (n, n) and non-negative.
    """
    if sp.issparse(A):
        A = sp.csr_matrix(A, dtype=np.float64)
    else:
        A = np.asarray(A, dtype=np.float64)
        if A.ndim != 2:
            raise ValueError(f"affinity must be a 2-D square matrix, got shape {A.shape}")
        A = sp.csr_matrix(A)
    n = A.shape[0]
    if A.shape != (n, n):
        raise ValueError(f"affinity must be square, got shape {A.shape}")
    if A.nnz and (not np.isfinite(A.data).all() or A.data.min() < 0):
        raise ValueError("affinity must be finite and non-negative")
    k = int(n_neighbors)
    if k < 1:
        raise ValueError(f"n_neighbors must be >= 1, got {n_neighbors}")
    A = A.tolil()
    A.setdiag(0)
    A = A.tocsr()
    A.eliminate_zeros()
    # each row's k largest, equal ones ordered by a hash of (row, column), as the kernels'
    # kNN rows order them (by the lower column, the first samples became hubs)
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    order = np.lexsort((tie_keys(rows.astype(np.int64), A.indices.astype(np.int64)), -A.data, rows))
    rank = np.arange(order.size) - np.repeat(A.indptr[:-1], np.diff(A.indptr))
    keep = order[rank < k]
    return symmetric_graph(rows[keep], A.indices[keep], A.data[keep], n)


def symmetric_graph(rows, cols, weights, n):
    """The one kNN-graph builder of the kit: directed kNN edges ``rows -> cols`` with
    ``weights`` made a symmetric ("or", max-weight) sparse (n, n) graph
    (``knn_graph_from_neighbors`` runs the same kernel on kNN lists)."""
    rows = np.asarray(rows, dtype=np.int64).ravel()
    cols = np.asarray(cols, dtype=np.int64).ravel()
    w = np.asarray(weights, dtype=np.float64).ravel()
    n = int(n)
    if not rows.shape == cols.shape == w.shape:
        raise ValueError(f"rows, cols and weights must have one length, got {rows.shape[0]}, {cols.shape[0]} "
                         f"and {w.shape[0]}")
    for name, v in (("rows", rows), ("cols", cols)):
        if v.size and (v.min() < 0 or v.max() >= n):
            raise ValueError(f"{name} must be node indices in [0, {n}), got values in [{v.min()}, {v.max()}]")
    # max(S, S^T) in cache-friendly passes (``_graph``), the same matrix as scipy's
    # csr_matrix((w, (rows, cols))).maximum(its transpose)
    indptr, indices, data = G.symmetric_max(rows, cols, w, n)
    return sp.csr_matrix((data, indices, indptr), shape=(n, n))


def knn_graph_from_neighbors(idx, w, n):
    """Symmetric ("or", max-weight) sparse graph from kNN lists (``leaf_knn``)."""
    idx = np.asarray(idx)
    w = np.asarray(w)
    n = int(n)
    if idx.ndim != 2 or w.shape != idx.shape:
        raise ValueError(f"idx and w must be 2-D arrays of one shape (samples, neighbours), got {idx.shape} "
                         f"and {w.shape}")
    if not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"idx must hold integer node indices (-1: no neighbour), got dtype {idx.dtype}")
    if idx.shape[0] > n or (idx.size and (idx.max() >= n or idx.min() < -1)):
        raise ValueError(f"idx must hold node indices in [0, {n}) or -1 (none) for at most {n} rows, got "
                         f"{idx.shape[0]} rows and indices in [{idx.min() if idx.size else None}, "
                         f"{idx.max() if idx.size else None}]")
    if w.dtype not in (np.float32, np.float64):
        w = w.astype(np.float64)
    if not np.isfinite(w).all():  # a NaN weight gave an asymmetric graph
        raise ValueError("w must hold finite weights")
    # the symmetric_graph of the edges i -> idx[i, a], built from the lists in place,
    # in a room of k n + nnz(S) entries whose end was scratch: its pages go back
    indptr, indices, data, nnz = G.symmetric_max_knn(idx, w, n, numba.get_num_threads())
    release_after(indices, nnz)
    release_after(data, nnz)
    return sp.csr_matrix((data[:nnz], indices[:nnz], indptr), shape=(n, n))


# from this many samples on, a sparse Z's cosine kNN uses an inverted index; exact while
# its postings cost at most EXACT_POSTINGS_PER_ROW per row, then the windowed search
INVERTED_FROM = 20_000
EXACT_POSTINGS_PER_ROW = 16_384
WINDOW = 256
COSINE_ALGORITHMS = ("auto", "brute", "inverted", "window")


def window_order(Z, depth=4):
    """A global order of the rows of sparse ``Z`` for the windowed search: by their
    ``depth`` most frequent non-zero columns, lexicographically, so rows that share
    those columns are adjacent in every column's postings (a rarer column is scanned
    whole when it fits the window). Rows alike in those are ordered by a hash of their
    index (not by index, which may follow the data's own groups). Returns ``perm``
    (n,) int64: the row numbers in that order."""
    Z = sp.csr_matrix(Z)
    n, m = Z.shape
    freq = np.bincount(Z.indices, minlength=m)  # postings per column
    col_rank = np.empty(m, np.int64)
    col_rank[np.lexsort((np.arange(m), -freq))] = np.arange(m)
    row = np.repeat(np.arange(n), np.diff(Z.indptr))
    r = col_rank[Z.indices]
    order = np.lexsort((r, row))
    place = np.arange(Z.nnz) - np.repeat(Z.indptr[:-1], np.diff(Z.indptr))
    keys = np.full((n, depth), -1, np.int64)
    first = place < depth
    keys[row[order][first], place[first]] = r[order][first]
    h = (np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)
    return np.lexsort((h,) + tuple(keys[:, d] for d in range(depth - 1, -1, -1)))


def _window_knn(Z, norm, k, window):
    """The windowed search's kNN lists of the non-empty rows of ``Z`` (CSR, sorted,
    non-negative; ``norm`` its row norms): (rows, idx (len(rows), k), sim), original
    row numbers, -1 pads."""
    perm = window_order(Z)
    P = Z[perm]  # the rows in window order: a window's rows are neighbours in memory too
    C = P.tocsc()
    C.sort_indices()
    prow = np.flatnonzero(np.diff(P.indptr) > 0)
    idx, sim = K.cosine_knn_window_rows(P.indptr.astype(np.int64), P.indices.astype(np.int64), P.data,
                                        C.indptr.astype(np.int64), C.indices.astype(np.int64), norm[perm],
                                        perm.astype(np.int64), Z.shape[1], prow, k, window, K.chunk_bounds(len(prow)))
    return perm[prow], np.where(idx >= 0, perm[np.maximum(idx, 0)], -1), sim


def cosine_knn_graph(Z, n_neighbors=20, algorithm="auto", window=WINDOW):
    """Symmetric ("or", max-weight) kNN graph of cosine similarity between
    the rows of ``Z`` (dense or sparse, e.g. observed tags). Rows of zeros
    (untagged samples) have no edge. O(n k) memory for the graph.

    ``algorithm``:

    - "brute": scikit-learn's brute-force search, every row against every row, in
      chunks of about 1 GB;
    - "inverted" (non-negative sparse Z only): an inverted index over Z's columns
      (:func:`_kernels.cosine_knn_rows`); exact, a row costs the summed lengths of its
      columns' postings, so the whole graph costs sum over columns of their frequency
      squared: quadratic in n for a fixed vocabulary;
    - "window" (non-negative sparse Z only): approximate and linear in n
      (:func:`_kernels.cosine_knn_window_rows`): a column with more than ``window``
      postings is scanned only over the ``window`` rows nearest the query in
      :func:`window_order`; similarities of the neighbours found are exact;
    - "auto": "brute" below ``INVERTED_FROM`` rows or for dense or signed Z;
      "inverted" while its postings cost at most ``EXACT_POSTINGS_PER_ROW`` per row;
      "window" beyond (the nuswide profile: from about 130,000 samples).

    Ties: the index searches order rows tied in similarity by a hash of the pair, so
    samples with identical tags do not all name the same neighbours; "brute" keeps the
    studies' measured results below ``INVERTED_FROM``. On the nuswide profile (1000
    tags, ~4.8 per sample) the brute search took 63 s and ~1.5 GB at 100,000 samples;
    at 1,000,000 the exact index would take about 25 minutes on 2 cores and the window
    (256) took 17 s, keeping 96.7 % of the exact 20 best neighbours' similarity (97.2 %
    at 300,000; 99.7 % on Corel5k's tags).
    """
    if algorithm not in COSINE_ALGORITHMS:
        raise ValueError(f"algorithm must be one of {COSINE_ALGORITHMS}, got {algorithm!r}")
    if int(window) < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    sparse_in = sp.issparse(Z)
    source, Z = Z, sp.csr_matrix(Z, dtype=np.float64)
    if not Z.has_canonical_format:  # summed and sorted once, in a copy: not in the caller's arrays
        Z = unshared(Z, source)
        Z.sum_duplicates()
    n = Z.shape[0]
    k = int(n_neighbors)
    if k < 1:
        raise ValueError(f"n_neighbors must be >= 1, got {n_neighbors}")
    rows = np.flatnonzero(np.diff(Z.indptr) > 0)
    if len(rows) < 2:
        return sp.csr_matrix((n, n))
    kk = min(k, len(rows) - 1)
    nonneg = Z.nnz == 0 or Z.data.min() >= 0
    if algorithm in ("inverted", "window") and not nonneg:
        raise ValueError(f"algorithm={algorithm!r} needs non-negative Z (its similarities are summed over "
                         "shared columns)")
    if algorithm == "auto" and sparse_in and nonneg and n >= INVERTED_FROM:
        freq = np.bincount(Z.indices, minlength=Z.shape[1]).astype(np.float64)  # postings per column
        algorithm = "inverted" if (freq ** 2).sum() <= EXACT_POSTINGS_PER_ROW * len(rows) else "window"
    if algorithm in ("inverted", "window"):
        norm = np.sqrt(np.asarray(Z.multiply(Z).sum(axis=1)).ravel())
        ip, ix = Z.indptr.astype(np.int64), Z.indices.astype(np.int64)
        if algorithm == "inverted":
            C = Z.tocsc()
            C.sort_indices()
            idx, sim = K.cosine_knn_rows(ip, ix, Z.data, C.indptr.astype(np.int64), C.indices.astype(np.int64),
                                         C.data, norm, rows.astype(np.int64), kk, K.chunk_bounds(len(rows)))
        else:
            rows, idx, sim = _window_knn(Z, norm, kk, int(window))
        keep = idx >= 0
        return symmetric_graph(np.repeat(rows, kk)[keep.ravel()], idx[keep], sim[keep], n)
    return symmetric_graph(*_brute_cosine_edges(Z, rows, kk), n)


def _brute_cosine_edges(Z, rows, kk):
    """The out-edges (src, dst, cosine) of ``rows`` of Z to their ``kk`` most cosine-similar
    other rows, by scikit-learn's brute search for kk + 1 (itself among them). The row
    itself is dropped, or, where a duplicate row took its place among the kk + 1, the last
    of them: kk neighbours each (a row with duplicates used to keep kk + 1)."""
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=kk + 1, metric="cosine", algorithm="brute").fit(Z[rows])
    dist, idx = nn.kneighbors(Z[rows])
    sim = 1.0 - dist
    own = idx == np.arange(len(rows))[:, None]
    own[~own.any(axis=1), -1] = True
    src = np.repeat(rows, kk + 1)
    dst = rows[idx.ravel()]
    keep = ~own.ravel() & (sim.ravel() > 1e-12)
    return src[keep], dst[keep], sim.ravel()[keep]


def normalized_graph(W, dtype=np.float64):
    """D^-1/2 W D^-1/2 of a symmetric graph (rows with no edge stay empty), so
    graphs on different scales (forest co-leaf fractions, cosines) can be
    summed with weights that mean what they say. Computed in double precision;
    ``dtype`` is that of the result (float32: each entry rounded once)."""
    W = sp.csr_matrix(W, dtype=np.float64)
    deg = np.asarray(W.sum(axis=1)).ravel()
    inv = np.divide(1.0, np.sqrt(deg), out=np.zeros_like(deg), where=deg > 0)
    # w_ij / sqrt(d_i d_j) entry by entry: the same float for (i, j) and (j, i)
    data = np.empty(W.nnz, np.dtype(dtype))
    G.scale_entries(W.indptr, W.indices, W.data, inv, data)
    return sp.csr_matrix((data, W.indices.copy(), W.indptr.copy()), shape=W.shape)
