"""AASC: Affinity Aggregation for Spectral Clustering (Huang, Chuang, Chen, CVPR 2012 [14]).

One affinity per modality ``W_k`` (Gaussian κ-NN graphs, as SpClust, see
``classic``); the aggregated affinity is ``W(v) = Σ_k v_k² W_k`` with
weights on the simplex (``v ≥ 0, Σ v_k = 1``; squared as in the authors'
code, so that the Laplacian and degree matrices are quadratic in ``v``). The
objective is the sum of the normalised-cut Rayleigh quotients of the ``c``
spectral vectors::

    J(v, F) = Σ_j  f_jᵀ L(v) f_j / f_jᵀ D(v) f_j,
    L(v) = Σ_k v_k² L_k,  D(v) = Σ_k v_k² D_k,  L_k = D_k − W_k.

AASC alternates (i) ``F`` = the ``c`` generalised eigenvectors of
``(L(v), D(v))`` with the smallest eigenvalues, and (ii) ``v`` minimising
``J`` for that ``F``. For (ii) the paper derives a Lagrangian closed form per
eigenvector; we minimise the same ``J`` over the simplex directly (scipy
SLSQP on the K weights with the coefficients ``α_jk = f_jᵀ D_k f_j`` and
``β_jk = f_jᵀ L_k f_j`` precomputed, so each evaluation costs O(cK)). The
loop stops when ``v`` moves less than ``tol``; the clusters are the spectral
clustering of ``W(v)`` (``affinity_``), ``weights_`` holds ``v``.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, ClusterMixin

from .._validation import check_n_clusters, check_random_state_seed, check_X
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


def _weights_for(F, Ds, Ls, v0):
    """Minimise J(v) = Σ_j (Σ_k v_k² β_jk) / (Σ_k v_k² α_jk) on the simplex."""
    alpha = np.stack([np.einsum("ij,ij->j", F, D @ F) for D in Ds], axis=1)  # (c, K)
    beta = np.stack([np.einsum("ij,ij->j", F, L @ F) for L in Ls], axis=1)
    K = len(Ds)
    if K == 1:
        return np.ones(1), float((beta / np.maximum(alpha, 1e-300)).sum())

    def J(v):
        u = v * v
        return float(np.sum((beta @ u) / np.maximum(alpha @ u, 1e-300)))

    res = minimize(J, v0, method="SLSQP", bounds=[(0.0, 1.0)] * K,
                   constraints=({"type": "eq", "fun": lambda v: v.sum() - 1.0},),
                   options={"ftol": 1e-10, "maxiter": 200})
    v = np.clip(res.x, 0.0, None)
    v = v / v.sum()
    if J(v) > J(v0):  # never accept a worse point
        v = v0
    return v, J(v)


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
        views = [check_X(V, f"views[{i}]" if i > 1 else "XY"[i], dtype=np.float64) for i, V in enumerate(views)]
        n = views[0].shape[0]
        for i, V in enumerate(views[1:], 1):
            if V.shape[0] != n:
                raise ValueError(f"{'Y' if i == 1 else f'views[{i}]'} has {V.shape[0]} rows but X has {n} samples")
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
