"""Clustering from an affinity (Sec 3.3): kappa-NN graph, symmetric
normalisation D^-1/2 A D^-1/2, spectral clustering (scikit-learn)."""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import SpectralClustering

from ._validation import check_n_clusters, check_X
from .affinity import knn_affinity, knn_graph_from_neighbors, leaf_knn


def spectral_from_graph(W, n_clusters, random_state=None):
    """Spectral clustering of a symmetric sparse graph ``W``.

    scikit-learn's ``SpectralClustering(affinity="precomputed")`` embeds with
    the normalised Laplacian, i.e. the leading eigenvectors of
    D^-1/2 W D^-1/2, then runs k-means on the embedding. Isolated samples
    (no edge) get a tiny self-loop so the normalisation is defined.
    """
    W = sp.csr_matrix(W, dtype=np.float64)
    n = W.shape[0]
    n_clusters = check_n_clusters(n_clusters, n)
    if n_clusters == 1:
        return np.zeros(n, dtype=np.int64)
    deg = np.asarray(W.sum(axis=1)).ravel()
    if (deg == 0).any():
        W = W + sp.diags((deg == 0).astype(np.float64) * 1e-8)
    seed = None if random_state is None else int(np.random.RandomState(random_state).randint(2**31 - 1))
    sc = SpectralClustering(n_clusters=n_clusters, affinity="precomputed", random_state=seed,
                            assign_labels="kmeans", n_init=10)
    with warnings.catch_warnings():
        # sklearn warns when the kNN graph has several components; the
        # embedding is still valid (components separate), so keep output quiet.
        warnings.filterwarnings("ignore", message="Graph is not fully connected")
        return sc.fit_predict(W).astype(np.int64)


def spectral_from_affinity(A, n_clusters, n_neighbors=20, random_state=None):
    """kNN-sparsify an affinity (dense or sparse n x n), symmetrise, and run
    normalised spectral clustering. Returns labels (n,) int64."""
    W = knn_affinity(A, n_neighbors)
    return spectral_from_graph(W, n_clusters, random_state)


class HMLClustering(ClusterMixin, BaseEstimator):
    """Cluster tagged visual data with an HML-RF affinity (Sec 3.3).

    Fits an :class:`hmlkit.HMLForest` on (X, Y, layers), builds the
    kappa-NN graph of its affinity (Eq. 10; kappa = ``n_neighbors``),
    normalises it symmetrically and runs spectral clustering.

    Parameters
    ----------
    n_clusters : int
    n_neighbors : int, default 20
        kappa of the kNN graph.
    random_state : int or None
    **forest_params : passed to :class:`hmlkit.HMLForest` (n_estimators,
        min_samples_leaf, max_features, hierarchy, correlations, bootstrap,
        n_jobs, verbose).

    Attributes
    ----------
    labels_ : (n,) int64
    forest_ : the fitted HMLForest
    affinity_ : csr (n, n) the symmetric kNN affinity graph used
    """

    def __init__(self, n_clusters=8, n_neighbors=20, random_state=None, n_estimators=1000,
                 min_samples_leaf=3, max_features="sqrt", hierarchy=True, correlations=True,
                 bootstrap=False, n_jobs=None, verbose=False):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.random_state = random_state
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.hierarchy = hierarchy
        self.correlations = correlations
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _forest(self):
        from .forest import HMLForest

        return HMLForest(n_estimators=self.n_estimators, min_samples_leaf=self.min_samples_leaf,
                         max_features=self.max_features, hierarchy=self.hierarchy,
                         correlations=self.correlations, bootstrap=self.bootstrap,
                         random_state=self.random_state, n_jobs=self.n_jobs, verbose=self.verbose)

    def fit(self, X, Y, layers=None):
        X = check_X(X)
        check_n_clusters(self.n_clusters, X.shape[0])
        self.forest_ = self._forest().fit(X, Y, layers)
        idx, w = leaf_knn(self.forest_.train_leaves_, self.n_neighbors)
        self.affinity_ = knn_graph_from_neighbors(idx, w, X.shape[0])
        self.labels_ = spectral_from_graph(self.affinity_, self.n_clusters, self.random_state)
        return self

    def fit_predict(self, X, Y, layers=None):
        return self.fit(X, Y, layers).labels_
