"""Tag co-occurrence completion baseline.

Score of tag ``j`` for a sample = sum over the sample's observed tags ``i`` of
``P(j | i) = #(i and j) / #i``, counted on the observed tags of the training
set. It uses no visual feature: it shows how much of the completion task the
tag statistics alone solve.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from sklearn.base import BaseEstimator

from .._validation import check_X, check_Y
from .gc import rank_observed_last


def conditional_cooccurrence(Y):
    """(m, m) dense matrix ``P[i, j] = P(tag j | tag i)`` from binary tags
    ``Y``; rows of tags never observed are 0. The diagonal is 1 for observed
    tags (it only touches observed tags, which are ranked last anyway)."""
    Y = check_Y(Y).astype(np.float64)
    C = np.asarray((Y.T @ Y).todense())
    freq = np.diag(C).copy()
    return np.divide(C, freq[:, None], out=np.zeros_like(C), where=freq[:, None] > 0)


class CooccurrenceCompleter(BaseEstimator):
    """Complete tags by summed conditional co-occurrence ``Σ_i P(j | i)``.

    ``fit(X, Y)`` takes ``X`` only to check shapes (the method is tag-only).
    ``predict_scores(X=None)`` returns (n, m) scores of the training samples,
    observed tags ranked last.
    """

    def fit(self, X, Y):
        X = check_X(X)
        Y = check_Y(Y, n_samples=X.shape[0])
        self.cond_prob_ = conditional_cooccurrence(Y)
        scores = np.asarray(Y.astype(np.float64) @ self.cond_prob_)
        self.scores_ = rank_observed_last(scores, Y)
        return self

    def predict_scores(self, X=None):
        if not hasattr(self, "scores_"):
            raise ValueError("CooccurrenceCompleter is not fitted; call fit(X, Y) first")
        if X is not None:
            raise ValueError("CooccurrenceCompleter is transductive: predict_scores takes X=None")
        return self.scores_.copy()
