"""Clustering from an affinity (Sec 3.3): kappa-NN graph, symmetric
normalisation D^-1/2 A D^-1/2, spectral clustering (scikit-learn)."""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin

from ._validation import (SparseXTags, check_estimator_params, check_n_clusters, check_random_state_seed,
                          check_weight, check_X_features, check_Y)
from .affinity import cosine_knn_graph, knn_affinity, knn_graph_from_neighbors, leaf_knn, normalized_graph
from .forest.estimator import SPLIT_SAMPLE, HMLForest
from .tokens import resolve_feature_map

# from this many nodes the embedding is computed by Lanczos in single precision
LANCZOS_FROM = 100_000
# from this many nodes a connected graph's embedding is computed by Lanczos in double
# precision instead of scikit-learn's shift-invert (below, both take well under a second)
LANCZOS64_FROM = 1000
SOLVERS = ("auto", "lanczos", "sklearn")


def _connected(W):
    """True when the graph ``W`` is one connected component."""
    from scipy.sparse.csgraph import connected_components

    return connected_components(W, directed=False, return_labels=False) == 1


def spectral_embedding_rows(W, n_components, random_state=None, solver="auto"):
    """The ``n_components`` leading eigenvectors of D^-1/2 W D^-1/2 (W symmetric,
    every node with an edge or a self-loop), as rows of unit length (the embedding
    ``spectral_from_graph`` clusters).

    ``solver="auto"`` picks by size and connectivity:

    * a connected graph of ``LANCZOS64_FROM`` to ``LANCZOS_FROM`` nodes: ARPACK's
      Lanczos (``scipy.sparse.linalg.eigsh``, largest algebraic) on the normalised
      graph, in double precision, with no factorisation. scikit-learn's shift-invert
      ARPACK factorises the Laplacian first, which took 14.6 s of a 15 s embedding on
      the recommended HML-RF graph of Corel5k (4,500 nodes, k = 50) against 0.4 s for
      Lanczos; the clusterings were identical (ARI 1.0);
    * from ``LANCZOS_FROM`` nodes on, the same Lanczos in single precision (ARPACK's
      ``ssaupd``, converged to float32's epsilon): its time is the graph products and
      the re-orthogonalisation, both streams of memory, which float32 halves
      (1,000,000-node fused graph of the nuswide profile: 20.8 s against 75.4 s in
      double precision, rows within 2e-5 of them after the best rotation, k-means from
      one fixed start on either: ARI 0.999997; LOBPCG took 99 s there);
    * otherwise (small graphs, or graphs in several components such as a tags-only
      graph with most tags removed, whose many isolated samples make the leading
      eigenspace degenerate, so that each solver picks its own basis of it and its
      own clustering): scikit-learn's ``spectral_embedding`` (ARPACK shift-invert
      below 5,000 nodes, LOBPCG above), whose results the studies measured first.

    ``"lanczos"`` and ``"sklearn"`` force one path. The row scaling makes the result
    depend only on the leading eigenspace: any orthogonal basis of it (and scikit-learn's
    division by sqrt(degree), a positive per-row factor) gives the same rows up to a
    rotation, and k-means the same clusters.
    """
    from scipy.sparse.linalg import eigsh
    from sklearn.manifold import spectral_embedding
    from sklearn.preprocessing import normalize

    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
    n = W.shape[0]
    k = int(n_components)
    if solver == "auto":
        solver = "lanczos" if n >= LANCZOS_FROM or (n >= LANCZOS64_FROM and _connected(W)) else "sklearn"
    if solver == "lanczos" and k < n - 1:
        dtype = np.float32 if n >= LANCZOS_FROM else np.float64
        v0 = np.random.RandomState(random_state).uniform(0.5, 1.0, n).astype(dtype)
        _, V = eigsh(normalized_graph(W, dtype=dtype), k=k, which="LA", v0=v0)
        return normalize(V.astype(np.float64))
    with warnings.catch_warnings():
        # sklearn warns when the kNN graph has several components; the
        # embedding is still valid (components separate), so keep output quiet.
        warnings.filterwarnings("ignore", message="Graph is not fully connected")
        E = spectral_embedding(W, n_components=k, eigen_solver="lobpcg" if n >= 5000 else "arpack",
                               random_state=random_state, drop_first=False)
    return normalize(E)


def int_seed(random_state):
    """``random_state`` as the int seed the spectral step's RandomState and scikit-learn's
    KMeans take: an int seed below 2**32 as it is (results unchanged), a Generator, a
    RandomState or a larger int through :func:`check_random_state_seed` (each failed
    there after the forest was grown); None stays None."""
    if random_state is None or (isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool)
                                and 0 <= random_state < 2**32):
        return random_state
    return check_random_state_seed(random_state) % 2**32


def spectral_from_graph(W, n_clusters, random_state=None):
    """Normalised spectral clustering of a symmetric sparse graph ``W``
    (Ng, Jordan & Weiss): the ``n_clusters`` leading eigenvectors of
    D^-1/2 W D^-1/2 (``spectral_embedding_rows``), each sample's
    row scaled to unit length, then k-means.

    Why the row scaling: scikit-learn's ``SpectralClustering`` runs k-means
    on the embedding's rows as they are, eigenvectors divided by
    sqrt(degree), where the many high-degree samples of a symmetrised kNN
    graph crowd near the origin and k-means gives them one catch-all
    cluster. On Corel5k (50
    CDs of 90 images) the tags-only 20-NN graph gave a largest cluster of
    913 images (NMI 0.589) unscaled and 228 (NMI 0.608) scaled; the
    recommended HML-RF graph 638 (0.586) and 194 (0.622). Isolated samples
    (no edge) get a tiny self-loop so the normalisation is defined.
    """
    from sklearn.cluster import KMeans

    W = sp.csr_matrix(W, dtype=np.float64)
    n = W.shape[0]
    n_clusters = check_n_clusters(n_clusters, n)
    if n_clusters == 1:
        return np.zeros(n, dtype=np.int64)
    deg = np.asarray(W.sum(axis=1)).ravel()
    if (deg == 0).any():
        W = W + sp.diags((deg == 0).astype(np.float64) * 1e-8)
    random_state = int_seed(random_state)
    seed = None if random_state is None else int(np.random.RandomState(random_state).randint(2**31 - 1))
    E = spectral_embedding_rows(W, n_clusters, seed)
    return KMeans(n_clusters, n_init=10, random_state=seed).fit_predict(E).astype(np.int64)


def spectral_from_affinity(A, n_clusters, n_neighbors=20, random_state=None):
    """kNN-sparsify an affinity (dense or sparse n x n), symmetrise, and run
    normalised spectral clustering. Returns labels (n,) int64."""
    W = knn_affinity(A, n_neighbors)
    return spectral_from_graph(W, n_clusters, random_state)


# HMLClustering as in the paper (untagged samples negative, forest-only affinity); the
# defaults are the settings recommended on real data. The input map stays the kit's
# (feature_map="auto"): it leaves continuous features, the only kind the paper used, as
# they are, and maps token features, which the paper never had (feature_map=None: the
# forest splits the raw tokens; on Corel5k's binary visual words that ties visual
# K-means, see studies/real_corel.ipynb's ablation row)
PAPER_SETTINGS = {"untagged": "negative", "tag_weight": 0.0}

FOREST_PARAMS = ("n_estimators", "min_samples_leaf", "max_features", "hierarchy", "correlations", "untagged",
                 "n_jobs", "verbose", "random_state", "split_sample")


def forest_from(estimator, **overrides):
    """An unfitted HMLForest with the forest parameters of ``estimator``
    (HMLClustering, HMLTagCompleter), so both stay in step."""
    params = {k: getattr(estimator, k) for k in FOREST_PARAMS}
    params.update(overrides)
    return HMLForest(**params)


def forest_graph(forest, n_neighbors=20):
    """The symmetric kappa-NN graph of a fitted forest's affinity (Eq. 10)."""
    idx, w = leaf_knn(forest.train_leaves_, n_neighbors)
    return knn_graph_from_neighbors(idx, w, forest.train_leaves_.shape[0])


def eigengap(W, k, random_state=0):
    """mu_k - mu_(k+1), the gap after the k-th largest eigenvalue of
    D^-1/2 W D^-1/2: how clearly the graph holds k clusters (von Luxburg's
    eigengap heuristic; 0 when it holds no such structure)."""
    return _normalized_eigengap(normalized_graph(W), k, random_state)


def _normalized_eigengap(N, k, random_state):
    """``eigengap`` of a graph already normalised (``normalized_graph``)."""
    from scipy.sparse.linalg import eigsh

    n = N.shape[0]
    if k + 1 >= n or N.nnz == 0:  # no edge (e.g. no tags): no cluster structure
        return 0.0
    v0 = np.random.default_rng(int_seed(random_state)).random(n)
    vals = np.sort(eigsh(N, k=k + 1, which="LA", return_eigenvectors=False, v0=v0))[::-1]
    return float(max(vals[k - 1] - vals[k], 0.0))


def fuse_tag_graph(W, Y, tag_weight, n_neighbors=20, n_clusters=None, random_state=0):
    """(1 - a) N(W) + a N(T), N the symmetric normalisation
    (``normalized_graph``), T the cosine kappa-NN graph of the observed tags
    ``Y`` and a = ``tag_weight``. ``tag_weight="auto"``: each graph weighted
    by its eigengap at ``n_clusters`` (``eigengap``), a = g_T / (g_W + g_T),
    so the graph that holds the clearer k-cluster structure counts more.
    Returns (graph, a, (g_W, g_T)); the gaps are None unless "auto"."""
    a = check_weight(tag_weight, "tag_weight", auto=True)
    if a == 0:
        return W, a, None
    NW, NT = normalized_graph(W), normalized_graph(cosine_knn_graph(Y, n_neighbors))
    gaps = None
    if a == "auto":
        if n_clusters is None:
            raise ValueError("tag_weight='auto' needs n_clusters")
        gaps = (_normalized_eigengap(NW, n_clusters, random_state), _normalized_eigengap(NT, n_clusters, random_state))
        a = gaps[1] / (gaps[0] + gaps[1]) if gaps[0] + gaps[1] > 0 else 0.5
    return ((1.0 - a) * NW + a * NT).tocsr(), a, gaps


def cluster_forest(forest, n_clusters, n_neighbors=20, random_state=None, Y=None, tag_weight=0.0):
    """Sec 3.3 on a fitted forest: the kappa-NN graph of its affinity
    (Eq. 10), symmetrised, optionally fused with the observed-tag graph
    (``fuse_tag_graph``), then normalised spectral clustering.
    Returns (labels, W, a, gaps): the graph clustered, the tag weight used
    and the eigengaps behind an "auto" weight."""
    random_state = int_seed(random_state)  # one seed for the gaps and the clustering, from any kind
    W, a, gaps = fuse_tag_graph(forest_graph(forest, n_neighbors), Y, tag_weight, n_neighbors, n_clusters,
                                0 if random_state is None else random_state)
    return spectral_from_graph(W, n_clusters, random_state), W, a, gaps


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
    graph fused with the observed-tag graph (``tag_weight``). The paper's
    model is ``HMLClustering(untagged="negative", tag_weight=0)``
    (:data:`PAPER_SETTINGS`); ``feature_map="auto"`` leaves continuous features,
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
        Weight a of the observed-tag graph in the clustered graph
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
        each). Mean NMI, 100 trees, a = 0.5 vs "auto": Corel5k (seeds 0-2),
        tags removed 0 / 25 / 50 / 75 %: 0.608 / 0.531 / 0.440 / 0.338 vs
        0.613 / 0.504 / 0.436 / 0.332 (tags-only spectral clustering 0.606 /
        0.509 / 0.410 / 0.281); trecvid profile (seeds 0-2) 0.772 vs 0.775;
        nuswide profile (3000 samples, seeds 0-1, 50 trees) 0.802 vs 0.759.
        Untagged samples have no tag edge: the forest alone places them.
    **forest_params : passed to :class:`hmlkit.HMLForest` (n_estimators,
        min_samples_leaf, max_features, hierarchy, correlations, untagged,
        bootstrap, n_jobs, verbose, split_sample).

    Attributes
    ----------
    labels_ : (n,) int64
    forest_ : the fitted HMLForest
    feature_map_ : the fitted feature map, or None
    affinity_ : csr (n, n) the symmetric graph clustered
    tag_weight_ : float, the tag weight used
    eigengaps_ : (forest, tags) eigengaps behind an "auto" weight, else None
    n_features_in_ : int
    feature_names_in_ : the column names of X, when it had string ones
    """

    def __init__(self, n_clusters=8, n_neighbors=20, random_state=None, feature_map="auto", tag_weight=0.5,
                 n_estimators=1000, min_samples_leaf=3, max_features="sqrt", hierarchy=True, correlations=True,
                 untagged="unknown", bootstrap=False, n_jobs=None, verbose=False, split_sample=SPLIT_SAMPLE):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.random_state = random_state
        self.feature_map = feature_map
        self.tag_weight = tag_weight
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

    def fit(self, X, Y, layers=None):
        X = check_X_features(self, X, reset=True)
        check_estimator_params(self)
        Y = check_Y(Y, X.shape[0])
        check_n_clusters(self.n_clusters, X.shape[0])
        check_weight(self.tag_weight, "tag_weight", auto=True)  # before the forest is grown, not after
        self.feature_map_ = resolve_feature_map(self.feature_map, X)
        Xf = X if self.feature_map_ is None else self.feature_map_.transform(X)
        if self.feature_map_ is not None:  # max_features counts the mapped features the forest splits
            check_estimator_params(self, n_features=Xf.shape[1],
                                   features_of=f"X through its feature map ({X.shape[1]} -> {Xf.shape[1]})")
        self.forest_ = forest_from(self, bootstrap=self.bootstrap).fit(Xf, Y, layers)
        _warn_if_degenerate(X, Y, self.forest_, int(self.n_clusters))
        self.labels_, self.affinity_, self.tag_weight_, self.eigengaps_ = cluster_forest(
            self.forest_, self.n_clusters, self.n_neighbors, self.random_state, Y=Y, tag_weight=self.tag_weight)
        return self

    def fit_predict(self, X, Y, layers=None):
        return self.fit(X, Y, layers).labels_
