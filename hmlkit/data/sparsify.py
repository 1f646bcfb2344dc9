"""Tag sparsifiers: the paper's tag-removal and 60/40 tag-completion protocols."""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from .._validation import check_random_state_seed
from .container import TaggedData


def _check_rate(rate, name):
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not np.isfinite(rate):
        raise ValueError(f"{name} must be a real number in [0, 1), got {rate!r}")
    if not 0.0 <= float(rate) < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {rate!r}")
    return float(rate)


def _check_data(data, who):
    if not isinstance(data, TaggedData):
        raise ValueError(f"{who} expects a TaggedData, got {type(data).__name__}: wrap the features and tags "
                         f"first, TaggedData(X, Y)")


def _csr_from_mask(Y: sp.csr_matrix, keep: np.ndarray) -> sp.csr_matrix:
    """The entries of ``Y`` (sorted CSR) whose position in ``Y.data`` is kept."""
    rows = np.repeat(np.arange(Y.shape[0]), np.diff(Y.indptr))[keep]
    indptr = np.zeros(Y.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=Y.shape[0]), out=indptr[1:])
    return sp.csr_matrix(
        (np.ones(int(keep.sum()), dtype=np.uint8), Y.indices[keep].copy(), indptr), shape=Y.shape
    )


def remove_tags(data: TaggedData, rate, random_state=None) -> TaggedData:
    """Drop a fraction ``rate`` of the observed tag assignments at random.

    The paper's "tag sparseness rate" (Fig 5, Table 3): of all the non-zero
    entries of ``data.Y``, exactly ``round(rate * nnz)`` chosen uniformly at
    random without replacement are removed (a sample may lose all its tags).
    ``X``, ``Y_true``, ``groups``, layers and names are unchanged.

    Parameters
    ----------
    data : TaggedData
    rate : float in [0, 1)
    random_state : None, int or numpy generator

    Returns
    -------
    TaggedData with the sparser ``Y``; ``meta["tag_removal_rate"]`` records ``rate``.
    """
    _check_data(data, "remove_tags")
    rate = _check_rate(rate, "rate")
    rng = np.random.default_rng(check_random_state_seed(random_state))
    Y = data.Y
    nnz = Y.nnz
    n_drop = int(round(rate * nnz))
    keep = np.ones(nnz, dtype=bool)
    if n_drop:
        keep[rng.choice(nnz, size=n_drop, replace=False)] = False
    out = data.with_tags(_csr_from_mask(Y, keep))
    out.meta["tag_removal_rate"] = rate
    return out


def hide_tags(data: TaggedData, frac=0.4, random_state=None):
    """Hide a random fraction of every sample's observed tags (completion protocol).

    The paper's tag-completion split (Sec 4.1): the observed tags are divided
    into an observed part (60 %) and a hidden ground-truth part (40 %), chosen
    at random. Per sample with ``k`` tags we hide ``h = floor(frac * k)`` tags
    plus one more with probability ``frac * k - floor(frac * k)`` (stochastic
    rounding), so ``E[h] = frac * k`` exactly for every sample and about
    ``frac`` of all assignments are hidden overall -- plain rounding would
    hide nothing from 1-tag samples and 50 % from 2-tag ones. Which tags are
    hidden is uniform within the sample.

    Returns
    -------
    observed : TaggedData
        ``data`` with ``Y`` reduced to the still-observed tags.
    hidden : csr_matrix (n, m) uint8
        The hidden tags; ``hidden`` and ``observed.Y`` are disjoint and their
        union is ``data.Y``.
    """
    _check_data(data, "hide_tags")
    frac = _check_rate(frac, "frac")
    rng = np.random.default_rng(check_random_state_seed(random_state))
    Y = data.Y
    k = np.diff(Y.indptr)
    expected = frac * k
    h = np.floor(expected).astype(np.int64)
    h += rng.random(k.size) < (expected - h)
    # random priority per entry; within each row the h lowest-priority entries are hidden
    prio = rng.random(Y.nnz)
    rows = np.repeat(np.arange(Y.shape[0]), k)
    order = np.lexsort((prio, rows))  # grouped by row, random order inside
    rank = np.empty(Y.nnz, dtype=np.int64)
    rank[order] = np.arange(Y.nnz) - np.repeat(Y.indptr[:-1], k)
    hide = rank < h[rows]
    observed = data.with_tags(_csr_from_mask(Y, ~hide))
    observed.meta["hidden_fraction"] = frac
    return observed, _csr_from_mask(Y, hide)
