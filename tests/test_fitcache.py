"""The studies' fit cache (hmlkit.studies.fitcache): a fit is reused only where recomputing
would give the same result, and a hit leaves the study's recorded code as if it had fitted."""
import json
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

from hmlkit.data import TaggedData
from hmlkit.studies import fitcache
from hmlkit.studies.methods import cluster_labels, hmlrf_labels


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(fitcache.ENV, str(tmp_path / "fits"))
    fitcache._MEMORY.clear()
    yield tmp_path / "fits"
    fitcache._MEMORY.clear()


def _data(seed=0, n=60):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(3), n // 3)
    X = rng.normal(size=(n, 5)) + groups[:, None] * 3.0
    Y = np.zeros((n, 6), dtype=np.int8)
    Y[np.arange(n), groups] = 1
    Y[np.arange(n), 3 + groups] = rng.random(n) < 0.7
    return TaggedData(X=X, Y=sp.csr_matrix(Y), layers=[[0, 1, 2], [3, 4, 5]], groups=groups)


class Counter:
    def __init__(self, value):
        self.calls, self.value = 0, value

    def __call__(self):
        self.calls += 1
        return self.value


def test_hit_skips_the_computation(cache):
    data = _data()
    c = Counter(np.arange(60) % 3)
    a = fitcache.cached_labels("m", {"tau": 5, "n_jobs": 1}, data, 3, 0, c)
    b = fitcache.cached_labels("m", {"tau": 5, "n_jobs": 2}, data, 3, 0, c)  # threads: same fit
    assert c.calls == 1
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.int64


@pytest.mark.parametrize("change", ["seed", "k", "setting", "what", "tag", "feature", "layers"])
def test_any_change_of_the_fit_misses(cache, change):
    data = _data()
    c = Counter(np.zeros(60, dtype=int))
    args = dict(what="m", settings={"tau": 5}, data=data, n_clusters=3, seed=0)
    fitcache.cached_labels(**args, compute=c)
    if change == "seed":
        args["seed"] = 1
    elif change == "k":
        args["n_clusters"] = 4
    elif change == "setting":
        args["settings"] = {"tau": 6}
    elif change == "what":
        args["what"] = "other"
    elif change == "tag":
        Y = data.Y.tolil()
        Y[0, 5] = 1 - Y[0, 5]
        args["data"] = replace(data, Y=Y.tocsr())
    elif change == "feature":
        X = data.X.copy()
        X[3, 2] = np.nextafter(X[3, 2], np.float32(np.inf))  # the smallest change of a float32
        args["data"] = replace(data, X=X)
    elif change == "layers":
        args["data"] = replace(data, layers=[[0, 1], [2, 3, 4, 5]])
    fitcache.cached_labels(**args, compute=c)
    assert c.calls == 2


def test_a_change_of_the_kit_misses(cache, monkeypatch):
    data = _data()
    c = Counter(np.zeros(60, dtype=int))
    fitcache.cached_labels("m", {}, data, 3, 0, c)
    monkeypatch.setitem(fitcache._KIT, "digest", "another version of the kit")
    fitcache.cached_labels("m", {}, data, 3, 0, c)
    assert c.calls == 2


def test_off_computes_every_time(monkeypatch):
    monkeypatch.setenv(fitcache.ENV, "off")
    c = Counter(np.zeros(60, dtype=int))
    for _ in range(2):
        fitcache.cached_labels("m", {}, _data(), 3, 0, c)
    assert c.calls == 2


def test_cached_fits_equal_fresh_ones(cache, monkeypatch):
    """HML-RF and a baseline through the cache (computed, then read back) against the
    same fits with the cache off."""
    data = _data()
    params = {"n_estimators": 8, "min_samples_leaf": 3, "n_jobs": 1}
    with_cache = [hmlrf_labels(data, 3, 0, params) for _ in range(2)]
    with_cache += [cluster_labels("spclust", "blm", data, 3, 0, params) for _ in range(2)]
    assert len(list(cache.rglob("output.pkl"))) == 2  # one entry per fit, the second read back
    monkeypatch.setenv(fitcache.ENV, "off")
    fresh = [hmlrf_labels(data, 3, 0, params), cluster_labels("spclust", "blm", data, 3, 0, params)]
    for got, want in zip(with_cache, [fresh[0], fresh[0], fresh[1], fresh[1]]):
        np.testing.assert_array_equal(got, want)


def test_a_hit_loads_the_code_behind_the_fit(tmp_path):
    """The process that fitted had loaded hmlkit.baselines.ghfart; a process reading the
    fit back loads it too, so a study's run_deps name the code its result came from."""
    env = dict(os.environ, **{fitcache.ENV: str(tmp_path / "fits")})
    common = ("import sys, numpy as np, scipy.sparse as sp\n"
              "from hmlkit.data import TaggedData\n"
              "from hmlkit.studies import fitcache\n"
              "d = TaggedData(X=np.eye(4), Y=sp.csr_matrix(np.eye(4)))\n")
    fit = common + ("import hmlkit.baselines.ghfart\n"
                    "fitcache.cached_labels('m', {}, d, 2, 0, lambda: np.array([0, 0, 1, 1]))\n")
    read = common + ("assert 'hmlkit.baselines.ghfart' not in sys.modules\n"
                     "def boom():\n    raise AssertionError('recomputed')\n"
                     "print(fitcache.cached_labels('m', {}, d, 2, 0, boom).tolist())\n"
                     "print(json.dumps('hmlkit.baselines.ghfart' in sys.modules))\n").replace(
                         "print(json", "import json; print(json")
    for code in (fit, read):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    assert lines[0] == "[0, 0, 1, 1]" and json.loads(lines[1]) is True
