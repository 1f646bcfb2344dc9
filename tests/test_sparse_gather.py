"""The sparse gather (``search_node``): a feature with few samples off its mode is gathered
from its list of those samples (``sparse_keys``) on nodes much larger than the list. The
keys, their order and the key range are those of the whole gather, so the trees must be
the same bits with the lists and without them; and when local subtrees pay (``local_size_for``)."""
import numpy as np
import pytest
import scipy.sparse as sp

from hmlkit import HMLForest
from hmlkit.forest import _grow, _keys
from hmlkit.forest._split import SPARSE_GATHER
from hmlkit.forest._tagdata import build_tag_arrays
from hmlkit.tags import soft_tag_confidences


def test_sparse_keys_lists_the_samples_off_each_sparse_features_mode():
    n = 64
    X = np.zeros((n, 4), np.float32)
    X[[3, 10, 40], 0] = 1.0  # binary, 3 off the mode 0
    X[[5, 6], 1] = -2.0  # off the mode below it
    X[:, 2] = np.arange(n)  # dense: every value once, no list
    X[:, 3] = 7.0
    X[[0, 63], 3] = [8.0, 6.0]  # a mode inside the range, one off either side
    R, mode_rank, _, Rh, high = _keys.feature_keys(X)
    sp_start, sp_len, sp_idx = _keys.sparse_keys(R, mode_rank, Rh, high)
    assert sp_len.tolist() == [3, 2, -1, 2]
    lists = [sp_idx[sp_start[f]:sp_start[f] + sp_len[f]].tolist() for f in (0, 1, 3)]
    assert lists == [[3, 10, 40], [5, 6], [0, 63]]
    assert sp_idx.dtype == np.int32 and sp_idx.size == 7


def test_sparse_keys_list_up_to_an_eighth_of_the_samples_off_the_mode():
    n = 5000
    X = np.zeros((n, 3), np.float32)
    X[:625, 0] = 1.0  # n / 8 off the mode: listed
    X[:626, 1] = 1.0  # one more: gathered whole
    X[::2, 2] = np.arange(n // 2) + 1.0  # half the samples off it, the count given up early
    R, mode_rank, _, Rh, high = _keys.feature_keys(X)
    sp_start, sp_len, sp_idx = _keys.sparse_keys(R, mode_rank, Rh, high)
    assert sp_len.tolist() == [625, -1, -1]
    assert sp_idx.tolist() == list(range(625))


def test_sparse_keys_read_the_high_halves_of_wide_features():
    rng = np.random.default_rng(3)
    n = 400
    X = np.zeros((n, 2), np.float32)
    off = rng.choice(n, 30, replace=False)
    X[off, 0] = rng.permutation(30) + 1  # 31 distinct values: wide at narrow=8
    X[:, 1] = rng.random(n) < 0.05
    R, mode_rank, _, Rh, high = _keys.feature_keys(X, narrow=8)
    assert high[0] >= 0  # the key needs its high half
    sp_start, sp_len, sp_idx = _keys.sparse_keys(R, mode_rank, Rh, high)
    assert sp_idx[sp_start[0]:sp_start[0] + sp_len[0]].tolist() == sorted(off.tolist())
    assert sp_idx[sp_start[1]:sp_start[1] + sp_len[1]].tolist() == np.flatnonzero(X[:, 1]).tolist()


def _sparse_case(seed, n=900, d=24, m=12):
    """Bag-of-words-like features (a few per cent non-zero, counts, a signed one, a mode that
    is not 0) and tags in two layers."""
    rng = np.random.default_rng(seed)
    X = np.where(rng.random((n, d)) < rng.uniform(0.005, 0.12, d), rng.integers(1, 4, (n, d)), 0).astype(np.float32)
    X[rng.random(n) < 0.04, 0] = -1.0
    X[:, 1] = np.where(rng.random(n) < 0.05, 2.5, 1.0)  # the mode is 1
    X[rng.random(n) < 0.5, 2] = -0.0  # both zeros are one key
    X[:, 3] = rng.normal(size=n)  # a dense feature among them
    Y = (rng.random((n, m)) < 0.15).astype(np.uint8)
    Y[np.arange(n), rng.integers(0, m, n)] = 1
    return X, Y, [np.arange(4), np.arange(4, m)]


def _grow_tree(X, Y, layers, lists, samples=None, soft=True, split_sample=0, local_size=0, seed=5, min_leaf=1):
    tags = build_tag_arrays(sp.csr_matrix(Y), layers, soft_tag_confidences(sp.csr_matrix(Y), layers) if soft else None)
    keys = _keys.split_keys(X)
    if not lists:  # every feature gathered whole
        keys = keys[:6] + (np.full(X.shape[1], -1, np.int64), keys[7])
    n = X.shape[0]
    samples = np.arange(n, dtype=np.int64) if samples is None else samples.copy()
    leaf = np.full(n, -1, np.int32)
    out = _grow.grow_tree(X, *keys, samples, *tags.kernel_args(), min_leaf, 5, np.array([seed], np.uint64), leaf,
                          split_sample, local_size)
    return out + (leaf,)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("soft", [True, False])
def test_same_tree_with_the_lists_and_without(seed, soft):
    X, Y, layers = _sparse_case(seed)
    keys = _keys.split_keys(X)
    assert (keys[6] >= 0).sum() >= 20 and keys[6][3] == -1  # the case lists most features
    # nodes large enough to take the lists: they must be used
    assert np.median(keys[6][keys[6] >= 0]) * SPARSE_GATHER < X.shape[0]
    for split_sample, local_size in ((0, 0), (300, 0), (0, 60)):
        a = _grow_tree(X, Y, layers, True, soft=soft, split_sample=split_sample, local_size=local_size, seed=seed)
        b = _grow_tree(X, Y, layers, False, soft=soft, split_sample=split_sample, local_size=local_size, seed=seed)
        assert a[5] > 30
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def test_same_tree_on_a_subset_and_on_a_bootstrap_draw():
    X, Y, layers = _sparse_case(7)
    rng = np.random.default_rng(7)
    subset = np.sort(rng.choice(X.shape[0], 600, replace=False)).astype(np.int64)
    boot = np.sort(rng.integers(0, X.shape[0], X.shape[0])).astype(np.int64)  # duplicates: no lists
    for samples in (subset, boot):
        a = _grow_tree(X, Y, layers, True, samples=samples, min_leaf=3)
        b = _grow_tree(X, Y, layers, False, samples=samples, min_leaf=3)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def test_forest_on_sparse_words_same_for_any_number_of_jobs():
    X, Y, layers = _sparse_case(4, n=600)
    fits = [HMLForest(n_estimators=6, min_samples_leaf=2, random_state=0, n_jobs=j).fit(X, Y, layers) for j in (1, 2)]
    for name in ("feature_", "threshold_", "children_left_", "train_leaves_"):
        np.testing.assert_array_equal(getattr(fits[0], name), getattr(fits[1], name))


def test_local_subtrees_only_where_the_samples_lie_far_apart():
    # the block size by the features alone, as before
    assert _grow.local_size_for(512) == 512
    assert _grow.local_size_for(4096) == 512
    assert _grow.local_size_for(10 ** 6) == 0
    # and no blocks on few samples: Corel5k's, trecvid's, nuswide at 5,000
    for d, n in ((499, 4500), (1000, 2379), (4096, 5000)):
        assert _grow.local_size_for(d, n) == 0
    assert _grow.local_size_for(512, 15_000) == 512
    assert _grow.local_size_for(512, 10 ** 6) == 512
    assert _grow.local_size_for(512, _grow.LOCAL_SPREAD * 512 - 1) == 0
