"""Routing samples through a fitted forest (``apply``): the nodes packed in one table, blocks
of samples walked through each tree in lockstep (numba), by an executor (``apply_forest``)."""
from __future__ import annotations

import numba as nb
import numpy as np

from ..primitives.counting import members_by_leaf


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
