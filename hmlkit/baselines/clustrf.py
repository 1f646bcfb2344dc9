"""ClustRF: the clustering random forest of Breiman / Shi & Horvath (2006).

Unsupervised forest by the pseudo two-class construction: the real samples
(class 1) against as many synthetic samples drawn from the product of the
real data's marginals (class 0; every feature column permuted independently,
which keeps each marginal and destroys the dependence between features). A
classification forest (scikit-learn ``RandomForestClassifier``, ν_try =
sqrt(d) features per split, leaves of at least ``min_samples_leaf`` = φ
samples, as the paper's forest settings) separates the two; the real samples'
leaf co-membership over the trees (Eq. 10) is the affinity, clustered by
spectral clustering on its κ-NN graph as the paper does for every forest.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from .._validation import check_n_clusters, check_not_constant, check_random_state_seed, check_X
from ..affinity import leaf_affinity
from .classic import spectral_labels


SPARSE_BELOW = 0.1  # density under which the trees are grown on CSC input


def forest_input(Z):
    """``Z`` as the trees read it fastest: CSC when under ``SPARSE_BELOW`` of it is non-zero
    (bag-of-words and tags, 1-2 % on Corel5k: scikit-learn's sparse splitter sorts the
    non-zeros only, 3-4x faster there), else dense. The trees are the same either way: a
    split is chosen among the same thresholds over the same samples."""
    import scipy.sparse as sp

    if Z.size and np.count_nonzero(Z) < SPARSE_BELOW * Z.size:
        return sp.csc_matrix(Z)
    return Z


def product_of_marginals(X, rng):
    """Synthetic data with X's marginals and independent features (each column permuted)."""
    Xs = np.empty_like(X)
    for j in range(X.shape[1]):
        Xs[:, j] = X[rng.permutation(X.shape[0]), j]
    return Xs


class ClusteringRandomForest(ClusterMixin, BaseEstimator):
    """ClustRF (module docstring): pseudo two-class forest affinity + spectral clustering.

    Attributes: ``labels_``, ``affinity_`` (csr n×n leaf co-membership of
    the real samples), ``forest_`` (the fitted scikit-learn forest).
    """

    def __init__(self, n_clusters=8, n_estimators=1000, min_samples_leaf=3, max_features="sqrt",
                 bootstrap=False, n_neighbors=20, n_jobs=None, random_state=None):
        self.n_clusters = n_clusters
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.n_neighbors = n_neighbors
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X, y=None):
        from sklearn.ensemble import RandomForestClassifier

        X = check_X(X, "X")
        check_not_constant([X], "ClustRF")
        n = X.shape[0]
        k = check_n_clusters(self.n_clusters, n)
        seed = check_random_state_seed(self.random_state)
        rng = np.random.default_rng(seed)
        Xs = product_of_marginals(X, rng)
        Z = np.vstack([X, Xs])
        target = np.r_[np.ones(n, np.int8), np.zeros(n, np.int8)]
        rf = RandomForestClassifier(n_estimators=self.n_estimators, min_samples_leaf=self.min_samples_leaf,
                                    max_features=self.max_features, bootstrap=self.bootstrap,
                                    n_jobs=self.n_jobs, random_state=seed % (2**32))
        Z = forest_input(Z)
        rf.fit(Z, target)
        self.forest_ = rf
        self.affinity_ = leaf_affinity(rf.apply(Z[:n]))
        self.labels_ = spectral_labels(self.affinity_, k, n_neighbors=self.n_neighbors,
                                              random_state=seed)
        return self

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_
