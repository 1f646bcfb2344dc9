"""Baseline methods of the paper's comparison tables and the seed systems.

``registry()`` maps each method's name (the paper's, lower-case) to a
:class:`MethodSpec`. Clustering entries live in ``_clustering_registry``,
completion entries in ``_completion_registry``: one file per concern, so the
two families grow independently.
"""
from __future__ import annotations

from ._spec import MethodSpec


def registry() -> dict:
    """All registered methods, name -> :class:`MethodSpec`."""
    from ._clustering_registry import clustering_methods
    from ._completion_registry import completion_methods

    out = {}
    for spec in list(clustering_methods()) + list(completion_methods()):
        if spec.name in out:
            raise RuntimeError(f"method {spec.name!r} registered twice")
        out[spec.name] = spec
    return out


def get_method(name: str) -> MethodSpec:
    reg = registry()
    if name not in reg:
        raise ValueError(f"unknown method {name!r}; known: {', '.join(sorted(reg))}")
    return reg[name]


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
