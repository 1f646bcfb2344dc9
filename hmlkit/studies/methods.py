"""Which registry entry plays each method of the paper's tables, and how a study runs one.

The paper's tables name methods (``K-means``, ``3VCCA+SpClust``...); the kit's registry
(:func:`hmlkit.baselines.registry`) names them in lower case. ``resolve`` finds the
entry, or says why there is none: a method the paper lists but the kit lacks is reported
as "not implemented", never dropped.
"""
from __future__ import annotations

import inspect

import numpy as np

FOREST_METHODS = ("hmlrf", "clustrf", "ccforest")

# table key -> registry names tried in order
ALIASES = {
    "kmeans": ("kmeans", "k-means"),
    "spclust": ("spclust", "spectral"),
    "clustrf": ("clustrf",),
    "affprop": ("affprop", "affinity_propagation"),
    "mmc": ("mmc",),
    "lmmc": ("lmmc", "l-mmc", "latent_mmc"),
    "cca": ("cca", "cca_spclust", "cca+spclust"),
    "3vcca": ("3vcca", "vcca3", "cca3", "3vcca_spclust"),
    "ccforest": ("ccforest", "cc_forest", "cc-forest"),
    "aasc": ("aasc",),
    "dcca": ("dcca",),
    "dccae": ("dccae",),
    "smmc": ("smmc", "s-mmc", "structural_mmc"),
    "fmmc": ("fmmc", "f-mmc", "flip_mmc"),
    "hmlrf": ("hmlrf",),
    "lsr": ("lsr",),
    "tcmr": ("tcmr",),
    "hmlrf_gc": ("hmlrf_gc",),
    "hmlrf_ln": ("hmlrf_ln",),
    "hmlrf_am": ("hmlrf_am",),
}


def _registry():
    try:
        from ..baselines import registry
    except ImportError as exc:  # pragma: no cover - package always has it
        return {}, f"hmlkit.baselines unavailable: {exc}"
    try:
        return registry(), ""
    except Exception as exc:  # a broken entry must not hide the rest of the table
        return {}, f"registry failed: {exc}"


def resolve(key, kind, mode=None):
    """``(spec, "")`` for the entry that plays table method ``key`` in input ``mode``,
    or ``(None, reason)``."""
    reg, err = _registry()
    if err:
        return None, err
    for name in ALIASES.get(key, (key,)):
        spec = reg.get(name)
        if spec is None:
            continue
        if spec.kind != kind:
            continue
        ok, why = spec.available()
        if not ok:
            return None, f"{name}: unavailable ({why})"
        if mode is not None and spec.input_modes and mode not in spec.input_modes:
            return None, f"{name}: input mode {mode!r} not implemented (has {', '.join(spec.input_modes)})"
        return spec, ""
    return None, f"not implemented: no {kind} method {key!r} in hmlkit.baselines.registry()"


def known_keys():
    return tuple(ALIASES)


class NotApplicable(Exception):
    """A row that cannot be run on this data set (e.g. cluster-based completion without groups)."""



def _call(fn, *args, **kwargs):
    """Call ``fn`` with the keyword arguments its signature accepts."""
    sig = inspect.signature(fn)
    if not any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        kwargs = {k: v for k, v in kwargs.items() if k in sig.parameters}
    return fn(*args, **kwargs)


def hmlrf_labels(data, n_clusters, seed, forest_params, **variant):
    from ..cluster import HMLClustering

    forest_params = {k: v for k, v in forest_params.items() if k != "methods"}
    model = HMLClustering(n_clusters=n_clusters, random_state=seed, **forest_params, **variant)
    return np.asarray(model.fit_predict(data.X, data.Y, layers=data.layers))


def cluster_labels(key, mode, data, n_clusters, seed, forest_params):
    """Cluster ``data`` with table method ``key`` in input ``mode``; returns labels.

    Raises ``NotImplementedError(reason)`` when the kit has no such method or mode."""
    if key == "hmlrf":
        return hmlrf_labels(data, n_clusters, seed, forest_params)
    spec, why = resolve(key, "clustering", mode)
    if spec is None:
        raise NotImplementedError(why)
    try:
        from ..baselines.run import run_clustering
    except ImportError as exc:
        raise NotImplementedError(f"hmlkit.baselines.run not available ({exc})")
    params = dict(forest_params.get("methods", {}).get(key, {}))
    if key in FOREST_METHODS:  # "tau fixed to 1000 for all random forest models" (Sec 4.1)
        params["n_estimators"] = forest_params["n_estimators"]
    try:
        res = run_clustering(spec.name, mode, data, n_clusters=n_clusters, random_state=seed, **params)
    except TypeError:
        if not params:
            raise
        res = run_clustering(spec.name, mode, data, n_clusters=n_clusters, random_state=seed)
    return np.asarray(getattr(res, "labels", res))



def completion_scores_for(key, observed, n_clusters, seed, cfg):
    """(n, m) completion scores of table row ``key`` on ``observed`` data.

    ``X_gc`` rows that the completion registry lacks are composed here: the clustering
    method X (``spclust_blm_gc`` = SpClust in blm mode; others in blm mode) followed by
    GC completion (``hmlkit.complete.cluster_tag_scores``), as the paper does (Sec 4.3)."""
    if key.endswith("_gc") and key != "hmlrf_gc":
        # X(GC): the clustering method X (SpClust in blm mode for SpClust-blnc; the others in
        # their ViFeat&BiTag-blm mode, as in Table 1) followed by GC completion.
        base = "spclust" if key == "spclust_blm_gc" else key[:-3]
        if n_clusters is None:
            raise NotApplicable("cluster-based completion needs the number of clusters: "
                                "the data set has no ground-truth groups")
        labels = cluster_labels(base, "blm", observed, n_clusters, seed, cfg.forest_params)
        from ..complete import cluster_tag_scores

        return np.asarray(cluster_tag_scores(labels, observed.Y), dtype=float)
    spec, why = resolve(key, "completion")
    if spec is None:
        raise NotImplementedError(why)
    if key.startswith("hmlrf"):
        params = {k: v for k, v in cfg.forest_params.items() if k != "methods"}
        params["random_state"] = seed
        if key == "hmlrf_gc":
            if n_clusters is None:
                raise NotApplicable("GC needs the number of clusters: the data set has no ground-truth groups")
            params["n_clusters"] = n_clusters
        est = spec.factory(**params)
    else:
        try:
            est = spec.factory(random_state=seed)
        except TypeError:  # a deterministic method
            est = spec.factory()
    _call(est.fit, observed.X, observed.Y, layers=observed.layers)
    return np.asarray(est.predict_scores(), dtype=float)

