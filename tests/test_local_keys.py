"""Local subtree keys (``grow_tree``'s ``local_size``): a node of at most that many samples
copies its samples' keys into a small feature-major block, read whole row by row from X,
and its subtree searches that block instead of the (d, n) ranks. The keys are the float
bits made order-preserving, which order and tie exactly as the dense ranks: the trees must
be the same bits whatever ``local_size``."""
import numpy as np
import pytest
import scipy.sparse as sp

from hmlkit.data import make_synthetic
from hmlkit.forest import _grow as grow_module
from hmlkit.forest import _keys
from hmlkit.forest._tagdata import build_tag_arrays
from hmlkit.tags import soft_tag_confidences


def _grow(X, Y, layers, local_size, soft=True, ignore_untagged=True, samples=None, split_sample=0, seed=7,
          max_features=3, ranks=None, tally=None):
    """One tree; ``ranks`` "dense" / "sparse": the local blocks hold the rank codes of
    ``sample_keys`` in that layout, None: X's float keys."""
    tags = build_tag_arrays(sp.csr_matrix(Y), layers,
                            soft_tag_confidences(sp.csr_matrix(Y), layers) if soft and len(layers) > 1 else None,
                            ignore_untagged=ignore_untagged)
    n = X.shape[0]
    samples = np.arange(n, dtype=np.int64) if samples is None else samples.copy()
    leaf = np.full(n, -1, np.int32)
    keys = _keys.split_keys(X)
    codes = _keys.sample_keys(keys[0], keys[3], keys[1], sparse=ranks == "sparse") if ranks else None
    if ranks:
        assert codes[0].shape == (X.shape if ranks == "dense" else (0, X.shape[1]))
        assert codes[1].shape == ((n + 1,) if ranks == "sparse" else (0,))
    out = grow_module.grow_tree(X, *keys, samples, *tags.kernel_args(), 3, max_features,
                                np.array([seed], np.uint64), leaf, split_sample, local_size, codes, tally)
    return out, leaf


def _assert_same(a, b):
    for x, y in zip(a[0][:5], b[0][:5]):
        np.testing.assert_array_equal(x, y)
    assert a[0][5] == b[0][5]
    np.testing.assert_array_equal(a[1], b[1])


def _tied_features(n, d, seed):
    """Features with ties, negative values, both zeros and a mode (sparse columns)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    X[:, 0] = np.round(X[:, 0])  # few distinct values
    X[rng.random(n) < 0.6, 1] = 0.0  # a sparse feature: its mode is 0
    X[rng.random(n) < 0.3, 1] = -0.0  # the same value, other bits
    X[:, 2] = -np.abs(X[:, 2])  # negative only
    X[rng.random(n) < 0.5, 3] = -1.5  # a negative mode
    return X


@pytest.mark.parametrize("profile", ["trecvid", "nuswide"])
@pytest.mark.parametrize("local_size", [6, 40, 300, 5000])
def test_same_tree_whatever_local_size(profile, local_size):
    D = make_synthetic(profile, n_samples=700, random_state=1)
    X = np.ascontiguousarray(D.X[:, :40], dtype=np.float32)
    Y = D.Y.toarray()
    layers = [np.asarray(l) for l in D.layers]
    for soft, ignore in ((True, True), (False, False)):
        exact = _grow(X, Y, layers, 0, soft=soft, ignore_untagged=ignore)
        _assert_same(_grow(X, Y, layers, local_size, soft=soft, ignore_untagged=ignore), exact)


@pytest.mark.parametrize("local_size", [8, 64, 1000])
def test_same_tree_with_ties_signed_zeros_and_modes(local_size):
    rng = np.random.default_rng(3)
    n = 500
    X = _tied_features(n, 8, 3)
    Y = (rng.random((n, 6)) < 0.3).astype(np.uint8)
    Y[:, 0] |= (X[:, 0] > 0).astype(np.uint8)
    layers = [np.arange(2), np.arange(2, 6)]
    for mf in (1, 8):
        _assert_same(_grow(X, Y, layers, local_size, max_features=mf), _grow(X, Y, layers, 0, max_features=mf))


def test_same_tree_on_a_bootstrap_draw_and_with_split_sample():
    """Duplicated samples get a row of the block each; nodes above ``split_sample`` search a
    subsample of the global keys, the block starts below it."""
    rng = np.random.default_rng(5)
    n = 800
    X = _tied_features(n, 10, 5)
    Y = (rng.random((n, 7)) < 0.25).astype(np.uint8)
    layers = [np.arange(3), np.arange(3, 7)]
    boot = np.sort(rng.integers(0, n, n)).astype(np.int64)
    _assert_same(_grow(X, Y, layers, 120, samples=boot), _grow(X, Y, layers, 0, samples=boot))
    for ss in (50, 200):
        _assert_same(_grow(X, Y, layers, 400, split_sample=ss), _grow(X, Y, layers, 0, split_sample=ss))


def test_local_keys_order_and_tie_as_the_dense_ranks():
    rng = np.random.default_rng(0)
    X = _tied_features(300, 6, 0)
    X[:7, 4] = [np.inf, -np.inf, 0.0, -0.0, np.float32(1e-45), -np.float32(1e-45), 3.0]
    R = _keys.feature_keys(X)[0].astype(np.int64)
    samples = rng.permutation(300).astype(np.int64)
    L = np.empty((6, 300), np.uint32)
    loc = np.full(300, -1, np.int64)
    _keys.fill_local_keys(X, samples, 0, 300, L, loc)
    np.testing.assert_array_equal(loc, np.arange(300))
    for f in range(6):
        r = R[f, samples]
        k = L[f].astype(np.int64)
        # same order and same ties: comparing any two samples by key or by rank agrees
        np.testing.assert_array_equal(np.sign(k[:, None] - k[None, :]), np.sign(r[:, None] - r[None, :]))
    np.testing.assert_array_equal(_keys.float_keys(X[samples, 1]), L[1])
    # a slice of the samples fills rows from 0, with loc giving each position's row
    _keys.fill_local_keys(X, samples, 100, 140, L, loc)
    np.testing.assert_array_equal(loc[100:140], np.arange(40))
    np.testing.assert_array_equal(L[:, :40], _keys.float_keys(X[samples[100:140]].ravel()).reshape(40, 6).T)


def test_local_keys_fill_whole_and_partial_tiles():
    # tiles of 16 samples x 16 features, here with partial ones on both axes, and a
    # block starting inside the sample list: every key where float_keys puts it
    rng = np.random.default_rng(1)
    for n_feat, n_loc in ((37, 53), (16, 16), (80, 1), (3, 70)):
        X = rng.standard_normal((200, n_feat)).astype(np.float32)
        X[rng.random(X.shape) < 0.3] = 0.0
        samples = rng.permutation(200).astype(np.int64)
        L = np.full((n_feat, 64 + n_loc), 7, np.uint32)
        loc = np.full(200, -1, np.int64)
        _keys.fill_local_keys(X, samples, 9, 9 + n_loc, L, loc)
        want = _keys.float_keys(X[samples[9:9 + n_loc]].ravel()).reshape(n_loc, n_feat).T
        np.testing.assert_array_equal(L[:, :n_loc], want)
        assert (L[:, n_loc:] == 7).all()  # nothing written past the block's samples
        np.testing.assert_array_equal(loc[9:9 + n_loc], np.arange(n_loc))
        assert (loc[:9] == -1).all() and (loc[9 + n_loc:] == -1).all()


def test_default_local_size_is_used_by_the_estimator_and_keeps_its_trees():
    from hmlkit import HMLForest

    D = make_synthetic("trecvid", n_samples=600, random_state=0)
    assert grow_module.local_size_for(D.X.shape[1]) > 0
    a = HMLForest(n_estimators=4, random_state=3).fit(D.X, D.Y, D.layers)
    old = grow_module.LOCAL_BYTES, grow_module.LOCAL_BYTES_MAX
    try:
        grow_module.LOCAL_BYTES = grow_module.LOCAL_BYTES_MAX = 0
        assert grow_module.local_size_for(D.X.shape[1]) == 0
        b = HMLForest(n_estimators=4, random_state=3).fit(D.X, D.Y, D.layers)
    finally:
        grow_module.LOCAL_BYTES, grow_module.LOCAL_BYTES_MAX = old
    for name in ("feature_", "threshold_", "children_left_", "children_right_", "leaf_id_", "train_leaves_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_local_block_size_by_feature_count():
    # 1 MiB of uint32 keys below 512 features; 512 samples up to 4096 features (8 MiB);
    # 8 MiB above; none when 8 MiB holds fewer than 16 samples
    assert [grow_module.local_size_for(d) for d in (100, 512, 1000, 4096, 16384, 10**6)] == [2621, 512, 512, 512, 128, 0]


def _few_values(n, seed):
    """Hand-made features of few distinct values, all with ties: 2 levels, 3 levels with a
    mode, integers 0..4, both zeros against a negative, one constant, a sparse 0/1 column."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, 7), np.float32)
    X[:, 0] = rng.integers(0, 2, n)
    X[:, 1] = rng.choice(np.array([-1.0, 0.5, 2.0], np.float32), n, p=[0.2, 0.6, 0.2])
    X[:, 2] = rng.integers(0, 5, n)
    X[:, 3] = rng.choice(np.array([0.0, -0.0, -3.0], np.float32), n)
    X[:, 4] = 1.25
    X[:, 5] = rng.random(n) < 0.05
    X[:, 6] = np.round(rng.normal(size=n), 1)
    return X


@pytest.mark.parametrize("local_size", [6, 40, 1000])
def test_rank_codes_give_the_same_trees_as_float_keys(local_size):
    """The local blocks of rank codes (uint16 dense ranks copied from the sample-major ranks)
    order and tie as X's float keys: the same trees, thresholds' bits included, on features
    of few distinct values with ties, a constant one and signed zeros, exact, on a bootstrap
    draw and with a split subsample; and the same tally of gathers and nodes, the blocks'
    bytes halved."""
    rng = np.random.default_rng(11)
    n = 600
    X = _few_values(n, 11)
    Y = (rng.random((n, 6)) < 0.2).astype(np.uint8)
    Y[:, 0] |= (X[:, 2] > 2).astype(np.uint8)
    Y[:, 3] |= (X[:, 1] < 0).astype(np.uint8)
    layers = [np.arange(2), np.arange(2, 6)]
    boot = np.sort(rng.integers(0, n, n)).astype(np.int64)
    for kw in ({"max_features": 1}, {"max_features": 7}, {"samples": boot}, {"split_sample": 100},
               {"soft": False, "ignore_untagged": False}):
        floats = _grow(X, Y, layers, local_size, **kw)
        for ranks in ("dense", "sparse"):
            _assert_same(_grow(X, Y, layers, local_size, ranks=ranks, **kw), floats)
        _assert_same(floats, _grow(X, Y, layers, 0, **kw))
    from hmlkit.forest._split import TALLY_FILL_READ, TALLY_FILL_WRITE, TALLY_L, TALLY_R, TALLY_SEARCHES, TALLY_SIZE

    t_f, t_r = np.zeros(TALLY_SIZE, np.int64), np.zeros(TALLY_SIZE, np.int64)
    _grow(X, Y, layers, local_size, tally=t_f)
    _grow(X, Y, layers, local_size, ranks="dense", tally=t_r)
    assert t_f[TALLY_SEARCHES] == t_r[TALLY_SEARCHES] > 0
    assert t_f[TALLY_R:TALLY_R + 4].tolist() == t_r[TALLY_R:TALLY_R + 4].tolist()
    assert t_f[TALLY_L + 3] == t_r[TALLY_L + 3] > 0  # the same features gathered from the blocks
    assert t_f[TALLY_L] == 2 * t_r[TALLY_L]  # 4-byte float keys against 2-byte ranks
    assert t_f[TALLY_FILL_READ] == 2 * t_r[TALLY_FILL_READ] > 0
    assert t_f[TALLY_FILL_WRITE] == 2 * t_r[TALLY_FILL_WRITE]


def test_sample_keys_and_fill_local_ranks():
    """The dense rank codes are R transposed (uint16), the sparse ones each sample's keys off
    their feature's mode; none when a feature is wide; a block filled from either holds each
    sample's ranks, in the node's order."""
    X = _few_values(300, 2)
    R, mode_rank, _, Rh, high = _keys.feature_keys(X)
    S, S_ptr, S_ent = _keys.sample_keys(R, Rh, mode_rank, sparse=False)
    assert S.dtype == np.uint16 and S.flags.c_contiguous and S_ptr.size == S_ent.size == 0
    np.testing.assert_array_equal(S, R.T)
    Sz, S_ptr, S_ent = _keys.sample_keys(R, Rh, mode_rank, sparse=True)
    assert Sz.shape == (0, 7) and Sz.dtype == np.uint16
    off = R != mode_rank[:, None]
    np.testing.assert_array_equal(np.diff(S_ptr), off.sum(0))
    for s in (0, 17, 299):
        ent = S_ent[S_ptr[s]:S_ptr[s + 1]]
        np.testing.assert_array_equal(ent >> 16, np.flatnonzero(off[:, s]))
        np.testing.assert_array_equal(ent & 0xFFFF, R[off[:, s], s])
    # the layout by density: half the keys off their mode or fewer goes sparse
    assert _keys.sample_keys(R, Rh, mode_rank)[1].size == (301 if 2 * off.sum() < off.size else 0)
    Xd = np.random.default_rng(1).normal(size=(200, 5)).astype(np.float32)  # dense: no ties
    Rd, md, _, Rhd, _ = _keys.feature_keys(Xd)
    assert _keys.sample_keys(Rd, Rhd, md)[0].shape == (200, 5)
    for narrow in (1, 3):  # most features wide (uint32 R), or some (uint16 halves): no rank codes
        R2, m2, _, Rh2, _ = _keys.feature_keys(X, narrow=narrow)
        S2, p2, e2 = _keys.sample_keys(R2, Rh2, m2)
        assert S2.shape == (0, X.shape[1]) and S2.dtype == np.uint32 and p2.size == e2.size == 0
    samples = np.random.default_rng(0).permutation(300).astype(np.int64)
    for codes in (_keys.sample_keys(R, Rh, mode_rank, sparse=False), (Sz, S_ptr, S_ent)):
        L = np.zeros((7, 40), np.uint16)
        loc = np.full(300, -1, np.int64)
        _keys.fill_local_ranks(*codes, mode_rank, samples, 100, 137, L, loc)
        np.testing.assert_array_equal(L[:, :37], R[:, samples[100:137]])
        np.testing.assert_array_equal(loc[100:137], np.arange(37))
        assert (loc[:100] == -1).all() and (loc[137:] == -1).all()
