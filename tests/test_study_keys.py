"""The key a study's result is stored with, and the reasons a study reruns
(hmlkit/studies/keys.py)."""
import json
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

from hmlkit._paths import REPO_ROOT
from hmlkit.studies import keys

NB = REPO_ROOT / "studies" / "table1_trecvid_clustering.ipynb"


def test_notebook_digest_follows_code_cells_only(tmp_path):
    nb = json.loads(NB.read_text())
    base = keys.notebook_digest(NB)
    # outputs, execution counts, metadata and text cells do not change what a study computes
    for c in nb["cells"]:
        if c["cell_type"] == "code":
            c["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x"}]
            c["execution_count"] = 3
        else:
            c["source"] = "# another title"
    nb["metadata"]["language_info"] = {"name": "python"}
    p = tmp_path / "a.ipynb"
    p.write_text(json.dumps(nb))
    assert keys.notebook_digest(p) == base
    code = next(c for c in nb["cells"] if c["cell_type"] == "code" and "parameters" not in c["metadata"].get("tags", []))
    code["source"] = "".join(code["source"]) + "\nx = 1"
    p.write_text(json.dumps(nb))
    assert keys.notebook_digest(p) != base


def test_run_key_leaves_out_threads_and_folders():
    a = keys.run_key(NB, {"profile": "quick", "seed": 0, "n_jobs": 1, "results_dir": "r"})
    b = keys.run_key(NB, {"profile": "quick", "seed": 0, "n_jobs": 2, "results_dir": "elsewhere"})
    assert a == b
    assert keys.run_key(NB, {"profile": "quick", "seed": 1}) != a
    assert set(a["versions"]) >= {"numpy", "scipy", "scikit-learn", "numba", "torch", "python"}


def _write_result(tmp_path, name, key, deps):
    rd, fd, ed = tmp_path / "r", tmp_path / "f", tmp_path / "r" / "executed"
    for d in (rd, fd, ed):
        d.mkdir(parents=True, exist_ok=True)
    attrs = {} if key is None else {"run_key": json.dumps(key), "run_deps": json.dumps(deps)}
    xr.Dataset({"x": ("i", np.arange(3))}, attrs=attrs).to_netcdf(rd / f"{name}.nc")
    (fd / f"{name}.png").write_bytes(b"png")
    (ed / f"{name}.ipynb").write_text("{}")
    return rd, fd, ed


def test_status_names_each_reason(tmp_path):
    src = tmp_path / "mod.py"
    src.write_text("a = 1\n")
    data = tmp_path / "data.arff"
    data.write_text("@relation x\n")
    key = keys.run_key(NB, {"profile": "quick", "seed": 0})
    deps = {"modules": {str(src): keys.file_digest(src)},
            "data": {str(data): {"target": keys._data_name(data), "sha256": keys.file_digest(data)}}}
    rd, fd, ed = _write_result(tmp_path, "s", key, deps)
    assert keys.status("s", key, rd, fd, ed) is None
    assert "parameters changed: seed 0 -> 1" in keys.status("s", keys.run_key(NB, {"profile": "quick", "seed": 1}),
                                                            rd, fd, ed)
    # a parameter set where the stored key had none (--set folds=None): named, not an empty list
    assert keys.status("s", keys.run_key(NB, {"profile": "quick", "seed": 0, "folds": None}),
                       rd, fd, ed) == "parameters changed: folds (default) -> None"
    other = dict(key, versions=dict(key["versions"], numpy="0.0"))
    assert keys.status("s", other, rd, fd, ed).endswith("-> 0.0")
    assert keys.status("s", other, rd, fd, ed).startswith("library versions changed: numpy ")
    src.write_text("a = 2\n")
    assert keys.status("s", key, rd, fd, ed) == f"kit code changed: {src}"
    src.write_text("a = 1\n")
    data.write_text("@relation y\n")
    assert keys.status("s", key, rd, fd, ed) == f"data changed: {data}"
    data.write_text("@relation x\n")
    (ed / "s.failed.ipynb").write_text("{}")  # kept before failures stored their key: counts
    assert keys.status("s", key, rd, fd, ed) == "its last run failed"
    keys.mark_failed_run(ed / "s.failed.ipynb", key)  # this very run failed
    assert keys.status("s", key, rd, fd, ed) == "its last run failed"
    # another run failed (--set seed=-1, refused in the kernel): the stored result is as good
    # as it was, where every later plain run used to rerun it (30 min for real_corel)
    keys.mark_failed_run(ed / "s.failed.ipynb", keys.run_key(NB, {"profile": "quick", "seed": -1}))
    assert keys.status("s", key, rd, fd, ed) is None
    (ed / "s.failed.ipynb").unlink()
    (fd / "s.png").unlink()
    assert keys.status("s", key, rd, fd, ed) == "no figure (s.png)"
    assert keys.status("t", key, rd, fd, ed) == "no result"
    rd2, fd2, ed2 = _write_result(tmp_path / "old", "s", None, None)
    assert "stores no key" in keys.status("s", key, rd2, fd2, ed2)
    (rd2 / "s.nc").write_bytes(b"not a netcdf file")
    assert str(rd2 / "s.nc") in keys.status("s", key, rd2, fd2, ed2)


def test_a_kernel_of_the_runner_records_the_modules_and_data_files_it_used(tmp_path):
    """In a process with the runner's key set: the loaded modules of the kit and the files
    hmlkit.data opened (for reading) are the result's dependencies; a module never
    imported and a file opened outside hmlkit.data are not."""
    arff = tmp_path / "tiny.arff"
    arff.write_text("@relation t\n@attribute f0 numeric\n@attribute f1 numeric\n"
                    "@attribute t0 {0,1}\n@attribute t1 {0,1}\n@data\n"
                    "0.1,0.2,1,0\n0.3,0.1,0,1\n0.5,0.9,1,1\n")
    other = tmp_path / "other.txt"
    other.write_text("x")
    code = f"""
import json, os
os.environ["HMLKIT_RUN_KEY"] = "{{}}"
import hmlkit.studies
from hmlkit.studies import keys
from hmlkit.data import load_dataset
load_dataset({str(arff)!r}, n_features=2)
open({str(other)!r}).read()
print(keys.result_attrs()["run_deps"])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    deps = json.loads(out.stdout.strip().splitlines()[-1])
    assert [keys._absolute(f).resolve() for f in deps["data"]] == [arff.resolve()]
    assert "hmlkit/data/arff.py" in deps["modules"] and "hmlkit/studies/keys.py" in deps["modules"]
    assert "hmlkit/baselines/ghfart.py" not in deps["modules"]


def test_data_found_through_a_setting_is_named_by_it(tmp_path, monkeypatch):
    # pointing HMLKIT_SHARED_DATA at other data (another copy of Corel5k) left a result
    # made on the first copy "up to date": it re-read the files it had recorded
    shared, other = tmp_path / "shared", tmp_path / "other"
    for root, text in ((shared, "@relation a\n"), (other, "@relation b\n")):
        (root / "corel5k").mkdir(parents=True)
        (root / "corel5k" / "train.arff").write_text(text)
    monkeypatch.setenv("HMLKIT_SHARED_DATA", str(shared))
    f = shared / "corel5k" / "train.arff"
    name = keys._data_name(f)
    assert name == "$HMLKIT_SHARED_DATA/corel5k/train.arff" and keys._absolute(name) == f
    key = keys.run_key(NB, {"profile": "quick"})
    rd, fd, ed = _write_result(tmp_path / "r", "s", key,
                               {"modules": {}, "data": {name: {"target": name, "sha256": keys.file_digest(f)}}})
    assert keys.status("s", key, rd, fd, ed) is None
    monkeypatch.setenv("HMLKIT_SHARED_DATA", str(other))
    assert keys.status("s", key, rd, fd, ed) == "data changed: $HMLKIT_SHARED_DATA/corel5k/train.arff"
    assert keys._data_name(tmp_path / "mine.npz").endswith("mine.npz")  # elsewhere: as before


def test_outside_the_runner_no_key_is_stored():
    code = "import os; os.environ.pop('HMLKIT_RUN_KEY', None); from hmlkit.studies import keys; " \
           "print(keys.result_attrs())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "{}", out.stderr


@pytest.mark.parametrize("secs,text", [(5, "5s"), (65, "1m05s"), (3720, "1h02m")])
def test_eta_format(secs, text):
    from hmlkit.studies.progress import format_eta

    assert format_eta(secs) == text


def test_progress_writes_the_runner_status_file(tmp_path, monkeypatch, capsys):
    from hmlkit.studies.progress import ENV_FILE, Progress, read_status

    status = tmp_path / "s.progress"
    monkeypatch.setenv(ENV_FILE, str(status))
    bar = Progress(4, "rows", enabled=False)
    assert read_status(status) == "rows: 0/4"
    bar.step("line")
    bar.step()
    assert read_status(status).startswith("rows: 2/4, ETA ")
    assert capsys.readouterr().out == ""  # disabled: nothing printed
    bar = Progress(2, "rows", enabled=True)
    bar.step("  kmeans NMI=0.5")
    bar.close()
    assert "  kmeans NMI=0.5" in capsys.readouterr().out


def test_a_parameter_set_to_the_notebooks_default_reruns_nothing(tmp_path, monkeypatch):
    """``--set seed=0`` (the notebook's own default) made an up-to-date study stale; a study
    named twice ran twice at once, and its second end crashed the run."""
    from hmlkit.studies import runner

    study = "table5_abstractness"
    assert runner.notebook_defaults(study)["seed"] == 0
    logged = []
    common = dict(profile="quick", results_dir=tmp_path / "r", figures_dir=tmp_path / "f", dry_run=True,
                  log=logged.append)
    plain = runner.run([study], **common)
    same = runner.run([study, f"studies/{study}.ipynb"], parameters={"seed": 0}, **common)
    assert [r.name for r in same] == [study]  # once
    monkeypatch.setattr(keys, "status", lambda name, key, *dirs: key)  # what the runner keys the run on
    assert runner.run([study], parameters={"seed": 0}, **common)[0].reason == \
        runner.run([study], **common)[0].reason
    assert runner.run([study], parameters={"seed": 1}, **common)[0].reason["parameters"]["seed"] == 1
    assert runner.run([study], parameters={"seed": True}, **common)[0].reason["parameters"]["seed"] is True
    assert plain[0].reason == same[0].reason == "no result"


def test_explore_under_the_runner_saves_beside_the_studies_results():
    """``run explore`` passed the runner's results/ and figures/ to the sweep notebook, whose
    Save then wrote sweep.nc among the committed results."""
    from hmlkit.studies import runner

    base = {"profile": "standard", "results_dir": "results", "figures_dir": "figures", "n_jobs": 1}
    valid = runner.notebook_parameters("explore")
    params = runner.notebook_params("explore", base, valid, None)
    assert params["results_dir"] == "results/explore" and params["figures_dir"] == "figures/explore"
    with pytest.raises(ValueError, match="results_dir cannot be set as a notebook parameter"):
        runner.run(["explore"], parameters={"results_dir": "mine"}, dry_run=True, log=lambda *a: None)
    study = runner.notebook_params("table5_abstractness", base, runner.notebook_parameters("table5_abstractness"),
                                   None)
    assert study["results_dir"] == "results"
