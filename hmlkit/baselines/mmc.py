"""Multi-class maximum margin clustering with cluster-balance bounds.

The MMC baseline of Latent MMC (Zhou, Lan, Vahdat, Mori, NIPS 2013, Eq. 1-2,
Sec. 3.3 with the linear model ``w_t^T x`` in place of the latent one)::

    min_{W, Y}  1/2 sum_t ||w_t||^2 + C/K sum_i sum_{r != y_i} max(0, 1 + w_r.x_i - w_{y_i}.x_i)
    s.t.        each sample in exactly one cluster,  L <= |cluster t| <= U

(the ``r = y_i`` slack of Eq. 1 is always 0, so only ``r != y_i`` terms remain).

Alternating descent, as in the paper:

1. **Labelling** (W fixed, Eq. 7): the cost of putting ``x_i`` in cluster ``t``
   is ``psi_it = sum_{r != t} max(0, 1 + s_ir - s_it)``; the balanced
   assignment ``min sum psi_it y_it`` s.t. ``sum_t y_it = 1``,
   ``L <= sum_i y_it <= U`` is solved exactly. Its constraint matrix is the
   incidence matrix of a bipartite graph (samples x clusters), so the problem
   is a minimum-cost flow with an integral optimum (the paper used GLPK on the
   ILP); we solve the flow by successive shortest paths on the K clusters
   (:func:`balanced_assignment`), milliseconds where HiGHS' dual simplex on
   the LP took about a second a round at Corel5k's size.
2. **Model update** (Y fixed): with the labels fixed the objective is a
   convex multi-class (Weston-Watkins) SVM with ``c = C/K``; we solve it
   exactly by dual coordinate descent (Hsieh et al., ICML 2008, the liblinear
   method, extended to the multi-class margin constraints; numba), warm
   started from the previous round's dual variables (reset for samples whose
   label changed). The paper uses the bundle solver of Do & Artieres; we
   tried the convex bundle method BMRM and at the paper's C and N it needed
   hundreds of full passes to close its duality gap (and Pegasos-style
   stochastic subgradient was worse still), where dual coordinate descent
   converges in a few passes.

Points the paper leaves open, fixed here: labels are initialised by k-means
(``n_init=10``), a constant feature 1 is appended to ``x`` (a regularised
per-cluster bias, as the latent model's appended constant in Sec. 4);
``L = floor(lower * N / K)``, ``U = ceil(upper * N / K)`` (the paper uses
0.9 and 1.1); descent stops when the labels stop changing or after
``max_iter`` rounds.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import KMeans

from .._validation import (check_fitted, check_int, check_n_clusters, check_not_constant, check_random_state_seed,
                           check_tag_names, check_X, check_X_features, record_tag_names,
                           tag_names_of)
from ..primitives.topk import tie_key
from .inputs import _mean_row_norm


# --------------------------------------------------------------------------- labelling
def balance_bounds(n, k, balance):
    """Integer size bounds ``(L, U)`` of every cluster from fractions of ``n/k``."""
    try:
        lo, hi = (float(b) for b in balance)
    except (TypeError, ValueError):
        raise ValueError(f"balance must be a pair (lower, upper) of fractions of N/K, got {balance!r}") from None
    if not (0 <= lo <= 1 <= hi) or not np.isfinite(hi):
        raise ValueError(f"balance must satisfy 0 <= lower <= 1 <= upper < inf, got {balance!r}")
    L = int(np.floor(lo * n / k + 1e-9))      # tolerance: 0.9 * 50 must give 45, not 44
    U = int(np.ceil(hi * n / k - 1e-9))
    if lo > 0 and L == 0:
        # a lower bound below one sample would let clusters be empty: fewer clusters than
        # asked, without a word (38 asked of 40 samples gave 25)
        raise ValueError(f"n_clusters={k} is too many for the balance constraint: every cluster must hold at least "
                         f"{lo:g} x n/k = {lo * n / k:.2f} samples (n={n}); use at most "
                         f"{int(np.floor(lo * n + 1e-9))} clusters, or balance=(0, {hi:g}) to allow empty ones")
    return L, U


def balanced_assignment(cost, L, U):
    """Exact minimum-cost assignment of samples to clusters with size bounds.

    ``cost`` is (n, K). Returns labels (n,) int64 minimising
    ``sum_i cost[i, label_i]`` with every cluster size in ``[L, U]``: a minimum-cost
    flow (samples -> clusters -> sink, each cluster owing ``L`` and passing at most
    ``U - L`` more on), solved exactly by successive shortest paths
    (:func:`_balanced_flow`). HiGHS' dual simplex on the LP (225,000 variables at
    Corel5k's size) took about 1 s a call and most of an MMC fit; this takes
    milliseconds, with the same optimum (tests/test_mmc.py checks it against HiGHS).
    Between equally cheap assignments (tied costs: samples with identical inputs)
    the two solvers can pick different ones.
    """
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    n, k = cost.shape
    if k * L > n or k * U < n:
        raise ValueError(f"balance bounds L={L}, U={U} infeasible for {n} samples in {k} clusters")
    if not np.isfinite(cost).all():
        raise ValueError("balanced_assignment: the costs must be finite")
    return _balanced_flow(cost, int(L), int(U))


@njit(cache=True)
def _best_moves(cost, labels, rows, move, arg):
    """For each cluster ``a`` flagged in ``rows``: ``move[a, b]``, the cheapest change of
    cost from moving one of ``a``'s samples to ``b``, and ``arg[a, b]``, that sample;
    ``inf`` and -1 when ``a`` is empty. Equally cheap samples are ordered by a hash of
    their index, not the index: samples with the same input tie (Corel5k's untagged
    images on tags alone), and the collection is stored group by group, so taking the
    first ones handed MMC the ground truth (bitag MMC at 75 % removed: NMI 0.42, against
    0.24 with HiGHS)."""
    n, k = cost.shape
    for a in range(k):
        if rows[a]:
            for b in range(k):
                move[a, b] = np.inf
                arg[a, b] = -1
    for i in range(n):
        a = labels[i]
        if rows[a]:
            ca = cost[i, a]
            h = tie_key(i, 0)
            for b in range(k):
                if b != a:
                    v = cost[i, b] - ca
                    if v < move[a, b] or (v == move[a, b] and h < tie_key(arg[a, b], 0)):
                        move[a, b] = v
                        arg[a, b] = i


@njit(cache=True)
def _balanced_flow(cost, L, U):
    """Successive shortest paths for :func:`balanced_assignment`.

    The flow: each sample sends one unit to its cluster; cluster ``t`` keeps ``L`` and
    passes ``f[t]`` in ``[0, U - L]`` on to a sink, which takes ``n - K L``. Start from every
    sample at its cheapest cluster and ``f = clip(size - L, 0, U - L)``: optimal without
    the bounds, so every residual arc costs >= 0. Node ``t`` then has the excess
    ``size - L - f`` (> 0 above ``U``, < 0 below ``L``), the sink ``sum f - (n - K L)``.
    The samples collapse into arcs between clusters: ``a -> b`` costs the cheapest move
    of one of ``a``'s samples to ``b``; ``t -> sink`` (while ``f[t] < U - L``) and
    ``sink -> t`` (while ``f[t] > 0``) cost 0. Each round, Dijkstra on these K + 1 nodes
    with potentials (every reduced cost stays >= 0) finds the cheapest path from an
    excess to a deficit, and one unit moves along it; only the clusters on the path have
    their moves recomputed. At most (total excess) rounds of O(K^2 + n).
    """
    n, k = cost.shape
    labels = np.empty(n, np.int64)
    size = np.zeros(k, np.int64)
    for i in range(n):
        b = 0
        for t in range(1, k):
            if cost[i, t] < cost[i, b]:
                b = t
        labels[i] = b
        size[b] += 1
    cap = U - L
    f = np.empty(k, np.int64)
    for t in range(k):
        f[t] = min(max(size[t] - L, 0), cap)
    move = np.empty((k, k))
    arg = np.empty((k, k), np.int64)
    rows = np.ones(k, np.bool_)
    _best_moves(cost, labels, rows, move, arg)
    sink = k
    excess = np.empty(k + 1, np.int64)
    pi = np.zeros(k + 1)
    dist = np.empty(k + 1)
    prev = np.empty(k + 1, np.int64)
    done = np.empty(k + 1, np.bool_)
    while True:
        left = 0
        excess[sink] = L * k - n
        for t in range(k):
            excess[t] = size[t] - L - f[t]
            excess[sink] += f[t]
            left += max(excess[t], 0)
        left += max(excess[sink], 0)
        if left == 0:
            break
        for v in range(k + 1):
            dist[v] = 0.0 if excess[v] > 0 else np.inf
            prev[v] = -1
            done[v] = False
        for _ in range(k + 1):  # dense Dijkstra: K is small
            u = -1
            for v in range(k + 1):
                if not done[v] and dist[v] < np.inf and (u < 0 or dist[v] < dist[u]):
                    u = v
            if u < 0:
                break
            done[u] = True
            if u == sink:
                for t in range(k):
                    if not done[t] and f[t] > 0:
                        d = dist[u] + pi[u] - pi[t]
                        if d < dist[t]:
                            dist[t] = d
                            prev[t] = u
            else:
                for b in range(k):
                    if b != u and not done[b] and arg[u, b] >= 0:
                        d = dist[u] + move[u, b] + pi[u] - pi[b]
                        if d < dist[b]:
                            dist[b] = d
                            prev[b] = u
                if not done[sink] and f[u] < cap:
                    d = dist[u] + pi[u] - pi[sink]
                    if d < dist[sink]:
                        dist[sink] = d
                        prev[sink] = u
        tgt = -1
        for v in range(k + 1):
            if excess[v] < 0 and dist[v] < np.inf and (tgt < 0 or dist[v] < dist[tgt]):
                tgt = v
        if tgt < 0:
            raise ValueError("balanced_assignment: no path from an excess to a deficit")
        dmax = 0.0
        for v in range(k + 1):
            if dist[v] < np.inf and dist[v] > dmax:
                dmax = dist[v]
        for v in range(k + 1):
            pi[v] += dist[v] if dist[v] < np.inf else dmax
        rows[:] = False
        v = tgt
        while prev[v] >= 0:
            p = prev[v]
            if v == sink:
                f[p] += 1
            elif p == sink:
                f[v] -= 1
            else:  # one sample moves
                i = arg[p, v]
                labels[i] = v
                size[p] -= 1
                size[v] += 1
                rows[p] = True
                rows[v] = True
            v = p
        _best_moves(cost, labels, rows, move, arg)
    return labels


def crammer_costs(S):
    """``psi_it = sum_{r != t} max(0, 1 + S_ir - S_it)`` for scores ``S`` (n, K)."""
    return _crammer_costs(np.ascontiguousarray(S, dtype=np.float64))


@njit(cache=True)
def _block_sum(a, lo, n):
    """numpy's sum of at most 128 elements: 8 running sums (fewer than 8: in order)."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    m = n - n % 8
    for i in range(lo + 8, lo + m, 8):
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(lo + m, lo + n):
        res += a[i]
    return res


@njit(cache=True)
def _pairwise_sum(a, lo, n):
    """``a[lo:lo + n].sum()`` to the bit: numpy's pairwise summation (blocks of at most 128
    summed by :func:`_block_sum`, longer runs halved at a multiple of 8;
    numpy/_core/src/umath/loops_utils.h.src). The halving runs on an explicit stack: numba
    loads a recursive kernel from its cache into a crash."""
    if n <= 128:
        return _block_sum(a, lo, n)
    los = np.empty(192, np.int64)       # frames: (start, length, children done?)
    lens = np.empty(192, np.int64)
    stage = np.empty(192, np.bool_)
    vals = np.empty(64)                 # the sums of finished frames
    v = 0
    los[0], lens[0], stage[0] = lo, n, False
    f = 1                               # frames on the stack
    while f > 0:
        f -= 1
        s, m, joined = los[f], lens[f], stage[f]
        if m <= 128:
            vals[v] = _block_sum(a, s, m)
            v += 1
        elif joined:
            v -= 1
            vals[v - 1] = vals[v - 1] + vals[v]   # left + right
        else:
            m2 = m // 2
            m2 -= m2 % 8
            los[f], lens[f], stage[f] = s, m, True
            los[f + 1], lens[f + 1], stage[f + 1] = s + m2, m - m2, False
            los[f + 2], lens[f + 2], stage[f + 2] = s, m2, False   # popped first: the left half
            f += 3
    return vals[0]


@njit(cache=True)
def _crammer_costs(S):
    """:func:`crammer_costs` row by row: numpy's (n, K, K) temporary was 90 MB a call at
    Corel5k's size and a tenth of a Latent MMC fit; the same sums in numpy's order."""
    n, k = S.shape
    out = np.empty((n, k))
    buf = np.empty(k)
    for i in range(n):
        for t in range(k):
            st = S[i, t]
            for r in range(k):
                buf[r] = max(0.0, 1.0 + S[i, r] - st)
            out[i, t] = _pairwise_sum(buf, 0, k) - 1.0   # drop r == t (always 1)
    return out


# --------------------------------------------------------------------------- model update
@njit(cache=True)
def _phi_dot(W, Xb, H, latent, i, r):
    """``w_r . Phi(x_i, h_ir)``: linear ``x_i`` or latent tag features (Eq. 8)."""
    acc = 0.0
    if latent:
        m = Xb.shape[1]
        for t in range(m):
            if H[i, r, t]:
                acc += W[r, t] * Xb[i, t] + W[r, m + t]
        return acc / m
    for j in range(Xb.shape[1]):
        acc += W[r, j] * Xb[i, j]
    return acc


@njit(cache=True)
def _phi_add(W, Xb, H, latent, i, r, coef):
    """``w_r += coef * Phi(x_i, h_ir)``."""
    if latent:
        m = Xb.shape[1]
        c = coef / m
        for t in range(m):
            if H[i, r, t]:
                W[r, t] += c * Xb[i, t]
                W[r, m + t] += c
    else:
        for j in range(Xb.shape[1]):
            W[r, j] += coef * Xb[i, j]


@njit(cache=True)
def _phi_sqnorm(Xb, H, latent, i, r):
    acc = 0.0
    if latent:
        m = Xb.shape[1]
        for t in range(m):
            if H[i, r, t]:
                acc += Xb[i, t] * Xb[i, t] + 1.0
        return acc / (m * m)
    for j in range(Xb.shape[1]):
        acc += Xb[i, j] * Xb[i, j]
    return acc


@njit(cache=True)
def _nonzeros(Xb):
    """Xb's non-zero entries row by row, in column order (CSR: indptr, indices, values)."""
    n, d = Xb.shape
    ptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        c = 0
        for j in range(d):
            if Xb[i, j] != 0.0:
                c += 1
        ptr[i + 1] = ptr[i] + c
    idx = np.empty(ptr[n], dtype=np.int64)
    val = np.empty(ptr[n])
    for i in range(n):
        q = ptr[i]
        for j in range(d):
            if Xb[i, j] != 0.0:
                idx[q] = j
                val[q] = Xb[i, j]
                q += 1
    return ptr, idx, val


@njit(cache=True)
def _sparse_dot(W, ptr, idx, val, i, r):
    acc = 0.0
    for q in range(ptr[i], ptr[i + 1]):
        acc += W[r, idx[q]] * val[q]
    return acc


@njit(cache=True)
def _sparse_add(W, ptr, idx, val, i, r, coef):
    for q in range(ptr[i], ptr[i + 1]):
        W[r, idx[q]] += coef * val[q]


@njit(cache=True, inline="always")
def _projected_gradient(G, a, c):
    """The gradient ``G`` of a coordinate ``0 <= a <= c``, projected on its box."""
    if a <= 0.0:
        return min(G, 0.0)
    if a >= c:
        return max(G, 0.0)
    return G


@njit(cache=True)
def dual_cd(Xb, H, latent, labels, alpha, c, W, orders, tol):
    """The linear model's passes on ``Xb``'s non-zeros only (bag-of-words and tag inputs are
    1-2 % dense): a zero adds an exact 0 to every sum, so the numbers are the same as
    :func:`dual_cd_dense`'s, 50-100x fewer of them. The latent model goes to it unchanged.
    """
    if latent:
        return dual_cd_dense(Xb, H, latent, labels, alpha, c, W, orders, tol)
    n = Xb.shape[0]
    k = W.shape[0]
    ptr, idx, val = _nonzeros(Xb)
    W[:, :] = 0.0
    for i in range(n):
        y = labels[i]
        for r in range(k):
            if r != y and alpha[i, r] > 0.0:
                _sparse_add(W, ptr, idx, val, i, y, alpha[i, r])
                _sparse_add(W, ptr, idx, val, i, r, -alpha[i, r])
    sq = np.empty(n)
    for i in range(n):
        acc = 0.0
        for q in range(ptr[i], ptr[i + 1]):
            acc += val[q] * val[q]
        sq[i] = acc
    n_pass = 0
    for p in range(orders.shape[0]):
        n_pass += 1
        max_pg = 0.0
        for q in range(n):
            i = orders[p, q]
            y = labels[i]
            sy = _sparse_dot(W, ptr, idx, val, i, y)
            for r in range(k):
                if r == y:
                    continue
                G = sy - _sparse_dot(W, ptr, idx, val, i, r) - 1.0
                a = alpha[i, r]
                pg = _projected_gradient(G, a, c)
                if abs(pg) > max_pg:
                    max_pg = abs(pg)
                if pg == 0.0:
                    continue
                Qd = sq[i] + sq[i]
                if Qd <= 0.0:
                    continue
                a_new = min(max(a - G / Qd, 0.0), c)
                d = a_new - a
                if d != 0.0:
                    alpha[i, r] = a_new
                    _sparse_add(W, ptr, idx, val, i, y, d)
                    _sparse_add(W, ptr, idx, val, i, r, -d)
                    sy = _sparse_dot(W, ptr, idx, val, i, y)
        if max_pg < tol:
            break
    return n_pass


@njit(cache=True)
def dual_cd_dense(Xb, H, latent, labels, alpha, c, W, orders, tol):
    """Dual coordinate descent for the fixed-label, fixed-feature multi-class SVM.

    Solves ``min 1/2 sum_r ||w_r||^2 + c sum_i sum_{r != y_i} max(0, 1 - w_{y_i}.Phi_iy + w_r.Phi_ir)``
    in its dual (one box-constrained variable ``0 <= alpha_ir <= c`` per
    margin constraint, no equality constraint as there is no unregularised
    bias), coordinate by coordinate as liblinear does for binary SVMs
    (Hsieh et al., ICML 2008). ``W`` is rebuilt from ``alpha`` first (warm
    start), ``orders`` holds one sample permutation per pass; stops when the
    largest projected gradient of a pass is below ``tol``. Modifies ``alpha``
    and ``W`` in place; returns the number of passes.
    """
    n = Xb.shape[0]
    k = W.shape[0]
    W[:, :] = 0.0
    for i in range(n):
        y = labels[i]
        for r in range(k):
            if r != y and alpha[i, r] > 0.0:
                _phi_add(W, Xb, H, latent, i, y, alpha[i, r])
                _phi_add(W, Xb, H, latent, i, r, -alpha[i, r])
    # the linear model's ||Phi(x_i, .)||^2 is ||x_i||^2 whatever the class: summed once per
    # sample here, not twice per margin (the same sum in the same order: the same numbers)
    sq = np.empty(n if not latent else 0)
    for i in range(sq.shape[0]):
        sq[i] = _phi_sqnorm(Xb, H, latent, i, 0)
    n_pass = 0
    for p in range(orders.shape[0]):
        n_pass += 1
        max_pg = 0.0
        for q in range(n):
            i = orders[p, q]
            y = labels[i]
            sy = _phi_dot(W, Xb, H, latent, i, y)
            qy = _phi_sqnorm(Xb, H, latent, i, y) if latent else sq[i]
            for r in range(k):
                if r == y:
                    continue
                G = sy - _phi_dot(W, Xb, H, latent, i, r) - 1.0
                a = alpha[i, r]
                pg = _projected_gradient(G, a, c)
                if abs(pg) > max_pg:
                    max_pg = abs(pg)
                if pg == 0.0:
                    continue
                Qd = qy + (_phi_sqnorm(Xb, H, latent, i, r) if latent else sq[i])
                if Qd <= 0.0:
                    continue
                a_new = min(max(a - G / Qd, 0.0), c)
                d = a_new - a
                if d != 0.0:
                    alpha[i, r] = a_new
                    _phi_add(W, Xb, H, latent, i, y, d)
                    _phi_add(W, Xb, H, latent, i, r, -d)
                    sy = _phi_dot(W, Xb, H, latent, i, y)
        if max_pg < tol:
            break
    return n_pass


def pass_orders(n, n_passes, rng):
    """One fresh sample permutation per pass, shape (n_passes, n)."""
    return np.stack([rng.permutation(n) for _ in range(n_passes)]).astype(np.int64)


# --------------------------------------------------------------------------- estimator
class MMC(ClusterMixin, BaseEstimator):
    """Multi-class maximum margin clustering with hard cluster-balance bounds.

    Parameters
    ----------
    n_clusters : int
    C : float, trade-off of Eq. 1 (the paper picks from {10, 100, 1000}).
    balance : (lower, upper), cluster sizes bounded by lower*N/K and upper*N/K.
    max_iter : int, alternating-descent rounds.
    max_passes, tol : limits of the dual coordinate descent of each model update.
    random_state : seed of the k-means initialisation.

    Two modalities (the ViFeat&BiTag row, input mode ``blm``): ``fit(X, Y)``
    clusters the balanced concatenation ``[X / s_X, Y / s_Y]`` (each block
    divided by its mean non-zero row norm, as input mode ``cmb``). MMC is
    one linear max-margin model over one vector, so it has no per-modality
    affinities to average: for it ``blm`` and ``cmb`` coincide.

    Attributes
    ----------
    labels_, coef_ (K, d), intercept_ (K,), objective_ (list, per round),
    n_iter_, size_bounds_ (L, U), block_scales_ ((s_X, s_Y) when fitted on
    two modalities, else None).
    """

    def __init__(self, n_clusters=8, C=10.0, balance=(0.9, 1.1), max_iter=20,
                 max_passes=50, tol=1e-2, random_state=None):
        self.n_clusters = n_clusters
        self.C = C
        self.balance = balance
        self.max_iter = max_iter
        self.max_passes = max_passes
        self.tol = tol
        self.random_state = random_state

    def _check_params(self, n):
        if n < 2:  # the balance bounds round to "at most 0 clusters"
            raise ValueError(f"MMC needs at least 2 samples, got {n}")
        k = check_n_clusters(self.n_clusters, n)
        if not np.isfinite(self.C) or self.C <= 0:
            raise ValueError(f"C must be a positive number, got {self.C!r}")
        if int(self.max_iter) < 1:
            raise ValueError(f"max_iter must be >= 1, got {self.max_iter!r}")
        check_int(self.max_passes, "max_passes")  # 0 gave numpy's "need at least one array to stack"
        return k, balance_bounds(n, k, self.balance)

    def _joined(self, X, Y, fitting):
        """``(Z, block_scales)``: X, or the balanced ``[X / s_X, Y / s_Y]``; nothing of ``self`` is
        changed (a fit that fails on its input leaves the fitted model as it was). After a fit,
        X must have the fitted features (names and order, for a frame) and Y the fitted tags."""
        if fitting:
            X = check_X(X, "X", dtype=np.float64)
        else:
            check_fitted(self, "coef_")
            if Y is None and self.block_scales_ is not None:
                raise ValueError("this MMC was fitted on two modalities (X, Y); pass Y too")
            if Y is not None and self.block_scales_ is None:
                raise ValueError("this MMC was fitted on one matrix; do not pass Y")
            X = check_X_features(self, X, reset=False).astype(np.float64, copy=False)
            if Y is not None:
                check_tag_names(self, Y)
        if Y is None:
            return X, None
        Yc = check_X(Y.toarray() if hasattr(Y, "toarray") else Y, "Y", dtype=np.float64)
        if Yc.shape[0] != X.shape[0]:
            raise ValueError(f"Y must be 2-D with {X.shape[0]} rows like X, got shape {Yc.shape}")
        if not fitting and Yc.shape[1] != self.n_tags_in_:
            raise ValueError(f"Y has {Yc.shape[1]} tags, but MMC was fitted on {self.n_tags_in_}")
        scales = (_mean_row_norm(X), _mean_row_norm(Yc)) if fitting else self.block_scales_
        return np.hstack([X / scales[0], Yc / scales[1]]), scales

    def fit(self, X, Y=None, layers=None):
        """Cluster X (n, d), or with ``Y`` (n, m) the balanced [X, Y]
        concatenation (``layers`` is accepted for the kit's two-modality
        calling convention and unused)."""
        Z, scales = self._joined(X, Y, fitting=True)
        check_not_constant([Z], "MMC", ("X" if Y is None else "[X, Y]",))
        X_in, X = X, Z
        n = X.shape[0]
        k, (L, U) = self._check_params(n)
        seed = check_random_state_seed(self.random_state)
        Xb = np.hstack([X, np.ones((n, 1))])
        labels = KMeans(k, n_init=10, random_state=seed).fit_predict(X).astype(np.int64)
        W = np.zeros((k, Xb.shape[1]))
        alpha = np.zeros((n, k))
        H = np.zeros((1, 1, 1), dtype=np.bool_)          # unused by the linear model
        rng = np.random.default_rng(seed)
        self.objective_ = []
        it = 0
        for it in range(1, int(self.max_iter) + 1):
            dual_cd(Xb, H, False, labels, alpha, self.C / k, W,
                    pass_orders(n, int(self.max_passes), rng), float(self.tol))
            psi = crammer_costs(Xb @ W.T)
            new = balanced_assignment(psi, L, U)
            obj = 0.5 * (W * W).sum() + self.C / k * psi[np.arange(n), new].sum()
            self.objective_.append(float(obj))
            if np.array_equal(new, labels):
                break
            alpha[new != labels] = 0.0
            labels = new
        self.labels_ = new
        self.coef_ = W[:, :-1]
        self.intercept_ = W[:, -1]
        self.n_iter_ = it
        self.size_bounds_ = (L, U)
        self.block_scales_ = scales
        check_X_features(self, X_in, reset=True)  # n_features_in_, and a frame's feature_names_in_
        self.n_tags_in_ = None if Y is None else Z.shape[1] - self.n_features_in_
        record_tag_names(self, tag_names_of(Y))
        return self

    def decision_function(self, X, Y=None):
        """Cluster scores (n, K) of new samples: X, with Y when the model was fitted on both."""
        X, _ = self._joined(X, Y, fitting=False)
        return X @ self.coef_.T + self.intercept_

    def fit_predict(self, X, Y=None, layers=None):
        return self.fit(X, Y, layers).labels_


__all__ = ["MMC", "balanced_assignment", "balance_bounds", "crammer_costs", "dual_cd", "dual_cd_dense",
           "pass_orders"]
