"""Trust in "up to date": a stored result is called up to date only when it is exactly what
the current code, data and settings would produce. Keys compare with their types; a kill
between the renames of a commit leaves a study stale; a data file reached through a symlink
that was repointed is stale; a malformed stored key is a reason to rerun, never a crash;
digests are not remembered across runs; one runner at a time per folder; float cell
timeouts; a dry run checks the folders the real run would refuse; a built-in data set name
is never shadowed by a folder; Ctrl-C at the start gives a clean message; absurd counts are
refused by name."""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from hmlkit._paths import REPO_ROOT
from hmlkit.studies import keys, runner, saving
from hmlkit.studies.__main__ import main as cli

NB = REPO_ROOT / "studies" / "table1_trecvid_clustering.ipynb"
STUDY = "table4_hierarchy_depth"  # the name the tiny notebooks below stand in for
EMPTY_DEPS = {"modules": {}, "data": {}}


def _dirs(root):
    rd, fd, ed = root / "r", root / "f", root / "r" / "executed"
    for d in (rd, fd, ed):
        d.mkdir(parents=True, exist_ok=True)
    return rd, fd, ed


def _write_result(root, name, attrs):
    """A study's three files in ``root``'s folders, its result with ``attrs``."""
    rd, fd, ed = _dirs(root)
    xr.Dataset({"x": ("i", np.arange(3))}, attrs=attrs).to_netcdf(rd / f"{name}.nc")
    (fd / f"{name}.png").write_bytes(b"png")
    (ed / f"{name}.ipynb").write_text("{}")
    return rd, fd, ed


def _stored(key, deps=EMPTY_DEPS):
    return {"run_key": json.dumps(key, sort_keys=True), "run_deps": json.dumps(deps)}


def _runner_keys(monkeypatch):
    """{study: the key the runner judged it by}, filled as ``runner.run`` calls ``keys.status``."""
    seen, real = {}, keys.status

    def status(name, key, *dirs):
        seen[name] = key
        return real(name, key, *dirs)

    monkeypatch.setattr(keys, "status", status)
    return seen


# ----------------------------------------------------------- bad 1: typed comparison
def test_a_set_value_of_another_type_is_not_up_to_date(tmp_path, monkeypatch):
    """``--set seed=1`` then ``--set seed=1.0`` or ``seed=True`` was "up to date": keys were
    compared with ==, which calls 1, 1.0 and True equal although the notebook refuses two of them."""
    study = "fig4_7_9_examples"
    seen = _runner_keys(monkeypatch)
    common = dict(profile="quick", results_dir=tmp_path / "r", figures_dir=tmp_path / "f", dry_run=True,
                  log=lambda *a: None)
    runner.run([study], parameters={"seed": 1}, **common)
    rd, fd, ed = _write_result(tmp_path, study, _stored(seen[study]))
    assert runner.run([study], parameters={"seed": 1}, **common)[0].up_to_date
    for other, shown in ((1.0, "1.0"), (True, "True")):
        res = runner.run([study], parameters={"seed": other}, **common)[0]
        assert not res.up_to_date and res.reason == f"parameters changed: seed 1 -> {shown}", res.reason
    # and a failed seed=True run leaves the good seed=1 result as good as it was
    (ed / f"{study}.failed.ipynb").write_text("{}")
    keys.mark_failed_run(ed / f"{study}.failed.ipynb", keys.run_key(runner.notebook_path(study),
                                                                   {**seen[study]["parameters"], "seed": True}))
    assert runner.run([study], parameters={"seed": 1}, **common)[0].up_to_date
    keys.mark_failed_run(ed / f"{study}.failed.ipynb", seen[study])  # this very run failed
    assert runner.run([study], parameters={"seed": 1}, **common)[0].reason == "its last run failed"


def test_keys_compare_as_typed_text():
    assert keys.canonical(1) != keys.canonical(1.0) != keys.canonical(True) != keys.canonical(1)
    assert keys.canonical({"b": [1, 2.5], "a": None}) == keys.canonical({"a": None, "b": [1, 2.5]})
    assert keys.canonical(float("nan")) == keys.canonical(float("nan"))
    # a notebook's default: [1, True] is not [1, 1], though == says so
    assert not runner._same_value([1, 1], [1, True]) and runner._same_value([1, 2], (1, 2))
    # what papermill hands a notebook: a tuple would arrive as the text "(1, 2)"; it goes as a list
    assert keys.notebook_value((1, 2)) == [1, 2] and keys.notebook_value(np.int64(3)) == 3
    assert keys.run_key(NB, {"taus": (1, 2)}) == keys.run_key(NB, {"taus": [1, 2]})
    assert keys.run_key(NB, {"taus": "(1, 2)"}) != keys.run_key(NB, {"taus": [1, 2]})


# ----------------------------------------------------------- bad 2: a kill between renames
class _Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs (not an Exception, so no handler takes it)."""


def _commit(root, name, key, stop, kill_after=None, monkeypatch=None):
    """Stage a run of ``name`` made with ``key`` and commit it; with ``kill_after`` the process
    "dies" after that many renames (and, after all of them, before the marker is removed)."""
    rd, fd, ed = root / "r", root / "f", root / "r" / "executed"
    stage = runner.Stage.make(name, (rd, fd, ed))
    xr.Dataset(attrs=_stored(key)).to_netcdf(stage.of(rd) / f"{name}.nc")
    (stage.of(fd) / f"{name}.png").write_bytes(b"png " + json.dumps(key["parameters"]).encode())
    (stage.of(ed) / f"{name}.ipynb").write_text("{}")
    if kill_after is not None:
        real, done = os.replace, []

        def replace(src, dst):
            if len(done) == kill_after:
                raise _Killed
            real(src, dst)
            done.append(dst)

        def fsync(path, parent=False):  # the folders are flushed after the last rename
            if Path(path).is_dir() and len(done) >= kill_after:
                raise _Killed

        monkeypatch.setattr(os, "replace", replace)
        monkeypatch.setattr(runner, "_fsync", fsync, raising=False)
    try:
        runner.commit(stage, rd, fd, ed, stop, [], report=False, log=lambda *a: None)
    except _Killed:
        pass
    finally:
        monkeypatch and monkeypatch.undo()
    return rd, fd, ed


@pytest.mark.parametrize("same_key", [False, True])
def test_a_kill_at_any_rename_of_a_commit_leaves_the_study_stale(tmp_path, monkeypatch, same_key):
    """A SIGKILL between the renames of ``commit()`` left the new ``.nc`` beside the old
    figure and executed notebook, and every later run said "up to date". The file carrying
    the key is now renamed last, under a marker removed only after the last rename."""
    _dirs(tmp_path)
    name = "table5_abstractness"
    key1 = keys.run_key(NB, {"profile": "quick", "seed": 1})
    key2 = key1 if same_key else keys.run_key(NB, {"profile": "quick", "seed": 2})  # a --force rerun, or another
    with runner._StopOnSignal() as stop:
        dirs = _commit(tmp_path, name, key1, stop)
        assert keys.status(name, key1, *dirs) is None
        for k in range(4):  # 3 files (result, figure, executed notebook): killed after k renames
            _commit(tmp_path, name, key2, stop, kill_after=k, monkeypatch=monkeypatch)
            for key in (key1, key2):
                why = keys.status(name, key, *dirs)
                assert why is not None, (k, key["parameters"])
            assert "cut short" in keys.status(name, key2, *dirs)
            dirs = _commit(tmp_path, name, key1, stop)  # the next good run puts all right
            assert keys.status(name, key1, *dirs) is None
    assert not list((tmp_path / "r" / "executed").glob("*.committing"))


# ----------------------------------------------------------- bad 3: a repointed symlink
def test_a_data_file_reached_through_a_repointed_symlink_is_stale(tmp_path):
    """``--set dataset=$PWD/latest.arff`` with ``latest.arff`` a symlink: after
    ``ln -sfn other.arff latest.arff`` the result was "up to date" (its key named the old
    target only). Each data file is now recorded by the path given, its target and digest."""
    header = ("@relation t\n@attribute f0 numeric\n@attribute f1 numeric\n"
              "@attribute t0 {0,1}\n@attribute t1 {0,1}\n@data\n")
    a, b, link = tmp_path / "a.arff", tmp_path / "b.arff", tmp_path / "latest.arff"
    a.write_text(header + "0.1,0.2,1,0\n0.3,0.1,0,1\n0.5,0.9,1,1\n")
    b.write_text(header + "0.9,0.2,1,0\n0.3,0.8,0,1\n0.5,0.1,1,1\n")
    link.symlink_to(a.name)
    code = f"""
import os
os.environ["HMLKIT_RUN_KEY"] = "{{}}"
from hmlkit.studies import keys
from hmlkit.data import load_dataset
load_dataset({str(link)!r}, n_features=2)
print(keys.result_attrs()["run_deps"])
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    deps = json.loads(out.stdout.strip().splitlines()[-1])
    (given, rec), = deps["data"].items()
    assert os.path.abspath(keys._absolute(given)) == str(link)  # the path given, not its target
    assert os.path.abspath(keys._absolute(rec["target"])) == str(a)
    assert rec["sha256"] == keys.file_digest(a)
    key = keys.run_key(NB, {"profile": "quick", "dataset": str(link)})
    rd, fd, ed = _write_result(tmp_path / "res", "s", _stored(key, deps))
    assert keys.status("s", key, rd, fd, ed) is None
    link.unlink()
    link.symlink_to(b.name)  # ln -sfn b.arff latest.arff
    why = keys.status("s", key, rd, fd, ed)
    assert why is not None and why.startswith("data changed: ") and "now leads to" in why, why
    assert b.name in why and a.name in why


# ----------------------------------------------------------- bad 4: malformed stored keys
def _malformed(key):
    good_key, good_deps = json.dumps(key), json.dumps(EMPTY_DEPS)
    return {
        "run_key a list": {"run_key": "[1, 2]", "run_deps": good_deps},
        "run_key a string": {"run_key": '"abc"', "run_deps": good_deps},
        "run_key a number": {"run_key": 5, "run_deps": good_deps},
        "run_key not JSON": {"run_key": "{", "run_deps": good_deps},
        "run_deps a list": {"run_key": good_key, "run_deps": "[]"},
        "modules null": {"run_key": good_key, "run_deps": '{"modules": null, "data": {}}'},
        "data of digests only": {"run_key": good_key, "run_deps": '{"modules": {}, "data": {"a": "b"}}'},
        "parameters a list": {"run_key": json.dumps(dict(key, parameters=[1])), "run_deps": good_deps},
        "versions null": {"run_key": json.dumps(dict(key, versions=None)), "run_deps": good_deps},
        "notebook a number": {"run_key": json.dumps(dict(key, notebook=3)), "run_deps": good_deps},
        "format unknown": {"run_key": json.dumps(dict(key, format=[9])), "run_deps": good_deps},
    }


def test_a_malformed_stored_key_is_a_reason_to_rerun_never_a_crash(tmp_path):
    """A stored ``run_key`` of "[1, 2]", '"abc"' or a number, ``run_deps`` [] or
    {"modules": null}, parameters [1], versions null: AttributeError / TypeError stopped the
    whole run, --dry-run included."""
    key = keys.run_key(NB, {"profile": "quick"})
    for case, attrs in _malformed(key).items():
        rd, fd, ed = _write_result(tmp_path / case.replace(" ", "_"), "s", attrs)
        why = keys.status("s", key, rd, fd, ed)
        assert why and ("cannot be read" in why or "another format" in why), (case, why)
    # one made by an earlier kit: said as such
    old = {k: v for k, v in key.items() if k != "format"}
    rd, fd, ed = _write_result(tmp_path / "old", "s", _stored(old))
    assert keys.status("s", key, rd, fd, ed) == "its stored key is in an older format, from an earlier version of the kit"


def test_a_malformed_key_blocks_no_other_study_nor_the_report(tmp_path, monkeypatch, capsys):
    seen = _runner_keys(monkeypatch)
    bad, good = "table5_abstractness", "table4_hierarchy_depth"
    r, f = tmp_path / "r", tmp_path / "f"
    common = dict(profile="quick", results_dir=r, figures_dir=f, log=lambda *a: None)
    runner.run([good], dry_run=True, **common)
    _write_result(tmp_path, good, _stored(seen[good]))
    key = keys.run_key(runner.notebook_path(bad), {"profile": "quick"})
    for case, attrs in _malformed(key).items():
        _write_result(tmp_path, bad, attrs)
        res = runner.run([bad, good], dry_run=True, **common)
        assert not res[0].up_to_date and ("cannot be read" in res[0].reason or "another format" in res[0].reason), \
            (case, res[0].reason)
        assert res[1].up_to_date, case
        assert cli(["run", bad, good, "--profile", "quick", "--dry-run", "--results-dir", str(r),
                    "--figures-dir", str(f)]) == 0, case
        assert "Traceback" not in capsys.readouterr().err
    # REPORT.md's settings line reads the key too
    assert saving.given_settings(json.dumps({"parameters": [1]})) is None
    assert saving.given_settings('"abc"') is None and saving.given_settings(5) is None


# ----------------------------------------------------------- weak: digests remembered across runs
def test_a_same_size_rewrite_within_the_time_stamps_resolution_is_seen(tmp_path, monkeypatch):
    """``keys.file_digest`` remembered digests by (path, size, mtime) for the whole process:
    a second ``runner.run`` in one JupyterLab kernel missed a same-size rewrite that kept
    the modification time (within the file system's resolution)."""
    f = tmp_path / "module.py"
    f.write_text("a = 1\n")
    past = time.time_ns() - 100 * 10 ** 9
    os.utime(f, ns=(past, past))
    assert keys.file_digest(f) == keys.file_digest(f)
    before = keys.file_digest(f)
    f.write_text("a = 2\n")  # same size
    os.utime(f, ns=(past, past))  # and the same modification time
    assert keys.file_digest(f) != before  # in one run too: the change time moved

    seen = _runner_keys(monkeypatch)
    study = "table5_abstractness"
    common = dict(profile="quick", results_dir=tmp_path / "r", figures_dir=tmp_path / "f", dry_run=True,
                  log=lambda *a: None)
    runner.run([study], **common)
    f.write_text("a = 1\n")
    os.utime(f, ns=(past, past))
    _write_result(tmp_path, study, _stored(seen[study], {"modules": {str(f): keys.file_digest(f)}, "data": {}}))
    assert runner.run([study], **common)[0].up_to_date
    monkeypatch.setattr(os, "stat", _same_change_time(os.stat, f))  # a file system keeping no finer times
    f.write_text("a = 3\n")
    os.utime(f, ns=(past, past))
    assert runner.run([study], **common)[0].reason == f"kit code changed: {f}"


def _same_change_time(real_stat, path):
    """``os.stat`` that reports ``path``'s change time as its modification time, whatever
    comes later (a file system that keeps no finer times)."""

    def stat(p, *a, **k):
        st = real_stat(p, *a, **k)
        if str(p) != str(path):
            return st
        fields = list(st)
        return os.stat_result(fields, {"st_ctime_ns": st.st_mtime_ns, "st_mtime_ns": st.st_mtime_ns,
                                       "st_atime_ns": st.st_atime_ns})

    return stat


# ----------------------------------------------------------- tiny notebooks for the runner
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
    """A tiny notebook run in place of study ``STUDY``: it saves a result with the runner's
    key and a figure, then sleeps ``pause`` seconds."""
    pytest.importorskip("papermill")
    nb = tmp_path / "notebooks" / f"{STUDY}.ipynb"
    nb.parent.mkdir()
    _notebook(nb, [
        "import time\nimport xarray as xr\nfrom hmlkit.studies.keys import result_attrs\n"
        "from hmlkit.studies.saving import write_dataset_atomic, write_text_atomic\n"
        "write_dataset_atomic(xr.Dataset(attrs={'seed': seed, **result_attrs()}), f'{results_dir}/" + STUDY + ".nc')\n"
        "write_text_atomic('figure', f'{figures_dir}/" + STUDY + ".png')\n"
        "time.sleep(pause)"],
        'profile = "quick"\nresults_dir = "results"\nfigures_dir = "figures"\nn_jobs = 1\nseed = 0\npause = 0.0')
    monkeypatch.setattr(runner, "notebook_path", lambda name: nb)
    return tmp_path


# ----------------------------------------------------------- weak: two runners, one folder
def test_a_second_runner_on_the_same_folders_is_refused_by_name(fake_study, capsys):
    """Two runners on one study and folder at once both said "ok" and one result silently
    replaced the other. The second is now refused, naming the folder and the first's pid."""
    r, f = fake_study / "results", fake_study / "figures"
    started, out = threading.Event(), {}

    def first():
        try:
            out["res"] = runner.run([STUDY], profile="quick", results_dir=r, figures_dir=f, cwd=fake_study,
                                    parameters={"pause": 3.0, "n_jobs": 1},  # one process: nothing to compile first
                                    log=lambda line: started.set() if line.startswith("running") else None)
        except BaseException as exc:  # noqa: BLE001 - said by the test
            out["error"] = exc
            started.set()

    t = threading.Thread(target=first)
    t.start()
    try:
        assert started.wait(120), "the first run did not start"
        assert cli(["run", STUDY, "--profile", "quick", "--results-dir", str(r), "--figures-dir", str(f)]) == 2
        err = capsys.readouterr().err
        assert f"is in use by another run of the study runner (pid {os.getpid()}" in err, err
        assert "results_dir (--results-dir)" in err
        assert runner.run([STUDY], profile="quick", results_dir=r, figures_dir=f, dry_run=True,
                          log=lambda *a: None)  # a dry run only reads: not refused
    finally:
        t.join(600)
    assert "error" not in out, out["error"]
    assert out["res"][0].ok, out["res"][0].error
    # the lock ends with its run: the next one runs (up to date here)
    assert runner.run([STUDY], profile="quick", results_dir=r, figures_dir=f, cwd=fake_study,
                      parameters={"pause": 3.0, "n_jobs": 1}, log=lambda *a: None)[0].up_to_date


# ----------------------------------------------------------- weak: float cell timeouts
def test_a_cell_timeout_in_float_seconds_or_inf_works(fake_study, monkeypatch, capsys):
    """``--cell-timeout 2.5`` (a float the command accepts) failed every study at its start
    with a traitlets error, and ``inf`` (no limit) too."""
    nb = fake_study / "notebooks" / "sleep.ipynb"  # cells that take no time, even on a busy machine
    _notebook(nb, ["import time\ntime.sleep(pause)"],
              'profile = "quick"\nresults_dir = "results"\nfigures_dir = "figures"\nn_jobs = 1\npause = 0.0')
    monkeypatch.setattr(runner, "notebook_path", lambda name: nb)
    r, f = fake_study / "results", fake_study / "figures"
    for value in ("2.5", "inf"):
        assert cli(["run", STUDY, "--profile", "quick", "--force", "--cell-timeout", value, "--set", "n_jobs=1",
                    "--results-dir", str(r), "--figures-dir", str(f)]) == 0, capsys.readouterr()
    assert runner.resolve_cell_timeout(2.5, "quick") == 2.5
    assert runner.resolve_cell_timeout(float("inf"), "quick") is None
    assert runner.resolve_cell_timeout("profile", "quick") == runner.CELL_TIMEOUT["quick"]
    for bad in (0, -1, float("nan"), True, "soon"):
        with pytest.raises(ValueError, match=r"cell_timeout \(--cell-timeout\) must be a positive number"):
            runner.resolve_cell_timeout(bad, "quick")
    assert cli(["run", STUDY, "--profile", "quick", "--cell-timeout", "nan", "--results-dir", str(r)]) == 2
    assert "cell_timeout (--cell-timeout) must be a positive number" in capsys.readouterr().err
    # and a cell past 2.5 s is stopped as such
    t0 = time.time()
    with pytest.raises(TimeoutError):
        runner.execute_notebook(nb, fake_study / "out.ipynb", cell_timeout=2.5, retries=0,
                                parameters={"pause": 60.0}, cwd=str(fake_study))
    assert time.time() - t0 < 50


# ----------------------------------------------------------- weak: explore, dry runs, data names
def test_explore_says_it_always_runs(tmp_path):
    """``explore`` was never up to date: its status looked for results/explore.nc, where the
    notebook saves into results/explore/<name>.nc. It is a panel: it always runs, and says so."""
    res = runner.run(["explore"], profile="quick", results_dir=tmp_path / "r", figures_dir=tmp_path / "f",
                     dry_run=True, log=lambda *a: None)
    assert not res[0].up_to_date and res[0].reason.startswith("explore always runs: a panel, not a study")


def test_a_dry_run_checks_the_folders_the_real_run_refuses(tmp_path):
    """``--dry-run`` said what would run into a results folder the real run refuses."""
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    for folder, says in ((a_file, "is a file, not a folder"), (a_file / "sub", "cannot be created")):
        for dry in (True, False):
            with pytest.raises(ValueError, match=re.escape(f"results_dir (--results-dir) '{folder}' {says}")):
                runner.run([STUDY], profile="quick", results_dir=folder, figures_dir=tmp_path / "f", dry_run=dry,
                           log=lambda *a: None)
    new = tmp_path / "new" / "deep"
    runner.run([STUDY], profile="quick", results_dir=new, figures_dir=tmp_path / "f2", dry_run=True,
               log=lambda *a: None)
    assert not (tmp_path / "new").exists() and not (tmp_path / "f2").exists()  # a dry run creates nothing


def test_a_folder_named_like_a_built_in_data_set_does_not_shadow_it(tmp_path, monkeypatch):
    """A folder named ``trecvid`` or ``nuswide`` in the current folder was read in place of
    the synthetic profile; ``dataset=''`` became ``.``, the current folder."""
    from hmlkit.data import load_dataset
    from hmlkit.studies.__main__ import _data_paths_from_here
    from hmlkit.studies.config import check_dataset

    monkeypatch.chdir(tmp_path)
    (tmp_path / "trecvid").mkdir()
    (tmp_path / "nuswide").mkdir()
    data = load_dataset("trecvid", n_samples=40)
    assert data.n_samples == 40 and check_dataset("trecvid") == "trecvid"
    with pytest.raises(ValueError, match="NUS-WIDE layout"):  # the folder, when asked for as one
        load_dataset("./nuswide")
    for empty in ("", " "):
        with pytest.raises(ValueError, match="dataset is an empty string"):
            check_dataset(empty)
        with pytest.raises(ValueError, match="dataset is an empty string"):
            load_dataset(empty)
    for given in ({"dataset": ""}, {"datasets": ["trecvid", " "]}):  # not the current folder
        with pytest.raises(ValueError, match="an empty data path"):
            _data_paths_from_here(given)
    assert _data_paths_from_here({"dataset": "trecvid"}) == {"dataset": "trecvid"}  # a name, not ./trecvid


# ----------------------------------------------------------- weak: Ctrl-C at the start
def test_ctrl_c_before_the_studies_start_prints_no_traceback(monkeypatch, capsys):
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run", interrupted)
    try:
        code = cli(["run", STUDY, "--profile", "quick", "--dry-run"])
    except KeyboardInterrupt:
        pytest.fail("the command let a KeyboardInterrupt through (a raw traceback)")
    assert code == 130 and "stopped by SIGINT" in capsys.readouterr().err


def test_ctrl_c_while_the_command_loads_prints_a_clean_message(tmp_path):
    """SIGINT in the first seconds (the runner loading) printed a raw traceback."""
    if not Path("/proc/self/maps").exists():
        pytest.skip("needs /proc")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    # SIGINT's default handler in the child, even where this suite runs with it ignored
    proc = subprocess.Popen([sys.executable, "-m", "hmlkit.studies", "run", "--profile", "quick", "--dry-run",
                             "--results-dir", str(tmp_path / "r")], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.time() + 60
        # the runner's imports under way: scikit-learn's libraries come with them (scipy's are loaded
        # earlier, with numba, by `import hmlkit`, before any code of the command runs)
        while time.time() < deadline:
            try:
                if "sklearn" in Path(f"/proc/{proc.pid}/maps").read_text():
                    break
            except OSError:
                pass
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.005)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (out, err)
    assert b"Traceback" not in err and b"stopped by SIGINT" in err, err


# ----------------------------------------------------------- weak: absurd counts
@pytest.mark.parametrize("study, param, value", [
    ("fig4_7_9_examples", "n_clusters_shown", 100000),
    ("table1_trecvid_clustering", "n_estimators", 10 ** 23),
    ("fig8_parameters", "taus", [10, 10 ** 23]),
    ("table1_trecvid_clustering", "folds", 10 ** 9),
    ("table1_trecvid_clustering", "seed", 2 ** 40),
])
def test_absurd_counts_are_refused_up_front_by_name(study, param, value):
    """``--set n_clusters_shown=100000`` ran past the cell timeout with no progress and
    ``n_estimators=10**23`` failed with "Maximum allowed dimension exceeded", naming neither."""
    from hmlkit.studies.config import setup

    with pytest.raises(ValueError, match=f"^{param} must be an integer <= "):
        setup(study, "quick", **{param: value})
