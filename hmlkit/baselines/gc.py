"""Method(GC): tag completion from the clusters of any clustering method.

The HML-RF paper (Sec 4.3, baseline group 3) turns every clustering method of
its Tables 1-2 into a tag completer with the rule of HML-RF(GC) (Eq. 12):
a sample's score for tag ``j`` is the share of its cluster mates that carry
``j``. The printed Eq. 12 is a typo; as fixed in the design notes we use
``|X_c+| / |X_c|`` computed *without the sample itself*, so a sample's own
(observed) tag never votes for itself.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from sklearn.base import BaseEstimator

from .._validation import check_X, check_Y

# The core (hmlkit.complete) owns these two functions; until it lands the
# local versions below, with the same names and semantics, stand in.
try:  # pragma: no cover - depends on what main holds
    from ..complete import cluster_tag_scores, rank_observed_last  # noqa: F401
except ImportError:  # pragma: no cover

    def rank_observed_last(scores, Y):
        """Return ``scores`` (float64 copy) with every observed tag of a row
        ranked below every unobserved tag of that row, order kept within
        each of the two groups."""
        scores = np.array(scores, dtype=np.float64, copy=True)
        Y = check_Y(Y, n_samples=scores.shape[0])
        if Y.shape != scores.shape:
            raise ValueError(f"scores shape {scores.shape} differs from Y shape {Y.shape}")
        if Y.nnz and scores.size:
            # one global offset larger than the score range keeps the order
            # inside the observed group and puts all of it below the rest
            offset = float(scores.max() - scores.min()) + 1.0
            rows, cols = Y.nonzero()
            scores[rows, cols] -= offset
        return scores

    def cluster_tag_scores(labels, Y):
        """GC completion scores (Eq. 12, fixed): for sample ``i`` in cluster
        ``c`` and tag ``j``, the share of the *other* members of ``c`` that
        carry ``j``; 0 for a singleton cluster. Observed tags ranked last."""
        Y = check_Y(Y)
        labels = np.asarray(labels)
        if labels.ndim != 1 or labels.shape[0] != Y.shape[0]:
            raise ValueError(f"labels must be a 1-D array of length {Y.shape[0]}, got shape {labels.shape}")
        _, inv = np.unique(labels, return_inverse=True)
        n, k = Y.shape[0], int(inv.max()) + 1 if inv.size else 0
        member = sp.csr_matrix((np.ones(n), (np.arange(n), inv)), shape=(n, k))
        counts = np.asarray((member.T @ Y.astype(np.float64)).todense())  # (k, m)
        size = np.bincount(inv, minlength=k).astype(np.float64)
        num = counts[inv] - Y.toarray()
        den = size[inv] - 1.0
        scores = np.divide(num, den[:, None], out=np.zeros_like(num), where=den[:, None] > 0)
        return rank_observed_last(scores, Y)


def _cluster_input(X, Y, input_mode):
    """What a clusterer's ``fit_predict`` is given, per input mode."""
    if input_mode == "vifeat":
        return (X,)
    if input_mode == "bitag":
        return (Y.toarray().astype(np.float32),)
    if input_mode == "cmb":
        return (np.hstack([X, Y.toarray().astype(np.float32)]),)
    if input_mode == "hml":
        return (X, Y)
    raise ValueError(f"input_mode must be one of 'vifeat', 'bitag', 'cmb', 'hml', got {input_mode!r}")


class GCCompleter(BaseEstimator):
    """Tag completion by global clusters ("ClusteringMethodName(GC)").

    Parameters
    ----------
    clusterer : object with ``fit_predict``, or None
        Clustering estimator. It is called as ``fit_predict(X)`` on the input
        chosen by ``input_mode`` (``fit_predict(X, Y)`` for ``"hml"``).
    labels : array-like (n,), or None
        Precomputed cluster labels of the training samples (instead of a
        clusterer). Exactly one of ``clusterer`` and ``labels`` is required.
    input_mode : {"vifeat", "bitag", "cmb", "hml"}
        Visual features, binary tags, their concatenation, or (X, Y).

    Attributes
    ----------
    labels_ : (n,) cluster labels used; scores_ : (n, m) completion scores.
    """

    def __init__(self, clusterer=None, labels=None, input_mode="vifeat"):
        self.clusterer = clusterer
        self.labels = labels
        self.input_mode = input_mode

    def fit(self, X, Y):
        X = check_X(X)
        Y = check_Y(Y, n_samples=X.shape[0])
        if (self.clusterer is None) == (self.labels is None):
            raise ValueError("GCCompleter needs exactly one of `clusterer` and `labels`")
        if self.labels is not None:
            labels = np.asarray(self.labels)
            if labels.shape != (X.shape[0],):
                raise ValueError(f"labels must have shape ({X.shape[0]},), got {labels.shape}")
        else:
            if not hasattr(self.clusterer, "fit_predict"):
                raise ValueError(f"clusterer must have a fit_predict method, got {type(self.clusterer).__name__}")
            labels = np.asarray(self.clusterer.fit_predict(*_cluster_input(X, Y, self.input_mode)))
        self.labels_ = labels
        self.scores_ = cluster_tag_scores(labels, Y)
        self.n_samples_fit_ = X.shape[0]
        return self

    def predict_scores(self, X=None):
        if not hasattr(self, "scores_"):
            raise ValueError("GCCompleter is not fitted; call fit(X, Y) first")
        if X is not None:
            raise ValueError("GCCompleter is transductive: predict_scores takes X=None (the training samples)")
        return self.scores_.copy()
