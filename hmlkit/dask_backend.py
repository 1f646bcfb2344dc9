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
  (``Client.scatter(..., broadcast=True)``); each worker derives the split keys from X
  once and grows the trees it is given, each from its own seed
  (:func:`hmlkit.forest._rng.tree_seeds`), so the forest is leaf for leaf the one a local
  fit grows. Only each tree's arrays and its leaf ids (n int32) come back.
- :func:`apply`: a fitted forest routes new samples chunk by chunk on the workers.
- :func:`leaf_knn_rows`: the leaf k-NN (``hmlkit.affinity.leaf_knn``) computed for
  blocks of rows on the workers, the leaf matrix sent to each worker once.
"""
from __future__ import annotations

import threading
import uuid

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


def _broadcast(client, *arrays):
    [fut] = client.scatter([Shared(*arrays)], broadcast=True, hash=False)
    return fut


def _gather_in_order(client, futures, progress=None):
    """Results of ``futures`` in submission order, each released as soon as it arrives
    (workers do not hold them all); ``progress(1)`` per result."""
    from distributed import as_completed

    index = {f.key: i for i, f in enumerate(futures)}
    out = [None] * len(futures)
    try:
        for fut, result in as_completed(futures, with_results=True):
            out[index[fut.key]] = result
            fut.release()
            if progress is not None:
                progress(1)
    finally:
        client.cancel([f for f in futures if f.status != "finished"])
    return out


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
    shared = _broadcast(client, X, *tag_args)
    token = uuid.uuid4().hex[:12]
    try:
        futures = [client.submit(_grow_on_worker, shared, states[t:t + 1].copy(),
                                 None if boots is None else boots[t], min_leaf, max_features, split_sample,
                                 key=f"hmlforest-tree-{t}-{token}", pure=False)
                   for t in range(len(states))]
        return _gather_in_order(client, futures, progress)
    finally:
        shared.release()


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
    (the forest sent to each worker once, each block to one worker)."""
    forest = _broadcast(client, *forest_arrays)
    try:
        blocks = [X[a:b] for a, b in _chunks(client, X.shape[0])]
        futures = [client.submit(_apply_on_worker, forest, blk, pure=False) for blk in client.scatter(blocks)]
        return np.concatenate(_gather_in_order(client, futures), axis=0)
    finally:
        forest.release()


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
    shared = _broadcast(client, leaves, members, offsets)
    try:
        futures = [client.submit(_knn_on_worker, shared, a, b, k, pure=False)
                   for a, b in _chunks(client, leaves.shape[0])]
        parts = _gather_in_order(client, futures)
    finally:
        shared.release()
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
