"""The symmetric kNN graph builder (``affinity.symmetric_graph``): the matrix
scipy's ``W.maximum(W.T)`` gives, built in cache-friendly passes."""
import numpy as np
import pytest
import scipy.sparse as sp

from hmlkit.affinity import knn_graph_from_neighbors, symmetric_graph
from hmlkit.affinity import _graph


def _scipy(rows, cols, w, n):
    W = sp.csr_matrix((np.asarray(w, dtype=np.float64), (rows, cols)), shape=(n, n))
    return W.maximum(W.T).tocsr()


def _same(a, b):
    a, b = a.tocsr(), b.tocsr()
    a.sort_indices()
    b.sort_indices()
    assert a.shape == b.shape
    assert np.array_equal(a.indptr, b.indptr)
    assert np.array_equal(a.indices, b.indices)
    np.testing.assert_allclose(a.data, b.data, rtol=0, atol=1e-12)


def test_hand_made_graph():
    # 0->1 (0.5), 1->0 (0.9): max 0.9 both ways; 2->0 only: mirrored; 1->2 twice: summed
    g = symmetric_graph([0, 1, 2, 1, 1], [1, 0, 0, 2, 2], [0.5, 0.9, 0.3, 0.1, 0.2], 4)
    expect = np.array([[0, 0.9, 0.3, 0], [0.9, 0, 0.3, 0], [0.3, 0.3, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_allclose(g.toarray(), expect, atol=1e-15)
    assert g.has_sorted_indices or np.all(np.diff(g.indices[g.indptr[0]:g.indptr[1]]) > 0)


@pytest.mark.parametrize("n, E, ordered", [(1, 0, True), (7, 30, False), (60, 500, True), (3000, 40000, False),
                                           (5000, 60000, True), (300, 20000, False)])
def test_matches_scipy_maximum(n, E, ordered):
    """Random edge lists with duplicates, zero and negative weights (an absent edge is
    0, so max(-w, absent) is not stored), rows in order or not, multi-bucket sizes."""
    rng = np.random.default_rng(n + E)
    rows = rng.integers(0, n, E)
    if ordered:
        rows = np.sort(rows)
    cols = rng.integers(0, n, E)
    w = rng.random(E)
    w[::7] = 0.0
    w[::11] *= -1.0
    _same(symmetric_graph(rows, cols, w, n), _scipy(rows, cols, w, n))


def test_knn_lists_graph_is_symmetric_and_matches_scipy():
    rng = np.random.default_rng(3)
    n, k = 2000, 10
    idx = rng.integers(0, n, (n, k)).astype(np.int32)
    idx[::13, -3:] = -1  # padded rows (fewer neighbours)
    w = rng.random((n, k)).astype(np.float32)
    g = knn_graph_from_neighbors(idx, w, n)
    assert abs(g - g.T).max() == 0
    mask = idx >= 0
    rows = np.repeat(np.arange(n), k)[mask.ravel()]
    _same(g, _scipy(rows, idx[mask], w[mask], n))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n, q, k", [(1, 1, 1), (9, 9, 3), (700, 500, 40), (40000, 40000, 8), (70000, 65000, 5)])
def test_knn_lists_with_repeats_zeros_negatives_and_padding_match_scipy(dtype, n, q, k):
    """The lists' kernel against scipy in both weight types (float32: (w, i) packed in
    one slot; float64: apart): lists naming a neighbour two or three times (summed, in
    list order, then mirrored), zero and negative weights, padding, fewer lists than
    nodes, lists longer than 32 (sorted by argsort), one bucket or hundreds."""
    rng = np.random.default_rng(n + k)
    idx = rng.integers(0, n, (q, k)).astype(np.int32)
    idx[::5, 0] = idx[::5, -1]  # a neighbour named twice
    idx[::17, : min(3, k)] = idx[::17, :1]  # and three times
    idx[::13, -1] = -1
    w = rng.random((q, k)).astype(dtype)
    w[::7, 0] = 0.0
    w[::11, -1] *= -1.0
    g = knn_graph_from_neighbors(idx, w, n)
    assert g.dtype == np.float64 and g.nnz == g.indices.shape[0] == g.data.shape[0]
    mask = idx >= 0
    _same(g, _scipy(np.repeat(np.arange(q), k)[mask.ravel()], idx[mask], w[mask].astype(np.float64), n))
    assert abs(g - g.T).max() == 0


def test_the_graph_kernels_are_loaded_from_numbas_disk_cache(tmp_path):
    """A kernel numba cannot cache (one reading numba.get_num_threads() inside did so,
    with only a warning) is compiled again in every process: seconds at every start.
    A second process must load every graph kernel the first one compiled."""
    import os
    import subprocess
    import sys

    script = ("import numba, numpy as np\n"
              "from hmlkit.affinity import knn_graph_from_neighbors, symmetric_graph, _graph\n"
              "idx = np.array([[1, 2], [0, 2], [0, -1]], np.int32)\n"
              "knn_graph_from_neighbors(idx, np.ones((3, 2), np.float32), 3)\n"
              "symmetric_graph([0, 1], [1, 2], [1.0, 2.0], 3)\n"
              "d = [v for v in vars(_graph).values() if isinstance(v, numba.core.registry.CPUDispatcher)]\n"
              "print(sum(sum(f.stats.cache_hits.values()) for f in d), sum(sum(f.stats.cache_misses.values()) for f in d))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True,
                           timeout=600).stdout.split() for _ in range(2)]
    assert runs[0][0] == "0" and int(runs[0][1]) >= 2  # the first process compiles them and their callees
    assert runs[1][1] == "0" and int(runs[1][0]) >= 2  # the second loads the two builders, compiling nothing


def test_unused_pages_are_given_back_and_the_rest_kept():
    from hmlkit._pages import release_after, _madvise

    a = np.ones(1 << 22)  # 32 MB
    released = release_after(a, 1000)
    assert np.all(a[:1000] == 1.0)
    if _madvise is None:
        assert released == 0
        pytest.skip("no madvise here: the pages are kept")
    assert released >= a.nbytes - 1000 * 8 - 2 * 4096
    assert a[-1024] == 0.0 and a[len(a) // 2] == 0.0  # an anonymous page given back reads as zeros
    assert release_after(np.ones(100), 1) == 0  # under a megabyte: left alone


def test_group_by_is_a_stable_sort():
    rng = np.random.default_rng(0)
    n, E = 70000, 200000  # 2**17 keys: 256 buckets of 256 keys
    key = rng.integers(0, n, E)
    other = np.arange(E)
    ptr = np.empty(n + 1, np.int64)
    o = np.empty(E, np.int32)
    w = np.empty(E, np.float64)
    _graph._group_by(key, other, other.astype(np.float64), n, ptr, o, w)
    order = np.argsort(key, kind="stable")
    assert np.array_equal(o, order) and np.array_equal(w, order)
    assert np.array_equal(ptr, np.concatenate([[0], np.cumsum(np.bincount(key, minlength=n))]))


@pytest.mark.parametrize("rows, cols, w, msg", [
    ([0, 5], [1, 2], [1.0, 1.0], "rows must be node indices"),
    ([0, 1], [-1, 2], [1.0, 1.0], "cols must be node indices"),
    ([0, 1], [1], [1.0, 1.0], "one length"),
])
def test_bad_edges_are_refused(rows, cols, w, msg):
    with pytest.raises(ValueError, match=msg):
        symmetric_graph(rows, cols, w, 5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normalized_graph_is_numpys_formula_to_the_bit(dtype):
    from hmlkit.affinity import normalized_graph

    A = sp.random(300, 300, density=0.05, random_state=3, dtype=dtype)
    A = (A + A.T).tocsr()
    A[5, :] = 0  # a node with no edge: its row stays empty, no division by zero
    A[:, 5] = 0
    A.eliminate_zeros()
    before = A.copy()
    N = normalized_graph(A)
    W = sp.csr_matrix(A, dtype=np.float64)
    deg = np.asarray(W.sum(axis=1)).ravel()
    inv = np.divide(1.0, np.sqrt(deg), out=np.zeros_like(deg), where=deg > 0)
    rows = np.repeat(np.arange(300), np.diff(W.indptr))
    assert N.dtype == np.float64 and np.array_equal(N.indptr, W.indptr) and np.array_equal(N.indices, W.indices)
    assert np.array_equal(N.data, W.data * (inv[rows] * inv[W.indices]))
    assert (N != N.T).nnz == 0 and N[5].nnz == 0
    assert (A != before).nnz == 0 and A.dtype == dtype  # the input is left as it was
    for a in (A.data, A.indices, A.indptr):  # and shares no array with the result
        assert not any(np.shares_memory(a, b) for b in (N.data, N.indices, N.indptr))


def test_knn_lists_bad_input_is_refused():
    idx = np.array([[1, -1], [0, 2], [1, 0]])
    w = np.ones((3, 2))
    with pytest.raises(ValueError, match="one shape"):
        knn_graph_from_neighbors(idx, w[:, :1], 3)
    with pytest.raises(ValueError, match=r"in \[0, 3\)"):
        knn_graph_from_neighbors(idx + 1, w, 3)
    with pytest.raises(ValueError, match="at most 2 rows"):
        knn_graph_from_neighbors(idx, w, 2)
    with pytest.raises(ValueError, match="integer"):
        knn_graph_from_neighbors(idx.astype(float), w, 3)
    g = knn_graph_from_neighbors(idx[:2], w[:2], 3)  # fewer lists than nodes: the rest have only mirrored edges
    assert g.shape == (3, 3) and g[2, 1] == 1.0 and g[1, 2] == 1.0 and g[2, 0] == 0.0


def test_graph_is_the_same_whatever_the_number_of_threads():
    """The graph kernels run rows and chunks in parallel: one thread or two, the same
    arrays, on kNN lists and on an unordered edge list with duplicate edges (whose
    weights are summed in input order) long enough for several first-pass chunks."""
    import numba

    rng = np.random.default_rng(11)
    n, k, E = 30000, 12, 300000
    idx = rng.integers(0, n, (n, k)).astype(np.int32)
    idx[::7, -2:] = -1
    w = rng.random((n, k)).astype(np.float32)
    rows = rng.integers(0, n, E)
    cols = rng.integers(0, n, E)
    ew = rng.random(E)
    before = numba.get_num_threads()
    out = []
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            # the graph: nnz entries of a room, merged in as many blocks as threads
            indptr, indices, data, nnz = _graph.symmetric_max_knn(idx, w, n, threads)
            out.append(((indptr, indices[:nnz], data[:nnz]), _graph.symmetric_max(rows, cols, ew, n)))
    finally:
        numba.set_num_threads(before)
    for a, b in zip(*out):
        for x, y in zip(a, b):
            assert x.dtype == y.dtype and np.array_equal(x, y)
    _same(knn_graph_from_neighbors(idx, w, n), _scipy(np.repeat(np.arange(n), k)[(idx >= 0).ravel()], idx[idx >= 0],
                                                         w[idx >= 0], n))


def test_float32_lists_give_the_float64_graph_even_with_a_neighbour_named_twice():
    """The kernel keeps float32 weights in float32 scratch: a maximum of them is exact,
    so the graph is the one of the same weights in float64; a list naming a neighbour
    twice has those weights summed in float64, as scipy's sum of duplicates would be
    (0.1f + 0.2f in float32 is off by 7e-9)."""
    idx = np.array([[1, 2], [0, -1], [1, 1]])
    w32 = np.array([[0.1, 0.7], [0.3, 0.0], [0.1, 0.2]], dtype=np.float32)
    rows = np.repeat(np.arange(3), 2)[(idx >= 0).ravel()]
    g = knn_graph_from_neighbors(idx, w32, 3)
    assert g.dtype == np.float64
    _same(g, _scipy(rows, idx[idx >= 0], w32[idx >= 0].astype(np.float64), 3))
    assert g[2, 1] == np.float64(np.float32(0.1)) + np.float64(np.float32(0.2))
    rng = np.random.default_rng(3)
    n, k = 5000, 10
    idx = np.stack([rng.permutation(n)[:k] for _ in range(n)]).astype(np.int32)  # no neighbour twice
    w = rng.random((n, k)).astype(np.float32)
    a, b = knn_graph_from_neighbors(idx, w, n), knn_graph_from_neighbors(idx, w.astype(np.float64), n)
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    assert np.array_equal(a.data, b.data)
