"""The cosine kNN graph of the rows of a matrix (e.g. observed tags): brute force, an exact
inverted index, or the windowed search, linear in n; kernels in ``_cosine``."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import unshared
from ..primitives.parallel import chunk_bounds
from . import _cosine as CK
from .graph import symmetric_graph

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
    idx, sim = CK.cosine_knn_window_rows(P.indptr.astype(np.int64), P.indices.astype(np.int64), P.data,
                                        C.indptr.astype(np.int64), C.indices.astype(np.int64), norm[perm],
                                        perm.astype(np.int64), Z.shape[1], prow, k, window, chunk_bounds(len(prow)))
    return perm[prow], np.where(idx >= 0, perm[np.maximum(idx, 0)], -1), sim


def cosine_knn_graph(Z, n_neighbors=20, algorithm="auto", window=WINDOW):
    """Symmetric ("or", max-weight) kNN graph of cosine similarity between
    the rows of ``Z`` (dense or sparse, e.g. observed tags). Rows of zeros
    (untagged samples) have no edge. O(n k) memory for the graph.

    ``algorithm``:

    - "brute": scikit-learn's brute-force search, every row against every row, in
      chunks of about 1 GB;
    - "inverted" (non-negative sparse Z only): an inverted index over Z's columns
      (:func:`_cosine.cosine_knn_rows`); exact, a row costs the summed lengths of its
      columns' postings, so the whole graph costs sum over columns of their frequency
      squared: quadratic in n for a fixed vocabulary;
    - "window" (non-negative sparse Z only): approximate and linear in n
      (:func:`_cosine.cosine_knn_window_rows`): a column with more than ``window``
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
            idx, sim = CK.cosine_knn_rows(ip, ix, Z.data, C.indptr.astype(np.int64), C.indices.astype(np.int64),
                                         C.data, norm, rows.astype(np.int64), kk, chunk_bounds(len(rows)))
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
