"""A fit moved onto a Dask cluster (hmlkit.dask_backend): the same forest, the same
clusters, and the training data sent to each worker once."""
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
from joblib import parallel_config  # noqa: E402

from hmlkit import HMLClustering, HMLForest  # noqa: E402
from hmlkit.affinity import leaf_knn  # noqa: E402
from hmlkit.dask_backend import active_client, map_pinned, place, release  # noqa: E402
from hmlkit.data import make_synthetic  # noqa: E402
from hmlkit.executors import Shared, received_count  # noqa: E402


# the scheduler's active memory manager drops replicas no task waits for; run it every
# 50 ms (default 2 s) so a copy the kit relies on would be dropped within a test
FAST_AMM = {"distributed.scheduler.active-memory-manager.interval": "50ms"}


def _cluster():
    import dask

    with dask.config.set(FAST_AMM):
        return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)


@pytest.fixture(scope="module")
def client():
    cluster = _cluster()
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def data():
    return make_synthetic("trecvid", n_samples=400, random_state=0)


def _sent(client):
    return sum(client.run(received_count).values())


def test_no_client_means_local(data):
    assert active_client() is None


@pytest.mark.parametrize("kw", [{}, {"bootstrap": True}, {"hierarchy": False, "untagged": "negative"},
                                {"split_sample": 50}])
def test_forest_through_dask_equals_local_fit(client, data, kw):
    local = HMLForest(n_estimators=12, random_state=5, n_jobs=1, **kw).fit(data.X, data.Y, data.layers)
    with parallel_config(backend="dask"):
        assert active_client() is client
        remote = HMLForest(n_estimators=12, random_state=5, **kw).fit(data.X, data.Y, data.layers)
        routed = remote.apply(data.X[::3])
    np.testing.assert_array_equal(remote.train_leaves_, local.train_leaves_)
    for name in ("node_offset_", "feature_", "threshold_", "children_left_", "children_right_", "leaf_id_"):
        np.testing.assert_array_equal(getattr(remote, name), getattr(local, name))
    np.testing.assert_array_equal(routed, local.apply(data.X[::3]))
    if kw.get("bootstrap"):
        np.testing.assert_array_equal(remote.inbag_, local.inbag_)


def test_clustering_through_dask_equals_local(client, data):
    local = HMLClustering(15, random_state=0, n_estimators=15).fit(data.X, data.Y, data.layers)
    with parallel_config(backend="dask"):
        remote = HMLClustering(15, random_state=0, n_estimators=15).fit(data.X, data.Y, data.layers)
        idx, w = leaf_knn(local.forest_.train_leaves_, 10)
    np.testing.assert_array_equal(remote.labels_, local.labels_)
    assert (remote.affinity_ != local.affinity_).nnz == 0
    idx0, w0 = leaf_knn(local.forest_.train_leaves_, 10)
    np.testing.assert_array_equal(idx, idx0)
    np.testing.assert_array_equal(w, w0)


def test_training_data_sent_once_per_worker(client, data):
    before = client.run(received_count)
    with parallel_config(backend="dask"):
        HMLForest(n_estimators=20, random_state=1).fit(data.X, data.Y, data.layers)
    after = client.run(received_count)
    # one copy of (X, tag arrays) per worker for 20 trees; nothing fetched from a peer
    assert {w: after[w] - before[w] for w in after} == {w: 1 for w in after}
    # and the workers let go of the fit's data (released asynchronously: wait for it)
    deadline = time.monotonic() + 20
    while sum(len(v) for v in client.has_what().values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert client.has_what() == {w: () for w in after}


def _read(shared, i):
    time.sleep(0.02)
    return float(shared.arrays[0].sum()) + i


def test_placed_copies_outlive_idle_time_and_are_read_where_they_are(client):
    before = client.run(received_count)
    placed = place(client, Shared(np.ones(50)))
    time.sleep(0.5)  # ten memory-manager passes with no task waiting for the data
    assert sorted(placed) == sorted(client.nthreads())
    assert all(len(v) == 1 for v in client.who_has(list(placed.values())).values())
    seen = []
    out = map_pinned(client, placed, _read, 30, args=lambda w, i: (i,), progress=seen.append)
    release(placed)
    assert out == [50.0 + i for i in range(30)] and seen == [1] * 30
    after = client.run(received_count)
    assert {w: after[w] - before[w] for w in after} == {w: 1 for w in after}


def _slow(shared, i):
    time.sleep(0.3)
    return i


def test_a_worker_lost_mid_run_fails_the_run_by_name():
    import os
    import threading

    with _cluster() as cluster, distributed.Client(cluster) as c:
        placed = place(c, Shared(np.ones(10)))
        victim = sorted(placed)[1]
        threading.Timer(0.5, lambda: c.run(lambda: threading.Timer(0.01, os._exit, (1,)).start(),
                                           workers=[victim])).start()
        with pytest.raises(RuntimeError, match="worker left the cluster"):
            map_pinned(c, placed, _slow, 40, args=lambda w, i: (i,))


def test_a_fit_after_the_client_closed_says_so(data):
    # distributed's own error was "'NoneType' object has no attribute 'ncores'"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        c = distributed.Client(cluster, set_as_default=False)
        with parallel_config(backend="dask", client=c):  # this client, not the module's running one
            c.close()
            with pytest.raises(RuntimeError, match="Dask client was closed"):
                HMLForest(n_estimators=4, random_state=0).fit(data.X, data.Y, data.layers)


def test_workers_with_several_threads_run_one_call_at_a_time_under_the_workqueue_layer(monkeypatch, data):
    """numba's "workqueue" layer (no TBB or OpenMP) aborts a process when two threads enter
    parallel code at once: a worker with 2 threads died, and the fit with it."""
    import dask

    monkeypatch.setenv("NUMBA_THREADING_LAYER", "workqueue")  # inherited by the worker processes
    local = HMLForest(n_estimators=6, random_state=2, n_jobs=1).fit(data.X, data.Y, data.layers)
    with dask.config.set(FAST_AMM):
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                           dashboard_address=None)
    try:
        with distributed.Client(cluster) as c:
            from hmlkit.dask_backend import _concurrent_tasks, _threading_layer

            assert set(c.run(_threading_layer).values()) == {"workqueue"}
            assert list(_concurrent_tasks(c, list(c.nthreads())).values()) == [1]
            with parallel_config(backend="dask"):
                remote = HMLForest(n_estimators=6, random_state=2).fit(data.X, data.Y, data.layers)
                idx, _ = leaf_knn(remote.train_leaves_, 5)  # the parallel kernel two threads entered at once
    finally:
        cluster.close()
    np.testing.assert_array_equal(remote.train_leaves_, local.train_leaves_)
    np.testing.assert_array_equal(idx, leaf_knn(local.train_leaves_, 5)[0])
