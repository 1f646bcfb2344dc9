"""A study's fits as cells (hmlkit.studies.cells): the same numbers on every backend (this
process, local processes, a Dask cluster, a worker lost), finished cells stored and not run
again, nothing in the store that can run code or stand in for a result it is not."""
import json
import os
import signal
import time

import numpy as np
import pytest

from hmlkit.studies import cells
from hmlkit.studies.cells import Cell, CellError, run_cells


def _square(shared, i, seed):
    """A toy cell: reads the shared array, draws from its own seed."""
    rng = np.random.default_rng(seed)
    return {"i": i, "sum": float(shared["x"].sum() * i), "draw": rng.random(3).tolist(), "pid": os.getpid()}


def _cells(n=6):
    return [Cell({"i": i, "seed": 10 + i}, (i, 10 + i), f"cell {i}", {"what": "toy", "n": 10}) for i in range(n)]


def _strip(results):
    return [{k: v for k, v in r.items() if k != "pid"} for r in results]


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("HMLKIT_FIT_CACHE", str(tmp_path / "fits"))
    monkeypatch.delenv(cells.SCHEDULER_ENV, raising=False)
    cells.LEDGER.clear()
    yield tmp_path / "fits" / "cells"
    cells.LEDGER.clear()


@pytest.fixture
def no_store(monkeypatch):
    monkeypatch.setenv("HMLKIT_FIT_CACHE", "off")
    monkeypatch.delenv(cells.SCHEDULER_ENV, raising=False)
    cells.LEDGER.clear()
    yield
    cells.LEDGER.clear()


SHARED = {"x": np.arange(10.0)}


def test_keys_keep_types_apart():
    assert len({cells._canonical(v) for v in (1, 1.0, True, "1", [1], None)}) == 6
    assert cells._canonical({"b": 1, "a": [1.5, "x"]}) == cells._canonical({"a": (1.5, "x"), "b": 1})
    with pytest.raises(TypeError, match="only numbers, strings"):
        cells._canonical({"a": object()})


def test_results_come_back_in_cell_order_and_equal_on_this_process_and_local_processes(no_store):
    one = run_cells(_square, SHARED, _cells(), n_jobs=1, progress=False)
    two = run_cells(_square, SHARED, _cells(), n_jobs=2, progress=False)
    assert [r["i"] for r in one] == list(range(6))
    assert _strip(one) == _strip(two)
    assert {r["pid"] for r in one} == {os.getpid()}
    assert os.getpid() not in {r["pid"] for r in two}  # they ran on other processes


def test_finished_cells_are_stored_and_not_run_again(store, capsys):
    first = run_cells(_square, SHARED, _cells(), n_jobs=1, progress=True)
    assert len(list(store.glob("*.json"))) == 6
    cells.LEDGER.clear()
    again = run_cells(_square, SHARED, _cells(), n_jobs=1, progress=True)
    assert _strip(again) == _strip(first)
    assert all(r["stored"] for r in cells.LEDGER)
    out = capsys.readouterr().out
    assert "6 cells, 6 stored from an earlier run, 0 to run" in out
    # other data: other cells
    cells.LEDGER.clear()
    run_cells(_square, {"x": np.arange(11.0)}, _cells(), n_jobs=1, progress=False)
    assert not any(r["stored"] for r in cells.LEDGER)


def _fails_at(shared, i, seed):
    if i == shared["fail_at"]:
        raise KeyboardInterrupt  # a stop in the middle of the run
    return _square(shared, i, seed)


def test_a_stopped_run_keeps_its_finished_cells_and_the_rerun_computes_only_the_rest(store, capsys):
    shared = {"x": np.arange(10.0), "fail_at": 3}
    with pytest.raises(KeyboardInterrupt):
        run_cells(_fails_at, shared, _cells(), n_jobs=1, progress=False)
    assert len(list(store.glob("*.json"))) == 3
    shared_ok = {"x": np.arange(10.0), "fail_at": 3}
    cells.LEDGER.clear()
    calls = []

    def record(shared, i, seed):  # runs in this process (n_jobs=1): count what is computed
        calls.append(i)
        return _square(shared, i, seed)
    record.__module__, record.__qualname__ = _fails_at.__module__, _fails_at.__qualname__  # the same cells
    out = run_cells(record, shared_ok, _cells(), n_jobs=1, progress=True)
    assert calls == [3, 4, 5]
    assert "3 stored from an earlier run, 3 to run" in capsys.readouterr().out
    assert _strip(out) == _strip(run_cells(_square, SHARED, _cells(), n_jobs=1, progress=False))


def test_a_damaged_or_planted_entry_is_computed_again_and_runs_no_code(store, tmp_path):
    first = run_cells(_square, SHARED, _cells(2), n_jobs=1, progress=False)
    entries = sorted(store.glob("*.json"))
    marker = tmp_path / "pwned"
    import pickle

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))
    entries[0].write_bytes(pickle.dumps(Payload()))           # a pickle where JSON is expected
    entry = json.loads(entries[1].read_text())
    entry["digest"] = "0" * 64                                # an entry moved from another key
    entries[1].write_text(json.dumps(entry))
    cells.LEDGER.clear()
    again = run_cells(_square, SHARED, _cells(2), n_jobs=1, progress=False)
    assert not marker.exists()
    assert _strip(again) == _strip(first)
    assert not any(r["stored"] for r in cells.LEDGER)  # both computed again, and rewritten
    assert all(json.loads(p.read_text())["digest"] == p.stem for p in entries)


def test_a_cell_that_cannot_be_stored_is_named(store, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("HMLKIT_FIT_CACHE", str(blocker))
    with pytest.raises((CellError, ValueError), match="HMLKIT_FIT_CACHE|file"):
        run_cells(_square, SHARED, _cells(1), n_jobs=1, progress=False)


def test_the_ledger_records_each_cells_size_and_cpu(no_store):
    run_cells(_square, SHARED, _cells(3), n_jobs=1, progress=False)
    from hmlkit.studies.ledger import take_ledger

    attrs = take_ledger()
    rows = json.loads(attrs["cells"])
    assert [r["what"] for r in rows] == ["toy"] * 3 and all(r["n"] == 10 and r["cpu"] >= 0 for r in rows)
    assert attrs["kernel_cpu_s"] > 0 and cells.LEDGER == []


# ------------------------------------------------------------------------------------ Dask
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
        yield c


def test_a_dask_cluster_gives_the_same_numbers(no_store, cluster, monkeypatch):
    local = run_cells(_square, SHARED, _cells(), n_jobs=1, progress=False)
    monkeypatch.setenv(cells.SCHEDULER_ENV, cluster.scheduler_address)
    remote = run_cells(_square, SHARED, _cells(), n_jobs=1, progress=False)
    assert _strip(remote) == _strip(local)
    assert os.getpid() not in {r["pid"] for r in remote}


def _slow_square(shared, i, seed):
    time.sleep(0.5)
    return _square(shared, i, seed)


def test_a_worker_lost_mid_run_is_retried_and_the_numbers_are_the_same(no_store, cluster, monkeypatch):
    from distributed import Client

    local = run_cells(_square, SHARED, _cells(8), n_jobs=1, progress=False)
    monkeypatch.setenv(cells.SCHEDULER_ENV, cluster.scheduler_address)
    with Client(cluster.scheduler_address) as c:
        pids = list(c.run(os.getpid).values())
    import threading

    def kill_one():
        time.sleep(1.0)  # the cells have started
        os.kill(pids[0], signal.SIGKILL)
    t = threading.Thread(target=kill_one)
    t.start()
    remote = run_cells(_slow_square, SHARED, _cells(8), n_jobs=1, progress=False)
    t.join()
    assert _strip(remote) == _strip(local)


def test_an_unreachable_scheduler_is_named(no_store, monkeypatch):
    monkeypatch.setenv(cells.SCHEDULER_ENV, "tcp://127.0.0.1:9")
    t0 = time.time()
    with pytest.raises(CellError, match=r"cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        cells.connect("tcp://127.0.0.1:9", timeout=2)
    assert time.time() - t0 < 30


def test_workers_with_other_code_are_refused_by_name(no_store, cluster, monkeypatch):
    monkeypatch.setattr("hmlkit.studies.fitcache.kit_digest", lambda: "not the workers' kit")
    with pytest.raises(CellError, match="have no hmlkit or another version of its code"):
        cells.connect(cluster.scheduler_address, timeout=10)


def test_cells_without_a_key_are_never_stored_nor_taken_for_each_other(store):
    keyless = [Cell(None, (i, 10 + i)) for i in range(3)]
    first = run_cells(_square, SHARED, keyless, n_jobs=1, progress=False)
    assert [r["i"] for r in first] == [0, 1, 2]
    assert not store.exists() or not list(store.glob("*.json"))
    again = run_cells(_square, SHARED, keyless, n_jobs=1, progress=False)
    assert [r["i"] for r in again] == [0, 1, 2]
