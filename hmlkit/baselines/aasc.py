"""AASC: Affinity Aggregation for Spectral Clustering (Huang, Chuang, Chen, CVPR 2012 [14]).

One affinity per modality ``W_k`` (Gaussian κ-NN graphs, as SpClust, see
``classic``); the aggregated affinity is ``W(v) = Σ_k v_k² W_k`` with
weights on the simplex (``v ≥ 0, Σ v_k = 1``; squared as in the authors'
code, so that the Laplacian and degree matrices are quadratic in ``v``)::

    L(v) = Σ_k v_k² L_k,  D(v) = Σ_k v_k² D_k,  L_k = D_k − W_k.

AASC alternates (i) ``F`` = the ``c`` generalised eigenvectors of
``(L(v), D(v))`` with the smallest eigenvalues, and (ii) ``v`` minimising
``f' L(v) f`` for the first non-trivial one, f, under the constraint that keeps it
normalised, ``f' D(v) f = 1``, on the simplex: the paper's Lagrangian solution,
``v_k ∝ 1 / (α_k (γ_k − λ))`` with ``α_k = f' D_k f``, ``γ_k = f' L_k f / α_k`` and λ
from the two constraints, as in the authors' code (its "1-D solution"). Without that
constraint the quotient ``f' L(v) f / f' D(v) f`` does not change when ``v`` is scaled,
and its minimum is always one view alone. The loop stops when ``v`` moves less than
``tol``; the clusters are the spectral clustering of ``W(v)`` (``affinity_``),
``weights_`` holds ``v`` and ``objective_`` the value of ``f' L(v) f`` after each step.
"""
from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from sklearn.base import BaseEstimator, ClusterMixin

from .._validation import check_int, check_n_clusters, check_not_constant, check_random_state_seed, check_X
from .classic import knn_gaussian_affinity, spectral_labels


def _spectral_vectors(W, c, rng):
    """The ``c`` generalised eigenvectors of (L, D) with the smallest eigenvalues."""
    W = sp.csr_matrix(W, dtype=np.float64)
    n = W.shape[0]
    deg = np.asarray(W.sum(axis=1)).ravel() + 1e-12
    dinv = 1.0 / np.sqrt(deg)
    N = sp.diags(dinv) @ W @ sp.diags(dinv)
    if n <= max(4 * c, 200):
        _, U = np.linalg.eigh(N.toarray())
        U = U[:, -c:]
    else:
        _, U = spla.eigsh(N, k=c, which="LA", v0=rng.uniform(0.5, 1.5, n), tol=1e-6)
    return U * dinv[:, None]


def _stationary_weights(alpha, beta):
    """The stationary points of  sum_k v_k^2 beta_k  subject to  sum_k v_k^2 alpha_k = 1  and
    sum_k v_k = 1 (AASC's Lagrangian): v_k = mu / (alpha_k (gamma_k - lam)), gamma_k =
    beta_k / alpha_k, mu = 1 / sum_k 1 / (alpha_k (gamma_k - lam)), with lam a root of
    (sum_k 1 / (alpha_k (gamma_k - lam)))^2 = sum_k 1 / (alpha_k (gamma_k - lam)^2), found
    between consecutive poles gamma_k. Returns a list of weight vectors."""
    from scipy.optimize import brentq

    gamma = beta / alpha
    if alpha.size == 1:
        return [np.ones(1)]

    def h(lam):
        c = 1.0 / (alpha * (gamma - lam))
        return c.sum() ** 2 - (c * c * alpha).sum()

    poles = np.unique(gamma)
    span = max(poles[-1] - poles[0], 1.0)
    grids = [poles[0] - span * np.logspace(-6, 6, 200)[::-1], poles[-1] + span * np.logspace(-6, 6, 200)]
    grids += [a + (b - a) * np.linspace(1e-6, 1 - 1e-6, 400) for a, b in zip(poles[:-1], poles[1:])]
    out = []
    for grid in grids:
        vals = np.array([h(x) for x in grid])
        for i in np.flatnonzero(np.sign(vals[:-1]) * np.sign(vals[1:]) < 0):
            lam = brentq(h, grid[i], grid[i + 1], xtol=1e-14, rtol=1e-14)
            c = 1.0 / (alpha * (gamma - lam))
            out.append(c / c.sum())
    return out


def _weights_for(F, Ds, Ls, v0):
    """AASC's weight step (Huang, Chuang, Chen; the authors' 1-D solution): f, the first
    non-trivial generalised eigenvector of (L(v0), D(v0)) among ``F``, scaled so that
    f' D(v0) f = 1; the new v minimises f' L(v) f = sum_k v_k^2 beta_k over the weights that
    keep f normalised, f' D(v) f = sum_k v_k^2 alpha_k = 1, on the simplex (v >= 0,
    sum v = 1). The normalisation is what makes the best mix interior: the ratio
    f' L(v) f / f' D(v) f alone is scale-free in v and always minimised at a corner, one
    view. Candidates: the Lagrangian's stationary points on every face of the simplex
    (:func:`_stationary_weights`) and v0 itself (feasible by construction), so the
    objective never rises. Returns (v, f' L(v) f)."""
    alpha = np.stack([np.einsum("ij,ij->j", F, D @ F) for D in Ds], axis=1)  # (c, K)
    beta = np.stack([np.einsum("ij,ij->j", F, L @ F) for L in Ls], axis=1)
    K = len(Ds)
    u0 = v0 * v0
    norm = alpha @ u0
    quotient = (beta @ u0) / np.maximum(norm, 1e-300)
    if K == 1 or F.shape[1] < 2:  # one view, or only the trivial (constant) vector
        j = int(np.argmin(quotient))
        return v0, float(quotient[j])
    j = int(np.argsort(quotient)[1])  # the smallest quotient is the trivial vector's (about 0)
    a, b = alpha[j] / norm[j], beta[j] / norm[j]  # f scaled to f' D(v0) f = 1
    best, best_obj = v0, float(b @ u0)
    for size in range(1, K + 1):
        for S in itertools.combinations(range(K), size):
            S = list(S)
            if (a[S] <= 0).any():
                continue
            for vS in _stationary_weights(a[S], b[S]):
                v = np.zeros(K)
                v[S] = vS
                if v.min() < -1e-12 or abs(a @ (v * v) - 1.0) > 1e-8:
                    continue
                v = np.clip(v, 0.0, None)
                obj = float(b @ (v * v))
                if obj < best_obj - 1e-15:
                    best, best_obj = v / v.sum(), obj
    return best, best_obj


class AffinityAggregationSpectralClustering(ClusterMixin, BaseEstimator):
    """AASC over the visual and tag modalities: ``fit(X, Y, layers=None)``.

    Extra views may be passed as ``views=[V1, V2, ...]`` to ``fit`` instead.
    Attributes: ``labels_``, ``affinity_`` (aggregated W(v), csr),
    ``weights_`` (v), ``objective_`` (J per iteration), ``n_iter_``.
    """

    def __init__(self, n_clusters=8, n_neighbors=20, max_iter=20, tol=1e-4, random_state=None):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, Y=None, layers=None, views=None):
        if views is None:
            if Y is None:
                raise ValueError("AASC needs at least two modalities: fit(X, Y) or fit(views=[...])")
            views = [X, Y]
        check_int(self.max_iter, "max_iter")  # 0 ended in an UnboundLocalError
        views = [check_X(V, f"views[{i}]" if i > 1 else "XY"[i], dtype=np.float64) for i, V in enumerate(views)]
        n = views[0].shape[0]
        for i, V in enumerate(views[1:], 1):
            if V.shape[0] != n:
                raise ValueError(f"{'Y' if i == 1 else f'views[{i}]'} has {V.shape[0]} rows but X has {n} samples")
        check_not_constant(views, "AASC")
        c = check_n_clusters(self.n_clusters, n)
        seed = check_random_state_seed(self.random_state)
        rng = np.random.default_rng(seed)
        Ws = [knn_gaussian_affinity(V, self.n_neighbors) for V in views]
        Ds = [sp.diags(np.asarray(W.sum(axis=1)).ravel()) for W in Ws]
        Ls = [(D - W).tocsr() for D, W in zip(Ds, Ws)]
        K = len(Ws)
        v = np.full(K, 1.0 / K)
        self.objective_ = []
        for it in range(1, self.max_iter + 1):
            W = sum(vk * vk * Wk for vk, Wk in zip(v, Ws))
            F = _spectral_vectors(W, c, np.random.default_rng(seed))
            v_new, obj = _weights_for(F, Ds, Ls, v)
            self.objective_.append(obj)
            moved = np.abs(v_new - v).max()
            v = v_new
            if moved < self.tol:
                break
        self.n_iter_ = it
        self.weights_ = v
        self.affinity_ = sum(vk * vk * Wk for vk, Wk in zip(v, Ws)).tocsr()
        self.labels_ = spectral_labels(self.affinity_, c, n_neighbors=self.n_neighbors, random_state=int(rng.integers(2**31)))
        return self

    def fit_predict(self, X, Y=None, layers=None, views=None):
        return self.fit(X, Y, layers=layers, views=views).labels_
