"""The paper's split criterion (Eq. 3-5) as plain, readable numpy functions.

The numba kernels (``_criterion``, ``_split``) compute the same numbers
incrementally while sweeping a sorted feature; these functions state them
directly, per node, and the tests check the kernels against them.

Per tag i of the target layer k, over a set S of samples with positive mass
P_i(S) and total mass M_i(S) (a labelled sample adds 1 to M and its tag value
to P; a "missing" one its soft confidences, Eq. 6-9)::

    psi_i(S) = 2 p (1 - p),  p = P_i(S) / M_i(S)                       (Eq. 3)
    Delta psi = sum_i psi_i(S) - M_i(L)/M_i(S) psi_i(L) - M_i(R)/M_i(S) psi_i(R)
                                                             (Eq. 4 over one layer)
    alpha_k = 0 iff every tag of layer k is pure on S; the gain is that of the
    first layer with alpha_k = 1                                       (Eq. 5)
"""
from __future__ import annotations

import numpy as np

EPS_PURE = 1e-12


def gini_impurity(P, M):
    """Eq. 3: per-tag Gini 2 p (1 - p) of a weighted set, from per-sample
    positive masses ``P`` and total masses ``M`` (rows: samples, columns:
    tags). Returns (psi, total mass) per tag; psi is 0 where the mass is 0."""
    Pt, Mt = np.asarray(P).sum(0), np.asarray(M).sum(0)
    p = np.divide(Pt, Mt, out=np.zeros_like(Pt, dtype=float), where=Mt > 0)
    return 2 * p * (1 - p), Mt


def split_gain(P, M, left):
    """Eq. 4 over the target layer's tags: the gain of sending the rows
    ``left`` (boolean) to the left child, child impurities weighted by
    their share of each tag's mass."""
    left = np.asarray(left, dtype=bool)
    psiS, MS = gini_impurity(P, M)
    psiL, ML = gini_impurity(P[left], M[left])
    psiR, MR = gini_impurity(P[~left], M[~left])
    w = MS > 0
    return float(np.sum(psiS[w] - ML[w] / MS[w] * psiL[w] - MR[w] / MS[w] * psiR[w]))


def layer_is_impure(P, M):
    """Eq. 5's alpha_k: True when some tag of the layer is impure on the set."""
    psi, _ = gini_impurity(P, M)
    return bool(psi.sum() > EPS_PURE)
