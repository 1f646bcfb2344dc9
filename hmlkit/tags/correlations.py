"""Cross-layer tag correlations and soft tag confidences (HML-RF Sec 3.2, Eq. 6-9).

All statistics are collected once from the *observed* tags ``Y`` (CSR uint8,
n x m) of the whole training set, as the paper says ("these statistics are
collected from the available tags"). A correlation from tag ``i`` to tag ``j``
is only defined when ``j`` lies in a layer strictly below ``i``'s layer
(the paper: "the tag i in Z_k (the target tag layer) and the tag j in
{Z_{k+1}, ..., Z_mu} (subordinate tag layers)"); every other entry is 0.

How the forest uses the confidences (the kit's reading, docs/design.md; coded in the forest's
criterion, not here): for a node whose target layer is k, a sample with no
observed tag in layer k is "missing"; in the Gini of tag i of that layer it
adds ``pos[s, i]`` to the positive and ``neg[s, i]`` to the negative mass,
while a labelled sample adds 1 to the side its value names.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from hmlkit._validation import check_layers, check_Y

__all__ = ["cooccurrence", "mutual_exclusion", "soft_tag_confidences", "below_layer_mask"]


def _layer_ids(layers, n_tags):
    ids = np.empty(n_tags, dtype=np.int64)
    for k, layer in enumerate(layers):
        ids[layer] = k
    return ids


def below_layer_mask(layers, n_tags):
    """Boolean m x m mask, ``True`` at ``[i, j]`` iff tag j's layer is strictly below tag i's.

    "Below" means less abstract, i.e. a larger layer index (layers are listed
    most abstract first).
    """
    layers = check_layers(layers, n_tags)
    ids = _layer_ids(layers, n_tags)
    return ids[None, :] > ids[:, None]


def _counts(Y):
    """Occurrence counts o (m,) and co-occurrence counts co (dense m x m) of binary Y."""
    Yf = Y.astype(np.float64)
    occ = np.asarray(Yf.sum(axis=0)).ravel()
    co = (Yf.T @ Yf).toarray()  # sparse product: cost ~ sum over samples of (tags per sample)^2
    return occ, co


def _prepare(Y, layers):
    Y = check_Y(Y)
    layers = check_layers(layers, Y.shape[1])
    return Y, layers, below_layer_mask(layers, Y.shape[1])


def cooccurrence(Y, layers):
    """Co-occurrence correlation rho (Eq. 6): ``rho[i, j] = co_ij / o_j``.

    Parameters
    ----------
    Y : (n, m) binary matrix (dense or sparse) of observed tags.
    layers : list of tag-index arrays, most abstract first (``None`` = one layer).

    Returns
    -------
    rho : (m, m) float64 ndarray. ``co_ij`` is the number of samples where tags
        i and j are both observed, ``o_j`` the number of samples where j is
        observed. Non-zero only for j in a layer strictly below i's layer;
        0 where ``o_j = 0`` (a never-observed tag carries no evidence).
        Dividing by ``o_j`` down-weights over-popular subordinate tags, in the
        spirit of tf-idf, as the paper explains.
    """
    Y, layers, below = _prepare(Y, layers)
    return _rho_from_counts(*_counts(Y), below)


def _rho_from_counts(occ, co, below):
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(occ[None, :] > 0, co / occ[None, :], 0.0)
    rho[~below] = 0.0
    return rho


def mutual_exclusion(Y, layers):
    """Mutual-exclusion correlation epsilon (Eq. 8).

    ``eps[i, j] = max(0, r-_{i,j} - r-_i) / (1 - r-_i)`` with ``r-_i`` the
    fraction of all samples that are negative (not observed) on tag i and
    ``r-_{i,j}`` the fraction negative on i among the samples positive on j,
    i.e. the relative increase of i's negative rate given j. Since
    ``r-_{i,j} = 1 - rho[i, j]`` and ``1 - r-_i = o_i / n`` this equals
    ``max(0, 1 - rho[i, j] * n / o_i)``: 1 for a pair that never co-occurs,
    0 when j is at least as predictive of i as chance.

    Returns a (m, m) float64 ndarray, non-zero only for j strictly below i's
    layer; 0 where ``1 - r-_i = 0`` (tag i never observed) or ``o_j = 0``
    (``r-_{i,j}`` undefined).
    """
    Y, layers, below = _prepare(Y, layers)
    occ, co = _counts(Y)
    return _eps_from_counts(Y.shape[0], occ, co, below)


def _eps_from_counts(n, occ, co, below):
    rneg_i = 1.0 - occ / n  # (m,)
    with np.errstate(divide="ignore", invalid="ignore"):
        rneg_ij = np.where(occ[None, :] > 0, 1.0 - co / occ[None, :], 0.0)
        denom = 1.0 - rneg_i
        eps = np.maximum(0.0, rneg_ij - rneg_i[:, None]) / denom[:, None]
    valid = below & (occ[None, :] > 0) & (denom[:, None] > 0)
    eps = np.where(valid, eps, 0.0)
    return np.clip(eps, 0.0, 1.0)  # clip only guards float round-off; the formula is in [0, 1]


def _normalise_columns(S):
    """Divide each column by its maximum over the samples (0 stays 0)."""
    S = np.asarray(S)
    mx = S.max(axis=0)
    scale = np.where(mx > 0, 1.0 / np.where(mx > 0, mx, 1.0), 0.0).astype(S.dtype)
    S *= scale[None, :]
    np.minimum(S, 1.0, out=S)  # x * (1/max) may exceed 1 by one ulp
    return S


def soft_tag_confidences(Y, layers, rho=None, eps=None):
    """Positive and negative soft-tag confidences of every sample on every tag (Eq. 7, 9).

    This is the paper's formulation: ``pos[s, i] = sum_j rho[i, j] * y[s, j]``
    (Eq. 7) and ``neg[s, i] = sum_j eps[i, j] * y[s, j]`` (Eq. 9), with j over
    the tags of the layers below i's layer (rho and eps are already zero
    elsewhere), then each normalised "into the unit range [0, 1]"; the paper
    leaves the normalisation open, we divide column i by its maximum over the
    samples (a column whose maximum is 0 stays 0). Tags of the last layer have
    no subordinate layer, so their confidences are 0.

    The kit's reading of how they are used (docs/design.md): inside the forest's Gini, for a
    node with target layer k, samples with no observed tag in layer k take
    these soft values on the tags of layer k (pos as positive mass, neg as
    negative mass); samples with an observed tag in layer k keep their hard
    0/1 values. The confidences are computed for all samples here; the
    criterion picks the ones it needs.

    Parameters
    ----------
    Y : (n, m) binary matrix of observed tags.
    layers : list of tag-index arrays, most abstract first.
    rho, eps : optional precomputed :func:`cooccurrence` / :func:`mutual_exclusion`
        matrices (computed from ``Y`` when omitted); entries outside the pairs
        ``layers`` allows (j in a layer below i's) are not used.

    Returns
    -------
    pos, neg : (n, m) float32 C-contiguous ndarrays with values in [0, 1].
    """
    Y, layers, below = _prepare(Y, layers)
    n, m = Y.shape
    given_rho, given_eps = rho is not None, eps is not None
    if rho is None or eps is None:
        occ, co = _counts(Y)
        rho = _rho_from_counts(occ, co, below) if rho is None else rho
        eps = _eps_from_counts(n, occ, co, below) if eps is None else eps
    rho = _check_corr(rho, m, "rho")
    eps = _check_corr(eps, m, "eps")
    # a caller's matrices (made for another layering, or unmasked) count only the pairs this
    # hierarchy allows, as computed ones do: last-layer tags then get 0, as documented
    if given_rho:
        rho = np.where(below, rho, 0.0)
    if given_eps:
        eps = np.where(below, eps, 0.0)
    Yf = Y.astype(np.float32)
    # Sparse x dense in float32 with a C-ordered right factor (a transposed view
    # makes scipy stride through memory, ~4x slower): cost ~ nnz(Y) * m.
    pos = _normalise_columns(Yf @ np.ascontiguousarray(rho.T, dtype=np.float32))
    neg = _normalise_columns(Yf @ np.ascontiguousarray(eps.T, dtype=np.float32))
    return np.ascontiguousarray(pos), np.ascontiguousarray(neg)


def _check_corr(C, m, name):
    if sp.issparse(C):
        C = C.toarray()
    C = np.asarray(C, dtype=np.float64)
    if C.shape != (m, m):
        raise ValueError(f"{name} must have shape ({m}, {m}), got {C.shape}")
    if not np.isfinite(C).all():
        raise ValueError(f"{name} contains NaN or inf")
    if (C < 0).any():
        raise ValueError(f"{name} must be non-negative")
    return C
