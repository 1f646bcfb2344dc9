"""Where the kit's parallel loops run: this machine's threads, or a Dask cluster.

Each loop is written once, as ``executor.map(fn, arrays, n_calls, args)``: ``fn(shared,
*args(i))`` for every call i, ``shared`` holding the arrays every call reads (the forest's
tree loop, its routing of samples, the leaf k-NN; a :class:`Shared`). :class:`ThreadExecutor`
runs the calls on local threads; :class:`DaskExecutor` on the workers of joblib's dask
backend (opt-in, through :mod:`hmlkit.dask_backend`); :func:`executor_for` picks one.

Ctrl-C. A tree is grown by one numba ``nogil`` call that Python cannot interrupt. Left to
Python's default handler, a SIGINT then either surfaces only after every tree is
grown (threads: the main thread waits on the futures of all trees) or, with one job,
as ``SystemError: CPUDispatcher(...) returned a result with an exception set`` (the
handler raises while numba boxes the result). :class:`StopOnInterrupt` replaces the
handler during the loop with one that only sets a flag; the loop checks it between
calls and raises a plain ``KeyboardInterrupt`` within one call's time.

A loop run off the main thread has no SIGINT: :func:`stop_on` names an event that
stops it the same way (how a sweep run in a thread is cancelled, :mod:`hmlkit.explore.engine`).
"""
from __future__ import annotations

import signal
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import contextmanager

import numpy as np

from .dask_backend import active_client, map_pinned, place, release

_stop = threading.local()  # .event: the stop_on event of this thread's fits, if any


@contextmanager
def stop_on(event):
    """Within the block, a forest fit in this thread also stops between trees once
    ``event`` (a ``threading.Event``, set from any thread) is set, as on Ctrl-C."""
    saved = getattr(_stop, "event", None)
    _stop.event = event
    try:
        yield event
    finally:
        _stop.event = saved


class Shared:
    """Arrays every call of a loop reads: shared in place by local threads
    (:class:`ThreadExecutor`), or sent to each worker once (:class:`DaskExecutor`).

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


class StopOnInterrupt:
    """Context manager: SIGINT sets :attr:`stopped` (main thread only; elsewhere the
    handler is left alone and :meth:`check` never raises). :meth:`check` raises
    ``KeyboardInterrupt`` once it is set. A second Ctrl-C while stopping raises at once."""

    def __init__(self):
        self.event = threading.Event()
        self.external = getattr(_stop, "event", None)  # stop_on's, read in the fitting thread
        self.saved = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            try:
                self.saved = signal.signal(signal.SIGINT, self._handler)
            except ValueError:  # signals unavailable (e.g. embedded interpreter)
                self.saved = None
        return self

    def _handler(self, signum, frame):
        if self.event.is_set():
            raise KeyboardInterrupt
        self.event.set()

    @property
    def stopped(self):
        return self.event.is_set() or (self.external is not None and self.external.is_set())

    def check(self):
        if self.stopped:
            raise KeyboardInterrupt

    def results(self, futures, poll=0.1, progress=None):
        """Results of ``futures`` in order, checking for a stop every ``poll`` seconds
        (``progress(k)`` after k more are done); on a stop, cancels those not started
        and raises ``KeyboardInterrupt`` once the running ones (one tree each) have
        returned."""
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, timeout=poll, return_when=FIRST_COMPLETED)
                if progress is not None and done:
                    progress(len(done))
                self.check()
        except BaseException:
            for f in futures:
                f.cancel()
            wait(futures)
            raise
        return [f.result() for f in futures]

    def __exit__(self, exc_type, exc, tb):
        if self.saved is not None:
            signal.signal(signal.SIGINT, self.saved)
        if exc_type is None:
            self.check()  # a Ctrl-C after the last check is not lost
        return False


def map_threads(task, n_calls, n_jobs, progress=None):
    """``[task(i) for i in range(n_calls)]`` on ``n_jobs`` threads (``task`` releases the GIL in
    its numba call), results in call order; ``progress(k)`` after k more calls. Ctrl-C stops
    between calls with a plain ``KeyboardInterrupt`` (:class:`StopOnInterrupt`); calls not yet
    started are not run."""
    stop = StopOnInterrupt()

    def guarded(i):
        return None if stop.stopped else task(i)

    with stop:
        if n_jobs == 1:
            results = []
            for i in range(n_calls):
                stop.check()
                results.append(guarded(i))
                if progress is not None:
                    progress(1)
            stop.check()
            return results
        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            return stop.results([pool.submit(guarded, i) for i in range(n_calls)], progress=progress)


class ThreadExecutor:
    """This machine's threads: :meth:`map` on ``n_jobs`` threads with Ctrl-C between calls
    (:func:`map_threads`); the arrays are shared in place, not copied. One row block: the
    kernels a block runs are parallel themselves."""

    def __init__(self, n_jobs=1):
        self.n_jobs = n_jobs

    def row_blocks(self, n):
        return [(0, n)]

    def map(self, fn, arrays, n_calls, args, name="hmlkit", progress=None, scatter=False):
        """``[fn(shared, *args(i)) for i in range(n_calls)]``, ``shared`` = ``Shared(*arrays)``
        (its derived values made once for all calls); ``name`` and ``scatter`` are the Dask
        executor's (:meth:`DaskExecutor.map`)."""
        shared = Shared(*arrays)
        return map_threads(lambda i: fn(shared, *args(i)), n_calls, self.n_jobs, progress)


class DaskExecutor:
    """The workers of ``client``, with the interface of :class:`ThreadExecutor`: :meth:`map`
    sends the arrays every call reads to each worker once
    (:func:`hmlkit.dask_backend.place`) and runs the calls pinned to the copies
    (:func:`hmlkit.dask_backend.map_pinned`)."""

    def __init__(self, client):
        self.client = client

    def row_blocks(self, n):
        """Row blocks ``(start, stop)`` for ``n`` rows: a few per worker thread, so the work balances."""
        threads = sum(self.client.nthreads().values()) or 1
        n_blocks = max(1, min(n, 4 * threads))
        edges = np.linspace(0, n, n_blocks + 1).astype(np.int64)
        return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a] or [(0, n)]

    def map(self, fn, arrays, n_calls, args, name="hmlkit", progress=None, scatter=False):
        """``[fn(shared, *args(i)) for i in range(n_calls)]`` on the workers, ``shared`` the worker's
        copy of ``Shared(*arrays)``, results in call order; ``progress(1)`` per result.
        ``scatter``: each call's ``args(i)`` (row blocks no other call reads) are sent to the
        worker that runs it, rather than with the task."""
        client = self.client
        if scatter:
            def extra(w, i):
                return client.scatter(list(args(i)), workers=[w], hash=False)
        else:
            def extra(w, i):
                return args(i)
        placed = place(client, Shared(*arrays))
        try:
            return map_pinned(client, placed, fn, n_calls, args=extra, name=name, progress=progress)
        finally:
            release(placed)


def executor_for(n_jobs=1):
    """The executor of the kit's parallel loops: the workers of joblib's active dask backend
    (:class:`DaskExecutor`, opt-in), else ``n_jobs`` local threads."""
    client = active_client()
    if client is not None:
        return DaskExecutor(client)
    return ThreadExecutor(n_jobs)
