"""CCA+SpClust and 3VCCA+SpClust (Hardoon et al. 2004 [20]; Gong et al., IJCV 2014 [22]).

Both use the closed-form multi-view CCA of Gong et al. (their Eq. 3): with
the views' centred data X_v, the full covariance ``S`` (blocks S_vw) and its
block diagonal ``S_D`` (blocks S_vv), solve the generalised symmetric
eigenproblem ``S W = S_D W Λ`` and keep the ``n_components`` largest
eigenvalues. For two views the eigenvalues are ``1 + ρ`` with ρ the canonical
correlations, i.e. classic CCA. Every diagonal block (in ``S`` and ``S_D``)
gets a ridge ``reg · trace(S_vv)/d_v`` so that empty tag columns and
d > n do not make it singular (scipy ``eigh`` with ``subset_by_index``: no
iterative NIPALS, which is slow at d = 1000).

Embedding (Gong et al., Sec 3.3): each view is projected and scaled by the
eigenvalues to the power ``p`` (``eig_power``, 4 in Gong et al.). Every
sample has all views here, so its embedding is the sum of its views'
scaled projections, L2-normalised (Gong et al. compare embeddings by
normalised correlation). Clusters: spectral clustering on the Gaussian κ-NN
affinity of the embeddings (as SpClust).

3VCCA's third view is the paper's: "the first layer of abstract tags", the
observed tags of ``layers[0]``. The tag view then holds the *other* layers'
tags: were the abstract columns in both views, they would be perfectly
correlated between the two whatever the samples' groups, and the top
directions would model that duplication instead of the data (our reading;
the paper does not say). With one flat layer the third view is the whole tag
matrix again (a repeated view, i.e. tags weighted twice).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClusterMixin

from .._validation import check_layers, check_n_clusters, check_random_state_seed, check_X
from .classic import knn_gaussian_affinity, spectral_labels


def multiview_cca(views, n_components, reg=1e-3):
    """Closed-form (regularised) multi-view CCA of Gong et al.

    Parameters
    ----------
    views : list of (n, d_v) arrays
    n_components : number of directions kept
    reg : relative ridge on each view's covariance

    Returns
    -------
    eigvals : (n_components,) descending
    W : list of (d_v, n_components) projections, one per view
    means : list of (d_v,) view means (to centre new data)
    """
    views = [np.asarray(V, dtype=np.float64) for V in views]
    n = views[0].shape[0]
    means = [V.mean(axis=0) for V in views]
    Z = np.hstack([V - m for V, m in zip(views, means)])
    dims = [V.shape[1] for V in views]
    N = Z.shape[1]
    n_components = int(min(n_components, N))
    S = (Z.T @ Z) / max(n - 1, 1)
    SD = np.zeros_like(S)
    start = 0
    for dv in dims:
        blk = slice(start, start + dv)
        ridge = reg * max(np.trace(S[blk, blk]) / dv, 1e-12) + 1e-10
        S[blk, blk] += ridge * np.eye(dv)
        SD[blk, blk] = S[blk, blk]
        start += dv
    vals, vecs = scipy.linalg.eigh(S, SD, subset_by_index=[N - n_components, N - 1])
    order = np.argsort(vals)[::-1]
    vals, vecs = vals[order], vecs[:, order]
    W, start = [], 0
    for dv in dims:
        W.append(vecs[start:start + dv])
        start += dv
    return vals, W, means


def cca_embedding(views, eigvals, W, means, eig_power=4.0):
    """Sum of the views' projections scaled by ``eigvals**eig_power``, rows L2-normalised."""
    scale = np.maximum(eigvals, 0.0) ** eig_power
    E = sum((np.asarray(V, np.float64) - m) @ Wv for V, Wv, m in zip(views, W, means)) * scale
    norms = np.linalg.norm(E, axis=1, keepdims=True)
    return E / np.where(norms > 0, norms, 1.0)


class CCASpectralClustering(ClusterMixin, BaseEstimator):
    """CCA+SpClust: 2-view (visual, tag) CCA embedding, then spectral clustering.

    ``fit(X, Y, layers=None)`` (``layers`` unused). ``n_components=None``
    keeps ``2 * n_clusters`` directions. Attributes: ``labels_``,
    ``affinity_``, ``embedding_``, ``eigvals_``, ``projections_``.
    """

    _n_views = 2

    def __init__(self, n_clusters=8, n_components=None, reg=1e-3, eig_power=4.0, n_neighbors=20,
                 random_state=None):
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.reg = reg
        self.eig_power = eig_power
        self.n_neighbors = n_neighbors
        self.random_state = random_state

    _view_names = ("the visual features", "the tags")

    def _views(self, X, Y, layers):
        return [X, Y]

    def fit(self, X, Y, layers=None):
        X = check_X(X, "X", dtype=np.float64)
        Y = check_X(Y, "Y", dtype=np.float64)
        if Y.shape[0] != X.shape[0]:
            raise ValueError(f"Y has {Y.shape[0]} rows but X has {X.shape[0]} samples")
        k = check_n_clusters(self.n_clusters, X.shape[0])
        if self.reg < 0:
            raise ValueError(f"reg must be >= 0, got {self.reg}")
        views = self._views(X, Y, layers)
        for i, V in enumerate(views):
            # a constant view (no tag observed at all) has no direction to correlate: every
            # eigenvalue is 1 and the eigenvectors an arbitrary mix (a chance partition)
            if V.shape[0] > 1 and not np.ptp(V, axis=0).any():
                raise ValueError(f"CCA's view {i} ({self._view_names[i]}) is the same for every sample: "
                                 f"it has nothing to correlate with the others")
        nc = 2 * k if self.n_components is None else int(self.n_components)
        if nc < 1:
            raise ValueError(f"n_components must be positive, got {self.n_components}")
        self.eigvals_, self.projections_, self.means_ = multiview_cca(views, nc, self.reg)
        self.embedding_ = cca_embedding(views, self.eigvals_, self.projections_, self.means_, self.eig_power)
        self.affinity_ = knn_gaussian_affinity(self.embedding_, self.n_neighbors)
        self.labels_ = spectral_labels(self.affinity_, k, n_neighbors=self.n_neighbors,
                                              random_state=check_random_state_seed(self.random_state))
        return self

    def fit_predict(self, X, Y, layers=None):
        return self.fit(X, Y, layers=layers).labels_


class ThreeViewCCASpectralClustering(CCASpectralClustering):
    """3VCCA+SpClust (Gong et al. 2014): third view = the tags of ``layers[0]``.

    ``fit(X, Y, layers)``; ``layers`` is required (list of tag-index arrays,
    most abstract first, as in :class:`~hmlkit.data.TaggedData`).
    """

    _n_views = 3
    _view_names = ("the visual features", "the specific tags", "the abstract tags, layers[0]")

    def _views(self, X, Y, layers):
        if layers is None:
            raise ValueError("3VCCA needs the tag hierarchy `layers` (its third view is layers[0])")
        layers = check_layers(layers, Y.shape[1])
        if len(layers) == 1:  # the third view would be the tags again: CCA on [X, Y, Y], another method
            raise ValueError("3VCCA needs a tag hierarchy of at least two layers (its third view is the "
                             "abstract layer, layers[0]); these layers are one flat layer: estimate some, "
                             "e.g. hmlkit.tags.estimate_layers, or use cca_spclust")
        rest = np.concatenate(layers[1:])
        return [X, Y[:, np.sort(rest)], Y[:, layers[0]]]
