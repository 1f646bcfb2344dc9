"""GHF-ART: Generalized Heterogeneous Fusion Adaptive Resonance Theory.

Meng, Tan, Xu, "Semi-Supervised Heterogeneous Fusion for Multimedia Data
Co-clustering", IEEE TKDE 26(9), 2014. Two channels here (the paper's
image experiments): visual features and tags.

- Visual channel (Sec. 5.1.1): min-max normalised to [0, 1], complement coded
  ``x = [v, 1 - v]``; learning (Eq. 4) ``w <- beta (x ^ w) + (1 - beta) w``.
- Tag channel (Sec. 5.1.2, 5.3.2): binary tag vector, no complement coding;
  the prototype is the occurrence probability of each tag in the cluster
  (Eq. 5-9), kept as per-cluster tag counts ``c`` and size ``L`` so that
  ``w = c / L`` exactly.
- Choice (Eq. 2) ``T_j = sum_k gamma^k |x^k ^ w_j^k| / (alpha + |w_j^k|)``;
  match (Eq. 3) ``M_j^k = |x^k ^ w_j^k| / |x^k|``; resonance iff
  ``M^k >= rho^k`` for every channel; on a reset the vigilances are raised by
  match tracking (Eq. 10) ``rho^k = M^k + eps`` for every channel, reset to
  ``rho_0`` for each new sample. The uncommitted node (all-ones weights)
  takes part in the choice competition and always resonates: when it wins,
  a new cluster with ``w = x`` is created (Sec. 5.5, steps 1-9).
- Robustness-based contribution weights (Sec. 5.4.2): ``D_j^k`` of Eq. 11,
  ``D^k`` the mean over clusters (Eq. 12), ``R^k = exp(-D^k)`` (Eq. 13),
  ``gamma^k = R^k / sum R`` (Eq. 14), updated after every resonance and new
  cluster. Visual ``D_j`` is maintained by the paper's incremental Eq. 15.
  For the tag channel Eq. 16 as printed is not dimensionally consistent
  (``eta D`` where Eq. 15 has ``|w| D``); since the prototype is exactly
  ``c/L``, ``sum_l |w - x_l|_1 = 2 sum_m c_m - 2 sum_m c_m^2 / L`` and we
  keep ``D_j`` exact from ``sum c`` and ``sum c^2`` (same O(tags) cost).
  Eq. 17 (new cluster) is the same formula ``D^k = sum_j D_j^k / J`` with the
  new cluster's ``D = 0``, so one running sum per channel serves both cases.
  ``adaptive_weights=False`` keeps ``gamma = (1/2, 1/2)`` (the paper's
  GHF-ART_ew, Table 4).
- Semi-supervised GHF-ART(SS) (Sec. 5, step 1): ``seed_groups`` (n,) with a
  group id for user-labelled samples and -1 elsewhere; each group becomes a
  pre-defined cluster whose weights are the averages of its members' feature
  vectors (visual: mean complement-coded vector; tags: occurrence
  probabilities), then the other samples are presented one by one.

Open points fixed here: samples are presented in a random order drawn from
``random_state`` (ART is order dependent; the paper randomises order in its
incremental test); a sample with no tag has an empty tag vector, its tag
match ``|x ^ w| / |x|`` is undefined and taken as 1 (no evidence against
any cluster); a cluster with no tag has ``D^t = 0``. ``partial_fit`` keeps the
min-max range of the first batch (later values are clipped to [0, 1]).
``n_clusters``, when given, merges the ART clusters down to ``n_clusters``
for comparisons with fixed-k methods: k-means (weighted by cluster size) on
the cluster prototypes ``[sqrt(gamma_v) * visual centre, sqrt(gamma_t) *
tag probabilities]``, each block divided by its root mean square norm, with
visual centre ``(w[:d] + 1 - w[d:]) / 2`` (the middle of the fuzzy-ART box).
"""
from __future__ import annotations

import warnings

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import KMeans
from sklearn.utils.validation import _check_feature_names

from .._validation import (InvalidParameterError, check_random_state_seed, check_tag_names, check_X, check_Y,
                           record_tag_names, tag_names_of)

# state vector slots: [n_clusters, gamma_v, gamma_t, sumD_v, sumD_t]
_J, _GV, _GT, _SV, _ST = range(5)


@njit(cache=True)
def _update_gamma(state, adaptive):
    if not adaptive or state[_J] == 0:
        return
    J = state[_J]
    rv = np.exp(-state[_SV] / J)
    rt = np.exp(-state[_ST] / J)
    state[_GV] = rv / (rv + rt)
    state[_GT] = rt / (rv + rt)


@njit(cache=True)
def _ghfart_run(V, tptr, tind, order, start, labels,
                Wv, wnorm, cnt, csum, csq, L, Sv, Dv, Dt, state,
                alpha, beta, rho0, eps, adaptive, gamma_trace):
    """Present ``order[start:]`` one by one; stops early when the cluster
    arrays are full (returns the position reached, caller grows them).

    V (n, d) float32 in [0,1]; tags as CSR (tptr, tind); per-cluster arrays
    with capacity ``Wv.shape[0]``: Wv (cap, 2d) complement-coded visual
    weights, wnorm |w_v|, cnt (cap, m) tag counts, csum = sum c, csq = sum c^2,
    L sizes, Sv = sum_l |w_v - x_l| (Eq. 15 bookkeeping), Dv, Dt (Eq. 11).
    """
    n_all, d = V.shape
    cap = Wv.shape[0]
    M = cnt.shape[1]
    xd = float(d)                             # |x| of a complement-coded vector
    Av = np.empty(cap)
    At = np.empty(cap)
    T = np.empty(cap)
    for pos in range(start, order.shape[0]):
        J = int(state[_J])
        if J >= cap:
            return pos
        i = order[pos]
        gv = state[_GV]
        gt = state[_GT]
        nt = tptr[i + 1] - tptr[i]
        # choice function of every committed cluster (Eq. 2)
        for j in range(J):
            acc = 0.0
            for f in range(d):
                v = V[i, f]
                w1 = Wv[j, f]
                w2 = Wv[j, d + f]
                acc += (v if v < w1 else w1) + ((1.0 - v) if (1.0 - v) < w2 else w2)
            Av[j] = acc
            a_t = 0.0
            for q in range(tptr[i], tptr[i + 1]):
                a_t += cnt[j, tind[q]]
            a_t /= L[j]
            At[j] = a_t
            T[j] = gv * acc / (alpha + wnorm[j]) + gt * a_t / (alpha + csum[j] / L[j])
        # the uncommitted node: all-ones weights
        Tu = gv * xd / (alpha + 2.0 * d) + gt * nt / (alpha + M)
        rv = rho0
        rt = rho0
        win = -1
        while True:
            best = -1
            bT = Tu
            for j in range(J):
                if T[j] > bT:
                    bT = T[j]
                    best = j
            if best < 0:
                break                              # uncommitted node wins
            mv = Av[best] / xd
            mt = At[best] / nt if nt > 0 else 1.0
            if mv >= rv and mt >= rt:
                win = best
                break
            T[best] = -1.0                         # reset, match tracking (Eq. 10)
            rv = mv + eps
            rt = mt + eps
        if win < 0:
            j = J
            for f in range(d):
                Wv[j, f] = V[i, f]
                Wv[j, d + f] = 1.0 - V[i, f]
            wnorm[j] = xd
            for q in range(tptr[i], tptr[i + 1]):
                cnt[j, tind[q]] = 1.0
            csum[j] = nt
            csq[j] = nt
            L[j] = 1.0
            Sv[j] = 0.0
            Dv[j] = 0.0
            Dt[j] = 0.0
            state[_J] = J + 1
        else:
            j = win
            Lj = L[j]
            # visual learning (Eq. 4) and incremental difference (Eq. 15)
            dw = 0.0
            dx = 0.0
            nrm = 0.0
            for f in range(2 * d):
                x = V[i, f] if f < d else 1.0 - V[i, f - d]
                w = Wv[j, f]
                xw = x if x < w else w
                nw = beta * xw + (1.0 - beta) * w
                dw += abs(nw - w)
                dx += abs(nw - x)
                nrm += nw
                Wv[j, f] = nw
            wnorm[j] = nrm
            Sv[j] = Sv[j] + Lj * dw + dx
            newDv = Sv[j] / ((Lj + 1.0) * nrm) if nrm > 0 else 0.0
            # tag learning (Eq. 8): counts; exact Eq. 11 from sum c and sum c^2
            for q in range(tptr[i], tptr[i + 1]):
                c = cnt[j, tind[q]]
                csq[j] += 2.0 * c + 1.0
                cnt[j, tind[q]] = c + 1.0
            csum[j] += nt
            L[j] = Lj + 1.0
            newDt = (2.0 * csum[j] - 2.0 * csq[j] / L[j]) / csum[j] if csum[j] > 0 else 0.0
            state[_SV] += newDv - Dv[j]
            state[_ST] += newDt - Dt[j]
            Dv[j] = newDv
            Dt[j] = newDt
        labels[i] = j
        _update_gamma(state, adaptive)
        gamma_trace[pos] = state[_GV]
    return order.shape[0]


class GHFART(ClusterMixin, BaseEstimator):
    """GHF-ART co-clustering of visual features and tags (incremental, one pass).

    Parameters
    ----------
    vigilance : baseline vigilance rho_0 of both channels (paper: 0.1).
    alpha : choice parameter (paper: 0.01).
    beta : visual learning rate (paper: 0.6).
    eps : match-tracking increment of Eq. 10.
    adaptive_weights : robustness-based gamma (True) or fixed weights (False).
    tag_weight : the fixed gamma of the tag channel when ``adaptive_weights``
        is False (visual: 1 - tag_weight); None = 0.5, the equal weights of
        the paper's GHF-ART_ew. Sweeping it is the paper's Fig. 3(a) protocol.
    n_clusters : None, or merge the ART clusters down to this many (see module doc).
    random_state : seed of the presentation order (and of the merge).

    Attributes
    ----------
    labels_ : cluster of every sample seen (merged if ``n_clusters``), in the
        order of the samples given to ``fit`` / successive ``partial_fit`` calls.
    art_labels_, n_art_clusters_, gamma_ : unmerged ART clusters, their number, (visual, tag) gamma
    gamma_trace_ : visual gamma after each presented sample
        In presentation order (the paper's Fig. 3b shows the tag channel's = 1 - this).
    cluster_sizes_, visual_weights_, tag_weights_, n_features_in_ : arrays (J,), (J, 2d), (J, m), int
    """

    def __init__(self, vigilance=0.1, alpha=0.01, beta=0.6, eps=1e-6, adaptive_weights=True,
                 tag_weight=None, n_clusters=None, random_state=None):
        self.vigilance = vigilance
        self.alpha = alpha
        self.beta = beta
        self.eps = eps
        self.adaptive_weights = adaptive_weights
        self.tag_weight = tag_weight
        self.n_clusters = n_clusters
        self.random_state = random_state

    # ----------------------------------------------------------------- helpers
    def _check_params(self):
        if not 0 <= self.vigilance <= 1:
            raise ValueError(f"vigilance must be in [0, 1], got {self.vigilance!r}")
        if not self.alpha > 0:
            raise ValueError(f"alpha must be > 0, got {self.alpha!r}")
        if not 0 <= self.beta <= 1:
            raise ValueError(f"beta must be in [0, 1], got {self.beta!r}")
        if self.tag_weight is not None:
            if self.adaptive_weights:
                raise ValueError("tag_weight fixes gamma; it needs adaptive_weights=False")
            if not 0 <= self.tag_weight <= 1:
                raise ValueError(f"tag_weight must be in [0, 1], got {self.tag_weight!r}")
        if self.n_clusters is not None and (not isinstance(self.n_clusters, (int, np.integer))
                                            or self.n_clusters < 1):
            raise ValueError(f"n_clusters must be None or a positive integer, got {self.n_clusters!r}")

    def _prepare(self, X, Y, first):
        if not first:  # a further batch: a frame's columns must be the first batch's, in order
            _check_feature_names(self, X, reset=False)
            check_tag_names(self, Y)
        X = check_X(X, "X", dtype=np.float64)
        if Y is None:
            raise ValueError("GHF-ART needs the tags Y (visual + tag channels)")
        Y = check_Y(Y, X.shape[0], "Y")
        if first:
            self._lo = X.min(0)
            span = X.max(0) - self._lo
            span[span == 0] = 1.0
            self._span = span
        else:
            if X.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {X.shape[1]} features, GHF-ART was started with {self.n_features_in_}")
            if Y.shape[1] != self.n_tags_in_:
                raise ValueError(f"Y has {Y.shape[1]} tags, GHF-ART was started with {self.n_tags_in_}")
        V = np.clip((X - self._lo) / self._span, 0.0, 1.0).astype(np.float32)
        return V, Y

    def _init_state(self, d, m, cap):
        self._Wv = np.zeros((cap, 2 * d), dtype=np.float32)
        self._wnorm = np.zeros(cap)
        self._cnt = np.zeros((cap, m))
        self._csum = np.zeros(cap)
        self._csq = np.zeros(cap)
        self._L = np.zeros(cap)
        self._Sv = np.zeros(cap)
        self._Dv = np.zeros(cap)
        self._Dt = np.zeros(cap)
        tw = 0.5 if self.tag_weight is None else float(self.tag_weight)
        self._state = np.array([0.0, 1.0 - tw, tw, 0.0, 0.0])

    def _grow(self):
        cap = self._Wv.shape[0]
        for name in ("_Wv", "_wnorm", "_cnt", "_csum", "_csq", "_L", "_Sv", "_Dv", "_Dt"):
            a = getattr(self, name)
            b = np.zeros((2 * cap,) + a.shape[1:], dtype=a.dtype)
            b[:cap] = a
            setattr(self, name, b)

    def _seed_clusters(self, V, Y, seed_groups):
        """Pre-defined clusters from user-labelled groups (GHF-ART(SS))."""
        g = np.asarray(seed_groups)
        if g.shape != (V.shape[0],):
            raise ValueError(f"seed_groups must have shape ({V.shape[0]},), got {g.shape}")
        ids = np.unique(g[g >= 0])
        while self._Wv.shape[0] < ids.size + 1:
            self._grow()
        labels = np.full(V.shape[0], -1, dtype=np.int64)
        Yd = Y.tocsr()
        for j, gid in enumerate(ids):
            mem = np.flatnonzero(g == gid)
            Xc = np.hstack([V[mem], 1.0 - V[mem]]).astype(np.float64)
            w = Xc.mean(0)
            self._Wv[j] = w
            self._wnorm[j] = w.sum()
            c = np.asarray(Yd[mem].sum(0)).ravel().astype(np.float64)
            self._cnt[j] = c
            self._csum[j] = c.sum()
            self._csq[j] = (c * c).sum()
            Lj = float(mem.size)
            self._L[j] = Lj
            self._Sv[j] = np.abs(Xc - w).sum()
            self._Dv[j] = self._Sv[j] / (Lj * w.sum())
            self._Dt[j] = ((2 * c.sum() - 2 * (c * c).sum() / Lj) / c.sum()) if c.sum() > 0 else 0.0
            labels[mem] = j
        self._state[_J] = ids.size
        self._state[_SV] = self._Dv[:ids.size].sum()
        self._state[_ST] = self._Dt[:ids.size].sum()
        _update_gamma(self._state, bool(self.adaptive_weights))
        return labels

    def _present(self, V, Y, labels, order):
        pos = 0
        trace = np.zeros(order.shape[0])
        Y = Y.tocsr()
        tptr = Y.indptr.astype(np.int64)
        tind = Y.indices.astype(np.int64)
        while True:
            pos = _ghfart_run(V, tptr, tind, order, pos, labels,
                              self._Wv, self._wnorm, self._cnt, self._csum, self._csq, self._L,
                              self._Sv, self._Dv, self._Dt, self._state,
                              float(self.alpha), float(self.beta), float(self.vigilance), float(self.eps),
                              bool(self.adaptive_weights), trace)
            if pos >= order.shape[0]:
                return trace
            self._grow()

    def _finish(self, new_labels, trace):
        J = int(self._state[_J])
        self.art_labels_ = np.concatenate([self.art_labels_, new_labels]) if hasattr(self, "art_labels_") \
            else new_labels
        self.gamma_trace_ = np.concatenate([self.gamma_trace_, trace]) if hasattr(self, "gamma_trace_") \
            else trace
        self.n_art_clusters_ = J
        self.gamma_ = (float(self._state[_GV]), float(self._state[_GT]))
        self.cluster_sizes_ = self._L[:J].astype(np.int64)
        self.visual_weights_ = self._Wv[:J]
        self.tag_weights_ = self._cnt[:J] / self._L[:J, None]
        self.labels_ = self._merge(self.art_labels_)
        return self

    def _merge(self, art_labels):
        k = self.n_clusters
        J = self.n_art_clusters_
        if k is None or J <= k:
            if k is not None and J < k:
                warnings.warn(f"GHF-ART made {J} clusters, fewer than n_clusters={k}; not splitting",
                              stacklevel=3)
            return art_labels.copy()
        d = self.n_features_in_
        Wv = self.visual_weights_.astype(np.float64)
        centre = 0.5 * (Wv[:, :d] + 1.0 - Wv[:, d:])
        P = self.tag_weights_
        blocks = []
        for B, g in ((centre, self.gamma_[0]), (P, self.gamma_[1])):
            Bc = B - np.average(B, axis=0, weights=self.cluster_sizes_)
            rms = np.sqrt(np.average((Bc * Bc).sum(1), weights=self.cluster_sizes_)) or 1.0
            blocks.append(np.sqrt(g) * Bc / rms)
        Z = np.hstack(blocks)
        seed = check_random_state_seed(self.random_state)
        km = KMeans(k, n_init=10, random_state=seed).fit(Z, sample_weight=self.cluster_sizes_)
        self.merge_map_ = km.labels_.astype(np.int64)
        return self.merge_map_[art_labels]

    # ----------------------------------------------------------------- API
    def fit(self, X, Y=None, seed_groups=None, layers=None):
        """Cluster ``X`` (n, d) visual features with tags ``Y`` (n, m) in one pass.

        ``seed_groups`` (optional, (n,) ints, -1 = unlabelled): user-labelled
        groups that initialise the network (GHF-ART(SS)). ``layers`` is accepted
        for the kit's two-modality calling convention (``run_clustering`` in the
        blm mode) and unused.
        """
        self._check_params()
        for name in ("art_labels_", "gamma_trace_", "merge_map_"):
            if hasattr(self, name):
                delattr(self, name)
        Yin = Y
        V, Y = self._prepare(X, Y, first=True)
        n, d = V.shape
        if self.n_clusters is not None and self.n_clusters > n:  # merged down to n_clusters: it only warned
            raise InvalidParameterError(f"n_clusters={self.n_clusters} is larger than the number of samples ({n})")
        self._record_names(X, Yin)
        self.n_features_in_ = d
        self.n_tags_in_ = Y.shape[1]
        self._rng = np.random.default_rng(check_random_state_seed(self.random_state))
        self._init_state(d, Y.shape[1], 64)
        labels = np.full(n, -1, dtype=np.int64)
        if seed_groups is not None:
            labels = self._seed_clusters(V, Y, seed_groups)
        todo = np.flatnonzero(labels < 0)
        order = todo[self._rng.permutation(todo.size)].astype(np.int64)
        trace = self._present(V, Y, labels, order)
        return self._finish(labels, trace)

    def partial_fit(self, X, Y=None):
        """Present a further batch to the network learnt so far (incremental)."""
        if not hasattr(self, "_state"):
            self._check_params()
            Yin = Y
            V, Y = self._prepare(X, Y, first=True)
            self._record_names(X, Yin)
            self.n_features_in_ = V.shape[1]
            self.n_tags_in_ = Y.shape[1]
            self._rng = np.random.default_rng(check_random_state_seed(self.random_state))
            self._init_state(V.shape[1], Y.shape[1], 64)
        else:
            V, Y = self._prepare(X, Y, first=False)
        labels = np.full(V.shape[0], -1, dtype=np.int64)
        order = self._rng.permutation(V.shape[0]).astype(np.int64)
        trace = self._present(V, Y, labels, order)
        return self._finish(labels, trace)

    def _record_names(self, X, Y):
        """A frame's column names (scikit-learn's ``feature_names_in_``; ``tag_names_in_`` for Y),
        so that a further batch given as frames with other columns, or the same in another
        order, is refused rather than read by position."""
        _check_feature_names(self, X, reset=True)
        record_tag_names(self, tag_names_of(Y))

    def fit_predict(self, X, Y=None, seed_groups=None, layers=None):
        return self.fit(X, Y, seed_groups=seed_groups, layers=layers).labels_


__all__ = ["GHFART"]
