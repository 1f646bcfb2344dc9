"""Baseline methods of the paper's comparison tables and the seed systems.

``registry()`` (:mod:`.registry`) maps each method's name (the paper's, lower-case) to a
:class:`MethodSpec`. Clustering entries live in ``_clustering_registry``,
completion entries in ``_completion_registry``: one file per concern, so the
two families grow independently.
"""
from __future__ import annotations

from ._spec import MethodSpec
from .registry import get_method, registry

__all__ = ["MethodSpec", "registry", "get_method", "make_estimator", "fit_in_mode", "run_clustering",
           "ClusteringResult", "MethodParameterError"]
_FROM_RUN = ("run_clustering", "ClusteringResult", "MethodParameterError", "fit_in_mode", "make_estimator")


def __getattr__(name):
    # the names of .run load on first use, so that ``python -m
    # hmlkit.baselines.run`` does not find its module imported already by the
    # package (runpy's RuntimeWarning)
    if name in _FROM_RUN:
        from . import run

        return getattr(run, name)
    raise AttributeError(f"module 'hmlkit.baselines' has no attribute {name!r}")
