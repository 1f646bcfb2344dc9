"""One forest for HMLClustering variants that differ only after it (``fit(..., forest_of=)``),
as ``real_corel``'s rows hmlrf, hmlrf_observed_tags and hmlrf_forest use it."""
import numpy as np
import pytest

from hmlkit import HMLClustering
from hmlkit.cluster import GRAPH_PARAMS, shares_forest
from hmlkit.data import load_dataset, remove_tags

PARAMS = dict(n_estimators=8, random_state=3)


@pytest.fixture(scope="module")
def data():
    return remove_tags(load_dataset("trecvid", n_samples=240), 0.5, random_state=0)


@pytest.fixture(scope="module")
def base(data):
    return HMLClustering(data.n_groups, **PARAMS).fit(data.X, data.Y, data.layers)


@pytest.mark.parametrize("variant", [dict(complete_tags=False), dict(tag_weight=0.0), dict(tag_weight="auto"),
                                     dict(completion_top=3, completion_weight=0.2), dict(n_clusters=4)])
def test_a_shared_forest_gives_the_labels_of_a_forest_grown_again(data, base, variant):
    params = {"n_clusters": data.n_groups, **PARAMS, **variant}
    alone = HMLClustering(**params).fit(data.X, data.Y, data.layers)
    shared = HMLClustering(**params).fit(data.X, data.Y, data.layers, forest_of=base)
    assert shared.forest_ is base.forest_  # not grown again
    np.testing.assert_array_equal(shared.labels_, alone.labels_)
    assert (shared.affinity_ != alone.affinity_).nnz == 0
    assert (shared.tags_ != alone.tags_).nnz == 0


def test_n_jobs_does_not_stop_the_share(data, base):
    assert shares_forest(base, HMLClustering(data.n_groups, n_jobs=2, **PARAMS))
    assert set(GRAPH_PARAMS) <= set(base.get_params())


@pytest.mark.parametrize("other, named", [(dict(min_samples_leaf=5), "min_samples_leaf"),
                                          (dict(random_state=4), "random_state"),
                                          (dict(hierarchy=False), "hierarchy"),
                                          (dict(n_neighbors=10), "n_neighbors"),
                                          (dict(untagged="negative"), "untagged")])
def test_a_forest_grown_otherwise_is_refused_by_name(data, base, other, named):
    est = HMLClustering(data.n_groups, **{**PARAMS, **other})
    assert not shares_forest(base, est)
    with pytest.raises(ValueError, match=named):
        est.fit(data.X, data.Y, data.layers, forest_of=base)


def test_forest_of_must_be_fitted_on_data_of_the_same_shape(data, base):
    with pytest.raises(ValueError, match="fitted HMLClustering"):
        HMLClustering(data.n_groups, **PARAMS).fit(data.X, data.Y, data.layers, forest_of=HMLClustering(3))
    with pytest.raises(ValueError, match="fitted HMLClustering"):
        HMLClustering(data.n_groups, **PARAMS).fit(data.X, data.Y, data.layers, forest_of=object())
    with pytest.raises(ValueError, match="240 samples"):
        HMLClustering(data.n_groups, **PARAMS).fit(data.X[:200], data.Y[:200], data.layers, forest_of=base)


def test_real_corel_rows_share_a_forest_within_a_task_only(data):
    """The study's HML-RF rows in one task: the same labels as each row fitted alone, the
    three graph variants on one forest, and nothing kept once the task ends."""
    from types import SimpleNamespace

    from hmlkit.studies import real

    cfg = SimpleNamespace(forest_params={"n_estimators": 8, "min_samples_leaf": 3, "n_jobs": 1})
    rows = {"hmlrf": (None, real._hml(cfg)), "hmlrf_observed_tags": (None, real._hml(cfg, complete_tags=False)),
            "hmlrf_forest": (None, real._hml(cfg, tag_weight=0.0)),
            "hmlrf_flat": (None, real._hml(cfg, hierarchy=False))}
    d = data
    shared, forests = {}, {}
    for n, (_, run) in rows.items():
        shared[n] = run(d, d.n_groups, 1)
        forests[n] = real._LAST_HML["fit"][1].forest_
    assert forests["hmlrf"] is forests["hmlrf_observed_tags"] is forests["hmlrf_forest"]
    assert forests["hmlrf_flat"] is not forests["hmlrf"]  # another forest: grown
    for n, (_, run) in rows.items():
        real._LAST_HML.clear()
        np.testing.assert_array_equal(run(d, d.n_groups, 1), shared[n], err_msg=n)
    real._clustering_task(d, rows, list(rows), 1, 0.0)
    assert real._LAST_HML == {}


def test_forest_of_must_be_fitted_on_the_same_data(data, base):
    """Other data of the same shape (rows in another order, other tags, other layers) would
    take a forest grown on something else, silently: refused."""
    est = HMLClustering(data.n_groups, **PARAMS)
    order = np.arange(data.X.shape[0])[::-1]
    Y_other = data.Y.tolil()
    Y_other[0, :] = 0
    Y_other[0, 0] = 1 - data.Y[0, 0]
    flat = [np.arange(data.Y.shape[1])]
    for X, Y, layers in ((data.X[order], data.Y[order], data.layers), (data.X, Y_other.tocsr(), data.layers),
                         (data.X, data.Y, flat)):
        with pytest.raises(ValueError, match="other data"):
            est.fit(X, Y, layers, forest_of=base)
    layers_once = (layer for layer in data.layers)  # a generator is read once, not spent before the forest
    np.testing.assert_array_equal(est.fit(data.X, data.Y, layers_once, forest_of=base).labels_, base.labels_)
