"""Comparison methods of the M-HCRF paper (Jiang et al. 2015, Sec. 3.2).

* :class:`SVMBaseline` — "the visual and textual features are catenated in
  SVM ... without distinguishing their different modality": a linear SVM
  (scikit-learn ``LinearSVC``) on ``[x, z]``.
* :class:`CCASVM` — "CCA is first performed to map images and texts into a
  subspace, and we use the mapped features of images and texts in SVM ...
  based on the framework in Ref. [16]": scikit-learn ``CCA`` fitted on the
  two training views (unsupervised), both views projected, the projections
  appended to the original features (Ref. [16]'s shared-subspace classifier
  uses both), then the linear SVM.
* :class:`CRFBaseline`, :class:`CCACRF`, :class:`UniModalCRF` — the paper's
  "CRF", "CCA + CRF" and "Uni-modal model": with the category as the only
  random variable a CRF is (multinomial) logistic regression, so these are
  scikit-learn ``LogisticRegression`` on the same features; the uni-modal
  model multiplies the two per-view CRFs' probabilities.

Open points, as coded: the kernel of the paper's SVM is not given (linear
here, the usual choice for BoVW + tag vectors); the visual view is
standardised exactly as M-HCRF's (``standardize=True``), tags are used as
given; CCA's number of components is a parameter (default 10, clipped to
the views' ranks).

The paper's protocol (Tables 1 and 3) is the seed study
:mod:`hmlkit.studies.seed_mhcrf`.
"""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator

from .._validation import check_random_state_seed
from .mhcrf import MHCRF, _check_two_views

__all__ = ["SVMBaseline", "CRFBaseline", "CCASVM", "CCACRF", "UniModalCRF", "CCAProjection"]


class _TwoViewLinear(BaseEstimator):
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

    _classifier = "svm"

    def _make_clf(self, seed):
        if self._classifier == "crf":
            # a CRF whose only random variable is the category, linked to every observed feature, is
            # multinomial logistic regression; its Gaussian prior is the L2 penalty (C = δ²)
            from sklearn.linear_model import LogisticRegression

            return LogisticRegression(C=self.C, class_weight=self.class_weight, max_iter=2000)
        from sklearn.svm import LinearSVC

        return LinearSVC(C=self.C, class_weight=self.class_weight, random_state=seed % (2**32), max_iter=5000)

    def _check_fitted(self, X_vis, X_tag):
        if not hasattr(self, "clf_"):
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
        return self.clf_.decision_function(F)

    def predict(self, X_vis, X_tag):
        F = self._features(*self._check_fitted(X_vis, X_tag))
        return self.clf_.predict(F)

    @property
    def classes_(self):
        return self.clf_.classes_


class SVMBaseline(_TwoViewLinear):
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
        self.clf_ = self._make_clf(seed).fit(self._features(Xv, Xt, fit=True), y)
        return self


class CCAProjection:
    """The unsupervised half of CCA+SVM: standardise the visual view, CCA of the two views.

    ``fit(X_vis, X_tag)`` then ``transform(X_vis, X_tag)`` -> ``(Xs, U, V)``:
    standardised visual view and the two views' canonical projections. A
    plain class (no ``get_params``) so that a *fitted* projection handed to
    :class:`CCASVM` survives ``sklearn.base.clone`` (deep-copied, not reset).
    """

    def __init__(self, n_components=10, standardize=True, max_iter=500):
        self.n_components = n_components
        self.standardize = standardize
        self.max_iter = max_iter

    def fit(self, X_vis, X_tag):
        import warnings

        from sklearn.cross_decomposition import CCA
        from sklearn.exceptions import ConvergenceWarning

        if not isinstance(self.n_components, numbers.Integral) or self.n_components < 1:
            raise ValueError(f"n_components must be a positive integer, got {self.n_components!r}")
        Xv, Xt = _check_two_views(X_vis, X_tag)
        if self.standardize:
            self.vis_mean_ = Xv.mean(axis=0)
            sd = Xv.std(axis=0)
            self.vis_scale_ = np.where(sd > 0, sd, 1.0)
        k = int(min(self.n_components, Xv.shape[1], Xt.shape[1], Xv.shape[0] - 1))
        self.n_components_ = k
        with warnings.catch_warnings():
            # NIPALS may stop at max_iter on near-degenerate binary tag columns; the projection is still usable
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.cca_ = CCA(n_components=k, max_iter=self.max_iter).fit(self._vis(Xv), Xt)
        self.n_features_vis_, self.n_features_tag_ = Xv.shape[1], Xt.shape[1]
        return self

    def _vis(self, Xv):
        return (Xv - self.vis_mean_) / self.vis_scale_ if self.standardize else Xv

    def transform(self, X_vis, X_tag):
        if not hasattr(self, "cca_"):
            raise ValueError("this CCAProjection is not fitted yet; call fit first")
        Xs = self._vis(X_vis)
        U, V = self.cca_.transform(Xs, X_tag)
        return Xs, U, V


class CCASVM(_TwoViewLinear):
    """CCA of the two views, projections concatenated, linear SVM (paper's "CCA + SVM").

    ``include_original=True`` (default) follows the framework the paper cites
    for it (Ji et al., KDD 2008, "Extracting shared subspace for multi-label
    classification"): the classifier sees the original features *and* their
    shared-subspace projections, ``f = wᵀ[x, z] + vᵀ[Θ_x x, Θ_z z]``; with
    False it sees the projections only.

    ``projection``: an already *fitted* :class:`CCAProjection` to use as is
    (e.g. fitted once on every sample's views, labels unused, when many
    concepts share one data set); None fits one in ``fit``.
    """

    def __init__(self, n_components=10, C=1.0, include_original=True, class_weight=None, standardize=True,
                 max_iter=500, projection=None, random_state=None):
        self.n_components = n_components
        self.include_original = include_original
        self.C = C
        self.class_weight = class_weight
        self.standardize = standardize
        self.max_iter = max_iter
        self.projection = projection
        self.random_state = random_state

    def _features(self, Xv, Xt, fit=False):
        Xs, U, V = self.projection_.transform(Xv, Xt)
        if self.include_original:
            return np.hstack([Xs, Xt, U, V])
        return np.hstack([U, V])

    def fit(self, X_vis, X_tag, y, X_vis_unlabeled=None, X_tag_unlabeled=None):
        """Fit CCA on the training views (plus the optional unlabeled views: CCA is unsupervised, so
        more paired samples without labels may refine the subspace), then the SVM on the training set."""
        self._check_common()
        Xv, Xt = _check_two_views(X_vis, X_tag)
        y = self._check_y(Xv, y)
        seed = check_random_state_seed(self.random_state)
        if (X_vis_unlabeled is None) != (X_tag_unlabeled is None):
            raise ValueError("give both X_vis_unlabeled and X_tag_unlabeled, or neither")
        if self.projection is not None:
            if not hasattr(self.projection, "cca_"):
                raise ValueError("projection must be a fitted CCAProjection")
            if (self.projection.n_features_vis_, self.projection.n_features_tag_) != (Xv.shape[1], Xt.shape[1]):
                raise ValueError("projection was fitted on views with other numbers of features")
            self.projection_ = self.projection
        else:
            Cv, Ct = Xv, Xt
            if X_vis_unlabeled is not None:
                Uv, Ut = _check_two_views(X_vis_unlabeled, X_tag_unlabeled)
                if Uv.shape[1] != Xv.shape[1] or Ut.shape[1] != Xt.shape[1]:
                    raise ValueError("unlabeled views must have the training views' numbers of features")
                Cv, Ct = np.vstack([Xv, Uv]), np.vstack([Xt, Ut])
            self.projection_ = CCAProjection(self.n_components, self.standardize, self.max_iter).fit(Cv, Ct)
        self.n_features_vis_, self.n_features_tag_ = Xv.shape[1], Xt.shape[1]
        self.clf_ = self._make_clf(seed).fit(self._features(Xv, Xt), y)
        return self


class CRFBaseline(SVMBaseline):
    """The paper's "CRF": concatenated visual and tag features, one category node, no hidden variables.

    Such a CRF (Eq. 1-2 with f_k(y, x) = 1[y = c]·x_k) is multinomial logistic
    regression; fitted with scikit-learn ``LogisticRegression`` (L2 = the
    Gaussian prior, ``C = δ²``).
    """

    _classifier = "crf"


class CCACRF(CCASVM):
    """The paper's "CCA + CRF": :class:`CCASVM`'s features, logistic-regression CRF instead of the SVM."""

    _classifier = "crf"


def _lr_log_proba(clf, X):
    """log P(y | x) of a fitted LogisticRegression from its decision values (finite where
    ``predict_log_proba`` would take log 0)."""
    from scipy.special import log_expit, log_softmax

    f = clf.decision_function(X)
    if f.ndim == 1:
        return np.column_stack([log_expit(-f), log_expit(f)])
    return log_softmax(f, axis=1)


class UniModalCRF(_TwoViewLinear):
    """The paper's "Uni-modal model": one CRF (logistic regression) per modality, trained independently,
    combined "by multiplying the probabilities computed by each CRF" (renormalised over classes)."""

    _classifier = "crf"

    def __init__(self, C=1.0, class_weight=None, standardize=True, random_state=None):
        self.C = C
        self.class_weight = class_weight
        self.standardize = standardize
        self.random_state = random_state

    def fit(self, X_vis, X_tag, y):
        self._check_common()
        Xv, Xt = _check_two_views(X_vis, X_tag)
        y = self._check_y(Xv, y)
        seed = check_random_state_seed(self.random_state)
        self.n_features_vis_, self.n_features_tag_ = Xv.shape[1], Xt.shape[1]
        self.clf_vis_ = self._make_clf(seed).fit(self._vis(Xv, fit=True), y)
        self.clf_ = self._make_clf(seed).fit(Xt, y)  # tag CRF; clf_ also marks the model as fitted
        return self

    def predict_log_proba(self, X_vis, X_tag):
        Xv, Xt = self._check_fitted(X_vis, X_tag)
        lp = _lr_log_proba(self.clf_vis_, self._vis(Xv)) + _lr_log_proba(self.clf_, Xt)
        return lp - np.logaddexp.reduce(lp, axis=1, keepdims=True)

    def decision_function(self, X_vis, X_tag):
        lp = self.predict_log_proba(X_vis, X_tag)
        return lp[:, 1] - lp[:, 0] if lp.shape[1] == 2 else lp

    def predict(self, X_vis, X_tag):
        lp = self.predict_log_proba(X_vis, X_tag)
        return self.classes_[np.argmax(lp, axis=1)]
