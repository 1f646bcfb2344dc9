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
of the paper's soft tags, docs/design.md). The gain of a split (Eq. 3, 5) is the
sum over the target layer's tags of
    psi_i(S) - M_i(L)/M_i(S) psi_i(L) - M_i(R)/M_i(S) psi_i(R),
with M_i(L) psi_i(L) = 2 (P - P^2 / M). Without missing samples every mass is
|L|, and the layer sum of weighted child impurities reduces to
2 (sum_i c_i - sum_i c_i^2 / |L|), c_i the positive count: the sweep keeps
sum c and sum c^2 and touches only the moved sample's own tags.

Untagged samples in a hard layer (beyond the paper, ``ignore_untagged``):
the paper's hard Gini counts a sample with no observed tag in the target
layer as a negative of every tag. Where tags are sparse that makes the
untagged samples a class of their own: the trees separate them from the
tagged ones, a node of untagged samples is "pure" and stops, and their big
leaves become hubs of the affinity (Corel5k, 75 % of tags removed: leaves
of up to 123 untagged images, two clusters of 1006 and 629 images nearly
all untagged, NMI 0.148). With ``ignore_untagged`` such a sample is
unknown, as a missing sample of a soft layer with no soft evidence: it adds
no mass, so |L| above counts only the labelled samples of each side
(``n_lab``), and it follows the cuts the labelled samples choose.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ..primitives.prefetch import prefetch1d, prefetch2d

EPS_PURE = 1e-12
MASS_FLOOR = 1e-12


@nb.njit(cache=True, error_model="numpy")
def layer_parent_stats(samples, start, end, k, ly_indptr, ly_indices, layer_ptr, has_layer, soft_pos, soft_neg,
                       cS, PS, MS):
    """Per-tag statistics of the node for a soft layer k (a hard layer goes through
    ``hard_layer_tags``).

    Returns (impurity = sum_i psi_i(S), n_missing, sum_i c_i, sum_i c_i^2). cS[li] =
    positive count of the labelled samples (cS must be zero on entry; ``clear_counts``
    resets it after use, touching only the node's tags, so small nodes cost O(node) not
    O(layer)); PS / MS = positive / total mass per tag, the missing samples (no tag in
    layer k) soft.
    """
    N = end - start
    n_missing = 0
    sumS = 0
    sumsq = 0
    lsz = layer_ptr[k + 1] - layer_ptr[k]
    off = layer_ptr[k]
    for li in range(lsz):
        PS[li] = 0.0
        MS[li] = 0.0
    for a in range(start, end):
        prefetch_tags(samples, a, end, k, ly_indptr, ly_indices)
        s = samples[a]
        if has_layer[s, k] == 0:
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
        prefetch_tags(samples, a, end, k, ly_indptr, ly_indices)
        s = samples[a]
        for b in range(ly_indptr[k, s], ly_indptr[k, s + 1]):
            counts[ly_indices[b]] = 0


# the hard sweep prefetches the tags of the position PF_AHEAD ahead in sort order on nodes whose
# slots exceed the L2 cache (PF_FROM entries): visited in a feature's order, a large node's
# positions are random accesses
PF_AHEAD = 16
PF_FROM = 1 << 16
SLOTS_MAX = 6  # was 4; 6 is ~5 % faster on flat trecvid, where 38 % of samples have > 4 tags
# sweep_hard compiles one sweep per K = 1..SLOTS_MAX, written out: change both together
assert SLOTS_MAX == 6


@nb.njit(cache=True, inline="always")
def prefetch_tags(samples, a, end, k, ly_indptr, ly_indices):
    """Prefetch the layer-k tag list of the sample PF_AHEAD positions ahead of ``a`` and the
    row pointer of the one twice as far (loaded by then): a node's samples ascend, but
    below the top levels they lie far apart in the (n,)-long tag arrays."""
    if a + 2 * PF_AHEAD < end:
        prefetch2d(ly_indptr, k, samples[a + 2 * PF_AHEAD])
    if a + PF_AHEAD < end:
        prefetch1d(ly_indices, ly_indptr[k, samples[a + PF_AHEAD]])



@nb.njit(cache=True)
def node_layer_tags(samples, start, end, k, layer_ptr, ly_indptr, ly_indices, has_layer, soft_mode, soft_pos,
                    soft_neg, nptr, ntag, nrow, slots, nsoft):
    """Copy the node's layer-k tags into node-local arrays, once per node;
    returns K, the number of fixed tag slots per position.

    Position a of the node (sample samples[start + a]) owns tags
    ntag[nptr[a]:nptr[a + 1]]; its first K of them are also in
    slots[a*K : a*K + K], padded with dummy tags lsz + j (lsz the layer's
    size; one per slot, so that dummy updates do not form one long
    store-to-load chain; ``sweep_hard`` takes their counts off,
    ``sweep_soft`` never reads them). In soft mode a "missing" position a gets its own
    row r = nrow[a] of ``nsoft`` (else nrow[a] = -1): nsoft[r, :lsz] holds
    the sample's y^+ and nsoft[r, lsz:2 lsz] its soft mass y^+ + y^- (the
    float32 sum, as ``layer_parent_stats`` adds it) for the layer's tags.

    Why the soft copy: the sweep adds a missing sample's soft row at every
    feature; read from the (n, layer) arrays in sorted order those rows are
    cache misses (measured ~23 ns per sweep position on nuswide, 15 % of
    samples missing, 70 tags), read from the node's compact copy they stay
    in cache.

    Why slots: a sweep loop over a variable number of tags per sample
    mispredicts its exit at almost every position, and each mispredict
    waits for the cache misses that compute the trip count (measured ~3x
    slower than a fixed-trip loop). K is the smallest count that at most
    1/32 of the node's samples exceed (capped at SLOTS_MAX); their extra
    tags take the rare slow path through ``nptr``/``ntag``."""
    N = end - start
    off = layer_ptr[k]
    lsz = layer_ptr[k + 1] - off
    nptr[0] = 0
    b2 = 0
    n_miss = 0
    for a in range(N):
        prefetch_tags(samples, start + a, end, k, ly_indptr, ly_indices)
        s = samples[start + a]
        nrow[a] = -1
        if soft_mode and has_layer[s, k] == 0:
            nrow[a] = n_miss
            for li in range(lsz):
                q = soft_pos[s, off + li]
                nsoft[n_miss, li] = q
                nsoft[n_miss, lsz + li] = q + soft_neg[s, off + li]
            n_miss += 1
        for b in range(ly_indptr[k, s], ly_indptr[k, s + 1]):
            ntag[b2] = ly_indices[b]
            b2 += 1
        nptr[a + 1] = b2
    return fill_slots(N, lsz, nptr, ntag, slots)


@nb.njit(cache=True)
def fill_slots(N, lsz, nptr, ntag, slots):
    """The fixed tag slots of the node's N positions (see ``node_layer_tags``) from its
    node-local tags ``nptr``/``ntag``; returns K."""
    hist = np.zeros(SLOTS_MAX + 2, np.int64)
    for a in range(N):
        hist[min(nptr[a + 1] - nptr[a], SLOTS_MAX + 1)] += 1
    K = 1
    above = N - hist[0] - hist[1]
    while K < SLOTS_MAX and above * 32 > N:
        K += 1
        above -= hist[K]
    for a in range(N):
        b = nptr[a]
        e = nptr[a + 1]
        for j in range(K):
            slots[a * K + j] = ntag[b + j] if b + j < e else lsz + j
    return K


@nb.njit(cache=True, error_model="numpy")
def hard_layer_tags(samples, start, end, k, ly_indptr, ly_indices, ignore_untagged, cS, nptr, ntag, nrow):
    """The statistics of a hard layer k (as ``layer_parent_stats`` of a soft one) and the copy of ``node_layer_tags``
    (nptr, ntag, nrow; the slots are left to ``fill_slots``) in one pass over the samples' tag
    lists: on small nodes of sparse features (Corel5k's visual words), where a node draws
    features that cost little, reading each tag list twice plus once more to clear the
    counts was a third of a flat fit. ``clear_node_counts`` undoes the counts."""
    N = end - start
    n_missing = 0
    sumS = 0
    sumsq = 0
    nptr[0] = 0
    b2 = 0
    for a in range(N):
        prefetch_tags(samples, start + a, end, k, ly_indptr, ly_indices)
        s = samples[start + a]
        nrow[a] = -1
        b0 = ly_indptr[k, s]
        b1 = ly_indptr[k, s + 1]
        if ignore_untagged and b1 == b0:
            n_missing += 1
        for b in range(b0, b1):
            li = ly_indices[b]
            ntag[b2] = li
            b2 += 1
            c = cS[li]
            sumsq += 2 * c + 1
            cS[li] = c + 1
        sumS += b1 - b0
        nptr[a + 1] = b2
    N -= n_missing
    if N == 0:
        return 0.0, n_missing, sumS, sumsq
    return 2.0 * (N * sumS - sumsq) / (N * N), n_missing, sumS, sumsq


@nb.njit(cache=True)
def clear_node_counts(N, nptr, ntag, counts):
    """Zero the entries of ``counts`` of the node's tags, from its node-local copy (one
    sequential pass, where ``clear_counts`` goes through every sample's tag list)."""
    for b in range(nptr[N]):
        counts[ntag[b]] = 0


@nb.njit(cache=True, inline="always")
def clear_side(pos, lo, hi, nptr, ntag, slots, K, lsz, c_swept):
    """Zero the counts of the swept side (positions pos[lo:hi], dummy tags
    included): one vectorised pass over the layer when the side touched a
    large share of it, else through the same fixed-trip slots the sweep
    used (a loop over each position's own tag list mispredicts its exit
    at almost every position, see ``node_layer_tags``)."""
    if (hi - lo) * K >= lsz:
        for li in range(lsz + K):
            c_swept[li] = 0
        return
    for p in range(lo, hi):
        o = pos[p]
        for j in range(K):
            c_swept[slots[o * K + j]] = 0
        for b in range(nptr[o] + K, nptr[o + 1]):  # rare
            c_swept[ntag[b]] = 0


@nb.njit(cache=True, error_model="numpy")
def sweep_hard(N, n_lab, m, g0, pos, skey, nptr, ntag, slots, K, lsz, cS, c_swept, min_leaf, imp_S, sumS, sumsqS):
    """Best cut of one sorted feature, hard tags: ``sweep_hard_k`` compiled once per
    number of slots K (1 to ``SLOTS_MAX``), so that the slot loops have a constant trip
    count the compiler unrolls (measured 1.3-1.8x faster per swept key than a run-time K,
    on nodes of 24 to 400 keys with K = 6). Each call passes K as a literal, so numba
    compiles a specialization typed ``Literal[int](K)``, in which K is a constant; six
    specializations compile in less time than six copies inlined into this function
    (``inline="always"``: about 13 s of a cold fit's compilation against 17 s, for the
    same speed per key). Returns (gain, n_left)."""
    if K == 1:
        return sweep_hard_k(N, n_lab, m, g0, pos, skey, nptr, ntag, slots, 1, lsz, cS, c_swept, min_leaf, imp_S,
                            sumS, sumsqS)
    if K == 2:
        return sweep_hard_k(N, n_lab, m, g0, pos, skey, nptr, ntag, slots, 2, lsz, cS, c_swept, min_leaf, imp_S,
                            sumS, sumsqS)
    if K == 3:
        return sweep_hard_k(N, n_lab, m, g0, pos, skey, nptr, ntag, slots, 3, lsz, cS, c_swept, min_leaf, imp_S,
                            sumS, sumsqS)
    if K == 4:
        return sweep_hard_k(N, n_lab, m, g0, pos, skey, nptr, ntag, slots, 4, lsz, cS, c_swept, min_leaf, imp_S,
                            sumS, sumsqS)
    if K == 5:
        return sweep_hard_k(N, n_lab, m, g0, pos, skey, nptr, ntag, slots, 5, lsz, cS, c_swept, min_leaf, imp_S,
                            sumS, sumsqS)
    return sweep_hard_k(N, n_lab, m, g0, pos, skey, nptr, ntag, slots, 6, lsz, cS, c_swept, min_leaf, imp_S,
                        sumS, sumsqS)


@nb.njit(cache=True, error_model="numpy")
def sweep_hard_k(N, n_lab, m, g0, pos, skey, nptr, ntag, slots, K, lsz, cS, c_swept, min_leaf, imp_S, sumS, sumsqS):
    """Best cut of one sorted feature, hard tags. Returns (gain, n_left).

    ``n_lab``: the node's samples with mass. N (every sample is a labelled
    one, the paper's hard Gini) or fewer (``ignore_untagged``: a position
    with no tag in the layer adds to its side's size but not to its mass).

    The node's samples in key order are pos[:g0] (keys below the feature's
    mode), N - m samples holding the mode key, then pos[g0:m]; ``skey``
    holds the keys of ``pos``. The mode group is never visited: the sweep
    moves pos[:g0] one by one into the left side (a forward sweep) and
    pos[g0:m] from the last one down into the right side (a backward
    sweep), and every other side's statistics are the node's minus the
    swept side's. A cut inside the mode group is a tie, never scored, so
    no cut is missed; on sparse features (most values 0) this skips most
    of the node.

    With sum_i c_i fixed by the node, the weighted child impurity is
    2 (sum c - q) / |S| with q = sum c_L^2 / |L| + sum c_R^2 / |R|, so the
    sweep maximises q, which is symmetric in the two sides. A moved sample
    touches only its own tags (``slots``, then any extra ones, see
    ``node_layer_tags``), each update a plain increment: the swept side's
    sum c_A^2 grows by 2 c + 1 and X = sum c_S c_A by c_S, and the other
    side's sum c_B^2 = sum c_S^2 - 2 X + sum c_A^2. Dummy slots count too
    (their c_S is 0, so X ignores them); their share of sum c_A^2 is
    sum_j m_j^2, m_j = c_swept[lsz + j] the dummy's own count, taken off only
    where a cut is scored. (Masking each dummy update instead cost ~15 %
    more per position.) The integers, hence q, are those of the direct
    per-side sums; of equal q the leftmost cut wins, as in one left-to-right
    sweep. ``c_swept`` is zero on entry and on exit."""
    best_q = -1.0
    best_nl = -1
    all_lab = n_lab == N
    far = N * K >= PF_FROM
    for side in range(2):
        cnt = g0 if side == 0 else m - g0
        sumsq_swept_raw = 0
        X = 0
        nlab_swept = 0
        for i in range(cnt):
            p = i if side == 0 else m - 1 - i
            if far and i + PF_AHEAD < cnt:
                o2 = pos[p + PF_AHEAD - 2 * side * PF_AHEAD]
                prefetch1d(slots, o2 * K)
                prefetch1d(nptr, o2)
            o = pos[p]
            if all_lab or nptr[o + 1] > nptr[o]:
                nlab_swept += 1
            for j in range(K):  # fixed trip count: branch-free
                li = slots[o * K + j]
                c = c_swept[li]
                sumsq_swept_raw += 2 * c + 1
                X += cS[li]
                c_swept[li] = c + 1
            for b in range(nptr[o] + K, nptr[o + 1]):  # rare
                li = ntag[b]
                c = c_swept[li]
                sumsq_swept_raw += 2 * c + 1
                X += cS[li]
                c_swept[li] = c + 1
            n_swept = i + 1
            n_other = N - n_swept
            if n_other < min_leaf:
                break
            # the next sample in sweep order shares the key: no cut here (the
            # side's last sample borders the mode group or the other side,
            # whose keys differ)
            if i + 1 < cnt and skey[p + 1 - 2 * side] == skey[p]:
                continue
            if n_swept < min_leaf:
                continue
            dummy = 0
            for j in range(K):
                mj = c_swept[lsz + j]
                dummy += mj * mj
            sumsq_swept = sumsq_swept_raw - dummy
            sumsq_other = sumsqS - 2 * X + sumsq_swept
            if all_lab:
                q = (sumsq_swept * n_other + sumsq_other * n_swept) / (n_swept * n_other)
            else:
                # sum c^2 / |side| over the sides with mass
                nlab_other = n_lab - nlab_swept
                q = 0.0
                if nlab_swept > 0:
                    q += sumsq_swept / nlab_swept
                if nlab_other > 0:
                    q += sumsq_other / nlab_other
            nl = n_swept if side == 0 else n_other
            if q > best_q or (q == best_q and nl < best_nl):
                best_q = q
                best_nl = nl
        clear_side(pos, 0 if side == 0 else g0, g0 if side == 0 else m, nptr, ntag, slots, K, lsz, c_swept)
    if best_nl < 0:
        return -1.0, -1
    return imp_S - 2.0 * (sumS - best_q) / n_lab, best_nl


@nb.njit(cache=True)
def fold_size(lsz):
    """Length of the per-tag term buffer of ``sweep_soft``: a power of two,
    at least 8 and at least ``lsz``."""
    P = 8
    while P < lsz:
        P *= 2
    return P


@nb.njit(cache=True, error_model="numpy")
def soft_step_bounds(N, nptr, ntag, nrow, lsz, nsoft, PS, MS, W, wstep, wmiss):
    """Per-node constants of ``sweep_soft``: W[li] = 2 / M_i(S) (0 for a tag
    with no mass), and the weights of the bound on how much one moved
    sample can raise the gain (see ``sweep_soft``): wstep[a] = sum of W over
    labelled position a's tags, or sum W y^+ for a missing one (row
    r = nrow[a]), whose wmiss[r] = (sum W mu, sum W mu PS^2), mu its soft
    mass. Returns (n labelled, sum W, sum W PS^2, sum W PS)."""
    SW = 0.0
    C1 = 0.0
    C2 = 0.0
    for li in range(lsz):
        w = 2.0 / MS[li] if MS[li] > 0.0 else 0.0
        W[li] = w
        SW += w
        C1 += w * PS[li]
        C2 += w * PS[li] * PS[li]
    nlab = 0
    for a in range(N):
        r = nrow[a]
        acc = 0.0
        if r >= 0:
            am = 0.0
            am2 = 0.0
            for li in range(lsz):
                acc += W[li] * nsoft[r, li]
                mu = W[li] * nsoft[r, lsz + li]
                am += mu
                am2 += mu * PS[li] * PS[li]
            wmiss[r, 0] = am
            wmiss[r, 1] = am2
        else:
            nlab += 1
            for b in range(nptr[a], nptr[a + 1]):
                acc += W[ntag[b]]
        wstep[a] = acc
    return nlab, SW, C2, C1


@nb.njit(cache=True, error_model="numpy")
def soft_step_bound(missing, w, wm, wm2, nlab_other, SW, C2):
    """Upper bound on the rise of the soft gain when one sample moves from
    the other side into the swept one (see ``sweep_soft``). ``nlab_other``:
    labelled samples on the other side before the move; w = wstep of the sample; wm, wm2 = its wmiss row
    (missing samples); SW, C2 from ``soft_step_bounds``."""
    if missing:
        if nlab_other >= 1.0:
            return w + min(wm, wm2 / (nlab_other * nlab_other))
        return w + wm
    r = nlab_other - 1.0
    if r >= 1.0:
        return w + min(SW, C2 / (r * r))
    return w + SW


@nb.njit(cache=True, error_model="numpy")
def sweep_soft(N, m, g0, pos, skey, nptr, ntag, nrow, slots, K, lsz, nsoft, PS, MS, W, P_swept, M_swept, T, min_leaf,
               imp_S, best0, nlabS, wstep, wmiss, SW, C2, margin):
    """Best cut of one sorted feature with soft tags for missing samples,
    among those whose gain beats ``best0`` (the node's best so far); returns
    (gain, n_left), n_left -1 if none does.

    Sweeps the two sides of the feature's mode group as ``sweep_hard`` does
    (forward over pos[:g0] into the left side, backward over pos[g0:m] into
    the right), the other side being the node's totals PS, MS minus the
    swept side. P_swept[li]: positive mass of the swept side A (soft plus hard
    counts); M_swept[li]: soft mass of its missing samples (its labelled ones add
    ``nlab_swept`` to every tag); W from ``soft_step_bounds``. A missing sample's
    soft values come from the node's copy ``nsoft`` (see
    ``node_layer_tags``). The per-tag term is symmetric in the two sides; of
    equal gains the leftmost cut wins.

    Scoring a cut costs a division per tag, most of the sweep's time; a cut
    that provably cannot beat the best is not scored. With f(P, M) = P^2/M
    the gain is a constant plus sum_i W_i (f(P_A, M_A) + f(P_B, M_B)), and
    moving one sample from B to A raises it by at most (r = labelled
    samples left on B; f is convex and 1-homogeneous, hence subadditive,
    and by convexity removing (p, mu) from B raises f by at most
    mu (P_B/M_B)^2 after the move, at most mu min(1, PS^2 / r^2)):
    - labelled, with tags tau: sum_{tau} W + min(sum W, sum W PS^2 / r^2)
      (a tag it has: A gains at most 1, B loses; one it lacks: A loses);
    - missing, soft y^+, mass mu: sum W y^+ + min(sum W mu,
      sum W mu PS^2 / r^2) (A gains at most f(y^+, mu) <= y^+).
    ``ub`` adds these to the last scored gain (0 before any move); a cut
    is scored only when ub reaches the best, so the cuts scored and the one
    chosen are those of scoring every cut (``margin`` covers rounding).

    The layer sum is taken in a fixed order, so that the gain is the same
    bits however the kernel is compiled: the per-tag terms go to T (an
    element-wise loop, vectorised) and T is folded in halves down to 8
    lanes (each fold element-wise too), then summed pairwise. A
    compiler-reassociated sum (fastmath) was ~8 % faster on this sweep but
    broke near-ties differently in a freshly compiled process and in one
    loading numba's cache, so the same seed grew different trees.
    ``T`` has ``fold_size(lsz)`` entries."""
    P = T.shape[0]
    for li in range(lsz, P):
        T[li] = 0.0
    best = best0
    best_nl = -1
    for side in range(2):
        cnt = g0 if side == 0 else m - g0
        for li in range(lsz):
            P_swept[li] = 0.0
            M_swept[li] = 0.0
        nlab_swept = 0.0
        ub = margin  # the gain with nothing moved is 0
        for i in range(cnt):
            p = i if side == 0 else m - 1 - i
            o = pos[p]
            r = nrow[o]
            if r >= 0:
                for li in range(lsz):
                    P_swept[li] += nsoft[r, li]
                    M_swept[li] += nsoft[r, lsz + li]
                ub += soft_step_bound(True, wstep[o], wmiss[r, 0], wmiss[r, 1], nlabS - nlab_swept, SW, C2)
            else:
                ub += soft_step_bound(False, wstep[o], 0.0, 0.0, nlabS - nlab_swept, SW, C2)
                nlab_swept += 1.0
                for j in range(K):
                    P_swept[slots[o * K + j]] += 1.0  # dummy tags (>= lsz) are never read
                for b in range(nptr[o] + K, nptr[o + 1]):
                    P_swept[ntag[b]] += 1.0
            n_swept = i + 1
            n_other = N - n_swept
            if n_other < min_leaf:
                break
            if i + 1 < cnt and skey[p + 1 - 2 * side] == skey[p]:
                continue
            if n_swept < min_leaf or ub < best:
                continue
            for li in range(lsz):
                P_s = P_swept[li]
                M_s = M_swept[li] + nlab_swept
                P_o = PS[li] - P_s
                # one division per tag: P_s^2/M_s + P_o^2/M_o over a common
                # denominator; a side with (rounding-level) zero mass has zero
                # positive mass too, and MASS_FLOOR keeps its term ~0
                M_o = max(MS[li] - M_s, MASS_FLOOR)
                M_s = max(M_s, MASS_FLOOR)
                T[li] = W[li] * (P_s + P_o - (P_s * P_s * M_o + P_o * P_o * M_s) / (M_s * M_o))
            h = P // 2
            top = lsz
            while h >= 8:
                for k in range(top - h):
                    T[k] += T[k + h]
                top = h
                h //= 2
            # T[top:8] is still the zero padding when the layer has < 8 tags
            child = ((T[0] + T[1]) + (T[2] + T[3])) + ((T[4] + T[5]) + (T[6] + T[7]))
            gain = imp_S - child
            ub = gain + margin
            nl = n_swept if side == 0 else n_other
            if gain > best or (gain == best and nl < best_nl):
                best = gain
                best_nl = nl
    return best, best_nl
