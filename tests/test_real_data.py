"""Real tagged images: Corel5k clustering against tags alone, and
the pieces of the recommended pipeline (token map, tag graph, fusion)."""
import numpy as np
import pytest
import scipy.sparse as sp

from hmlkit import HMLClustering
from hmlkit._paths import corel5k_path
from hmlkit.affinity import cosine_knn_graph, normalized_graph
from hmlkit.cluster import spectral_from_graph
from hmlkit.data import load_dataset, remove_tags
from hmlkit.metrics import clustering_scores
from hmlkit.tokens import TokenFeatureMap, is_token_matrix, resolve_feature_map


def test_is_token_matrix():
    rng = np.random.default_rng(0)
    B = (rng.random((50, 40)) < 0.05).astype(np.float32)
    assert is_token_matrix(B) and is_token_matrix(sp.csr_matrix(B)) and is_token_matrix(3 * B)
    assert not is_token_matrix(B + 0.5 * B)  # non-integer counts
    assert not is_token_matrix(rng.random((50, 40)))  # dense continuous
    assert not is_token_matrix(-B)  # negative
    assert not is_token_matrix(np.zeros((5, 4)))


def test_token_feature_map_and_auto():
    rng = np.random.default_rng(0)
    B = (rng.random((60, 30)) < 0.1).astype(np.float32)
    Z = TokenFeatureMap(n_components=8).fit_transform(B)
    assert Z.shape == (60, 8) and Z.dtype == np.float32 and np.isfinite(Z).all()
    assert isinstance(resolve_feature_map("auto", B), TokenFeatureMap)
    assert resolve_feature_map("auto", rng.normal(size=(60, 30))) is None
    assert resolve_feature_map(None, B) is None
    with pytest.raises(ValueError, match="feature_map"):
        resolve_feature_map("lsa", B)
    with pytest.raises(ValueError, match="non-negative"):
        TokenFeatureMap().fit(-B)
    with pytest.raises(ValueError, match="30"):
        TokenFeatureMap().fit(B).transform(B[:, :10])


def test_cosine_knn_graph_known_answer():
    # rows 0, 1 share tag 0; row 2 has tag 1 only; row 3 is untagged
    Y = sp.csr_matrix(np.array([[1, 0], [1, 1], [0, 1], [0, 0]], dtype=np.uint8))
    W = cosine_knn_graph(Y, n_neighbors=1).toarray()
    c = 1 / np.sqrt(2)
    assert W[0, 1] == pytest.approx(c) and W[1, 0] == pytest.approx(c)
    assert W[2, 1] == pytest.approx(c)
    assert W[0, 2] == 0 and W[3].sum() == 0 and W[:, 3].sum() == 0  # no edge for the untagged
    assert (W == W.T).all()

    Wi = cosine_knn_graph(Y, n_neighbors=1, algorithm="inverted").toarray()
    assert np.allclose(Wi, W)


def test_cosine_knn_inverted_index_agrees_with_brute_force():
    """No ties (continuous weights): the inverted index finds scikit-learn's graph;
    binary tags (many ties): the same similarity at every rank of every row."""
    from sklearn.neighbors import NearestNeighbors

    from hmlkit.affinity import _cosine as K
    from hmlkit.primitives.parallel import chunk_bounds

    rng = np.random.default_rng(3)
    Z = sp.random(300, 40, density=0.3, random_state=3, format="csr")
    Z.data = rng.random(Z.nnz) + 0.1
    Z[7] = 0  # an untagged row
    Z.eliminate_zeros()
    a = cosine_knn_graph(Z, 6, algorithm="inverted")
    b = cosine_knn_graph(Z, 6, algorithm="brute")
    assert abs(a - b).max() < 1e-12 and a.nnz == b.nnz and a[7].nnz == 0
    Y = (sp.random(400, 15, density=0.2, random_state=4, format="csr") > 0).astype(np.float64)
    rows = np.flatnonzero(np.diff(Y.indptr))
    C = Y.tocsc()
    norm = np.sqrt(np.asarray(Y.sum(axis=1)).ravel())
    _, sim = K.cosine_knn_rows(Y.indptr.astype(np.int64), Y.indices.astype(np.int64), Y.data,
                               C.indptr.astype(np.int64), C.indices.astype(np.int64), C.data, norm,
                               rows.astype(np.int64), 8, chunk_bounds(len(rows)))
    nn = NearestNeighbors(n_neighbors=len(rows), metric="cosine", algorithm="brute").fit(Y[rows])
    dist, idx = nn.kneighbors(Y[rows])
    ref = np.array([np.sort((1 - d)[i != r])[::-1][:8] for d, i, r in zip(dist, idx, range(len(rows)))])
    ref[ref <= 1e-12] = 0
    assert np.abs(sim - ref).max() < 1e-12


def test_cosine_knn_inverted_ties_do_not_make_hubs():
    """200 samples with the same tags: every pair ties at similarity 1. Lower index
    first would give samples 0-4 an edge from all 200 (hubs); the hashed order
    spreads the edges."""
    Y = sp.csr_matrix(np.ones((200, 2)))
    W = cosine_knn_graph(Y, 5, algorithm="inverted")
    deg = np.diff(W.indptr)
    assert deg.min() >= 5 and deg.max() < 40, deg.max()


def test_cosine_knn_graph_bad_input():
    Y = sp.csr_matrix(np.array([[1.0, -1.0], [1.0, 1.0], [0.5, 0.0]]))
    with pytest.raises(ValueError, match="non-negative"):
        cosine_knn_graph(Y, 1, algorithm="inverted")
    with pytest.raises(ValueError, match="algorithm"):
        cosine_knn_graph(Y, 1, algorithm="ball_tree")


def test_normalized_graph_is_symmetric_and_scaled():
    rng = np.random.default_rng(1)
    A = sp.random(40, 40, density=0.2, random_state=1)
    A = (A + A.T).tocsr()
    N = normalized_graph(A)
    assert (N != N.T).nnz == 0
    d = np.asarray(A.sum(1)).ravel()
    ref = A.toarray() / np.sqrt(np.outer(d, d))
    assert np.allclose(N.toarray(), np.nan_to_num(ref))


def test_tag_weight_bounds():
    X = np.random.default_rng(0).normal(size=(30, 4))
    Y = np.eye(3, dtype=np.uint8)[np.arange(30) % 3]
    with pytest.raises(ValueError, match="tag_weight"):
        HMLClustering(3, n_estimators=4, tag_weight=1.5, random_state=0).fit(X, Y)


@pytest.fixture(scope="module")
def corel5k():
    if not corel5k_path().exists():
        pytest.skip(f"development data not found at {corel5k_path()}")
    return load_dataset("corel5k")


def _tags_nmi(data, seed):
    labels = spectral_from_graph(cosine_knn_graph(data.Y, 20), data.n_groups, random_state=seed)
    return clustering_scores(data.groups, labels)["nmi"]


@pytest.mark.slow
@pytest.mark.parametrize("rate", [0.0, 0.5])
def test_corel5k_recommended_clustering_matches_tags_alone(corel5k, rate):
    """Must-show 1 at CI size (100 trees, one seed of tag removal): the
    recommended HMLClustering is within 0.02 NMI of tags-only spectral
    clustering or above it; the paper's settings are far below (0.45 at 0 %)."""
    data = remove_tags(corel5k, rate, random_state=0) if rate else corel5k
    tags = _tags_nmi(data, 0)
    labels = HMLClustering(data.n_groups, n_estimators=100, random_state=0).fit_predict(data.X, data.Y, data.layers)
    hml = clustering_scores(data.groups, labels)["nmi"]
    # hml - tags measured +0.008 / +0.010 at 0 % (seeds 0 / 1: 0.618 vs 0.609, 0.615 vs 0.604) and
    # +0.038 / +0.030 at 50 % here. Each term is a spectral clustering, which moved by 0.01 on another
    # machine (0.609 -> 0.599 for tags alone), so the old "within 0.01" left 0.018, under two
    # such moves; 0.02 leaves 0.028, and the paper's settings (0.15 below) still fail it
    assert hml >= tags - 0.02, (hml, tags)


@pytest.mark.slow
def test_corel5k_paper_model_beats_visual_kmeans_where_tags_are_sparse(corel5k):
    """Must-show 1's "every HML-RF variant beats visual K-means", at its hardest rate
    (75 % removed, seed 0, 100 trees): the paper's model (PAPER_SETTINGS) on the kit's
    input map. On the raw binary visual words (feature_map=None) the same model tied
    K-means (standard run, 3 seeds: 0.221 vs 0.221); the map is what lifts it."""
    from sklearn.cluster import KMeans

    from hmlkit.cluster import PAPER_SETTINGS

    data = remove_tags(corel5k, 0.75, random_state=0)

    def paper(**kw):
        labels = HMLClustering(data.n_groups, n_estimators=100, random_state=0, **PAPER_SETTINGS, **kw).fit_predict(
            data.X, data.Y, data.layers)
        return clustering_scores(data.groups, labels)["nmi"]

    km = clustering_scores(data.groups, KMeans(data.n_groups, n_init=10, random_state=0).fit_predict(data.X))["nmi"]
    mapped, raw = paper(), paper(feature_map=None)
    # measured mapped 0.316, K-means 0.223, raw 0.225 here (seed 0): the gaps, 0.093 and 0.091, leave
    # 0.06 over the 0.03 asked, six times the 0.01 a clustering's NMI moved between machines
    assert mapped > km + 0.03, (mapped, km)
    assert mapped > raw + 0.03, (mapped, raw)


@pytest.mark.slow
def test_corel5k_recommended_completer_beats_cooccurrence(corel5k):
    """Must-show 2 on Corel5k (40 % hidden with seed 0, 100 trees, forest seeds 0-2): the
    default HMLTagCompleter (co-occurrence times the forest neighbourhood's lift) above tag
    co-occurrence; its forest vote alone is far below (~0.15)."""
    from hmlkit import HMLTagCompleter
    from hmlkit.complete import cooccurrence_scores
    from hmlkit.data import hide_tags
    from hmlkit.metrics import completion_scores

    obs, hidden = hide_tags(corel5k, frac=0.4, random_state=0)
    co = completion_scores(cooccurrence_scores(obs.Y), obs.Y, hidden)["AP@1"]
    # AP@1 above co-occurrence's 0.3949 by 0.0079, 0.0036, 0.0036, 0.0052, 0.0029 at forest seeds
    # 0-4 here (spread 0.005, sd 0.002): one seed's gap is within reach of another machine's noise,
    # the mean of three (0.0050 here, its sd ~0.0012) is four of its sd above
    rec = [completion_scores(HMLTagCompleter("AM", n_estimators=100, random_state=seed).fit(
        obs.X, obs.Y, obs.layers).predict_scores(), obs.Y, hidden)["AP@1"] for seed in range(3)]
    assert np.mean(rec) > co, (rec, co)


def test_spectral_from_graph_has_no_catch_all_cluster_on_corel5k(corel5k):
    """Ng-Jordan-Weiss row scaling of the spectral embedding. scikit-learn's
    SpectralClustering clusters the unscaled rows (eigenvectors over
    sqrt(degree)), where the many high-degree samples of a symmetrised kNN
    graph crowd near the origin: on Corel5k's tag graph it returned one
    cluster of 913 images (groups hold 90)."""
    W = cosine_knn_graph(corel5k.Y, 20)
    labels = spectral_from_graph(W, 50, random_state=0)
    assert np.bincount(labels).max() <= 3 * 90
    # NMI measured 0.609 here (seeds 0-4: 0.602-0.609), 0.599 on another machine (the
    # eigensolver's last digits move with BLAS, CPU and threads, and k-means follows): 0.57 leaves
    # 0.03 below both, 4x the seed spread; random labels score 0.08, visual K-means ~0.2
    assert clustering_scores(corel5k.groups, labels)["nmi"] > 0.57


def test_auto_tag_weight_follows_the_graph_with_cluster_structure():
    """tag_weight="auto" weights each graph by its eigengap at k: clear
    groups in X and one tag per sample that names its group only half of the
    time -> a small weight on the tags; random X and tags naming the groups
    -> a large one."""
    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(3), 40)
    X_clear = rng.normal(size=(120, 6)) + 8 * np.eye(6)[g]
    X_noise = rng.normal(size=(120, 6))
    Y_noise = np.zeros((120, 12), np.uint8)
    for i in range(120):
        Y_noise[i, 4 * g[i] + rng.integers(4) if rng.random() < 0.5 else rng.integers(12)] = 1
    Y_clear = np.zeros((120, 12), np.uint8)
    for i in range(120):
        Y_clear[i, 4 * g[i] + rng.choice(4, 2, replace=False)] = 1
    kw = dict(n_clusters=3, n_estimators=30, random_state=0, hierarchy=False)
    a_x = HMLClustering(tag_weight="auto", **kw).fit(X_clear, Y_noise).tag_weight_
    a_y = HMLClustering(tag_weight="auto", **kw).fit(X_noise, Y_clear).tag_weight_
    # measured a_x 0.0 and a_y 0.930 here (forest seeds 0-4: a_x 0.0, a_y 0.878-0.947; 1 or 2
    # threads: same): the bounds leave 0.3 and 0.18 (2.6x a_y's spread of 0.07)
    assert a_x < 0.3 < 0.7 < a_y, (a_x, a_y)
    c = HMLClustering(tag_weight=0.25, **kw).fit(X_noise, Y_clear)
    assert c.tag_weight_ == 0.25 and c.eigengaps_ is None
    assert HMLClustering(**kw).fit(X_noise, Y_clear).tag_weight_ == 0.5  # the default: a fixed weight


def test_every_clustering_result_stores_and_flags_catch_all_clusters():
    """The largest cluster over the largest true group
    is stored with every clustering score, and REPORT.md lists every result
    over 3x."""
    import xarray as xr

    from hmlkit import studies as study
    from hmlkit.studies.sanity import flagged

    truth = np.repeat(np.arange(4), 10)
    labels = np.r_[np.zeros(34, int), np.arange(1, 4).repeat(2)]  # one cluster of 34 images, groups of 10
    s = dict(zip(study.SCORE_METRICS, study.clustering_scores(truth, labels)))
    assert len(s) == len(study.SCORE_METRICS) and s["largest_ratio"] == pytest.approx(3.4)
    assert s["clusters_ratio"] == 1.0
    score = np.full((2, len(study.SCORE_METRICS), 1), 0.5)
    score[:, list(study.SCORE_METRICS).index("largest_ratio"), 0] = [3.4, 1.2]
    score[:, list(study.SCORE_METRICS).index("clusters_ratio"), 0] = 1.0
    ds = xr.Dataset({"score": (("row", "metric", "fold"), score)},
                    coords={"row": ["a", "b"], "metric": list(study.SCORE_METRICS), "fold": [0]})
    assert flagged(ds) == [("row=a", "catch-all cluster 3.4x the largest true group")]
