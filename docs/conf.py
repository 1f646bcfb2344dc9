"""Sphinx configuration of the documentation site (``make docs``).

The source directory is the repository root (``sphinx -c docs . docs/_build/html``), so the
README, ``docs/*.md``, ``results/REPORT.md`` and the executed study notebooks are pages as
they are, their relative links and figures resolving as on GitHub. Nothing is executed:
the notebooks are rendered from their committed outputs."""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import hmlkit  # noqa: E402

# autosummary writes a page per public name into docs/api/generated but never removes one: after a
# name moved, its old page (failing to import) would stay and break the warnings-as-errors build
import shutil  # noqa: E402

shutil.rmtree(ROOT / "docs" / "api" / "generated", ignore_errors=True)

project = "hmlkit"
author = "hmlkit developers"
copyright = "2026, hmlkit developers"
release = version = hmlkit.__version__

extensions = [
    "myst_nb",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
]

root_doc = "docs/index"
# the pages: everything else in the repository (code, tests, data) is no page
include_patterns = ["README.md", "data/README.md", "docs/*.md", "docs/api/**", "results/REPORT.md", "results/executed/*.ipynb"]
exclude_patterns = ["docs/_build", ".venv", ".git", "data/cache", "hmlkit", "tests", "studies", "tools", "benchmarks",
                    "figures", "results/quick", "results/paper", "results/executed/*.failed.ipynb"]
templates_path = [str(ROOT / "docs" / "_templates")]  # absolute: autosummary reads it from the source dir

# MyST: GitHub-style heading anchors (the README's links to #citation and others)
myst_heading_anchors = 4
myst_enable_extensions = ["dollarmath", "colon_fence"]
# the committed outputs, never executed at build time
nb_execution_mode = "off"
nb_merge_streams = True

autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "inherited-members": False, "show-inheritance": True}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()

html_theme = "pydata_sphinx_theme"
html_title = f"hmlkit {version}"
html_extra_path = ["_root"]  # index.html at the site's root, sending to docs/index.html
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_show_sourcelink = False
# pages with no sub-pages: no (empty) section navigation beside them
html_sidebars = {page: [] for page in ("README", "data/README", "docs/design", "docs/cluster", "docs/performance", "docs/memory", "docs/history",
                                        "results/REPORT")}


def _skip_member(app, what, name, obj, skip, options):
    # scikit-learn's metadata-routing setters (set_fit_request, ...) on every estimator: theirs, not ours
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
