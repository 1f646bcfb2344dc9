"""The numba split search agrees with the slow reference (tests/_reference.py)."""
import numpy as np
import pytest
import scipy.sparse as sp

from hmlkit.forest import _builder
from hmlkit.forest._tagdata import build_tag_arrays

from _reference import reference_best_split


def _case(seed, n, d, m, n_layers, density=0.25, untagged=0.2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    Y = (rng.random((n, m)) < density).astype(np.uint8)
    Y[rng.random(n) < untagged] = 0
    cuts = np.sort(rng.choice(np.arange(1, m), n_layers - 1, replace=False)) if n_layers > 1 else []
    perm = rng.permutation(m)
    layers = [np.sort(a) for a in np.split(perm, cuts)]
    pos = rng.random((n, m)).astype(np.float32)
    neg = rng.random((n, m)).astype(np.float32)
    pos[rng.random((n, m)) < 0.3] = 0
    return X, Y, layers, pos, neg


def _kernel(X, Y, layers, pos, neg, use_soft, features, min_leaf, S=None):
    tags = build_tag_arrays(sp.csr_matrix(Y), layers, (pos, neg) if use_soft else None)
    S = np.arange(X.shape[0]) if S is None else S
    return _builder.best_split_over(X, _builder.dense_ranks(X), S.astype(np.int64), np.asarray(features, np.int64), *tags.kernel_args(),
                                    min_leaf)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", ["flat", "layered", "soft"])
def test_split_search_matches_reference(seed, mode):
    n_layers = 1 if mode == "flat" else 3
    X, Y, layers, pos, neg = _case(seed, n=int(25 + 7 * seed), d=6, m=7, n_layers=n_layers)
    use_soft = mode == "soft"
    rng = np.random.default_rng(100 + seed)
    features = rng.choice(X.shape[1], 4, replace=False)
    min_leaf = 1 + seed % 3
    f, t, g, k = _kernel(X, Y, layers, pos, neg, use_soft, features, min_leaf)
    rf, rt, rg, rk = reference_best_split(X, np.arange(X.shape[0]), features, Y, layers, pos, neg, use_soft, min_leaf)
    assert k == rk
    assert f == rf
    assert np.float32(t) == np.float32(rt)
    assert g == pytest.approx(rg, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("mode", ["flat", "soft"])
def test_split_search_matches_reference_with_many_tags_per_sample(seed, mode):
    """Dense tags: most samples have more tags than the sweep's fixed slots
    (SLOTS_MAX), so the overflow path is exercised too."""
    from hmlkit.forest._criterion import SLOTS_MAX

    n_layers = 1 if mode == "flat" else 2
    X, Y, layers, pos, neg = _case(50 + seed, n=60, d=5, m=4 * SLOTS_MAX, n_layers=n_layers, density=0.6,
                                   untagged=0.1)
    assert (Y.sum(1) > SLOTS_MAX).mean() > 0.5
    features = np.arange(X.shape[1])
    f, t, g, k = _kernel(X, Y, layers, pos, neg, mode == "soft", features, 2)
    rf, rt, rg, rk = reference_best_split(X, np.arange(X.shape[0]), features, Y, layers, pos, neg, mode == "soft", 2)
    assert (k, f) == (rk, rf)
    assert np.float32(t) == np.float32(rt)
    assert g == pytest.approx(rg, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("lsz", [5, 8, 9, 37, 70])
def test_soft_split_search_matches_reference_for_wide_layers(lsz):
    """Soft gains over a first layer of many tags: the sweep's fixed-order
    sum folds the per-tag terms in halves (64 -> 32 -> 16 -> 8 for 37 or 70
    tags), including sizes that are not powers of two."""
    rng = np.random.default_rng(lsz)
    n, m = 80, lsz + 6
    X = rng.normal(size=(n, 4)).astype(np.float32)
    Y = (rng.random((n, m)) < 0.08).astype(np.uint8)
    Y[rng.random(n) < 0.4, :lsz] = 0  # samples missing in the first layer: soft
    layers = [np.arange(lsz), np.arange(lsz, m)]
    pos = rng.random((n, m)).astype(np.float32)
    neg = rng.random((n, m)).astype(np.float32)
    features = np.arange(4)
    f, t, g, k = _kernel(X, Y, layers, pos, neg, True, features, 2)
    rf, rt, rg, rk = reference_best_split(X, np.arange(n), features, Y, layers, pos, neg, True, 2)
    assert (k, f) == (0, rf) and rk == 0
    assert np.float32(t) == np.float32(rt)
    assert g == pytest.approx(rg, rel=1e-9, abs=1e-12)


def test_soft_tags_change_the_split():
    """Soft tags must matter: the same data gives another gain with them."""
    X, Y, layers, pos, neg = _case(3, n=60, d=5, m=6, n_layers=2, untagged=0.5)
    feats = np.arange(5)
    hard = _kernel(X, Y, layers, pos, neg, False, feats, 2)
    soft = _kernel(X, Y, layers, pos, neg, True, feats, 2)
    assert hard[2] != pytest.approx(soft[2])


def test_node_subset_and_layer_targeting():
    """On a node where the abstract layer is pure, the next layer is the target."""
    rng = np.random.default_rng(0)
    n = 40
    X = rng.normal(size=(n, 3)).astype(np.float32)
    Y = np.zeros((n, 4), np.uint8)
    Y[:, 0] = 1  # abstract tag: everyone has it -> layer 0 pure
    Y[: n // 2, 2] = 1
    X[: n // 2, 1] -= 5  # feature 1 separates the layer-1 tag perfectly
    layers = [np.array([0, 1]), np.array([2, 3])]
    f, t, g, k = _kernel(X, Y, layers, np.zeros((n, 4), np.float32), np.zeros((n, 4), np.float32), False,
                         [0, 1, 2], 3)
    assert k == 1 and f == 1
    assert g == pytest.approx(0.5)  # psi(S) = 2 * 0.5 * 0.5 for tag 2, children pure


def test_all_layers_pure_gives_no_split():
    X = np.random.default_rng(0).normal(size=(20, 3)).astype(np.float32)
    Y = np.zeros((20, 3), np.uint8)
    Y[:, 1] = 1
    f, t, g, k = _kernel(X, Y, [np.array([0, 1, 2])], np.zeros((20, 3), np.float32), np.zeros((20, 3), np.float32),
                         False, [0, 1, 2], 3)
    assert f == -1 and k == -1


def test_min_samples_leaf_respected():
    X = np.arange(10, dtype=np.float32)[:, None]
    Y = np.zeros((10, 1), np.uint8)
    Y[0] = 1  # the best cut isolates sample 0, which phi=3 forbids
    z = np.zeros((10, 1), np.float32)
    f, t, g, k = _kernel(X, Y, [np.array([0])], z, z, False, [0], 3)
    assert f == 0 and t == pytest.approx(2.5)
    f1, t1, g1, _ = _kernel(X, Y, [np.array([0])], z, z, False, [0], 1)
    assert t1 == pytest.approx(0.5) and g1 > g


@pytest.mark.parametrize("N, span", [(10, 5), (10, 5000), (20, 100000), (100, 50), (100, 5000), (400, 100000),
                                     (3000, 2000), (3000, 10**6), (3000, 2**31)])
def test_sort_keys_every_branch_orders_the_keys(N, span):
    """Counting sort (small key range), insertion sort (tiny nodes), quicksort
    (mid-size) and LSD radix (large nodes) all return an order of the keys."""
    rng = np.random.default_rng(N + span)
    cap = 4096
    keys = np.zeros(cap, np.uint32)
    keys[:N] = 7 + rng.integers(0, span, N, dtype=np.int64).astype(np.uint32)
    order = np.empty(cap, np.int64)
    tmp = np.empty(cap, np.int64)
    cnt = np.zeros(cap + 1, np.int64)
    out = _builder._sort_keys(keys, N, keys[:N].min(), keys[:N].max(), order, tmp, cnt)[:N]
    assert sorted(out.tolist()) == list(range(N))
    assert np.all(np.diff(keys[out].astype(np.int64)) >= 0)


def test_dense_ranks_match_scipy_and_both_key_widths_grow_the_same_tree():
    """dense_ranks is scipy's dense ranking minus one, stored as uint16 up to
    65536 samples (uint32 beyond); a tree grown on uint32 keys is the same."""
    from scipy.stats import rankdata

    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(300, 6)), 1).astype(np.float32)  # many ties
    R = _builder.dense_ranks(X)
    assert R.dtype == np.uint16 and R.shape == (6, 300)
    for f in range(6):
        np.testing.assert_array_equal(R[f], rankdata(X[:, f], method="dense") - 1)
    Y = (rng.random((300, 5)) < 0.3).astype(np.uint8)
    tags = build_tag_arrays(sp.csr_matrix(Y), [np.arange(2), np.arange(2, 5)])
    out = []
    for keys in (R, R.astype(np.uint32)):
        leaf = np.full(300, -1, np.int32)
        out.append(_builder.grow_tree(X, keys, np.arange(300, dtype=np.int64), *tags.kernel_args(), 3, 2,
                                      np.array([99], np.uint64), leaf))
    for a, b in zip(out[0][:5], out[1][:5]):
        np.testing.assert_array_equal(a, b)
