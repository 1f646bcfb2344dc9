"""Which registry entry plays each method of the paper's tables, and how a study runs one.

The paper's tables name methods (``K-means``, ``3VCCA+SpClust``...); the kit's registry
(:func:`hmlkit.baselines.registry`) names them in lower case. ``resolve`` finds the
entry, or says why there is none: a method the paper lists but the kit lacks is reported
as "not implemented", never dropped.
"""
from __future__ import annotations

import numpy as np

from ..baselines import MethodParameterError, make_estimator, registry, run_clustering
from ..cluster import HMLClustering
from .fitcache import cached_labels

FOREST_METHODS = ("hmlrf", "clustrf", "ccforest")

# table key -> registry name, where they differ; every other key is its registry name
ALIASES = {
    "cca": "cca_spclust",
    "3vcca": "3vcca_spclust",
    # Tables 6-8: X(GC) = GC completion from the clusters of clustering method X
    "cca_gc": "cca_spclust_gc",
    "3vcca_gc": "3vcca_spclust_gc",
    "spclust_blm_gc": "spclust_gc",
}
# the input mode of the X(GC) rows: X's ViFeat&BiTag-blm mode, as in Table 1 (Sec 4.3)
GC_INPUT_MODE = "blm"


def resolve(key, kind, mode=None):
    """``(spec, "")`` for the entry that plays table method ``key`` in input ``mode``,
    or ``(None, reason)``."""
    name = ALIASES.get(key, key)
    spec = registry().get(name)
    if spec is None or spec.kind != kind:
        return None, f"not implemented: no {kind} method {key!r} in hmlkit.baselines.registry()"
    ok, why = spec.available()
    if not ok:
        return None, f"{name}: unavailable ({why})"
    if mode is not None and spec.input_modes and mode not in spec.input_modes:
        return None, f"{name}: input mode {mode!r} not implemented (has {', '.join(spec.input_modes)})"
    return spec, ""


def gc_base(key):
    """The Table 1 method behind completion row ``key`` = "<X>_gc" (X clustered in its blm
    mode; "spclust_blm_gc" is SpClust's)."""
    base = key[:-len("_gc")]
    return "spclust" if base == "spclust_blm" else base


class NotApplicable(Exception):
    """A row that cannot be run on this data set (e.g. cluster-based completion without groups)."""


def hmlrf_labels(data, n_clusters, seed, forest_params, **variant):
    """HMLClustering's labels (through the studies' fit cache, :mod:`.fitcache`)."""
    def compute():
        model = HMLClustering(n_clusters=n_clusters, random_state=seed, **forest_params, **variant)
        return model.fit_predict(data.X, data.Y, layers=data.layers)
    return cached_labels("hmlrf", {"forest": forest_params, "variant": variant}, data, n_clusters, seed, compute)


def _params_of(key, forest_params, method_params):
    """The study's parameters of table method ``key``: the profile's ``method_params[key]``,
    and tau for the forest methods ("tau fixed to 1000 for all random forest models", Sec 4.1)."""
    params = dict((method_params or {}).get(key, {}))
    if key in FOREST_METHODS:
        params["n_estimators"] = forest_params["n_estimators"]
    return params


def cluster_labels(key, mode, data, n_clusters, seed, forest_params, method_params=None):
    """Cluster ``data`` with table method ``key`` in input ``mode``; returns labels.

    ``forest_params``: tau/phi/threads (the forest methods take tau from it);
    ``method_params``: {method key: {parameter: value}}, the profile's settings of methods.
    Raises ``NotImplementedError(reason)`` when the kit has no such method or mode, and
    :class:`~hmlkit.baselines.MethodParameterError` when the method does not take one of
    the study's parameters."""
    if key == "hmlrf":
        return hmlrf_labels(data, n_clusters, seed, forest_params)
    if key == "hmlrf_paper":  # the paper's exact model beside the kit's defaults
        from ..cluster import PAPER_SETTINGS

        return hmlrf_labels(data, n_clusters, seed, forest_params, **PAPER_SETTINGS)
    spec, why = resolve(key, "clustering", mode)
    if spec is None:
        raise NotImplementedError(why)
    params = _params_of(key, forest_params, method_params)
    return cached_labels(f"{spec.name}/{mode}", params, data, n_clusters, seed, lambda: run_clustering(
        spec.name, mode, data, n_clusters=n_clusters, random_state=seed, **params).labels)


def completion_scores_for(key, observed, n_clusters, seed, cfg):
    """(n, m) completion scores of table row ``key`` on ``observed`` data.

    The X(GC) rows are the registry's ``<X>_gc`` entries (GC completion from the clusters of
    X fitted in its blm mode); HML-RF rows take the study's forest settings. A method
    without ``random_state`` (deterministic) is run without one."""
    spec, why = resolve(key, "completion")
    if spec is None:
        raise NotImplementedError(why)
    if key.startswith("hmlrf"):
        params = dict(cfg.forest_params, random_state=seed)
        if key == "hmlrf_gc":
            if n_clusters is None:
                raise NotApplicable("GC needs the number of clusters: the data set has no ground-truth groups")
            params["n_clusters"] = n_clusters
        est = make_estimator(spec.name, **params)
    elif key.endswith("_gc"):
        if n_clusters is None:
            raise NotApplicable("cluster-based completion needs the number of clusters: "
                                "the data set has no ground-truth groups")
        params = _params_of(gc_base(key), cfg.forest_params, cfg.method_params)
        # the registry's <X>_gc row: its factory sets the parameters on X's estimator
        est = spec.factory(input_mode=GC_INPUT_MODE, n_clusters=n_clusters, random_state=seed, **params)
    else:
        est = make_estimator(spec.name, **cfg.method_params.get(key, {}))
        if "random_state" in est.get_params():
            est.set_params(random_state=seed)
    est.fit(observed.X, observed.Y, layers=observed.layers)
    return np.asarray(est.predict_scores(), dtype=float)


__all__ = ["ALIASES", "FOREST_METHODS", "GC_INPUT_MODE", "MethodParameterError", "NotApplicable", "resolve", "gc_base",
           "hmlrf_labels", "cluster_labels", "completion_scores_for"]
