"""The study runner's ownership of its files and processes: unknown --set parameters fail
before anything runs, files are world-readable and written atomically, no temporary file
outlives a run, the executed notebook is replaced only on success, a stopped run stops its
workers and kernels and keeps the previous results, and profiles do not share results."""
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hmlkit.studies import saving
from hmlkit.studies import runner
from hmlkit.studies.__main__ import main as cli

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def umask022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _tiny_notebook(path, body):
    """A study-like notebook: the runner's parameters, then ``body`` cells."""
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell('profile = "quick"\nresults_dir = "results"\nfigures_dir = "figures"\n'
                                       'n_jobs = 1\nfail = False')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params] + [nbformat.v4.new_code_cell(b) for b in body]
    nbformat.write(nb, path)


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """Studies ``tiny`` (writes results/tiny.txt and figures/tiny.png atomically, fails if
    ``fail``) runnable by ``runner.run`` in this process and its forked workers."""
    pytest.importorskip("papermill")
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    _tiny_notebook(nbdir / "tiny.ipynb", [
        "from hmlkit.studies.saving import write_text_atomic\n"
        "assert not fail, 'asked to fail'\n"
        "write_text_atomic('result', f'{results_dir}/tiny.txt')\n"
        "write_text_atomic('figure', f'{figures_dir}/tiny.png')"])
    monkeypatch.setattr(runner, "notebook_path", lambda name: nbdir / f"{name}.ipynb")
    monkeypatch.setattr(runner, "check_study", lambda name: name)
    return tmp_path


def _temps(*dirs):
    return [p for d in dirs if Path(d).is_dir() for p in Path(d).rglob(".*.tmp*")]


# ------------------------------------------------------------------ (1) unknown parameters
def test_unknown_set_parameter_is_an_error_before_anything_runs(tmp_path, capsys):
    """A typo such as ``--set n_estimator=500`` used to run with the default n_estimators
    (papermill only warns) and overwrite the results; now it fails at once, naming the bad
    parameter and the valid ones."""
    r = tmp_path / "r"
    with pytest.raises(ValueError, match=r"unknown parameter 'n_estimator' for study table5_abstractness; "
                                         r"its parameters are: .*n_estimators"):
        runner.run(["table5_abstractness"], profile="quick", results_dir=r, parameters={"n_estimator": 500})
    assert cli(["run", "table5_abstractness", "--profile", "quick", "--results-dir", str(r),
                "--set", "bogus_param=1"]) == 2
    assert "unknown parameter 'bogus_param'" in capsys.readouterr().err
    # a parameter every study has is fine; one only table6_8 has is not, when all run
    assert "datasets" in runner.notebook_parameters("table5_abstractness")
    with pytest.raises(ValueError, match="'gc_clusters' for study table1_trecvid_clustering"):
        runner.run(None, profile="quick", results_dir=r, parameters={"seed": 1, "gc_clusters": 3})
    assert not r.exists()  # nothing started


def test_a_relative_data_path_is_from_where_the_command_runs(tmp_path, monkeypatch):
    """``--set dataset=mine.npz`` was looked up in the repository, where the notebooks run, while
    ``--results-dir`` beside it was taken from the current folder; both are now. Names stay names."""
    seen = {}

    def fake_run(names, parameters=None, **kw):
        seen.update(parameters)
        return []

    monkeypatch.setattr(runner, "run", fake_run)
    monkeypatch.chdir(tmp_path)
    assert cli(["run", "table1_trecvid_clustering", "--set", "dataset=mine.npz", "--set", "seed=1",
                "--set", "completion_datasets=['corel5k', 'sub/b.arff']"]) == 0
    assert seen == {"dataset": str(tmp_path / "mine.npz"), "seed": 1,
                    "completion_datasets": ["corel5k", str(tmp_path / "sub" / "b.arff")]}
    cli(["run", "--set", "dataset=trecvid", "--set", f"datasets={str(tmp_path / 'x.npz')!r}"])
    assert seen["dataset"] == "trecvid" and seen["datasets"] == str(tmp_path / "x.npz")


# ------------------------------------------------------------------ (2) modes, temporaries
def test_results_figures_and_report_are_world_readable(tmp_path, umask022):
    """mkstemp's 0600 used to survive the rename: results, figures and REPORT.md were
    unreadable to anyone else."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import xarray as xr

    from hmlkit.studies.report import write_report

    nc = saving.write_dataset_atomic(xr.Dataset({"a": ("x", [1.0, 2.0])}), tmp_path / "r" / "a.nc")
    fig = plt.figure()
    png = saving.save_figure_atomic(fig, tmp_path / "f" / "a.png")
    plt.close(fig)
    txt = saving.write_text_atomic("hello", tmp_path / "r" / "a.txt")
    rep, _ = write_report(tmp_path / "r", tmp_path / "f", names=["table5_abstractness"])
    for p in (nc, png, txt, rep):
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, p
    old = os.umask(0o077)  # the umask is respected, as by open()
    try:
        assert stat.S_IMODE(saving.write_text_atomic("x", tmp_path / "private.txt").stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_stale_temporary_files_are_removed_by_the_next_save(tmp_path):
    """A kernel killed during save left a 0-byte ``.NAME.nc.XXXX.tmp`` that no later run
    removed. The next save of that file removes temporaries whose writer is gone; one of
    a live writer is left alone."""
    r = tmp_path / "results"
    r.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        old_style = r / ".table1.nc.k3j_x9q2.tmp"       # as written before pids were in the name
        killed = r / f".table1.nc.{dead.pid}-abcd1234.tmp"
        writing = r / f".table1.nc.{live.pid}-abcd1234.tmp"
        other = r / f".table5.nc.{dead.pid}-abcd1234.tmp"
        for p in (old_style, killed, writing, other):
            p.write_bytes(b"")
        saving.write_text_atomic("new", r / "table1.nc")
        assert (r / "table1.nc").read_text() == "new"
        assert sorted(p.name for p in _temps(r)) == sorted([writing.name, other.name])
        # the runner's sweep at the end of a run: every dead writer's file, any target
        removed = saving.remove_stale_temps(r)
        assert [p.name for p in removed] == [other.name] and writing.exists()
        assert saving.remove_stale_temps(r, dead_pids=[live.pid]) == [writing]
    finally:
        live.kill()
        live.wait()


# ------------------------------------------------------------------ (3) executed notebook
def test_executed_notebook_is_replaced_only_on_success(tiny, umask022):
    """papermill writes its output after every cell: a failed (or killed) run used to leave
    a half-run executed notebook in place of the previous one."""
    ex = tiny / "results" / "executed"
    ex.mkdir(parents=True)
    prev = ex / "tiny.ipynb"
    prev.write_bytes(b"previous executed notebook")
    res = runner.run(["tiny"], profile="quick", results_dir=tiny / "results", figures_dir=tiny / "figures",
                     parameters={"fail": True}, report=False, log=lambda *a: None, cwd=tiny)
    assert not res[0].ok and "asked to fail" in res[0].error
    assert prev.read_bytes() == b"previous executed notebook"
    assert not (tiny / "results" / "tiny.txt").exists()
    assert not _temps(tiny)
    # the failed run's notebook is kept beside it, with the traceback, and named in the error
    failed = ex / "tiny.failed.ipynb"
    assert str(failed) in res[0].error
    assert b"AssertionError" in failed.read_bytes() and b"asked to fail" in failed.read_bytes()
    res = runner.run(["tiny"], profile="quick", results_dir=tiny / "results", figures_dir=tiny / "figures",
                     report=False, log=lambda *a: None, cwd=tiny)
    assert res[0].ok, res[0].error
    assert b"write_text_atomic" in prev.read_bytes()
    assert not failed.exists()  # a later good run removes the stale failure
    for p in (prev, tiny / "results" / "tiny.txt", tiny / "figures" / "tiny.png"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, p
    assert not _temps(tiny)


# ------------------------------------------------------------------ (5) profiles
def test_non_default_profile_writes_to_its_own_directories(tiny):
    """``make studies PROFILE=quick`` used to overwrite the standard results and figures."""
    assert runner.default_dirs("standard") == (Path("results"), Path("figures"))
    assert runner.default_dirs("quick") == (Path("results/quick"), Path("figures/quick"))
    assert runner.default_dirs("paper") == (Path("results/paper"), Path("figures/paper"))
    (tiny / "results").mkdir()
    (tiny / "results" / "tiny.txt").write_text("standard")
    res = runner.run(["tiny"], profile="quick", report=False, log=lambda *a: None, cwd=tiny)
    assert res[0].ok, res[0].error
    assert (tiny / "results" / "tiny.txt").read_text() == "standard"
    assert (tiny / "results" / "quick" / "tiny.txt").read_text() == "result"
    assert (tiny / "figures" / "quick" / "tiny.png").exists()
    assert (tiny / "results" / "quick" / "executed" / "tiny.ipynb").exists()


# ------------------------------------------------------------------ (4) stopping a run
def _alive(procs):
    import psutil

    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def _stale_socket_folders():
    """Kernel socket folders (``runner.execute_notebook``) whose worker is gone;
    the folders of runs still going on (other tests) are not stale."""
    import glob
    import tempfile

    psutil = pytest.importorskip("psutil")
    out = set()
    for d in glob.glob(os.path.join(tempfile.gettempdir(), "hmlkit-kernel-*-*")):
        pid = os.path.basename(d).split("-")[2]
        if not (pid.isdigit() and psutil.pid_exists(int(pid))):
            out.add(d)
    return out


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stopped_run_stops_its_processes_and_keeps_previous_results(tmp_path, signum):
    """SIGTERM (or SIGINT) to the runner while a quick study's notebook runs: 5 s later no
    process of the run is alive and the previous results, figure, executed notebook and
    REPORT.md are byte-identical, with no temporary file left. The worker and the kernel
    used to run on, finish the notebook and replace the files."""
    psutil = pytest.importorskip("psutil")
    pytest.importorskip("papermill")
    sockets_before = _stale_socket_folders()
    name = "table5_abstractness"
    r, f = tmp_path / "results", tmp_path / "figures"
    (r / "executed").mkdir(parents=True)
    f.mkdir()
    previous = {r / f"{name}.nc": b"previous result", f / f"{name}.png": b"previous figure",
                r / "executed" / f"{name}.ipynb": b"previous executed notebook",
                r / "REPORT.md": b"previous report"}
    for p, b in previous.items():
        p.write_bytes(b)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    # quick takes 4 s with its 16 trees; 2000 keep the notebook running past the signal
    proc = subprocess.Popen([sys.executable, "-m", "hmlkit.studies", "run", name, "--profile", "quick",
                             "--set", "n_estimators=2000", "--results-dir", str(r), "--figures-dir", str(f)],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        me = psutil.Process(proc.pid)
        deadline = time.time() + 60
        kids = []
        while time.time() < deadline:  # wait until the notebook runs in its kernel
            kids = me.children(recursive=True)
            if any("ipykernel" in " ".join(k.cmdline()) for k in _alive(kids)) and _temps(r):
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        else:
            pytest.fail("the notebook's kernel did not start within 60 s")
        time.sleep(1.0)
        kids = me.children(recursive=True)
        proc.send_signal(signum)
        time.sleep(5.0)
        assert not _alive(kids), [(k.pid, k.cmdline()) for k in _alive(kids)]
        # the runner itself exits by then on an idle machine; under load (a fresh clone's suite
        # beside other work) its interpreter's shutdown took longer, after "stopped" was printed
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + signum, (out, err)
        assert b"previous results kept" in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for p, b in previous.items():
        assert p.read_bytes() == b, p
    assert not _temps(r, f)
    assert _stale_socket_folders() <= sockets_before  # the kernels' socket folders are gone too
    time.sleep(2.0)  # nothing comes back later to replace them
    for p, b in previous.items():
        assert p.read_bytes() == b, p


def test_a_successful_run_prints_no_kernel_noise(tmp_path):
    """The kernels talk over IPC socket files in a temporary folder
    (removed afterwards), so ipykernel prints no unencrypted-TCP warning."""
    import subprocess
    import sys

    before = _stale_socket_folders()
    out = subprocess.run([sys.executable, "-m", "hmlkit.studies", "run", "table4_hierarchy_depth", "--profile",
                          "quick", "--jobs", "1", "--set", "n_estimators=2", "--results-dir", str(tmp_path / "r"),
                          "--figures-dir", str(tmp_path / "f"), "--executed-dir", str(tmp_path / "e")],
                         capture_output=True, text=True, timeout=600)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert "1/1 studies ok" in text
    assert "without encryption" not in text and "KeyboardInterrupt" not in text, text
    assert _stale_socket_folders() <= before
    # where the time went: the study's CPU (its kernel's, at least the imports') and the run's
    study = re.search(r"table4_hierarchy_depth: ok \([\d.]+s, CPU (\d+)s, elapsed", text)
    total = re.search(r"CPU (\d+)s on \d+ cores \(.*\); by study: table4_hierarchy_depth (\d+)s", text)
    assert study and total, text
    assert int(study.group(1)) == int(total.group(2)) >= 1
    assert int(total.group(1)) >= int(study.group(1))


def test_children_cpu_counts_a_study_kernel_and_the_task_processes_it_waited_for():
    """A study's CPU is read from the worker's ended children: its kernel, and through
    the kernel the task processes the kernel waited for (real_corel's pool)."""
    import subprocess
    import sys

    from hmlkit.studies.runner import children_cpu_seconds

    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass\n"
    kernel = burn + f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {burn!r}], check=True)\n"
    c0 = children_cpu_seconds()
    subprocess.run([sys.executable, "-c", kernel], check=True)
    assert children_cpu_seconds() - c0 >= 1.2  # the child's 0.6 s and its own child's 0.6 s


def test_the_runners_kernel_manager_does_not_interrupt_a_kernel_it_shuts_down():
    """jupyter_client sends SIGINT before every shutdown request, and a kernel
    caught in a message handler then logs "KeyboardInterrupt caught in kernel" at ERROR
    after a notebook that ran to the end (once in a standard `make studies` run). The
    runner's kernel manager shuts down without the interrupt; the library's does not."""
    import asyncio
    import shutil
    import tempfile

    from jupyter_client.manager import AsyncKernelManager

    async def signals_at_shutdown(cls):
        km = cls(kernel_name="python3")
        sent, send = [], km._async_signal_kernel

        async def record(signum):
            sent.append(signum)
            await send(signum)

        km._async_signal_kernel = record
        await km.start_kernel()
        await km.shutdown_kernel()
        return sent

    sockets = tempfile.mkdtemp(prefix="hk-")  # short: a socket path has at most 107 bytes
    try:
        assert signal.SIGINT in asyncio.run(signals_at_shutdown(AsyncKernelManager))
        assert signal.SIGINT not in asyncio.run(signals_at_shutdown(runner._ipc_kernel_manager(sockets)))
    finally:
        shutil.rmtree(sockets, ignore_errors=True)


def test_a_run_says_which_methods_are_unavailable_before_it_starts(tmp_path, monkeypatch):
    """Where PyTorch cannot be installed, a run says up front that DCCA / DCCAE
    will be missing (their rows say "unavailable", the claims against them "not checked")."""
    from hmlkit.baselines import deep

    monkeypatch.setattr(deep, "torch_available", lambda name: (False, "PyTorch is not installed"))
    missing = dict(runner.unavailable_methods())
    assert {"dcca", "dccae"} <= set(missing) and "kmeans" not in missing

    class NoPool:  # stop the run where the notebooks would start
        def __init__(self, *a, **k):
            raise RuntimeError("no notebooks in this test")

    monkeypatch.setattr(runner, "ProcessPoolExecutor", NoPool)
    lines = []
    with pytest.raises(RuntimeError, match="no notebooks"):
        runner.run(["table5_abstractness"], profile="quick", results_dir=tmp_path / "r",
                   figures_dir=tmp_path / "f", log=lines.append)
    said = "\n".join(lines)
    assert "method dcca is unavailable (PyTorch is not installed)" in said and "'not checked'" in said
