"""Ctrl-C during a forest fit.

A tree is grown by one numba ``nogil`` call that Python cannot interrupt. Left to
Python's default handler, a SIGINT then either surfaces only after every tree is
grown (threads: the main thread waits on the futures of all trees) or, with one job,
as ``SystemError: CPUDispatcher(...) returned a result with an exception set`` (the
handler raises while numba boxes the result). :class:`StopOnInterrupt` replaces the
handler during the fit with one that only sets a flag; the fit checks it between
trees and raises a plain ``KeyboardInterrupt`` within one tree's time.

A fit run off the main thread has no SIGINT: :func:`stop_on` names an event that
stops it the same way (how a sweep run in a thread is cancelled, :mod:`hmlkit.sweep`).
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


def grow_trees(grow, n_trees, n_jobs, progress=None):
    """``[grow(t) for t in range(n_trees)]``, on ``n_jobs`` threads (``grow`` releases the
    GIL in its numba call), each tree with its own seed so the order of completion does
    not matter; ``progress(k)`` after k more trees. Ctrl-C stops between trees with a
    plain ``KeyboardInterrupt`` (:class:`StopOnInterrupt`); trees not yet started are not
    grown. The tree loop of every forest of the kit (HMLForest, CC-Forest)."""
    stop = StopOnInterrupt()

    def guarded(t):
        return None if stop.stopped else grow(t)

    with stop:
        if n_jobs == 1:
            results = []
            for t in range(n_trees):
                stop.check()
                results.append(guarded(t))
                if progress is not None:
                    progress(1)
            stop.check()
            return results
        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            return stop.results([pool.submit(guarded, t) for t in range(n_trees)], progress=progress)
