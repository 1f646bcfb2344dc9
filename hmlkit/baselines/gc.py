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
from sklearn.base import BaseEstimator, clone

from .._validation import check_some_tag, check_X, check_Y
from ..data import TaggedData
from ..tag_scores import TransductiveScoresMixin, cluster_tag_scores, rank_observed_last  # noqa: F401  (core rules, re-exported)
from .inputs import INPUT_MODES, fit_in_mode


class GCCompleter(TransductiveScoresMixin, BaseEstimator):
    """Tag completion by global clusters ("ClusteringMethodName(GC)").

    Parameters
    ----------
    clusterer : clustering estimator (``fit`` and ``labels_``), or None
        Fitted on the input chosen by ``input_mode``, exactly as
        :func:`hmlkit.baselines.run.run_clustering` fits it.
    labels : array-like (n,), or None
        Precomputed cluster labels of the training samples (instead of a
        clusterer). Exactly one of ``clusterer`` and ``labels`` is required.
    input_mode : {"vifeat", "bitag", "detscore", "cmb", "blm", "hml"}
        An input mode of :mod:`hmlkit.baselines.inputs` (``cmb`` is its one
        ``[X / s_X, Y / s_Y]``), or ``hml`` (X, Y and the layers).

    Attributes
    ----------
    labels_ : (n,) array
        The cluster labels used.
    scores_ : (n, m) array
        The completion scores.
    clusterer_ : estimator
        The fitted copy of ``clusterer`` (when one was given).
    """

    def __init__(self, clusterer=None, labels=None, input_mode="vifeat"):
        self.clusterer = clusterer
        self.labels = labels
        self.input_mode = input_mode

    def fit(self, X, Y, layers=None):
        X = check_X(X)
        Y = check_Y(Y, n_samples=X.shape[0])
        check_some_tag(Y, "GC completion (its clusters' tag frequencies)")
        if (self.clusterer is None) == (self.labels is None):
            raise ValueError("GCCompleter needs exactly one of `clusterer` and `labels`")
        if self.labels is not None:
            labels = np.asarray(self.labels)
            if labels.shape != (X.shape[0],):
                raise ValueError(f"labels must have shape ({X.shape[0]},), got {labels.shape}")
        else:
            if self.input_mode not in INPUT_MODES + ("hml",):
                raise ValueError(f"input_mode must be one of {INPUT_MODES + ('hml',)}, got {self.input_mode!r}")
            if not hasattr(self.clusterer, "fit"):
                raise ValueError(f"clusterer must have a fit method, got {type(self.clusterer).__name__}")
            seed = self.clusterer.get_params().get("random_state") if hasattr(self.clusterer, "get_params") else None
            data = TaggedData(X=X, Y=Y, layers=layers)
            # a copy is fitted, as scikit-learn's meta-estimators do: the parameter stays unfitted
            self.clusterer_ = clone(self.clusterer) if hasattr(self.clusterer, "get_params") else self.clusterer
            labels = np.asarray(fit_in_mode(self.clusterer_, self.input_mode, data, random_state=seed).labels_)
        if self.labels is not None and hasattr(self, "clusterer_"):  # an earlier fit's, of other samples
            del self.clusterer_
        self.labels_ = labels
        self.scores_ = cluster_tag_scores(labels, Y)
        self.n_samples_fit_ = X.shape[0]
        return self
