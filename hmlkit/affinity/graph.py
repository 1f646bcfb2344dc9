"""Sparse symmetric graphs: the one kNN-graph builder of the kit (max of S and its transpose,
from edges or from kNN lists) and the normalisation D^-1/2 W D^-1/2 that lets graphs of
different scales be summed; their kernels are in ``_graph``."""
from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from .._pages import release_after
from . import _graph as G


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
