"""The study runner under hostile conditions: a stop at any moment leaves a
study's results, figure, executed notebook and REPORT.md all from one run; a full disk
reports the study's own error; bad folders, --jobs values, unreadable results and bad
arguments of ``python -m hmlkit.baselines.run`` give clear errors; nothing stray is left
(staging folders, temporary files, the kernel's connection file)."""
import errno
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from hmlkit.studies import runner
from hmlkit.studies.__main__ import main as cli

REPO = Path(__file__).resolve().parent.parent
STUDY = "table4_hierarchy_depth"  # the name the tiny notebook below stands in for


def _notebook(path, body, params):
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell(params)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell] + [nbformat.v4.new_code_cell(b) for b in body]
    nbformat.write(nb, path)


@pytest.fixture
def fake_study(tmp_path, monkeypatch):
    """A tiny, fast notebook run in place of study ``STUDY`` (in this process and its forked
    workers): it saves a results file holding its seed, waits ``pause`` s, saves a figure
    holding its seed, waits again; fails if ``fail``."""
    pytest.importorskip("papermill")
    nb = tmp_path / "notebooks" / f"{STUDY}.ipynb"
    nb.parent.mkdir()
    _notebook(nb, [
        "import time\nimport xarray as xr\nfrom hmlkit.studies.saving import write_dataset_atomic, write_text_atomic\n"
        "assert not fail, 'asked to fail'\n"
        "write_dataset_atomic(xr.Dataset(attrs={'seed': seed, 'profile': profile}), f'{results_dir}/" + STUDY + ".nc')\n"
        "time.sleep(pause)\n"
        "write_text_atomic(f'figure of seed {seed}', f'{figures_dir}/" + STUDY + ".png')\n"
        "time.sleep(pause)"],
        'profile = "quick"\nresults_dir = "results"\nfigures_dir = "figures"\nn_jobs = 1\nseed = 0\n'
        'pause = 0.0\nfail = False')
    monkeypatch.setattr(runner, "notebook_path", lambda name: nb)
    return tmp_path


def _stray(*dirs):
    """Temporary files and staging folders (anything named ``.*.tmp*``) under ``dirs``."""
    return [p for d in dirs if Path(d).is_dir() for p in Path(d).rglob(".*.tmp*")]


def _seeds(r, f, name=STUDY):
    """The seed each of the four files of study ``name`` comes from (None: missing)."""
    import xarray as xr

    nc, png = r / f"{name}.nc", f / f"{name}.png"
    ipynb, rep = r / "executed" / f"{name}.ipynb", r / "REPORT.md"
    out = {}
    if nc.exists():
        with xr.open_dataset(nc) as ds:
            out["nc"] = int(ds.attrs["seed"])
    if png.exists() and png.read_bytes().startswith(b"figure of seed"):
        out["png"] = int(png.read_text().split()[-1])
    if ipynb.exists():
        src = "".join("".join(c["source"]) for c in json.loads(ipynb.read_text())["cells"]
                      if "injected-parameters" in c["metadata"].get("tags", []))
        out["ipynb"] = int(re.search(r"^seed = (\d+)", src, re.M).group(1))
    if rep.exists():
        section = rep.read_text().split(f"## {name}\n")[1].split("\n## ")[0]
        m = re.search(r"seed (\d+),", section)
        out["report"] = int(m.group(1)) if m else None
    return out


class _SignalWhen(threading.Thread):
    """Sends SIGINT to this process the first time ``cond()`` holds (within ``timeout``)."""

    def __init__(self, cond, timeout=120.0):
        super().__init__(daemon=True)
        self.cond, self.timeout, self.sent, self.done = cond, timeout, False, False

    def run(self):
        end = time.time() + self.timeout
        while not self.done and time.time() < end:
            if self.cond():
                os.kill(os.getpid(), signal.SIGINT)
                self.sent = True
                return
            time.sleep(0.01)


@pytest.fixture
def private_tmp(monkeypatch):
    """A TMPDIR of the test's own, for the runner's workers (forked: they inherit it)."""
    d = Path(tempfile.mkdtemp(prefix="hk"))  # short: the kernels' socket paths live under it
    monkeypatch.setenv("TMPDIR", str(d))
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    yield d
    import shutil

    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def no_sigint():
    """A SIGINT that comes after ``runner.run`` returned does nothing (the runner's own
    handler is there while it runs)."""
    old = signal.signal(signal.SIGINT, lambda *a: None)
    yield
    signal.signal(signal.SIGINT, old)


def _newer(root, pattern, t0):
    def cond():
        return any(p.stat().st_mtime >= t0 for p in Path(root).rglob(pattern) if p.exists())
    return cond


def _in_place(path, t0):
    try:
        return path.stat().st_mtime >= t0
    except FileNotFoundError:
        return False


# ----------------------------------------------------------- bad 1: a stop at any moment
def test_a_stop_at_any_moment_leaves_all_four_files_from_one_run(fake_study, no_sigint, private_tmp):
    """A stop right after the notebook saved its results replaced the
    .nc (and .png) while the executed notebook and REPORT.md stayed from the previous run.
    SIGINT at several points of a run (the results saved, the figure saved, the executed
    notebook in place, in the middle of the commit), then a check that the results,
    figure, executed notebook and REPORT.md carry one seed, and nothing stray is left:
    no temporary file or staging folder in the results, nor (weak case) the kernel's
    connection file (it holds the kernel's key) in TMPDIR."""
    r, f = fake_study / "results", fake_study / "figures"
    kw = dict(profile="quick", results_dir=r, figures_dir=f, cwd=fake_study, log=lambda *a: None)
    res = runner.run([STUDY], parameters={"seed": 1}, **kw)
    assert res[0].ok, res[0].error
    assert _seeds(r, f) == {"nc": 1, "png": 1, "ipynb": 1, "report": 1}
    points = {2: lambda t0: _newer(r, f"{STUDY}.nc", t0),            # just after the results' save
              3: lambda t0: _newer(f, f"{STUDY}.png", t0),           # just after the figure's save
              4: lambda t0: lambda: _in_place(r / "executed" / f"{STUDY}.ipynb", t0)}  # the notebook in place
    for seed, when in points.items():
        t0 = time.time() - 0.01
        watch = _SignalWhen(when(t0))
        watch.start()
        try:
            runner.run([STUDY], parameters={"seed": seed, "pause": 1.0}, **kw)
        except runner.RunStopped:
            pass
        finally:
            watch.done = True
            watch.join()
        assert watch.sent, f"point {seed} never came"
        seeds = _seeds(r, f)
        assert len(set(seeds.values())) == 1 and len(seeds) == 4, (seed, seeds)
        assert not _stray(r, f), _stray(r, f)
        assert not list(private_tmp.iterdir()), list(private_tmp.rglob("*"))  # e.g. kernel-*.json
    # a signal in the middle of the commit (after its first rename) waits for its end
    real_replace, me = os.replace, os.getpid()

    def replace_then_signal(src, dst):
        real_replace(src, dst)
        if os.getpid() == me and ".stage" in str(src):
            os.kill(me, signal.SIGINT)

    os.replace = replace_then_signal
    try:
        with pytest.raises(runner.RunStopped) as stopped:
            runner.run([STUDY], parameters={"seed": 5}, **kw)
    finally:
        os.replace = real_replace
    assert stopped.value.saved == [STUDY]
    assert _seeds(r, f) == {"nc": 5, "png": 5, "ipynb": 5, "report": 5}
    assert not _stray(r, f)


def _pids_alive(pids):
    import psutil

    return [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]


@pytest.mark.slow  # a real study: 20 s on an idle 2-core machine
@pytest.mark.parametrize("signum", [signal.SIGINT])
def test_the_command_stopped_right_after_a_real_study_saves_keeps_one_run(tmp_path, signum):
    """The same, as reported, on a real study through the command: the signal as
    soon as the study's results file is written. The results, figure, executed notebook
    and REPORT.md are all the previous ones or all the new run's (seed 11); no temporary
    file or staging folder is left, nor the kernel's connection file (it holds the
    kernel's key) in TMPDIR (weak case)."""
    pytest.importorskip("papermill")
    psutil = pytest.importorskip("psutil")
    r, f = tmp_path / "R", tmp_path / "F"
    (r / "executed").mkdir(parents=True)
    f.mkdir()
    previous = {r / f"{STUDY}.nc": b"previous result", f / f"{STUDY}.png": b"previous figure",
                r / "executed" / f"{STUDY}.ipynb": b"previous executed notebook", r / "REPORT.md": b"previous report"}
    for p, b in previous.items():
        p.write_bytes(b)
        os.utime(p, (time.time() - 60, time.time() - 60))
    tmpdir = Path(tempfile.mkdtemp(prefix="hk"))  # short: the kernel's socket paths live under it
    env = {**os.environ, "TMPDIR": str(tmpdir),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    t0 = time.time() - 1.0
    proc = subprocess.Popen([sys.executable, "-m", "hmlkit.studies", "run", STUDY, "--profile", "quick",
                             "--jobs", "1", "--set", "n_estimators=2", "--set", "seed=11", "--results-dir", str(r),
                             "--figures-dir", str(f)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        saved = _newer(r, f"{STUDY}.nc", t0)
        deadline = time.time() + 600
        while not saved():
            assert proc.poll() is None, proc.communicate()
            assert time.time() < deadline, "the study did not save its results within 600 s"
            time.sleep(0.01)
        kids = [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signum, err
    assert b"results" in err and b"kept" in err, err
    time.sleep(1.0)
    assert not _pids_alive(kids)
    now = {p: p.read_bytes() for p in previous}
    if any(now[p] == b for p, b in previous.items()):  # stopped before the commit: all previous
        assert now == previous, {p.name: now[p][:40] for p in now}
    else:  # the commit came first: all new, from seed 11
        import xarray as xr

        with xr.open_dataset(r / f"{STUDY}.nc") as ds:
            assert int(ds.attrs["seed"]) == 11
        assert "seed = 11" in now[r / "executed" / f"{STUDY}.ipynb"].decode()
        assert "seed 11," in now[r / "REPORT.md"].decode()
    assert not _stray(r, f), _stray(r, f)
    left = list(tmpdir.rglob("*"))
    assert not [p for p in left if p.suffix == ".json"], left  # kernel-*.json / tmp*.json
    assert not left, left
    tmpdir.rmdir()


# ----------------------------------------------------------- bad 2: a full disk
def test_a_full_disk_reports_the_studys_own_error_and_no_empty_notebook(fake_study, monkeypatch):
    """With the disk full, the failed notebook could not be copied: the
    run reported the ENOSPC of that copy (not the study's error) and sent the user to a
    0-byte ``executed/<study>.failed.ipynb``. Now the study's own error comes first, then
    that its notebook could not be written; no partial file is left or pointed at."""
    from papermill.iorw import LocalHandler

    real_write = LocalHandler.write

    def full_disk(self, buf, path):  # the disk fills as the study fails
        if "asked to fail" in buf:
            with open(path, "w") as fh:
                fh.write(buf[:10])  # a partial write, then ENOSPC
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
        return real_write(self, buf, path)

    monkeypatch.setattr(LocalHandler, "write", full_disk)
    r, f = fake_study / "results", fake_study / "figures"
    (r / "executed").mkdir(parents=True)
    (r / "executed" / f"{STUDY}.ipynb").write_text("previous executed notebook")
    res = runner.run([STUDY], profile="quick", results_dir=r, figures_dir=f, cwd=fake_study,
                     parameters={"fail": True}, report=False, log=lambda *a: None)
    err = res[0].error
    assert not res[0].ok
    assert err.startswith("AssertionError: asked to fail"), err
    assert "could not be written" in err and "No space left on device" in err, err
    failed = r / "executed" / f"{STUDY}.failed.ipynb"
    assert not failed.exists() and str(failed) not in err
    assert (r / "executed" / f"{STUDY}.ipynb").read_text() == "previous executed notebook"
    assert not _stray(r, f) and not (r / f"{STUDY}.nc").exists()


def test_a_failed_study_keeps_its_notebook_by_a_rename(fake_study):
    """The failed notebook is moved, not copied (a copy needs room a full disk lacks)."""
    r, f = fake_study / "results", fake_study / "figures"
    res = runner.run([STUDY], profile="quick", results_dir=r, figures_dir=f, cwd=fake_study,
                     parameters={"fail": True}, report=False, log=lambda *a: None)
    failed = r / "executed" / f"{STUDY}.failed.ipynb"
    assert res[0].error.startswith("AssertionError: asked to fail") and str(failed) in res[0].error
    assert b"asked to fail" in failed.read_bytes()
    assert not _stray(r, f)


# ----------------------------------------------------------- weak: folders
def _read_only_folder(tmp_path):
    """A folder this process cannot write in: chmod 0555, or for root (whom permission
    bits do not stop) a folder of a read-only file system; skip if there is none."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    for d in (ro, Path("/sys/kernel")):
        try:
            fd, p = tempfile.mkstemp(dir=d)
            os.close(fd)
            os.unlink(p)
        except OSError:
            return d
    pytest.skip("no folder this process cannot write in")


@pytest.mark.parametrize("which", ["results_dir", "figures_dir", "executed_dir"])
def test_a_bad_folder_is_a_clear_error_before_anything_runs(tmp_path, monkeypatch, capsys, which):
    """``--results-dir`` on a file, a folder under a file, or a read-only
    folder gave a deep traceback (or failed only in the notebook). Now each is an error
    naming the argument and the folder, before any notebook starts."""
    monkeypatch.setattr(runner, "ProcessPoolExecutor", None)  # a notebook started would fail otherwise
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    flag = "--" + which.replace("_", "-")
    for folder, says in ((a_file, "is a file, not a folder"), (a_file / "sub", "cannot be created"),
                         (_read_only_folder(tmp_path), "is not writable")):
        dirs = {"results_dir": tmp_path / "r", "figures_dir": tmp_path / "f", which: folder}
        with pytest.raises(ValueError, match=re.escape(f"{which} ({flag}) {str(folder)!r} {says}")):
            runner.run([STUDY], profile="quick", log=lambda *a: None, **dirs)
        assert not (tmp_path / "r").exists() and not (tmp_path / "f").exists()  # none made, or removed again
        args = [a for k, v in dirs.items() for a in ("--" + k.replace("_", "-"), str(v))]
        assert cli(["run", STUDY, "--profile", "quick", *args]) == 2
        err = capsys.readouterr().err
        assert f"error: {which} ({flag})" in err and says in err and "Traceback" not in err, err
        assert not (tmp_path / "r").exists() and not (tmp_path / "f").exists()


def test_report_into_a_bad_folder_is_a_clear_error(tmp_path, capsys):
    """``report`` into a read-only folder failed with a traceback."""
    ro = _read_only_folder(tmp_path)
    assert cli(["report", "--results-dir", str(ro), "--figures-dir", str(tmp_path / "f")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --results-dir {str(ro)!r} is not writable"), err
    assert cli(["report", "--results-dir", str(tmp_path / "none")]) == 2
    assert "not found: no results to report" in capsys.readouterr().err
    (tmp_path / "a_file").write_text("x")
    assert cli(["report", "--results-dir", str(tmp_path / "a_file")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_an_unreadable_result_is_named_and_the_others_reported(tmp_path, capsys):
    """A corrupt or truncated ``.nc`` stopped the whole REPORT.md with
    xarray's error, which never names the file. Now the others are reported and the bad
    ones named, in REPORT.md and on stderr."""
    import xarray as xr

    r = tmp_path / "r"
    r.mkdir()
    xr.Dataset(attrs={"seed": 7, "profile": "quick"}).to_netcdf(r / "table1_trecvid_clustering.nc")
    good = (r / "table1_trecvid_clustering.nc").read_bytes()
    (r / "table4_hierarchy_depth.nc").write_bytes(good[: len(good) // 2])  # truncated
    (r / "table5_abstractness.nc").write_bytes(os.urandom(300))            # corrupt
    assert cli(["report", "--results-dir", str(r), "--figures-dir", str(tmp_path / "f")]) == 0
    err = capsys.readouterr().err
    text = (r / "REPORT.md").read_text()
    for name in ("table4_hierarchy_depth", "table5_abstractness"):
        bad = str(r / f"{name}.nc")
        assert f"{bad} cannot be read" in err and f"{bad} cannot be read" in text
        assert "**Unreadable result**" in text.split(f"## {name}\n")[1].split("\n## ")[0]
    assert "Unreadable results** (2" in text
    assert "seed 7," in text.split("## table1_trecvid_clustering\n")[1].split("\n## ")[0]


# ----------------------------------------------------------- weak: --jobs
def test_jobs_zero_is_an_error_and_negative_counts_from_the_cores(tmp_path, monkeypatch, capsys):
    """``--jobs 0`` and ``--jobs -1`` were silently 1; -1 means one per
    core in joblib and scikit-learn, -2 all cores but one."""
    assert runner.resolve_jobs(-1, 10, cores=4) == 4
    assert runner.resolve_jobs(-2, 10, cores=4) == 3
    assert runner.resolve_jobs(-1, 2, cores=4) == 2  # never more than the studies
    assert runner.resolve_jobs(None, 10, cores=4) == 4 and runner.resolve_jobs(3, 10, cores=4) == 3
    for bad, says in ((0, "got 0"), (-5, "jobs (--jobs) must be an integer >= -4"), (1.5, "jobs (--jobs)"),
                      ("2", "jobs (--jobs)")):
        with pytest.raises(ValueError, match=re.escape(says)):
            runner.resolve_jobs(bad, 10, cores=4)
    assert cli(["run", STUDY, "--profile", "quick", "--jobs", "0", "--results-dir", str(tmp_path / "r")]) == 2
    assert "error: jobs (--jobs) must be a number of notebooks at once >= 1" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()

    class NoPool:  # stop the run where the notebooks would start
        def __init__(self, max_workers, **k):
            raise RuntimeError(f"{max_workers} workers")

    monkeypatch.setattr(runner, "ProcessPoolExecutor", NoPool)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    with pytest.raises(RuntimeError, match="^3 workers$"):
        runner.run([STUDY, "table5_abstractness", "table1_trecvid_clustering"], profile="quick", jobs=-1,
                   results_dir=tmp_path / "r", figures_dir=tmp_path / "f", log=lambda *a: None)


# ----------------------------------------------------------- weak: baselines.run
@pytest.mark.parametrize("args, says", [
    (["--profile", "bogus", "--methods", "kmeans"], "argument --profile: invalid choice: 'bogus'"),
    (["--methods", "kmeans,nope"], "--methods: unknown method 'nope'"),
    (["--methods", "lsr"], "--methods: 'lsr' is a completion method, not a clustering method"),
    (["--methods", ","], "--methods: no method given"),
    (["--methods", "kmeans", "--modes", "vifeet"], "--modes: unknown input mode(s) 'vifeet'"),
])
def test_baselines_run_checks_its_arguments_before_any_work(monkeypatch, capsys, args, says):
    """A bad ``--profile`` or ``--methods`` failed after the data were
    made (and the methods before it had run), with a traceback."""
    import hmlkit.data
    from hmlkit.baselines.run import main

    def no_work(*a, **k):
        raise AssertionError("data made before the arguments were checked")

    monkeypatch.setattr(hmlkit.data, "make_synthetic", no_work)
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    assert says in capsys.readouterr().err
