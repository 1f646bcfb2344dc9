"""kNN lists and graphs from an affinity: the leaf k-NN of a forest (``leaf_knn``, on this
machine or on a Dask cluster's workers) and the kNN graph of any affinity matrix
(``knn_affinity``)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_int, unshared
from ..executors import executor_for
from ..primitives.parallel import chunk_bounds
from . import _kernels as K
from .graph import symmetric_graph
from .leaf import _check_leaves, _compact, _leaf_ids


def leaf_knn(leaves, n_neighbors=20, query_leaves=None, self_index=None):
    """The ``n_neighbors`` samples with highest leaf affinity to each sample.

    A sample is never its own neighbour. ``query_leaves`` (q, T): other
    samples' leaves (-1 = skip that tree for that query); ``self_index``
    (q,): the training index of each query, excluded from its neighbours
    (default: none for external queries). Neighbours tied in affinity are
    ordered by a hash of (training index, neighbour) for a training sample, and
    of (its leaves, neighbour) for an external query: an external query's
    neighbours depend on its leaves alone, not on its row among the queries
    (identical queries get identical lists). Returns ``(idx, w)``, both
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
    return K.knn_rows(q, members, offsets, n, self_index, n_neighbors, chunk_bounds(q.shape[0]))


def _knn_shared(shared, a, b, k):
    """The leaf k-NN of training rows a..b-1 (``shared``: leaves, members, offsets)."""
    leaves, members, offsets = shared.arrays
    return K.knn_rows(leaves[a:b], members, offsets, leaves.shape[0], np.arange(a, b, dtype=np.int64), k,
                      chunk_bounds(b - a))


def knn_affinity(A, n_neighbors=20):
    """Keep each row's ``n_neighbors`` largest off-diagonal affinities, then
    symmetrise by the element-wise maximum ("or" kNN graph). Equal affinities
    are ordered by a hash of the pair (row, column), as in ``leaf_knn``.

    ``A`` may be sparse or dense (n, n) and non-negative.
    """
    source = A
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
    if not A.has_canonical_format:  # summed and sorted in a copy: not in the caller's arrays
        A = unshared(A, source)
        A.sum_duplicates()
    # each row's k largest off the diagonal, equal ones ordered by a hash of (row, column), as
    # the kernels' kNN rows order them (by the lower column, the first samples became hubs);
    # one pass a row in numba: a lexsort of every entry was most of ClustRF's fit on tags
    rows, cols, vals = K.csr_top_k(A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data, k)
    return symmetric_graph(rows, cols, vals, n)
