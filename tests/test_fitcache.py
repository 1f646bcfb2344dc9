"""The studies' fit cache (hmlkit.studies.fitcache): a fit is reused only where recomputing
would give the same result, and a hit leaves the study's recorded code as if it had fitted."""
import json
import math
import os
import subprocess
import sys
import warnings
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
    monkeypatch.setattr(fitcache, "_WARNED", set())
    return tmp_path / "fits"


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
    assert len(list(cache.rglob("*.npz"))) == 2  # one entry per fit, the second read back
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


# ---- an entry loads no code, and is checked before use -----------------------------------
class Payload:
    """Unpickling it creates ``marker``: the proof that a cache ran code from its folder."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _plant(path, marker):
    import pickle

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(Payload(marker)))


def test_a_planted_pickle_never_runs(cache, tmp_path):
    """A ``__reduce__`` payload written over every file of the cache (the old joblib
    ``output.pkl`` too) and at the old cache's path is never unpickled: the fit is computed
    afresh, with one warning naming the file."""
    data = _data()
    c = Counter(np.arange(60) % 3)
    fitcache.cached_labels("m", {}, data, 3, 0, c)
    marker = tmp_path / "pwned"
    entries = [p for p in cache.rglob("*") if p.is_file()]
    assert entries
    for p in entries:
        _plant(p, marker)
    _plant(cache / "joblib" / "hmlkit" / "studies" / "fitcache" / "_fit" / ("0" * 32) / "output.pkl", marker)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = fitcache.cached_labels("m", {}, data, 3, 0, c)
    assert not marker.exists()
    assert c.calls == 2
    (entry,) = cache.rglob("*.npz")
    assert [str(w.message) for w in caught if str(entry) in str(w.message) and "ignored" in str(w.message)]
    np.testing.assert_array_equal(got, np.arange(60) % 3)
    # overwritten with a good entry: the next call reads it, silently
    fitcache.cached_labels("m", {}, data, 3, 0, c)
    assert c.calls == 2 and not marker.exists()


def test_an_entry_holding_a_pickled_array_never_runs(cache, tmp_path):
    """A well-formed .npz whose value member is an object array (a pickle inside the .npy)."""
    data = _data()
    c = Counter(np.zeros(60, dtype=np.int64))
    fitcache.cached_labels("m", {}, data, 3, 0, c)
    (entry,) = cache.rglob("*.npz")
    marker = tmp_path / "pwned"
    with np.load(entry) as z:
        meta = z[fitcache.META]
    payload = np.empty(1, dtype=object)
    payload[0] = Payload(marker)
    with open(entry, "wb") as fh:
        np.savez(fh, **{fitcache.META: meta, "a0": payload})
    with pytest.warns(fitcache.FitCacheWarning, match=str(entry.name)):
        fitcache.cached_labels("m", {}, data, 3, 0, c)
    assert not marker.exists() and c.calls == 2


def test_an_entry_of_the_wrong_shape_or_range_is_recomputed(cache):
    """A readable entry of 3 labels for 60 samples, or with a label past the samples, is not
    returned as the labels: warned once, recomputed, overwritten."""
    data = _data()
    c = Counter(np.arange(60) % 3)
    settings = {"tau": 5, "n_clusters": 3}
    for bad in (np.array([0, 1, 2]), np.full(60, 99), np.arange(60, dtype=np.int32) % 3):
        fitcache._write(*_raw_entry(cache, settings, data, bad))
        fitcache._WARNED.clear()
        with pytest.warns(fitcache.FitCacheWarning) as got:
            labels = fitcache.cached_labels("m", {"tau": 5}, data, 3, 0, c)
        assert len(got) == 1 and str(next(cache.rglob("*.npz"))) in str(got[0].message)
        assert labels.shape == (60,) and labels.dtype == np.int64
    assert c.calls == 3


def _raw_entry(cache, settings, data, value):
    """The arguments of fitcache._write for an entry of ``value`` under cached_labels' key,
    written without its check (as a file someone else wrote)."""
    key = fitcache.entry_key("m", settings, data, 0)
    _, members, layout = fitcache._layout(value)
    return fitcache._entry_path(cache, "m", key), key, members, layout


def test_an_entry_under_another_key_or_truncated_is_ignored(cache):
    data = _data()
    c = Counter(np.arange(60) % 3)
    fitcache.cached_labels("m", {}, data, 3, 0, c)
    (entry,) = cache.rglob("*.npz")
    other = fitcache._entry_path(cache, "m", fitcache.entry_key("m", {"n_clusters": 4}, data, 0))
    entry.rename(other)  # a whole entry, but of another key
    with pytest.warns(fitcache.FitCacheWarning, match="its key is not the key"):
        fitcache.cached_labels("m", {}, data, 4, 0, c)
    raw = entry.read_bytes() if entry.exists() else other.read_bytes()
    other.write_bytes(raw[: len(raw) // 2])
    fitcache._WARNED.clear()
    with pytest.warns(fitcache.FitCacheWarning, match="ignored"):
        fitcache.cached_labels("m", {}, data, 4, 0, c)
    assert c.calls == 3


# ---- cells: a dict of arrays and JSON scalars ----------------------------------------------
def test_a_cell_round_trips_with_its_types(cache):
    value = {"nmi": np.float64(0.5), "nan": float("nan"), "inf": float("-inf"), "folds": 10, "ok": True,
             "method": "hmlrf", "none": None, "scores": [0.25, 1.0, 3], "labels": np.arange(5, dtype=np.int16),
             "table": np.ones((2, 3), dtype=np.float32), "flags": np.array([True, False]),
             "names": np.array(["a", "bc"])}
    c = Counter(value)
    first = fitcache.cached("cell/table1", {"rate": 0.2, "mode": "blm"}, "digest-of-the-data", 7, c)
    again = fitcache.cached("cell/table1", {"rate": 0.2, "mode": "blm"}, "digest-of-the-data", 7, c)
    assert c.calls == 1
    for got in (first, again):
        assert list(got) == list(value)
        assert type(got["nmi"]) is float and got["nmi"] == 0.5
        assert math.isnan(got["nan"]) and got["inf"] == float("-inf")
        assert type(got["folds"]) is int and got["ok"] is True and got["method"] == "hmlrf" and got["none"] is None
        assert got["scores"] == [0.25, 1.0, 3] and [type(x) for x in got["scores"]] == [float, float, int]
        for k in ("labels", "table", "flags", "names"):
            assert got[k].dtype == value[k].dtype and got[k].shape == value[k].shape
            np.testing.assert_array_equal(got[k], value[k])
    assert fitcache.load("cell/table1", {"rate": 0.2, "mode": "blm"}, "digest-of-the-data", 7)["folds"] == 10
    assert fitcache.load("cell/table1", {"rate": 0.2, "mode": "blm"}, "digest-of-the-data", 8) is None
    # the caller's check runs on what is read back
    with pytest.warns(fitcache.FitCacheWarning, match="refused"):
        assert fitcache.load("cell/table1", {"rate": 0.2, "mode": "blm"}, "digest-of-the-data", 7,
                             check=lambda v: v["folds"] == 5) is None


def test_a_value_that_cannot_be_stored_without_pickle_is_refused(cache):
    for bad in ({"x": {"nested": 1}}, {"x": [[1.0]]}, {"x": object()}, np.array([None, 1]), [1, 2], {1: 2},
                {"x": np.array([{}])}):
        with pytest.raises(TypeError, match="fit cache value"):
            fitcache.cached("m", {}, None, 0, lambda bad=bad: bad)
    assert not list(cache.rglob("*.npz"))


def test_keys_are_typed(cache):
    """1, 1.0 and True are three settings (and three seeds: True is refused); a tuple and a
    list are one; the thread count is in no key, at any depth."""
    c = Counter(np.zeros(3))
    for v in (1, 1.0, True, "1", None, np.int64(1), (1, 2), [1, 2], np.float32(1.0)):
        fitcache.cached("m", {"x": v}, None, 0, c)
    assert c.calls == 6  # np.int64(1) is 1, [1, 2] is (1, 2), np.float32(1.0) is 1.0
    keys = {fitcache.entry_key("m", {"x": v}, None, 0) for v in (1, 1.0, True)}
    assert len(keys) == 3
    assert (fitcache.entry_key("m", {"f": {"tau": 2, "n_jobs": 1}}, None, 0)
            == fitcache.entry_key("m", {"f": {"tau": 2, "n_jobs": 4}}, None, 0))
    with pytest.raises(TypeError, match="seed must be an integer"):
        fitcache.entry_key("m", {}, None, True)
    with pytest.raises(TypeError, match="seed must be an integer"):
        fitcache.entry_key("m", {}, None, 1.0)
    with pytest.raises(TypeError, match=r"settings\['f'\] is a builtin_function"):
        fitcache.entry_key("m", {"f": len}, None, 0)


# ---- writing: atomic, nothing left behind --------------------------------------------------
def test_a_failed_write_leaves_no_temporary_file(tmp_path):
    """A full disk (here a file size limit, which fails writes the same way) while storing:
    the fit is returned, a warning names the entry, and no temporary file is left."""
    fits = tmp_path / "fits"
    code = ("import resource, signal, warnings, numpy as np, scipy.sparse as sp\n"
            "from hmlkit.data import TaggedData\n"
            "from hmlkit.studies import fitcache\n"
            "d = TaggedData(X=np.eye(4), Y=sp.csr_matrix(np.eye(4)))\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
            "v = {'big': np.arange(100000.0)}\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    got = fitcache.cached('m', {}, d, 0, lambda: v)\n"
            "assert np.array_equal(got['big'], v['big'])\n"
            "print([str(x.message) for x in w])\n")
    env = dict(os.environ, **{fitcache.ENV: str(fits)})
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert [p for p in fits.rglob("*") if p.is_file()] == []
    assert "not written" in out.stdout


def test_concurrent_writers_of_one_entry(cache):
    """Several processes storing the same key at once: every one succeeds, one whole entry
    remains, no temporary file."""
    code = ("import numpy as np\nfrom hmlkit.studies import fitcache\n"
            "for _ in range(20):\n"
            "    fitcache.store('m', {'k': 1}, None, 0, {'x': np.arange(20000), 's': 1.5})\n")
    env = dict(os.environ, **{fitcache.ENV: str(cache)})
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert len(files) == 1 and files[0].suffix == ".npz"
    assert fitcache.load("m", {"k": 1}, None, 0)["s"] == 1.5


# ---- HMLKIT_FIT_CACHE -------------------------------------------------------------------
@pytest.mark.parametrize("value", ["off", " off", "OFF ", "\tOff\n"])
def test_off_in_any_case_and_spacing(value, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(fitcache.ENV, value)
    c = Counter(np.zeros(60, dtype=int))
    for _ in range(2):
        fitcache.cached_labels("m", {}, _data(), 3, 0, c)
    assert c.calls == 2
    assert list(tmp_path.iterdir()) == []  # no folder named " off"


def test_a_file_or_an_uncreatable_folder_is_named(tmp_path, monkeypatch):
    f = tmp_path / "a-file"
    f.write_text("")
    for where, why in ((f, "is a file"), (f / "sub", "cannot be created")):
        monkeypatch.setenv(fitcache.ENV, str(where))
        c = Counter(np.zeros(60, dtype=int))
        for _ in range(2):  # the same clear error at every use, found once
            with pytest.raises(fitcache.FitCacheError, match=f"HMLKIT_FIT_CACHE '{where}' {why}"):
                fitcache.cached_labels("m", {}, _data(), 3, 0, c)
        assert c.calls == 0


def test_an_unwritable_folder_is_named(tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o500)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("running as root: file modes do not stop writes")
        monkeypatch.setenv(fitcache.ENV, str(ro))
        with pytest.raises(fitcache.FitCacheError, match="HMLKIT_FIT_CACHE .* is not writable"):
            fitcache.cached_labels("m", {}, _data(), 3, 0, Counter(np.zeros(60, dtype=int)))
    finally:
        os.chmod(ro, 0o700)


def test_an_entry_written_beside_the_command_line_module_reads_back(cache, monkeypatch):
    """A process that had loaded ``hmlkit.studies.__main__`` (the CLI, or a test of it) wrote
    entries its readers refused; only kit modules a fit can run are recorded."""
    import types

    main = types.ModuleType("hmlkit.studies.__main__")
    main.__file__ = "__main__.py"
    monkeypatch.setitem(sys.modules, "hmlkit.studies.__main__", main)
    data = _data()
    c = Counter(np.arange(60) % 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            fitcache.cached_labels("m", {}, data, 3, 0, c)
    assert c.calls == 1
