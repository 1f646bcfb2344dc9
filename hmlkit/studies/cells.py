"""A study's fits as tasks ("cells"): run on local processes or a Dask cluster, resumable.

A cell is one fit of a study and its scoring: one method, mode, fold, rate or parameter
value. A study lists its cells (each with a JSON key that names it and the arguments its
function takes), then :func:`run_cells` runs every cell that is not stored yet and returns
the results in the listed order. Where they run:

* **local processes** (the default): ``n_jobs`` processes of joblib's loky backend with one
  thread each (BLAS, OpenMP, numba); with ``n_jobs=1``, or one cell to run, in this process.
* **a Dask cluster**: the scheduler named by ``HMLKIT_SCHEDULER`` (the study runner sets it
  for ``--local-cluster N`` and ``--scheduler ADDRESS``, or from ``DASK_SCHEDULER_ADDRESS``).
  The data every cell reads is scattered to the workers once; each cell is one task, retried
  on another worker when its worker is lost. Before the first task the workers are asked
  for the digest of their kit: a worker without the kit, or with other code, is refused by
  name (it would compute other numbers).

A cell's seed is in its key and its arguments, never the worker's, and each runs on one
thread: the numbers are the same on every backend and for any number of workers.

**Resumable.** Every finished cell is stored in the fit cache's folder
(:mod:`hmlkit.studies.fitcache`, ``<cache>/cells/``) under a digest of its key, the study
function, the data it reads and the kit's code, as soon as its result arrives. A run that
is stopped, or dies, loses only its unfinished cells: the next run loads the stored ones
and says how many (``HMLKIT_FIT_CACHE=off`` turns this off). A stored cell is plain JSON
(numbers, strings, lists), written atomically and never unpickled: a damaged entry reads as
missing and is computed again.

**Cost.** Each cell's CPU seconds (measured in the process that ran it) go to
:data:`hmlkit.studies.ledger.LEDGER` with its description (what, data size, trees); the study saves the ledger with
its result (:func:`hmlkit.studies.ledger.take_ledger`), and :mod:`hmlkit.studies.cost` calibrates its cost model
on it.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .ledger import LEDGER

SCHEDULER_ENV = "HMLKIT_SCHEDULER"  # a Dask scheduler's address: cells run on its workers
CONNECT_TIMEOUT = 20  # seconds to reach a scheduler before the study stops, naming it
RETRIES = 2  # a cell whose worker was lost is run again, up to this many times


@dataclass(frozen=True)
class Cell:
    """One fit: ``key`` (JSON-able; None: never stored) names it within its study function, ``args`` are the
    function's arguments after the shared data, ``label`` is its progress line, ``cost``
    (a dict: ``what``, ``n``, ``d``, ``trees``...) describes it to the cost model."""
    key: object
    args: tuple = ()
    label: str = ""
    cost: dict = field(default_factory=dict)


class CellError(RuntimeError):
    """Where the cells were to run cannot run them (scheduler unreachable, workers without the kit)."""


# ---------------------------------------------------------------------------- keys and store
def _canonical(v):
    """``v`` as JSON text in which a value's type is kept apart (1, 1.0 and True differ)."""
    def typed(x):
        if isinstance(x, (bool, np.bool_)):
            return ["bool", bool(x)]
        if isinstance(x, (int, np.integer)):
            return ["int", int(x)]
        if isinstance(x, (float, np.floating)):
            return ["float", repr(float(x))]
        if x is None or isinstance(x, str):
            return x
        if isinstance(x, dict):
            return {"dict": [[str(k), typed(x[k])] for k in sorted(x, key=str)]}
        if isinstance(x, (list, tuple, np.ndarray)):
            return ["list", [typed(e) for e in (x.tolist() if isinstance(x, np.ndarray) else x)]]
        raise TypeError(f"a cell key holds {type(x).__name__} ({x!r}): only numbers, strings, lists and dicts")
    return json.dumps(typed(v), sort_keys=True, separators=(",", ":"))


def shared_digest(shared):
    """sha256 of the data every cell reads: TaggedData (its fit-cache digest), arrays, scipy
    sparse matrices, and dicts / lists / tuples of them, other values by their canonical text."""
    import scipy.sparse as sp

    from .fitcache import data_digest

    h = hashlib.sha256()

    def add(x):
        if hasattr(x, "X") and hasattr(x, "Y"):
            h.update(b"D" + data_digest(x).encode())
        elif sp.issparse(x):
            x = sp.csr_matrix(x)
            x.sort_indices()
            h.update(f"S{x.shape}".encode())
            for a in (x.indptr, x.indices, x.data):
                add(np.asarray(a))
        elif isinstance(x, np.ndarray):
            a = np.ascontiguousarray(x)
            h.update(f"A{a.dtype.str}{a.shape}".encode())
            h.update(a.tobytes())
        elif isinstance(x, dict):
            h.update(f"M{len(x)}".encode())
            for k in sorted(x, key=str):
                h.update(_canonical(str(k)).encode())
                add(x[k])
        elif isinstance(x, (list, tuple)):
            h.update(f"L{len(x)}".encode())
            for e in x:
                add(e)
        else:
            h.update(b"V" + _canonical(x).encode())
    add(shared)
    return h.hexdigest()


def _cells_dir():
    from .fitcache import cache_dir

    where = cache_dir()
    return None if where is None else Path(where) / "cells"


def _cell_digest(what, key, data, kit):
    return hashlib.sha256(_canonical({"what": what, "key": key, "data": data, "kit": kit}).encode()).hexdigest()


def _jsonable(x):
    if isinstance(x, (np.bool_,)):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"a cell's result holds {type(x).__name__}: only numbers, strings, lists and dicts are stored")


def _load(folder, digest):
    """The stored entry ``{"result", "cpu", "wall"}`` of a cell, or None (missing or unreadable:
    computed again, and overwritten)."""
    path = folder / f"{digest}.json"
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if (not isinstance(entry, dict) or entry.get("digest") != digest or "result" not in entry
            or not all(isinstance(entry.get(k), (int, float)) for k in ("cpu", "wall"))):
        return None
    return entry


def _store(folder, digest, entry):
    """Write a cell's entry atomically (a temporary file in the same folder, renamed): two
    processes storing the same cell write the same content, and a failed write leaves nothing."""
    text = json.dumps({"digest": digest, **entry}, default=_jsonable, allow_nan=True)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{digest}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise CellError(f"cannot store finished cells in {folder} ({exc}); set HMLKIT_FIT_CACHE to a writable "
                        f"folder, or to 'off'") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, folder / f"{digest}.json")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------------------- running one cell
def _timed(fn, shared, args):
    """``fn(shared, *args)`` with the CPU and wall seconds it took in this process."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn(shared, *args)
    return out, time.process_time() - c0, time.perf_counter() - t0


def _one_thread(fn, shared, args):
    """A cell on a worker: one thread for numba, as for BLAS (set by the pool / worker env)."""
    import numba

    prev = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return _timed(fn, shared, args)
    finally:
        numba.set_num_threads(prev)


def _worker_kit(dask_worker=None):
    """On a worker: the digest of its kit (a worker without the kit cannot even load this
    function: :func:`connect` reads that error as "no kit")."""
    from .fitcache import kit_digest

    return kit_digest()


def scheduler_address():
    """The Dask scheduler the cells run on (``HMLKIT_SCHEDULER``), or None: local processes."""
    addr = os.environ.get(SCHEDULER_ENV, "").strip()
    return addr or None


def connect(address, timeout=CONNECT_TIMEOUT):
    """A ``distributed.Client`` of the scheduler at ``address`` whose workers all run this kit."""
    try:
        from distributed import Client
    except ImportError as exc:
        raise CellError(f"{SCHEDULER_ENV}={address} asks for a Dask cluster, but dask.distributed is not "
                        f"installed: pip install 'hmlkit[dask]'") from exc
    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise CellError(f"cannot reach the Dask scheduler at {address} within {timeout} s ({exc}); start it, or "
                        f"unset {SCHEDULER_ENV} to run the cells on local processes") from exc
    try:
        from .fitcache import kit_digest

        mine = kit_digest()
        client.wait_for_workers(1, timeout=timeout)
        theirs = client.run(_worker_kit, on_error="return")  # an exception: no kit there
        bad = sorted(w for w, d in theirs.items() if d != mine)
        if bad:
            client.close()
            raise CellError(f"{len(bad)} of {len(theirs)} Dask workers at {address} have no hmlkit or another "
                            f"version of its code (they would compute other numbers): {', '.join(bad[:5])}. "
                            f"Install this checkout on every worker (pip install -e '.[dask]').")
    except TimeoutError as exc:
        client.close()
        raise CellError(f"the Dask scheduler at {address} has no worker after {timeout} s") from exc
    return client


def _run_dask(address, fn, shared, todo, on_done):
    from distributed import as_completed

    client = connect(address)
    try:
        # one copy of the data per worker, not one per task
        data = client.scatter(shared, broadcast=True, hash=False)
        futures = {client.submit(_one_thread, fn, data, cell.args, pure=False, retries=RETRIES,
                                 key=f"cell-{digest[:16]}-{os.getpid()}-{j}"): (j, digest)
                   for j, (cell, digest) in enumerate(todo)}
        try:
            for fut in as_completed(list(futures), loop=client.loop):
                j, digest = futures[fut]
                on_done(j, *fut.result())
        finally:
            for fut in futures:
                fut.cancel()
    finally:
        client.close()


def _run_local(fn, shared, todo, n_jobs, on_done):
    if n_jobs <= 1 or len(todo) <= 1:
        for j, (cell, _digest) in enumerate(todo):
            on_done(j, *_timed(fn, shared, cell.args), in_kernel=True)
        return
    from joblib import Parallel, delayed, parallel_config

    # one thread per task: loky would otherwise pass on this kernel's thread variables (its
    # n_jobs), and n_jobs threads per process on n_jobs busy cores only compete
    with parallel_config(backend="loky", inner_max_num_threads=1):
        pool = Parallel(n_jobs=min(n_jobs, len(todo)), return_as="generator_unordered")
        for j, *out in pool(delayed(_indexed)(j, fn, shared, cell.args) for j, (cell, _d) in enumerate(todo)):
            on_done(j, *out)


def _indexed(j, fn, shared, args):
    return j, *_one_thread(fn, shared, args)


# ---------------------------------------------------------------------------- the entry point
def run_cells(fn, shared, cells, n_jobs=1, desc="cells", progress=True, describe=None):
    """``[fn(shared, *cell.args) for cell in cells]``, each cell a task (see the module doc).

    ``fn`` must be a module-level function (sent to other processes by reference) whose
    result is JSON-able (numbers, NaN included, strings, lists, dicts). ``describe(cell,
    result)`` gives a cell's result line (default: its label). Stored cells are loaded, the
    others run where :func:`scheduler_address` says, else on ``n_jobs`` local processes."""
    from .fitcache import kit_digest
    from .progress import Progress

    cells = list(cells)
    what = f"{fn.__module__}.{fn.__qualname__}"
    folder = _cells_dir()
    digests = [None] * len(cells)
    results = [None] * len(cells)
    if folder is not None and any(c.key is not None for c in cells):
        data, kit = shared_digest(shared), kit_digest()
        # a cell without a key (its function's arguments are not named by one) is never stored
        digests = [None if c.key is None else _cell_digest(what, c.key, data, kit) for c in cells]
    todo = []
    for i, (cell, digest) in enumerate(zip(cells, digests)):
        entry = _load(folder, digest) if digest is not None else None
        if entry is None:
            todo.append(i)
        else:
            results[i] = entry["result"]
            LEDGER.append({"what": what, **cell.cost, "cpu": entry["cpu"], "wall": entry["wall"], "stored": True})
    address = scheduler_address()
    if progress:
        where = (f"the Dask cluster at {address}" if address else
                 f"{min(n_jobs, len(todo))} local processes" if n_jobs > 1 and len(todo) > 1 else "this process")
        print(f"{desc}: {len(cells)} cells, {len(cells) - len(todo)} stored from an earlier run, "
              f"{len(todo)} to run on {where}", flush=True)
    if progress and describe is not None:
        for cell, res in zip(cells, results):
            if res is not None:
                print(f"{describe(cell, res)} (stored)", flush=True)
    if not todo:  # the runner's progress line still says this stage is done
        done = Progress(len(cells), desc, enabled=False)
        done.step(n=len(cells))
    bar = Progress(len(todo), desc, enabled=progress) if todo else None

    def on_done(j, result, cpu, wall, in_kernel=False):
        i = todo[j]
        cell = cells[i]
        result = json.loads(json.dumps(result, default=_jsonable, allow_nan=True))  # as a stored one reads
        results[i] = result
        LEDGER.append({"what": what, **cell.cost, "cpu": float(cpu), "wall": float(wall), "stored": False,
                       "in_kernel": in_kernel})
        if digests[i] is not None:
            _store(folder, digests[i], {"result": result, "cpu": float(cpu), "wall": float(wall)})
        line = describe(cell, result) if describe is not None else cell.label
        bar.step(f"{line} ({wall:.1f}s)" if line else None)

    try:
        if todo:
            pending = [(cells[i], digests[i] or str(i)) for i in todo]
            if address:
                _run_dask(address, fn, shared, pending, on_done)
            else:
                _run_local(fn, shared, pending, int(n_jobs), on_done)
    finally:
        if bar is not None:
            bar.close()
    return results
