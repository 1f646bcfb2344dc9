"""Latent maximum margin clustering with the latent tag model.

Zhou, Lan, Vahdat, Mori, "Latent Maximum Margin Clustering", NIPS 2013.
Input: tag detection scores ``S`` (n x m), e.g. :func:`detection_scores`.

Model (Sec. 4, Eq. 8): a cluster ``r`` holds one template ``omega_rt`` in R^2
per tag ``t``; for a sample with scores ``s`` and latent tag presence
``h in {0,1}^m``::

    w_r . Phi(x, h) = 1/|T| sum_t h_t * omega_rt . [s_t, 1]
    f_r(x) = max_h w_r . Phi(x, h)            (Eq. 3)

Inference is per tag: ``h_t = 1`` iff ``omega_rt . [s_t, 1] > 0`` (Sec. 4), so
the latent variable is cluster-specific: a sample may switch a tag on for one
cluster and off for another.

Objective (Eq. 4/5): ``1/2 sum_r ||w_r||^2 + C/K sum_i sum_{r != y_i}
max(0, 1 + f_r(x_i) - f_{y_i}(x_i))`` with the balance bounds
``L <= |cluster| <= U``.

Alternating descent (Sec. 3.3), each round:

1. *risk evaluation*: infer ``H`` for every (sample, cluster), compute
   ``psi_it = sum_{r != t} max(0, 1 + f_r(x_i) - f_t(x_i))`` and solve the
   labelling ILP (Eq. 7) exactly, as a minimum-cost flow (see
   :mod:`hmlkit.baselines.mmc`);
2. *model update* (labels fixed): the paper uses the non-convex bundle solver
   of Do & Artieres [3] with subgradient ``Phi(x_i, h*_it)``. We use the
   latent-SVM alternation instead (Felzenszwalb et al. 2010; Yu & Joachims
   2009): fix ``h`` at its inferred value for every (sample, cluster), solve
   the resulting convex multi-class SVM exactly by dual coordinate descent
   (the same solver as MMC, warm started), re-infer ``h``; ``n_latent`` such
   steps per round. Every step is scored by the true objective (Eq. 5, with
   ``f`` maximised over ``h``) and the best model of the round is kept, so the
   reported objective never rises within a round.

Points the paper leaves open, fixed here:

- initial labels: k-means on the detection scores (``n_init=10``), as for MMC;
- initial model: ``w = 0``, where every tag's potential ties at 0; ties are
  read as *present* (``h = 1``) for the first update, which makes the first
  model the linear model ``sum_t omega_rt . [s_t, 1] / m`` (MMC with per-tag
  biases); inference proper uses the paper's strict ``> 0``;
- ``L = floor(lower N/K)``, ``U = ceil(upper N/K)`` (paper: 0.9, 1.1);
- stop when labels no longer change or after ``max_iter`` rounds.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import KMeans
from sklearn.utils.validation import _check_feature_names

from .._validation import check_fitted, check_not_constant, check_random_state_seed, check_X
from .mmc import MMC, balanced_assignment, crammer_costs, dual_cd, pass_orders


def tag_potentials(W, S):
    """``u[i, r, t] = dot(omega_rt, [s_it, 1])`` for W (K, 2m), S (n, m) -> (n, K, m)."""
    m = S.shape[1]
    return S[:, None, :] * W[None, :, :m] + W[None, :, m:]


def latent_scores(W, S, chunk=32):
    """``f_r(x_i) = 1/m sum_t max(0, u_irt)`` and the inferred ``h = u > 0``.

    ``chunk`` samples at a time into reused buffers: the whole (n, K, m) potentials are
    hundreds of MB per call at Corel5k's size (4,500 x 50 x 374), and their allocation
    and page faults were most of the fit. Same operations per element, same numbers."""
    n, m = S.shape
    k = W.shape[0]
    F = np.empty((n, k))
    H = np.empty((n, k, m), dtype=np.bool_)
    Wm, Wb = W[None, :, :m], W[None, :, m:]
    buf = np.empty((min(chunk, n), k, m))
    for i0 in range(0, n, chunk):
        i1 = min(i0 + chunk, n)
        U = buf[: i1 - i0]
        np.multiply(S[i0:i1, None, :], Wm, out=U)
        np.add(U, Wb, out=U)
        np.greater(U, 0, out=H[i0:i1])
        np.maximum(U, 0.0, out=U)
        F[i0:i1] = U.mean(2)
    return F, H


class LatentMMC(ClusterMixin, BaseEstimator):
    """Latent maximum margin clustering on tag detection scores.

    Parameters
    ----------
    n_clusters : int
    C : float, trade-off of Eq. 4 (paper's grid {10, 100, 1000}).
    balance : (lower, upper) fractions of N/K bounding every cluster size.
    max_iter : alternating-descent rounds.
    n_latent : latent re-inference steps per model update.
    max_passes, tol : dual coordinate descent limits per convex solve.
    random_state : seed of the k-means initialisation and pass orders.

    Attributes
    ----------
    labels_, coef_ (K, m, 2) tag templates ``omega_rt``, latent_ (n, K, m)
    inferred tag presence, objective_ (per round), n_iter_, size_bounds_.
    """

    def __init__(self, n_clusters=8, C=10.0, balance=(0.9, 1.1), max_iter=20, n_latent=3,
                 max_passes=50, tol=1e-2, random_state=None):
        self.n_clusters = n_clusters
        self.C = C
        self.balance = balance
        self.max_iter = max_iter
        self.n_latent = n_latent
        self.max_passes = max_passes
        self.tol = tol
        self.random_state = random_state

    def _objective(self, W, S, labels, k):
        F, H = latent_scores(W, S)
        psi = crammer_costs(F)
        return 0.5 * (W * W).sum() + self.C / k * psi[np.arange(S.shape[0]), labels].sum(), F, H

    def fit(self, X, y=None):
        S = check_X(X, "X (detection scores)", dtype=np.float64)
        check_not_constant([S], "Latent MMC", ("X (detection scores)",))
        n, m = S.shape
        # parameter checks shared with MMC
        k, (L, U) = MMC(self.n_clusters, self.C, self.balance, self.max_iter)._check_params(n)
        if int(self.n_latent) < 1:
            raise ValueError(f"n_latent must be >= 1, got {self.n_latent!r}")
        seed = check_random_state_seed(self.random_state)
        rng = np.random.default_rng(seed)
        c = self.C / k
        labels = KMeans(k, n_init=10, random_state=seed).fit_predict(S).astype(np.int64)
        W = np.zeros((k, 2 * m))
        alpha = np.zeros((n, k))
        H = np.ones((n, k, m), dtype=np.bool_)          # ties at w = 0 read as presence
        self.objective_ = []
        it = 0
        new = labels
        for it in range(1, int(self.max_iter) + 1):
            obj0, F0, H0 = self._objective(W, S, labels, k)
            best = (obj0, W.copy(), F0, H0 if it > 1 else H)   # the model before this update
            for _ in range(int(self.n_latent)):
                dual_cd(S, H, True, labels, alpha, c, W,
                        pass_orders(n, int(self.max_passes), rng), float(self.tol))
                obj, F, H = self._objective(W, S, labels, k)
                if obj < best[0]:
                    best = (obj, W.copy(), F, H)
            _, W, F, H = best
            W = W.copy()
            psi = crammer_costs(F)
            new = balanced_assignment(psi, L, U)
            self.objective_.append(float(0.5 * (W * W).sum() + c * psi[np.arange(n), new].sum()))
            if np.array_equal(new, labels):
                break
            alpha[new != labels] = 0.0
            labels = new
        self.labels_ = new
        self.coef_ = W.reshape(k, 2, m).transpose(0, 2, 1).copy()
        self.latent_ = H
        self.n_iter_ = it
        self.size_bounds_ = (L, U)
        _check_feature_names(self, X, reset=True)  # a frame's feature_names_in_ (X was checked above)
        self.n_features_in_ = m
        return self

    def decision_function(self, X):
        """Cluster scores ``f_r(x)`` (n, K) of detection scores ``X`` (a frame's columns must be
        the fitted ones, in the same order)."""
        check_fitted(self, "coef_")
        _check_feature_names(self, X, reset=False)
        S = check_X(X, "X (detection scores)", dtype=np.float64)
        k, m = self.coef_.shape[:2]
        if S.shape[1] != m:
            raise ValueError(f"X has {S.shape[1]} tag scores, the model was fitted on {m}")
        W = np.concatenate([self.coef_[:, :, 0], self.coef_[:, :, 1]], axis=1)
        return latent_scores(W, S)[0]

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_


__all__ = ["LatentMMC", "latent_scores", "tag_potentials"]
