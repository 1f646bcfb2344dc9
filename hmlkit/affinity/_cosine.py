"""Numba kernels of the cosine kNN graph of sparse rows (``cosine``): the exact search over an
inverted index of the columns, and the windowed search; equal similarities ordered by a hash
of the pair (``primitives.topk``)."""
from __future__ import annotations

import numba as nb
import numpy as np

from ..primitives.topk import push_top, tie_key


@nb.njit(parallel=True, cache=True)
def cosine_knn_rows(indptr, indices, data, cptr, crow, cval, norm, rows, k, bounds):
    """The k rows of a sparse non-negative matrix Z most cosine-similar to each of
    ``rows``, by an inverted index: a row's dot products are accumulated over the
    postings (``cptr``/``crow``/``cval``: Z in CSC) of its own non-zeros only, so a row
    costs the summed lengths of its columns' postings, not n. ``norm``: the rows'
    Euclidean norms. Ties are broken by a hash of (row, candidate) (:func:`tie_key`), so
    rows with identical tags spread their edges instead of all naming the same lowest
    indices (which would make those samples hubs); a row is never its own neighbour
    and a similarity of at most 1e-12 is no edge. Returns ``idx`` (len(rows), k) int64
    (-1 pads) and ``w`` (len(rows), k) float64."""
    n = indptr.shape[0] - 1
    nq = rows.shape[0]
    idx = np.full((nq, k), -1, np.int64)
    w = np.zeros((nq, k), np.float64)
    for c in nb.prange(bounds.shape[0] - 1):
        tie = np.zeros(k, np.uint64)
        acc = np.zeros(n, np.float64)
        seen = np.zeros(n, np.bool_)
        touched = np.empty(n, np.int64)
        for q in range(bounds[c], bounds[c + 1]):
            i = rows[q]
            nt = 0
            for p in range(indptr[i], indptr[i + 1]):
                t = indices[p]
                v = data[p]
                for a in range(cptr[t], cptr[t + 1]):
                    j = crow[a]
                    if not seen[j]:
                        seen[j] = True
                        touched[nt] = j
                        nt += 1
                    acc[j] += v * cval[a]
            # best k by (similarity descending, tie key ascending), kept sorted in idx/w
            m = 0
            for a in range(nt):
                j = touched[a]
                s = acc[j] / (norm[i] * norm[j])
                acc[j] = 0.0
                seen[j] = False
                if j == i or s <= 1e-12:
                    continue
                m = push_top(w[q], idx[q], tie, m, s, j, tie_key(i, j))
    return idx, w


@nb.njit(parallel=True, cache=True)
def cosine_knn_window_rows(indptr, indices, data, cptr, crow, norm, ids, n_cols, rows, k, window, bounds):
    """Approximate :func:`cosine_knn_rows`, linear in n: a column with more than
    ``window`` postings is scanned only over the ``window`` postings nearest the query's
    own index, so a row costs at most ``window`` candidates per non-zero whatever n.
    The rows must come in an order that puts rows sharing their most frequent
    columns next to each other (``window_order``), which also keeps a window's rows
    near each other in memory; a column of at most ``window`` postings is scanned
    whole. Every candidate's similarity is exact (its own row's dot product
    with the query, not a sum over the postings scanned), so an approximate graph
    misses neighbours but never misweighs an edge. ``ids``: the rows' numbers in the
    caller's order, for the tie key, so ties fall as in :func:`cosine_knn_rows`;
    padding as there."""
    n = indptr.shape[0] - 1
    nq = rows.shape[0]
    idx = np.full((nq, k), -1, np.int64)
    w = np.zeros((nq, k), np.float64)
    for c in nb.prange(bounds.shape[0] - 1):
        tie = np.zeros(k, np.uint64)
        mark = np.zeros(n_cols, np.float64)
        seen = np.zeros(n, np.bool_)
        touched = np.empty(n, np.int64)
        for q in range(bounds[c], bounds[c + 1]):
            i = rows[q]
            for p in range(indptr[i], indptr[i + 1]):
                mark[indices[p]] = data[p]
            nt = 0
            for p in range(indptr[i], indptr[i + 1]):
                t = indices[p]
                a0 = cptr[t]
                a1 = cptr[t + 1]
                if a1 - a0 > window:  # the window around the query's rank
                    lo = a0 + np.searchsorted(crow[a0:a1], i) - window // 2
                    lo = min(max(lo, a0), a1 - window)
                    a0, a1 = lo, lo + window
                for a in range(a0, a1):
                    j = crow[a]
                    if not seen[j]:
                        seen[j] = True
                        touched[nt] = j
                        nt += 1
            m = 0
            for a in range(nt):
                j = touched[a]
                seen[j] = False
                if j == i:
                    continue
                dot = 0.0
                for b in range(indptr[j], indptr[j + 1]):
                    dot += mark[indices[b]] * data[b]
                s = dot / (norm[i] * norm[j])
                if s <= 1e-12:
                    continue
                m = push_top(w[q], idx[q], tie, m, s, j, tie_key(ids[i], ids[j]))
            for p in range(indptr[i], indptr[i + 1]):
                mark[indices[p]] = 0.0
    return idx, w
