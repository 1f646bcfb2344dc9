"""Estimating a tag hierarchy from flat tags (HML-RF Sec 4.1).

The paper's recipe, layer by layer on the tags not yet placed: tf-idf weight
the binary tag vectors of the samples, K-means them into E "topic" clusters,
score each tag in each cluster by its summed tf-idf weight
(sigma_j^e = sum_i y~_ij over the cluster's samples), and put the top-eta
tags of every cluster into the current layer, eta = 3 * (1-based layer
index), so lower layers take more tags (a pyramid). The last layer takes
every tag left over.

Points the paper leaves open, fixed here:

- ``n_topics`` (E) is not given in the paper. Default:
  ``min(30, max(2, m_rem // 10))`` with ``m_rem`` the number of tags still to
  place: 30 topics for NUS-WIDE's 1000 tags (its 30 ground-truth groups), 11
  for TRECVID's 114. It is further capped by the number of distinct non-empty
  tag vectors (K-means cannot find more clusters than distinct points).
- Samples with no remaining tag carry no topic information and are left out
  of the tf-idf / K-means of that layer.
- Only tags with sigma > 0 in a cluster can be selected for it; ties in
  sigma are broken by the lower tag index.
- Every layer must hold at least one tag: if the selection would leave fewer
  tags than there are layers still to build, it keeps the best-scoring ones
  (by their largest sigma over clusters); if it is empty (no remaining tag
  was ever observed), the most frequent remaining tag (lowest index on ties)
  forms the layer.
- tf-idf is scikit-learn's ``TfidfTransformer`` with its defaults
  (smoothed idf, l2-normalised rows); K-means is scikit-learn's ``KMeans``
  (k-means++, ``n_init=3``) seeded from ``random_state``.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import TfidfTransformer

from hmlkit._validation import check_random_state_seed, check_Y

__all__ = ["estimate_layers", "default_n_topics"]


def default_n_topics(n_remaining_tags):
    """Default number of K-means topics E for a layer built from ``n_remaining_tags`` tags."""
    return int(min(30, max(2, n_remaining_tags // 10)))


def _n_distinct_rows(Yr):
    return len({Yr.indices[Yr.indptr[i] : Yr.indptr[i + 1]].tobytes() for i in range(Yr.shape[0])})


def _select_layer(Y, remaining, eta, n_topics, rng, n_after):
    """Tags (global indices) of ``remaining`` that go into the current layer."""
    Yr = Y[:, remaining]
    Yr = Yr[np.diff(Yr.indptr) > 0]  # samples with at least one remaining tag
    freq = np.asarray(Y[:, remaining].sum(axis=0)).ravel()
    max_take = remaining.size - n_after
    if Yr.shape[0] == 0:
        return remaining[[int(np.argmax(freq))]]
    E = default_n_topics(remaining.size) if n_topics is None else n_topics
    E = max(1, min(E, _n_distinct_rows(Yr)))
    W = TfidfTransformer().fit_transform(Yr.astype(np.float64)).tocsr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        labels = KMeans(n_clusters=E, n_init=3, random_state=rng).fit_predict(W)
    # sigma[e, j] = summed tf-idf of tag j over the samples of topic e
    onehot = np.zeros((E, W.shape[0]))
    onehot[labels, np.arange(W.shape[0])] = 1.0
    sigma = np.asarray((W.T @ onehot.T).T)
    chosen = np.zeros(remaining.size, dtype=bool)
    for e in range(E):
        order = np.argsort(-sigma[e], kind="stable")[:eta]
        order = order[sigma[e, order] > 0]
        chosen[order] = True
    if not chosen.any():
        chosen[int(np.argmax(freq))] = True
    idx = np.flatnonzero(chosen)
    if idx.size > max_take:
        best = sigma[:, idx].max(axis=0)
        idx = np.sort(idx[np.argsort(-best, kind="stable")[:max_take]])
    return remaining[idx]


def estimate_layers(Y, n_layers=2, n_topics=None, random_state=None):
    """Estimate an abstract-to-specific tag hierarchy from flat binary tags (Sec 4.1).

    Parameters
    ----------
    Y : (n, m) binary matrix (dense or sparse) of observed tags.
    n_layers : int >= 1, at most m. The paper uses 2 by default and 2-7 in Table 4.
    n_topics : int or None. K-means topics E per layer; None uses
        :func:`default_n_topics` (``min(30, max(2, m_rem // 10))``).
    random_state : None, int or numpy generator; fixes K-means.

    Returns
    -------
    layers : list of ``n_layers`` sorted int64 arrays of tag indices, most
        abstract first, disjoint and covering all m tags (never-observed tags
        end in the last layer unless needed to fill a layer). Layer l
        (0-based) takes up to ``3 * (l + 1)`` tags per topic.
    """
    Y = check_Y(Y)
    m = Y.shape[1]
    if not isinstance(n_layers, numbers.Integral) or isinstance(n_layers, bool) or n_layers < 1:
        raise ValueError(f"n_layers must be a positive integer, got {n_layers!r}")
    if n_layers > m:
        raise ValueError(f"n_layers={n_layers} is larger than the number of tags ({m})")
    if n_topics is not None and (
        not isinstance(n_topics, numbers.Integral) or isinstance(n_topics, bool) or n_topics < 1
    ):
        raise ValueError(f"n_topics must be a positive integer or None, got {n_topics!r}")
    rng = np.random.RandomState(check_random_state_seed(random_state) % (2**32))
    remaining = np.arange(m, dtype=np.int64)
    layers = []
    for layer in range(n_layers - 1):
        picked = _select_layer(Y, remaining, 3 * (layer + 1), n_topics, rng, n_after=n_layers - 1 - layer)
        layers.append(np.sort(picked).astype(np.int64))
        remaining = np.setdiff1d(remaining, picked)
    layers.append(remaining.astype(np.int64))
    return layers
