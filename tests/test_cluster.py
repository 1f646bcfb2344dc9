"""HMLClustering and spectral clustering from an affinity."""
import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score as nmi

from hmlkit import HMLClustering
from hmlkit.cluster import spectral_from_affinity


def test_spectral_from_affinity_block_matrix():
    g = np.repeat(np.arange(3), 10)
    A = (g[:, None] == g[None, :]).astype(float) + 0.01
    labels = spectral_from_affinity(A, 3, n_neighbors=5, random_state=0)
    assert nmi(g, labels) == pytest.approx(1.0)


def test_hml_clustering_recovers_groups_with_untagged_samples():
    rng = np.random.default_rng(0)
    n = 150
    g = np.repeat(np.arange(3), n // 3)
    X = rng.normal(size=(n, 6)).astype(np.float32)
    X[:, 0] += 4 * g
    Y = np.zeros((n, 6), np.uint8)
    Y[np.arange(n), g] = 1
    Y[np.arange(n), 3 + rng.integers(0, 3, n)] = 1
    Y[rng.random(n) < 0.3] = 0  # untagged samples follow the visual splits
    c = HMLClustering(n_clusters=3, n_estimators=40, random_state=0)
    labels = c.fit_predict(X, Y, [np.arange(3), np.arange(3, 6)])
    assert nmi(g, labels) > 0.85
    assert c.affinity_.shape == (n, n) and (c.affinity_ != c.affinity_.T).nnz == 0
    again = HMLClustering(n_clusters=3, n_estimators=40, random_state=0, n_jobs=1).fit_predict(
        X, Y, [np.arange(3), np.arange(3, 6)])
    np.testing.assert_array_equal(labels, again)


def test_more_clusters_than_samples_is_an_error():
    X = np.zeros((4, 2), np.float32)
    with pytest.raises(ValueError, match="larger than the number of samples"):
        HMLClustering(n_clusters=5, n_estimators=2).fit(X, np.eye(4))
    with pytest.raises(ValueError, match="larger than the number of samples"):
        spectral_from_affinity(np.eye(4), 5)
