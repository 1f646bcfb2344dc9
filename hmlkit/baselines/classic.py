"""Classic clustering baselines of Tables 1-3: K-means, SpClust, AffProp.

All three run scikit-learn underneath. What the paper leaves open:

* **Feature affinity** (SpClust, and the per-modality affinities of
  SpClust-blm and AASC): a symmetric κ-nearest-neighbour graph (κ =
  ``n_neighbors``, 20 as in the paper) in Euclidean distance, weighted by a
  Gaussian ``exp(-d² / (2σ²))`` with one global bandwidth σ = the median of
  the non-zero κ-NN distances. A global σ (rather than per-sample local
  scaling) keeps binary tag vectors, which have many exact duplicates, from
  breaking the graph into tiny components.
* **SpClust-blm**: each modality's affinity is normalised to
  ``D^-1/2 A D^-1/2`` and the normalised affinities are averaged (the paper:
  "averaging over separate normalised affinity matrices").
* **AffProp**: Frey & Dueck's affinity propagation does not take a number of
  clusters; the shared self-preference is found by bisection so that it
  returns ``n_clusters`` exemplars (similarity = negative squared Euclidean
  distance, dense n×n, so O(n²) memory: ~3 n×n float64 arrays, 135 MB at
  n = 2379, 7 GB at NUS-WIDE's n = 17523). The message passing is
  scikit-learn's algorithm step for step, its loop in numba
  (``affinity_propagation_labels``; a test checks equal labels).
"""
from __future__ import annotations

import warnings

import numba as nb
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin

from .._validation import check_int, check_n_clusters, check_not_constant, check_random_state_seed, check_X
from ..affinity import normalized_graph, symmetric_graph
from ..spectral import spectral_from_affinity


# ---------------------------------------------------------------- affinities
def knn_gaussian_affinity(Z, n_neighbors=20, metric="euclidean"):
    """Symmetric κ-NN Gaussian affinity of the rows of ``Z`` (csr, zero diagonal).

    σ is the median of the non-zero κ-NN distances; edges are kept if either
    end has the other among its κ nearest neighbours (max-symmetrisation).
    """
    from sklearn.neighbors import NearestNeighbors

    Z = np.asarray(Z)
    n = Z.shape[0]
    k = min(check_int(n_neighbors, "n_neighbors"), n - 1)  # 2.5 was read as 2
    if k < 1:
        return sp.csr_matrix((n, n))
    nn = NearestNeighbors(n_neighbors=k + 1, metric=metric).fit(Z)
    dist, ind = nn.kneighbors(Z)
    # drop each sample itself (it may not come first when duplicates exist)
    rows = np.repeat(np.arange(n), k + 1)
    keep = ind.ravel() != rows
    rows, cols, d = rows[keep], ind.ravel()[keep], dist.ravel()[keep]
    nz = d[d > 0]
    sigma = float(np.median(nz)) if nz.size else 1.0
    w = np.exp(-(d.astype(np.float64) ** 2) / (2.0 * sigma**2))
    A = symmetric_graph(rows, cols, w, n)
    A.setdiag(0)
    A.eliminate_zeros()
    return A


def balanced_affinity(views, n_neighbors=20):
    """SpClust-blm affinity: mean of the per-view normalised κ-NN affinities."""
    mats = [normalized_graph(knn_gaussian_affinity(V, n_neighbors)) for V in views]
    return (sum(mats[1:], mats[0]) / len(mats)).tocsr()


# ------------------------------------------------- spectral clustering proper
def spectral_labels(A, n_clusters, n_neighbors=20, random_state=None):
    """The core's ``spectral_from_affinity`` (κ-NN graph, D^-1/2 A D^-1/2,
    scikit-learn spectral clustering), with any ``random_state`` turned into
    the int seed it takes."""
    seed = check_random_state_seed(random_state) % (2**32)
    n_neighbors = check_int(n_neighbors, "n_neighbors")  # ClustRF and CC-Forest read 2.5 as 2
    return np.asarray(spectral_from_affinity(A, n_clusters, n_neighbors=n_neighbors, random_state=seed),
                      dtype=np.int64)


# ------------------------------------------------------ affinity propagation
@nb.njit(cache=True, inline="always")
def _ap_responsibility_row(A, R, S, i, damping):
    """Row ``i`` of the damped responsibility update (from availabilities ``A``)."""
    n = S.shape[0]
    best = -np.inf
    second = -np.inf
    bi = 0
    for j in range(n):
        v = A[i, j] + S[i, j]
        if v > best:
            second = best
            best = v
            bi = j
        elif v > second:
            second = v
    for j in range(n):
        new = S[i, j] - (second if j == bi else best)
        R[i, j] = R[i, j] * damping + new * (1.0 - damping)


@nb.njit(cache=True)
def _ap_colsum(R, colsum):
    """``colsum[j] = R[j, j] + sum_{i != j} max(R[i, j], 0)``, rows in order."""
    n = R.shape[0]
    colsum[:] = 0.0
    for i in range(n):
        for j in range(n):
            colsum[j] += R[i, j] if i == j else max(R[i, j], 0.0)


@nb.njit(cache=True, inline="always")
def _ap_availability_row(A, R, colsum, i, damping):
    """Row ``i`` of the damped availability update (from responsibilities ``R``)."""
    n = A.shape[0]
    for j in range(n):
        t = (R[i, j] if i == j else max(R[i, j], 0.0)) - colsum[j]
        if i != j and t < 0.0:
            t = 0.0
        A[i, j] = A[i, j] * damping - t * (1.0 - damping)


@nb.njit(cache=True, parallel=True)
def _ap_messages(S, damping, max_iter, convergence_iter, serial):
    """Frey & Dueck's message passing, in place (scikit-learn's update order and damping).

    ``S`` has the preference on its diagonal. Returns (exemplar mask, n_iter,
    converged). Same arithmetic as ``sklearn.cluster.affinity_propagation``
    without its n×n temporaries, rows in parallel. The loop is memory-bound (n x n
    doubles), so one pass over a row updates its availabilities, reads its exemplar
    flag, then computes its next responsibilities while the row is in cache: four
    matrix reads an iteration instead of six (same numbers: a row's responsibilities
    depend on its own availabilities only). ``serial`` (one thread: the caller asks
    numba, as a kernel that does so cannot be cached): the rows go in order, so the same
    pass also adds each new responsibility row to the next column sums, in the order
    :func:`_ap_colsum` adds them (the same numbers), and the pass of its own goes: three
    reads an iteration.
    """
    n = S.shape[0]
    A = np.zeros((n, n))
    R = np.zeros((n, n))
    e = np.zeros((n, convergence_iter), np.bool_)
    colsum = np.empty(n)
    colnext = np.zeros(n)
    E = np.zeros(n, np.bool_)
    converged = False
    for i in nb.prange(n):
        _ap_responsibility_row(A, R, S, i, damping)
    _ap_colsum(R, colsum)
    it = 0
    for it in range(max_iter):
        more = it + 1 < max_iter
        if serial:
            for i in range(n):
                _ap_availability_row(A, R, colsum, i, damping)
                E[i] = (A[i, i] + R[i, i]) > 0
                if more:
                    _ap_responsibility_row(A, R, S, i, damping)
                    for j in range(n):
                        colnext[j] += R[i, j] if i == j else max(R[i, j], 0.0)
        else:
            for i in nb.prange(n):
                _ap_availability_row(A, R, colsum, i, damping)
                E[i] = (A[i, i] + R[i, i]) > 0
                if more:  # the next iteration's responsibilities (unused if this one converged)
                    _ap_responsibility_row(A, R, S, i, damping)
        K = 0
        for i in range(n):
            e[i, it % convergence_iter] = E[i]
            K += E[i]
        if it >= convergence_iter:
            unconverged = False
            for i in range(n):
                se = 0
                for c in range(convergence_iter):
                    se += e[i, c]
                if se != convergence_iter and se != 0:
                    unconverged = True
                    break
            if not unconverged and K > 0:
                converged = True
                break
        if more:
            if serial:
                colsum, colnext = colnext, colsum
                colnext[:] = 0.0
            else:
                _ap_colsum(R, colsum)
    return E, it + 1, converged


class _TieBrokenSimilarity:
    """``S`` with scikit-learn's tie-breaking noise, ``S + (eps S + 100 tiny) N`` with ``N``
    standard normal from ``RandomState(random_state)``, drawn once for every preference:
    only the diagonal (the preference) differs between the runs of a preference search, so
    a run sets it in place (the same numbers, element by element, as noising a fresh copy
    of ``S`` with the preference on its diagonal) instead of drawing n x n normals again."""

    def __init__(self, S, random_state):
        S = np.array(S, dtype=np.float64, copy=True)
        n = S.shape[0]
        N = np.random.RandomState(random_state).standard_normal(size=(n, n))
        self._diag_noise = N.flat[:: n + 1].copy()
        S += self._scale(S) * N
        self.S = S

    @staticmethod
    def _scale(x):
        """scikit-learn's noise scale for similarity ``x``: ``eps x + 100 tiny``."""
        return np.finfo(np.float64).eps * x + np.finfo(np.float64).tiny * 100

    def with_preference(self, preference):
        """The noised similarity with ``preference`` on its diagonal (shared, not a copy)."""
        S = self.S
        p = np.full(S.shape[0], float(preference))
        S.flat[:: S.shape[0] + 1] = p + self._scale(p) * self._diag_noise
        return S


def affinity_propagation_labels(S, preference, damping=0.9, max_iter=400, convergence_iter=20, random_state=0):
    """Affinity propagation of similarity ``S`` (n×n) with one shared ``preference``.

    Follows ``sklearn.cluster.affinity_propagation`` step for step (same
    tie-breaking noise from ``RandomState(random_state)``, same exemplar
    refinement) with the message loop in numba: scikit-learn's loop makes
    several n×n temporaries per iteration and is ~20x slower at n = 2379,
    too slow for the preference bisection. Returns (labels or None if no
    exemplar emerged, converged).
    """
    return _ap_labels(_TieBrokenSimilarity(S, random_state).with_preference(preference), damping, max_iter,
                      convergence_iter)


def _ap_labels(S, damping, max_iter, convergence_iter):
    """:func:`affinity_propagation_labels` of an already noised ``S`` (read, not written)."""
    E, _, converged = _ap_messages(S, float(damping), int(max_iter), int(convergence_iter),
                                   nb.get_num_threads() == 1)
    I = np.flatnonzero(E)
    K = I.size
    if K == 0:
        return None, converged
    c = np.argmax(S[:, I], axis=1)
    c[I] = np.arange(K)
    for k in range(K):  # refine each exemplar: the member with the largest summed similarity
        ii = np.flatnonzero(c == k)
        I[k] = ii[np.argmax(np.sum(S[np.ix_(ii, ii)], axis=0))]
    c = np.argmax(S[:, I], axis=1)
    c[I] = np.arange(K)
    labels = I[c]
    return np.searchsorted(np.unique(labels), labels).astype(np.int64), converged


# ---------------------------------------------------------------- estimators
class _Clusterer(ClusterMixin, BaseEstimator):
    def fit_predict(self, X, y=None, **fit_params):
        return self.fit(X, y, **fit_params).labels_


def _check_views(X, Y=None, method="this clusterer"):
    X = check_X(X, "X", dtype=np.float64)
    if Y is None:
        check_not_constant([X], method)
        return X, None
    Y = check_X(Y, "Y", dtype=np.float64)
    if Y.shape[0] != X.shape[0]:
        raise ValueError(f"Y has {Y.shape[0]} rows but X has {X.shape[0]} samples")
    check_not_constant([X, Y], method)
    return X, Y


class KMeansClustering(_Clusterer):
    """K-means (scikit-learn, k-means++ initialisation, ``n_init`` restarts)."""

    def __init__(self, n_clusters=8, n_init=10, max_iter=300, random_state=None):
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y=None):
        from sklearn.cluster import KMeans

        X, _ = _check_views(X, method="K-means")
        k = check_n_clusters(self.n_clusters, X.shape[0])
        seed = check_random_state_seed(self.random_state) % (2**32)
        km = KMeans(n_clusters=k, n_init=self.n_init, max_iter=self.max_iter, random_state=seed).fit(X)
        self.labels_ = km.labels_.astype(np.int64)
        self.cluster_centers_ = km.cluster_centers_
        return self


class SpectralClustering(_Clusterer):
    """SpClust (Ng, Jordan, Weiss 2002) on a Gaussian κ-NN affinity.

    ``fit(X)`` clusters one feature matrix; ``fit(X, Y)`` is SpClust-blm:
    the averaged normalised per-view affinities (module docstring).
    ``affinity_`` is the csr affinity that was clustered.
    """

    def __init__(self, n_clusters=8, n_neighbors=20, random_state=None):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.random_state = random_state

    def fit(self, X, Y=None, layers=None):
        X, Y = _check_views(X, Y, method="SpClust")
        k = check_n_clusters(self.n_clusters, X.shape[0])
        if Y is None:
            A = knn_gaussian_affinity(X, self.n_neighbors)
        else:
            A = balanced_affinity([X, Y], self.n_neighbors)
        self.affinity_ = A
        self.labels_ = spectral_labels(A, k, n_neighbors=self.n_neighbors, random_state=self.random_state)
        return self


class AffinityPropagationClustering(_Clusterer):
    """AffProp (Frey & Dueck 2007) with the preference searched to give ``n_clusters``.

    The similarity is ``-||x_i - x_j||²``. The shared preference ``p < 0`` is
    searched on ``q = log(-p)`` (large q = low preference = few clusters), where
    cluster counts change about geometrically. The bracket starts from ``lo`` =
    twice the minimum similarity (few clusters) and ``hi`` = the median similarity
    (many clusters); an end that does not bracket ``n_clusters`` moves outwards
    (``log 4`` a step, at most ``max_widen`` steps, and no further once a step moves
    the count the wrong way: on data with many tied similarities, e.g. binary tags,
    the count stops following the preference, and the old search spent 20 more runs
    there). Every run narrows
    the bracket to the closest runs either side of ``n_clusters``; the next
    preference interpolates ``log(count)`` linearly in ``q`` between them (the
    count's power law), or bisects when the same end has moved twice in a row
    (Illinois rule), until a run gives ``n_clusters``, the bracket is narrower
    than ``rtol`` or ``max_bisect`` runs. The interpolation needs about half the
    runs of plain bisection on Corel5k's four input modes (each run is a full
    message passing over n x n matrices).

    The kept run is the one closest to ``n_clusters``; between runs as close, one
    whose messages converged within ``max_iter`` iterations (an unconverged count
    still oscillates). Closeness comes first: on Corel5k's binary tags at 75 %
    removed, the only converged runs had hundreds to 1,671 clusters where
    unconverged ones had about 50. ``n_clusters_found_`` (can differ from
    ``n_clusters`` when no preference gives it), ``preference_``, ``n_runs_``,
    ``converged_`` (of the kept run).
    ``damping``/``max_iter``/``convergence_iter`` as in scikit-learn (damping
    raised to 0.9 against oscillation).
    """

    def __init__(self, n_clusters=8, damping=0.9, max_iter=200, convergence_iter=15, max_bisect=20, rtol=1e-3,
                 max_widen=10, random_state=None):
        self.n_clusters = n_clusters
        self.damping = damping
        self.max_iter = max_iter
        self.convergence_iter = convergence_iter
        self.max_bisect = max_bisect
        self.rtol = rtol
        self.max_widen = max_widen
        self.random_state = random_state

    def _run(self, S, pref):
        self.n_runs_ += 1
        labels, converged = _ap_labels(S.with_preference(pref), self.damping, self.max_iter, self.convergence_iter)
        if labels is None:  # no exemplar: unusable
            return None, 0, converged
        return labels, int(np.unique(labels).size), converged

    def fit(self, X, y=None):
        from sklearn.metrics import pairwise_distances

        X, _ = _check_views(X, method="AffProp")
        n = X.shape[0]
        if n < 2:  # no similarity to pass messages on: "found no exemplar for any preference"
            raise ValueError(f"AffProp needs at least 2 samples, got {n}")
        k = check_n_clusters(self.n_clusters, n)
        if not 0.5 <= self.damping < 1:
            raise ValueError(f"damping must be in [0.5, 1), got {self.damping}")
        check_int(self.max_iter, "max_iter")  # 0 gave "found no exemplar for any preference"
        check_int(self.convergence_iter, "convergence_iter")
        seed = check_random_state_seed(self.random_state) % (2**32)
        S = -pairwise_distances(X, metric="sqeuclidean")
        off = S[~np.eye(n, dtype=bool)]
        smin = float(off.min())
        if smin == 0.0:  # all samples identical
            smin = -1.0
        noised = _TieBrokenSimilarity(S, seed)  # the same noise at every preference: drawn once
        del S
        self.n_runs_ = 0
        best = (None, -1, None, False)  # the kept run: labels, count, pref, converged
        few, many = None, None  # the closest (q, count) runs with count < k and count > k

        def run(q):
            nonlocal few, many, best
            pref = -float(np.exp(q))
            labels, c, conv = self._run(noised, pref)
            if labels is not None and (best[0] is None or (abs(c - k), not conv) < (abs(best[1] - k), not best[3])):
                best = (labels, c, pref, bool(conv))
            if labels is not None and c < k and (few is None or q < few[0]):
                few = (q, c)
            elif (labels is None or c > k) and (many is None or q > many[0]):
                many = (q, c)
            return labels is not None and c == k

        def hit():
            return best[1] == k

        q = np.log(-2.0 * smin)  # log(-p): large = low preference = few clusters
        last = None
        for _ in range(1 + self.max_widen):  # a run with at most k clusters
            if run(q) or few is not None:
                break
            c = many[1]
            if last is not None and not 0 < c <= last:  # a lower preference gave more clusters
                break
            last, q = c, q + np.log(4.0)
        q = np.log(-min(float(np.median(off)), 1e-9 * smin))
        last = None
        for _ in range(1 + self.max_widen):  # a run with at least k clusters
            if hit() or (few is not None and many is not None):
                break
            run(q)
            if hit() or many is not None:
                break
            c = few[1]
            if last is not None and c < last:  # a higher preference gave fewer clusters
                break
            last, q = c, q - np.log(4.0)
        bisect = False  # the last step did not halve the bracket: bisect (Dekker's safeguard)
        for _ in range(self.max_bisect):
            if hit() or few is None or many is None or few[0] - many[0] < self.rtol:
                break
            (q_f, c_f), (q_m, c_m) = few, many
            t = 0.5
            if c_m > 0 and not bisect:  # log(count) linear in q between the two runs, kept off the ends
                t = min(max((np.log(c_m) - np.log(k)) / (np.log(c_m) - np.log(c_f)), 0.1), 0.9)
            run(q_m + t * (q_f - q_m))
            bisect = few[0] - many[0] > 0.5 * (q_f - q_m)
        labels, c, pref, converged = best
        if labels is None:
            raise RuntimeError("affinity propagation found no exemplar for any preference")
        _, labels = np.unique(labels, return_inverse=True)
        self.labels_ = labels.astype(np.int64)
        self.n_clusters_found_ = c
        self.preference_ = pref
        self.converged_ = converged
        if c != k:  # no preference tried gave k clusters (the count is not monotone in the preference)
            warnings.warn(f"affinity propagation found {c} clusters, not the {k} asked, at every "
                          f"preference tried (n_clusters_found_)", stacklevel=2)
        return self
