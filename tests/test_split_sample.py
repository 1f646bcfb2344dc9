"""HMLForest's ``split_sample``: a node of more samples chooses its split on a uniform
subsample of that many, then sends all its samples by the chosen threshold."""
import numpy as np
import pytest

from hmlkit import HMLClustering, HMLForest
from hmlkit.data import make_synthetic
from hmlkit.forest import _grow
from hmlkit.forest.estimator import SPLIT_SAMPLE

ARRAYS = ("node_offset_", "feature_", "threshold_", "children_left_", "children_right_", "leaf_id_", "train_leaves_")


@pytest.fixture(scope="module")
def data():
    return make_synthetic("trecvid", n_samples=600, random_state=0)


def _assert_same_forest(a, b):
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_data_no_larger_than_split_sample_grow_the_exact_trees(data):
    exact = HMLForest(n_estimators=8, random_state=3, split_sample=None).fit(data.X, data.Y, data.layers)
    _assert_same_forest(HMLForest(n_estimators=8, random_state=3, split_sample=600).fit(data.X, data.Y, data.layers),
                        exact)
    # the default leaves every data set of the studies exact (the largest has 17,523 samples)
    assert SPLIT_SAMPLE > 17_523
    _assert_same_forest(HMLForest(n_estimators=8, random_state=3).fit(data.X, data.Y, data.layers), exact)


def test_subsampled_forest_is_deterministic_whatever_n_jobs_and_routes_its_own_samples(data):
    a = HMLForest(n_estimators=10, random_state=1, split_sample=100, n_jobs=1).fit(data.X, data.Y, data.layers)
    b = HMLForest(n_estimators=10, random_state=1, split_sample=100, n_jobs=2).fit(data.X, data.Y, data.layers)
    _assert_same_forest(a, b)
    # the training samples were partitioned by the thresholds that apply() uses
    np.testing.assert_array_equal(a.apply(data.X), a.train_leaves_)
    for t in range(10):
        assert np.bincount(a.train_leaves_[:, t]).min() >= 3
    exact = HMLForest(n_estimators=10, random_state=1, split_sample=None).fit(data.X, data.Y, data.layers)
    assert not np.array_equal(a.feature_, exact.feature_)


def test_subsampled_split_separates_what_the_exact_one_does():
    """Three groups told apart by feature 0 only: a subsample of 40 of 3000 samples still
    finds the cuts, so every leaf is pure in the group tag, as in the exact forest."""
    rng = np.random.default_rng(0)
    n = 3000
    g = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 6)).astype(np.float32)
    X[:, 0] = 10 * g + rng.random(n)
    Y = np.zeros((n, 3), np.uint8)
    Y[np.arange(n), g] = 1
    f = HMLForest(n_estimators=4, min_samples_leaf=1, max_features=None, split_sample=40, random_state=0).fit(X, Y)
    for t in range(4):
        for leaf in np.unique(f.train_leaves_[:, t]):
            assert len(np.unique(g[f.train_leaves_[:, t] == leaf])) == 1
    assert (f.n_nodes_ == 5).all()  # two cuts: exactly the three groups


def test_subsample_draws_exactly_size_in_order_and_uniformly():
    samples = np.arange(1000, 3000, 2, dtype=np.int64)
    out = np.empty(200, np.int64)
    state = np.array([12345], np.uint64)
    counts = np.zeros(samples.size, np.int64)
    reps = 400
    for _ in range(reps):
        k = _grow.subsample(samples, 100, 900, 200, state, out)
        assert k == 200
        sel = out[:k]
        assert (np.diff(sel) > 0).all()
        pos = np.searchsorted(samples, sel)
        assert np.array_equal(samples[pos], sel) and pos.min() >= 100 and pos.max() < 900
        counts[pos] += 1
    inside = counts[100:900]
    assert counts[:100].sum() == 0 and counts[900:].sum() == 0
    # each of the 800 is drawn with probability 1/4: binomial(400, 1/4), sd 8.7
    assert np.abs(inside - reps / 4).max() < 5 * np.sqrt(reps * 0.25 * 0.75)


@pytest.mark.parametrize("value", [0, -5, 2.5, True, "auto"])
def test_bad_split_sample(data, value):
    with pytest.raises(ValueError, match="split_sample"):
        HMLForest(n_estimators=2, split_sample=value).fit(data.X, data.Y, data.layers)
    with pytest.raises(ValueError, match="split_sample"):
        HMLClustering(5, n_estimators=2, split_sample=value).fit(data.X, data.Y, data.layers)


def test_clustering_passes_split_sample_to_its_forest(data):
    model = HMLClustering(15, n_estimators=6, random_state=0, split_sample=100).fit(data.X, data.Y, data.layers)
    assert model.forest_.split_sample == 100
    direct = HMLForest(n_estimators=6, random_state=0, split_sample=100, verbose=False).fit(
        model.feature_map_.transform(data.X) if model.feature_map_ is not None else data.X, data.Y, data.layers)
    np.testing.assert_array_equal(model.forest_.train_leaves_, direct.train_leaves_)
