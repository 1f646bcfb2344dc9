"""Where the kit's parallel loops run: this machine's threads, or a Dask cluster.

Each loop is written once, as ``executor.map(fn, arrays, n_calls, args)``: ``fn(shared,
*args(i))`` for every call i, ``shared`` holding the arrays every call reads (the forest's
tree loop, its routing of samples, the leaf k-NN). :class:`ThreadExecutor` runs the calls
on local threads; :class:`hmlkit.dask_backend.DaskExecutor` on the workers of joblib's
dask backend (opt-in); :func:`executor_for` picks one.

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

from .dask_backend import DaskExecutor, Shared, active_client


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
        executor's (:meth:`hmlkit.dask_backend.DaskExecutor.map`)."""
        shared = Shared(*arrays)
        return map_threads(lambda i: fn(shared, *args(i)), n_calls, self.n_jobs, progress)


def executor_for(n_jobs=1):
    """The executor of the kit's parallel loops: the workers of joblib's active dask backend
    (:class:`hmlkit.dask_backend.DaskExecutor`, opt-in), else ``n_jobs`` local threads."""
    client = active_client()
    if client is not None:
        return DaskExecutor(client)
    return ThreadExecutor(n_jobs)
