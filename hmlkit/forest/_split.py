"""The split search of one node of an HML-tree (numba): its target layer (Eq. 5), the
candidate features drawn as scikit-learn's BestSplitter draws them, each one's keys gathered,
sorted and swept by the criterion (``_criterion``), and the best cut (Eq. 1-4).
``best_split_over`` searches one node on its own (tests, inspection); ``_grow`` calls
``search_node`` at every node of a tree.
"""
from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

from ..primitives.prefetch import prefetch2d, prefetch_ranks
from ..primitives.rng import rand_below
from ..primitives.threshold import midpoint
from ._criterion import (
    EPS_PURE,
    SLOTS_MAX,
    clear_counts,
    clear_node_counts,
    fill_slots,
    fold_size,
    hard_layer_tags,
    layer_parent_stats,
    node_layer_tags,
    soft_step_bounds,
    sweep_hard,
    sweep_soft,
)
from ._keys import sort_node_keys


@nb.njit(cache=True, error_model="numpy")
def target_layer(samples, start, end, n_layers, ly_indptr, ly_indices, layer_ptr, has_layer, soft_pos, soft_neg,
                 use_soft, ignore_untagged, cS, PS, MS, nptr, ntag, nrow, slots, nsoft):
    """The first impure layer (alpha_k = 1, Eq. 5), its statistics and the node's tags in
    node-local form (``node_layer_tags``).

    Returns (k, soft_mode, impurity, sum c, sum c^2, n_lab, K); k = -1 when
    every layer is pure (a layer with no labelled sample counts as pure);
    n_lab: the samples with mass in a hard layer (all but the untagged ones
    with ``ignore_untagged``); K the tag slots per position. On return cS holds
    layer k's counts (clear it with ``clear_node_counts`` when the node is done).
    A hard layer's statistics and tag copy take one pass (``hard_layer_tags``).
    """
    N = end - start
    for k in range(n_layers):
        soft = use_soft and k < n_layers - 1
        if soft:
            imp, n_missing, sumS, sumsq = layer_parent_stats(samples, start, end, k, ly_indptr, ly_indices,
                                                             layer_ptr, has_layer, soft_pos, soft_neg, cS, PS, MS)
            if imp > EPS_PURE:
                # with no missing sample the soft criterion equals the hard one:
                # use the cheaper hard sweep
                soft_mode = n_missing > 0
                K = node_layer_tags(samples, start, end, k, layer_ptr, ly_indptr, ly_indices, has_layer, soft_mode,
                                    soft_pos, soft_neg, nptr, ntag, nrow, slots, nsoft)
                return k, soft_mode, imp, sumS, sumsq, N, K
            clear_counts(samples, start, end, k, ly_indptr, ly_indices, cS)
            continue
        imp, n_missing, sumS, sumsq = hard_layer_tags(samples, start, end, k, ly_indptr, ly_indices,
                                                      ignore_untagged, cS, nptr, ntag, nrow)
        if imp > EPS_PURE:
            K = fill_slots(N, layer_ptr[k + 1] - layer_ptr[k], nptr, ntag, slots)
            return k, False, imp, sumS, sumsq, N - n_missing, K
        clear_node_counts(N, nptr, ntag, cS)
    return -1, False, 0.0, 0, 0, N, 0


@nb.njit(cache=True)
def _in_key_order(q, g0, cm, pos, skey, md):
    """The q-th of a node's samples in key order, as (node position, key):
    the order is pos[:g0], then ``cm`` samples at the mode key ``md``
    (position -1: any of them), then pos[g0:]."""
    if q < g0:
        return pos[q], skey[q]
    if q < g0 + cm:
        return -1, md
    return pos[q - cm], skey[q - cm]


@nb.njit(cache=True, inline="always")
def _next_candidate(features, draw, n_known, max_features, rng_state, f_i, n_found, n_total, n_visited,
                    n_drawn_const, nxt):
    """The next feature to try, as an index into ``features`` (-1: the node's
    search is over), and the updated (n_visited, n_drawn_const, nxt); see
    ``search_node``. Drawing follows scikit-learn's BestSplitter."""
    if not draw:
        if nxt >= features.shape[0]:
            return -1, n_visited, n_drawn_const, nxt
        return nxt, n_visited, n_drawn_const, nxt + 1
    while f_i > n_total and (n_visited < max_features or n_visited <= n_found + n_drawn_const):
        n_visited += 1
        f_j = n_drawn_const + rand_below(rng_state, f_i - n_found - n_drawn_const)
        if f_j < n_known:
            tmpf = features[n_drawn_const]
            features[n_drawn_const] = features[f_j]
            features[f_j] = tmpf
            n_drawn_const += 1
            continue
        return f_j + n_found, n_visited, n_drawn_const, nxt
    return -1, n_visited, n_drawn_const, nxt


@nb.njit(cache=True, inline="always")
def _gather_keys(R, Rh, h, f, kidx, start, N, md, keys, cpos):
    """Gather the node's keys on feature f (R[f], with the high halves Rh[h] when h >= 0,
    see ``feature_keys``), leaving out those equal to the feature's mode ``md``
    (branch-free compaction): keys[:m] and their node positions cpos[:m], g0 of them below
    the mode. Returns (m, g0, smallest key, largest key)."""
    kmin = np.uint32(0xFFFFFFFF)
    kmax = np.uint32(0)
    # typed int64 from the start: a literal 0 made numba compile sweep_hard a second
    # time, for Literal[int](0) arguments (its six sweeps doubled the cold compile)
    m = np.int64(0)
    g0 = np.int64(0)
    for a in range(N):
        s = kidx[start + a]
        if N > PF_NEXT and a + PF_GATHER < N:
            s2 = kidx[start + a + PF_GATHER]
            prefetch2d(R, f, s2)
            if h >= 0:
                prefetch2d(Rh, h, s2)
        v = np.uint32(R[f, s])
        if h >= 0:
            v |= np.uint32(Rh[h, s]) << 16
        keys[m] = v
        cpos[m] = a
        m += v != md
        g0 += v < md
        if v < kmin:
            kmin = v
        if v > kmax:
            kmax = v
    return m, g0, kmin, kmax


@nb.njit(cache=True, inline="always")
def _gather_sparse(R, Rh, h, f, kidx, start, N, md, keys, cpos, sp_idx, b0, b1, spos):
    """``_gather_keys`` of a sparse feature from its list of off-mode samples
    sp_idx[b0:b1] (``sparse_keys``) instead of the node's N keys: a listed sample is the
    node's when ``spos`` (the node's positions, see ``search_node``) points at it. Same
    results: the list ascends, as the node's samples do, so keys[:m] come in the order
    the whole gather finds them; the mode counts in the key range when some sample holds
    it (m < N). Branch-free: whether a listed sample is the node's is a coin toss."""
    kmin = np.uint32(0xFFFFFFFF)
    kmax = np.uint32(0)
    m = np.int64(0)
    g0 = np.int64(0)
    for b in range(b0, b1):
        s = sp_idx[b]
        a = spos[s]
        mine = a < N and kidx[start + a] == s
        v = np.uint32(R[f, s])
        if h >= 0:
            v |= np.uint32(Rh[h, s]) << 16
        keys[m] = v
        cpos[m] = a
        m += mine
        g0 += mine and v < md
        kmin = min(kmin, v if mine else np.uint32(0xFFFFFFFF))
        kmax = max(kmax, v if mine else np.uint32(0))
    if m < N:
        kmin = min(kmin, md)
        kmax = max(kmax, md)
    return m, g0, kmin, kmax


@nb.njit(cache=True, inline="always")
def _prefetch_keys(R, Rh, h, f, kidx, start, end):
    """``prefetch_ranks`` of feature f's keys, and of their high halves when h >= 0."""
    prefetch_ranks(R, f, kidx, start, end)
    if h >= 0:
        prefetch_ranks(Rh, h, kidx, start, end)


# a listed sparse feature is gathered from its list on nodes of more than SPARSE_GATHER times
# as many samples as the list holds (a listed sample costs more than a gathered key: its
# position is looked up and checked)
SPARSE_GATHER = 4


@nb.njit(cache=True, inline="always")
def _sparse_gather(sp_len, f, N):
    """Whether a node of N samples gathers feature f from its list (``_gather_sparse``)."""
    return 0 <= sp_len[f] and SPARSE_GATHER * sp_len[f] < N


# ``tally`` (see ``search_node``, ``grow_tree``): int64 counters of the memory a tree's growth
# reads, for ``benchmarks.traffic``; a 0-long array counts nothing. Entries: for the gathers from
# the keys R (a whole row's or a sparse list's) and those from a local subtree's block L, each
# TALLY_GATHER long from TALLY_R and TALLY_L: key bytes gathered, 64-byte lines they lie on,
# bytes of the sparse gathers (list entry, position, key), features gathered; then the local
# blocks' fill (bytes read, bytes written), the partitions (bytes read, lines), nodes searched.
TALLY_R, TALLY_L, TALLY_GATHER = 0, 4, 4
TALLY_FILL_READ, TALLY_FILL_WRITE, TALLY_PART_BYTES, TALLY_PART_LINES, TALLY_SEARCHES = 8, 9, 10, 11, 12
TALLY_SIZE = 13
LINE = 64


@nb.njit(cache=True)
def count_lines(idx, start, N, base, stride):
    """The 64-byte lines holding the elements at byte offsets base + idx[start + a] * stride,
    a < N, idx ascending (a node's samples); counted from the array's start."""
    lines = 0
    prev = np.int64(-1)
    for a in range(N):
        ln = (base + np.int64(idx[start + a]) * stride) // LINE
        lines += ln != prev
        prev = ln
    return lines


# Prefetching a node's keys from R (the nodes above a local subtree): the next candidate's
# first PF_NEXT keys are prefetched while this one is sorted and swept, and a larger node's
# gather prefetches its own keys PF_GATHER ahead of itself. Prefetching a large node whole
# issued thousands of prefetches back to back, more misses than the core tracks, and most of
# its keys were read from memory one by one (cycle probe, one tree at 1M x 512: 54 cycles
# per gathered key of the nodes over 512 samples; with these bounds 27, the tree 23.6 ->
# 20.5 s; PF_NEXT 128 or 512 and PF_GATHER 32 to 128 measured alike)
PF_NEXT = 512
PF_GATHER = 64


@nb.njit(cache=True)
def _tally_gather(tally, R, Rh, h, f, kidx, start, N, sparse, n_listed):
    """Add one feature's gather to ``tally`` (see ``TALLY_SIZE``)."""
    w = R.itemsize
    tally[3] += 1
    if sparse:
        tally[2] += n_listed * (4 + 8 + w + (2 if h >= 0 else 0))
        return
    tally[0] += N * (w + (2 if h >= 0 else 0))
    tally[1] += count_lines(kidx, start, N, f * R.shape[1] * w, w)
    if h >= 0:
        tally[1] += count_lines(kidx, start, N, h * Rh.shape[1] * 2, 2)


@nb.njit(cache=True, error_model="numpy")
def search_node(X, R, Rh, high, mode_rank, mode_val, sp_start, sp_len, sp_idx, spos, samples, kidx, start, end, features,
                draw, n_known, max_features,
                rng_state, keys, order, tmp, cnt, cpos, pos, skey, k, soft_mode, imp_S, sumS, sumsqS, n_lab, layer_ptr,
                nptr, ntag, nrow, slots, nsoft, K, cS, PS, MS, W, c_swept, P_swept, M_swept, T, wstep, wmiss, min_leaf,
                tally):
    """Best split of one node: (feature, threshold, gain, rank of the first
    right sample, number of features newly found constant); feature -1
    when no cut has a positive gain. The node's tags are in node-local form
    (``node_layer_tags``).

    ``draw`` True: draw ``max_features`` candidates from ``features`` (the
    growth rule, see below; ``features`` is permuted in place and its first
    ``n_known`` entries are known constant). ``draw`` False: try every
    entry of ``features`` in order (Algorithm 1 with a fixed candidate list).

    R, Rh, high, mode_rank, mode_val: the keys (``feature_keys``). ``kidx[a]`` is the
    column of R holding the keys of ``samples[a]`` (``samples`` itself,
    or the rows of a local subtree's key block, see ``grow_tree``); X is read at
    ``samples``.

    sp_start, sp_len, sp_idx: the sparse features' lists of off-mode samples
    (``sparse_keys``; sp_len all -1: none). A listed feature with fewer than N /
    ``SPARSE_GATHER`` of them is gathered from its list (``_gather_sparse``), the others
    whole. Only where ``kidx`` holds sample indices in ascending order, each once (not in a
    local subtree's block, nor with bootstrap duplicates): the caller passes no lists
    otherwise. ``spos`` (n,): scratch, the node's position of each of its samples, written
    at the node's first sparse gather; any value in [0, n) on entry.

    ``tally``: the counters of ``TALLY_GATHER`` entries this search adds its gathers to (a
    slice of the tree's tally at ``TALLY_R`` or ``TALLY_L``), or a 0-long array.

    Each candidate is gathered (integer ranks), sorted and swept here, in
    one call per node: a call of a numba function costs reference-count
    updates of its ~30 array arguments, measured at about a quarter of a
    flat trecvid fit when the per-feature work was a function of its own.
    The scratch arrays are the tree's :data:`Workspace`, passed field by field: one
    namedtuple argument instead measured 4-7 % slower on flat fits (trecvid, nuswide).
    """
    N = end - start
    d = features.shape[0]
    lsz = layer_ptr[k + 1] - layer_ptr[k]
    best_gain = EPS_PURE
    best_f = -1
    best_t = np.float32(0.0)
    best_rank = np.uint32(0)
    # Drawing follows scikit-learn's BestSplitter: features[:n_known] are
    # known constant (from an ancestor) and cost nothing when drawn; a
    # drawn feature found constant joins that prefix for the descendants.
    # Constant features count as tried (they have no cut-point, Eq. 2), but
    # drawing goes on until one non-constant feature is seen.
    nlabS = 0.0
    SW = 0.0
    C2 = 0.0
    margin = 0.0
    if soft_mode:
        n_lab, SW, C2, C1 = soft_step_bounds(N, nptr, ntag, nrow, lsz, nsoft, PS, MS, W, wstep, wmiss)
        nlabS = float(n_lab)
        margin = 1e-9 * (1.0 + imp_S + C1)
    n_found = 0
    n_visited = 0
    n_drawn_const = 0
    n_total = n_known
    f_i = d
    f_j, n_visited, n_drawn_const, nxt = _next_candidate(features, draw, n_known, max_features, rng_state, f_i,
                                                         n_found, n_total, n_visited, n_drawn_const, 0)
    if f_j >= 0 and not _sparse_gather(sp_len, features[f_j], N):
        _prefetch_keys(R, Rh, high[features[f_j]], features[f_j], kidx, start, min(end, start + PF_NEXT))
    marked = False
    while f_j >= 0:
        f = features[f_j]
        # the node's integer keys on f but those at the feature's mode
        md = mode_rank[f]
        if _sparse_gather(sp_len, f, N):
            if not marked:
                for a in range(N):
                    spos[kidx[start + a]] = a
                marked = True
            b0 = sp_start[f]
            m, g0, kmin, kmax = _gather_sparse(R, Rh, high[f], f, kidx, start, N, md, keys, cpos, sp_idx, b0,
                                               b0 + sp_len[f], spos)
        else:
            m, g0, kmin, kmax = _gather_keys(R, Rh, high[f], f, kidx, start, N, md, keys, cpos)
        if tally.shape[0] > 0:
            _tally_gather(tally, R, Rh, high[f], f, kidx, start, N, _sparse_gather(sp_len, f, N), sp_len[f])
        if kmax <= kmin:  # constant on this node
            if draw:
                features[f_j] = features[n_total]
                features[n_total] = f
                n_found += 1
                n_total += 1
        elif draw:
            f_i -= 1
            features[f_j] = features[f_i]
            features[f_i] = f
        # draw the next candidate now (the draws do not depend on the sweep) and
        # prefetch its ranks: their cache misses overlap this feature's sort and sweep
        f_j, n_visited, n_drawn_const, nxt = _next_candidate(features, draw, n_known, max_features, rng_state, f_i,
                                                             n_found, n_total, n_visited, n_drawn_const, nxt)
        if f_j >= 0 and not _sparse_gather(sp_len, features[f_j], N):
            _prefetch_keys(R, Rh, high[features[f_j]], features[f_j], kidx, start, min(end, start + PF_NEXT))
        if kmax <= kmin:
            continue
        sort_node_keys(keys, cpos, m, kmin, kmax, order, tmp, cnt, pos, skey)
        if soft_mode:
            gain, nl = sweep_soft(N, m, g0, pos, skey, nptr, ntag, nrow, slots, K, lsz, nsoft, PS, MS, W, P_swept,
                                  M_swept, T, min_leaf, imp_S, best_gain, nlabS, wstep, wmiss, SW, C2, margin)
        else:
            gain, nl = sweep_hard(N, n_lab, m, g0, pos, skey, nptr, ntag, slots, K, lsz, cS, c_swept, min_leaf, imp_S,
                                  sumS, sumsqS)
        if nl > 0 and gain > best_gain:
            best_gain = gain
            best_f = f
            # the samples either side of the cut
            a_lo, _ = _in_key_order(nl - 1, g0, N - m, pos, skey, md)
            a_hi, best_rank = _in_key_order(nl, g0, N - m, pos, skey, md)
            lo_val = mode_val[f] if a_lo < 0 else X[samples[start + a_lo], f]
            hi_val = mode_val[f] if a_hi < 0 else X[samples[start + a_hi], f]
            best_t = midpoint(lo_val, hi_val)
    return best_f, best_t, best_gain, best_rank, n_found


@nb.njit(cache=True)
def tag_entries(samples, ly_indptr):
    """Tag entries of ``samples`` summed over all layers: the capacity the
    node-local tag copy needs at the root. Counts a bootstrap duplicate once
    per draw (a sample drawn three times brings its tags three times)."""
    tot = 0
    for k in range(ly_indptr.shape[0]):
        for a in range(samples.shape[0]):
            s = samples[a]
            tot += ly_indptr[k, s + 1] - ly_indptr[k, s]
    return tot


@nb.njit(cache=True)
def soft_rows(samples, n_layers, has_layer, use_soft):
    """Rows the node-local soft copy needs: the samples (with bootstrap
    duplicates) that lack a tag in some layer with a soft criterion; no
    node holds more missing samples than that."""
    if not use_soft:
        return 0
    tot = 0
    for a in range(samples.shape[0]):
        s = samples[a]
        for k in range(n_layers - 1):
            if has_layer[s, k] == 0:
                tot += 1
                break
    return tot


# The scratch arrays one tree's growth reuses at every node (numba builds and reads
# this namedtuple like a tuple; the fields name what each array holds):
# keys, order, tmp, cnt, cpos, pos, skey: gathering and sorting one feature's keys;
# cS, PS, MS, W: per-tag statistics of the node; c_swept, P_swept, M_swept: those of
# the side a sweep moves samples into (the left on the forward pass, the right on the
# backward one), all with spare entries for the dummy tags; nptr, ntag, nrow, slots,
# nsoft: the node's tags in node-local form (``node_layer_tags``); T: per-tag terms of
# ``sweep_soft``; wstep, wmiss: its bound weights (``soft_step_bounds``).
Workspace = namedtuple("Workspace", ["keys", "order", "tmp", "cnt", "cpos", "pos", "skey", "cS", "PS", "MS", "W",
                                     "c_swept", "P_swept", "M_swept", "nptr", "ntag", "nrow", "slots", "nsoft", "T",
                                     "wstep", "wmiss"])


@nb.njit(cache=True, error_model="numpy")
def _workspace(n, n_layers, layer_ptr, n_tag_entries, n_soft_rows):
    """The :data:`Workspace` of a tree grown on ``n`` samples."""
    max_layer = 1
    soft_width = 0
    for k in range(n_layers):
        size = layer_ptr[k + 1] - layer_ptr[k]
        max_layer = max(max_layer, size)
        if k < n_layers - 1:
            soft_width = max(soft_width, size)
    m = max_layer + SLOTS_MAX
    return Workspace(np.empty(n, np.uint32), np.empty(n, np.int64), np.empty(n, np.int64), np.zeros(max(n, 256) + 1, np.int64),
            np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.uint32),
            np.zeros(m, np.int64), np.zeros(m, np.float64), np.zeros(m, np.float64), np.zeros(m, np.float64),
            np.zeros(m, np.int64), np.zeros(m, np.float64), np.zeros(m, np.float64), np.empty(n + 1, np.int64),
            np.empty(max(n_tag_entries, 1), np.int32), np.empty(n, np.int64), np.empty(n * SLOTS_MAX, np.int32),
            np.empty((n_soft_rows, 2 * soft_width), np.float32), np.zeros(fold_size(soft_width), np.float64),
            np.empty(n, np.float64), np.empty((n_soft_rows, 2), np.float64))


@nb.njit(cache=True, error_model="numpy")
def best_split_over(X, R, mode_rank, mode_val, Rh, high, samples, features, n_layers, ly_indptr, ly_indices, layer_ptr,
                    has_layer, soft_pos, soft_neg, use_soft, ignore_untagged, min_leaf):
    """Best split of the node holding ``samples`` among the given features
    (Algorithm 1 with a fixed candidate list); R, mode_rank, mode_val, Rh, high =
    feature_keys(X).
    For tests and inspection.

    Returns (feature, threshold, gain, target_layer); feature -1 if no split.
    """
    n = samples.shape[0]
    ws = _workspace(n, n_layers, layer_ptr, tag_entries(samples, ly_indptr),
                    soft_rows(samples, n_layers, has_layer, use_soft))
    k, soft_mode, imp, sumS, sumsq, n_lab, K = target_layer(samples, 0, n, n_layers, ly_indptr, ly_indices,
                                                            layer_ptr, has_layer, soft_pos, soft_neg, use_soft,
                                                            ignore_untagged, ws.cS, ws.PS, ws.MS, ws.nptr, ws.ntag,
                                                            ws.nrow, ws.slots, ws.nsoft)
    if k < 0:
        return -1, np.float32(0.0), 0.0, -1
    best_f, best_t, best_gain, _, _ = search_node(
        X, R, Rh, high, mode_rank, mode_val, np.zeros(X.shape[1], np.int64), np.full(X.shape[1], -1, np.int64),
        np.empty(0, np.int32),
        np.zeros(X.shape[0], np.int64), samples, samples, 0, n, features, False, 0, 0, np.zeros(1, np.uint64), ws.keys, ws.order,
        ws.tmp, ws.cnt, ws.cpos, ws.pos, ws.skey, k, soft_mode, imp, sumS, sumsq, n_lab, layer_ptr, ws.nptr, ws.ntag,
        ws.nrow, ws.slots, ws.nsoft, K, ws.cS, ws.PS, ws.MS, ws.W, ws.c_swept, ws.P_swept, ws.M_swept, ws.T, ws.wstep,
        ws.wmiss, min_leaf, np.zeros(0, np.int64))
    clear_node_counts(n, ws.nptr, ws.ntag, ws.cS)
    return best_f, best_t, best_gain, k
