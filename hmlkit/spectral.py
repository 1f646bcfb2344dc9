"""Spectral clustering of graphs (Sec 3.3): the kappa-NN graph of a forest's affinity,
its fusion with a tag graph, the symmetric normalisation D^-1/2 W D^-1/2 and the
embedding k-means clusters. The estimators (``HMLClustering``, ``HMLTagCompleter``'s GC)
build on these."""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from ._validation import check_n_clusters, check_random_state_seed, check_weight
from .affinity import cosine_knn_graph, knn_affinity, knn_graph_from_neighbors, leaf_knn, normalized_graph

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


def cluster_graph(W, n_clusters, n_neighbors=20, random_state=None, Y=None, tag_weight=0.0):
    """Sec 3.3 on a symmetric graph ``W`` (e.g. ``forest_graph``): optionally fused with the
    tag graph of ``Y`` (``fuse_tag_graph``), then normalised spectral clustering.
    Returns (labels, W, a, gaps): the graph clustered, the tag weight used and the
    eigengaps behind an "auto" weight."""
    random_state = int_seed(random_state)  # one seed for the gaps and the clustering, from any kind
    W, a, gaps = fuse_tag_graph(W, Y, tag_weight, n_neighbors, n_clusters, 0 if random_state is None else random_state)
    return spectral_from_graph(W, n_clusters, random_state), W, a, gaps


def cluster_forest(forest, n_clusters, n_neighbors=20, random_state=None, Y=None, tag_weight=0.0):
    """Sec 3.3 on a fitted forest: the kappa-NN graph of its affinity
    (Eq. 10), symmetrised, then ``cluster_graph``. Returns (labels, W, a, gaps)."""
    return cluster_graph(forest_graph(forest, n_neighbors), n_clusters, n_neighbors, random_state, Y, tag_weight)
