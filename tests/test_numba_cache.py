"""The kit's numba cache (``hmlkit._numba_cache``): in step with every kernel source, healed
when a file is damaged, never emptied by an import."""
import os
import pickle
import shutil
import subprocess
import sys
import textwrap

import pytest

from hmlkit._numba_cache import sources_digest


def _tree(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("import numba\nx = 1\n")
    (tmp_path / "sub" / "b.py").write_text("import numba\ny = 2\n")
    (tmp_path / "sub" / "plain.py").write_text("z = 1\n")
    for f in ("__pycache__/a.f-1.py311.nbi", "__pycache__/a.f-1.py311.1.nbc", "sub/__pycache__/b.g-3.py311.nbi"):
        p = tmp_path / f
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(b"cache")


def test_the_digest_covers_the_sources_that_use_numba(tmp_path):
    _tree(tmp_path)
    d = sources_digest(tmp_path)
    (tmp_path / "sub" / "plain.py").write_text("z = 2\n")  # no numba: no kernel, same digest
    assert sources_digest(tmp_path) == d
    (tmp_path / "sub" / "b.py").write_text("import numba\ny = 3\n")
    assert sources_digest(tmp_path) != d
    d = sources_digest(tmp_path)
    os.rename(tmp_path / "a.py", tmp_path / "c.py")  # a new file, or a renamed one
    assert sources_digest(tmp_path) != d


def _run(code, env=None, cwd=None):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env={**os.environ, **(env or {})},
                         capture_output=True, text=True, timeout=600, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return out


def test_importing_the_kit_never_deletes_cache_files(tmp_path):
    """After an edit of a kernel's source, ``import hmlkit`` (and what a runner's dry run
    imports) leaves every numba cache file in place: it used to remove them all."""
    import hmlkit

    copy = tmp_path / "hmlkit"
    shutil.copytree(os.path.dirname(hmlkit.__file__), copy, ignore=shutil.ignore_patterns("__pycache__"))
    cached = [copy / "forest" / "__pycache__" / "_keys.sort-1.py311.nbi",
              copy / "forest" / "__pycache__" / "_keys.sort-1.py311.1.nbc"]
    for f in cached:
        f.parent.mkdir(exist_ok=True)
        f.write_bytes(b"cache")
    for _ in range(2):  # once as found, once after an edit of a file with kernels
        _run("""
            import hmlkit, hmlkit.studies.runner, hmlkit.warm
            assert hmlkit.__file__.startswith(%r), hmlkit.__file__
            hmlkit.warm.is_warm()
        """ % str(copy), env={"PYTHONPATH": str(tmp_path)}, cwd=tmp_path)
        assert all(f.read_bytes() == b"cache" for f in cached)
        with open(copy / "forest" / "_keys.py", "a") as fh:
            fh.write("\n# edited\n")


_PKG_B = "import numba\n@numba.njit(cache=True)\ndef callee():\n    return %d\n"
_PKG_A = ("import numba\nfrom .b import callee\n"
          "@numba.njit(cache=True)\ndef k():\n    return callee()\n"
          + "".join(f"@numba.njit(cache=True)\ndef k{i}(x):\n    return x + {i}\n" for i in range(6)))
_PKG_RUN = """
    import sys, warnings
    sys.path.insert(0, %r)
    warnings.simplefilter("always")
    from hmlkit._numba_cache import install
    install(%r)
    from pk import a
    kernels = [a.k] + [getattr(a, f"k{i}") for i in range(6)]
    print([a.k()] + [getattr(a, f"k{i}")(1) for i in range(6)])
    print(sum(sum(f.stats.cache_hits.values()) for f in kernels))
"""


def _package(tmp_path, callee=3):
    pkg = tmp_path / "pk"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "b.py").write_text(_PKG_B % callee)
    (pkg / "a.py").write_text(_PKG_A)
    return pkg


@pytest.mark.parametrize("where", ["in the package", "in NUMBA_CACHE_DIR"])
def test_an_edit_of_a_callee_recompiles_its_callers(tmp_path, where):
    """numba keys a cached kernel on its own file only: a kernel kept inlining its callee's
    old code (3 after the callee said 4). The kit's stamp covers every kernel source, so
    numba's own index check sees the change; no file is deleted for it."""
    pkg = _package(tmp_path)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "nc")} if where == "in NUMBA_CACHE_DIR" else {}
    run = lambda: _run(_PKG_RUN % (str(tmp_path), str(pkg)), env=env).stdout.split("\n")  # noqa: E731
    assert run()[0].startswith("[3,")
    assert run()[1] == "7"  # all seven loaded from the cache
    folder = tmp_path / "nc" if env else pkg / "__pycache__"
    assert any(folder.rglob("a.k-*.nbi"))
    (pkg / "b.py").write_text(_PKG_B % 4)
    out = run()
    assert out[0].startswith("[4,") and out[1] == "0"


class Payload:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_damaged_cache_files_are_named_removed_and_recompiled(tmp_path):
    """A truncated, empty or garbled index or data file, or an index naming a file outside
    its kernel's, fails no call: each is named in one warning, removed with its index, and
    its kernel compiled afresh; the next process loads the new files silently."""
    pkg = _package(tmp_path)
    code = _PKG_RUN % (str(tmp_path), str(pkg))
    first = _run(code)
    cache = pkg / "__pycache__"

    def files(kernel):
        (index,) = cache.glob(f"a.{kernel}-*.nbi")
        (data,) = cache.glob(f"a.{kernel}-*.1.nbc")
        return index, data

    damaged = {}
    for kernel, which, how in (("k0", 0, "empty"), ("k1", 0, "truncated"), ("k2", 0, "garbled"),
                               ("k3", 1, "empty"), ("k4", 1, "truncated"), ("k5", 1, "foreign")):
        f = files(kernel)[which]
        raw = f.read_bytes()
        if how == "empty":
            f.write_bytes(b"")
        elif how == "truncated":
            f.write_bytes(raw[: len(raw) // 2])
        elif how == "garbled":
            f.write_bytes(b"\x80\x05garbage" * 10)
        else:  # a well-formed index sending numba to unpickle a planted file elsewhere
            index = files(kernel)[0]
            with open(index, "rb") as fh:
                version = pickle.load(fh)
                stamp, overloads = pickle.loads(fh.read())
            (tmp_path / "planted.nbc").write_bytes(pickle.dumps(Payload(tmp_path / "pwned")))
            with open(index, "wb") as fh:
                pickle.dump(version, fh)
                fh.write(pickle.dumps((stamp, {key: "../../planted.nbc" for key in overloads})))
            f = index
        damaged[kernel] = f
    second = _run(code)
    assert second.stdout == first.stdout.replace("\n0\n", "\n1\n")  # same values; k, loaded, the one hit
    assert not (tmp_path / "pwned").exists()
    warned = [line for line in second.stderr.splitlines() if "NumbaCacheWarning" in line]
    assert len(warned) == len(damaged), second.stderr
    for kernel, f in damaged.items():
        assert sum(str(f) in line for line in warned) == 1, (kernel, second.stderr)
        assert all(p.stat().st_size > 0 for p in files(kernel))  # written afresh
    third = _run(code)
    assert third.stdout.split("\n")[1] == "7" and "NumbaCacheWarning" not in third.stderr


def test_a_damaged_cache_file_of_a_kit_kernel_does_not_break_a_fit(tmp_path):
    """A kit kernel's truncated data file (the index's damage: the test above)."""
    code = """
        import warnings, numpy as np, scipy.sparse as sp
        warnings.simplefilter("always")
        from hmlkit.metrics import completion_scores
        rng = np.random.default_rng(0)
        obs = sp.csr_matrix((rng.random((30, 8)) < 0.3).astype(np.uint8))
        hid = sp.csr_matrix(((rng.random((30, 8)) < 0.2) & (obs.toarray() == 0)).astype(np.uint8))
        print(completion_scores(rng.random((30, 8)), obs, hid))
    """
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "nc")}
    first = _run(code, env=env)
    (index,) = (tmp_path / "nc").rglob("metrics._cumulative_hits-*.nbi")
    (data,) = (tmp_path / "nc").rglob("metrics._cumulative_hits-*.1.nbc")
    data.write_bytes(data.read_bytes()[:100])
    out = _run(code, env=env)
    assert out.stdout == first.stdout
    warned = [line for line in out.stderr.splitlines() if "NumbaCacheWarning" in line]
    assert len(warned) == 1 and str(data) in warned[0], out.stderr
    assert index.stat().st_size > 0 and data.stat().st_size > 100  # compiled and stored afresh


def test_warm_calls_a_kernel_of_every_module_that_has_them():
    """``hmlkit.warm`` calls each module's kernels (a module whose estimators it skipped would
    have no compiled or cache-loaded signature), and reports the time of each part."""
    import importlib

    from numba.core.registry import CPUDispatcher

    from hmlkit.warm import compile_kernels

    parts = compile_kernels()
    assert list(parts) == ["forest", "clustering", "completion", "cosine", "baselines"]
    # (forest._split's kernels are called only from grow_tree's, which holds their code)
    for name in ("forest._grow", "forest._route", "forest._keys", "primitives.counting",
                 "affinity._kernels", "affinity._cosine", "affinity._graph", "complete._kernels", "baselines.ccforest",
                 "baselines.classic", "baselines.ghfart", "baselines.mmc", "features", "metrics"):
        mod = importlib.import_module(f"hmlkit.{name}")
        kernels = [f for f in vars(mod).values() if isinstance(f, CPUDispatcher)]
        assert kernels and any(f.signatures for f in kernels), name
    with pytest.raises(ValueError, match="unknown part"):
        compile_kernels(("forest", "spectral"))
    # and every kernel can be cached: numba compiles one that uses dynamic globals (an
    # AffProp kernel asked numba.get_num_threads() for a while) in every process again,
    # with a warning nobody sees in a notebook run by papermill
    import pkgutil

    import hmlkit

    uncachable = []
    for info in pkgutil.walk_packages(hmlkit.__path__, "hmlkit."):
        if info.name.startswith("hmlkit.studies"):
            continue  # notebooks' helpers: no kernel there
        mod = importlib.import_module(info.name)
        for name, f in vars(mod).items():
            if isinstance(f, CPUDispatcher) and f.__module__ == info.name:
                uncachable += [f"{info.name}.{name}" for cres in f.overloads.values()
                               if cres.library.has_dynamic_globals]
    assert uncachable == []


def test_the_uncachable_kernel_check_sees_one():
    """The check above reads what numba's cache refuses: a kernel asking the thread count."""
    import numba

    @numba.njit
    def asks():
        return numba.get_num_threads()

    @numba.njit
    def plain(x):
        return x + 1

    asks(), plain(1)
    assert [c.library.has_dynamic_globals for c in asks.overloads.values()] == [True]
    assert [c.library.has_dynamic_globals for c in plain.overloads.values()] == [False]


def test_warm_stamp_says_the_current_sources_were_compiled(tmp_path):
    """A run skips ``hmlkit.warm`` only after a warm of the same sources: an edit of a
    file with kernels, or a stamp in another cache folder, does not count."""
    from hmlkit._numba_cache import is_warm, mark_warm

    _tree(tmp_path)
    assert not is_warm(tmp_path)
    mark_warm(tmp_path)
    assert is_warm(tmp_path)
    assert not is_warm(tmp_path, cache_dir=str(tmp_path / "elsewhere"))
    (tmp_path / "sub" / "plain.py").write_text("z = 2\n")  # no kernel in it
    assert is_warm(tmp_path)
    (tmp_path / "sub" / "b.py").write_text("import numba\ny = 3\n")
    assert not is_warm(tmp_path)


def test_a_run_warms_before_its_studies_start_unless_warm(tmp_path, monkeypatch):
    """The runner compiles the kernels before starting several notebooks (which would
    each compile them), and skips it once the current sources were warmed."""
    from hmlkit import warm
    from hmlkit.studies import runner

    calls = []
    monkeypatch.setattr(warm, "warm_in_processes", lambda groups=warm.GROUPS: calls.append(groups) or {})
    monkeypatch.setattr(warm, "is_warm", lambda: False)
    logged = []
    runner._warm(True, logged.append)
    assert calls == [warm.GROUPS] and "compiling the kit's numba kernels" in logged[0]  # said before, not only after
    assert "numba kernels compiled or loaded" in logged[1]
    runner._warm(False, logged.append)  # one process at a time: nothing side by side
    assert [runner._many_processes(n) for n in (None, 1, 2, -1, True, "2")] == [False, False, True, True, False,
                                                                                False]
    monkeypatch.setattr(warm, "is_warm", lambda: True)
    runner._warm(True, logged.append)
    assert len(calls) == 1 and len(logged) == 2


def test_a_stop_while_warming_stops_the_compilers(tmp_path):
    """Ctrl-C (or the runner's SIGTERM, raised as RunStopped) while `hmlkit.warm` compiles
    in its child processes: the children were left compiling after the run had ended."""
    import signal
    import subprocess
    import sys
    import time

    psutil = pytest.importorskip("psutil")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cold"))  # a cold cache: compiling takes a while
    # Ctrl-C as at a terminal: a suite started in the background of a script (`make test &`)
    # has SIGINT ignored, which its children inherit; the parent then compiled on to the end
    # and the test passed or failed by how long that took
    code = ("import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "from hmlkit import warm; warm.warm_in_processes((('forest',),))")
    parent = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        deadline, children = time.time() + 60, []
        while not children and time.time() < deadline:
            children = psutil.Process(parent.pid).children()
            time.sleep(0.2)
        assert children, "the warm child never started"
        time.sleep(1.0)
        parent.send_signal(signal.SIGINT)
        assert parent.wait(timeout=60) != 0  # stopped by the interrupt, not compiled to its end
        gone, alive = psutil.wait_procs(children, timeout=10)
        assert not alive, [p.pid for p in alive]
    finally:
        parent.kill()
