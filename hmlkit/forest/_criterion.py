"""The layered, soft-tag multi-label Gini criterion (Eq. 3-9), as numba kernels.

Tag data handed to the kernels (built once per fit by ``_tagdata``):

- ``y_indptr``, ``y_indices``: observed tags of each sample (CSR).
- ``tag_layer[j]``, ``tag_local[j]``: layer of tag j and its position there.
- ``layer_ptr``: tags of layer k are positions layer_ptr[k]:layer_ptr[k+1]
  of the layer order (most abstract layer first).
- ``has_layer[s, k]``: sample s has at least one observed tag in layer k.
- ``soft_pos``, ``soft_neg`` (n, layer_ptr[L-1]): soft confidences y^+ and
  y^- (Eq. 7, 9, normalised to [0, 1]) of the tags of every layer but the
  last, in layer order; empty when correlations are off.

Gini of one binary tag over a weighted set: psi = 2 p (1 - p), p = P / M with
P the positive and M the total mass. A sample labelled in the target layer
adds 1 to M and, if it has the tag, 1 to P. With correlations on and a target
layer that has subordinate layers, a sample with no observed tag in the
target layer is "missing": it adds y^+ to P and y^+ + y^- to M (our reading
of the paper's soft tags, DESIGN.md). The gain of a split (Eq. 3, 5) is the
sum over the target layer's tags of
    psi_i(S) - M_i(L)/M_i(S) psi_i(L) - M_i(R)/M_i(S) psi_i(R),
with M_i(L) psi_i(L) = 2 (P - P^2 / M). Without missing samples every mass is
|L|, and the layer sum of weighted child impurities reduces to
2 (sum_i c_i - sum_i c_i^2 / |L|), c_i the positive count: the sweep keeps
sum c and sum c^2 and touches only the moved sample's own tags.
"""
from __future__ import annotations

import numba as nb
import numpy as np

EPS_PURE = 1e-12


@nb.njit(cache=True)
def layer_parent_stats(samples, start, end, k, y_indptr, y_indices, tag_layer, tag_local, layer_ptr,
                       has_layer, soft_pos, soft_neg, soft, cS, PS, MS):
    """Fill the node's per-tag statistics for layer k; return (impurity, n_missing).

    Hard mode (``soft`` False): cS[li] = positive count, impurity = sum psi_i.
    Soft mode: PS / MS = positive / total mass per tag (missing samples soft).
    """
    lsz = layer_ptr[k + 1] - layer_ptr[k]
    off = layer_ptr[k]
    N = end - start
    for li in range(lsz):
        cS[li] = 0
        PS[li] = 0.0
        MS[li] = 0.0
    n_missing = 0
    nlab = 0
    for a in range(start, end):
        s = samples[a]
        if soft and has_layer[s, k] == 0:
            n_missing += 1
            for li in range(lsz):
                p = soft_pos[s, off + li]
                PS[li] += p
                MS[li] += p + soft_neg[s, off + li]
        else:
            nlab += 1
            for b in range(y_indptr[s], y_indptr[s + 1]):
                tag = y_indices[b]
                if tag_layer[tag] == k:
                    cS[tag_local[tag]] += 1
    imp = 0.0
    if soft:
        for li in range(lsz):
            P = PS[li] + cS[li]
            M = MS[li] + nlab
            PS[li] = P
            MS[li] = M
            if M > 0.0:
                imp += 2.0 * P * (M - P) / (M * M)
    else:
        for li in range(lsz):
            c = cS[li]
            imp += 2.0 * c * (N - c) / (N * N)
    return imp, n_missing


@nb.njit(cache=True)
def sweep_hard(samples, start, end, order, keys, k, y_indptr, y_indices, tag_layer, tag_local, layer_ptr,
               cS, cL, cR, min_leaf, imp_S):
    """Best cut of one sorted feature (``keys`` ranks in ``order``), hard tags.
    Returns (gain, n_left)."""
    lsz = layer_ptr[k + 1] - layer_ptr[k]
    N = end - start
    sumS = 0
    sumsqS = 0
    for li in range(lsz):
        cL[li] = 0
        cR[li] = cS[li]
        sumS += cS[li]
        sumsqS += cS[li] * cS[li]
    sumL = 0
    sumsqL = 0
    sumR = sumS
    sumsqR = sumsqS
    best = -1.0
    best_nl = -1
    for p in range(N - 1):
        s = samples[start + order[p]]
        for b in range(y_indptr[s], y_indptr[s + 1]):
            tag = y_indices[b]
            if tag_layer[tag] == k:
                li = tag_local[tag]
                sumsqL += 2 * cL[li] + 1
                cL[li] += 1
                sumL += 1
                sumsqR -= 2 * cR[li] - 1
                cR[li] -= 1
                sumR -= 1
        nL = p + 1
        nR = N - nL
        if nL < min_leaf:
            continue
        if nR < min_leaf:
            break
        if keys[order[p + 1]] <= keys[order[p]]:
            continue
        child = 2.0 * (sumL - sumsqL / nL) + 2.0 * (sumR - sumsqR / nR)
        gain = imp_S - child / N
        if gain > best:
            best = gain
            best_nl = nL
    return best, best_nl


@nb.njit(cache=True)
def sweep_soft(samples, start, end, order, keys, k, y_indptr, y_indices, tag_layer, tag_local, layer_ptr,
               has_layer, soft_pos, soft_neg, PS, MS, cL, PL, ML, min_leaf, imp_S):
    """Best cut of one sorted feature with soft tags for missing samples.
    O(|S| * |layer|): every position re-sums the layer's tags."""
    lsz = layer_ptr[k + 1] - layer_ptr[k]
    off = layer_ptr[k]
    N = end - start
    for li in range(lsz):
        cL[li] = 0
        PL[li] = 0.0
        ML[li] = 0.0
    nlabL = 0
    best = -1.0
    best_nl = -1
    for p in range(N - 1):
        s = samples[start + order[p]]
        if has_layer[s, k] == 0:
            for li in range(lsz):
                q = soft_pos[s, off + li]
                PL[li] += q
                ML[li] += q + soft_neg[s, off + li]
        else:
            nlabL += 1
            for b in range(y_indptr[s], y_indptr[s + 1]):
                tag = y_indices[b]
                if tag_layer[tag] == k:
                    cL[tag_local[tag]] += 1
        nL = p + 1
        nR = N - nL
        if nL < min_leaf:
            continue
        if nR < min_leaf:
            break
        if keys[order[p + 1]] <= keys[order[p]]:
            continue
        child = 0.0
        for li in range(lsz):
            Ms = MS[li]
            if Ms <= 0.0:
                continue
            Pl = PL[li] + cL[li]
            Ml = ML[li] + nlabL
            Pr = PS[li] - Pl
            Mr = Ms - Ml
            t = 0.0
            if Ml > 0.0:
                t += Pl - Pl * Pl / Ml
            if Mr > 0.0:
                t += Pr - Pr * Pr / Mr
            child += 2.0 * t / Ms
        gain = imp_S - child
        if gain > best:
            best = gain
            best_nl = nL
    return best, best_nl
