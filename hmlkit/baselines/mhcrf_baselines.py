"""Comparison methods of the M-HCRF paper (Jiang et al. 2015, Sec. 3.2) and its protocol.

* :class:`SVMBaseline` — "the visual and textual features are catenated in
  SVM ... without distinguishing their different modality": a linear SVM
  (scikit-learn ``LinearSVC``) on ``[x, z]``.
* :class:`CCASVM` — "CCA is first performed to map images and texts into a
  subspace, and we use the mapped features of images and texts in SVM":
  scikit-learn ``CCA`` fitted on the two views (unsupervised), both views
  projected, the two projections concatenated, then the linear SVM.

Open points, as coded: the kernel of the paper's SVM is not given (linear
here, the usual choice for BoVW + tag vectors); the visual view is
standardised exactly as M-HCRF's (``standardize=True``), tags are used as
given; CCA's number of components is a parameter (default 10, clipped to
the views' ranks).

The protocol helpers (:func:`concept_split`, :func:`f1_binary`,
:func:`run_concept`) implement the paper's Table 1/3 set-up on a
:class:`~hmlkit.data.TaggedData`: one concept at a time, one-vs-rest, a
training set of ``n_pos`` positives and ``n_neg`` negatives drawn at random
(the Wikipedia protocol of Sec. 3.1), every other sample for testing, F1 of
the positive class.
"""
from __future__ import annotations

import numbers
import time

import numpy as np

from .._validation import check_random_state_seed
from .mhcrf import MHCRF, _check_two_views

__all__ = ["SVMBaseline", "CCASVM", "concept_split", "f1_binary", "reduce_visual", "run_concept"]


class _TwoViewLinearSVM:
    def _check_common(self):
        if not (isinstance(self.C, numbers.Real) and self.C > 0 and np.isfinite(self.C)):
            raise ValueError(f"C must be a positive finite number, got {self.C!r}")
        if self.class_weight not in (None, "balanced"):
            raise ValueError(f"class_weight must be None or 'balanced', got {self.class_weight!r}")

    def _vis(self, Xv, fit=False):
        if not self.standardize:
            return Xv
        if fit:
            self.vis_mean_ = Xv.mean(axis=0)
            sd = Xv.std(axis=0)
            self.vis_scale_ = np.where(sd > 0, sd, 1.0)
        return (Xv - self.vis_mean_) / self.vis_scale_

    def _svm(self, seed):
        from sklearn.svm import LinearSVC

        return LinearSVC(C=self.C, class_weight=self.class_weight, random_state=seed % (2**32), max_iter=5000)

    def _check_fitted(self, X_vis, X_tag):
        if not hasattr(self, "svm_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit first")
        Xv, Xt = _check_two_views(X_vis, X_tag)
        if Xv.shape[1] != self.n_features_vis_ or Xt.shape[1] != self.n_features_tag_:
            raise ValueError(
                f"expected {self.n_features_vis_} visual and {self.n_features_tag_} tag features, "
                f"got {Xv.shape[1]} and {Xt.shape[1]}")
        return Xv, Xt

    def _check_y(self, Xv, y):
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != Xv.shape[0]:
            raise ValueError(f"y must be 1-D with {Xv.shape[0]} labels, got shape {y.shape}")
        if np.unique(y).size < 2:
            raise ValueError("y needs at least 2 classes")
        return y

    def decision_function(self, X_vis, X_tag):
        F = self._features(*self._check_fitted(X_vis, X_tag))
        return self.svm_.decision_function(F)

    def predict(self, X_vis, X_tag):
        F = self._features(*self._check_fitted(X_vis, X_tag))
        return self.svm_.predict(F)

    @property
    def classes_(self):
        return self.svm_.classes_


class SVMBaseline(_TwoViewLinearSVM):
    """Linear SVM on the concatenated visual and tag features (paper's "SVM")."""

    def __init__(self, C=1.0, class_weight=None, standardize=True, random_state=None):
        self.C = C
        self.class_weight = class_weight
        self.standardize = standardize
        self.random_state = random_state

    def _features(self, Xv, Xt, fit=False):
        return np.hstack([self._vis(Xv, fit), Xt])

    def fit(self, X_vis, X_tag, y):
        self._check_common()
        Xv, Xt = _check_two_views(X_vis, X_tag)
        y = self._check_y(Xv, y)
        seed = check_random_state_seed(self.random_state)
        self.n_features_vis_, self.n_features_tag_ = Xv.shape[1], Xt.shape[1]
        self.svm_ = self._svm(seed).fit(self._features(Xv, Xt, fit=True), y)
        return self


class CCASVM(_TwoViewLinearSVM):
    """CCA of the two views, projections concatenated, linear SVM (paper's "CCA + SVM")."""

    def __init__(self, n_components=10, C=1.0, class_weight=None, standardize=True, max_iter=500,
                 random_state=None):
        self.n_components = n_components
        self.C = C
        self.class_weight = class_weight
        self.standardize = standardize
        self.max_iter = max_iter
        self.random_state = random_state

    def _features(self, Xv, Xt, fit=False):
        U, V = self.cca_.transform(self._vis(Xv, fit), Xt)
        return np.hstack([U, V])

    def fit(self, X_vis, X_tag, y):
        import warnings

        from sklearn.cross_decomposition import CCA
        from sklearn.exceptions import ConvergenceWarning

        self._check_common()
        if not isinstance(self.n_components, numbers.Integral) or self.n_components < 1:
            raise ValueError(f"n_components must be a positive integer, got {self.n_components!r}")
        Xv, Xt = _check_two_views(X_vis, X_tag)
        y = self._check_y(Xv, y)
        seed = check_random_state_seed(self.random_state)
        self.n_features_vis_, self.n_features_tag_ = Xv.shape[1], Xt.shape[1]
        k = int(min(self.n_components, Xv.shape[1], Xt.shape[1], Xv.shape[0] - 1))
        self.n_components_ = k
        with warnings.catch_warnings():
            # NIPALS may stop at max_iter on near-degenerate binary tag columns; the projection is still usable
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.cca_ = CCA(n_components=k, max_iter=self.max_iter).fit(self._vis(Xv, fit=True), Xt)
        self.svm_ = self._svm(seed).fit(self._features(Xv, Xt), y)
        return self


# --------------------------------------------------------------------------
# protocol of the paper's Tables 1 and 3
# --------------------------------------------------------------------------

def f1_binary(y_true, y_pred):
    """F1 of the positive class (1); 0 when there is no true or predicted positive."""
    y_true = np.asarray(y_true).astype(bool)
    y_pred = np.asarray(y_pred).astype(bool)
    tp = float(np.sum(y_true & y_pred))
    denom = float(y_true.sum() + y_pred.sum())
    return 2.0 * tp / denom if denom > 0 else 0.0


def concept_split(groups, concept, n_pos, n_neg, random_state=None):
    """Training / test indices for one concept, one-vs-rest.

    ``n_pos`` positives and ``n_neg`` negatives are drawn at random for
    training (fewer if the concept has fewer, keeping at least a quarter of
    each class for testing); every other sample is a test sample.
    """
    groups = np.asarray(groups)
    rng = np.random.default_rng(check_random_state_seed(random_state))
    pos = np.flatnonzero(groups == concept)
    neg = np.flatnonzero(groups != concept)
    if pos.size < 2 or neg.size < 2:
        raise ValueError(f"concept {concept!r} has {pos.size} positives and {neg.size} negatives; need >= 2 each")
    k_pos = int(min(n_pos, max(1, (3 * pos.size) // 4)))
    k_neg = int(min(n_neg, max(1, (3 * neg.size) // 4)))
    tr = np.concatenate([rng.choice(pos, k_pos, replace=False), rng.choice(neg, k_neg, replace=False)])
    mask = np.ones(groups.size, dtype=bool)
    mask[tr] = False
    return np.sort(tr), np.flatnonzero(mask)


def reduce_visual(X, n_components, random_state=None):
    """PCA of the visual features to ``n_components`` dims (unsupervised, fitted on all samples)."""
    from sklearn.decomposition import PCA

    X = np.asarray(X, dtype=np.float64)
    k = int(min(n_components, X.shape[0], X.shape[1]))
    return PCA(n_components=k, random_state=check_random_state_seed(random_state) % (2**32)).fit_transform(X)


def run_concept(Xv, Xt, y, train, test, methods):
    """Fit every ``methods[name]`` (an unfitted two-view estimator) and return F1 and fit time per name."""
    out = {}
    for name, est in methods.items():
        t0 = time.perf_counter()
        est.fit(Xv[train], Xt[train], y[train])
        pred = est.predict(Xv[test], Xt[test])
        out[name] = (f1_binary(y[test], pred), time.perf_counter() - t0)
    return out
