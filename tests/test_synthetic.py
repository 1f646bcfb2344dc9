import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import SpectralClustering
from sklearn.neighbors import NearestCentroid
from sklearn.preprocessing import normalize

from hmlkit.data import TaggedData, make_synthetic


def spclust_on_tags(Y, n_clusters, n_neighbors=20, random_state=0):
    """Reference "SpClust on BiTag": cosine similarity between tag rows (untagged rows 0),
    kNN-sparsified and symmetrised, scikit-learn spectral clustering on the precomputed graph."""
    Yn = normalize(sp.csr_matrix(Y, dtype=np.float64))
    S = (Yn @ Yn.T).toarray()
    np.fill_diagonal(S, 0.0)
    n = S.shape[0]
    nbr = np.argpartition(-S, n_neighbors, axis=1)[:, :n_neighbors]
    rows = np.repeat(np.arange(n), n_neighbors)
    A = sp.csr_matrix((S[rows, nbr.ravel()], (rows, nbr.ravel())), shape=(n, n))
    A = A.maximum(A.T)
    sc = SpectralClustering(n_clusters=n_clusters, affinity="precomputed", random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "graph not fully connected": untagged rows
        return sc.fit_predict(A)


@pytest.fixture(scope="module")
def trecvid():
    return make_synthetic("trecvid", random_state=0)


def test_trecvid_statistics(trecvid):
    d = trecvid
    assert isinstance(d, TaggedData) and d.name == "trecvid"
    assert d.X.shape == (2379, 1000) and d.X.dtype == np.float32
    assert d.n_tags == 114 and d.n_groups == 15
    assert len(d.layers) == 2 and d.layers[0].size < d.layers[1].size
    assert (d.X >= 0).all()
    np.testing.assert_allclose(d.X.sum(1), 1.0, rtol=1e-4)  # L1 histograms
    s = d.summary()
    assert 3.5 <= s["tags_per_sample"] <= 4.5
    assert 0.02 < s["untagged_samples"] / d.n_samples < 0.15
    # observed tags are a subset of the true ones, and far fewer
    assert d.Y.multiply(d.Y_true).nnz == d.Y.nnz
    assert d.Y_true.nnz > 2 * d.Y.nnz
    sizes = np.bincount(d.groups)
    assert sizes.sum() == 2379 and sizes.min() < 0.7 * sizes.max()  # unequal groups
    assert d.tag_names[d.layers[0][0]].startswith("abs") and d.tag_names[d.layers[1][0]].startswith("spec")
    assert len(set(d.tag_names)) == 114
    for k in ("noise", "obs_rate_abstract", "obs_rate_specific", "untagged_share", "generic_only_share"):
        assert k in d.meta


def test_trecvid_story(trecvid):
    d = trecvid
    Yt = d.Y_true.toarray().astype(bool)
    G = d.n_groups
    rate = np.stack([Yt[d.groups == g].mean(0) for g in range(G)])  # (G, m)
    abstract, specific = d.layers
    generic = d.meta["generic_tags"]
    topical = np.setdiff1d(specific, generic)
    # abstract tags are tied to few groups, specific tags shared by many
    groups_per_tag = (rate > 0.05).sum(0)
    assert np.median(groups_per_tag[abstract]) <= 3
    assert np.median(groups_per_tag[topical]) >= 3
    assert (groups_per_tag[generic] == G).all()
    # mutually exclusive pairs never co-occur; topic tags co-occur far above chance
    for a, b in d.meta["exclusive_pairs"]:
        assert not (Yt[:, a] & Yt[:, b]).any()
    T = Yt[:, topical].astype(np.float64)
    co = T.T @ T
    np.fill_diagonal(co, 0)
    cond = co / np.maximum(T.sum(0), 1)[:, None]  # P(b | a)
    lift = cond / np.maximum(T.mean(0), 1e-9)[None, :]
    assert np.median(lift.max(1)) > 3.0  # measured 9.8 (generator seeds 1, 2: 10.7, 10.8)
    # visual features carry real but weak group information (also for untagged samples)
    untagged = np.diff(d.Y.indptr) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # bins unused by a group
        clf = NearestCentroid().fit(d.X[~untagged], d.groups[~untagged])
    acc = (clf.predict(d.X[untagged]) == d.groups[untagged]).mean()
    assert acc > 3.0 / G  # measured 0.561 = 8.4 / G (generator seeds 1, 2: 0.673, 0.643)


def test_deterministic_and_scaled():
    a = make_synthetic("trecvid", n_samples=400, random_state=3)
    b = make_synthetic("trecvid", n_samples=400, random_state=3)
    c = make_synthetic("trecvid", n_samples=400, random_state=4)
    assert np.array_equal(a.X, b.X) and (a.Y != b.Y).nnz == 0 and np.array_equal(a.groups, b.groups)
    assert not np.array_equal(a.X, c.X)
    assert a.X.shape == (400, 1000) and a.n_groups == 15 and a.n_tags == 114
    # the world (group proportions, tag vocabulary) does not depend on n_samples
    full = make_synthetic("trecvid", n_samples=2379, random_state=3)
    p_small = np.bincount(a.groups, minlength=15) / 400
    p_full = np.bincount(full.groups, minlength=15) / 2379
    assert np.abs(p_small - p_full).max() < 0.01
    assert a.tag_names == full.tag_names


def test_knobs_move_statistics():
    base = make_synthetic("trecvid", n_samples=600, random_state=0)
    more = make_synthetic("trecvid", n_samples=600, random_state=0, untagged_share=0.3)
    fewer = make_synthetic("trecvid", n_samples=600, random_state=0, obs_rate_specific=0.1)
    u = lambda d: (np.diff(d.Y.indptr) == 0).mean()
    assert u(more) > u(base) + 0.2
    assert fewer.Y.nnz < base.Y.nnz
    assert more.meta["untagged_share"] == 0.3


def test_nuswide_full():
    # CPU time, not wall time: the budget is the generator's work, not the machine's load
    t = time.process_time()
    d = make_synthetic("nuswide", random_state=0)
    elapsed = time.process_time() - t
    assert elapsed < 20.0
    assert d.X.shape == (17523, 4096) and d.X.dtype == np.float32 and d.name == "nuswide"
    assert d.n_tags == 1000 and d.n_groups == 30
    assert len(d.layers) == 1  # returned flat
    tl = d.meta["true_layers"]
    assert len(tl) == 2 and np.array_equal(np.sort(np.concatenate(tl)), np.arange(1000))
    assert (d.X >= 0).all()
    assert 0.5 < (d.X == 0).mean() < 0.95  # sparse-ish ReLU activations
    s = d.summary()
    assert 4.3 <= s["tags_per_sample"] <= 5.3
    assert np.bincount(d.groups).min() > 500
    assert d.Y.multiply(d.Y_true).nnz == d.Y.nnz


def test_feature_dimension_is_a_parameter():
    """n_features draws the same story at another dimension (the scaling benchmark's 512-d
    nuswide); the tags do not depend on it."""
    a = make_synthetic("nuswide", n_samples=300, random_state=1, n_features=512)
    b = make_synthetic("nuswide", n_samples=300, random_state=1)
    assert a.X.shape == (300, 512) and b.X.shape == (300, 4096)
    assert (a.Y != b.Y).nnz == 0 and np.array_equal(a.groups, b.groups)
    assert a.meta["n_features"] == 512
    # n_tags: the vocabulary grows with the topics, so tags per sample stay about the same
    same = make_synthetic("nuswide", n_samples=300, random_state=1, n_features=512, n_tags=1000)
    assert np.array_equal(same.X, a.X) and (same.Y != a.Y).nnz == 0
    big = make_synthetic("nuswide", n_samples=300, random_state=1, n_features=512, n_tags=5000)
    assert big.n_tags == 5000 and len(big.tag_names) == 5000
    assert 0.8 < (big.Y.nnz / 300) / (a.Y.nnz / 300) < 1.25
    h = make_synthetic("trecvid", n_samples=200, random_state=0, n_features=100)
    assert h.X.shape == (200, 100)
    np.testing.assert_allclose(h.X.sum(1), 1.0, rtol=1e-4)


@pytest.mark.parametrize(
    "kw",
    [
        {"profile": "flickr"},
        {"n_features": 4},
        {"n_tags": 20},
        {"n_features": 2.5},
        {"n_samples": 10},
        {"n_samples": 0},
        {"n_samples": 2.5},
        {"noise": 1.0},
        {"obs_rate_abstract": 0.0},
        {"untagged_share": -0.1},
        {"untagged_share": 0.6, "generic_only_share": 0.5},
    ],
)
def test_bad_input(kw):
    with pytest.raises(ValueError):
        make_synthetic(**kw)
