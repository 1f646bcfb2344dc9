"""M-HCRF (:mod:`hmlkit.baselines.mhcrf`) as a per-tag detector: cross-validated
P(tag | visual, other observed tags) for every tag, used as tag completion scores (the
registry's ``mhcrf`` completion row) and as DetScore-style features."""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator

from .._validation import check_random_state_seed, check_some_tag, check_X, check_Y
from ..tag_scores import rank_observed_last
from .mhcrf import MHCRF


def _tags_arg(tags, m):
    if tags is None:
        return np.arange(m, dtype=np.int64)
    t = np.asarray(tags)
    if t.ndim != 1 or t.size == 0 or not np.issubdtype(t.dtype, np.integer):
        raise ValueError("tags must be a non-empty 1-D array of integer tag indices")
    bad = t[(t < 0) | (t >= m)]
    if bad.size:
        raise ValueError(f"tags names unknown tag index {int(bad[0])} (there are {m} tags)")
    if np.unique(t).size != t.size:
        raise ValueError("tags contains duplicates")
    return t.astype(np.int64)


def _one_tag_scores(Xr, Yd, t, n_folds, seed, mh_params):
    from sklearn.model_selection import StratifiedKFold

    y = Yd[:, t]
    n_pos = int(y.sum())
    out = np.zeros(Xr.shape[0])
    if n_pos < n_folds or n_pos > y.size - n_folds:
        # too few positives (or negatives) to cross-validate: constant prior score
        out[:] = n_pos / y.size
        return out
    Z = np.delete(Yd, t, axis=1)  # the other observed tags are the second modality
    skf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed % (2**32))
    for tr, te in skf.split(Xr, y):
        mdl = MHCRF(random_state=seed, **mh_params).fit(Xr[tr], Z[tr], y[tr])
        out[te] = mdl.predict_proba(Xr[te], Z[te])[:, 1]
    return out


def mhcrf_tag_scores(X, Y, tags=None, n_folds=3, n_components=20, n_hidden=2, n_states=2, C=1.0,
                     n_restarts=1, max_iter=100, class_weight="balanced", random_state=0, n_jobs=None):
    """Cross-validated M-HCRF detection scores, one binary detector per tag.

    For tag t the category is "t observed on the sample", the visual modality
    is ``X`` reduced by PCA to ``n_components`` dimensions (fitted once on all
    of ``X``: unsupervised, transductive), the tag modality is the sample's
    other observed tags (``Y`` without column t). Each sample's score is
    P(t | x, z) from a model trained on the other ``n_folds - 1`` folds, so a
    sample never scores itself: usable as DetScore features or, ranking
    observed tags last, as tag completion scores. Tags with fewer than
    ``n_folds`` positives (or negatives) get their frequency as a constant.

    Cost: ``len(tags) × n_folds`` M-HCRF fits, each ``n_restarts`` L-BFGS runs
    of at most ``max_iter`` iterations on ~n(1 − 1/n_folds) samples with
    ``n_states ** n_hidden`` configurations. Measured (defaults, one shared
    core): all 114 tags of the synthetic trecvid profile at n = 600 took
    80 s (342 fits, ≈ 0.23 s each); time grows about linearly with n.

    Returns
    -------
    scores : (n, len(tags)) float array, columns in the order of ``tags``
        (all tags when ``tags`` is None).
    """
    from sklearn.decomposition import PCA

    Xc = check_X(X, dtype=np.float64, min_samples=2)
    Yc = check_Y(Y, n_samples=Xc.shape[0])
    tags = _tags_arg(tags, Yc.shape[1])
    if not isinstance(n_folds, numbers.Integral) or n_folds < 2:
        raise ValueError(f"n_folds must be an integer >= 2, got {n_folds!r}")
    if not isinstance(n_components, numbers.Integral) or n_components < 1:
        raise ValueError(f"n_components must be a positive integer, got {n_components!r}")
    seed = check_random_state_seed(random_state)
    k = min(int(n_components), Xc.shape[0], Xc.shape[1])
    Xr = PCA(n_components=k, random_state=seed % (2**32)).fit_transform(Xc)
    Yd = Yc.toarray().astype(np.float64)
    mh = dict(n_hidden=n_hidden, n_states=n_states, C=C, n_restarts=n_restarts, max_iter=max_iter,
              class_weight=class_weight)
    MHCRF(**mh)._check_params()  # fail before any work on a bad parameter
    if n_jobs in (None, 1):
        cols = [_one_tag_scores(Xr, Yd, int(t), n_folds, seed + int(t), mh) for t in tags]
    else:
        from joblib import Parallel, delayed

        cols = Parallel(n_jobs=n_jobs)(delayed(_one_tag_scores)(Xr, Yd, int(t), n_folds, seed + int(t), mh)
                                      for t in tags)
    return np.column_stack(cols) if cols else np.zeros((Xc.shape[0], 0))


class MHCRFTagCompleter(BaseEstimator):
    """Tag completion by M-HCRF per-tag detection (the detector use of seed 003).

    Not the paper's own application (M-HCRF classifies one category at a
    time); here each tag gets a cross-validated M-HCRF detector
    (:func:`mhcrf_tag_scores`) and its probabilities are the completion
    scores, with the sample's observed tags ranked last. Transductive:
    ``predict_scores()`` scores the training samples only.

    ``tags`` restricts the detectors to a subset (cost is linear in the number
    of tags: 114 tags × 3 folds ≈ 340 fits); tags outside it score below every
    detected tag (their training frequency minus 2, still ordered by
    frequency). Observed tags are ranked last (:func:`hmlkit.complete.rank_observed_last`).
    """

    def __init__(self, tags=None, n_folds=3, n_components=20, n_hidden=2, n_states=2, C=1.0,
                 n_restarts=1, max_iter=100, random_state=0, n_jobs=None):
        self.tags = tags
        self.n_folds = n_folds
        self.n_components = n_components
        self.n_hidden = n_hidden
        self.n_states = n_states
        self.C = C
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, Y, layers=None):
        """``layers`` is accepted for interface compatibility and ignored (flat detectors)."""
        Xc = check_X(X, dtype=np.float64, min_samples=2)
        Yc = check_Y(Y, n_samples=Xc.shape[0])
        check_some_tag(Yc, "M-HCRF tag completion")
        if Yc.shape[1] < 2:  # a tag's detector reads the sample's other tags as its text view
            raise ValueError("M-HCRF tag completion needs at least 2 tag columns (each tag is predicted "
                             f"from the others as the text view), got {Yc.shape[1]}")
        tags = _tags_arg(self.tags, Yc.shape[1])
        det = mhcrf_tag_scores(Xc, Yc, tags=tags, n_folds=self.n_folds, n_components=self.n_components,
                               n_hidden=self.n_hidden, n_states=self.n_states, C=self.C,
                               n_restarts=self.n_restarts, max_iter=self.max_iter,
                               random_state=self.random_state, n_jobs=self.n_jobs)
        freq = np.asarray(Yc.mean(axis=0)).ravel()
        scores = np.broadcast_to(freq - 2.0, Yc.shape).copy()
        scores[:, tags] = det
        scores = rank_observed_last(scores, Yc)
        self.tags_ = tags
        self.scores_ = scores
        self.n_samples_ = Xc.shape[0]
        return self

    def predict_scores(self, X=None):
        if not hasattr(self, "scores_"):
            raise ValueError("this MHCRFTagCompleter is not fitted yet; call fit first")
        if X is not None:
            raise ValueError("MHCRFTagCompleter is transductive: predict_scores() scores the fitted samples; "
                             "pass X=None (new samples need their observed tags, refit on them)")
        return self.scores_.copy()
