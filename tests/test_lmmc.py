import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score as nmi

from hmlkit.baselines.lmmc import LatentMMC, latent_scores
from hmlkit.baselines.mmc import MMC


def _tag_toy(seed, n=240, k=4, per=2, extra=10, sep=0.7):
    """Each group owns ``per`` tags (scores ~ N(sep, 1)); absent tags have
    heavy-tailed negative scores, which a linear model cannot ignore but the
    latent tag model can switch off (h_t = 0)."""
    rng = np.random.default_rng(seed)
    m = k * per + extra
    g = np.repeat(np.arange(k), n // k)
    S = -rng.exponential(2.0, (n, m))
    for c in range(k):
        S[g == c, c * per:(c + 1) * per] = rng.normal(sep, 1.0, ((g == c).sum(), per))
    return (S - S.mean(0)) / S.std(0), g


def test_latent_inference_is_per_tag_threshold():
    m = 3
    W = np.array([[1.0, -1.0, 2.0, 0.0, 0.5, -3.0]])       # omega_t = (W[t], W[m + t])
    S = np.array([[1.0, 1.0, 1.0], [-1.0, 2.0, 2.0]])
    F, H = latent_scores(W, S)
    # sample 0: potentials 1, -0.5, -1 -> h = 1,0,0 -> f = 1/3
    assert np.array_equal(H[0, 0], [True, False, False]) and np.isclose(F[0, 0], 1 / 3)
    # sample 1: potentials -1, -1.5, 1 -> h = 0,0,1 -> f = 1/3
    assert np.array_equal(H[1, 0], [False, False, True]) and np.isclose(F[1, 0], 1 / 3)


def test_latent_scores_in_chunks_are_the_whole_array_numbers():
    """Chunked into reused buffers or not, F and H are bit for bit the direct expression."""
    from hmlkit.baselines.lmmc import tag_potentials

    rng = np.random.default_rng(4)
    S, W = rng.normal(size=(70, 9)), rng.normal(size=(5, 18))
    U = tag_potentials(W, S)
    for chunk in (1, 7, 32, 70, 500):
        F, H = latent_scores(W, S, chunk=chunk)
        np.testing.assert_array_equal(F, np.maximum(U, 0.0).mean(2))
        np.testing.assert_array_equal(H, U > 0)


def test_lmmc_beats_mmc_when_tags_disambiguate():
    # NMI gains per seed measured here: 0.181 0.030 0.190 0.040 0.010 0.019 0.062 0.005 (seeds 0-7).
    # The old test (seeds 0-3, gain > 0.05) passed on 0.110, but seeds 3-6 give 0.033: its margin was
    # luck. The mean of eight, 0.067 here (sd of such a mean ~0.027), above 0.02 leaves 0.047
    lm, mm = [], []
    for seed in range(8):
        S, g = _tag_toy(seed)
        lm.append(nmi(g, LatentMMC(4, C=10, random_state=seed).fit_predict(S)))
        mm.append(nmi(g, MMC(4, C=10, random_state=seed).fit_predict(S)))
    assert np.mean(lm) > np.mean(mm) + 0.02, (lm, mm)


def test_recovers_separated_groups_objective_and_balance():
    S, g = _tag_toy(0, sep=2.0)
    m = LatentMMC(4, C=10, random_state=0).fit(S)
    assert nmi(g, m.labels_) > 0.9  # measured 1.0 at seeds 0-2 here
    assert np.all(np.diff(m.objective_) <= 1e-6 * abs(m.objective_[0])) or len(m.objective_) == 1
    L, U = m.size_bounds_
    sizes = np.bincount(m.labels_, minlength=4)
    assert sizes.min() >= L and sizes.max() <= U
    assert m.coef_.shape == (4, S.shape[1], 2) and m.latent_.shape == (240, 4, S.shape[1])
    F = m.decision_function(S)
    assert F.shape == (240, 4) and np.all(F >= 0)


def test_deterministic():
    S, _ = _tag_toy(1)
    a = LatentMMC(4, random_state=3).fit_predict(S)
    b = LatentMMC(4, random_state=3).fit_predict(S)
    np.testing.assert_array_equal(a, b)


def test_bad_input():
    S, _ = _tag_toy(0)
    with pytest.raises(ValueError, match="n_clusters"):
        LatentMMC(0).fit(S)
    with pytest.raises(ValueError, match="n_latent"):
        LatentMMC(4, n_latent=0).fit(S)
    with pytest.raises(ValueError, match="2-D"):
        LatentMMC(4).fit(S[:, 0])
    m = LatentMMC(4, random_state=0).fit(S)
    with pytest.raises(ValueError, match="tag scores"):
        m.decision_function(S[:, :3])


def test_seed_setup_fails_at_once_on_a_bad_parameter():
    """The notebook's validation cell (its run is in test_studies_notebooks' shared quick run)."""
    from hmlkit.studies import seed_lmmc

    with pytest.raises(ValueError, match="profile must be one of"):
        seed_lmmc.setup(profile="huge")
    with pytest.raises(ValueError, match="n_seeds"):
        seed_lmmc.setup(n_seeds=0)
