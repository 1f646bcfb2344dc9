"""Comparison methods of the M-HCRF paper (Jiang et al. 2015, Sec. 3.2) and its protocol.

* :class:`SVMBaseline` — "the visual and textual features are catenated in
  SVM ... without distinguishing their different modality": a linear SVM
  (scikit-learn ``LinearSVC``) on ``[x, z]``.
* :class:`CCASVM` — "CCA is first performed to map images and texts into a
  subspace, and we use the mapped features of images and texts in SVM ...
  based on the framework in Ref. [16]": scikit-learn ``CCA`` fitted on the
  two training views (unsupervised), both views projected, the projections
  appended to the original features (Ref. [16]'s shared-subspace classifier
  uses both), then the linear SVM.

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
from sklearn.base import BaseEstimator

from .._validation import check_random_state_seed
from .mhcrf import MHCRF, _check_two_views

__all__ = ["SVMBaseline", "CCASVM", "concept_split", "f1_binary", "reduce_visual", "run_concept", "run_mhcrf_study",
           "PAPER_TABLE1", "PAPER_TABLE3"]


class _TwoViewLinearSVM(BaseEstimator):
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
    """CCA of the two views, projections concatenated, linear SVM (paper's "CCA + SVM").

    ``include_original=True`` (default) follows the framework the paper cites
    for it (Ji et al., KDD 2008, "Extracting shared subspace for multi-label
    classification"): the classifier sees the original features *and* their
    shared-subspace projections, ``f = wᵀ[x, z] + vᵀ[Θ_x x, Θ_z z]``; with
    False it sees the projections only.
    """

    def __init__(self, n_components=10, C=1.0, include_original=True, class_weight=None, standardize=True,
                 max_iter=500, random_state=None):
        self.n_components = n_components
        self.include_original = include_original
        self.C = C
        self.class_weight = class_weight
        self.standardize = standardize
        self.max_iter = max_iter
        self.random_state = random_state

    def _features(self, Xv, Xt, fit=False):
        Xs = self._vis(Xv, fit)
        U, V = self.cca_.transform(Xs, Xt)
        if self.include_original:
            return np.hstack([Xs, Xt, U, V])
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


# published F1 of the paper (Table 1: M-HCRF / SVM / CCA+SVM; Table 3: M-HCRF vs number of hidden variables)
PAPER_TABLE1 = {
    "Pascal07": {"mhcrf": 0.4943, "svm": 0.4706, "ccasvm": 0.4720},
    "MIR": {"mhcrf": 0.5110, "svm": 0.4873, "ccasvm": 0.4944},
    "Wiki": {"mhcrf": 0.9118, "svm": 0.8408, "ccasvm": 0.8856},
    "NUS": {"mhcrf": 0.2386, "svm": 0.2270, "ccasvm": 0.2282},
}
PAPER_TABLE3 = {
    "n_hidden": (1, 2, 3, 5, 10),
    "NUS": (0.2222, 0.2239, 0.2386, 0.2131, 0.1979),
    "Wiki": (0.9118, 0.8646, 0.8448, 0.8226, 0.7723),
}


def run_mhcrf_study(data, concepts=None, n_rounds=1, n_pos=150, n_neg=250, n_pca=20, n_hidden=3,
                    hidden_grid=(1, 2, 3, 5, 10), mhcrf_params=None, svm_C=1.0, cca_components=10,
                    random_state=0, progress=False):
    """The paper's Table 1 and Table 3 protocol on a :class:`~hmlkit.data.TaggedData` with ``groups``.

    For each concept (a ground-truth group, one-vs-rest) and round, a
    training set of ``n_pos`` positives / ``n_neg`` negatives is drawn
    (:func:`concept_split`), every other sample is tested. Visual view: ``X``
    reduced by PCA to ``n_pca`` dims (None = raw features); tag view: the
    observed tags ``Y`` (binary). Methods: M-HCRF with ``n_hidden`` hidden
    variables, SVM, CCA+SVM (Table 1); M-HCRF for each ``hidden_grid`` value
    (Table 3). Returns an ``xarray.Dataset`` with ``f1`` (method, concept,
    round), ``f1_hidden`` (n_hidden, concept, round) and fit times.
    """
    import xarray as xr

    if data.groups is None:
        raise ValueError("data has no ground-truth groups: the concepts of the protocol")
    seed = check_random_state_seed(random_state)
    groups = np.asarray(data.groups)
    if concepts is None:
        concepts = np.unique(groups)
    concepts = np.asarray(concepts)
    unknown = np.setdiff1d(concepts, groups)
    if unknown.size:
        raise ValueError(f"unknown concept(s) {unknown.tolist()}: not among the data's groups")
    if not isinstance(n_rounds, numbers.Integral) or n_rounds < 1:
        raise ValueError(f"n_rounds must be a positive integer, got {n_rounds!r}")
    hidden_grid = tuple(int(h) for h in hidden_grid)
    mp = dict(n_restarts=3, C=1.0, max_iter=200)
    mp.update(mhcrf_params or {})
    for h in (n_hidden,) + hidden_grid:
        MHCRF(n_hidden=h, **mp)._check_params()
    Xv = np.asarray(data.X, dtype=np.float64)
    if n_pca is not None:
        Xv = reduce_visual(Xv, n_pca, seed)
    Xt = data.Y.toarray().astype(np.float64)
    methods = ("mhcrf", "svm", "ccasvm")
    f1 = np.full((len(methods), concepts.size, n_rounds), np.nan)
    tm = np.full_like(f1, np.nan)
    f1h = np.full((len(hidden_grid), concepts.size, n_rounds), np.nan)
    tmh = np.full_like(f1h, np.nan)
    n_train = np.zeros((concepts.size, n_rounds), dtype=np.int64)
    for ci, c in enumerate(concepts):
        y = (groups == c).astype(np.int64)
        for r in range(n_rounds):
            s = seed + 7919 * r + int(ci)
            tr, te = concept_split(groups, c, n_pos, n_neg, random_state=s)
            n_train[ci, r] = tr.size
            est = {"mhcrf": MHCRF(n_hidden=n_hidden, random_state=s, **mp),
                   "svm": SVMBaseline(C=svm_C, random_state=s),
                   "ccasvm": CCASVM(n_components=cca_components, C=svm_C, random_state=s)}
            res = run_concept(Xv, Xt, y, tr, te, est)
            for mi, name in enumerate(methods):
                f1[mi, ci, r], tm[mi, ci, r] = res[name]
            # the grid point equal to n_hidden is the same model (same seed) as the table's M-HCRF: reuse it
            hres = run_concept(Xv, Xt, y, tr, te,
                               {h: MHCRF(n_hidden=h, random_state=s, **mp) for h in hidden_grid if h != n_hidden})
            hres[n_hidden] = res["mhcrf"]
            for hi, h in enumerate(hidden_grid):
                f1h[hi, ci, r], tmh[hi, ci, r] = hres[h]
            if progress:
                print(f"concept {c} round {r}: " + ", ".join(f"{k}={v[0]:.3f}" for k, v in res.items()))
    ds = xr.Dataset(
        {"f1": (("method", "concept", "round"), f1), "fit_seconds": (("method", "concept", "round"), tm),
         "f1_hidden": (("n_hidden", "concept", "round"), f1h),
         "fit_seconds_hidden": (("n_hidden", "concept", "round"), tmh),
         "n_train": (("concept", "round"), n_train)},
        coords={"method": list(methods), "concept": concepts, "round": np.arange(n_rounds),
                "n_hidden": list(hidden_grid)},
        attrs={"n_pos": n_pos, "n_neg": n_neg, "n_pca": -1 if n_pca is None else int(n_pca),
               "mhcrf_n_hidden": int(n_hidden), "mhcrf_params": repr(mp), "svm_C": float(svm_C),
               "cca_components": int(cca_components), "seed": seed, "n_samples": int(Xv.shape[0]),
               "n_tags": int(Xt.shape[1]), "data": str(getattr(data, "name", ""))},
    )
    return ds
