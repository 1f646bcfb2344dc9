"""The numba split search agrees with the slow reference (tests/_reference.py)."""
import numpy as np
import pytest
import scipy.sparse as sp
from _reference import reference_best_split

from hmlkit.forest import _grow, _keys, _split
from hmlkit.forest._tagdata import build_tag_arrays


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


def _kernel(X, Y, layers, pos, neg, use_soft, features, min_leaf, S=None, ignore_untagged=False):
    tags = build_tag_arrays(sp.csr_matrix(Y), layers, (pos, neg) if use_soft else None, ignore_untagged)
    S = np.arange(X.shape[0]) if S is None else S
    return _split.best_split_over(X, *_keys.feature_keys(X), S.astype(np.int64), np.asarray(features, np.int64), *tags.kernel_args(),
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


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", ["flat", "layered", "soft"])
def test_split_search_with_untagged_unknown_matches_reference(seed, mode):
    """untagged="unknown": a sample with no tag in a hard layer has no mass
    (the sides' sizes for the Gini count only labelled samples), on nodes
    where 40 % of the samples have no tag at all."""
    n_layers = 1 if mode == "flat" else 3
    X, Y, layers, pos, neg = _case(200 + seed, n=int(25 + 7 * seed), d=6, m=7, n_layers=n_layers, untagged=0.4)
    use_soft = mode == "soft"
    features = np.arange(X.shape[1])
    min_leaf = 1 + seed % 3
    f, t, g, k = _kernel(X, Y, layers, pos, neg, use_soft, features, min_leaf, ignore_untagged=True)
    rf, rt, rg, rk = reference_best_split(X, np.arange(X.shape[0]), features, Y, layers, pos, neg, use_soft,
                                          min_leaf, ignore_untagged=True)
    assert (k, f) == (rk, rf)
    assert np.float32(t) == np.float32(rt)
    assert g == pytest.approx(rg, rel=1e-9, abs=1e-12)


def test_untagged_unknown_is_not_a_class():
    """Feature 0 separates tag a from tag b; feature 1 separates the tagged
    samples from the untagged ones. The paper's hard Gini (untagged =
    negative of every tag) prefers cutting off the untagged; as unknowns
    they carry no mass and the a/b cut wins."""
    n = 80
    x0 = np.r_[np.zeros(10), np.ones(10), np.zeros(30), np.ones(30)]
    x1 = np.r_[np.zeros(20), np.ones(60)]
    X = np.c_[x0, x1].astype(np.float32)
    Y = np.zeros((n, 2), np.uint8)
    Y[:10, 0] = 1
    Y[10:20, 1] = 1  # samples 20..79 untagged
    layers = [np.arange(2)]
    empty = np.zeros((n, 2), np.float32)
    f_neg, *_ = _kernel(X, Y, layers, empty, empty, False, [0, 1], 3, ignore_untagged=False)
    f_unk, *_ = _kernel(X, Y, layers, empty, empty, False, [0, 1], 3, ignore_untagged=True)
    assert f_neg == 1
    assert f_unk == 0


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


def _sparse_features(rng, n, d, where):
    """Features whose most frequent value (the mode, whose samples the sweeps
    skip) is the smallest, a middle or the largest value: ReLU-like, a
    zero-heavy five-level grid, or minus ReLU."""
    Z = rng.normal(size=(n, d))
    if where == "bottom":
        X = np.maximum(Z - 0.8, 0)
    elif where == "middle":
        X = np.where(rng.random((n, d)) < 0.6, 0.0, rng.integers(-2, 3, (n, d)))
    else:
        X = -np.maximum(Z - 0.8, 0)
    return X.astype(np.float32)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("where", ["bottom", "middle", "top"])
@pytest.mark.parametrize("mode", ["flat", "soft"])
def test_split_search_matches_reference_on_sparse_features(seed, where, mode):
    """Most samples share one value (as in CNN or bag-of-words features):
    the sweeps go forward below it and backward above it; the best cut,
    threshold and gain are still the reference's, on the whole set and on
    a random node where the mode may be rare or absent."""
    rng = np.random.default_rng(200 + seed)
    n_layers = 1 if mode == "flat" else 2
    _, Y, layers, pos, neg = _case(300 + seed, n=70, d=5, m=6, n_layers=n_layers)
    X = _sparse_features(rng, 70, 5, where)
    X[:, 4] = np.where(rng.random(70) < 0.9, 1.5, X[:, 4])  # 90 % at one value
    features = np.arange(5)
    for S in (np.arange(70), np.sort(rng.choice(70, 30, replace=False))):
        min_leaf = 1 + seed % 3
        f, t, g, k = _kernel(X, Y, layers, pos, neg, mode == "soft", features, min_leaf, S)
        rf, rt, rg, rk = reference_best_split(X, S, features, Y, layers, pos, neg, mode == "soft", min_leaf)
        assert (k, f) == (rk, rf)
        assert np.float32(t) == np.float32(rt)
        assert g == pytest.approx(rg, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("use_soft", [False, True])
def test_skipping_the_mode_grows_the_same_tree(use_soft):
    """The sweeps never visit the samples at a feature's mode (a cut inside
    them is a tie); a tree grown so equals one grown with nothing skipped
    (a mode rank no sample has: one forward sweep over the whole node)."""
    rng = np.random.default_rng(11)
    n = 400
    X = _sparse_features(rng, n, 8, "bottom")
    X[:, 4:] = _sparse_features(rng, n, 4, "middle")
    _, Y, layers, pos, neg = _case(12, n=n, d=2, m=8, n_layers=2, untagged=0.3)
    tags = build_tag_arrays(sp.csr_matrix(Y), layers, (pos, neg) if use_soft else None)
    R, mode_rank, mode_val, Rh, high = _keys.feature_keys(X)
    assert (mode_rank > 0).any() and (mode_rank == 0).any()  # modes at the bottom and inside
    out = []
    for mr in (mode_rank, np.full_like(mode_rank, np.iinfo(np.uint32).max)):
        leaf = np.full(n, -1, np.int32)
        out.append(_grow.grow_tree(X, R, mr, mode_val, Rh, high, *_keys.sparse_keys(R, mr, Rh, high),
                                      np.arange(n, dtype=np.int64), *tags.kernel_args(), 3, 3, np.array([7], np.uint64),
                                      leaf) + (leaf,))
    assert out[0][5] > 10
    for a, b in zip(out[0], out[1]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("side", ["above", "below"])
@pytest.mark.parametrize("mode", ["flat", "soft"])
def test_no_cut_inside_equal_values_on_either_side_of_the_mode(side, mode):
    """Ten samples at the mode 0 (tag A); six at 1 (the first five A, the
    last B) and four at 2 (B). Cutting inside the run of 1s could separate A
    from B perfectly, but samples with equal values cannot be split: the cut
    is 0 | 1 or 1 | 2, as the reference finds. Mirrored for a run below the
    mode, and with the node's samples in reverse order."""
    x = np.array([0.0] * 10 + [1.0] * 6 + [2.0] * 4, np.float32)
    Y = np.zeros((20, 3), np.uint8)
    Y[:15, 0] = 1  # A
    Y[15:, 1] = 1  # B
    Y[:, 2] = 1  # a second-layer tag every sample has, so that soft mode has a layer below
    Y[[2, 17], :2] = 0  # two samples missing in the first layer (soft in soft mode)
    X = (x if side == "above" else -x)[:, None]
    layers = [np.array([0, 1]), np.array([2])]
    pos = np.full((20, 3), 0.5, np.float32)
    neg = np.full((20, 3), 0.5, np.float32)
    for S in (np.arange(20), np.arange(20)[::-1].copy()):
        f, t, g, k = _kernel(X, Y, layers, pos, neg, mode == "soft", [0], 1, S)
        rf, rt, rg, rk = reference_best_split(X, S, [0], Y, layers, pos, neg, mode == "soft", 1)
        assert (f, k) == (rf, rk) == (0, 0)
        legal = (0.5, 1.5) if side == "above" else (-0.5, -1.5)
        assert t in legal and np.float32(t) == np.float32(rt)
        assert g == pytest.approx(rg, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("mode", ["flat", "soft"])
def test_equal_gains_either_side_of_the_mode_take_the_leftmost_cut(mode):
    """-1 (tag A) x4, the mode 0 (tag B) x10, 1 (tag A) x4: the cuts -1 | 0
    (forward sweep) and 0 | 1 (backward sweep) have the same gain; the
    leftmost wins, as in one left-to-right sweep and in the reference."""
    X = np.array([-1.0] * 4 + [0.0] * 10 + [1.0] * 4, np.float32)[:, None]
    Y = np.zeros((18, 3), np.uint8)
    Y[:4, 0] = Y[14:, 0] = 1
    Y[4:14, 1] = 1
    Y[:, 2] = 1
    Y[[0, 17, 8], :2] = 0  # symmetric soft samples
    layers = [np.array([0, 1]), np.array([2])]
    half = np.full((18, 3), 0.5, np.float32)
    f, t, g, k = _kernel(X, Y, layers, half, half, mode == "soft", [0], 1)
    rf, rt, rg, rk = reference_best_split(X, np.arange(18), [0], Y, layers, half, half, mode == "soft", 1)
    assert (f, k, t) == (0, 0, -0.5) and np.float32(rt) == np.float32(t)
    assert g == pytest.approx(rg, rel=1e-9, abs=1e-12)


def test_feature_keys_mode_is_the_most_frequent_value():
    X = np.array([[0, 3], [1, 3], [0, 2], [2, 2], [0, 1]], np.float32)
    R, mode_rank, mode_val, _, _ = _keys.feature_keys(X)
    np.testing.assert_array_equal(mode_rank, [0, 1])  # feature 1: 2 and 3 tie, the smaller rank wins
    np.testing.assert_array_equal(mode_val, [0.0, 2.0])


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


@pytest.mark.parametrize("N, span", [(10, 5), (10, 5000), (20, 100000), (100, 50), (100, 5000), (400, 100000), (300, 40),
                                     (3000, 2000), (3000, 10**6), (3000, 2**31)])
def test_sort_keys_every_branch_orders_the_keys(N, span):
    """Counting sort (small key range) and LSD radix (the rest; insertion sort and the
    packed radix sort are ``sort_node_keys``'s, tested below) return the stable order of the keys."""
    rng = np.random.default_rng(N + span)
    cap = 4096
    keys = np.zeros(cap, np.uint32)
    keys[:N] = 7 + rng.integers(0, span, N, dtype=np.int64).astype(np.uint32)
    order = np.empty(cap, np.int64)
    tmp = np.empty(cap, np.int64)
    cnt = np.zeros(cap + 1, np.int64)
    out = _keys._sort_keys(keys, N, keys[:N].min(), keys[:N].max(), order, tmp, cnt)[:N]
    assert sorted(out.tolist()) == list(range(N))
    assert np.all(np.diff(keys[out].astype(np.int64)) >= 0)
    # stable: equal keys keep their gathered order (the soft sweep's float sums depend on it)
    assert np.array_equal(out, np.argsort(keys[:N], kind="stable"))


@pytest.mark.parametrize("N, span", [(1, 1), (10, 5), (10, 5000), (20, 100000), (32, 10**6), (33, 10**6), (100, 50),
                                     (100, 5000), (400, 100000), (512, 2**32 - 8), (30, 2**32 - 8), (300, 40),
                                     (3000, 2000), (3000, 10**6), (3000, 2**31)])
def test_sort_node_keys_gives_positions_and_keys_in_stable_key_order(N, span):
    from hmlkit.forest._keys import sort_node_keys

    rng = np.random.default_rng(N + span)
    cap = 4096
    keys = np.zeros(cap, np.uint32)
    keys[:N] = 7 + rng.integers(0, span, N, dtype=np.int64).astype(np.uint32)
    keys[: N // 3] = keys[N // 3: 2 * (N // 3)]  # ties
    cpos = np.sort(rng.choice(10 * cap, cap, replace=False)).astype(np.int64)  # ascending, as gathered
    order, tmp = np.empty(cap, np.int64), np.empty(cap, np.int64)
    cnt = np.zeros(cap + 1, np.int64)
    pos, skey = np.full(cap, -1, np.int64), np.zeros(cap, np.uint32)
    sort_node_keys(keys, cpos, N, keys[:N].min(), keys[:N].max(), order, tmp, cnt, pos, skey)
    ref = np.argsort(keys[:N], kind="stable")
    np.testing.assert_array_equal(pos[:N], cpos[ref])
    np.testing.assert_array_equal(skey[:N], keys[ref])


def test_dense_ranks_match_scipy_and_both_key_widths_grow_the_same_tree():
    """dense_ranks is scipy's dense ranking minus one, stored as uint16 up to
    65536 samples (uint32 beyond); a tree grown on uint32 keys is the same."""
    from scipy.stats import rankdata

    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(300, 6)), 1).astype(np.float32)  # many ties
    R = _keys.dense_ranks(X)
    assert R.dtype == np.uint16 and R.shape == (6, 300)
    for f in range(6):
        np.testing.assert_array_equal(R[f], rankdata(X[:, f], method="dense") - 1)
    Y = (rng.random((300, 5)) < 0.3).astype(np.uint8)
    tags = build_tag_arrays(sp.csr_matrix(Y), [np.arange(2), np.arange(2, 5)])
    out = []
    _, mode_rank, mode_val, Rh, high = _keys.feature_keys(X)
    for keys in (R, R.astype(np.uint32)):
        leaf = np.full(300, -1, np.int32)
        out.append(_grow.grow_tree(X, keys, mode_rank, mode_val, Rh, high, *_keys.sparse_keys(keys, mode_rank, Rh, high),
                                      np.arange(300, dtype=np.int64),
                                      *tags.kernel_args(), 3, 2, np.array([99], np.uint64), leaf))
    for a, b in zip(out[0][:5], out[1][:5]):
        np.testing.assert_array_equal(a, b)


def _wide_case(seed=6, n=600, d=10):
    """Features with up to a few hundred distinct values (and a mode at 0), tags in two layers."""
    rng = np.random.default_rng(seed)
    X = np.where(rng.random((n, d)) < 0.4, 0.0, np.round(rng.normal(size=(n, d)) * (1 + np.arange(d)) ** 2 * 0.5))
    Y = (rng.random((n, 6)) < 0.3).astype(np.uint8)
    return X.astype(np.float32), build_tag_arrays(sp.csr_matrix(Y), [np.arange(2), np.arange(2, 6)])


@pytest.mark.parametrize("narrow", [70, 150])
def test_wide_features_keep_their_ranks_in_two_halves_and_grow_the_same_tree(narrow):
    """A feature with ``narrow`` or more distinct values keeps its ranks' low 16 bits in R
    and their high ones in Rh (here: few enough such features); the ranks, and a tree
    grown on them (exact nodes, subsampled ones, local key blocks), are those of whole
    uint32 ranks."""
    from scipy.stats import rankdata

    X, tags = _wide_case()
    n, d = X.shape
    R, mode_rank, mode_val, Rh, high = _keys.feature_keys(X, narrow=narrow)
    top = np.array([rankdata(X[:, f], method="dense").max() - 1 for f in range(d)])
    wide = top >= narrow
    assert 0 < wide.sum() <= d // 2
    np.testing.assert_array_equal(high >= 0, wide)
    assert R.dtype == np.uint16 and R.shape == (d, n) and Rh.shape == (wide.sum(), n)
    whole = _keys.dense_ranks(X).astype(np.uint32)
    np.testing.assert_array_equal(R, whole.astype(np.uint16))
    np.testing.assert_array_equal(Rh, whole[wide] >> 16)
    R32 = whole.copy()
    R32[wide] = (whole[wide] & 0xFFFF) + (2 << 16)  # high halves that are not all 0 ...
    Rh2 = np.full_like(Rh, 2)  # ... held in Rh and put back by the gather
    mode32 = np.where(wide, (mode_rank & 0xFFFF) + (2 << 16), mode_rank).astype(np.uint32)
    no_high = np.full(d, -1, np.int64)
    for split_sample, local in ((0, 0), (200, 0), (0, 64)):
        grown = []
        for keys in ((R, mode_rank, mode_val, Rh, high),
                     (whole, mode_rank, mode_val, Rh[:0], no_high),
                     (R32.astype(np.uint32), mode32, mode_val, Rh[:0], no_high),
                     (R, mode32, mode_val, Rh2, high)):
            leaf = np.full(n, -1, np.int32)
            grown.append(_grow.grow_tree(X, *keys, *_keys.sparse_keys(keys[0], keys[1], keys[3], keys[4]),
                                            np.arange(n, dtype=np.int64), *tags.kernel_args(), 3, 4,
                                            np.array([11], np.uint64), leaf, split_sample, local) + (leaf,))
        assert grown[0][5] > 20
        for other in grown[1:]:
            for a, b in zip(grown[0], other):
                np.testing.assert_array_equal(a, b)


def test_mostly_wide_features_take_whole_uint32_ranks():
    X, _ = _wide_case()
    R, mode_rank, mode_val, Rh, high = _keys.feature_keys(X, narrow=2)
    assert R.dtype == np.uint32 and Rh.shape[0] == 0 and (high == -1).all()
    np.testing.assert_array_equal(R, _keys.dense_ranks(X))
    R16, mode16, val16, _, _ = _keys.feature_keys(X)
    assert R16.dtype == np.uint16
    np.testing.assert_array_equal(R, R16)
    np.testing.assert_array_equal(mode_rank, mode16)
    np.testing.assert_array_equal(mode_val, val16)


def test_wide_features_missed_by_the_probe_still_take_uint32_ranks():
    """The probe (32 features spread over X) sees half of them wide, but with the features
    it left out, most are: R is uint32, with the ranks of every feature whole."""
    rng = np.random.default_rng(8)
    n, d = 300, 40
    probe = np.unique(np.linspace(0, d - 1, 32).astype(np.int64))
    wide = np.setdiff1d(np.arange(d), probe)
    wide = np.concatenate([wide, probe[:16]])
    X = rng.integers(0, 10, (n, d)).astype(np.float32)
    X[:, wide] = rng.normal(size=(n, wide.size)).astype(np.float32)
    R, mode_rank, mode_val, Rh, high = _keys.feature_keys(X, narrow=100)
    assert 2 * wide.size > d and R.dtype == np.uint32 and Rh.shape[0] == 0 and (high == -1).all()
    np.testing.assert_array_equal(R, _keys.dense_ranks(X))
    R16 = _keys.feature_keys(X)[0]
    assert R16.dtype == np.uint16
    np.testing.assert_array_equal(R, R16)
