"""The kit's parallel loops on a Dask cluster (opt-in, ``dask.distributed``).

Local threads stay the default. A fit moves onto a cluster through joblib's dask
backend, the way scikit-learn's estimators do::

    from dask.distributed import Client, LocalCluster
    from joblib import parallel_config

    client = Client(LocalCluster(n_workers=2, threads_per_worker=1))
    with parallel_config(backend="dask"):
        labels = HMLClustering(30, random_state=0).fit_predict(X, Y, layers)

Under that backend :func:`hmlkit.executors.executor_for` returns a
:class:`hmlkit.executors.DaskExecutor`, and the loops that run on this machine's threads
otherwise run on the workers: the forest's tree loop (``hmlkit.forest``: each worker derives
the split keys from X once and grows the trees it is given, each from its own seed, so the
forest is leaf for leaf the one a local fit grows; only each tree's arrays and its leaf ids
come back), the routing of new samples through a fitted forest, and the leaf k-NN
(``hmlkit.affinity.leaf_knn``). The arrays every call reads go to each worker once
(:func:`place`: one scattered key per worker, every task pinned to the worker holding the
copy it reads, :func:`map_pinned`).

This module holds the Dask mechanics only; it knows nothing of the kit's executors, forest or
affinity: they pass it the payload to place and the function to run.
"""
from __future__ import annotations

import uuid

import numba


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


def place(client, payload):
    """One copy of ``payload`` (the kit sends a :class:`hmlkit.executors.Shared`) on every
    worker of ``client``, each under a key of its own: ``{worker address: future}``.

    Why not ``scatter(..., broadcast=True)``: that makes replicas of one key, and the
    scheduler's active memory manager drops any replica no task on its worker waits for
    (between the scatter and the first submit, or once a worker's queue runs dry); a task
    later sent there fetches the data again. A key held by one worker is never dropped."""
    if client.status != "running":  # distributed's own error here names an attribute of None
        raise RuntimeError(f"the Dask client was closed (status {client.status!r}) before the run; "
                           f"start a new Client for joblib's dask backend")
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
