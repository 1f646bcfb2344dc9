"""HMLForest as an estimator: determinism, apply, affinity, bad input."""
import numpy as np
import pytest
import scipy.sparse as sp

from hmlkit import HMLForest
from hmlkit.affinity import _kernels as K
from hmlkit.affinity import (
    knn_affinity,
    knn_graph_from_neighbors,
    leaf_affinity,
    leaf_knn,
)
from hmlkit.affinity.leaf import _compact
from hmlkit.primitives.topk import tie_keys


def _blobs(n=120, seed=0, d=8, untagged=0.2):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    X = rng.normal(size=(n, d)).astype(np.float32)
    X[:, 0] += 3 * g
    Y = np.zeros((n, 7), np.uint8)
    Y[np.arange(n), g] = 1  # abstract layer: one tag per group
    Y[np.arange(n), 3 + (g + rng.integers(0, 2, n)) % 4] = 1  # specific tags shared across groups
    Y[rng.random(n) < untagged] = 0
    return X, Y, [np.arange(3), np.arange(3, 7)], g


def _knn_reference(i, cols, aff, k):
    """Positions of the k largest of ``aff`` (sample i's affinities to ``cols``), i itself
    left out, equal ones in the order of the pair's tie key (as the kNN kernels order them)."""
    cols = np.asarray(cols, np.int64)
    keep = np.flatnonzero(cols != i)
    tie = tie_keys(np.full(keep.size, i, np.int64), cols[keep])
    return keep[np.lexsort((tie, -np.asarray(aff)[keep]))[:k]]


def test_same_seed_same_forest_whatever_n_jobs():
    X, Y, layers, _ = _blobs()
    a = HMLForest(n_estimators=12, random_state=7, n_jobs=1).fit(X, Y, layers)
    b = HMLForest(n_estimators=12, random_state=7, n_jobs=2).fit(X, Y, layers)
    np.testing.assert_array_equal(a.train_leaves_, b.train_leaves_)
    np.testing.assert_array_equal(a.feature_, b.feature_)
    np.testing.assert_array_equal(a.threshold_, b.threshold_)
    c = HMLForest(n_estimators=12, random_state=8, n_jobs=2).fit(X, Y, layers)
    assert not np.array_equal(a.feature_, c.feature_)


def test_apply_routes_training_samples_to_their_leaves_and_respects_phi():
    X, Y, layers, _ = _blobs()
    f = HMLForest(n_estimators=5, min_samples_leaf=4, random_state=0).fit(X, Y, layers)
    np.testing.assert_array_equal(f.apply(X), f.train_leaves_)
    for t in range(5):
        sizes = np.bincount(f.train_leaves_[:, t])
        assert sizes.min() >= 4
        assert sizes.size == f.n_leaves_[t]
    new = f.apply(X[:3] + 0.01)
    assert new.shape == (3, 5) and new.dtype == np.int32


def test_leaves_are_pure_in_tags_or_unsplittable():
    """Growth stops only at pure nodes, at phi, or when no cut gains."""
    X, Y, layers, g = _blobs(untagged=0.0)
    X[:, 0] = 10 * g  # groups perfectly separable by feature 0
    f = HMLForest(n_estimators=3, min_samples_leaf=1, max_features=None, random_state=0).fit(X, Y, layers)
    for t in range(3):
        for leaf in np.unique(f.train_leaves_[:, t]):
            members = f.train_leaves_[:, t] == leaf
            assert len(np.unique(g[members])) == 1  # abstract layer pure


def test_affinity_matches_bruteforce_and_knn_excludes_self():
    X, Y, layers, _ = _blobs(n=60)
    f = HMLForest(n_estimators=9, random_state=1).fit(X, Y, layers)
    L = f.train_leaves_
    brute = (L[:, None, :] == L[None, :, :]).mean(axis=2)
    A = f.affinity()
    assert sp.issparse(A)
    np.testing.assert_allclose(A.toarray(), brute, atol=1e-6)
    idx, w = leaf_knn(L, 5)
    for i in range(60):
        assert i not in idx[i]
        order = _knn_reference(i, np.arange(60), brute[i], 5)
        np.testing.assert_array_equal(idx[i], order)
        np.testing.assert_allclose(w[i], brute[i, order], atol=1e-6)
    # new samples: affinity to the training samples
    Q = f.affinity(X[:4])
    np.testing.assert_allclose(Q.toarray(), brute[:4], atol=1e-6)


@pytest.mark.parametrize("T", [255, 256, 300])
def test_leaf_knn_counts_up_to_every_tree(T):
    """A co-leaf count reaches T when two samples share every leaf, and the lists
    order by count, then by the pair's tie key, as a brute-force count does (around
    256 trees, where a one-byte counter would wrap)."""
    rng = np.random.default_rng(T)
    L = rng.integers(0, 50, size=(200, T))
    L[1] = L[0]  # 0 and 1 share all T leaves
    L[2, : T - 1] = L[0, : T - 1]  # 2 shares T - 1 of them
    L[2, T - 1] = (L[0, T - 1] + 1) % 50
    brute = (L[:, None, :] == L[None, :, :]).sum(axis=2)
    idx, w = leaf_knn(L, 3)
    assert idx[0, 0] == 1 and w[0, 0] == 1.0 and idx[0, 1] == 2 and w[0, 1] == np.float32((T - 1) / T)
    for i in range(200):
        order = _knn_reference(i, np.arange(200), brute[i], 3)
        np.testing.assert_array_equal(idx[i], order)
        np.testing.assert_array_equal(w[i], (brute[i, order] / T).astype(np.float32))


def test_leaf_knn_counts_beyond_uint16_trees():
    # the co-leaf counters are uint16 up to 65535 trees and wider beyond: 70,000 shared
    # leaves must not wrap round (70000 mod 65536 = 4464)
    T = 70_000
    L = np.zeros((4, T), np.int32)
    L[2:, ::2] = 1  # samples 2, 3 share every other tree with 0 and 1, and all with each other
    idx, w = leaf_knn(L, 2)
    np.testing.assert_array_equal(idx[:, 0], [1, 0, 3, 2])
    # the second neighbour: of the two tied at T / 2, the one with the smaller tie key
    for i, (a, b) in enumerate([(2, 3), (2, 3), (0, 1), (0, 1)]):
        ka, kb = tie_keys(np.int64([i, i]), np.int64([a, b]))
        assert idx[i, 1] == (a if ka < kb else b)
    np.testing.assert_array_equal(w, np.float32([[1, 0.5], [1, 0.5], [1, 0.5], [1, 0.5]]))


def test_leaf_knn_rows_beyond_the_hash_table_are_counted_densely():
    """A row's co-leaf neighbours are counted in a hash table of HASH_SLOTS entries, and
    in the dense counter once it has more than HASH_LOAD distinct ones. Rows of both
    kinds, in one call, give the neighbours of the reference (the k largest of Eq. 10's
    affinity, equal ones in the order of their tie keys)."""
    rng = np.random.default_rng(5)
    big = K.HASH_LOAD + 500  # samples 0..big-1 share tree 0's first leaf: dense rows
    n = big + 1500
    L = rng.integers(0, 400, size=(n, 6)).astype(np.int32)
    L[:, 0] = np.where(np.arange(n) < big, 0, 1 + np.arange(n))
    A = leaf_affinity(L).tocsr()
    idx, w = leaf_knn(L, 7)
    for i in (0, 1, big - 1, big, big + 1, n - 1):
        row = A[i]
        want = _knn_reference(i, row.indices, row.data, 7)
        np.testing.assert_array_equal(idx[i], row.indices[want])
        np.testing.assert_allclose(w[i], row.data[want], rtol=1e-6)
    assert (idx >= 0).all()


def test_leaf_knn_ties_do_not_make_the_first_samples_hubs():
    """Equal co-leaf counts are ordered by a hash of the pair, not by the lower index: in one
    leaf of 300 samples every pair ties, and the lowest indices would be every row's k
    neighbours (in-degree 299 for samples 0..4). The same order in the general kNN builder."""
    L = np.zeros((300, 1), np.int32)
    idx, w = leaf_knn(L, 5)
    assert (w == 1).all() and (idx != np.arange(300)[:, None]).all()
    indeg = np.bincount(idx.ravel(), minlength=300)
    assert indeg.max() <= 20 and (indeg[:5] < 20).all()
    ref = knn_affinity(leaf_affinity(L), 5)
    mine = knn_graph_from_neighbors(idx, w, 300)
    assert (ref != mine).nnz == 0


def test_leaf_affinity_accepts_any_leaf_numbering():
    rng = np.random.default_rng(0)
    L = rng.integers(0, 5, size=(30, 4)) * 1000 + 17  # sparse, non-compact ids
    brute = (L[:, None, :] == L[None, :, :]).mean(axis=2)
    np.testing.assert_allclose(leaf_affinity(L).toarray(), brute, atol=1e-6)
    Q = np.vstack([L[:2], np.full((1, 4), 5)])  # the last query shares no leaf
    np.testing.assert_allclose(leaf_affinity(L, Q).toarray(), np.vstack([brute[:2], np.zeros((1, 30))]), atol=1e-6)


@pytest.mark.parametrize("n, T", [(1, 1), (37, 3), (700, 17), (1500, 40)])  # several transpose blocks
def test_leaf_members_lists_each_leafs_samples_whatever_the_numbering(n, T):
    """``leaf_members`` against a plain per-tree listing, on ids with gaps, -1 (not a
    member) and other negatives, across the transpose's row blocks."""
    rng = np.random.default_rng(n + T)
    L = rng.integers(-2, max(1, n // 3), size=(n, T)).astype(np.int32) * 2  # even ids only: gaps
    members, offsets, n_leaves = K.leaf_members(L)
    for t in range(T):
        col = L[:, t]
        assert n_leaves[t] == max(int(col.max()) + 1, 0)
        for leaf in range(int(n_leaves[t])):
            got = members[t, offsets[t, leaf]:offsets[t, leaf + 1]]
            np.testing.assert_array_equal(got, np.flatnonzero(col == leaf))
        assert offsets[t, -1] == (col >= 0).sum()
    np.testing.assert_array_equal(K.transpose_leaves(L), L.T)


@pytest.mark.parametrize("scale", [1, 2, 50])  # ids below n (read as they are) and beyond (renumbered)
def test_leaf_knn_is_the_same_whatever_the_leaf_numbering(scale):
    """Ids with gaps below n go to the kernels as they are, larger ones are renumbered
    first: the neighbours are those of the compact numbering either way."""
    rng = np.random.default_rng(scale)
    n, T = 400, 12
    L = rng.integers(0, 40, size=(n, T)).astype(np.int32)
    L[rng.random(L.shape) < 0.1] = -1
    ref = leaf_knn(_compact(L), 7)
    for got, want in zip(leaf_knn(np.where(L >= 0, L * scale + 3, -1), 7), ref):
        np.testing.assert_array_equal(got, want)
    A = leaf_affinity(np.where(L >= 0, L * scale + 3, -1))
    assert (A != leaf_affinity(_compact(L))).nnz == 0


def _compact_by_unique(leaves, query):
    """The renumbering by sorting each tree's ids (np.unique), the reference of ``_compact``."""
    out, q_out = np.full_like(leaves, -1), np.full_like(query, -1)
    for t in range(leaves.shape[1]):
        uniq, inv = np.unique(leaves[leaves[:, t] >= 0, t], return_inverse=True)
        out[leaves[:, t] >= 0, t] = inv
        for i, v in enumerate(query[:, t]):
            hit = np.flatnonzero(uniq == v)
            q_out[i, t] = hit[0] if v >= 0 and hit.size else -1
    return out, q_out


@pytest.mark.parametrize("spread", [1, 3, 10**6])  # ids below 8n: presence tables; far beyond: sorting
def test_leaf_renumbering_is_uniques_inverse(spread):
    rng = np.random.default_rng(spread)
    for _ in range(20):
        n, T = rng.integers(1, 40), rng.integers(1, 5)
        L = (rng.integers(-1, 2 * n + 1, size=(n, T)) * spread).astype(np.int32)
        L[rng.random(L.shape) < 0.2] = -1
        L[:, 0] = -1 if rng.random() < 0.2 else L[:, 0]  # a tree no sample is a member of
        Q = np.vstack([L[: rng.integers(0, n + 1)], rng.integers(-3, 3 * n * spread + 3, size=(5, T))]).astype(np.int32)
        ref, q_ref = _compact_by_unique(L, Q)
        np.testing.assert_array_equal(_compact(L), ref)
        got, q_got = _compact(L, Q)
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(q_got, q_ref)


def test_knn_affinity_symmetric_topk():
    rng = np.random.default_rng(0)
    A = rng.random((20, 20))
    A = (A + A.T) / 2
    W = knn_affinity(A, 3)
    assert (W != W.T).nnz == 0
    assert W.diagonal().sum() == 0
    for i in range(20):
        row = A[i].copy()
        row[i] = -1
        top = np.argsort(-row)[:3]
        assert set(top) <= set(W[i].indices)


def _knn_affinity_by_lexsort(A, k):
    """The reference: every off-diagonal non-zero sorted by (row, value descending, tie key)."""
    from hmlkit.affinity.graph import symmetric_graph

    A = sp.csr_matrix(A, dtype=np.float64).tolil()
    A.setdiag(0)
    A = A.tocsr()
    A.eliminate_zeros()
    n = A.shape[0]
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    order = np.lexsort((tie_keys(rows.astype(np.int64), A.indices.astype(np.int64)), -A.data, rows))
    rank = np.arange(order.size) - np.repeat(A.indptr[:-1], np.diff(A.indptr))
    keep = order[rank < k]
    return symmetric_graph(rows[keep], A.indices[keep], A.data[keep], n)


@pytest.mark.parametrize("k", [1, 3, 20])
def test_knn_affinity_matches_the_sort_of_every_entry(k):
    """The one-pass top-k keeps the edges, weights and tie order of a full lexsort, on
    dense and sparse input with many ties, explicit zeros, a diagonal and duplicate entries."""
    rng = np.random.default_rng(k)
    n = 120
    D = rng.integers(0, 4, size=(n, n)).astype(float) * (rng.random((n, n)) < 0.3)
    D = D + D.T
    r, c = np.nonzero(rng.random((n, n)) < 0.1)
    dup = sp.coo_matrix((np.ones(r.size), (r, c)), shape=(n, n))
    S = sp.csr_matrix((np.r_[dup.data, dup.data], (np.r_[dup.row, dup.row], np.r_[dup.col, dup.col])), shape=(n, n))
    S.data[::7] = 0.0  # explicit zeros
    for A in (D, sp.csr_matrix(D), S, rng.random((n, n))):
        a, b = knn_affinity(A, k), _knn_affinity_by_lexsort(A, k)
        assert a.nnz == b.nnz and (a != b).nnz == 0
        assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
        assert np.array_equal(a.data, b.data)


def test_knn_affinity_leaves_the_callers_matrix_unchanged():
    """A CSR input with unsorted and repeated columns is summed and sorted in a copy: scipy
    hands a float64 CSR through without one, so doing it in place changed the caller's arrays."""
    # row 0: columns 2, 1, 2 (unsorted, column 2 twice); row 1: 0; row 2: 1, 0
    A = sp.csr_matrix((np.array([1.0, 3.0, 1.5, 3.0, 2.0, 4.0]), np.array([2, 1, 2, 0, 1, 0]),
                       np.array([0, 3, 4, 6])), shape=(3, 3))
    before = [a.copy() for a in (A.data, A.indices, A.indptr)]
    W = knn_affinity(A, 1)
    for a, b in zip((A.data, A.indices, A.indptr), before):
        assert np.array_equal(a, b)
    assert not A.has_sorted_indices
    ref = knn_affinity(A.toarray(), 1)  # the same graph as from the summed dense matrix
    assert (W != ref).nnz == 0
    assert W[0, 1] == 3.0 and W[0, 2] == 4.0  # row 0 keeps column 1 (3.0 > 2.5); row 2 names 0 (4.0)


def test_flat_and_nocorr_variants_differ_from_full():
    # the paper's variants: its hard Gini counts untagged samples as negatives
    X, Y, layers, _ = _blobs(untagged=0.4)
    kw = dict(n_estimators=6, random_state=0, untagged="negative")
    full = HMLForest(**kw).fit(X, Y, layers)
    flat = HMLForest(hierarchy=False, **kw).fit(X, Y, layers)
    nocorr = HMLForest(correlations=False, **kw).fit(X, Y, layers)
    assert len(flat.layers_) == 1
    assert not np.array_equal(full.train_leaves_, flat.train_leaves_)
    assert not np.array_equal(full.train_leaves_, nocorr.train_leaves_)


def test_untagged_samples_and_single_sample():
    X, Y, layers, _ = _blobs()
    Y[:] = 0  # no tags at all: every layer pure, each tree a single leaf
    f = HMLForest(n_estimators=3, random_state=0).fit(X, Y, layers)
    assert (f.n_leaves_ == 1).all()
    one = HMLForest(n_estimators=2, random_state=0).fit(X[:1], np.ones((1, 7)), layers)
    assert one.train_leaves_.shape == (1, 2)
    assert one.affinity().toarray().tolist() == [[1.0]]


def test_bootstrap_option():
    X, Y, layers, _ = _blobs()
    f = HMLForest(n_estimators=4, bootstrap=True, random_state=0).fit(X, Y, layers)
    np.testing.assert_array_equal(f.train_leaves_, f.apply(X))


@pytest.mark.parametrize("hierarchy", [True, False])
def test_bootstrap_duplicates_grow_the_tree_of_repeated_rows(hierarchy):
    """A bootstrap sample drawing a sample several times grows the same tree
    as the data with those rows physically repeated (duplicates bring their
    tags once per draw; the node buffers are sized for it)."""
    from hmlkit.forest import _grow, _keys, _split
    from hmlkit.forest._tagdata import build_tag_arrays

    X, Y, layers, _ = _blobs(n=60, seed=3, untagged=0.1)
    Y[:5] = 1  # heavily tagged samples, drawn many times below
    layers = layers if hierarchy else [np.arange(7)]
    rng = np.random.default_rng(0)
    bag = np.sort(np.concatenate([np.repeat(np.arange(5), 12), rng.integers(0, 60, 60)])).astype(np.int64)
    out = []
    for Xs, Ys, samples in ((X, Y, bag.copy()), (X[bag], Y[bag], np.arange(len(bag), dtype=np.int64))):
        tags = build_tag_arrays(sp.csr_matrix(Ys), layers)
        assert _split.tag_entries(samples, tags.ly_indptr) == Ys[samples].sum()
        leaf = np.full(len(Xs), -1, np.int32)
        state = np.array([12345], np.uint64)
        out.append(_grow.grow_tree(Xs, *_keys.split_keys(Xs), samples, *tags.kernel_args(), 1, 3, state, leaf))
    for a, b in zip(out[0][:5], out[1][:5]):
        np.testing.assert_array_equal(a, b)
    assert out[0][5] == out[1][5] > 1


@pytest.mark.parametrize(
    "mutate, msg",
    [
        (lambda X, Y, l: (np.where(np.arange(X.size).reshape(X.shape) == 5, np.nan, X), Y, l), "NaN or inf"),
        (lambda X, Y, l: (np.where(np.arange(X.size).reshape(X.shape) == 5, np.inf, X), Y, l), "NaN or inf"),
        (lambda X, Y, l: (X, Y[:-1], l), "rows but X has"),
        (lambda X, Y, l: (X, Y * 2, l), "only 0/1"),
        (lambda X, Y, l: (X[:, :, None], Y, l), "2-D"),
        (lambda X, Y, l: (X, Y, [np.arange(3), np.array([3, 4, 5, 6, 99])]), "unknown tag"),
        (lambda X, Y, l: (X, Y, [np.arange(4), np.arange(3, 7)]), "overlap"),
        (lambda X, Y, l: (X, Y, [np.arange(3), np.arange(3, 6)]), "do not cover"),
        (lambda X, Y, l: (X[:0], Y[:0], l), "at least 1"),
    ],
)
def test_bad_input(mutate, msg):
    X, Y, layers, _ = _blobs(n=30)
    Xb, Yb, lb = mutate(X, Y, layers)
    with pytest.raises(ValueError, match=msg):
        HMLForest(n_estimators=2).fit(Xb, Yb, lb)


@pytest.mark.parametrize("param", [dict(n_estimators=0), dict(min_samples_leaf=0), dict(max_features="cube"),
                                   dict(max_features=0), dict(n_jobs=0)])
def test_bad_parameters(param):
    X, Y, layers, _ = _blobs(n=30)
    with pytest.raises(ValueError):
        HMLForest(**param).fit(X, Y, layers)


def test_apply_checks_features_and_fitted():
    X, Y, layers, _ = _blobs(n=30)
    with pytest.raises(ValueError, match="not fitted"):
        HMLForest().apply(X)
    f = HMLForest(n_estimators=2).fit(X, Y, layers)
    with pytest.raises(ValueError, match="features"):
        f.apply(X[:, :3])


def test_same_seed_same_forest_compiled_or_loaded_from_numba_cache(tmp_path):
    """A fresh process that compiles the kernels and one that loads them from
    numba's cache grow the same forest. With a compiler-reassociated
    (fastmath) soft-gain sum the two broke near-ties differently: tree 3
    of this fit differed on every try."""
    import os
    import subprocess
    import sys

    code = ("import sys, numpy as np\n"
            "from hmlkit import HMLForest\n"
            "from hmlkit.data import make_synthetic\n"
            "from hmlkit.tags import estimate_layers\n"
            "d = make_synthetic('nuswide', n_samples=4000, random_state=0)\n"
            "layers = estimate_layers(d.Y, n_layers=2, random_state=0)\n"
            "f = HMLForest(n_estimators=4, random_state=0, n_jobs=1).fit(d.X, d.Y, layers)\n"
            "np.savez(sys.argv[1], leaves=f.train_leaves_, feature=f.feature_, threshold=f.threshold_)\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba_cache"), "OMP_NUM_THREADS": "1"}
    runs = []
    for i in range(2):  # the first run compiles and fills the cache, the second loads it
        out = tmp_path / f"run{i}.npz"
        subprocess.run([sys.executable, "-c", code, str(out)], env=env, check=True, capture_output=True)
        runs.append(np.load(out))
    assert any((tmp_path / "numba_cache").rglob("*.nbc"))
    for key in ("leaves", "feature", "threshold"):
        np.testing.assert_array_equal(runs[0][key], runs[1][key])


def test_knn_affinity_of_leaf_affinity_is_the_kernels_knn_graph():
    """One kNN graph: the general builder on Eq. 10's affinity gives the graph the
    kernels build from the leaves directly (same top-k, same ties, same weights)."""
    rng = np.random.default_rng(3)
    leaves = rng.integers(0, 6, size=(150, 10))
    for k in (1, 5, 20):
        a = knn_affinity(leaf_affinity(leaves), k)
        b = knn_graph_from_neighbors(*leaf_knn(leaves, k), 150)
        assert (a != b).nnz == 0 and a.nnz == b.nnz


def test_apply_agrees_with_a_plain_walk_of_the_tree_arrays():
    """apply() routes blocks of samples in lockstep through a packed node table; a
    one-sample-at-a-time walk of the public arrays gives the same leaves, for new
    samples off the training values, ties at thresholds and a row count that is not a
    multiple of the block."""
    X, Y, layers, _ = _blobs(n=150)
    f = HMLForest(n_estimators=7, random_state=2, split_sample=40).fit(X, Y, layers)
    rng = np.random.default_rng(1)
    new = np.vstack([X[:37] + rng.normal(scale=0.5, size=(37, X.shape[1])).astype(np.float32),
                     np.tile(f.threshold_[f.children_left_ >= 0][:3, None], (1, X.shape[1]))])
    want = np.empty((new.shape[0], 7), np.int32)
    for t in range(7):
        base = f.node_offset_[t]
        for i, x in enumerate(new):
            node = 0
            while f.children_left_[base + node] != -1:
                go_left = x[f.feature_[base + node]] < f.threshold_[base + node]
                node = f.children_left_[base + node] if go_left else f.children_right_[base + node]
            want[i, t] = f.leaf_id_[base + node]
    np.testing.assert_array_equal(f.apply(new), want)


def _walk_leaves(f, X):
    """Every sample's leaf in every tree by a level-by-level numpy walk of the public
    arrays (the reference for ``apply`` on many samples)."""
    out = np.empty((X.shape[0], f.n_estimators), np.int32)
    for t in range(f.n_estimators):
        base = f.node_offset_[t]
        node = np.zeros(X.shape[0], np.int64)
        while True:
            at = np.flatnonzero(f.children_left_[base + node] != -1)
            if at.size == 0:
                break
            k = base + node[at]
            go_left = X[at, f.feature_[k]] < f.threshold_[k]
            node[at] = np.where(go_left, f.children_left_[k], f.children_right_[k])
        out[:, t] = f.leaf_id_[base + node]
    return out


@pytest.mark.parametrize("n_estimators", [1, 2, 5, 6, 9])
def test_apply_gives_each_sample_its_leaves_whatever_the_routing_order(n_estimators):
    """apply() routes the trees after the first in the order of the samples' first-tree
    leaf, in many blocks and chunks of blocks: every sample still gets its own leaves
    (checked against a plain walk on 8,999 new samples: not a multiple of the block,
    more blocks than chunks), and the result does not depend on the samples'
    order. Forests of fewer than 6 trees route the samples in their own order."""
    X, Y, layers, _ = _blobs(n=400, d=6)
    f = HMLForest(n_estimators=n_estimators, random_state=3, min_samples_leaf=1).fit(X, Y, layers)
    rng = np.random.default_rng(4)
    new = (X[rng.integers(0, 400, 8_999)] + rng.normal(scale=0.3, size=(8_999, 6))).astype(np.float32)
    got = f.apply(new)
    np.testing.assert_array_equal(got, _walk_leaves(f, new))
    perm = rng.permutation(new.shape[0])
    np.testing.assert_array_equal(f.apply(new[perm]), got[perm])
