"""What the core kit must show, on the embedded data and Corel16k.

Forest sizes are the smallest at which each comparison is stable; the study
notebooks and `make bench` run the paper's sizes.
"""
import numpy as np
import pytest

from hmlkit import HMLClustering, HMLTagCompleter
from hmlkit._paths import corel16k_path
from hmlkit.cluster import spectral_from_affinity
from hmlkit.complete import cooccurrence_scores
from hmlkit.data import hide_tags, load_arff, make_synthetic, remove_tags
from hmlkit.metrics import clustering_scores, completion_scores


@pytest.fixture(scope="module")
def trecvid():
    return make_synthetic("trecvid", random_state=0)


def tags_spclust_nmi(data, seed=0):
    """SpClust on BiTag: cosine similarity of the observed tag vectors."""
    Y = data.Y.toarray().astype(float)
    norm = np.linalg.norm(Y, axis=1)
    Yn = Y / np.where(norm > 0, norm, 1)[:, None]
    labels = spectral_from_affinity(Yn @ Yn.T, data.n_groups, n_neighbors=20, random_state=seed)
    return clustering_scores(data.groups, labels)["nmi"]


def test_hmlrf_clusters_better_than_tags_alone(trecvid):
    tags = tags_spclust_nmi(trecvid)
    labels = HMLClustering(15, n_estimators=300, random_state=0).fit_predict(trecvid.X, trecvid.Y, trecvid.layers)
    hml = clustering_scores(trecvid.groups, labels)["nmi"]
    # measured tags 0.624, hml 0.785 (gain 0.161) here; seed 1: 0.623, 0.781 (0.159). The band
    # leaves 0.07 below tags, the 0.05 gain 0.11 (both many times the spread)
    assert 0.55 <= tags <= 0.80
    assert hml >= tags + 0.05, (hml, tags)


def test_correlations_help_at_half_sparseness(trecvid):
    # the paper's claim about the paper's model (Fig 6): raw features, untagged
    # samples negative, forest-only affinity. (With the recommended defaults
    # NoCorr beats the full model here: 0.700 vs 0.635; see docs/history.md.)
    full, nocorr = [], []
    for seed in range(3):
        sparse = remove_tags(trecvid, 0.5, random_state=seed)
        for out, corr in ((full, True), (nocorr, False)):
            lab = HMLClustering(15, n_estimators=100, correlations=corr, random_state=seed, feature_map=None,
                                untagged="negative", tag_weight=0.0).fit_predict(
                sparse.X, sparse.Y, sparse.layers)
            out.append(clustering_scores(sparse.groups, lab)["nmi"])
    # measured 0.607 against 0.569 here, every seed's gain 0.037-0.040: the mean gain, 0.038, is
    # ten times that spread
    assert np.mean(full) > np.mean(nocorr), (full, nocorr)


def test_hmlrf_completion_beats_cooccurrence_on_synthetic(trecvid):
    obs, hidden = hide_tags(trecvid, 0.4, random_state=0)
    co = completion_scores(cooccurrence_scores(obs.Y), obs.Y, hidden)["AP@1"]
    s = HMLTagCompleter("AM", n_estimators=150, random_state=0).fit(obs.X, obs.Y, obs.layers).predict_scores()
    am = completion_scores(s, obs.Y, hidden)["AP@1"]
    # measured 0.354 against 0.315 here (forest seed 1: 0.362): the gap, 0.039, is 5x the spread
    assert am > co, (am, co)


@pytest.fixture(scope="module")
def corel_run():
    path = corel16k_path()
    if not path.exists():
        pytest.skip(f"development data not found at {path}")
    data = load_arff(path, n_features=500)
    obs, hidden = hide_tags(data, 0.4, random_state=0)
    am = HMLTagCompleter("AM", n_estimators=100, random_state=0, feature_map=None, untagged="negative",
                         lift_exponent=None).fit(obs.X, obs.Y).predict_scores()
    return data, obs, hidden, am


@pytest.fixture(scope="module")
def recommended_vs_cooccurrence(corel_run):
    """AP@1 of the default HMLTagCompleter at forest seeds 0-2, and of tag co-occurrence.

    One seed is not enough: above co-occurrence's 0.3411 by 0.0111, 0.0123, 0.0234, 0.0228 at
    seeds 0-3 here (spread 0.012, sd 0.007), so one seed's gap is within reach of another
    machine's noise; the mean of three (0.0156 here, its sd ~0.004) is four of its sd above."""
    _, obs, hidden, _ = corel_run
    co = completion_scores(cooccurrence_scores(obs.Y), obs.Y, hidden)["AP@1"]
    rec = [completion_scores(HMLTagCompleter("AM", n_estimators=100, random_state=seed).fit(obs.X, obs.Y)
                             .predict_scores(), obs.Y, hidden)["AP@1"] for seed in range(3)]
    return rec, co


def test_corel_completion_end_to_end(corel_run):
    data, obs, hidden, am = corel_run
    assert data.X.shape == (1744, 500) and data.n_tags == 153
    assert am.shape == (1744, 153) and np.isfinite(am).all()
    r = completion_scores(am, obs.Y, hidden)
    rows = np.flatnonzero(np.diff(hidden.indptr))
    chance = np.mean(np.diff(hidden.indptr)[rows] / (153 - np.diff(obs.Y.indptr)[rows]))
    # neighbourhoods carry real tag information: measured 15.5x chance here (forest seeds 0-1:
    # 15.2-15.5x, AP@1 0.132-0.135); 5x leaves a factor of 3
    assert r["AP@1"] > 5 * chance
    assert r["AR@5"] >= r["AR@1"] and r["Coverage@5"] >= r["Coverage@1"]


@pytest.mark.slow
def test_corel16k_recommended_completer_beats_cooccurrence(recommended_vs_cooccurrence):
    """Completion on Corel16k (40 % hidden, 100 trees, mean of forest seeds 0-2):
    the default HMLTagCompleter (the sample's own tags through the correlations, weighted by
    the forest neighbourhood's lift) above tag co-occurrence, where the paper's AM (the
    strict xfail below) is far below it. The real_corel study: 0.372 vs 0.356 over 3
    seeds of the full set."""
    rec, co = recommended_vs_cooccurrence
    assert np.mean(rec) > co, (rec, co)


@pytest.mark.xfail(strict=True, reason=(
    "Not reproduced: on Corel16k (40% hidden) HML-RF(AM) reaches AP@1 ~0.13 vs ~0.34 for tag co-occurrence. "
    "The 500 binary blob features carry little tag information (visual-only SFSS/FSNM also ~0.13, cosine kNN on "
    "tf-idf blobs 0.15, tag popularity 0.12), while a sample's remaining tags, which HML-RF routing never uses, "
    "predict its hidden ones well; even a random forest that splits on the observed tags themselves (cross-fitted, "
    "half the tags as features, half as targets) reaches only 0.30."))
def test_corel_am_beats_cooccurrence(corel_run):
    """The paper's AM (raw features, untagged negative, no correlations)."""
    _, obs, hidden, am = corel_run
    co = completion_scores(cooccurrence_scores(obs.Y), obs.Y, hidden)["AP@1"]
    assert completion_scores(am, obs.Y, hidden)["AP@1"] > co


def test_corel_recommended_completer_beats_cooccurrence(recommended_vs_cooccurrence):
    """The default HMLTagCompleter (LSA of the blob tokens, untagged
    unknown, the sample's own tags through P(j|i) times the AM neighbourhood's lift),
    mean of forest seeds 0-2 (the fixture says why)."""
    rec, co = recommended_vs_cooccurrence
    assert np.mean(rec) > co, (rec, co)
