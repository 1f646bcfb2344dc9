"""Where the study runner sends the studies' cells (:mod:`hmlkit.studies.cells`).

``local`` (the default): each study runs its cells on its own local processes, as many as
its share of the cores (the runner's ``n_jobs``).

``--local-cluster N``: the runner starts a Dask ``LocalCluster`` of ``N`` single-threaded
worker processes for the whole run, and every study's cells go to it (so the cells of all
running studies share its workers). Its dashboard's address is printed.

``--scheduler ADDRESS`` (or ``DASK_SCHEDULER_ADDRESS``): an existing scheduler, e.g. one
started with dask-jobqueue on a SLURM / PBS / SGE / LSF cluster (``docs/cluster.md``). The
runner checks it can reach it and that its workers run this kit before any study starts.

The kernels learn the address through ``HMLKIT_SCHEDULER``; the backend is not part of a
study's key, since the numbers are the same on every backend.
"""
from __future__ import annotations

import os

from .cells import SCHEDULER_ENV, CellError, connect


class Backend:
    """The cells' backend of one run: :attr:`env` for the kernels, :attr:`describe` for the
    log; :meth:`close` stops what the runner started."""

    def __init__(self, env=None, describe="local processes", cluster=None, workers=None):
        self.env, self.describe, self._cluster, self.workers = dict(env or {}), describe, cluster, workers

    def close(self):
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def check_workers(n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"local_cluster (--local-cluster) must be a number of worker processes >= 1, got {n!r}")
    return n


def start(local_cluster=None, scheduler=None):
    """The :class:`Backend` for ``local_cluster`` workers, or the scheduler at ``scheduler``
    (default: ``DASK_SCHEDULER_ADDRESS`` when set), or local processes."""
    if local_cluster is not None and scheduler is not None:
        raise ValueError("give --local-cluster or --scheduler, not both")
    if scheduler is None and local_cluster is None:
        scheduler = os.environ.get("DASK_SCHEDULER_ADDRESS", "").strip() or None
    if local_cluster is not None:
        n = check_workers(local_cluster)
        try:
            from distributed import LocalCluster
        except ImportError as exc:
            raise CellError("--local-cluster needs dask.distributed: pip install 'hmlkit[dask]'") from exc
        # one thread per worker (the cells are single-threaded); no memory limit of Dask's
        # own: a study's data are what they are, and the OS says when they do not fit
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, memory_limit=0,
                               dashboard_address=":0")
        return Backend({SCHEDULER_ENV: cluster.scheduler_address},
                       f"a local Dask cluster of {n} single-threaded workers (dashboard {cluster.dashboard_link})",
                       cluster=cluster, workers=n)
    if scheduler is not None:
        client = connect(scheduler)  # reachable, and its workers run this kit: said now, not per study
        try:
            n = len(client.scheduler_info().get("workers", {}))
            link = client.dashboard_link
        finally:
            client.close()
        return Backend({SCHEDULER_ENV: scheduler}, f"the Dask scheduler at {scheduler}, {n} workers now "
                                                   f"(dashboard {link})", workers=n)
    return Backend()


def scheduler_workers(address):
    """How many workers the scheduler at ``address`` has now (for the dry run's wall time)."""
    client = connect(address)
    try:
        return len(client.scheduler_info().get("workers", {})) or None
    finally:
        client.close()
