"""scikit-learn's estimator checks (``parametrize_with_checks``) on the kit's three estimators.

The checks drive an estimator with a 1-D target ``y`` (class labels or numbers); the kit's
estimators learn from a 2-D 0/1 tag matrix ``Y`` (n_samples, n_tags). So each runs through
a thin adapter subclass whose ``fit(X, y)`` turns ``y`` into its one-hot tag matrix (one
tag per distinct value of ``y``, one flat layer) and passes it on: a single-label problem
is the multi-label one where every sample carries exactly one tag, so the estimator is
fitted as it is, on data it is meant for. ``y=None`` is passed on as it is (the
estimator's own error). The adapters add nothing else but a name for the method that
uses new samples, so that the checks call it:

- ``HMLForest``: ``transform`` is ``apply`` (leaf indices, as scikit-learn's
  ``RandomTreesEmbedding``); it is declared not to keep X's float dtype (leaf ids are
  int32), so the dtype-preservation check, which cannot apply, is not generated.
- ``HMLClustering``: nothing (``fit_predict`` / ``labels_`` are its own).
- ``HMLTagCompleter``: ``decision_function`` is ``predict_scores`` on new samples
  (their tag scores, without known tags).

The checks expected to fail, and why, are :func:`expected_failed_checks`; every other
check of scikit-learn's list must pass. Few trees keep the whole module to about a minute.
"""
import inspect

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils.estimator_checks import parametrize_with_checks

from hmlkit import HMLClustering, HMLForest, HMLTagCompleter


def one_hot(y):
    """The (n, n_classes) 0/1 tag matrix of a 1-D target: sample i has the tag of its value."""
    if y is None:
        return None
    _, cls = np.unique(np.asarray(y).ravel(), return_inverse=True)
    Y = np.zeros((cls.size, cls.max(initial=0) + 1), np.uint8)
    Y[np.arange(cls.size), cls] = 1
    return Y


class OneHotForest(TransformerMixin, HMLForest):
    def fit(self, X, y, layers=None):
        return super().fit(X, one_hot(y), layers)

    def transform(self, X):
        return self.apply(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []  # leaf indices, int32 whatever X's dtype
        return tags


class OneHotClustering(HMLClustering):
    def fit(self, X, y, layers=None):
        return super().fit(X, one_hot(y), layers)


class OneHotCompleter(HMLTagCompleter):
    def fit(self, X, y, layers=None):
        return super().fit(X, one_hot(y), layers)

    def decision_function(self, X):
        return self.predict_scores(X)


SMALL = dict(n_estimators=3, random_state=0, n_jobs=1)
ESTIMATORS = [OneHotForest(**SMALL), OneHotClustering(n_clusters=3, n_neighbors=5, **SMALL),
              OneHotCompleter(n_neighbors=5, **SMALL)]


def expected_failed_checks(estimator):
    """The checks that do not apply to a tag estimator, or that the kit fails knowingly."""
    if isinstance(estimator, HMLClustering):
        return {"check_clustering": "fits on X alone, and HMLClustering clusters tagged samples: its fit "
                                    "needs the tags Y (its forest splits on them)"}
    return {}


STRICT = {"xfail_strict": True} if "xfail_strict" in inspect.signature(parametrize_with_checks).parameters else {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks, **STRICT)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
