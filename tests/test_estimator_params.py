"""Parameter and input checks of the estimators: clusters vs samples, integer
and boolean parameters that used to be coerced, max_features above d, complex X, values
too large for float32, and Ctrl-C during HMLForest.fit."""
import os
import signal
import threading
import time

import numpy as np
import pytest

from hmlkit import HMLClustering, HMLForest
from hmlkit.cluster import spectral_from_affinity, spectral_from_graph
from hmlkit.complete import HMLTagCompleter


def _blobs(n=30, d=8, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    X = rng.normal(size=(n, d)).astype(np.float32)
    X[:, 0] += 3 * g
    Y = np.zeros((n, 7), np.uint8)
    Y[np.arange(n), g] = 1
    Y[np.arange(n), 3 + (g + rng.integers(0, 2, n)) % 4] = 1
    return X, Y, [np.arange(3), np.arange(3, 7)]


# ------------------------------------------------------------------ n_clusters vs samples
def test_as_many_clusters_as_samples_is_a_clear_error():
    """n_clusters == n_samples passed validation and crashed in ARPACK (TypeError: Cannot
    use scipy.linalg.eigh for sparse A with k >= N)."""
    X, Y, layers = _blobs(n=12)
    msg = "n_clusters=12 equals the number of samples"
    with pytest.raises(ValueError, match=msg):
        HMLClustering(n_clusters=12, n_estimators=4, n_jobs=1).fit(X, Y, layers)
    with pytest.raises(ValueError, match=msg):
        HMLTagCompleter(method="GC", n_clusters=12, n_estimators=4, n_jobs=1).fit(X, Y, layers)
    with pytest.raises(ValueError, match=msg):
        spectral_from_affinity(np.eye(12) + 0.1, 12)
    import scipy.sparse as sp
    with pytest.raises(ValueError, match="n_clusters=5 equals"):
        spectral_from_graph(sp.csr_matrix(np.ones((5, 5))), 5)
    # one fewer is fine
    labels = HMLClustering(n_clusters=11, n_estimators=4, n_neighbors=5, n_jobs=1, random_state=0).fit(
        X, Y, layers).labels_
    assert labels.shape == (12,)


# ------------------------------------------------------------------ types of parameters
@pytest.mark.parametrize("est, param, value", [
    (HMLForest, "n_estimators", True),
    (HMLForest, "n_estimators", "5"),
    (HMLForest, "n_estimators", 5.0),
    (HMLForest, "min_samples_leaf", 2.7),
    (HMLForest, "min_samples_leaf", False),
    (HMLForest, "max_features", True),
    (HMLForest, "max_features", "5"),
    (HMLForest, "max_features", 1.5),
    (HMLForest, "hierarchy", "no"),
    (HMLForest, "correlations", 0),
    (HMLForest, "bootstrap", "yes"),
    (HMLClustering, "n_clusters", True),
    (HMLClustering, "n_clusters", 3.0),
    (HMLClustering, "n_neighbors", 2.7),
    (HMLClustering, "n_neighbors", "5"),
    (HMLClustering, "hierarchy", "no"),
    (HMLClustering, "complete_tags", "yes"),
    (HMLClustering, "complete_tags", 1),
    (HMLClustering, "completion_weight", 1.5),
    (HMLClustering, "completion_weight", True),
    (HMLClustering, "completion_top", 0),
    (HMLClustering, "completion_top", 2.5),
    (HMLTagCompleter, "oob", "no"),
    (HMLTagCompleter, "n_neighbors", True),
    (HMLTagCompleter, "n_estimators", np.float64(4)),
])
def test_wrongly_typed_parameters_are_rejected(est, param, value):
    """Booleans, strings and floats used to be coerced: n_estimators=True -> 1 tree,
    max_features=True -> all features, hierarchy='no' / oob='no' -> on, n_neighbors=2.7 -> 2."""
    X, Y, layers = _blobs()
    kw = {"n_estimators": 3, "n_jobs": 1}
    if est is HMLClustering:
        kw["n_clusters"] = 3
    kw[param] = value
    with pytest.raises(ValueError, match=param) as info:
        est(**kw).fit(X, Y, layers)
    assert isinstance(info.value, TypeError) or "must be" in str(info.value)


def test_well_typed_parameters_still_work():
    X, Y, layers = _blobs()
    f = HMLForest(n_estimators=np.int64(3), min_samples_leaf=np.int32(2), max_features=8, hierarchy=np.bool_(False),
                  n_jobs=1, random_state=0).fit(X, Y, layers)
    assert f.max_features_ == 8 and len(f.n_leaves_) == 3
    assert HMLForest(n_estimators=2, max_features=0.5, n_jobs=1).fit(X, Y, layers).max_features_ == 4


def test_max_features_above_d_is_an_error_naming_both():
    X, Y, layers = _blobs(d=8)
    with pytest.raises(ValueError, match=r"max_features=9 is larger than the number of features of X \(8\)"):
        HMLForest(n_estimators=2, max_features=9, n_jobs=1).fit(X, Y, layers)


# ------------------------------------------------------------------ X
def test_complex_X_is_rejected():
    X, Y, layers = _blobs()
    with pytest.raises(ValueError, match="complex"):
        HMLForest(n_estimators=2, n_jobs=1).fit(X + 1j, Y, layers)


def test_value_too_large_for_float32_is_reported_as_such():
    """A finite 1e308 used to be reported as 'X contains NaN or inf' (the float32 cast overflows)."""
    X, Y, layers = _blobs()
    X = X.astype(np.float64)
    X[3, 2] = 1e308
    with pytest.raises(ValueError, match=r"too large for float32 at row 3, column 2: .*1e\+308"):
        HMLForest(n_estimators=2, n_jobs=1).fit(X, Y, layers)
    X[3, 2] = np.inf
    with pytest.raises(ValueError, match="NaN or inf"):
        HMLForest(n_estimators=2, n_jobs=1).fit(X, Y, layers)


# ------------------------------------------------------------------ Ctrl-C
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_ctrl_c_during_fit_is_a_prompt_keyboard_interrupt(n_jobs):
    """A SIGINT during fit surfaced after every tree (threads: 2 s -> 23.7 s), or with
    n_jobs=1 as 'SystemError: CPUDispatcher(<function grow_tree>) returned a result with an
    exception set'. Now: a plain KeyboardInterrupt within a tree's time, and the process's
    SIGINT handler is restored."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    rng = np.random.default_rng(0)
    n = 1500
    X = rng.normal(size=(n, 20)).astype(np.float32)
    Y = (rng.random((n, 12)) < 0.3).astype(np.uint8)
    layers = [np.arange(4), np.arange(4, 12)]
    HMLForest(n_estimators=2, n_jobs=n_jobs, random_state=0).fit(X, Y, layers)  # compiled
    t0 = time.time()
    HMLForest(n_estimators=20, n_jobs=n_jobs, random_state=0, verbose=False).fit(X, Y, layers)
    per_tree = (time.time() - t0) / 20 * n_jobs
    trees = int(15.0 / per_tree) + 1  # about 15 s of work uninterrupted
    handler = signal.getsignal(signal.SIGINT)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.time()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            HMLForest(n_estimators=trees, n_jobs=n_jobs, random_state=0, verbose=False).fit(X, Y, layers)
    finally:
        timer.cancel()
    took = time.time() - t0
    assert type(info.value) is KeyboardInterrupt
    assert took < 1.0 + 2.0 + 2 * per_tree, (took, per_tree, trees)
    assert signal.getsignal(signal.SIGINT) is handler
