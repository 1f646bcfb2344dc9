"""The package's numba cache is dropped when any source changes (``hmlkit._numba_cache``)."""
import os

import pytest

from hmlkit._numba_cache import STAMP, refresh, sources_digest


def _tree(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("import numba\nx = 1\n")
    (tmp_path / "sub" / "b.py").write_text("import numba\ny = 2\n")
    (tmp_path / "sub" / "plain.py").write_text("z = 1\n")
    for f in ("__pycache__/a.f-1.py311.nbi", "__pycache__/a.f-1.py311.1.nbc", "sub/__pycache__/b.g-3.py311.nbi"):
        p = tmp_path / f
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(b"cache")


def _caches(root):
    return sorted(p.name for p in root.rglob("*.nb*"))


def test_cache_kept_while_sources_are_unchanged_and_dropped_when_one_changes(tmp_path):
    _tree(tmp_path)
    assert refresh(tmp_path) == 3  # no stamp yet: caches of unknown sources go
    assert (tmp_path / "__pycache__" / STAMP).read_text() == sources_digest(tmp_path)
    (tmp_path / "__pycache__" / "a.f-1.py311.nbi").write_bytes(b"new")
    assert refresh(tmp_path) == 0 and _caches(tmp_path) == ["a.f-1.py311.nbi"]
    # an edit of another file than the cached function's drops it too
    (tmp_path / "sub" / "plain.py").write_text("z = 2\n")  # no numba: no kernel, the cache stays
    assert refresh(tmp_path) == 0 and _caches(tmp_path) == ["a.f-1.py311.nbi"]
    (tmp_path / "sub" / "b.py").write_text("import numba\ny = 3\n")
    assert refresh(tmp_path) == 1 and _caches(tmp_path) == []
    assert refresh(tmp_path) == 0
    # a new file, or a renamed one, changes the digest
    d = sources_digest(tmp_path)
    os.rename(tmp_path / "a.py", tmp_path / "c.py")
    assert sources_digest(tmp_path) != d


def test_unwritable_package_is_left_alone(tmp_path):
    _tree(tmp_path)
    os.chmod(tmp_path / "__pycache__", 0o500)
    try:
        if os.access(tmp_path / "__pycache__", os.W_OK):
            pytest.skip("running as root: file modes do not stop writes")
        assert refresh(tmp_path) == 0
        assert len(_caches(tmp_path)) == 3
    finally:
        os.chmod(tmp_path / "__pycache__", 0o700)



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


def test_a_cache_in_numba_cache_dir_is_refreshed_too(tmp_path):
    """With NUMBA_CACHE_DIR set numba caches outside the package, where the refresh did not
    look: a kernel kept inlining its callee's old code (3 after the callee said 4)."""
    import subprocess
    import sys
    import textwrap

    from hmlkit._numba_cache import cache_folders

    pkg, cache = tmp_path / "pk", tmp_path / "nc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "b.py").write_text("import numba\n@numba.njit(cache=True)\ndef callee():\n    return 3\n")
    (pkg / "a.py").write_text("import numba\nfrom .b import callee\n@numba.njit(cache=True)\ndef k():\n"
                              "    return callee()\n")
    run = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(tmp_path)!r})
        from hmlkit._numba_cache import refresh
        refresh({str(pkg)!r})
        from pk.a import k
        print(k())
    """)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    out = lambda: subprocess.run([sys.executable, "-c", run], env=env, capture_output=True, text=True,  # noqa: E731
                                 check=True).stdout.strip()
    assert out() == "3"
    assert any(any(f.glob("a.k-*.nbi")) for f in cache_folders(pkg, cache) if f.is_dir())
    (pkg / "b.py").write_text("import numba\n@numba.njit(cache=True)\ndef callee():\n    return 4\n")
    assert out() == "4"


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
