"""The rules every tag completer shares (HML-RF's and the baselines'): observed tags
ranked last, GC scores from any clustering, and the ``predict_scores`` of a transductive
completer. Apart from :mod:`hmlkit.complete` (which re-exports them) so that a baseline
completer loads these, not HML-RF and its forest (a study's recorded dependencies)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._validation import check_Y


def rank_observed_last(scores, Y):
    """Return a float copy of ``scores`` where every observed tag (Y = 1)
    scores strictly below every unobserved tag of every sample."""
    scores = np.array(scores, dtype=np.float64)
    Y = check_Y(Y, scores.shape[0])
    if Y.shape != scores.shape:
        raise ValueError(f"scores shape {scores.shape} differs from tags shape {Y.shape}")
    if not np.isfinite(scores).all():
        raise ValueError("scores contain NaN or inf")
    # below the least score by at least one, and by a float step where one is absorbed (|min| >= 2**53)
    least = min(scores.min(initial=0.0), 0.0)
    low = min(least - 1.0, np.nextafter(least, -np.inf))
    rows = np.repeat(np.arange(Y.shape[0]), np.diff(Y.indptr))
    scores[rows, Y.indices] = low
    return scores


def cluster_tag_scores(labels, Y):
    """GC completion scores from any clustering (Eq. 12, as corrected).

    ``score(i, j) = |X_c+ without i| / (|X_c| - 1)``, c the cluster of sample i:
    the share of the *other* members of i's cluster with tag j observed (the
    printed ``|X_c+| / (|X_c+| - 1)`` is a typo). A singleton cluster scores 0.
    Observed tags are ranked last.
    """
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {labels.shape}")
    Y = check_Y(Y)
    if Y.shape[0] != labels.shape[0]:
        raise ValueError(f"Y has {Y.shape[0]} rows but there are {labels.shape[0]} labels")
    _, lab = np.unique(labels, return_inverse=True)
    C = sp.csr_matrix((np.ones(len(lab)), (lab, np.arange(len(lab)))))
    pos = np.asarray((C @ Y.astype(np.float64)).todense())  # (k, m) positives per cluster
    size = np.asarray(C.sum(axis=1)).ravel()
    num = pos[lab] - Y.toarray()
    den = (size[lab] - 1)[:, None]
    scores = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    return rank_observed_last(scores, Y)


class TransductiveScoresMixin:
    """``predict_scores()`` of a completer that scores only the samples it was
    fitted on: ``fit`` stores the (n, m) scores in ``scores_``."""

    def predict_scores(self, X=None):
        name = type(self).__name__
        if not hasattr(self, "scores_"):
            raise ValueError(f"{name} is not fitted; call fit(X, Y) first")
        if X is not None:
            raise ValueError(f"{name} is transductive: predict_scores takes X=None (the training samples)")
        return self.scores_.copy()
