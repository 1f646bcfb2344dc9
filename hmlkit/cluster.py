"""``HMLClustering``, the estimator of Sec 3.3: an HML-RF grown on the tagged samples, the
kappa-NN graph of its affinity fused with a graph of the (completed) tags, spectral
clustering. The graph functions live in :mod:`hmlkit.spectral`; those a user of the
clustering calls are also importable from here, as before."""
from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin

from ._validation import SparseXTags, check_bool, check_estimator_params, check_int, check_layers, check_n_clusters, \
    check_weight, check_X_features, check_Y
from .affinity import knn_graph_from_neighbors, leaf_knn
from .complete import completed_tags
from .forest.estimator import (  # noqa: F401 (FOREST_PARAMS: importable here)
    FOREST_PARAMS, SPLIT_SAMPLE, UNTAGGED, forest_from)
from .spectral import (  # noqa: F401 (the graph functions, importable from here as before)
    LANCZOS64_FROM, LANCZOS_FROM, SOLVERS, cluster_forest, cluster_graph, eigengap, forest_graph, fuse_tag_graph,
    int_seed, spectral_embedding_rows, spectral_from_affinity, spectral_from_graph)
from .tokens import check_feature_map, resolve_feature_map

# HMLClustering as in the paper (untagged samples negative, forest-only affinity); the
# defaults are the settings recommended on real data. The input map stays the kit's
# (feature_map="auto"): it leaves continuous features, the only kind the paper used, as
# they are, and maps token features, which the paper never had (feature_map=None: the
# forest splits the raw tokens; on Corel5k's binary visual words that ties visual
# K-means, see studies/real_corel.ipynb's ablation row)
PAPER_SETTINGS = {"untagged": "negative", "tag_weight": 0.0, "complete_tags": False}
# the parameters that act after the forest and its kappa-NN lists: two estimators that
# differ in these only grow the same forest (``fit(..., forest_of=)`` shares it)
GRAPH_PARAMS = ("n_clusters", "tag_weight", "complete_tags", "completion_weight", "completion_top")
_NOT_WHAT_IS_FOUND = ("n_jobs", "verbose")
# each sample keeps n_neighbors neighbours in (n_samples, n_neighbors) arrays: a larger
# value cannot be held for a single sample (2**63 - 1 failed deep in the fit, naming nothing)
MAX_NEIGHBORS = 2**31 - 1  # change how fast, never what the forest finds


def _same_param(a, b):
    """Equal parameter values; objects (a feature map) only when they are the same one."""
    if a is b:
        return True
    if isinstance(a, (bool, np.bool_)) or isinstance(b, (bool, np.bool_)):
        return False  # True is not the number 1 here
    if isinstance(a, (str, numbers.Number)) and isinstance(b, (str, numbers.Number)):
        return a == b  # a string never equals a number
    return False


def _data_digest(X, Y, layers):
    """A digest of the data a forest is grown on, for ``forest_of``: X's shape and up to
    256 of its rows spread over it, every tag of Y, the layers. Cheap at any size (a
    million samples: milliseconds); two data sets that differ only in rows it skips pass."""
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    h.update(repr((X.shape, Y.shape, str(X.dtype), [len(layer) for layer in layers])).encode())
    rows = np.unique(np.linspace(0, X.shape[0] - 1, min(X.shape[0], 256)).astype(np.int64))
    sample = X[rows]
    h.update(np.ascontiguousarray(sample.toarray() if sp.issparse(sample) else sample).tobytes())
    for a in (Y.indptr, Y.indices, *layers):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _forest_params_differ(a, b):
    """The parameters, beyond GRAPH_PARAMS, in which HMLClustering ``a`` and ``b`` differ."""
    pa, pb = a.get_params(), b.get_params()
    return sorted(p for p in pa if p not in GRAPH_PARAMS + _NOT_WHAT_IS_FOUND and not _same_param(pa[p], pb[p]))


def shares_forest(a, b):
    """Whether HMLClustering ``a`` and ``b`` grow the same forest on the same data (their
    parameters differ in :data:`GRAPH_PARAMS` only): ``b.fit(..., forest_of=a)`` is then
    ``b.fit(...)`` without growing it again."""
    return isinstance(a, HMLClustering) and isinstance(b, HMLClustering) and not _forest_params_differ(a, b)


def _distinct_samples(X, Y):
    """How many samples differ in their features or their tags."""
    Xc = np.ascontiguousarray(X)
    _, xid = np.unique(Xc.view(np.dtype((np.void, Xc.dtype.itemsize * Xc.shape[1]))).ravel(), return_inverse=True)
    if len(np.unique(xid)) >= X.shape[0]:
        return X.shape[0]
    keys = {(int(x), Y.indices[Y.indptr[i]:Y.indptr[i + 1]].tobytes()) for i, x in enumerate(xid.ravel())}
    return len(keys)


def _warn_if_degenerate(X, Y, forest, n_clusters):
    """Say so when the data cannot support the clustering asked for."""
    if Y.nnz == 0:
        warnings.warn("Y holds no tag at all: the forest cannot split on tags, so its affinity says nothing "
                      "and the clusters follow the tag-free graph only", UserWarning, stacklevel=3)
    elif (forest.n_leaves_ == 1).all():
        warnings.warn("no tree of the forest could split (identical features or no informative tags): its "
                      "affinity is uniform and the clusters are arbitrary", UserWarning, stacklevel=3)
    n_distinct = _distinct_samples(X, Y)
    if n_distinct < n_clusters:
        warnings.warn(f"only {n_distinct} distinct samples (features and tags) for n_clusters={n_clusters}: "
                      "some clusters split identical samples arbitrarily", UserWarning, stacklevel=3)


class HMLClustering(SparseXTags, ClusterMixin, BaseEstimator):
    """Cluster tagged visual data with an HML-RF affinity (Sec 3.3).

    Fits an :class:`hmlkit.HMLForest` on (X, Y, layers), builds the
    kappa-NN graph of its affinity (Eq. 10; kappa = ``n_neighbors``),
    normalises it symmetrically and runs spectral clustering.

    The defaults are the settings recommended on real tagged images (beyond
    the paper; measured on Corel5k in ``studies/real_corel.ipynb``):
    token features mapped to continuous ones (``feature_map``), untagged
    samples unknown rather than negative (``untagged``), and the forest's
    graph fused with a graph of the observed tags (``tag_weight``) completed
    by the forest's predictions (``complete_tags``). The paper's model is
    ``HMLClustering(untagged="negative", tag_weight=0, complete_tags=False)``
    (:data:`PAPER_SETTINGS`); the defaults before tag completion are
    ``complete_tags=False``. ``feature_map="auto"`` leaves continuous features,
    the only kind the paper used, as they are.

    Parameters
    ----------
    n_clusters : int
    n_neighbors : int, default 20
        kappa of the kNN graph (and of the tag graph).
    random_state : int or None
    feature_map : "auto", "tokens", None or a transformer, default "auto"
        Applied to X before the forest (:func:`hmlkit.tokens.resolve_feature_map`):
        "auto" maps binary / count bag-of-words features by LSA
        (:class:`hmlkit.tokens.TokenFeatureMap`) and leaves continuous
        features as they are.
    tag_weight : float in [0, 1] or "auto", default 0.5
        Weight a of the tag graph in the clustered graph
        (1 - a) N(forest kNN graph) + a N(cosine kNN graph of the tags), N
        the symmetric normalisation D^-1/2 W D^-1/2, which puts both graphs
        on one scale. 0: the paper's forest-only affinity. "auto" (chosen
        without ground truth): each graph weighted by its eigengap at
        ``n_clusters`` (:func:`eigengap`), a = g_tags / (g_forest + g_tags).
        The default is a fixed 0.5 because the eigengap rule proved
        unstable: at k = 15-50 the gaps are small and noisy, so its weight
        scattered between seeds (0.08-0.95) and it lost up to 0.099 NMI to
        the best weight on a grid of 0, 0.1, ..., 1, while 0.5 stayed within
        0.018 of it in all 18 cases tried (Corel5k at 4 rates and the
        trecvid profile at noise 0.5 with and without hierarchy, 3 seeds
        each; observed tags only). Mean NMI, 100 trees, a = 0.5 vs "auto":
        Corel5k (seeds 0-2), tags removed 0 / 25 / 50 / 75 %: 0.608 / 0.531 /
        0.440 / 0.338 vs 0.613 / 0.504 / 0.436 / 0.332 (tags-only spectral
        clustering 0.606 / 0.509 / 0.410 / 0.281); trecvid profile (seeds
        0-2) 0.772 vs 0.775; nuswide profile (3000 samples, seeds 0-1, 50
        trees) 0.802 vs 0.759. Untagged samples have no tag edge: the forest
        alone places them.
    complete_tags : bool, default True
        Build the tag graph on the observed tags plus the forest's
        predictions of the missing ones: each sample with at least one
        observed tag gains its ``completion_top`` best completion scores
        among its unobserved tags (each row divided by its largest score),
        times ``completion_weight`` (:func:`hmlkit.complete.completed_tags`:
        :class:`HMLTagCompleter`'s AM with the lift product, from the same
        forest and the same kappa-NN lists as the graph, so at almost no
        extra cost; a sample is never its own neighbour). Untagged samples
        stay without a tag edge. Why: two images of one concept whose tags were removed
        unevenly share few observed tags, but their predicted tags overlap.
        Mean NMI, 100 trees, observed tags only -> completed: Corel5k (seeds
        0-2) at 0 / 25 / 50 / 75 % removed 0.616 / 0.540 / 0.442 / 0.338 ->
        0.630 / 0.576 / 0.471 / 0.343 (the ``real_corel`` study's rows
        ``hmlrf_observed_tags`` and ``hmlrf``); trecvid profile (2 folds)
        0.770 -> 0.780; nuswide profile (2000 samples, 2 folds) 0.775 ->
        0.790 (docs/history.md, "complete_tags"). Ignored when
        ``tag_weight=0``.
    completion_weight : float in [0, 1], default 0.5
        beta: a predicted tag's weight against an observed one's (1).
    completion_top : int >= 1, default 10
        t: how many predicted tags each tagged sample gains (at most).
    **forest_params : passed to :class:`hmlkit.HMLForest` (n_estimators,
        min_samples_leaf, max_features, hierarchy, correlations, untagged,
        bootstrap, n_jobs, verbose, split_sample).

    Attributes
    ----------
    labels_ : (n,) int64
    forest_ : the fitted HMLForest
    feature_map_ : the fitted feature map, or None
    affinity_ : csr (n, n) the symmetric graph clustered
    tags_ : csr (n, m), the tags the tag graph was built on: the observed ones
        (``Y``), plus the weighted predictions with ``complete_tags`` (float64)
    tag_weight_ : float, the tag weight used
    eigengaps_ : (forest, tags) eigengaps behind an "auto" weight, else None
    n_features_in_ : int
    feature_names_in_ : the column names of X, when it had string ones
    """

    def __init__(self, n_clusters=8, n_neighbors=20, random_state=None, feature_map="auto", tag_weight=0.5,
                 complete_tags=True, completion_weight=0.5, completion_top=10, n_estimators=1000, min_samples_leaf=3,
                 max_features="sqrt", hierarchy=True, correlations=True, untagged="unknown", bootstrap=False,
                 n_jobs=None, verbose=False, split_sample=SPLIT_SAMPLE):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.random_state = random_state
        self.feature_map = feature_map
        self.tag_weight = tag_weight
        self.complete_tags = complete_tags
        self.completion_weight = completion_weight
        self.completion_top = completion_top
        self.untagged = untagged
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.hierarchy = hierarchy
        self.correlations = correlations
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.split_sample = split_sample

    def fit(self, X, Y, layers=None, *, forest_of=None):
        """Grow the forest on (X, Y, layers) and cluster. ``forest_of``: an HMLClustering
        already fitted on the same X, Y and layers whose parameters differ from this one's
        only in :data:`GRAPH_PARAMS`; its forest, feature map and kappa-NN lists are taken
        instead of growing the identical forest again (the labels are the same)."""
        X = check_X_features(self, X, reset=True)
        # every parameter checked before the forest is grown, not after
        tag_weight, complete, beta, top, kappa = self._check_params()
        Y = check_Y(Y, X.shape[0])
        check_n_clusters(self.n_clusters, X.shape[0])
        layers = check_layers(layers, Y.shape[1])  # once: a generator given would be spent
        digest = _data_digest(X, Y, layers)
        if forest_of is not None:
            self._check_shares_forest(forest_of, X, digest)
            self.feature_map_, self.forest_, self._knn = forest_of.feature_map_, forest_of.forest_, forest_of._knn
        else:
            self.feature_map_ = resolve_feature_map(self.feature_map, X)
            Xf = X if self.feature_map_ is None else self.feature_map_.transform(X)
            if self.feature_map_ is not None:  # max_features counts the mapped features the forest splits
                check_estimator_params(self, n_features=Xf.shape[1],
                                       features_of=f"X through its feature map ({X.shape[1]} -> {Xf.shape[1]})")
            self.forest_ = forest_from(self, bootstrap=self.bootstrap).fit(Xf, Y, layers)
            self._knn = leaf_knn(self.forest_.train_leaves_, kappa)
        _warn_if_degenerate(X, Y, self.forest_, int(self.n_clusters))
        self._data = digest  # what forest_of checks: the same data
        idx, w = self._knn
        W = knn_graph_from_neighbors(idx, w, X.shape[0])
        self.tags_ = completed_tags(idx, w, Y, kappa, beta, top) if complete and tag_weight != 0 else Y
        self.labels_, self.affinity_, self.tag_weight_, self.eigengaps_ = cluster_graph(
            W, self.n_clusters, kappa, self.random_state, Y=self.tags_, tag_weight=tag_weight)
        return self

    def _check_params(self):
        """The checks of every parameter that need no data (a sweep runs them before it loads
        any): (tag_weight, complete_tags, completion_weight, completion_top, n_neighbors) as
        the fit uses them. Raises InvalidParameterError / ValueError naming the parameter."""
        check_estimator_params(self)
        if self.untagged not in UNTAGGED:
            raise ValueError(f"untagged must be one of {UNTAGGED}, got {self.untagged!r}")
        check_feature_map(self.feature_map)
        return (check_weight(self.tag_weight, "tag_weight", auto=True), check_bool(self.complete_tags, "complete_tags"),
                check_weight(self.completion_weight, "completion_weight"),
                check_int(self.completion_top, "completion_top"),
                check_int(self.n_neighbors, "n_neighbors", max_val=MAX_NEIGHBORS))

    def _check_shares_forest(self, other, X, digest):
        if not isinstance(other, HMLClustering) or not hasattr(other, "_knn"):
            raise ValueError("forest_of must be a fitted HMLClustering")
        differ = _forest_params_differ(self, other)
        if differ:
            raise ValueError(f"forest_of was fitted with other forest parameters ({', '.join(differ)}): "
                             f"it grew another forest")
        if other.forest_.train_leaves_.shape[0] != X.shape[0] or other.n_features_in_ != X.shape[1]:
            raise ValueError(f"forest_of was fitted on {other.forest_.train_leaves_.shape[0]} samples of "
                             f"{other.n_features_in_} features, X has {X.shape[0]} of {X.shape[1]}")
        if getattr(other, "_data", None) != digest:
            raise ValueError("forest_of was fitted on other data (X, Y or layers differ): its forest is not "
                             "this data's")

    def fit_predict(self, X, Y, layers=None):
        return self.fit(X, Y, layers).labels_
