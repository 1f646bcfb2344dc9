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
from sklearn.base import BaseEstimator

from .._validation import check_X, check_Y
from ..complete import TransductiveScoresMixin, cluster_tag_scores, rank_observed_last  # noqa: F401  (core rules, re-exported)


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


class GCCompleter(TransductiveScoresMixin, BaseEstimator):
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
