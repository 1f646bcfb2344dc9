import numpy as np
import pytest
import scipy.sparse as sp

from hmlkit.tags import below_layer_mask, cooccurrence, mutual_exclusion, soft_tag_confidences

# 6 samples, 4 tags; layer 0 = {0, 1} (abstract), layer 1 = {2, 3}.
Y6 = np.array(
    [
        [1, 0, 1, 0],
        [1, 0, 1, 0],
        [1, 0, 0, 1],
        [0, 1, 0, 1],
        [0, 0, 0, 1],
        [0, 1, 0, 0],
    ],
    dtype=np.uint8,
)
L6 = [np.array([0, 1]), np.array([2, 3])]


def _slow_corr(Y, layers):
    """Eq. 6 and Eq. 8 straight from their definitions, one pair at a time."""
    Y = np.asarray(Y, dtype=int)
    n, m = Y.shape
    lid = np.empty(m, int)
    for k, layer in enumerate(layers):
        lid[layer] = k
    rho = np.zeros((m, m))
    eps = np.zeros((m, m))
    for i in range(m):
        for j in range(m):
            if lid[j] <= lid[i]:
                continue
            pos_j = Y[:, j] == 1
            o_j = pos_j.sum()
            if o_j == 0:
                continue
            rho[i, j] = np.sum(pos_j & (Y[:, i] == 1)) / o_j
            r_i = np.mean(Y[:, i] == 0)
            r_ij = np.mean(Y[pos_j, i] == 0)
            if 1 - r_i > 0:
                eps[i, j] = max(0.0, r_ij - r_i) / (1 - r_i)
    return rho, eps


def test_hand_computed_rho_eps():
    rho = cooccurrence(sp.csr_matrix(Y6), L6)
    eps = mutual_exclusion(Y6, L6)
    exp_rho = np.zeros((4, 4))
    exp_rho[0, 2], exp_rho[0, 3], exp_rho[1, 2], exp_rho[1, 3] = 1.0, 1 / 3, 0.0, 1 / 3
    exp_eps = np.zeros((4, 4))
    exp_eps[0, 2], exp_eps[0, 3], exp_eps[1, 2], exp_eps[1, 3] = 0.0, 1 / 3, 1.0, 0.0
    np.testing.assert_allclose(rho, exp_rho, atol=1e-12)
    np.testing.assert_allclose(eps, exp_eps, atol=1e-12)
    assert rho.dtype == np.float64 and eps.shape == (4, 4)


def test_hand_computed_soft_confidences():
    pos, neg = soft_tag_confidences(Y6, L6)
    assert pos.dtype == np.float32 and neg.dtype == np.float32 and pos.shape == (6, 4)
    # raw pos[:,0] = y2 + y3/3 -> (1, 1, 1/3, 1/3, 1/3, 0), max 1
    np.testing.assert_allclose(pos[:, 0], [1, 1, 1 / 3, 1 / 3, 1 / 3, 0], rtol=1e-6)
    # raw pos[:,1] = y3/3 -> normalised by its max 1/3
    np.testing.assert_allclose(pos[:, 1], [0, 0, 1, 1, 1, 0], rtol=1e-6)
    # raw neg[:,0] = y3/3, neg[:,1] = y2
    np.testing.assert_allclose(neg[:, 0], [0, 0, 1, 1, 1, 0], rtol=1e-6)
    np.testing.assert_allclose(neg[:, 1], [1, 1, 0, 0, 0, 0], rtol=1e-6)
    # last layer has no subordinate tags
    assert not pos[:, 2:].any() and not neg[:, 2:].any()


def test_precomputed_matrices_are_used():
    rho = cooccurrence(Y6, L6)
    eps = mutual_exclusion(Y6, L6)
    p1, n1 = soft_tag_confidences(Y6, L6)
    p2, n2 = soft_tag_confidences(Y6, L6, rho=rho, eps=eps)
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(n1, n2)
    p3, n3 = soft_tag_confidences(Y6, L6, rho=2 * rho, eps=np.zeros((4, 4)))
    np.testing.assert_allclose(p3, p1)  # per-tag max normalisation removes the scale
    assert not n3.any()


def _random_Y(rng, n, m, p):
    Y = (rng.random((n, m)) < p).astype(np.uint8)
    Y[:, -1] = 0  # a never-observed tag
    return Y


def test_agrees_with_slow_loop_on_random_data():
    rng = np.random.default_rng(0)
    Y = _random_Y(rng, 60, 12, 0.25)
    layers = [np.array([0, 5, 7]), np.array([1, 2, 8, 11]), np.array([3, 4, 6, 9, 10])]
    rho, eps = cooccurrence(Y, layers), mutual_exclusion(Y, layers)
    s_rho, s_eps = _slow_corr(Y, layers)
    np.testing.assert_allclose(rho, s_rho, atol=1e-12)
    np.testing.assert_allclose(eps, s_eps, atol=1e-12)
    pos, neg = soft_tag_confidences(sp.csr_matrix(Y), layers)
    raw_pos = Y @ s_rho.T
    raw_neg = Y @ s_eps.T
    for raw, got in ((raw_pos, pos), (raw_neg, neg)):
        mx = raw.max(axis=0)
        exp = np.divide(raw, mx, out=np.zeros_like(raw), where=mx > 0)
        np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-7)


def test_properties():
    rng = np.random.default_rng(1)
    Y = _random_Y(rng, 80, 10, 0.3)
    layers = [np.array([0, 1, 2]), np.array([3, 4, 5]), np.array([6, 7, 8, 9])]
    rho, eps = cooccurrence(Y, layers), mutual_exclusion(Y, layers)
    below = below_layer_mask(layers, 10)
    # zeros for same-layer and upper-layer pairs (incl. the diagonal)
    assert not rho[~below].any() and not eps[~below].any()
    assert below[0, 3] and not below[3, 0] and not below[3, 4] and not below[4, 4]
    assert (rho >= 0).all() and (rho <= 1).all() and (eps >= 0).all() and (eps <= 1).all()
    # never-observed tag 9 gives no evidence
    assert not rho[:, 9].any() and not eps[:, 9].any()
    pos, neg = soft_tag_confidences(Y, layers)
    for c in (pos, neg):
        assert c.min() >= 0 and c.max() <= 1
        assert np.allclose(c[:, :6].max(axis=0), 1.0)  # every non-last-layer tag reaches 1 here
        assert not c[:, 6:].any()


def test_exclusive_common_pair_has_positive_eps():
    # tags 0 (layer 0) and 2 (layer 1) are both common but never co-occur
    Y = np.zeros((10, 3), np.uint8)
    Y[:5, 0] = 1
    Y[5:, 2] = 1
    Y[::2, 1] = 1
    layers = [np.array([0]), np.array([1, 2])]
    eps = mutual_exclusion(Y, layers)
    rho = cooccurrence(Y, layers)
    assert eps[0, 2] == pytest.approx(1.0)
    assert rho[0, 2] == 0.0
    assert rho[0, 1] > 0


def test_single_layer_gives_zero():
    pos, neg = soft_tag_confidences(Y6, None)
    assert not pos.any() and not neg.any()


def test_bad_input():
    with pytest.raises(ValueError, match="0/1"):
        cooccurrence(Y6 * 2, L6)
    with pytest.raises(ValueError, match="cover"):
        mutual_exclusion(Y6, [np.array([0, 1]), np.array([2])])
    with pytest.raises(ValueError, match="rho"):
        soft_tag_confidences(Y6, L6, rho=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="NaN"):
        soft_tag_confidences(Y6, L6, eps=np.full((4, 4), np.nan))


# --------------------------------------------------------------------------- hierarchy estimation

from hmlkit.tags import estimate_layers  # noqa: E402


def _topic_data(seed=0, n_per=40, n_topics=4, n_generic=20, n_never=3):
    """Topic tag t dominates group t (80% of its samples); generic tags spread over everyone."""
    rng = np.random.default_rng(seed)
    n = n_per * n_topics
    m = n_topics + n_generic + n_never
    Y = np.zeros((n, m), np.uint8)
    group = np.repeat(np.arange(n_topics), n_per)
    Y[np.arange(n), group] = rng.random(n) < 0.8
    Y[:, n_topics : n_topics + n_generic] = rng.random((n, n_generic)) < 0.12
    return Y, n_topics


def _check_partition(layers, m):
    allt = np.concatenate(layers)
    assert np.array_equal(np.sort(allt), np.arange(m))
    assert all(layer.dtype == np.int64 and layer.size > 0 for layer in layers)


def test_estimate_layers_topic_tags_are_abstract():
    Y, k = _topic_data()
    layers = estimate_layers(sp.csr_matrix(Y), n_layers=2, n_topics=4, random_state=0)
    assert len(layers) == 2
    _check_partition(layers, Y.shape[1])
    assert set(range(k)) <= set(layers[0].tolist())
    assert layers[0].size <= 3 * 4
    # never-observed tags fall to the last layer
    assert {24, 25, 26} <= set(layers[1].tolist())
    # with the default number of topics the topic tags are still on top
    assert set(range(k)) <= set(estimate_layers(Y, 2, random_state=1)[0].tolist())


def test_estimate_layers_many_layers_and_determinism():
    Y, _ = _topic_data(seed=2)
    m = Y.shape[1]
    a = estimate_layers(Y, n_layers=4, n_topics=3, random_state=7)
    b = estimate_layers(Y, n_layers=4, n_topics=3, random_state=7)
    assert len(a) == 4
    _check_partition(a, m)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    one = estimate_layers(Y, n_layers=1)
    assert len(one) == 1 and np.array_equal(one[0], np.arange(m))
    # as many layers as tags: every layer one tag
    small = Y[:, :5]
    layers = estimate_layers(small, n_layers=5, random_state=0)
    _check_partition(layers, 5)
    assert [x.size for x in layers] == [1] * 5


def test_estimate_layers_bad_input():
    Y, _ = _topic_data()
    with pytest.raises(ValueError, match="n_layers"):
        estimate_layers(Y, n_layers=0)
    with pytest.raises(ValueError, match="larger than the number of tags"):
        estimate_layers(Y[:, :3], n_layers=4)
    with pytest.raises(ValueError, match="n_topics"):
        estimate_layers(Y, n_topics=0)
    with pytest.raises(ValueError, match="0/1"):
        estimate_layers(Y * 3)
