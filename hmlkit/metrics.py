"""Evaluation metrics of the HML-RF paper: clustering (Sec 4.2) and tag completion (Sec 4.3).

Clustering: purity, NMI, Rand index, balanced pair-counting F1 and adjusted
Rand index, all computed from the contingency table (never over the O(n^2)
sample pairs). Completion: AP@N, AR@N and Coverage@N of the N top-ranked
unobserved tags, plus the annotation MAP used by SFSS's protocol.
"""
from __future__ import annotations

import numbers

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score, rand_score
from sklearn.metrics.cluster import contingency_matrix

from hmlkit._validation import check_Y

__all__ = ["clustering_scores", "pair_counts", "purity", "completion_scores", "mean_average_precision"]


# --------------------------------------------------------------------------- clustering


def _check_labelings(truth, pred):
    truth = np.asarray(truth)
    pred = np.asarray(pred)
    if truth.ndim != 1 or pred.ndim != 1:
        raise ValueError(f"truth and pred must be 1-D label arrays, got shapes {truth.shape} and {pred.shape}")
    if truth.shape[0] != pred.shape[0]:
        raise ValueError(f"truth has {truth.shape[0]} labels but pred has {pred.shape[0]}")
    if truth.shape[0] == 0:
        raise ValueError("truth and pred are empty")
    for name, a in (("truth", truth), ("pred", pred)):
        if a.dtype == object and any(v is None for v in a.ravel()):  # e.g. a failed clusterer's labels
            raise ValueError(f"{name} contains None labels")
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise ValueError(f"{name} contains NaN or inf labels")
    return truth, pred


def purity(truth, pred):
    """Purity = (1/n) * sum over predicted clusters of the size of their dominant true class."""
    truth, pred = _check_labelings(truth, pred)
    C = contingency_matrix(truth, pred, sparse=True).tocsc()  # rows: classes, cols: clusters
    return float(np.asarray(C.max(axis=0).todense()).sum() / truth.shape[0])


def pair_counts(truth, pred):
    """Pair-counting confusion (TP, FP, FN) from the contingency table, in O(n + cells).

    TP = pairs in the same cluster and the same class, FP = same cluster but
    different classes, FN = same class but different clusters (unordered pairs).
    """
    truth, pred = _check_labelings(truth, pred)
    C = contingency_matrix(truth, pred, sparse=True)
    cells = C.data.astype(np.int64)
    a = np.asarray(C.sum(axis=1), dtype=np.int64).ravel()  # class sizes
    b = np.asarray(C.sum(axis=0), dtype=np.int64).ravel()  # cluster sizes
    tp = int((cells * (cells - 1) // 2).sum())
    same_cluster = int((b * (b - 1) // 2).sum())
    same_class = int((a * (a - 1) // 2).sum())
    return tp, same_cluster - tp, same_class - tp


def clustering_scores(truth, pred):
    """The five clustering metrics of the paper (Sec 4.2) as a dict of floats.

    - ``purity``: (1/n) sum over predicted clusters k of ``max_c |c ∩ k|`` (the
      share of samples belonging to their cluster's dominant class).
    - ``nmi``: normalised mutual information of Strehl & Ghosh,
      I(truth; pred) / sqrt(H(truth) H(pred)), i.e. scikit-learn's
      ``normalized_mutual_info_score(average_method="geometric")``.
    - ``ri``: Rand index (scikit-learn ``rand_score``).
    - ``f1``: balanced pair-counting F-measure: over all unordered sample pairs,
      precision = TP / (TP + FP) and recall = TP / (TP + FN), where "predicted
      positive" means the pair shares a predicted cluster and "actual positive"
      means it shares a true class; F1 = 2PR / (P + R). A ratio whose
      denominator is 0 (no pair in a common cluster, resp. class) is 1, and
      F1 = 0 when P + R = 0.
    - ``ari``: adjusted Rand index (scikit-learn ``adjusted_rand_score``), in [-1, 1].
    """
    truth, pred = _check_labelings(truth, pred)
    tp, fp, fn = pair_counts(truth, pred)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "purity": purity(truth, pred),
        "nmi": float(normalized_mutual_info_score(truth, pred, average_method="geometric")),
        "ri": float(rand_score(truth, pred)),
        "f1": float(f1),
        "ari": float(adjusted_rand_score(truth, pred)),
    }


# --------------------------------------------------------------------------- completion


def _binary_tags(Y, name):
    """``check_Y`` on a CSR view: dense 0/1 input is converted first so that only
    its non-zeros are validated (a dense n x m check costs more than the metric)."""
    if not sp.issparse(Y):
        Y = np.asarray(Y)
        if Y.ndim == 2 and (np.issubdtype(Y.dtype, np.number) or Y.dtype == bool):
            Y = sp.csr_matrix(Y)
    return check_Y(Y, name=name)


def _check_scores(scores, shape=None, name="scores", allow_neginf=True):
    if sp.issparse(scores):
        scores = scores.toarray()
    scores = np.asarray(scores)
    if scores.dtype.kind == "c":  # its imaginary part would be dropped with only a warning
        raise ValueError(f"{name} must be real, got complex dtype {scores.dtype}")
    if scores.dtype not in (np.float32, np.float64):
        try:
            scores = scores.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be numeric, got dtype {scores.dtype}") from None
    scores = np.ascontiguousarray(scores)
    if scores.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (n_samples, n_tags) array, got shape {scores.shape}")
    if shape is not None and scores.shape != shape:
        raise ValueError(f"{name} has shape {scores.shape} but the tags have shape {shape}")
    if scores.size:
        # one reduction each instead of full boolean temporaries: max is NaN iff any NaN
        hi = scores.max()
        if np.isnan(hi):
            bad = np.argwhere(np.isnan(scores))[0]
            raise ValueError(f"{name} contains NaN (first at row {bad[0]}, column {bad[1]})")
        if hi == np.inf:
            raise ValueError(f"{name} contains +inf")
        if not allow_neginf and scores.min() == -np.inf:
            raise ValueError(f"{name} contains -inf")
    return scores


def _check_N(N, m):
    if isinstance(N, numbers.Number):
        N = (N,)
    try:
        N = tuple(N)
    except TypeError:
        raise ValueError(f"N must be a positive integer or a sequence of them, got {N!r}") from None
    if not N:
        raise ValueError("N must name at least one cut-off")
    for k in N:
        if not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"every N must be a positive integer, got {k!r}")
        if k > m:
            raise ValueError(f"N={k} is larger than the number of tags ({m})")
    return tuple(int(k) for k in N)


@numba.njit(cache=True)
def _cumulative_hits(scores, rows, obs_indptr, obs_indices, hid_indptr, hid_indices, K):
    """Cumulative hidden-tag hits among each row's K best unobserved tags.

    For row ``rows[r]`` the unobserved tags are ranked by score descending,
    ties by lower tag index (a tag replaces a kept one only if its score is
    strictly larger, and tags are visited in ascending order). Returns
    ``cum`` (len(rows), K) int64 with ``cum[r, t]`` = number of hidden tags
    among the ranks 0..t. One pass over the row with an insertion list of
    length K: O(m + K^2) per row, no (n, m) temporaries.
    """
    n_rows = rows.shape[0]
    m = scores.shape[1]
    cum = np.zeros((n_rows, K), dtype=np.int64)
    top_val = np.empty(K, dtype=np.float64)
    top_idx = np.empty(K, dtype=np.int64)
    is_obs = np.zeros(m, dtype=np.bool_)
    is_hid = np.zeros(m, dtype=np.bool_)
    for r in range(n_rows):
        i = rows[r]
        for p in range(obs_indptr[i], obs_indptr[i + 1]):
            is_obs[obs_indices[p]] = True
        filled = 0
        for j in range(m):
            if is_obs[j]:
                continue
            v = scores[i, j]
            if filled == K and not v > top_val[K - 1]:
                continue
            # insertion position: after every kept value >= v (keeps lower index first on ties)
            pos = filled if filled < K else K - 1
            while pos > 0 and top_val[pos - 1] < v:
                if pos < K:
                    top_val[pos] = top_val[pos - 1]
                    top_idx[pos] = top_idx[pos - 1]
                pos -= 1
            top_val[pos] = v
            top_idx[pos] = j
            if filled < K:
                filled += 1
        for p in range(hid_indptr[i], hid_indptr[i + 1]):
            is_hid[hid_indices[p]] = True
        c = 0
        for t in range(K):
            if t < filled and is_hid[top_idx[t]]:
                c += 1
            cum[r, t] = c
        for p in range(hid_indptr[i], hid_indptr[i + 1]):
            is_hid[hid_indices[p]] = False
        for p in range(obs_indptr[i], obs_indptr[i + 1]):
            is_obs[obs_indices[p]] = False
    return cum


def completion_scores(scores, observed, hidden, N=(1, 2, 3, 4, 5)):
    """Missing-tag completion accuracy (paper Sec 4.3) as a flat dict of floats.

    Only samples with at least one hidden (ground-truth missing) tag are
    evaluated. For each such sample the tags are ranked by ``scores``
    descending with the sample's observed tags excluded (ties broken by the
    lower tag index, a stable order), and the top N are the "N recovered
    tags". With ``hits = |top-N ∩ hidden|``:

    - ``AP@N``: "Average Precision of N recovered tags" = mean over samples of hits / N.
    - ``AR@N``: "Average Recall of N recovered tags, i.e. the percentage of
      correctly recovered tags over all ground truth missing tags" = mean over
      samples of ``hits / |hidden|``.
    - ``Coverage@N``: "the percentage of samples with at least one correctly
      recovered tag when N tags are completed" = share of samples with hits >= 1.

    Parameters
    ----------
    scores : (n, m) array of completion scores (higher = more likely). NaN and
        +inf are rejected; -inf is allowed and ranks below every finite score.
        Observed tags take no slot: if fewer than N tags are unobserved, the
        empty slots count as misses (AP@N still divides by N).
    observed : (n, m) binary matrix of the tags the method saw (dense or sparse).
    hidden : (n, m) binary matrix of the removed ground-truth tags, disjoint from ``observed``.
    N : int or iterable of positive ints (each at most m).

    Returns
    -------
    dict with keys ``"AP@N"``, ``"AR@N"``, ``"Coverage@N"`` for every N (in
    that key order: all AP, then all AR, then all Coverage).
    """
    observed = _binary_tags(observed, "observed")
    hidden = _binary_tags(hidden, "hidden")
    if observed.shape != hidden.shape:
        raise ValueError(f"observed has shape {observed.shape} but hidden has shape {hidden.shape}")
    scores = _check_scores(scores, observed.shape)
    N = _check_N(N, observed.shape[1])
    if observed.multiply(hidden).nnz:
        raise ValueError("hidden and observed tags overlap: a hidden tag must not be observed")
    n_hidden = np.diff(hidden.indptr)
    rows = np.flatnonzero(n_hidden > 0)
    if rows.size == 0:
        raise ValueError("no sample has a hidden tag; completion scores are undefined")
    cum = _cumulative_hits(
        scores.astype(np.float64, copy=False),  # one compiled signature
        rows.astype(np.int64), observed.indptr.astype(np.int64), observed.indices.astype(np.int64),
        hidden.indptr.astype(np.int64), hidden.indices.astype(np.int64), max(N),
    )
    nh = n_hidden[rows].astype(np.float64)
    out = {}
    for k in N:
        out[f"AP@{k}"] = float(np.mean(cum[:, k - 1] / k))
    for k in N:
        out[f"AR@{k}"] = float(np.mean(cum[:, k - 1] / nh))
    for k in N:
        out[f"Coverage@{k}"] = float(np.mean(cum[:, k - 1] > 0))
    return out


def mean_average_precision(scores, truth):
    """Annotation MAP: mean over tag columns with >= 1 positive of the average precision
    of ranking the samples by ``scores[:, j]`` against ``truth[:, j]`` (SFSS's protocol).

    The AP is scikit-learn's ``average_precision_score`` (step-wise, no
    interpolation; tied scores form one threshold), computed here without
    its per-column overhead: AP_j = (1/P) * sum over positives i of
    tp(>= s_i) / count(>= s_i), the precision at the threshold of i's score.
    Columns without any positive sample are skipped (their AP is undefined).
    """
    truth = _binary_tags(truth, "truth")
    scores = _check_scores(scores, truth.shape, allow_neginf=False)
    n = truth.shape[0]
    T = truth.tocsc()
    T.sort_indices()
    cols = np.flatnonzero(np.diff(T.indptr) > 0)
    if cols.size == 0:
        raise ValueError("truth has no positive entry; MAP is undefined")
    S_sorted = scores.T.copy()  # (m, n): one row per tag, sorted in place below
    S_sorted.sort(axis=1)
    aps = np.empty(cols.size)
    for c, j in enumerate(cols):
        v = scores[T.indices[T.indptr[j] : T.indptr[j + 1]], j]
        count_ge = n - np.searchsorted(S_sorted[j], v, side="left")
        tp_ge = v.size - np.searchsorted(np.sort(v), v, side="left")
        aps[c] = np.mean(tp_ge / count_ge)
    return float(aps.mean())
