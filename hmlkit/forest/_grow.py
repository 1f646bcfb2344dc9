"""Growth of HML-trees: one tree depth-first (``grow_tree``, numba, nogil), one tree of a fit
(``grow_one``) and the tree loop of a fit (``grow_forest``), which an executor runs
(:mod:`hmlkit.executors`: local threads or a Dask cluster).

A tree is stored as parallel arrays (the scikit-learn ``_tree`` layout):
``feature``, ``threshold``, ``left``, ``right`` (-1 at leaves) and
``leaf_id`` (compact leaf index, -1 at internal nodes). A sample goes left
when ``x[feature] < threshold`` (Eq. 1).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ..primitives.rng import rand_below
from ._criterion import clear_node_counts
from ._keys import fill_local_keys, fill_local_ranks, float_keys, no_codes, sample_keys, split_keys
from ._split import (
    TALLY_FILL_READ,
    TALLY_FILL_WRITE,
    TALLY_GATHER,
    TALLY_L,
    TALLY_PART_BYTES,
    TALLY_PART_LINES,
    TALLY_R,
    TALLY_SEARCHES,
    _workspace,
    count_lines,
    search_node,
    soft_rows,
    tag_entries,
    target_layer,
)


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


def grow_tree(X, R, mode_rank, mode_val, Rh, high, sp_start, sp_len, sp_idx, samples, n_layers, ly_indptr, ly_indices,
              layer_ptr, has_layer, soft_pos, soft_neg, use_soft, ignore_untagged, min_leaf, max_features, rng_state,
              train_leaf, split_sample=0, local_size=0, codes=None, tally=None):
    """``_grow_tree`` with its last arguments optional: ``codes`` (the rank codes (S, S_ptr,
    S_ent) of ``sample_keys``) None, the local subtrees take X's float keys; ``tally`` None,
    nothing counted."""
    if codes is None:
        codes = no_codes(X.shape[1])
    if tally is None:
        tally = np.zeros(0, np.int64)
    return _grow_tree(X, R, mode_rank, mode_val, Rh, high, sp_start, sp_len, sp_idx, samples, n_layers, ly_indptr,
                      ly_indices, layer_ptr, has_layer, soft_pos, soft_neg, use_soft, ignore_untagged, min_leaf,
                      max_features, rng_state, train_leaf, split_sample, local_size, *codes, tally)


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _grow_tree(X, R, mode_rank, mode_val, Rh, high, sp_start, sp_len, sp_idx, samples, n_layers, ly_indptr, ly_indices,
               layer_ptr, has_layer, soft_pos, soft_neg, use_soft, ignore_untagged, min_leaf, max_features, rng_state,
               train_leaf, split_sample, local_size, S, S_ptr, S_ent, tally):
    """Grow one HML-tree depth-first on ``samples`` (permuted in place).

    ``R``, ``mode_rank``, ``mode_val``, ``Rh``, ``high``, ``sp_start``, ``sp_len``, ``sp_idx`` =
    split_keys(X); R is feature-major: a node gathers one feature's integer keys from one
    contiguous row, or a sparse feature's from its list of off-mode samples when that is
    shorter (``search_node``), and radix-sorts those that differ from the feature's mode.
    The lists serve only when ``samples`` ascend with no duplicate (not on a bootstrap
    draw), and never in a local subtree.

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
    subtree, hence the tree, is the same whatever ``local_size``. With the rank codes
    ``S``, ``S_ptr``, ``S_ent`` (``sample_keys``: dense, sparse, or none: S of 0 rows and
    S_ptr empty), the block holds the uint16 ranks themselves (``fill_local_ranks``): half
    the bytes held, half or less read, the same order and ties, the same tree.

    ``tally``: the tree's memory counters (``_split.TALLY_SIZE`` entries, added to), or a
    0-long array.
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
    no_lists = np.full(d, -1, np.int64)
    spos = np.zeros(X.shape[0], np.int64)
    ascending = True
    for a in range(1, n):
        ascending = ascending and samples[a] > samples[a - 1]
    lists = sp_len if ascending else no_lists
    sub = np.empty(split_sample if 0 < split_sample < n else 0, np.int64)
    # the keys of the current local subtree (see the docstring): L[f, j] of its j-th sample,
    # loc[a] the row of L of samples[a] for a in [lo_start, lo_end)
    ranks_local = S.shape[0] > 0 or S_ptr.shape[0] > 0
    L = np.empty((d, local_size), S.dtype)
    loc = np.empty(n if local_size > 0 else 0, np.int64)
    mode_key = mode_rank if ranks_local else float_keys(mode_val)
    counting = tally.shape[0] > 0
    t_R = tally[TALLY_R:TALLY_R + TALLY_GATHER]
    t_L = tally[TALLY_L:TALLY_L + TALLY_GATHER]
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
            if ranks_local:
                fill_local_ranks(S, S_ptr, S_ent, mode_rank, samples, start, end, L, loc)
            else:
                fill_local_keys(X, samples, start, end, L, loc)
            if counting:
                if S_ptr.shape[0] > 0:  # each sample's entries and its two pointers
                    for a in range(start, end):
                        tally[TALLY_FILL_READ] += (S_ptr[samples[a] + 1] - S_ptr[samples[a]]) * S_ent.itemsize + 16
                else:
                    tally[TALLY_FILL_READ] += N * d * (S.itemsize if ranks_local else X.itemsize)
                tally[TALLY_FILL_WRITE] += N * d * L.itemsize
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
            k, soft_mode, imp, sumS, sumsq, n_lab, K = target_layer(src, s0, s1, n_layers, ly_indptr, ly_indices,
                                                                    layer_ptr, has_layer, soft_pos, soft_neg,
                                                                    use_soft, ignore_untagged, ws.cS, ws.PS, ws.MS,
                                                                    ws.nptr, ws.ntag, ws.nrow, ws.slots, ws.nsoft)
            if k >= 0:
                if counting:
                    tally[TALLY_SEARCHES] += 1
                if local:  # one call site per key array: R and L may differ in dtype
                    best_f, best_t, _, best_rank, n_found = search_node(
                        X, L, Rh, whole, mode_key, mode_val, sp_start, no_lists, sp_idx, spos, src, loc, s0, s1,
                        features, True, n_known, max_features,
                        rng_state, ws.keys, ws.order, ws.tmp, ws.cnt, ws.cpos, ws.pos, ws.skey, k, soft_mode, imp,
                        sumS, sumsq, n_lab, layer_ptr, ws.nptr, ws.ntag, ws.nrow, ws.slots, ws.nsoft, K, ws.cS, ws.PS,
                        ws.MS, ws.W, ws.c_swept, ws.P_swept, ws.M_swept, ws.T, ws.wstep, ws.wmiss, min_leaf, t_L)
                else:
                    best_f, best_t, _, best_rank, n_found = search_node(
                        X, R, Rh, high, mode_rank, mode_val, sp_start, lists, sp_idx, spos, src, src, s0, s1,
                        features, True, n_known, max_features,
                        rng_state, ws.keys, ws.order, ws.tmp, ws.cnt, ws.cpos, ws.pos, ws.skey, k, soft_mode, imp,
                        sumS, sumsq, n_lab, layer_ptr, ws.nptr, ws.ntag, ws.nrow, ws.slots, ws.nsoft, K, ws.cS, ws.PS,
                        ws.MS, ws.W, ws.c_swept, ws.P_swept, ws.M_swept, ws.T, ws.wstep, ws.wmiss, min_leaf, t_R)
                clear_node_counts(s1 - s0, ws.nptr, ws.ntag, ws.cS)
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
        if counting:  # the key each sample is sent by: L's, X's (a subsampled node) or R's
            if local:
                w, base, stride, idx = L.itemsize, best_f * local_size * L.itemsize, L.itemsize, loc
            elif by_value:
                w, base, stride, idx = X.itemsize, best_f * X.itemsize, d * X.itemsize, samples
            else:
                w, base, stride, idx = R.itemsize, best_f * R.shape[1] * R.itemsize, R.itemsize, samples
            tally[TALLY_PART_BYTES] += N * w
            tally[TALLY_PART_LINES] += count_lines(idx, start, N, base, stride)
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
# same whatever the size. A block of 2-byte rank codes (``sample_keys``) holds twice the samples
# in the same bytes, and at least 2 x LOCAL_SAMPLES: at 17,523 x 4096 blocks of 1024 samples (8 MiB,
# as the float keys' 512) took the gathers from R on nodes of 513 to 1024 samples off the
# memory (``benchmarks.traffic``: 287 -> 225 MB per tree read from the arrays larger than a
# cache) and the trees 0.54 -> 0.48 s of CPU (medians of 6 interleaved runs, 2 trees each, a
# loaded machine: spreads 0.43-0.60 and 0.45-0.60).
LOCAL_BYTES = 1 << 20
LOCAL_SAMPLES = 512
LOCAL_BYTES_MAX = 8 << 20
# Local subtrees only from LOCAL_SPREAD x local_size samples on: a block pays when its samples lie
# far apart in each n-long row of R, so that every key a node gathers there is a cache line of its
# own; on fewer samples a row's line holds several of the block's keys, and copying every
# feature of the block cost more than it saved. One thread, fits with and without blocks, alternating
# (local_size 512): Corel5k 4500 x 499 1.49 against 1.29 s (50 trees), trecvid 2379 x 1000 0.67-0.81
# against 0.53-0.56 s (30), nuswide 5,000 x 4096 2.15-2.19 against 1.6-1.7 s (10); the blocks won
# from 15,000 x 512 on (0.91-0.95 against 1.34 s, 6 trees; 40,000 x 512 1.84-1.97 against 2.30-2.38)
# and were even at 17,523 and 40,000 x 4096.
LOCAL_SPREAD = 16


def local_size_for(d, n=None, key_bytes=4):
    """The ``local_size`` of ``grow_tree`` for d features (see ``LOCAL_BYTES``), n rows of X
    (see ``LOCAL_SPREAD``; None: any n) and keys of ``key_bytes`` (4: X's float keys, 2: rank
    codes, whose blocks hold twice the samples, halved down to n's spread but not below the
    float keys' size); 0 (no local subtrees) when that is fewer than 16 samples or n is below
    ``LOCAL_SPREAD`` times it."""
    per_sample = key_bytes * max(int(d), 1)
    least = LOCAL_SAMPLES * 4 // key_bytes
    size = max(LOCAL_BYTES // per_sample, min(least, LOCAL_BYTES_MAX // per_sample))
    floor = local_size_for(d, None) if key_bytes < 4 else size
    while n is not None and size > floor and n < LOCAL_SPREAD * size:
        size //= 2
    if size < 16 or (n is not None and n < LOCAL_SPREAD * size):
        return 0
    return size


def grow_one(X, keys, tag_args, boot, state, min_leaf, max_features, split_sample=None, local_size=None,
             tally=None):
    """One tree of a fit, as every path grows it (local threads, a Dask worker):
    on all samples, or on the sorted bootstrap draw ``boot``, from the one-element
    seed ``state`` (copied); ``keys``: ``split_keys(X)``, or ``fit_keys(X)`` (the same
    and the sample-major ranks ``S``); ``split_sample``, ``local_size`` and ``tally`` as in
    ``grow_tree`` (``split_sample`` None: exact; ``local_size`` None:
    ``local_size_for(d, n)``). The tree is the same whatever ``local_size`` and ``S``.
    Returns (tree arrays, train leaf (n,) int32, -1 outside ``boot``)."""
    n = X.shape[0]
    codes = tuple(keys[8:11]) if len(keys) > 8 and (keys[8].shape[0] > 0 or keys[9].shape[0] > 0) else None
    if local_size is None:
        local_size = local_size_for(X.shape[1], n, 4 if codes is None else 2)
    samples = (np.arange(n) if boot is None else boot).astype(np.int64)
    leaf = np.full(n, -1, np.int32)
    out = grow_tree(X, *keys[:8], samples, *tag_args, min_leaf, max_features, state.copy(), leaf, int(split_sample or 0),
                    int(local_size), codes, tally)
    return out, leaf


def fit_keys(X):
    """``split_keys(X)`` and the rank codes of ``sample_keys`` (S, S_ptr, S_ent) when the fit
    grows local subtrees (``local_size_for``) and every feature's ranks fit in 16 bits, else
    none: they cost at most n x d x 2 bytes more, held by the fit beside R."""
    keys = split_keys(X)
    n, d = X.shape
    if local_size_for(d, n, 2) == 0:
        return (*keys, *no_codes(d))
    return (*keys, *sample_keys(keys[0], keys[3], keys[1]))


def _split_keys(X, *tag_args):
    return fit_keys(X)


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
