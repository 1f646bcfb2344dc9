"""SFSS (Ma et al., ACM MM 2011) and its comparison methods FScoreRLS, FSNM."""
import numpy as np
import pytest
import scipy.sparse as sp

from hmlkit.baselines.sfss import (
    FSNM,
    SFSS,
    FScoreRLS,
    SFSSCompleter,
    fisher_scores,
    fsnm_weights,
    knn_laplacian,
    sfss_system,
)
from hmlkit.metrics import mean_average_precision
from hmlkit.studies.seed_sfss import label_share_study


def labelled_data(n=300, d=20, c=5, seed=0):
    """c overlapping classes; only the first 5 features carry the labels."""
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, c)) < 0.3).astype(np.uint8)
    Y[Y.sum(1) == 0, 0] = 1
    X = rng.normal(size=(n, d))
    X[:, :5] += 2.0 * Y @ rng.normal(size=(c, 5))
    return X, Y


def test_sfss_system_matches_algorithm_1_literally():
    """Steps 1-6 of Algorithm 1 with dense P = (L + U + μH)⁻¹ (paper's d × n X)."""
    X, Y = labelled_data(n=80, d=6)
    lab = np.zeros(80, bool)
    lab[:20] = True
    mu, big = 0.7, 1e6
    A, B, _, _, _ = sfss_system(X, Y.astype(float), lab, mu, 15, big)
    n = 80
    Xp = X.T  # d × n as in the paper
    L = knn_laplacian(X, 15).toarray()
    U = np.diag(np.where(lab, big, 1.0))
    H = np.eye(n) - np.ones((n, n)) / n
    P = np.linalg.inv(L + U + mu * H)
    Yl = np.where(lab[:, None], Y, 0)
    A_ref = Xp @ H @ (mu * np.eye(n) - mu**2 * P) @ H @ Xp.T
    B_ref = mu * Xp @ H @ P @ U @ Yl
    np.testing.assert_allclose(A, A_ref, rtol=1e-6, atol=1e-6 * np.abs(A_ref).max())
    np.testing.assert_allclose(B, B_ref, rtol=1e-5, atol=1e-6 * np.abs(B_ref).max())
    assert np.linalg.eigvalsh(A).min() > -1e-8 * np.abs(A).max()  # Eq. 14 is convex


def test_knn_laplacian_rows_sum_to_zero_and_symmetric():
    X, _ = labelled_data(n=50)
    L = knn_laplacian(X, 15)
    assert abs(L - L.T).max() == 0
    np.testing.assert_allclose(np.asarray(L.sum(1)).ravel(), 0, atol=1e-12)
    assert (L.diagonal() >= 15).all()


@pytest.mark.parametrize("gamma", [0.1, 10.0, 100.0])
def test_sfss_objective_decreases_monotonically(gamma):
    """Theorem 1: Eq. 14 never increases along Algorithm 1."""
    X, Y = labelled_data()
    m = SFSS(gamma=gamma, max_iter=25, tol=0, random_state=0).fit(X, Y, labelled=np.arange(40))
    obj = np.asarray(m.objective_)
    assert len(obj) > 5  # stops early only on an exact fixed point
    assert np.all(np.diff(obj) <= 1e-9 * np.abs(obj[1:]).max())
    assert obj[-1] < obj[0]


def test_sfss_fixed_point_is_stationary_and_selects_informative_features():
    X, Y = labelled_data()
    m = SFSS(mu=1.0, gamma=30.0, max_iter=200, tol=1e-12, random_state=0).fit(X, Y, labelled=np.arange(60))
    A, B, _, _, _ = sfss_system(X, Y.astype(float), m.labelled_, 1.0)
    W = m.W_
    norms = np.linalg.norm(W, axis=1)
    live = norms > 1e-3 * norms.max()
    # Eq. 16 on the non-zero rows: 2AW − 2B + γ W / ‖wⁱ‖ = 0
    G = 2 * A @ W - 2 * B + 30.0 * W / np.maximum(norms, 1e-12)[:, None]
    assert np.abs(G[live]).max() < 1e-3 * np.abs(2 * B).max()
    # the five label-carrying features have the largest row norms
    assert set(np.argsort(-m.feature_scores_)[:5]) == set(range(5))
    # labelled rows of F are clamped to their labels (U_ii = ∞)
    np.testing.assert_allclose(m.F_[:60], Y[:60], atol=1e-3)


def test_sfss_predicts_unseen_labels_and_is_deterministic():
    X, Y = labelled_data(n=400)
    tr, te = np.arange(300), np.arange(300, 400)
    a = SFSS(random_state=0).fit(X[tr], Y[tr], labelled=np.arange(30))
    b = SFSS(random_state=0).fit(X[tr], Y[tr], labelled=np.arange(30))
    np.testing.assert_allclose(a.predict_scores(X[te]), b.predict_scores(X[te]))
    chance = Y[te].mean()
    assert mean_average_precision(a.predict_scores(X[te]), Y[te]) > chance + 0.3  # measured chance + 0.449


def test_sfss_bad_input():
    X, Y = labelled_data(n=40)
    with pytest.raises(ValueError, match="no labelled"):
        SFSS().fit(X, Y, labelled=np.zeros(40, bool))
    with pytest.raises(ValueError, match="mu"):
        SFSS(mu=0).fit(X, Y)
    with pytest.raises(ValueError, match="labelled indices"):
        SFSS().fit(X, Y, labelled=[0, 99])
    with pytest.raises(ValueError, match="features"):
        SFSS().fit(X, Y).predict_scores(X[:, :3])
    with pytest.raises(ValueError, match="not fitted"):
        SFSS().predict_scores(X)
    with pytest.raises(ValueError, match="0/1"):
        SFSS().fit(X, Y * 2)


def test_fisher_scores_hand_made():
    X = np.array([[0.0, 1.0], [0.0, 2.0], [2.0, 1.0], [2.0, 2.0]])
    Y = np.array([[0], [0], [1], [1]])
    # feature 0 separates the classes with no within-class spread (score 0 by
    # the zero-denominator rule would hide it, so add a little spread)
    X[0, 0], X[1, 0] = -0.1, 0.1
    s = fisher_scores(X, Y)
    # feature 0: between = 4 * 1^2 = 4, within = 2*0.01 + 0 = 0.02 -> 200
    assert s[0] == pytest.approx(200.0)
    assert s[1] == pytest.approx(0.0)


def test_fsnm_objective_decreases_and_ranks_informative_features():
    X, Y = labelled_data()
    W, obj = fsnm_weights(X, Y, gamma=20.0, max_iter=40, tol=0)
    assert np.all(np.diff(obj) <= 1e-9 * max(obj))
    assert set(np.argsort(-np.linalg.norm(W, axis=1))[:5]) == set(range(5))
    m = FSNM(gamma=20.0, n_selected=0.25).fit(X, Y)
    assert set(m.selected_) == set(range(5))


def test_fscore_rls_selects_and_predicts():
    X, Y = labelled_data(n=400)
    m = FScoreRLS(n_selected=0.25).fit(X[:300], Y[:300])
    assert set(m.selected_) == set(range(5))
    assert mean_average_precision(m.predict_scores(X[300:]), Y[300:]) > Y[300:].mean() + 0.3  # measured + 0.508
    with pytest.raises(ValueError, match="n_selected"):
        FScoreRLS(n_selected=0).fit(X, Y)


def test_sfss_completer_ranks_observed_last_and_recovers_hidden_tags():
    X, Y = labelled_data(n=300)
    rng = np.random.default_rng(3)
    obs = Y * (rng.random(Y.shape) < 0.6)
    hidden = Y - obs
    S = SFSSCompleter(random_state=0).fit(X, obs).predict_scores()
    O = obs.astype(bool)
    rows = np.flatnonzero(O.any(1) & ~O.all(1))
    assert all(S[i, O[i]].max() < S[i, ~O[i]].min() for i in rows)
    ok = hidden.sum(1) > 0
    top = S.argmax(1)
    p1 = hidden[np.arange(300), top][ok].mean()
    chance = (hidden.sum(1) / np.maximum(Y.shape[1] - obs.sum(1), 1))[ok].mean()
    assert p1 > chance + 0.2  # measured chance + 0.603 (seeds 0-2: the same)


def test_label_share_study_shape_and_values():
    X, Y = labelled_data(n=300)
    ds = label_share_study(
        X[:200], sp.csr_matrix(Y[:200]), X[200:], sp.csr_matrix(Y[200:]), [0.05, 0.5],
        {"sfss": [lambda: SFSS(random_state=0)], "fsnm": [lambda: FSNM(gamma=0.1), lambda: FSNM(gamma=10)]},
        n_repeats=1, random_state=0)
    assert ds["map"].dims == ("method", "share", "repeat")
    assert ds["map"].shape == (2, 2, 1)
    assert np.isfinite(ds["map"].values).all() and (ds["map"].values <= 1).all()
    assert set(np.unique(ds["best_setting"].sel({"method": "fsnm"}).values)) <= {0, 1}
    with pytest.raises(ValueError, match="shares"):
        label_share_study(X[:200], Y[:200], X[200:], Y[200:], [0.0], {}, 1)


def test_label_share_study_reports_each_method_grid_as_it_ends():
    """The study's progress (a bar and the runner's ETA) counts one unit per method, share
    and repeat, each with its result line; the values do not depend on it."""
    X, Y = labelled_data(n=300)
    args = (X[:200], sp.csr_matrix(Y[:200]), X[200:], sp.csr_matrix(Y[200:]), [0.05, 0.5],
            {"sfss": [lambda: SFSS(random_state=0)], "fsnm": [lambda: FSNM(gamma=0.1)]})
    lines = []
    ds = label_share_study(*args, n_repeats=2, random_state=0, progress=lines.append)
    assert len(lines) == 2 * 2 * 2
    assert "repeat=1 share=0.5" in lines[-1] and "fsnm" in lines[-1] and "MAP=" in lines[-1]
    quiet = label_share_study(*args, n_repeats=2, random_state=0)
    np.testing.assert_array_equal(ds["map"].values, quiet["map"].values)


def test_sfss_system_iterative_solver_matches_dense(monkeypatch):
    """Above the dense-size limit, P is applied by block PCG: same A and B."""
    import hmlkit.baselines.sfss as S

    X, Y = labelled_data(n=200, d=8)
    lab = np.arange(200) < 30
    A1, B1, F1, _, _ = sfss_system(X, Y.astype(float), lab, 0.5)
    monkeypatch.setattr(S, "_DENSE_MAX_N", 10)
    A2, B2, F2, _, _ = sfss_system(X, Y.astype(float), lab, 0.5)
    np.testing.assert_allclose(A2, A1, rtol=1e-7, atol=1e-8 * np.abs(A1).max())
    np.testing.assert_allclose(B2, B1, rtol=1e-4, atol=1e-6 * np.abs(B1).max())
