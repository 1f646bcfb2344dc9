"""The layered, soft-tag multi-label Gini criterion (Eq. 3-9), as numba kernels.

Tag data handed to the kernels (built once per fit by ``_tagdata``):

- ``ly_indptr`` (L, n + 1), ``ly_indices``: the observed tags of each sample
  in each layer, as positions within the layer (one CSR block per layer), so
  a sweep visits only the target layer's tags.
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


@nb.njit(cache=True, error_model="numpy")
def layer_parent_stats(samples, start, end, k, ly_indptr, ly_indices, layer_ptr, has_layer, soft_pos, soft_neg,
                       soft, cS, PS, MS):
    """Per-tag statistics of the node for layer k.

    Returns (impurity = sum_i psi_i(S), n_missing, sum_i c_i, sum_i c_i^2).
    Hard mode (``soft`` False): cS[li] = positive count (cS must be zero on
    entry; ``clear_counts`` resets it after use, touching only the node's
    tags, so small nodes cost O(node) not O(layer)). Soft mode: additionally
    PS / MS = positive / total mass per tag, missing samples soft.
    """
    N = end - start
    n_missing = 0
    sumS = 0
    sumsq = 0
    if soft:
        lsz = layer_ptr[k + 1] - layer_ptr[k]
        off = layer_ptr[k]
        for li in range(lsz):
            PS[li] = 0.0
            MS[li] = 0.0
    for a in range(start, end):
        s = samples[a]
        if soft and has_layer[s, k] == 0:
            n_missing += 1
            for li in range(lsz):
                p = soft_pos[s, off + li]
                PS[li] += p
                MS[li] += p + soft_neg[s, off + li]
        else:
            for b in range(ly_indptr[k, s], ly_indptr[k, s + 1]):
                li = ly_indices[b]
                c = cS[li]
                sumsq += 2 * c + 1
                cS[li] = c + 1
                sumS += 1
    if not soft:
        # sum_i 2 c_i (N - c_i) / N^2
        return 2.0 * (N * sumS - sumsq) / (N * N), 0, sumS, sumsq
    nlab = N - n_missing
    imp = 0.0
    for li in range(lsz):
        P = PS[li] + cS[li]
        M = MS[li] + nlab
        PS[li] = P
        MS[li] = M
        if M > 0.0:
            imp += 2.0 * P * (M - P) / (M * M)
    return imp, n_missing, sumS, sumsq


@nb.njit(cache=True)
def clear_counts(samples, start, end, k, ly_indptr, ly_indices, counts):
    """Zero the entries of ``counts`` that the node's samples' layer-k tags
    may have touched."""
    for a in range(start, end):
        s = samples[a]
        for b in range(ly_indptr[k, s], ly_indptr[k, s + 1]):
            counts[ly_indices[b]] = 0


@nb.njit(cache=True, error_model="numpy")
def sweep_hard(samples, start, end, order, keys, k, ly_indptr, ly_indices, cS, cL, min_leaf, imp_S, sumS,
               sumsqS):
    """Best cut of one sorted feature (``keys`` ranks in ``order``), hard tags.
    Returns (gain, n_left).

    With sum_i c_i fixed by the node, the weighted child impurity is
    2 (sum c - q) / |S| with q = sum c_L^2 / |L| + sum c_R^2 / |R|, so the
    sweep maximises q, keeping sum c^2 of each side; a moved sample touches
    only its own tags of layer k. ``cL`` is zero on entry and on exit."""
    N = end - start
    sumsqR = sumsqS
    sumsqL = 0
    best_q = -1.0
    best_nl = -1
    for p in range(N - 1):
        s = samples[start + order[p]]
        for b in range(ly_indptr[k, s], ly_indptr[k, s + 1]):
            li = ly_indices[b]
            c = cL[li]
            sumsqL += 2 * c + 1
            sumsqR -= 2 * (cS[li] - c) - 1
            cL[li] = c + 1
        nL = p + 1
        nR = N - nL
        if nL < min_leaf:
            continue
        if nR < min_leaf:
            break
        if keys[order[p + 1]] <= keys[order[p]]:
            continue
        q = (sumsqL * nR + sumsqR * nL) / (nL * nR)
        if q > best_q:
            best_q = q
            best_nl = nL
    clear_counts(samples, start, end, k, ly_indptr, ly_indices, cL)
    if best_nl < 0:
        return -1.0, -1
    return imp_S - 2.0 * (sumS - best_q) / N, best_nl


@nb.njit(cache=True, error_model="numpy")
def sweep_soft(samples, start, end, order, keys, k, ly_indptr, ly_indices, layer_ptr,
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
            for b in range(ly_indptr[k, s], ly_indptr[k, s + 1]):
                cL[ly_indices[b]] += 1
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
    for li in range(lsz):
        cL[li] = 0
    return best, best_nl
