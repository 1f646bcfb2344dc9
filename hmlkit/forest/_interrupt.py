"""Ctrl-C during a forest fit.

A tree is grown by one numba ``nogil`` call that Python cannot interrupt. Left to
Python's default handler, a SIGINT then either surfaces only after every tree is
grown (threads: the main thread waits on the futures of all trees) or, with one job,
as ``SystemError: CPUDispatcher(...) returned a result with an exception set`` (the
handler raises while numba boxes the result). :class:`StopOnInterrupt` replaces the
handler during the fit with one that only sets a flag; the fit checks it between
trees and raises a plain ``KeyboardInterrupt`` within one tree's time.
"""
from __future__ import annotations

import signal
import threading
from concurrent.futures import FIRST_COMPLETED, wait


class StopOnInterrupt:
    """Context manager: SIGINT sets :attr:`stopped` (main thread only; elsewhere the
    handler is left alone and :meth:`check` never raises). :meth:`check` raises
    ``KeyboardInterrupt`` once it is set. A second Ctrl-C while stopping raises at once."""

    def __init__(self):
        self.event = threading.Event()
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
        return self.event.is_set()

    def check(self):
        if self.event.is_set():
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
