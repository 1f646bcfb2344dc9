"""The documentation site (``make docs``): built offline with warnings as errors, an API page
for every public estimator, a page for every executed study notebook (with its figures, from
the committed outputs: nothing is executed) and REPORT.md linking each of them.

The site is built once per run, into a temporary folder (about 40 s of CPU)."""
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "results" / "executed").glob("*.ipynb") if not p.name.endswith(".failed.ipynb"))
# as the Makefile's docs target: the source is the repository root, the configuration docs/conf.py
SPHINX = ["-m", "sphinx", "-W", "--keep-going", "-q", "-c", "docs", "."]


def public_estimators():
    """``module.Class`` of every scikit-learn estimator the kit defines in a public module."""
    import hmlkit
    from sklearn.base import BaseEstimator

    found = set()
    for info in pkgutil.walk_packages(hmlkit.__path__, "hmlkit."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseEstimator) and obj.__module__ == info.name
                    and not name.startswith("_")):
                found.add(f"{info.name}.{name}")
    return sorted(found)


def missing_estimator_pages(html):
    """Public estimators without an API page in the built site ``html``."""
    api = Path(html) / "docs" / "api" / "generated"
    return [e for e in public_estimators()
            if not (api / f"{e}.html").is_file() or f"{e.rsplit('.', 1)[1]}" not in (api / f"{e}.html").read_text()]


def missing_notebook_pages(html):
    """Executed study notebooks with no page, or a page without their figures."""
    bad = []
    for nb in NOTEBOOKS:
        page = Path(html) / "results" / "executed" / f"{nb.stem}.html"
        if not page.is_file():
            bad.append(f"{nb.name}: no page")
        elif "image/png" in nb.read_text() and "<img" not in page.read_text():
            bad.append(f"{nb.name}: its page shows no figure")
    return bad


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    for module in ("sphinx", "myst_nb", "numpydoc", "pydata_sphinx_theme"):
        pytest.importorskip(module, reason="the docs extra (sphinx, myst-nb, numpydoc, the theme) is not installed")
    out = tmp_path_factory.mktemp("docs")
    run = subprocess.run([sys.executable, *SPHINX, str(out / "html"), "-d", str(out / "doctrees")], cwd=ROOT,
                         capture_output=True, text=True, timeout=900)
    return run, out / "html"


def test_the_site_builds_without_a_warning(site):
    run, html = site
    assert run.returncode == 0 and not re.search(r"WARNING|ERROR", run.stderr + run.stdout), run.stderr[-5000:]
    assert (html / "index.html").is_file() and (html / "docs" / "index.html").is_file()
    for page in ("README", "docs/design", "docs/performance", "docs/history", "results/REPORT", "docs/api/index"):
        assert (html / f"{page}.html").is_file(), page


def test_every_public_estimator_has_an_api_page(site):
    _, html = site
    assert len(public_estimators()) >= 30  # the estimators and every baseline
    assert not missing_estimator_pages(html)


def test_every_executed_notebook_is_a_page_with_its_figures(site):
    _, html = site
    assert len(NOTEBOOKS) >= 14
    assert not missing_notebook_pages(html)
    page = (html / "results" / "executed" / "table1_trecvid_clustering.html").read_text()
    assert "HML-RF has the best NMI" in page  # its claims table, as the notebook printed it


def test_the_report_links_every_study_page(site):
    _, html = site
    report = (html / "results" / "REPORT.html").read_text()
    linked = set(re.findall(r'href="executed/([\w]+)\.html"', report))
    assert linked == {nb.stem for nb in NOTEBOOKS}


def test_the_checks_see_what_is_missing(tmp_path):
    """On an empty site every estimator and every notebook is missing."""
    assert missing_estimator_pages(tmp_path) == public_estimators()
    assert len(missing_notebook_pages(tmp_path)) == len(NOTEBOOKS)


def test_the_report_links_the_executed_notebook_of_each_study(tmp_path):
    """REPORT.md links a study's executed notebook when it is there, or staged to be committed
    with the result (the runner's commit); not otherwise."""
    import shutil

    from hmlkit.studies.report import study_section

    name = "table5_abstractness"
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(ROOT / "results" / f"{name}.nc", results)
    link = f"[executed/{name}.ipynb](executed/{name}.ipynb)"
    assert link not in "\n".join(study_section(name, results)[0])
    staged = tmp_path / "stage"
    staged.mkdir()
    (staged / f"{name}.ipynb").write_text("{}")
    assert link in "\n".join(study_section(name, results, staged=(None, None, staged))[0])
    (results / "executed").mkdir()
    (results / "executed" / f"{name}.ipynb").write_text("{}")
    assert link in "\n".join(study_section(name, results)[0])


def test_no_internal_issue_number_in_code_or_docs():
    """Code, comments, tests, tools and docs speak to users and maintainers, not to a tracker
    (``tests/test_layout.py`` holds the pattern's own examples)."""
    from test_layout import ISSUE_NUMBER

    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    hits = []
    for rel in tracked:
        path = ROOT / rel
        if rel == "tests/test_layout.py" or not path.is_file() or not rel.endswith(
                (".py", ".md", ".toml", ".yml", ".cff", ".cfg", ".txt", ".rst", ".ipynb", "Makefile", "run")):
            continue
        for i, line in enumerate(path.read_text(errors="ignore").splitlines(), 1):
            if ISSUE_NUMBER.search(line):
                hits.append(f"{rel}:{i}")
    assert not hits, f"internal issue numbers: {hits}"
