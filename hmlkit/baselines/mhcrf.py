"""M-HCRF: the multi-modal hidden conditional random field (seed 003).

Jiang, Wu, Zhang, Tang, Lu, Zhuang, "The classification of multi-modal data
with hidden conditional random field", Pattern Recognition Letters 2015.

The model (paper Eq. 5-6) is a conditional distribution over a category ``y``
and ``m`` discrete hidden variables ``h = (h_1..h_m)`` given two observed
modalities ``x`` (visual) and ``z`` (tags)::

    P(y, h | x, z) ∝ exp Φ(y, h, x, z)
    Φ = Σ_j  φ(h_j)·ψ(x)  θ1        observation–hidden, visual  (f_1)
      + Σ_j  φ(h_j)·ψ(z)  θ2        observation–hidden, tags    (f_2)
      + Σ_(i,j)∈E1  θ3[i,j,h_i,h_j] hidden–hidden               (f_3)
      + Σ_j  θ4[j, y, h_j]          hidden–category             (f_4)

and it is trained by maximising the regularised conditional log-likelihood
(Eq. 7) ``Σ_n log Σ_h P(y_n, h | x_n, z_n) − ||θ||² / (2δ²)`` with L-BFGS from
several random starting points, keeping the best local optimum (Sec. 2.3).

Points the paper leaves open, and what is coded here
----------------------------------------------------
* Hidden variables are discrete with ``n_states`` values (default 2: the
  paper's "boolean value indicating if x and z share the i-th latent
  structure"). The real-valued variant it mentions is not implemented.
* Feature functions: the paper's own example ``f_1,k(j, h_j, x) = φ(h_j)ψ(x)``
  with ``φ`` the one-hot indicator of the state and ``ψ(x) = x``; so θ1 is a
  weight vector per (hidden variable, state) over the visual features, θ2 the
  same over the tag features. One extra bias per (hidden variable, state)
  (a constant feature, which the paper does not mention) lets a state be
  a-priori likely. f_3 and f_4 are indicator functions: one weight per edge
  and pair of states, one per (hidden variable, category, state).
* How the modalities attach to hidden variables: Eq. 6 sums both f_1 and f_2
  over every j = 1..m, so by default every hidden variable sees both
  modalities (``attach="shared"``: the "shared latent structure" of the
  paper). ``attach="per_modality"`` instead gives each modality its own
  hidden variables (visual ones first, ``n_hidden`` split as evenly as
  possible, or an explicit ``(m_visual, m_tag)`` pair); hidden–hidden edges
  then link variables within and between modalities.
* Hidden structure: "ergodic" = every pair of hidden variables is linked (the
  paper's experiments); ``"chain"`` (the Markov chain of its Fig. 2) is also
  offered.
* Inference: the paper uses loopy belief propagation because its graph is
  loopy. With few hidden variables the configurations can be enumerated, so
  this implementation is *exact*: all ``n_states ** m`` configurations are
  scored at once (one-hot configuration matrix, matrix products, log-sum-exp).
  It refuses more than 12 hidden variables or more than 4096 configurations.
* Regularisation: the paper's ``1/(2δ²)``; we write the objective the
  scikit-learn way, ``C · Σ_n −log P(y_n|x_n,z_n) + ½||θ||²`` with ``C = δ²``
  (identical optimum). Every parameter, biases included, is regularised.
* Class weights (``class_weight="balanced"``) weight each sample's
  log-likelihood term; the paper instead samples balanced training sets.
* Inputs: the visual modality is standardised (train mean/std) when
  ``standardize=True`` (L-BFGS conditioning; the paper's BoVW histograms are
  not described as scaled); tags are used as given (binary indicators, as in
  the paper). Initial parameters are N(0, init_scale²), a fresh draw per
  restart.
"""
from __future__ import annotations

import itertools
import numbers

import numpy as np
import scipy.optimize
from scipy.special import logsumexp
from sklearn.base import BaseEstimator

from .._validation import check_random_state_seed, check_X

MAX_HIDDEN = 12
MAX_CONFIGS = 4096

__all__ = ["MHCRF", "MAX_HIDDEN", "MAX_CONFIGS"]


# --------------------------------------------------------------------------
# model structure: configurations and edges
# --------------------------------------------------------------------------

def hidden_edges(n_hidden, structure="ergodic"):
    """Edge list (E, 2) of the hidden graph: all pairs, or a chain."""
    if structure == "ergodic":
        e = list(itertools.combinations(range(n_hidden), 2))
    elif structure == "chain":
        e = [(j, j + 1) for j in range(n_hidden - 1)]
    else:
        raise ValueError(f"hidden_structure must be 'ergodic' or 'chain', got {structure!r}")
    return np.asarray(e, dtype=np.int64).reshape(-1, 2)


def configuration_matrices(n_hidden, n_states, edges):
    """One-hot encodings of every hidden configuration.

    Returns ``B`` (C, m*S): B[c, j*S + a] = 1 iff h_j = a in configuration c,
    and ``Bp`` (C, E*S*S): Bp[c, e*S*S + a*S + b] = 1 iff edge e = (i, j) has
    h_i = a and h_j = b. Any potential that is a sum of unary / pairwise
    tables is then a matrix product with these, and so is its gradient.
    """
    S = n_states
    cfg = np.array(list(itertools.product(range(S), repeat=n_hidden)), dtype=np.int64).reshape(-1, n_hidden)
    C = cfg.shape[0]
    B = np.zeros((C, n_hidden * S))
    rows = np.repeat(np.arange(C), n_hidden)
    B[rows, (np.arange(n_hidden) * S + cfg).ravel()] = 1.0
    E = edges.shape[0]
    Bp = np.zeros((C, max(E, 0) * S * S))
    if E:
        idx = np.arange(E) * S * S + cfg[:, edges[:, 0]] * S + cfg[:, edges[:, 1]]
        Bp[np.repeat(np.arange(C), E), idx.ravel()] = 1.0
    return cfg, B, Bp


class _Layout:
    """Shapes of the parameter blocks and their offsets in the flat vector."""

    def __init__(self, n_hidden, n_states, n_classes, d_vis, d_tag, vis_idx, tag_idx, n_edges):
        m, S, K = n_hidden, n_states, n_classes
        self.m, self.S, self.K = m, S, K
        self.vis_idx, self.tag_idx = vis_idx, tag_idx
        self.shapes = {
            "bias": (m, S),
            "vis": (len(vis_idx), S, d_vis),  # theta_1
            "tag": (len(tag_idx), S, d_tag),  # theta_2
            "pair": (n_edges, S, S),  # theta_3
            "cls": (m, K, S),  # theta_4
        }
        self.slices = {}
        o = 0
        for k, s in self.shapes.items():
            size = int(np.prod(s))
            self.slices[k] = slice(o, o + size)
            o += size
        self.size = o

    def unpack(self, theta):
        return {k: theta[self.slices[k]].reshape(self.shapes[k]) for k in self.shapes}


def _scores(p, L, B, Bp, Xv, Xt):
    """Potential Φ(y, h, x, z) for every sample, class, configuration: (n, K, C)."""
    n = Xv.shape[0]
    U = np.broadcast_to(p["bias"], (n, L.m, L.S)).copy()
    if len(L.vis_idx):
        U[:, L.vis_idx, :] += np.einsum("nd,jad->nja", Xv, p["vis"], optimize=True)
    if len(L.tag_idx):
        U[:, L.tag_idx, :] += np.einsum("nd,jad->nja", Xt, p["tag"], optimize=True)
    unary = U.reshape(n, -1) @ B.T  # (n, C)
    pair = Bp @ p["pair"].ravel() if Bp.shape[1] else 0.0  # (C,)
    cls = p["cls"].transpose(1, 0, 2).reshape(L.K, -1) @ B.T  # (K, C)
    return unary[:, None, :] + pair + cls[None, :, :]


def _chunk_terms_factored(p, L, B, Bp, xv, xt, yy, ww):
    """Log-likelihood and expectation terms of one chunk, factored over y.

    exp Φ(y, h) = G[n, h] · H[y, h] with G = exp(observation + hidden-hidden
    terms) and H = exp(hidden-category terms), so every sum over (y, h) is a
    matrix product and only an (n, C) block is exponentiated. Returns None
    when a class probability underflows; the caller then uses the log-space
    path.
    """
    nb = xv.shape[0]
    U = np.broadcast_to(p["bias"], (nb, L.m, L.S)).copy()
    if len(L.vis_idx):
        U[:, L.vis_idx, :] += np.einsum("nd,jad->nja", xv, p["vis"], optimize=True)
    if len(L.tag_idx):
        U[:, L.tag_idx, :] += np.einsum("nd,jad->nja", xt, p["tag"], optimize=True)
    A = U.reshape(nb, -1) @ B.T  # (nb, C)
    if Bp.shape[1]:
        A += Bp @ p["pair"].ravel()
    cls = p["cls"].transpose(1, 0, 2).reshape(L.K, -1) @ B.T  # (K, C)
    G = np.exp(A - A.max(axis=1, keepdims=True))
    H = np.exp(cls - cls.max())
    Zk = G @ H.T  # (nb, K)
    r = np.arange(nb)
    Zy = Zk[r, yy]
    if not (Zy > 1e-280).all() or not np.isfinite(Zk).all():
        return None
    Z = Zk.sum(axis=1)
    ll = float(ww @ (np.log(Zy) - np.log(Z)))
    # a[n, y] = w_n (1[y = y_n] / Z_{y_n} - 1 / Z_n): then
    # Σ_y D[n, y, h] = G[n, h] Σ_y a[n, y] H[y, h]  and  Σ_n D[n, y, h] = H[y, h] Σ_n a[n, y] G[n, h]
    a = np.broadcast_to(-(ww / Z)[:, None], (nb, L.K)).copy()
    a[r, yy] += ww / Zy
    Dc = G * (a @ H)  # (nb, C)
    Dy = H * (a.T @ G)  # (K, C)
    return ll, Dc, Dy


def _chunk_terms_logspace(p, L, B, Bp, xv, xt, yy, ww):
    """Same as :func:`_chunk_terms_factored`, in log space over (n, K, C) (robust, slower)."""
    nb = xv.shape[0]
    F = _scores(p, L, B, Bp, xv, xt)  # (nb, K, C)
    logZ = logsumexp(F.reshape(nb, -1), axis=1)
    r = np.arange(nb)
    Fy = F[r, yy]
    logZy = logsumexp(Fy, axis=1)
    ll = float(ww @ (logZy - logZ))
    D = -np.exp(F - logZ[:, None, None])
    D[r, yy] += np.exp(Fy - logZy[:, None])
    D *= ww[:, None, None]
    return ll, D.sum(axis=1), D.sum(axis=0)


def _nll_and_grad(theta, L, B, Bp, Xv, Xt, y, w, C, chunk):
    """Objective ``C·Σ w_n(−log P(y_n|x_n,z_n)) + ½||θ||²`` and its gradient.

    Gradient of log P(y_n|.) for any weight: E_{h|y_n}[f] − E_{y,h}[f]
    (paper Eq. 8-10), with the expectations taken exactly over configurations:
    D[n, y, h] = 1[y = y_n] P(h | y_n, x, z) − P(y, h | x, z) (times w_n) is
    contracted with the one-hot configuration matrices.
    """
    p = L.unpack(theta)
    g = {k: np.zeros(s) for k, s in L.shapes.items()}
    ll = 0.0
    n = Xv.shape[0]
    for s0 in range(0, n, chunk):
        sl = slice(s0, min(n, s0 + chunk))
        xv, xt, yy, ww = Xv[sl], Xt[sl], y[sl], w[sl]
        nb = xv.shape[0]
        terms = _chunk_terms_factored(p, L, B, Bp, xv, xt, yy, ww)
        if terms is None:
            terms = _chunk_terms_logspace(p, L, B, Bp, xv, xt, yy, ww)
        lli, Dc, Dy = terms
        ll += lli
        M = (Dc @ B).reshape(nb, L.m, L.S)  # expected one-hot state differences
        g["bias"] += M.sum(axis=0)
        if len(L.vis_idx):
            g["vis"] += np.einsum("nja,nd->jad", M[:, L.vis_idx, :], xv, optimize=True)
        if len(L.tag_idx):
            g["tag"] += np.einsum("nja,nd->jad", M[:, L.tag_idx, :], xt, optimize=True)
        if Bp.shape[1]:
            g["pair"] += (Dc.sum(axis=0) @ Bp).reshape(L.shapes["pair"])
        g["cls"] += (Dy @ B).reshape(L.K, L.m, L.S).transpose(1, 0, 2)
    grad = np.concatenate([g[k].ravel() for k in L.shapes])
    f = -C * ll + 0.5 * float(theta @ theta)
    return f, -C * grad + theta


# --------------------------------------------------------------------------
# estimator
# --------------------------------------------------------------------------

def _check_two_views(X_vis, X_tag):
    Xv = check_X(X_vis, name="X_vis", dtype=np.float64)
    Xt = check_X(X_tag, name="X_tag", dtype=np.float64)
    if Xv.shape[0] != Xt.shape[0]:
        raise ValueError(f"X_vis has {Xv.shape[0]} samples but X_tag has {Xt.shape[0]}")
    return Xv, Xt


class MHCRF(BaseEstimator):
    """Multi-modal hidden conditional random field classifier (Jiang et al. 2015).

    Parameters
    ----------
    n_hidden : int or (int, int)
        Number of hidden variables m (latent "topics"); with
        ``attach="per_modality"`` a pair gives (visual, tag) counts.
    n_states : int
        Values per hidden variable (2 = boolean, as in the paper).
    C : float
        Inverse regularisation strength, ``C = δ²`` of the paper's Eq. 7.
    n_restarts : int
        Random starting points of L-BFGS; the best objective is kept.
    attach : {"shared", "per_modality"}
        Which hidden variables see which modality (see module docstring).
    hidden_structure : {"ergodic", "chain"}
        Hidden–hidden edges: all pairs (paper) or a chain (its Fig. 2).
    class_weight : None or "balanced"
    standardize : bool
        Standardise the visual modality with the training mean/std.
    max_iter, tol : L-BFGS limits (``maxiter``, ``gtol``).
    init_scale : float
        Std of the random initial parameters.
    random_state : None, int or numpy generator.

    Attributes
    ----------
    classes_, coef_ (flat parameter vector), params_ (dict of blocks: bias,
    vis = θ1, tag = θ2, pair = θ3, cls = θ4), edges_, objective_,
    restart_objectives_, n_iter_, vis_hidden_, tag_hidden_.
    """

    def __init__(self, n_hidden=3, n_states=2, C=1.0, n_restarts=3, attach="shared",
                 hidden_structure="ergodic", class_weight=None, standardize=True, max_iter=200,
                 tol=1e-5, init_scale=0.1, random_state=None):
        self.n_hidden = n_hidden
        self.n_states = n_states
        self.C = C
        self.n_restarts = n_restarts
        self.attach = attach
        self.hidden_structure = hidden_structure
        self.class_weight = class_weight
        self.standardize = standardize
        self.max_iter = max_iter
        self.tol = tol
        self.init_scale = init_scale
        self.random_state = random_state

    # -- parameter checks -------------------------------------------------
    def _hidden_split(self):
        nh = self.n_hidden
        if self.attach == "shared":
            if not isinstance(nh, numbers.Integral) or nh < 1:
                raise ValueError(f"n_hidden must be a positive integer, got {nh!r}")
            m = int(nh)
            vis = tag = np.arange(m)
        elif self.attach == "per_modality":
            if isinstance(nh, numbers.Integral):
                if nh < 2:
                    raise ValueError(f"attach='per_modality' needs n_hidden >= 2, got {nh!r}")
                mv = (int(nh) + 1) // 2
                mt = int(nh) - mv
            else:
                try:
                    mv, mt = (int(v) for v in nh)
                except (TypeError, ValueError):
                    raise ValueError(f"n_hidden must be an int or a (visual, tag) pair, got {nh!r}") from None
                if mv < 1 or mt < 1:
                    raise ValueError(f"n_hidden pair must be positive, got {nh!r}")
            m = mv + mt
            vis, tag = np.arange(mv), np.arange(mv, m)
        else:
            raise ValueError(f"attach must be 'shared' or 'per_modality', got {self.attach!r}")
        return m, vis.astype(np.int64), tag.astype(np.int64)

    def _check_params(self):
        m, vis, tag = self._hidden_split()
        S = self.n_states
        if not isinstance(S, numbers.Integral) or S < 2:
            raise ValueError(f"n_states must be an integer >= 2, got {S!r}")
        if m > MAX_HIDDEN:
            raise ValueError(
                f"n_hidden={m} exceeds {MAX_HIDDEN}: exact inference enumerates n_states**n_hidden "
                f"configurations; use at most {MAX_HIDDEN} hidden variables")
        if int(S) ** m > MAX_CONFIGS:
            raise ValueError(
                f"n_states**n_hidden = {int(S) ** m} configurations exceeds {MAX_CONFIGS} "
                "(exact enumeration); reduce n_hidden or n_states")
        if not (isinstance(self.C, numbers.Real) and self.C > 0 and np.isfinite(self.C)):
            raise ValueError(f"C must be a positive finite number, got {self.C!r}")
        if not isinstance(self.n_restarts, numbers.Integral) or self.n_restarts < 1:
            raise ValueError(f"n_restarts must be a positive integer, got {self.n_restarts!r}")
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")
        if self.class_weight not in (None, "balanced"):
            raise ValueError(f"class_weight must be None or 'balanced', got {self.class_weight!r}")
        if not (isinstance(self.init_scale, numbers.Real) and self.init_scale >= 0):
            raise ValueError(f"init_scale must be a non-negative number, got {self.init_scale!r}")
        return m, int(S), vis, tag

    # -- fitting ------------------------------------------------------------
    def _prep_vis(self, Xv):
        if self.standardize:
            return (Xv - self.vis_mean_) / self.vis_scale_
        return Xv

    def fit(self, X_vis, X_tag, y):
        """Fit on visual features ``X_vis`` (n, d_v), tag features ``X_tag`` (n, d_t), labels ``y``."""
        m, S, vis, tag = self._check_params()
        Xv, Xt = _check_two_views(X_vis, X_tag)
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != Xv.shape[0]:
            raise ValueError(f"y must be 1-D with {Xv.shape[0]} labels, got shape {y.shape}")
        if y.dtype.kind == "f" and not np.isfinite(y).all():
            raise ValueError("y contains NaN or inf")
        self.classes_, yi = np.unique(y, return_inverse=True)
        K = self.classes_.size
        if K < 2:
            raise ValueError(f"y needs at least 2 classes, got {K}")
        seed = check_random_state_seed(self.random_state)
        if self.standardize:
            self.vis_mean_ = Xv.mean(axis=0)
            sd = Xv.std(axis=0)
            self.vis_scale_ = np.where(sd > 0, sd, 1.0)
        Xv = self._prep_vis(Xv)
        w = np.ones(Xv.shape[0])
        if self.class_weight == "balanced":
            cnt = np.bincount(yi, minlength=K)
            w = (Xv.shape[0] / (K * cnt))[yi]
        self.edges_ = hidden_edges(m, self.hidden_structure)
        self._cfg, self._B, self._Bp = configuration_matrices(m, S, self.edges_)
        self._layout = _Layout(m, S, K, Xv.shape[1], Xt.shape[1], vis, tag, self.edges_.shape[0])
        chunk = max(1, 2_000_000 // (K * self._B.shape[0]))  # bounds the (chunk, K, C) log-space block
        rng = np.random.default_rng(seed)
        best, objs, n_iter = None, [], []
        for _ in range(self.n_restarts):
            theta0 = rng.normal(0.0, self.init_scale, self._layout.size)
            res = scipy.optimize.minimize(
                _nll_and_grad, theta0, jac=True, method="L-BFGS-B",
                args=(self._layout, self._B, self._Bp, Xv, Xt, yi, w, float(self.C), chunk),
                options={"maxiter": int(self.max_iter), "gtol": float(self.tol)})
            objs.append(float(res.fun))
            n_iter.append(int(res.nit))
            if best is None or res.fun < best.fun:
                best = res
        self.coef_ = best.x
        self.params_ = self._layout.unpack(self.coef_)
        self.objective_ = float(best.fun)
        self.restart_objectives_ = np.asarray(objs)
        self.n_iter_ = np.asarray(n_iter)
        self.vis_hidden_, self.tag_hidden_ = vis, tag
        self.n_features_vis_, self.n_features_tag_ = Xv.shape[1], Xt.shape[1]
        return self

    # -- inference ----------------------------------------------------------
    def _check_fitted_input(self, X_vis, X_tag):
        if not hasattr(self, "coef_"):
            raise ValueError("this MHCRF is not fitted yet; call fit first")
        Xv, Xt = _check_two_views(X_vis, X_tag)
        if Xv.shape[1] != self.n_features_vis_ or Xt.shape[1] != self.n_features_tag_:
            raise ValueError(
                f"expected {self.n_features_vis_} visual and {self.n_features_tag_} tag features, "
                f"got {Xv.shape[1]} and {Xt.shape[1]}")
        return self._prep_vis(Xv), Xt

    def _per_chunk(self, X_vis, X_tag, fn):
        """Apply ``fn`` to Φ of sample chunks (bounded (chunk, K, C) blocks) and stack the results."""
        Xv, Xt = self._check_fitted_input(X_vis, X_tag)
        chunk = max(1, 2_000_000 // (self._layout.K * self._B.shape[0]))
        return np.concatenate([fn(_scores(self.params_, self._layout, self._B, self._Bp, Xv[s:s + chunk],
                                          Xt[s:s + chunk])) for s in range(0, Xv.shape[0], chunk)])

    def predict_log_proba(self, X_vis, X_tag):
        """log P(y | x, z) = log Σ_h P(y, h | x, z), shape (n, n_classes)."""
        def lp(F):
            Fy = logsumexp(F, axis=2)
            return Fy - logsumexp(Fy, axis=1, keepdims=True)

        return self._per_chunk(X_vis, X_tag, lp)

    def predict_proba(self, X_vis, X_tag):
        return np.exp(self.predict_log_proba(X_vis, X_tag))

    def decision_function(self, X_vis, X_tag):
        """Binary: log-odds of ``classes_[1]`` (n,); multi-class: log P(y|x,z) (n, K)."""
        lp = self.predict_log_proba(X_vis, X_tag)
        if lp.shape[1] == 2:
            return lp[:, 1] - lp[:, 0]
        return lp

    def predict(self, X_vis, X_tag):
        lp = self.predict_log_proba(X_vis, X_tag)
        return self.classes_[np.argmax(lp, axis=1)]

    def hidden_marginals(self, X_vis, X_tag):
        """P(h_j = a | x, z) with y summed out, shape (n, m, n_states): the latent representation."""
        def marg(F):
            n = F.shape[0]
            Pc = np.exp(logsumexp(F, axis=1) - logsumexp(F.reshape(n, -1), axis=1)[:, None])
            return (Pc @ self._B).reshape(n, self._layout.m, self._layout.S)

        return self._per_chunk(X_vis, X_tag, marg)

    def score(self, X_vis, X_tag, y):
        return float(np.mean(self.predict(X_vis, X_tag) == np.asarray(y)))
