"""Split search and depth-first growth of one HML-tree (numba, nogil).

A tree is stored as parallel arrays (the scikit-learn ``_tree`` layout):
``feature``, ``threshold``, ``left``, ``right`` (-1 at leaves) and
``leaf_id`` (compact leaf index, -1 at internal nodes). A sample goes left
when ``x[feature] < threshold`` (Eq. 1).
"""
from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

from ._criterion import (EPS_PURE, SLOTS_MAX, clear_counts, fold_size, layer_parent_stats, node_layer_tags,
                         soft_step_bounds, sweep_hard, sweep_soft)
from ._keys import _sort_keys, dense_ranks, feature_keys  # noqa: F401 (feature_keys, dense_ranks, _sort_keys: API)
from ._keys import fill_local_keys, float_keys, sort_node_keys
from ..primitives.counting import members_by_leaf
from ..primitives.prefetch import prefetch2d, prefetch_ranks
from ..primitives.rng import rand_below
from ..primitives.threshold import midpoint


@nb.njit(cache=True, error_model="numpy")
def target_layer(samples, start, end, n_layers, ly_indptr, ly_indices, layer_ptr, has_layer, soft_pos, soft_neg,
                 use_soft, ignore_untagged, cS, PS, MS):
    """The first impure layer (alpha_k = 1, Eq. 5) and its statistics.

    Returns (k, soft_mode, impurity, sum c, sum c^2, n_lab); k = -1 when
    every layer is pure (a layer with no labelled sample counts as pure);
    n_lab: the samples with mass in a hard layer (all but the untagged ones
    with ``ignore_untagged``). On return cS holds layer k's counts (clear
    it with ``clear_counts`` when the node is done).
    """
    N = end - start
    for k in range(n_layers):
        soft = use_soft and k < n_layers - 1
        imp, n_missing, sumS, sumsq = layer_parent_stats(samples, start, end, k, ly_indptr, ly_indices, layer_ptr,
                                                         has_layer, soft_pos, soft_neg, soft, ignore_untagged,
                                                         cS, PS, MS)
        if imp > EPS_PURE:
            # with no missing sample the soft criterion equals the hard one:
            # use the cheaper hard sweep
            if soft:
                return k, n_missing > 0, imp, sumS, sumsq, N
            return k, False, imp, sumS, sumsq, N - n_missing
        clear_counts(samples, start, end, k, ly_indptr, ly_indices, cS)
    return -1, False, 0.0, 0, 0, N


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
def _prefetch_keys(R, Rh, h, f, kidx, start, end):
    """``prefetch_ranks`` of feature f's keys, and of their high halves when h >= 0."""
    prefetch_ranks(R, f, kidx, start, end)
    if h >= 0:
        prefetch_ranks(Rh, h, kidx, start, end)


# Prefetching a node's keys from R (the nodes above a local subtree): the next candidate's
# first PF_NEXT keys are prefetched while this one is sorted and swept, and a larger node's
# gather prefetches its own keys PF_GATHER ahead of itself. Prefetching a large node whole
# issued thousands of prefetches back to back, more misses than the core tracks, and most of
# its keys were read from memory one by one (cycle probe, one tree at 1M x 512: 54 cycles
# per gathered key of the nodes over 512 samples; with these bounds 27, the tree 23.6 ->
# 20.5 s; PF_NEXT 128 or 512 and PF_GATHER 32 to 128 measured alike)
PF_NEXT = 512
PF_GATHER = 64


@nb.njit(cache=True, error_model="numpy")
def search_node(X, R, Rh, high, mode_rank, mode_val, samples, kidx, start, end, features, draw, n_known, max_features,
                rng_state, keys, order, tmp, cnt, cpos, pos, skey, k, soft_mode, imp_S, sumS, sumsqS, n_lab, layer_ptr,
                nptr, ntag, nrow, slots, nsoft, K, cS, PS, MS, W, c_swept, P_swept, M_swept, T, wstep, wmiss, min_leaf):
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
    if f_j >= 0:
        _prefetch_keys(R, Rh, high[features[f_j]], features[f_j], kidx, start, min(end, start + PF_NEXT))
    while f_j >= 0:
        f = features[f_j]
        # the node's integer keys on f but those at the feature's mode
        md = mode_rank[f]
        m, g0, kmin, kmax = _gather_keys(R, Rh, high[f], f, kidx, start, N, md, keys, cpos)
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
        if f_j >= 0:
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
def subsample(samples, start, end, size, rng_state, out):
    """A uniform draw of ``size`` of ``samples[start:end]`` (fewer than there are)
    without replacement, in their order, into ``out[:size]``: selection sampling
    (Knuth's Algorithm S), one draw per sample, so the subsample keeps the node's
    ascending order and its gathers their locality. Returns ``size``."""
    need = size
    j = 0
    for a in range(start, end):
        if rand_below(rng_state, end - a) < need:
            out[j] = samples[a]
            j += 1
            need -= 1
            if need == 0:
                break
    return size


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
    k, soft_mode, imp, sumS, sumsq, n_lab = target_layer(samples, 0, n, n_layers, ly_indptr, ly_indices, layer_ptr,
                                                         has_layer, soft_pos, soft_neg, use_soft, ignore_untagged,
                                                         ws.cS, ws.PS, ws.MS)
    if k < 0:
        return -1, np.float32(0.0), 0.0, -1
    K = node_layer_tags(samples, 0, n, k, layer_ptr, ly_indptr, ly_indices, has_layer, soft_mode, soft_pos, soft_neg,
                        ws.nptr, ws.ntag, ws.nrow, ws.slots, ws.nsoft)
    best_f, best_t, best_gain, _, _ = search_node(
        X, R, Rh, high, mode_rank, mode_val, samples, samples, 0, n, features, False, 0, 0, np.zeros(1, np.uint64), ws.keys, ws.order,
        ws.tmp, ws.cnt, ws.cpos, ws.pos, ws.skey, k, soft_mode, imp, sumS, sumsq, n_lab, layer_ptr, ws.nptr, ws.ntag,
        ws.nrow, ws.slots, ws.nsoft, K, ws.cS, ws.PS, ws.MS, ws.W, ws.c_swept, ws.P_swept, ws.M_swept, ws.T, ws.wstep,
        ws.wmiss, min_leaf)
    clear_counts(samples, 0, n, k, ly_indptr, ly_indices, ws.cS)
    return best_f, best_t, best_gain, k


@nb.njit(cache=True, nogil=True, error_model="numpy")
def grow_tree(X, R, mode_rank, mode_val, Rh, high, samples, n_layers, ly_indptr, ly_indices, layer_ptr, has_layer,
              soft_pos, soft_neg, use_soft, ignore_untagged, min_leaf, max_features, rng_state, train_leaf,
              split_sample=0, local_size=0):
    """Grow one HML-tree depth-first on ``samples`` (permuted in place).

    ``R``, ``mode_rank``, ``mode_val``, ``Rh``, ``high`` = feature_keys(X); R is feature-major:
    a node gathers one feature's integer keys from one contiguous row and
    radix-sorts those that differ from the feature's mode.

    Per node: the target layer is the first impure one; ``max_features``
    features are drawn without replacement (scikit-learn's rule, see the
    loop); each non-constant one is sorted once and swept. A node is a
    leaf when it cannot give two children of ``min_leaf`` samples, when all
    layers are pure, or when no cut has a positive gain. ``train_leaf[s]``
    receives the leaf of each sample in ``samples``.

    ``split_sample`` > 0: a node of more samples chooses its split on a uniform
    subsample of exactly that many of them (``subsample``, from the tree's
    stream), then sends all of its samples left or right by the chosen
    threshold; a node whose subsample finds no split searches all its samples.
    Smaller nodes, hence every tree on at most ``split_sample`` samples, are
    exact. Features found constant on a subsample are not taken as constant below.

    ``local_size`` > 0: a node of at most that many samples (and exact) roots a local
    subtree. Its samples' keys on every feature are copied once into a block L (d,
    local_size) by ``fill_local_keys``, each sample's row of X read whole, front to back;
    the nodes of the subtree gather from that block, which stays in cache, instead of
    from R, where below the top levels every gathered key is a cache miss of its own (a
    node's samples lie far apart in each (n,)-long row). The keys are X's float bits
    made order-preserving (``float_keys``): they order and tie as the ranks do, so the
    subtree, hence the tree, is the same whatever ``local_size``.
    """
    n = samples.shape[0]
    d = X.shape[1]
    cap = 2 * (n // max(min_leaf, 1)) + 3
    feature = np.full(cap, -1, np.int32)
    threshold = np.zeros(cap, np.float32)
    left = np.full(cap, -1, np.int32)
    right = np.full(cap, -1, np.int32)
    leaf_id = np.full(cap, -1, np.int32)
    ws = _workspace(n, n_layers, layer_ptr, tag_entries(samples, ly_indptr),
                    soft_rows(samples, n_layers, has_layer, use_soft))
    features = np.arange(d).astype(np.int64)
    sub = np.empty(split_sample if 0 < split_sample < n else 0, np.int64)
    # the keys of the current local subtree (see the docstring): L[f, j] of its j-th sample,
    # loc[a] the row of L of samples[a] for a in [lo_start, lo_end)
    L = np.empty((d, local_size), np.uint32)
    loc = np.empty(n if local_size > 0 else 0, np.int64)
    mode_key = float_keys(mode_val)
    whole = np.full(d, -1, np.int64)  # L holds every key whole
    lo_start = 0
    lo_end = 0
    st_start = np.empty(cap, np.int64)
    st_end = np.empty(cap, np.int64)
    st_parent = np.empty(cap, np.int64)
    st_isleft = np.empty(cap, np.uint8)
    st_nconst = np.zeros(cap, np.int64)
    top = 0
    st_start[0] = 0
    st_end[0] = n
    st_parent[0] = -1
    st_isleft[0] = 0
    top = 1
    n_nodes = 0
    n_leaves = 0
    while top > 0:
        top -= 1
        start = st_start[top]
        end = st_end[top]
        parent = st_parent[top]
        n_known = st_nconst[top]
        n_found = 0
        node = n_nodes
        n_nodes += 1
        if parent >= 0:
            if st_isleft[top]:
                left[parent] = node
            else:
                right[parent] = node
        N = end - start
        best_f = -1
        best_t = np.float32(0.0)
        best_rank = np.uint32(0)
        by_value = False
        local = lo_start <= start and end <= lo_end
        if not local and 2 * min_leaf <= N <= local_size and not 0 < split_sample < N:
            fill_local_keys(X, samples, start, end, L, loc)
            lo_start = start
            lo_end = end
            local = True
        # a large node searches a subsample first; an exact node, or one whose subsample
        # found no split, searches all its samples
        for sampled in (True, False):
            if N < 2 * min_leaf or (sampled and not 0 < split_sample < N):
                continue
            if sampled:
                src, s0, s1 = sub, 0, subsample(samples, start, end, split_sample, rng_state, sub)
            else:
                src, s0, s1 = samples, start, end
            k, soft_mode, imp, sumS, sumsq, n_lab = target_layer(src, s0, s1, n_layers, ly_indptr,
                                                                 ly_indices, layer_ptr, has_layer, soft_pos, soft_neg,
                                                                 use_soft, ignore_untagged, ws.cS, ws.PS, ws.MS)
            if k >= 0:
                K = node_layer_tags(src, s0, s1, k, layer_ptr, ly_indptr, ly_indices, has_layer, soft_mode,
                                    soft_pos, soft_neg, ws.nptr, ws.ntag, ws.nrow, ws.slots, ws.nsoft)
                if local:  # one call site per key array: R and L may differ in dtype
                    best_f, best_t, _, best_rank, n_found = search_node(
                        X, L, Rh, whole, mode_key, mode_val, src, loc, s0, s1, features, True, n_known, max_features,
                        rng_state, ws.keys, ws.order, ws.tmp, ws.cnt, ws.cpos, ws.pos, ws.skey, k, soft_mode, imp,
                        sumS, sumsq, n_lab, layer_ptr, ws.nptr, ws.ntag, ws.nrow, ws.slots, ws.nsoft, K, ws.cS, ws.PS,
                        ws.MS, ws.W, ws.c_swept, ws.P_swept, ws.M_swept, ws.T, ws.wstep, ws.wmiss, min_leaf)
                else:
                    best_f, best_t, _, best_rank, n_found = search_node(
                        X, R, Rh, high, mode_rank, mode_val, src, src, s0, s1, features, True, n_known, max_features,
                        rng_state, ws.keys, ws.order, ws.tmp, ws.cnt, ws.cpos, ws.pos, ws.skey, k, soft_mode, imp,
                        sumS, sumsq, n_lab, layer_ptr, ws.nptr, ws.ntag, ws.nrow, ws.slots, ws.nsoft, K, ws.cS, ws.PS,
                        ws.MS, ws.W, ws.c_swept, ws.P_swept, ws.M_swept, ws.T, ws.wstep, ws.wmiss, min_leaf)
                clear_counts(src, s0, s1, k, ly_indptr, ly_indices, ws.cS)
            if best_f >= 0:
                if sampled:  # constant on the subsample is not constant on the node
                    n_found = 0
                    by_value = True
                break
        if best_f < 0:
            leaf_id[node] = n_leaves
            for a in range(start, end):
                train_leaf[samples[a]] = n_leaves
            n_leaves += 1
            continue
        feature[node] = best_f
        threshold[node] = best_t
        # partition samples[start:end]: x < t to the left, i.e. rank below
        # the first right sample's rank; stable, so every node's samples stay in
        # ascending index order (as the root's): a node's gathers from R walk each
        # feature's row forwards, which the hardware prefetches, instead of at random
        n_left = 0
        n_right = 0
        buf = ws.tmp
        if local:  # the local rows move with their samples
            lbuf = ws.order
            for a in range(start, end):
                s = samples[a]
                j = loc[a]
                if L[best_f, j] < best_rank:
                    samples[start + n_left] = s
                    loc[start + n_left] = j
                    n_left += 1
                else:
                    buf[n_right] = s
                    lbuf[n_right] = j
                    n_right += 1
            for a in range(n_right):
                loc[start + n_left + a] = lbuf[a]
        else:
            h = high[best_f]
            for a in range(start, end):
                s = samples[a]
                # below the first right sample's rank is below the threshold when that sample is the
                # node's; a subsampled node cuts by the threshold itself
                if by_value:
                    go_left = X[s, best_f] < best_t
                elif h < 0:
                    go_left = R[best_f, s] < best_rank
                else:
                    go_left = (np.uint32(R[best_f, s]) | (np.uint32(Rh[h, s]) << 16)) < best_rank
                if go_left:
                    samples[start + n_left] = s
                    n_left += 1
                else:
                    buf[n_right] = s
                    n_right += 1
        mid = start + n_left
        for a in range(n_right):
            samples[mid + a] = buf[a]
        # right pushed first so the left child is grown first (depth-first)
        st_start[top] = mid
        st_end[top] = end
        st_parent[top] = node
        st_isleft[top] = 0
        st_nconst[top] = n_known + n_found
        top += 1
        st_start[top] = start
        st_end[top] = mid
        st_parent[top] = node
        st_isleft[top] = 1
        st_nconst[top] = n_known + n_found
        top += 1
    return (feature[:n_nodes].copy(), threshold[:n_nodes].copy(), left[:n_nodes].copy(),
            right[:n_nodes].copy(), leaf_id[:n_nodes].copy(), n_leaves)


# a local subtree's key block (d x local_size uint32, see grow_tree): as many samples as
# LOCAL_BYTES hold (a block that stays in the L2 cache), and at least LOCAL_SAMPLES while the
# block stays within LOCAL_BYTES_MAX (a quarter of the L3). Measured on 100k and 1M nuswide
# fits (a few trees, alternating runs): at 4096 features blocks of 512 samples (8 MiB) made
# the trees 10-20 % faster than the 64 that 1 MiB holds; at 512 features 1 MiB (512 samples)
# was as fast as larger blocks at 100k and 8 % faster than 8 MiB at 1M. The trees are the
# same whatever the size.
LOCAL_BYTES = 1 << 20
LOCAL_SAMPLES = 512
LOCAL_BYTES_MAX = 8 << 20


def local_size_for(d):
    """The ``local_size`` of ``grow_tree`` for d features (see ``LOCAL_BYTES``); 0 (no local
    subtrees) when that is fewer than 16 samples."""
    per_sample = 4 * max(int(d), 1)
    size = max(LOCAL_BYTES // per_sample, min(LOCAL_SAMPLES, LOCAL_BYTES_MAX // per_sample))
    return size if size >= 16 else 0


def grow_one(X, keys, tag_args, boot, state, min_leaf, max_features, split_sample=None, local_size=None):
    """One tree of a fit, as every path grows it (local threads, a Dask worker):
    on all samples, or on the sorted bootstrap draw ``boot``, from the one-element
    seed ``state`` (copied); ``split_sample`` and ``local_size`` as in ``grow_tree``
    (``split_sample`` None: exact; ``local_size`` None: ``local_size_for(d)``). The
    tree is the same whatever ``local_size``.
    Returns (tree arrays, train leaf (n,) int32, -1 outside ``boot``)."""
    n = X.shape[0]
    if local_size is None:
        local_size = local_size_for(X.shape[1])
    samples = (np.arange(n) if boot is None else boot).astype(np.int64)
    leaf = np.full(n, -1, np.int32)
    out = grow_tree(X, *keys, samples, *tag_args, min_leaf, max_features, state.copy(), leaf, int(split_sample or 0),
                    int(local_size))
    return out, leaf


def _split_keys(X, *tag_args):
    return feature_keys(X)


def _grow_shared(shared, state, boot, min_leaf, max_features, split_sample):
    """``grow_one`` on an executor's ``shared`` (X, then the tag arrays), the split keys
    derived from X once per process (``Shared.derived``)."""
    X, tag_args = shared.arrays[0], shared.arrays[1:]
    return grow_one(X, shared.derived("keys", _split_keys), tag_args, boot, state, min_leaf, max_features,
                    split_sample)


def grow_forest(X, tag_args, states, boots, min_leaf, max_features, split_sample, executor, progress=None):
    """The tree loop of every fit: tree t grown by ``grow_one`` from the seed ``states[t]``
    (on the bootstrap draw ``boots[t]`` if any), by ``executor`` (:mod:`hmlkit.executors`:
    local threads with Ctrl-C between trees, or the workers of a Dask cluster), so the
    forest is the same whatever runs it; ``progress(k)`` after k more trees. Returns
    ``[(tree arrays, train leaf)]`` in tree order.

    The split keys (as large as X) live only in this call, so they are freed before the
    trees are stored: at 100,000 x 4096 the concatenated trees and training leaves
    otherwise came on top of them, at the fit's peak."""
    return executor.map(_grow_shared, (X, *tag_args), len(states),
                        lambda t: (states[t:t + 1].copy(), None if boots is None else boots[t], min_leaf,
                                   max_features, split_sample),
                        name="hmlforest-tree", progress=progress)


def route_table(node_offset, feature, threshold, left, right, leaf_id):
    """The forest's nodes packed for routing: one 16-byte row per node, so a visit
    touches one cache line instead of one per array (feature, threshold, children):
    an int32 view (n_nodes, 4) holding [feature, threshold bits, left, right] at a split
    and [-1 - leaf id, 0, 0, 0] at a leaf, children as indices into the table, and the
    float32 view of the same memory (the threshold in column 1). Returns (ints, floats)."""
    n_nodes = feature.shape[0]
    if n_nodes >= 2**31:
        raise ValueError(f"a forest of {n_nodes:,} nodes is too large to route (at most 2**31 - 1 nodes)")
    table = np.zeros((n_nodes, 4), np.int32)
    base = np.repeat(node_offset[:-1], np.diff(node_offset)).astype(np.int64)
    split = left >= 0
    table[:, 0] = np.where(split, feature, -1 - leaf_id)
    table.view(np.float32)[:, 1] = np.where(split, threshold, np.float32(0))
    table[:, 2] = np.where(split, left + base, 0)
    table[:, 3] = np.where(split, right + base, 0)
    return table, table.view(np.float32)


APPLY_BLOCK = 32  # samples routed together through one tree (see apply_table)
APPLY_CHUNKS = 256  # most chunks of blocks (each with its own feature buffer), for balance
# from this many trees on, the trees after the first are routed in leaf order (see
# apply_table): below it, the first tree's pass and the copies of the rows cost more than
# the shared paths save (measured on 512-d and 4096-d features: even at 5 or 6 trees)
APPLY_ORDER_FROM = 6


@nb.njit(cache=True, inline="always")
def _route_block(xb, m, t0, t1, node_offset, ti, tf, cur, active, rows, out):
    """Trees t0..t1-1 for the block's ``m`` samples (features ``xb[j]``, output row
    ``rows[j]``), in lockstep: see ``apply_table``."""
    for t in range(t0, t1):
        for j in range(m):
            cur[j] = node_offset[t]
            active[j] = j
        n_active = m
        while n_active > 0:
            a = 0
            while a < n_active:
                j = active[a]
                node = cur[j]
                f = ti[node, 0]
                if f >= 0:
                    cur[j] = ti[node, 2] if xb[j, f] < tf[node, 1] else ti[node, 3]
                    a += 1
                else:  # at its leaf: the last active sample takes its place
                    n_active -= 1
                    active[a] = active[n_active]
        for j in range(m):
            out[rows[j], t] = -1 - ti[cur[j], 0]


@nb.njit(parallel=True, cache=True)
def _route_rows(X, node_offset, ti, tf, order, t0, t1, out):
    """Trees t0..t1-1 for every sample, in blocks of ``APPLY_BLOCK`` (see ``apply_table``):
    blocks of consecutive samples read in place when ``order`` is empty, else blocks
    taken in ``order``, each block's rows copied together first."""
    n, d = X.shape
    ordered = order.shape[0] > 0
    n_blocks = (n + APPLY_BLOCK - 1) // APPLY_BLOCK
    n_chunks = min(n_blocks, APPLY_CHUNKS)
    for c in nb.prange(n_chunks):
        cur = np.empty(APPLY_BLOCK, np.int64)
        active = np.empty(APPLY_BLOCK, np.int64)
        rows = np.empty(APPLY_BLOCK, np.int64)
        buf = np.empty((APPLY_BLOCK if ordered else 0, d), X.dtype)
        for b in range(n_blocks * c // n_chunks, n_blocks * (c + 1) // n_chunks):
            i0 = b * APPLY_BLOCK
            m = min(n, i0 + APPLY_BLOCK) - i0
            if ordered:
                for j in range(m):
                    rows[j] = order[i0 + j]
                    buf[j] = X[rows[j]]
                _route_block(buf, m, t0, t1, node_offset, ti, tf, cur, active, rows, out)
            else:
                for j in range(m):
                    rows[j] = i0 + j
                _route_block(X[i0:i0 + m], m, t0, t1, node_offset, ti, tf, cur, active, rows, out)


def apply_table(X, node_offset, ti, tf):
    """Leaf index of every sample in every tree, from ``route_table``'s views.

    A block of ``APPLY_BLOCK`` samples goes through one tree in lockstep, one level
    per round: the block's node loads are independent of each other, so their cache
    misses overlap instead of each waiting for the last (one sample walking a deep
    tree alone is a chain of dependent misses). A sample that reaches its leaf leaves
    the round robin, so a block costs the sum of its samples' depths, not its deepest
    one times the block (unbalanced trees have leaves far deeper than the mean).

    The first tree routes the samples in their own order; the others (in a forest of
    ``APPLY_ORDER_FROM`` trees or more) in the order of their leaf in it, each block's
    rows copied together first. Samples that share a leaf are alike, so they also walk
    much the same paths in the other trees: a block then shares its deep nodes, which
    are the misses once the forest outgrows the caches (100 trees: a quarter less time
    at 100,000 and 1,000,000 samples of 512-d features, a fifth at 100,000 of 4096-d).
    The leaves are the same whatever the order."""
    n, T = X.shape[0], node_offset.shape[0] - 1
    out = np.empty((n, T), np.int32)
    if n == 0 or T == 0:
        return out
    ordered = T >= APPLY_ORDER_FROM
    _route_rows(X, node_offset, ti, tf, np.empty(0, np.int32), 0, 1 if ordered else T, out)
    if ordered:
        order = members_by_leaf(np.ascontiguousarray(out[:, 0])[None, :])[0][0]
        _route_rows(X, node_offset, ti, tf, order, 1, T, out)
    return out


def apply_flat(X, node_offset, feature, threshold, left, right, leaf_id):
    """Leaf index of every sample in every tree of a flattened forest (the arrays of
    ``HMLForest``: per-tree node indices, ``node_offset`` the start of each tree)."""
    return apply_table(X, node_offset, *route_table(node_offset, feature, threshold, left, right, leaf_id))


def _apply_shared(forest, X_block):
    # the packed node table is built once per process, not once per block
    return apply_table(X_block, forest.arrays[0], *forest.derived("route", route_table))


def apply_forest(X, forest_arrays, executor):
    """``apply_flat(X, *forest_arrays)`` by ``executor``: in one block on this machine, or in
    row blocks on the workers of a Dask cluster (the forest sent to each worker once, each
    block to the one worker that routes it)."""
    bounds = executor.row_blocks(X.shape[0])
    parts = executor.map(_apply_shared, forest_arrays, len(bounds), lambda i: (X[slice(*bounds[i])],),
                         name="hmlforest-apply", scatter=True)
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)
