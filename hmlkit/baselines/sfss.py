"""SFSS: Structural Feature Selection with Sparsity (Ma, Yang, Nie, Uijlings,
Sebe, ACM MM 2011), and the two supervised comparison methods of its paper,
F-score + regularised least squares (``FScoreRLS``) and FSNM (Nie, Huang,
Cai, Ding, NIPS 2010).

SFSS solves (its Eq. 6)

    min_{F,W,b} Tr(Fᵀ L F) + Tr((F−Y)ᵀ U (F−Y)) + μ‖XᵀW + 1bᵀ − F‖²_F + γ‖W‖_{2,1}

with ``L`` the Laplacian of the 0/1 kNN graph (k = 15) over labelled and
unlabelled samples, ``U`` the decision-rule matrix (``U_ii = ∞`` for labelled
samples, 1 otherwise). Eliminating ``b`` (Eq. 7) and ``F = PQ`` (Eq. 10)
leaves Eq. 14, ``min_W Tr(WᵀAW) − 2Tr(BᵀW) + γ‖W‖_{2,1}`` with
``A = XH(μI − μ²P)HXᵀ``, ``B = μXHPUY``, ``P = (L + U + μH)⁻¹``,
solved by Algorithm 1: ``W ← (D A + γI)⁻¹ D B``, ``D = diag(2‖wⁱ‖)``.

Implementation notes (what the paper leaves open, and how it is computed):

* ``U_ii = ∞`` is the large finite ``labelled_weight`` (1e6 by default): the
  algebra of Eq. 10-14 needs ``P`` finite; with 1e6 the labelled ``F`` rows
  equal ``Y`` to ~1e-6.
* ``P`` is never formed. ``L + U + μH = K − (μ/n) 11ᵀ`` with ``K = L + U +
  μI`` sparse SPD, so ``P v`` is a solve with ``K`` plus a Sherman-Morrison
  rank-one correction. The solve is a dense Cholesky up to 1500 samples and
  a Jacobi-preconditioned block conjugate gradient above (O(n k) memory;
  sparse LU fills in almost fully on kNN graphs).
  Since ``HXᵀ`` is the column-centred data ``X_c``, ``A = μ X_cᵀX_c −
  μ² X_cᵀ P X_c`` and ``B = μ X_cᵀ P U Y`` (``XH = X_cᵀ``; our X is n × d).
* The iteration is written ``W = S (S A S + γI)⁻¹ S B`` with ``S = D^½``, an
  SPD solve (Cholesky), identical to ``(DA + γI)⁻¹DB``; a row with
  ``‖wⁱ‖ = 0`` gets ``D_ii = 2·eps`` (the usual safeguard of this
  reweighting).
* Prediction: the learned classifier ``XᵀW + b`` (the paper's annotation rule
  for unseen images) for any ``X``; the transductive ``F`` of the training
  samples is kept as ``F_``.
* For tag completion (``SFSSCompleter``) every sample with at least one
  observed tag is "labelled" with its observed tags, the others unlabelled;
  scores for all samples are the classifier outputs ``XW + b`` (the labelled
  ``F`` rows are clamped to the observed tags, so they cannot rank the
  missing ones); observed tags are ranked last.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.linear_model import Ridge
from sklearn.neighbors import kneighbors_graph

from .._validation import check_int, check_random_state_seed, check_X, check_Y
from ..tag_scores import TransductiveScoresMixin, rank_observed_last

_EPS = 1e-8


def knn_laplacian(X, n_neighbors=15):
    """``L = D − G`` of the symmetrised 0/1 kNN graph of ``X`` (SFSS Sec 3.1)."""
    k = min(check_int(n_neighbors, "n_neighbors"), X.shape[0] - 1)
    if k < 1:
        return sp.csr_matrix((X.shape[0], X.shape[0]))
    G = kneighbors_graph(X, k, mode="connectivity", include_self=False)
    G = G.maximum(G.T).tocsr().astype(np.float64)
    return (sp.diags(np.asarray(G.sum(axis=1)).ravel()) - G).tocsr()


def l21_norm(W):
    return float(np.linalg.norm(W, axis=1).sum())


def sfss_objective(W, A, B, gamma):
    """Eq. 14: ``Tr(WᵀAW) − 2Tr(BᵀW) + γ‖W‖_{2,1}``."""
    return float(np.sum(W * (A @ W)) - 2.0 * np.sum(B * W) + gamma * l21_norm(W))


def _reweighted_l21_step(A, B, W, gamma):
    """One step of Algorithm 1: ``W ← (D A + γI)⁻¹ D B``, D = diag(2‖wⁱ‖)."""
    s = np.sqrt(2.0 * np.maximum(np.linalg.norm(W, axis=1), _EPS))
    M = (s[:, None] * A) * s[None, :]
    M[np.diag_indices_from(M)] += gamma
    return s[:, None] * sla.solve(M, s[:, None] * B, assume_a="pos")


_DENSE_MAX_N = 1500


def _block_pcg(K, B, tol=1e-10, max_iter=2000):
    """Solve ``K X = B`` (K sparse SPD) for all columns at once by conjugate
    gradients with a Jacobi preconditioner. The preconditioner absorbs the
    huge ``U_ii`` of labelled samples, leaving a condition number of about
    (max degree + μ) / μ."""
    dinv = 1.0 / K.diagonal()
    X = dinv[:, None] * B
    R = B - K @ X
    Z = dinv[:, None] * R
    Pd = Z.copy()
    rz = np.einsum("ij,ij->j", R, Z)
    bnorm = np.maximum(np.linalg.norm(B, axis=0), 1e-300)
    for _ in range(max_iter):
        if (np.linalg.norm(R, axis=0) <= tol * bnorm).all():
            break
        KP = K @ Pd
        pkp = np.einsum("ij,ij->j", Pd, KP)
        alpha = np.divide(rz, pkp, out=np.zeros_like(rz), where=pkp > 0)
        X += alpha * Pd
        R -= alpha * KP
        Z = dinv[:, None] * R
        rz_new = np.einsum("ij,ij->j", R, Z)
        beta = np.divide(rz_new, rz, out=np.zeros_like(rz), where=rz > 0)
        Pd = Z + beta * Pd
        rz = rz_new
    return X


def _spd_solver(K):
    """``V -> K⁻¹V`` for the sparse SPD ``K = L + U + μI``: dense Cholesky up
    to ``_DENSE_MAX_N`` samples (a kNN-graph matrix fills in almost fully
    under sparse LU), block Jacobi-preconditioned CG above."""
    if K.shape[0] <= _DENSE_MAX_N:
        c = sla.cho_factor(K.toarray(), lower=True)
        return lambda V: sla.cho_solve(c, np.asarray(V, dtype=np.float64))
    return lambda V: _block_pcg(K, np.asarray(V, dtype=np.float64))


def sfss_system(X, Y, labelled, mu, n_neighbors=15, labelled_weight=1e6):
    """Steps 1-6 of Algorithm 1 without forming ``P``.

    ``X`` (n, d), ``Y`` (n, c) dense 0/1 (unlabelled rows are zeroed),
    ``labelled`` bool (n,). Returns ``A`` (d, d), ``B`` (d, c) of Eq. 14 and
    ``P U Y``, ``P X_c``, the column means of X (for ``F`` and ``b``).
    """
    n = X.shape[0]
    Y = np.where(labelled[:, None], Y, 0.0)  # unlabelled y_i = 0 (Sec 3.1)
    u = np.where(labelled, labelled_weight, 1.0)
    # P v = (K − (μ/n) 1 1ᵀ)⁻¹ v with K = L + U + μI sparse (Sherman-Morrison)
    L = knn_laplacian(X, n_neighbors)
    K = (L + sp.diags(u + mu)).tocsr()
    solve_K = _spd_solver(K)
    ones = np.ones((n, 1))
    k1 = solve_K(ones)[:, 0]
    denom = 1.0 - (mu / n) * k1.sum()

    def P(V):
        KV = solve_K(V)
        return KV + np.outer(k1, (mu / n) * KV.sum(axis=0) / denom)

    mean = X.mean(axis=0)
    Xc = X - mean  # = H Xᵀ in the paper's d × n notation, transposed
    PXc = P(Xc)
    PUY = P(u[:, None] * Y)
    A = mu * (Xc.T @ Xc) - mu * mu * (Xc.T @ PXc)
    A = 0.5 * (A + A.T)
    B = mu * (Xc.T @ PUY)
    return A, B, PUY, PXc, mean


class SFSS(BaseEstimator):
    """Semi-supervised Structural Feature Selection with Sparsity (Eq. 6).

    Parameters
    ----------
    mu, gamma : float > 0, the regression and ℓ2,1 weights of Eq. 6.
    n_neighbors : int, k of the kNN graph Laplacian (the paper uses 15).
    labelled_weight : float, the finite stand-in for ``U_ii = ∞``.
    max_iter, tol : Algorithm 1 stops when the relative decrease of Eq. 14
        falls below ``tol``.
    random_state : seed of the random initial ``W_0`` (Algorithm 1, step 7).

    ``fit(X, Y, labelled=None)``: ``Y`` (n, c) 0/1 labels; ``labelled`` a
    boolean mask (n,) or index array of the labelled samples (default: the
    samples with at least one label). Unlabelled rows of ``Y`` are ignored.

    Attributes: ``W_`` (d, c), ``b_`` (c,), ``F_`` (n, c) transductive label
    scores, ``objective_`` list of Eq. 14 values (one per iterate, starting
    at ``W_0``), ``n_iter_``, ``feature_scores_`` (row norms of ``W_``).
    """

    def __init__(self, mu=1.0, gamma=1.0, n_neighbors=15, labelled_weight=1e6, max_iter=50, tol=1e-6,
                 random_state=None):
        self.mu = mu
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.labelled_weight = labelled_weight
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _check_params(self):
        for name in ("mu", "gamma", "labelled_weight"):
            v = getattr(self, name)
            if not np.isfinite(v) or float(v) <= 0:
                raise ValueError(f"{name} must be a positive finite number, got {v!r}")
        if int(self.n_neighbors) < 1:
            raise ValueError(f"n_neighbors must be a positive integer, got {self.n_neighbors!r}")
        if int(self.max_iter) < 1:
            raise ValueError(f"max_iter must be >= 1, got {self.max_iter!r}")

    def fit(self, X, Y, labelled=None):
        self._check_params()
        X = check_X(X, dtype=np.float64, min_samples=2)
        Yc = check_Y(Y, n_samples=X.shape[0])
        n, d = X.shape
        lab = _labelled_mask(labelled, Yc, n)
        mu, gamma = float(self.mu), float(self.gamma)
        Yd = Yc.toarray().astype(np.float64)

        A, B, PUY, PXc, mean = sfss_system(X, Yd, lab, mu, self.n_neighbors, float(self.labelled_weight))

        rng = np.random.default_rng(check_random_state_seed(self.random_state))
        W = rng.standard_normal((d, Yd.shape[1]))
        obj = [sfss_objective(W, A, B, gamma)]
        it = 0
        for it in range(1, int(self.max_iter) + 1):
            W = _reweighted_l21_step(A, B, W, gamma)
            obj.append(sfss_objective(W, A, B, gamma))
            if abs(obj[-2] - obj[-1]) <= float(self.tol) * max(abs(obj[-1]), 1.0):
                break

        # F = P Q, Q = U Y + μ H Xᵀ W (Eq. 10); b from Eq. 7
        F = PUY + mu * (PXc @ W)
        self.W_ = W
        self.b_ = F.mean(axis=0) - mean @ W
        self.F_ = F
        self.objective_ = obj
        self.n_iter_ = it
        self.labelled_ = lab
        self.feature_scores_ = np.linalg.norm(W, axis=1)
        self.n_features_in_ = d
        return self

    def decision_function(self, X):
        if not hasattr(self, "W_"):
            raise ValueError("SFSS is not fitted; call fit(X, Y) first")
        X = check_X(X, dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, SFSS was fitted with {self.n_features_in_}")
        return X @ self.W_ + self.b_

    def predict_scores(self, X):
        """Label scores ``XᵀW + b`` of the samples ``X`` (n, c)."""
        return self.decision_function(X)


def _labelled_mask(labelled, Y, n):
    if labelled is None:
        lab = np.asarray(Y.getnnz(axis=1) > 0)
    else:
        labelled = np.asarray(labelled)
        if labelled.dtype == bool:
            if labelled.shape != (n,):
                raise ValueError(f"labelled mask must have shape ({n},), got {labelled.shape}")
            lab = labelled.copy()
        else:
            if labelled.size and (labelled.min() < 0 or labelled.max() >= n):
                raise ValueError(f"labelled indices must lie in [0, {n})")
            lab = np.zeros(n, dtype=bool)
            lab[labelled.astype(np.int64)] = True
    if not lab.any():
        raise ValueError("no labelled sample: at least one sample must be labelled")
    return lab


class SFSSCompleter(TransductiveScoresMixin, BaseEstimator):
    """SFSS as a tag completer (transductive): samples with at least one
    observed tag are the labelled part, their observed tags the labels; the
    scores of every sample are the SFSS classifier outputs ``XW + b``,
    observed tags ranked last. Parameters as :class:`SFSS`."""

    def __init__(self, mu=1.0, gamma=1.0, n_neighbors=15, labelled_weight=1e6, max_iter=50, tol=1e-6,
                 random_state=None):
        self.mu = mu
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.labelled_weight = labelled_weight
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, Y, layers=None):
        X = check_X(X, dtype=np.float64)
        Y = check_Y(Y, n_samples=X.shape[0])
        self.model_ = SFSS(**self.get_params()).fit(X, Y)
        self.scores_ = rank_observed_last(self.model_.decision_function(X), Y)
        return self


# --------------------------------------------------------------- comparisons

def fisher_scores(X, Y):
    """Per-feature Fisher score, averaged over the labels (each label taken as
    a positive/negative class split): ``Σ_k n_k (μ_k − μ)² / Σ_k n_k σ_k²``.
    The multi-label averaging is our choice (the SFSS paper does not say)."""
    X = np.asarray(X, dtype=np.float64)
    Yd = Y.toarray().astype(bool) if sp.issparse(Y) else np.asarray(Y).astype(bool)
    mu = X.mean(axis=0)
    n = X.shape[0]
    scores = np.zeros(X.shape[1])
    used = 0
    S1, S2 = X.T @ Yd.astype(np.float64), (X * X).T @ Yd.astype(np.float64)  # (d, c)
    T1, T2 = X.sum(axis=0), (X * X).sum(axis=0)
    for j in range(Yd.shape[1]):
        npos = Yd[:, j].sum()
        nneg = n - npos
        if npos == 0 or nneg == 0:
            continue
        mp, mn = S1[:, j] / npos, (T1 - S1[:, j]) / nneg
        vp = S2[:, j] / npos - mp**2
        vn = (T2 - S2[:, j]) / nneg - mn**2
        between = npos * (mp - mu) ** 2 + nneg * (mn - mu) ** 2
        within = npos * vp + nneg * vn
        scores += np.divide(between, within, out=np.zeros_like(between), where=within > 1e-12)
        used += 1
    return scores / max(used, 1)


def fsnm_weights(X, Y, gamma=1.0, max_iter=50, tol=1e-4):
    """FSNM (Nie et al. 2010): ``min_W ‖XW − Y‖_{2,1} + γ‖W‖_{2,1}`` by the
    same reweighting as SFSS (each step an exact weighted ridge problem:
    ``W = (XᵀD₁X + γD₂)⁻¹XᵀD₁Y``, ``D₁ = diag(1/2‖rᵢ‖)``, ``D₂ = diag(1/2‖wʲ‖)``,
    monotone decrease as in Nie et al.'s proof). X and Y are centred first
    (the bias of Nie et al.'s augmented feature). Returns (W, objectives)."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    Xc, Yc = X - X.mean(axis=0), Y - Y.mean(axis=0)
    d = X.shape[1]
    W = sla.solve(Xc.T @ Xc + gamma * np.eye(d), Xc.T @ Yc, assume_a="pos")

    def objective(W):
        return l21_norm(Xc @ W - Yc) + gamma * l21_norm(W)

    obj = [objective(W)]
    for _ in range(int(max_iter)):
        d1 = 0.5 / np.maximum(np.linalg.norm(Xc @ W - Yc, axis=1), _EPS)
        d2 = 0.5 / np.maximum(np.linalg.norm(W, axis=1), _EPS)
        M = (Xc.T * d1) @ Xc
        M[np.diag_indices_from(M)] += gamma * d2
        W = sla.solve(M, (Xc.T * d1) @ Yc, assume_a="pos")
        obj.append(objective(W))
        if abs(obj[-2] - obj[-1]) <= tol * max(abs(obj[-1]), 1.0):
            break
    return W, obj


class _SelectThenRLS(BaseEstimator):
    """Feature selection on the labelled samples, then regularised least
    squares (ridge, one output per label) on the selected features, as in the
    SFSS paper's protocol (Sec 4.2)."""

    def _scores(self, X, Y):  # pragma: no cover - abstract
        raise NotImplementedError

    def fit(self, X, Y, labelled=None):
        X = check_X(X, dtype=np.float64, min_samples=2)
        Yc = check_Y(Y, n_samples=X.shape[0])
        lab = _labelled_mask(labelled, Yc, X.shape[0])
        frac = float(self.n_selected)
        if not 0.0 < frac <= 1.0:
            raise ValueError(f"n_selected must be a fraction in (0, 1], got {self.n_selected!r}")
        if float(self.alpha) <= 0:
            raise ValueError(f"alpha must be > 0, got {self.alpha!r}")
        Xl, Yl = X[lab], Yc[lab]
        scores = self._scores(Xl, Yl)
        k = max(1, int(round(frac * X.shape[1])))
        self.feature_scores_ = scores
        self.selected_ = np.sort(np.argsort(-scores, kind="stable")[:k])
        self.rls_ = Ridge(alpha=float(self.alpha)).fit(Xl[:, self.selected_], Yl.toarray().astype(np.float64))
        self.n_features_in_ = X.shape[1]
        return self

    def predict_scores(self, X):
        if not hasattr(self, "rls_"):
            raise ValueError(f"{type(self).__name__} is not fitted; call fit(X, Y) first")
        X = check_X(X, dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, the model was fitted with {self.n_features_in_}")
        out = self.rls_.predict(X[:, self.selected_])
        return out.reshape(X.shape[0], -1)


class FScoreRLS(_SelectThenRLS):
    """F-score (Fisher score) feature selection + regularised least squares.

    n_selected : fraction of the features kept; alpha : ridge penalty.
    """

    def __init__(self, n_selected=0.5, alpha=1.0):
        self.n_selected = n_selected
        self.alpha = alpha

    def _scores(self, X, Y):
        return fisher_scores(X, Y)


class FSNM(_SelectThenRLS):
    """Feature selection via joint ℓ2,1-norm minimisation (Nie et al., NIPS
    2010) + regularised least squares. Features ranked by ‖wʲ‖.

    gamma : ℓ2,1 weight; n_selected : fraction kept; alpha : ridge penalty.
    """

    def __init__(self, gamma=1.0, n_selected=0.5, alpha=1.0, max_iter=50):
        self.gamma = gamma
        self.n_selected = n_selected
        self.alpha = alpha
        self.max_iter = max_iter

    def _scores(self, X, Y):
        if float(self.gamma) <= 0:
            raise ValueError(f"gamma must be > 0, got {self.gamma!r}")
        W, self.objective_ = fsnm_weights(X, Y.toarray(), float(self.gamma), self.max_iter)
        self.W_ = W
        return np.linalg.norm(W, axis=1)


class _SupervisedCompleter(TransductiveScoresMixin, BaseEstimator):
    """Tag completion wrapper for a supervised annotator: labelled = samples
    with an observed tag; scores of every sample ranked observed-last."""

    def fit(self, X, Y, layers=None):
        X = check_X(X, dtype=np.float64)
        Y = check_Y(Y, n_samples=X.shape[0])
        self.model_ = self._model().fit(X, Y)
        self.scores_ = rank_observed_last(self.model_.predict_scores(X), Y)
        return self


class FScoreRLSCompleter(_SupervisedCompleter):
    def __init__(self, n_selected=0.5, alpha=1.0):
        self.n_selected = n_selected
        self.alpha = alpha

    def _model(self):
        return FScoreRLS(**self.get_params())


class FSNMCompleter(_SupervisedCompleter):
    def __init__(self, gamma=1.0, n_selected=0.5, alpha=1.0, max_iter=50):
        self.gamma = gamma
        self.n_selected = n_selected
        self.alpha = alpha
        self.max_iter = max_iter

    def _model(self):
        return FSNM(**self.get_params())
