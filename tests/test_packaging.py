"""The package as a user installs it: the core (no extras) into a clean virtual environment,
then ``HMLClustering`` fitted there without the studies' extras (xarray, netCDF4, matplotlib);
the license, the citation and the stated platforms.

The install test is slow (a fresh venv, the core from the package index, the kernels compiled
in it: about 2 min on 2 cores); it skips, saying so, only when no package index answers."""
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
STUDY_EXTRAS = ("xarray", "netCDF4", "matplotlib", "pandas", "papermill", "ipywidgets", "sphinx")
LOADED_BY_US = tuple(m for m in STUDY_EXTRAS if m != "pandas")  # scikit-learn imports pandas where it is installed

FIT = f"""
import importlib.util, sys
present = [m for m in {STUDY_EXTRAS!r} if importlib.util.find_spec(m) is not None]
assert not present, f"installed with the core: {{present}}"
import hmlkit
from hmlkit import HMLClustering
from hmlkit.data import make_synthetic
data = make_synthetic("trecvid", n_samples=120, random_state=0)
labels = HMLClustering(n_clusters=4, n_estimators=8, random_state=0).fit_predict(data.X, data.Y, data.layers)
assert len(labels) == 120 and len(set(labels.tolist())) == 4, labels
print(hmlkit.__file__)
"""


def _env():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _index_answers(python):
    """Whether pip reaches a package index (PyPI, or the one pip is configured with)."""
    probe = subprocess.run([python, "-m", "pip", "install", "--dry-run", "--no-deps", "tqdm"], capture_output=True,
                           text=True, env=_env(), timeout=300)
    if probe.returncode == 0:
        return True
    return not re.search(r"NewConnectionError|Temporary failure in name resolution|Max retries|"
                         r"No matching distribution|Network is unreachable|Could not find a version",
                         probe.stdout + probe.stderr)


def _package_source(dest):
    """The files a user's ``pip install <clone>`` builds from (no caches, results or data)."""
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, dest / name)
    shutil.copytree(ROOT / "hmlkit", dest / "hmlkit",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "numba_warmed.sha1"))
    return dest


@pytest.mark.slow
def test_the_core_installs_into_a_clean_venv_and_fits_without_the_study_extras(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)  # no system site-packages
    python = str(venv / "bin" / "python")
    if not _index_answers(python):
        pytest.skip("no package index reachable: the clean-venv install needs PyPI (or a configured index)")
    (tmp_path / "src").mkdir()
    src = _package_source(tmp_path / "src")
    install = subprocess.run([python, "-m", "pip", "install", "--quiet", str(src)], capture_output=True, text=True,
                             env=_env(), timeout=1800)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    run = subprocess.run([python, "-c", FIT], capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert str(venv) in run.stdout  # the installed package, not the checkout


def test_core_dependencies_are_what_the_estimators_need():
    core = {re.split(r"[<>=\[ ;]", r, maxsplit=1)[0].lower() for r in PYPROJECT["project"]["dependencies"]}
    assert core == {"numpy", "scipy", "scikit-learn", "joblib", "numba", "tqdm", "liac-arff"}
    studies = {re.split(r"[<>=\[ ;]", r, maxsplit=1)[0].lower() for r in PYPROJECT["project"]["optional-dependencies"]["studies"]}
    assert {"xarray", "netcdf4", "matplotlib"} <= studies


def test_the_core_modules_import_no_study_extra():
    """``import hmlkit`` and the estimators' modules, in a fresh interpreter, load none of the
    studies' extras (the clean-venv test proves it installed; this one runs everywhere)."""
    code = ("import sys, hmlkit\n"
            "from hmlkit import HMLForest, HMLClustering, HMLTagCompleter, TaggedData\n"
            "import hmlkit.data, hmlkit.metrics, hmlkit.tags, hmlkit.baselines\n"
            f"print(sorted(m for m in {LOADED_BY_US!r} if m in sys.modules))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_license_citation_and_platforms():
    assert (ROOT / "LICENSE").read_text().startswith("BSD 3-Clause License")
    assert "hmlkit developers" in (ROOT / "LICENSE").read_text()
    assert PYPROJECT["project"]["license"] == "BSD-3-Clause"
    cff = (ROOT / "CITATION.cff").read_text()
    assert "cff-version: 1.2.0" in cff and "type: software" in cff and "arXiv:1705.10659" in cff
    assert not (ROOT / "hmlkit" / "py.typed").exists()
    assert all("py.typed" not in v for v in PYPROJECT["tool"]["setuptools"]["package-data"].values())
    classifiers = PYPROJECT["project"]["classifiers"]
    assert "Operating System :: POSIX :: Linux" in classifiers and "Operating System :: MacOS" in classifiers
    assert not any("Windows" in c for c in classifiers)
    readme = (ROOT / "README.md").read_text()
    assert "Linux and macOS" in readme and 'pip install -e ".[studies]"' in readme
