"""HMLForest: the scikit-learn-style estimator over the numba kernels."""
from __future__ import annotations

import math
import numbers
import os

import numpy as np
from sklearn.base import BaseEstimator

from .._validation import (
    SparseXTags,
    check_estimator_params,
    check_fitted,
    check_layers,
    check_random_state_seed,
    check_verbose,
    check_X_features,
    check_Y,
)
from ..affinity import leaf_affinity
from ..executors import executor_for
from ..primitives.rng import tree_seeds
from ..tags import soft_tag_confidences
from ._grow import grow_forest
from ._route import apply_forest
from ._tagdata import build_tag_arrays


def _resolve_n_jobs(n_jobs):
    cpus = os.cpu_count() or 1
    if isinstance(n_jobs, (bool, np.bool_)):
        raise ValueError(f"n_jobs must be None, -1 or a positive integer, got the boolean {n_jobs!r}")
    if n_jobs is None or n_jobs == -1:
        return cpus
    if not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None, -1 or a positive integer, got {n_jobs!r}")
    return max(1, cpus + 1 + n_jobs) if n_jobs < 0 else int(n_jobs)


UNTAGGED = ("unknown", "negative")
# nodes of more samples choose their split on a subsample of this many (see HMLForest)
SPLIT_SAMPLE = 32768


class HMLForest(SparseXTags, BaseEstimator):
    """Hierarchical-Multi-Label Random Forest (Wang, Zhu & Gong, Sec 3.2).

    Trees split on visual features (Eq. 1) and choose splits by the
    multi-label Gini gain over the tags (Eq. 4), layer-wise: at each node
    only the most abstract impure tag layer counts (Eq. 5); with
    ``correlations``, samples with no observed tag in that layer enter its
    Gini through soft tags inferred from their tags of lower layers by
    co-occurrence and mutual exclusion (Eq. 6-9). Every tree sees all
    training samples (Algorithm 1); randomness comes from the features tried
    at each node.

    Parameters
    ----------
    n_estimators : int, default 1000
        tau, the number of trees.
    min_samples_leaf : int, default 3
        phi: no split may leave a child with fewer samples.
    max_features : "sqrt", "log2", int, float or None, default "sqrt"
        nu_try, non-constant features tried per node (without replacement).
    hierarchy : bool, default True
        False: all tags in one layer (the paper's HML-RF(FlatTags)).
    correlations : bool, default True
        False: no soft tags (the paper's HML-RF(NoCorr)).
    bootstrap : bool, default False
        Grow each tree on a bootstrap sample (not in the paper).
    split_sample : int or None, default SPLIT_SAMPLE (32,768)
        A node of more samples scores its cuts on a uniform subsample of this
        many of them (drawn from the tree's own random stream) and then sends
        all its samples left or right by the chosen threshold; smaller nodes
        score every sample. Data of at most this many samples grow the exact
        trees of the paper; on larger data the cost of a tree stops growing
        faster than n log n (the top levels' sorts and sweeps no longer scale
        with n). The subsample is beyond the paper; None keeps every node
        exact, as the paper's Algorithm 1 (docs/performance.md and
        docs/history.md give what the default costs and changes).
    untagged : "unknown" or "negative", default "unknown"
        How a sample with no observed tag in a layer scored by the hard Gini
        counts there. "negative" is the paper's literal Gini: a negative of
        every tag of the layer, so where tags are sparse the trees learn
        "untagged" as a class and leave the untagged samples in big pure
        leaves (the hubs of a useless affinity). "unknown" (beyond the
        paper, recommended): it carries no mass and follows the cuts the
        tagged samples choose (see ``_criterion``). Soft layers (Eq. 6-9)
        are the same either way; with every sample tagged, so are the trees.
    random_state : int, numpy generator or None
    n_jobs : int or None
        Threads growing trees; None or -1: all cores. Results do not depend
        on it (each tree has its own random stream). Under joblib's dask
        backend (``with joblib.parallel_config(backend="dask")`` and a
        ``dask.distributed.Client``) the trees are grown on the cluster's
        workers instead, with the same result (:mod:`hmlkit.dask_backend`).
    verbose : bool, 0, 1 or "auto", default "auto"
        Progress bar; "auto" shows one on long fits.

    Attributes
    ----------
    train_leaves_ : (n_samples, n_estimators) int32
        Leaf of every training sample in every tree.
    inbag_ : (n_samples, n_estimators) bool, only with ``bootstrap``
        Whether tree t was grown on sample i.
    layers_ : list of int64 arrays, the hierarchy used.
    n_features_in_, n_tags_, max_features_ : int
    feature_names_in_ : object array, one name per feature, only when X had string column names
        ``apply`` then requires the same names in the same order.
    """

    def __init__(self, n_estimators=1000, min_samples_leaf=3, max_features="sqrt", hierarchy=True,
                 correlations=True, bootstrap=False, untagged="unknown", random_state=None, n_jobs=None,
                 verbose="auto", split_sample=SPLIT_SAMPLE):
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.hierarchy = hierarchy
        self.correlations = correlations
        self.bootstrap = bootstrap
        self.untagged = untagged
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.split_sample = split_sample

    # -- parameters -------------------------------------------------------
    def _check_params(self, d):
        check_estimator_params(self, n_features=d)
        if not isinstance(self.n_estimators, numbers.Integral) or self.n_estimators < 1:
            raise ValueError(f"n_estimators must be a positive integer, got {self.n_estimators!r}")
        if not isinstance(self.min_samples_leaf, numbers.Integral) or self.min_samples_leaf < 1:
            raise ValueError(f"min_samples_leaf must be a positive integer, got {self.min_samples_leaf!r}")
        mf = self.max_features
        if mf is None:
            k = d
        elif mf == "sqrt":
            k = int(math.sqrt(d))
        elif mf == "log2":
            k = int(math.log2(d)) if d > 1 else 1
        elif isinstance(mf, numbers.Integral) and not isinstance(mf, bool):
            if mf < 1:
                raise ValueError(f"max_features must be >= 1, got {mf}")
            k = min(int(mf), d)
        elif isinstance(mf, numbers.Real) and 0 < mf <= 1:
            k = int(mf * d)
        else:
            raise ValueError(f"max_features must be 'sqrt', 'log2', None, a positive int or a float in (0, 1], got {mf!r}")
        if self.untagged not in UNTAGGED:
            raise ValueError(f"untagged must be one of {UNTAGGED}, got {self.untagged!r}")
        return max(1, k)

    # -- fitting ----------------------------------------------------------
    def fit(self, X, Y, layers=None):
        """Grow the forest on visual features ``X`` (n, d) and observed tags
        ``Y`` (n, m) 0/1, dense or sparse, with tag ``layers`` (list of
        tag-index arrays, most abstract first; None: one flat layer).
        Samples with no tag at all are allowed: they follow the splits that
        the tagged samples choose."""
        X = check_X_features(self, X, reset=True)
        n, d = X.shape
        Y = check_Y(Y, n)
        layers = check_layers(layers, Y.shape[1])
        if not self.hierarchy:
            layers = [np.arange(Y.shape[1], dtype=np.int64)]
        max_features = self._check_params(d)
        soft = None
        if self.correlations and len(layers) > 1:
            soft = soft_tag_confidences(Y, layers)
        tags = build_tag_arrays(Y, layers, soft, ignore_untagged=self.untagged == "unknown")
        seed = check_random_state_seed(self.random_state)
        states = tree_seeds(seed, self.n_estimators)
        boot_rng = np.random.default_rng(seed) if self.bootstrap else None
        boots = [np.sort(boot_rng.integers(0, n, n)) for _ in range(self.n_estimators)] if self.bootstrap else None
        args = tags.kernel_args()
        min_leaf = int(self.min_samples_leaf)
        verbose = check_verbose(self.verbose)
        show = verbose is True or (verbose == "auto" and n * self.n_estimators >= 5_000_000)
        bar = None
        if show:
            from tqdm.auto import tqdm

            bar = tqdm(total=self.n_estimators, desc="HMLForest", unit="tree")
        progress = None if bar is None else bar.update
        # local threads, or the workers of joblib's dask backend (opt-in, hmlkit.dask_backend)
        executor = executor_for(min(_resolve_n_jobs(self.n_jobs), self.n_estimators))
        try:
            results = grow_forest(X, args, states, boots, min_leaf, max_features, self.split_sample, executor,
                                  progress)
        finally:
            if bar is not None:
                bar.close()
        self._store(results)
        self.n_tags_ = Y.shape[1]
        self.layers_ = layers
        self.max_features_ = max_features
        if self.bootstrap:
            self.train_leaves_ = self._apply(X)
            # in-bag flags: tree t was grown without sample i where False
            # (out-of-bag neighbourhoods for completion, Breiman's OOB idea)
            self.inbag_ = np.zeros((n, self.n_estimators), dtype=bool)
            for t, b in enumerate(boots):
                self.inbag_[b, t] = True
        else:
            self.train_leaves_ = np.ascontiguousarray(np.stack([r[1] for r in results], axis=1))
            if hasattr(self, "inbag_"):  # an earlier bootstrapped fit's, of other samples
                del self.inbag_
        return self

    def _store(self, results):
        sizes = np.array([r[0][0].shape[0] for r in results], np.int64)
        self.node_offset_ = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.feature_ = np.concatenate([r[0][0] for r in results])
        self.threshold_ = np.concatenate([r[0][1] for r in results])
        self.children_left_ = np.concatenate([r[0][2] for r in results])
        self.children_right_ = np.concatenate([r[0][3] for r in results])
        self.leaf_id_ = np.concatenate([r[0][4] for r in results])
        self.n_leaves_ = np.array([r[0][5] for r in results], np.int64)

    # -- using the forest -------------------------------------------------
    def _check_fitted(self):
        check_fitted(self, "node_offset_")

    def apply(self, X):
        """Leaf index (0..n_leaves-1 per tree) of each sample in each tree,
        (n, n_estimators) int32; works for samples not seen in training. X must have
        the features of fit, and the same column names in the same order if it had
        names."""
        self._check_fitted()
        return self._apply(check_X_features(self, X, reset=False))

    def _apply(self, X):
        """``apply`` of a checked X."""
        arrays = (self.node_offset_, self.feature_, self.threshold_, self.children_left_, self.children_right_,
                  self.leaf_id_)
        return apply_forest(X, arrays, executor_for())  # row blocks on the workers under joblib's dask backend

    def affinity(self, X=None):
        """Eq. 10: fraction of trees in which two samples share a leaf.

        ``X=None``: the (n, n) sparse affinity of the training samples (unit
        diagonal). Otherwise the (len(X), n) affinity of new samples to the
        training samples."""
        self._check_fitted()
        return leaf_affinity(self.train_leaves_, None if X is None else self.apply(X))

    @property
    def n_nodes_(self):
        return np.diff(self.node_offset_)


# the forest parameters an estimator built on the forest (HMLClustering, HMLTagCompleter) shares
FOREST_PARAMS = ("n_estimators", "min_samples_leaf", "max_features", "hierarchy", "correlations", "untagged",
                 "n_jobs", "verbose", "random_state", "split_sample")


def forest_from(estimator, **overrides):
    """An unfitted HMLForest with the forest parameters of ``estimator``
    (HMLClustering, HMLTagCompleter), so both stay in step."""
    params = {k: getattr(estimator, k) for k in FOREST_PARAMS}
    params.update(overrides)
    return HMLForest(**params)
