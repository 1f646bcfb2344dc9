"""The standard profile's results are in the repository, readable before anything runs:
every study's result, figure and executed notebook, and a REPORT.md whose figures exist,
each stamped with the commit and key that made it, naming no folder of one machine."""
import json
import re
from pathlib import Path

import pytest
import xarray as xr

from hmlkit.studies.profiles import STUDIES
from hmlkit.studies.saving import key_id

ROOT = Path(__file__).resolve().parents[1]
RESULTS, FIGURES = ROOT / "results", ROOT / "figures"
REPORT = RESULTS / "REPORT.md"
# what a path of one machine looks like in a text file (a home or work folder, a temp dir)
MACHINE_PATH = re.compile(r"(/home/\w+|/root/|/work/|/tmp/|/Users/\w+|[A-Z]:\\\\Users)")


def _tracked(path):
    import subprocess

    out = subprocess.run(["git", "ls-files", "--error-unmatch", str(path)], cwd=ROOT, capture_output=True)
    return out.returncode == 0


@pytest.mark.parametrize("name", STUDIES)
def test_every_study_has_a_committed_standard_result(name):
    nc, png, nb = RESULTS / f"{name}.nc", FIGURES / f"{name}.png", RESULTS / "executed" / f"{name}.ipynb"
    for path in (nc, png, nb):
        assert path.is_file() and _tracked(path), f"{path.relative_to(ROOT)} is not committed"
    with xr.open_dataset(nc) as ds:
        attrs = dict(ds.attrs)
    assert attrs["profile"] == "standard" and attrs["study"] == name
    assert attrs["git_commit"] not in ("", "unknown") and not attrs["git_commit"].endswith("-dirty"), \
        f"{name}: made from a checkout whose code differed from its commit ({attrs['git_commit']})"
    key = json.loads(attrs["run_key"])  # the runner's key, and the code and data it read
    assert key["parameters"]["profile"] == "standard"
    assert json.loads(attrs["run_deps"])["modules"]
    stamp = __import__("PIL.Image", fromlist=["Image"]).open(png).text.get("Description", "")
    assert f"commit {attrs['git_commit']}" in stamp and f"key {key_id(attrs['run_key'])}" in stamp


def test_report_names_only_figures_that_exist_and_every_study():
    text = REPORT.read_text()
    assert _tracked(REPORT)
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert images, "REPORT.md shows no figure"
    for rel in images:
        assert (RESULTS / rel).resolve().is_file(), f"REPORT.md shows {rel}, which does not exist"
    for name in STUDIES:
        assert f"## {name}\n" in text and f"![{name}](../figures/{name}.png)" in text


def test_committed_results_name_no_folder_of_one_machine():
    files = [REPORT, *sorted(RESULTS.glob("executed/*.ipynb"))]
    for path in files:
        hit = MACHINE_PATH.search(path.read_text())
        assert not hit, f"{path.relative_to(ROOT)} names {hit.group(0)!r}"
    for nc in sorted(RESULTS.glob("*.nc")):
        with xr.open_dataset(nc) as ds:
            text = json.dumps({k: str(v) for k, v in ds.attrs.items()})
        hit = MACHINE_PATH.search(text)
        assert not hit, f"{nc.name}'s attrs name {hit.group(0)!r}"


def test_readme_links_the_report_and_shows_committed_figures():
    readme = (ROOT / "README.md").read_text()
    assert "(results/REPORT.md)" in readme
    shown = re.findall(r"!\[[^\]]*\]\((figures/[^)]+\.png)\)", readme)
    assert len(shown) >= 2 and all(_tracked(ROOT / f) for f in shown)
