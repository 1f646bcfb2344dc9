"""The forest's work on a Dask cluster (opt-in, ``dask.distributed``).

Local threads stay the default. A fit moves onto a cluster through joblib's dask
backend, the way scikit-learn's estimators do::

    from dask.distributed import Client, LocalCluster
    from joblib import parallel_config

    client = Client(LocalCluster(n_workers=2, threads_per_worker=1))
    with parallel_config(backend="dask"):
        labels = HMLClustering(30, random_state=0).fit_predict(X, Y, layers)

Under that backend:

- :func:`grow_trees`: the training data (X and the tag arrays) go to every worker once
  (:func:`place`: one scattered key per worker, every task pinned to the worker holding
  the copy it reads, :func:`map_pinned`); each worker derives the split keys from X
  once and grows the trees it is given, each from its own seed
  (:func:`hmlkit.primitives.rng.tree_seeds`), so the forest is leaf for leaf the one a local
  fit grows. Only each tree's arrays and its leaf ids (n int32) come back.
- :func:`apply`: a fitted forest routes new samples chunk by chunk on the workers.
- :func:`leaf_knn_rows`: the leaf k-NN (``hmlkit.affinity.leaf_knn``) computed for
  blocks of rows on the workers, the leaf matrix sent to each worker once.
"""
from __future__ import annotations

import threading
import uuid

import numba
import numpy as np


def active_client():
    """The ``distributed.Client`` of joblib's active dask backend, or None (local work)."""
    try:
        from joblib.parallel import get_active_backend
    except ImportError:  # pragma: no cover - joblib is a dependency
        return None
    backend, _ = get_active_backend()
    if type(backend).__name__ != "DaskDistributedBackend":
        return None
    return getattr(backend, "client", None)


class Shared:
    """Arrays every task on a worker reads, sent to each worker once.

    :attr:`received` counts, per process, how many times an instance was unpickled:
    on a worker, how many copies of the data it was sent (the tests check it is one
    per fit). :meth:`derived` computes a value from the arrays once per worker (the
    forest's split keys) and keeps it with them, so it is freed when they are."""

    received = 0

    def __init__(self, *arrays):
        self.arrays = arrays
        self._derived = {}
        self._lock = threading.Lock()

    def __reduce__(self):
        return _unpickle_shared, self.arrays

    def derived(self, name, make):
        with self._lock:
            if name not in self._derived:
                self._derived[name] = make(*self.arrays)
            return self._derived[name]


def _unpickle_shared(*arrays):
    Shared.received += 1
    return Shared(*arrays)


def received_count(dask_worker=None):
    """How many :class:`Shared` payloads this process has received (run on workers with
    ``client.run(received_count)``)."""
    return Shared.received


def place(client, *arrays):
    """One copy of ``arrays`` (a :class:`Shared`) on every worker of ``client``, each under a
    key of its own: ``{worker address: future}``.

    Why not ``scatter(..., broadcast=True)``: that makes replicas of one key, and the
    scheduler's active memory manager drops any replica no task on its worker waits for
    (between the scatter and the first submit, or once a worker's queue runs dry); a task
    later sent there fetches the data again. A key held by one worker is never dropped."""
    payload = Shared(*arrays)
    return {w: client.scatter([payload], workers=[w], hash=False)[0] for w in sorted(client.nthreads())}


@numba.njit(parallel=True, cache=True)
def _parallel_sum(n):
    s = 0
    for i in numba.prange(n):
        s += i
    return s


def _threading_layer(dask_worker=None):
    """The numba threading layer of this process (a tiny parallel call starts one if none ran)."""
    _parallel_sum(4)
    return numba.threading_layer()


def _concurrent_tasks(client, workers):
    """How many calls each worker may run at once: its thread count, plus one to hide the
    round trip, or one at a time where numba's threading layer is "workqueue" (no TBB or
    OpenMP, e.g. a pip install on macOS), which aborts the process when two threads enter
    parallel code at once (a worker with several threads died, and the fit with it)."""
    nthreads = client.nthreads()
    multi = [w for w in workers if nthreads.get(w, 1) > 1]
    layers = client.run(_threading_layer, workers=multi) if multi else {}
    return {w: 1 if layers.get(w) == "workqueue" else nthreads.get(w, 1) + 1 for w in workers}


def map_pinned(client, placed, fn, n_calls, args=None, name="hmlkit", progress=None):
    """``[fn(placed copy, *args(w, i)) for i in range(n_calls)]`` on the workers of ``placed``
    (from :func:`place`), results in call order, each released as soon as it arrives.

    Each call is pinned to the worker whose copy it reads, so neither the scheduler nor work
    stealing moves it to a worker without the data. The load still balances as a queue's
    does: a worker holds its thread count plus one calls, and gets the next call as soon as
    one of its own finishes. ``args(w, i)``: the call's other arguments (may scatter to
    ``w``); ``progress(1)`` per result. A worker lost mid-way fails the run with an error."""
    from distributed import as_completed

    token = uuid.uuid4().hex[:12]
    workers = list(placed)
    if not workers:
        raise RuntimeError("the Dask cluster has no workers")
    out = [None] * n_calls
    live = {}  # key -> (call index, worker, future)
    next_call = 0

    def submit(w):
        nonlocal next_call
        i, next_call = next_call, next_call + 1
        extra = () if args is None else args(w, i)
        fut = client.submit(fn, placed[w], *extra, key=f"{name}-{i}-{token}", workers=[w],
                            allow_other_workers=False, pure=False)
        live[fut.key] = (i, w, fut)
        return fut

    slots = _concurrent_tasks(client, workers)
    first = [submit(w) for r in range(max(slots.values())) for w in workers
             if r < slots[w] and next_call < n_calls]
    try:
        queue = as_completed(first, with_results=True)
        for fut, result in queue:
            i, w, _ = live.pop(fut.key)
            if fut.status != "finished" and client.status != "running":
                raise RuntimeError("the Dask client was closed during the run")
            if fut.status != "finished":  # as_completed yields a cancelled task's error, not raises it
                raise RuntimeError(f"Dask task {fut.key} was {fut.status}: a worker left the cluster during the "
                                   f"run, and the copy of the data it held cannot be recomputed; run it again")
            out[i] = result
            fut.release()
            if progress is not None:
                progress(1)
            if next_call < n_calls:
                queue.add(submit(w))
    finally:
        if client.status == "running":  # a closed client cannot cancel, and its error hid the cause
            client.cancel([f for _, _, f in live.values()])
    return out


def release(placed):
    for fut in placed.values():
        fut.release()


# -- growing trees -----------------------------------------------------------
def _split_keys(X, *tag_args):
    from .forest._keys import feature_keys

    return feature_keys(X)


def _grow_on_worker(shared, state, boot, min_leaf, max_features, split_sample):
    from .forest._builder import grow_one

    X, tag_args = shared.arrays[0], shared.arrays[1:]
    return grow_one(X, shared.derived("keys", _split_keys), tag_args, boot, state, min_leaf, max_features,
                    split_sample)


def grow_trees(client, X, tag_args, states, boots, min_leaf, max_features, split_sample=None, progress=None):
    """Grow one tree per seed in ``states`` on the cluster of ``client``: the same list of
    ``(tree arrays, train leaf)`` as the local loop (``_interrupt.grow_trees``)."""
    placed = place(client, X, *tag_args)
    try:
        return map_pinned(client, placed, _grow_on_worker, len(states),
                          args=lambda w, t: (states[t:t + 1].copy(), None if boots is None else boots[t],
                                             min_leaf, max_features, split_sample),
                          name="hmlforest-tree", progress=progress)
    finally:
        release(placed)


# -- routing samples through a fitted forest ---------------------------------
def _chunks(client, n):
    """Row blocks for ``n`` rows: a few per worker thread, so the work balances."""
    threads = sum(client.nthreads().values()) or 1
    n_blocks = max(1, min(n, 4 * threads))
    edges = np.linspace(0, n, n_blocks + 1).astype(np.int64)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def _route_table(*forest_arrays):
    from .forest._builder import route_table

    return route_table(*forest_arrays)


def _apply_on_worker(forest, X_block):
    from .forest._builder import apply_table

    # the packed node table is built once per worker, not once per block
    return apply_table(X_block, forest.arrays[0], *forest.derived("route", _route_table))


def apply(client, forest_arrays, X):
    """``apply_flat(X, *forest_arrays)`` with X cut in row blocks routed on the workers
    (the forest sent to each worker once, each block to the one worker that routes it)."""
    placed = place(client, *forest_arrays)
    bounds = _chunks(client, X.shape[0])
    try:
        parts = map_pinned(client, placed, _apply_on_worker, len(bounds), name="hmlforest-apply",
                           args=lambda w, i: client.scatter([X[slice(*bounds[i])]], workers=[w], hash=False))
    finally:
        release(placed)
    return np.concatenate(parts, axis=0)


# -- leaf k-NN ------------------------------------------------------------------
def _knn_on_worker(shared, a, b, k):
    from .affinity import _kernels as K

    leaves, members, offsets = shared.arrays
    q = leaves[a:b]
    return K.knn_rows(q, members, offsets, leaves.shape[0], np.arange(a, b, dtype=np.int64), k,
                      K.chunk_bounds(b - a))


def leaf_knn_rows(client, leaves, members, offsets, k):
    """Every training sample's ``k`` leaf neighbours (``affinity.leaf_knn`` without
    queries), computed for row blocks on the workers: ``(idx, w)``."""
    placed = place(client, leaves, members, offsets)
    bounds = _chunks(client, leaves.shape[0])
    try:
        parts = map_pinned(client, placed, _knn_on_worker, len(bounds), name="hmlkit-leaf-knn",
                           args=lambda w, i: (*bounds[i], k))
    finally:
        release(placed)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
