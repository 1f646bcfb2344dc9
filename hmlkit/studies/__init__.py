"""The experiment layer: one papermill notebook per table/figure of the HML-RF paper
(``studies/*.ipynb``), and the code they call, one module per job:

``config``
    :func:`setup` validates a notebook's parameters -> :class:`StudyConfig`
``profiles``
    the settings of every study under the quick / standard / paper profiles
``data``
    :func:`load_data` and the changes the studies make to data (layers, sparseness)
``methods``
    which registry entry plays each method of the tables, and running one
``grids``
    the grids (methods x data x sparseness x folds) and one helper per study
``examples``
    Figs 4, 7, 9 (example clusters and completions)
``real``
    the real-data study (Corel5k, Corel16k)
``plots``
    ``side_by_side`` and the figures
``saving``
    :func:`save` (atomic ``.nc`` + ``.png`` with the run's attrs), :func:`show_claims`
``paper_values``
    the published numbers of the HML-RF paper and of the four seed papers
``claims``
    judges the papers' claims on our results (``claims.paper``, ``claims.seeds``)
``runner``
    ``python -m hmlkit.studies run [NAMES...] --profile quick|standard|paper``
``report``
    ``results/REPORT.md``
``seed_*``
    the seed-paper studies (``seed_lmmc``, ``seed_ghfart``, ``seed_sfss``, ``seed_mhcrf``):
    their protocols, saved and judged like the paper studies

A notebook does ``from hmlkit import studies as study`` and calls ``study.setup``,
``study.load_data``, ``study.clustering_grid``... : the names below are those of the
modules above, imported on first use (so the runner starts without loading xarray).
"""
from __future__ import annotations

import importlib

from .profiles import PROFILES, STUDIES, settings
from . import keys  # noqa: F401  (in a kernel of the runner: records the data files read from now on)

# notebook-facing name -> the module of this package that defines it
_API = {
    "config": ("StudyConfig", "SeedConfig", "seed_setup", "setup", "check_sparseness", "check_dataset", "dataset_name",
               "METRICS", "SCORE_METRICS", "HUB_RATIO", "SYNTHETIC", "NAMED"),
    "data": ("load_data", "load_datasets", "reduce_tags", "with_layers", "specific_only", "sparsify"),
    "methods": ("resolve", "hmlrf_labels", "cluster_labels", "completion_scores_for", "NotApplicable",
                "FOREST_METHODS"),
    "grids": ("clustering_scores", "clustering_grid", "filter_rows", "completion_rows", "nmi_grid", "table_variant",
              "hmlrf_variant", "relative_drop", "tau_phi_grid", "completion_grid", "MEASURES", "NS",
              "TABLE1_KEYS", "TABLE2_KEYS", "TABLE3_KEYS", "COMPLETION_KEYS", "VARIANTS",
              "sparseness_study", "components_study", "depth_study", "abstractness_study"),
    "examples": ("cluster_examples", "completion_examples", "examples_study"),
    "plots": ("side_by_side", "plot_clustering_table", "plot_sweep", "plot_sparseness", "plot_components",
              "plot_parameters", "plot_metric_table", "plot_abstractness", "plot_completion", "plot_examples"),
    "saving": ("save", "save_result", "show_claims", "git_commit", "atomic_path", "write_dataset_atomic",
               "save_figure_atomic", "write_text_atomic"),
}
_WHERE = {name: module for module, names in _API.items() for name in names}

__all__ = ["PROFILES", "STUDIES", "settings", "run", *_WHERE]


def __getattr__(name):
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE))


def run(*args, **kwargs):
    from .runner import run as _run

    return _run(*args, **kwargs)
