"""Notebook-facing helpers of the paper studies (``studies/*.ipynb``).

A study notebook is short: ``setup`` validates its papermill parameters (and fails at once
on a bad one), ``load_data`` builds the data, one of the ``*_grid`` functions runs the
methods and returns an :class:`xarray.Dataset` with named dims (method row, metric, fold,
sparseness...), the paper's published numbers attached beside ours, ``side_by_side``
shows both, a ``plot_*`` function draws the figure and ``save`` writes ``results/<name>.nc``
and ``figures/<name>.png`` atomically.

Methods the paper lists but the kit lacks are rows with ``status = "not implemented"`` and
the reason; their scores are NaN (never the paper's). Rows the paper only quotes from
another paper have ``paper_status = "quoted"``.
"""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr

from .studies import paper_values as pv
from .studies.methods import resolve
from .studies.profiles import PROFILES, STUDIES, check_profile, check_study, data_size, settings

METRICS = pv.CLUSTER_METRICS
# what every clustering result stores: the paper's metrics, then the largest
# cluster over the largest true group (a catch-all cluster shows as a ratio
# over HUB_RATIO, flagged in REPORT.md)
SCORE_METRICS = METRICS + ("largest_ratio",)
HUB_RATIO = 3.0
SYNTHETIC = ("trecvid", "nuswide")
NAMED = SYNTHETIC + ("corel16k", "corel5k")  # names hmlkit.data.load_dataset resolves
FOREST_METHODS = ("hmlrf", "clustrf", "ccforest")


# ----------------------------------------------------------------------------------------
# parameters
# ----------------------------------------------------------------------------------------
@dataclass
class StudyConfig:
    """The validated, resolved parameters of one study run."""

    name: str
    profile: str
    seed: int
    results_dir: str
    figures_dir: str
    folds: int
    n_estimators: int
    min_samples_leaf: int
    n_jobs: int = 1
    datasets: tuple = ()
    methods: tuple | None = None
    extra: dict = field(default_factory=dict)
    started: float = field(default_factory=time.time)

    @property
    def forest_params(self):
        """Forest settings, plus the profile's baseline parameters under ``"methods"``."""
        return {"n_estimators": self.n_estimators, "min_samples_leaf": self.min_samples_leaf,
                "n_jobs": self.n_jobs, "methods": self.extra.get("method_params", {})}

    def seeds(self):
        """One model seed per fold (repeat): seed, seed+1, ..."""
        return [self.seed + f for f in range(self.folds)]

    def as_attrs(self):
        d = {k: v for k, v in self.__dict__.items() if k not in ("extra", "started")}
        d.update(self.extra)
        return {"parameters": json.dumps(d, default=_jsonable, sort_keys=True)}

    def __getitem__(self, key):
        return self.extra[key] if key in self.extra else getattr(self, key)


def _jsonable(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, (tuple, set, np.ndarray)):
        return list(o)
    return str(o)


def _check_int(name, value, low=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def check_sparseness(values):
    """Tag-removal rates: each in [0, 1)."""
    vals = tuple(float(v) for v in np.atleast_1d(values))
    if not vals:
        raise ValueError("sparseness must list at least one rate")
    for v in vals:
        if not (0.0 <= v < 1.0) or not np.isfinite(v):
            raise ValueError(f"sparseness rate {v!r} is outside [0, 1): it is the fraction of tags removed")
    return vals


def dataset_name(dataset):
    """Short name of a data set: the profile name, else the file or directory stem."""
    return str(dataset) if str(dataset) in NAMED else Path(dataset).stem


def check_dataset(dataset):
    """A synthetic profile name (``trecvid``, ``nuswide``) or an existing path (.arff, .npz,
    NUS-WIDE directory)."""
    if not isinstance(dataset, (str, os.PathLike)):
        raise ValueError(f"dataset must be a profile name {SYNTHETIC} or a path, got {dataset!r}")
    if str(dataset) in NAMED:
        return str(dataset)
    path = Path(dataset).expanduser()
    if not path.exists():
        raise ValueError(f"dataset {str(dataset)!r} is neither a named data set {NAMED} "
                         f"nor an existing file or data directory (not found: {path})")
    return str(path)


def setup(name, profile="quick", seed=0, results_dir="results", figures_dir="figures", *,
          dataset=None, datasets=None, methods=None, folds=None, n_estimators=None,
          min_samples_leaf=None, n_jobs=1, allowed_methods=None, **extra):
    """Validate a study's papermill parameters, fill the ones left ``None`` from the profile.

    Raises ``ValueError`` with a clear message on an unknown study, profile or method, a
    sparseness rate outside [0, 1), a missing data file or directory, or a non-positive count.
    Cheap: nothing is computed or loaded here.
    """
    check_study(name)
    check_profile(profile)
    s = settings(name, profile)
    seed = _check_int("seed", seed, low=0)
    folds = _check_int("folds", s["folds"] if folds is None else folds)
    n_estimators = _check_int("n_estimators", s["n_estimators"] if n_estimators is None else n_estimators)
    min_samples_leaf = _check_int("min_samples_leaf",
                                  s["min_samples_leaf"] if min_samples_leaf is None else min_samples_leaf)
    n_jobs = _check_int("n_jobs", n_jobs if n_jobs is not None else 1)
    if datasets is None:
        datasets = () if dataset is None else (dataset,)
    elif isinstance(datasets, (str, os.PathLike)):
        datasets = (datasets,)
    datasets = tuple(check_dataset(d) for d in datasets)
    if methods is not None:
        if isinstance(methods, str):
            methods = (methods,)
        methods = tuple(methods)
        if allowed_methods is not None:
            bad = [m for m in methods if m not in allowed_methods]
            if bad:
                raise ValueError(f"unknown method(s) {bad} for {name}; "
                                 f"choose from {', '.join(sorted(set(allowed_methods)))}")
    for key, val in list(extra.items()):
        if val is None and key in s:
            extra[key] = s[key]
    if "sparseness" in extra and extra["sparseness"] is not None:
        extra["sparseness"] = check_sparseness(extra["sparseness"])
    for key in ("n_samples", "n_tags"):
        if extra.get(key) is not None:
            extra[key] = _check_int(key, extra[key], low=2)
    for key in ("n_clusters_shown", "n_members_shown", "n_examples"):
        if extra.get(key) is not None:
            extra[key] = _check_int(key, extra[key])
    for key, low in (("taus", 1), ("phis", 1), ("n_layers", 1)):
        val = extra.get(key)
        if val is not None:
            vals = tuple(np.atleast_1d(val).tolist())
            if not vals:
                raise ValueError(f"{key} must list at least one value")
            extra[key] = vals if len(vals) > 1 or not np.isscalar(val) else vals[0]
            for v in vals:
                _check_int(key, v, low=low)
    if extra.get("hidden_fraction") is not None:
        h = float(extra["hidden_fraction"])
        if not 0.0 < h < 1.0:
            raise ValueError(f"hidden_fraction must be in (0, 1), got {h!r}")
        extra["hidden_fraction"] = h
    extra["method_params"] = s["method_params"]
    return StudyConfig(name=name, profile=profile, seed=seed, results_dir=str(results_dir),
                       figures_dir=str(figures_dir), folds=folds, n_estimators=n_estimators,
                       min_samples_leaf=min_samples_leaf, n_jobs=n_jobs, datasets=datasets,
                       methods=methods, extra=extra)


# ----------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------
def reduce_tags(data, n_tags):
    """Keep the ``n_tags`` most frequent tags (by complete tags when known); layers follow.

    Used by the quick/standard profiles to shrink the 1000-tag ``nuswide`` profile.
    """
    from .data import TaggedData

    if n_tags is None or n_tags >= data.n_tags:
        return data
    ref = data.Y_true if data.Y_true is not None else data.Y
    freq = np.asarray(ref.sum(axis=0)).ravel()
    keep = np.sort(np.argsort(-freq, kind="stable")[:n_tags])
    remap = -np.ones(data.n_tags, dtype=np.int64)
    remap[keep] = np.arange(keep.size)

    def _layers(layers):
        if layers is None:
            return None
        out = [remap[np.asarray(l)][remap[np.asarray(l)] >= 0] for l in layers]
        return [np.sort(l) for l in out if l.size]

    meta = dict(data.meta)
    if meta.get("true_layers") is not None:
        meta["true_layers"] = _layers(meta["true_layers"])
    meta["reduced_tags"] = int(n_tags)
    return TaggedData(X=data.X, Y=data.Y[:, keep], layers=_layers(data.layers),
                      tag_names=[data.tag_names[j] for j in keep], groups=data.groups,
                      Y_true=None if data.Y_true is None else data.Y_true[:, keep],
                      name=data.name, meta=meta)


def load_data(dataset, cfg=None, n_samples=None, n_tags=None, random_state=0, groups=False, study=None):
    """The data of a study: a synthetic profile (sized by the run's profile unless
    ``n_samples``/``n_tags`` say otherwise) or a file/directory through
    ``hmlkit.data.load_dataset``. ``groups=True`` demands ground-truth groups."""
    dataset = check_dataset(dataset)
    n_features = None
    if cfg is not None and dataset in SYNTHETIC:
        n0, m0, n_features = data_size(dataset, cfg.profile)
        n_samples = n0 if n_samples is None else n_samples
        n_tags = m0 if n_tags is None else n_tags
    try:
        from .data import load_dataset
    except ImportError:  # the real-data loader not merged yet
        load_dataset = None
    if load_dataset is not None:
        data = load_dataset(dataset, n_samples=n_samples, random_state=random_state)
    elif dataset in SYNTHETIC:
        from .data import make_synthetic

        data = make_synthetic(dataset, n_samples=n_samples, random_state=random_state)
    else:
        from .data import load_arff

        if not dataset.endswith(".arff"):
            raise ValueError(f"cannot load {dataset!r}: hmlkit.data.load_dataset is not available")
        from ._paths import corel16k_path

        # until load_dataset lands: the shared Corel16k file has 500 feature attributes (its README)
        nf = 500 if Path(dataset).resolve() == corel16k_path().resolve() else None
        data = load_arff(dataset, n_features=nf)
        if n_samples is not None and n_samples < data.n_samples:
            idx = np.sort(np.random.default_rng(random_state).choice(data.n_samples, n_samples, replace=False))
            data = data.subset(idx)
    data = reduce_tags(data, n_tags)
    if n_features is not None and n_features < data.n_features:
        cols = np.sort(np.random.default_rng(random_state).choice(data.n_features, n_features, replace=False))
        from dataclasses import replace

        data = replace(data, X=np.ascontiguousarray(data.X[:, cols]),
                       meta={**data.meta, "feature_subset": int(n_features)})
    study = study or (cfg.name if cfg is not None else "this study")
    try:
        from .data import require
    except ImportError:
        require = None
    if require is not None:
        return require(data, groups=groups, study=study)
    if groups and data.groups is None:
        raise ValueError(f"data set {data.name!r} has no ground-truth groups: {study} needs them")
    return data


def with_layers(data, n_layers, random_state=0):
    """``data`` with an estimated ``n_layers`` hierarchy (Sec 4.1) when its tags are flat."""
    if n_layers is None or len(data.layers) == n_layers:
        return data
    from .tags import estimate_layers

    layers = estimate_layers(data.Y, n_layers=n_layers, random_state=random_state)
    return data.with_tags(data.Y, layers=list(layers))


def specific_only(data):
    """Table 5's '1-layer most specific tags': only the last (most specific) layer's tags, flat."""
    from .data import TaggedData

    keep = np.sort(np.asarray(data.layers[-1]))
    return TaggedData(X=data.X, Y=data.Y[:, keep], layers=None,
                      tag_names=[data.tag_names[j] for j in keep], groups=data.groups,
                      Y_true=None if data.Y_true is None else data.Y_true[:, keep],
                      name=data.name, meta=dict(data.meta))


def sparsify(data, rate, random_state):
    """Remove a fraction ``rate`` of the observed tags (Fig 5/6's sparseness rate)."""
    if rate == 0:
        return data
    from .data import remove_tags

    return remove_tags(data, rate, random_state=random_state)


# ----------------------------------------------------------------------------------------
# running methods
# ----------------------------------------------------------------------------------------
def _call(fn, *args, **kwargs):
    """Call ``fn`` with the keyword arguments its signature accepts."""
    sig = inspect.signature(fn)
    if not any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        kwargs = {k: v for k, v in kwargs.items() if k in sig.parameters}
    return fn(*args, **kwargs)


def hmlrf_labels(data, n_clusters, seed, forest_params, **variant):
    from .cluster import HMLClustering

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
        from .baselines.run import run_clustering
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


def clustering_scores(truth, labels):
    from .metrics import clustering_scores as cs

    s = cs(truth, labels)
    _, true_sizes = np.unique(np.asarray(truth), return_counts=True)
    _, sizes = np.unique(np.asarray(labels), return_counts=True)
    return [float(s[m]) for m in METRICS] + [float(sizes.max() / true_sizes.max())]


def _pad_paper(values):
    """Paper values over METRICS, padded with NaN to SCORE_METRICS (the paper
    gives no cluster sizes)."""
    values = np.asarray(values, dtype=float)
    pad = np.full(values.shape[:-1] + (len(SCORE_METRICS) - len(METRICS),), np.nan)
    return np.concatenate([values, pad], axis=-1)


class NotApplicable(Exception):
    """A row that cannot be run on this data set (e.g. cluster-based completion without groups)."""


def _status_of(exc):
    if isinstance(exc, NotApplicable):
        return "not applicable", str(exc)
    if isinstance(exc, (NotImplementedError, ImportError)):  # a missing piece, not a failure
        return "not implemented", str(exc) or "not implemented"
    return "error", f"{type(exc).__name__}: {exc}"


def clustering_grid(data, rows, cfg, progress=True):
    """Run every (mode, method) row over the folds.

    ``rows``: list of (mode, key, label, paper_status, paper_values) as in
    :mod:`hmlkit.studies.paper_values` (TABLE1/TABLE2).
    Returns ``score(row, metric, fold)``, ``paper(row, metric)`` and per-row
    ``status``/``reason``/``paper_status``/``mode``/``method``/``label`` coords.
    """
    k = data.n_groups
    seeds = cfg.seeds()
    score = np.full((len(rows), len(SCORE_METRICS), len(seeds)), np.nan)
    status, reason = [], []
    for i, (mode, key, label, _ps, _pvals) in enumerate(rows):
        st, why = "measured", ""
        t0 = time.time()
        for f, s in enumerate(seeds):
            try:
                labels = cluster_labels(key, mode, data, k, s, cfg.forest_params)
                score[i, :, f] = clustering_scores(data.groups, labels)
            except Exception as exc:  # recorded in the table, never hidden
                st, why = _status_of(exc)
                score[i] = np.nan
                break
        status.append(st)
        reason.append(why)
        if progress:
            nmi = np.nanmean(score[i, 1]) if st == "measured" else float("nan")
            print(f"  {mode:>8s} {label:<16s} {st:<16s} NMI={nmi:.3f}  ({time.time() - t0:.1f}s) {why}",
                  flush=True)
    keys = [f"{r[0]}/{r[1]}" for r in rows]
    ds = xr.Dataset(
        {"score": (("row", "metric", "fold"), score),
         "paper": (("row", "metric"), _pad_paper([r[4] for r in rows]))},
        coords={"row": keys, "metric": list(SCORE_METRICS), "fold": np.arange(len(seeds)),
                "mode": ("row", [r[0] for r in rows]), "method": ("row", [r[1] for r in rows]),
                "label": ("row", [r[2] for r in rows]), "paper_status": ("row", [r[3] for r in rows]),
                "status": ("row", status), "reason": ("row", reason)},
    )
    return ds


def filter_rows(rows, methods):
    if methods is None:
        return list(rows)
    return [r for r in rows if r[1] in methods or f"{r[0]}/{r[1]}" in methods]


def nmi_grid(data, variants, sparseness, cfg, progress=True):
    """NMI-style sweep: every variant x sparseness x fold -> ``score(variant, sparseness, metric, fold)``.

    ``variants``: {name: callable(data, n_clusters, seed) -> labels}. A callable raising
    ``NotImplementedError`` marks its variant "not implemented"."""
    names = list(variants)
    seeds = cfg.seeds()
    score = np.full((len(names), len(sparseness), len(SCORE_METRICS), len(seeds)), np.nan)
    status = ["measured"] * len(names)
    reason = [""] * len(names)
    for j, rate in enumerate(sparseness):
        for f, s in enumerate(seeds):
            d = sparsify(data, rate, random_state=s)
            for i, name in enumerate(names):
                if status[i] != "measured":
                    continue
                t0 = time.time()
                try:
                    labels = variants[name](d, data.n_groups, s)
                    score[i, j, :, f] = clustering_scores(data.groups, labels)
                except Exception as exc:
                    status[i], reason[i] = _status_of(exc)
                    score[i] = np.nan
                if progress:
                    print(f"  sparseness={rate:.2f} fold={f} {name:<18s} NMI={score[i, j, 1, f]:.3f} "
                          f"({time.time() - t0:.1f}s) {reason[i]}", flush=True)
    return xr.Dataset(
        {"score": (("variant", "sparseness", "metric", "fold"), score)},
        coords={"variant": names, "sparseness": list(sparseness), "metric": list(SCORE_METRICS),
                "fold": np.arange(len(seeds)), "status": ("variant", status), "reason": ("variant", reason)},
    )


def table_variant(key, mode, cfg):
    """A clustering row of the tables as an ``nmi_grid`` variant."""
    return lambda d, k, s: cluster_labels(key, mode, d, k, s, cfg.forest_params)


def hmlrf_variant(cfg, **variant):
    """HML-RF with forest parameters changed (``hierarchy=False``, ``correlations=False``...)."""
    return lambda d, k, s: hmlrf_labels(d, k, s, cfg.forest_params, **variant)


def relative_drop(nmi):
    """Table 3's relative NMI drop (NMI(0) - NMI(s)) / NMI(0), along ``sparseness``."""
    base = nmi.sel(sparseness=0.0)
    return (base - nmi) / base


def tau_phi_grid(data, taus, phis, cfg, progress=True):
    """Fig 8: NMI of HML-RF vs forest size tau and leaf size phi.

    tau: one forest of max(tau) trees per fold; the first t trees give the tau = t point
    (trees are independent, so a forest's first t trees are a t-tree forest with the same
    seed stream). phi: a forest of ``cfg.n_estimators`` trees per value.
    """
    from .affinity import leaf_affinity
    from .cluster import spectral_from_affinity
    from .forest import HMLForest

    seeds = cfg.seeds()
    k = data.n_groups
    tau_score = np.full((len(taus), len(SCORE_METRICS), len(seeds)), np.nan)
    phi_score = np.full((len(phis), len(SCORE_METRICS), len(seeds)), np.nan)
    for f, s in enumerate(seeds):
        forest = HMLForest(n_estimators=int(max(taus)), min_samples_leaf=cfg.min_samples_leaf,
                           random_state=s, n_jobs=cfg.n_jobs).fit(data.X, data.Y, layers=data.layers)
        leaves = forest.apply(data.X)
        for i, t in enumerate(taus):
            A = leaf_affinity(np.ascontiguousarray(leaves[:, :int(t)]))
            labels = spectral_from_affinity(A, k, random_state=s)
            tau_score[i, :, f] = clustering_scores(data.groups, labels)
            if progress:
                print(f"  fold={f} tau={t:<5d} NMI={tau_score[i, 1, f]:.3f}", flush=True)
        for i, phi in enumerate(phis):
            params = dict(cfg.forest_params, min_samples_leaf=int(phi))
            labels = hmlrf_labels(data, k, s, params)
            phi_score[i, :, f] = clustering_scores(data.groups, labels)
            if progress:
                print(f"  fold={f} phi={phi:<3d} NMI={phi_score[i, 1, f]:.3f}", flush=True)
    paper_tau = [pv.FIG8_POINTS["tau"].get(int(t), np.nan) for t in taus]
    paper_phi = [pv.FIG8_POINTS["phi"].get(int(p), np.nan) for p in phis]
    return xr.Dataset(
        {"score_tau": (("tau", "metric", "fold"), tau_score),
         "score_phi": (("phi", "metric", "fold"), phi_score),
         "paper_nmi_tau": (("tau",), np.array(paper_tau, dtype=float)),
         "paper_nmi_phi": (("phi",), np.array(paper_phi, dtype=float))},
        coords={"tau": [int(t) for t in taus], "phi": [int(p) for p in phis], "metric": list(SCORE_METRICS),
                "fold": np.arange(len(seeds))},
    )


# ---------------------------------------------------------------------------- completion
MEASURES = pv.COMPLETION_MEASURES
NS = pv.COMPLETION_N


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
        from .complete import cluster_tag_scores

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


def _gc_clusters(cfg):
    try:
        k = cfg["gc_clusters"]
    except (KeyError, AttributeError):
        return None
    return None if k is None else int(k)


def completion_grid(datasets, rows, cfg, hidden_fraction=0.4, progress=True):
    """Tables 6-8: every completion row x data set x fold.

    Each fold hides ``hidden_fraction`` of every sample's observed tags (the paper's
    60/40 split, Sec 4.1) and scores the recovered tags against the hidden ones.
    ``datasets``: {name: TaggedData}. Returns ``score(dataset, row, measure, N, fold)``,
    ``paper(dataset, row, measure, N)`` (NaN for data sets the paper did not use) and
    ``status(dataset, row)`` / ``reason(dataset, row)``."""
    from .data import hide_tags
    from .metrics import completion_scores

    names = list(datasets)
    keys = [r[0] for r in rows]
    seeds = cfg.seeds()
    score = np.full((len(names), len(keys), len(MEASURES), len(NS), len(seeds)), np.nan)
    status = np.full((len(names), len(keys)), "measured", dtype=object)
    reason = np.full((len(names), len(keys)), "", dtype=object)
    paper = np.full((len(names), len(keys), len(MEASURES), len(NS)), np.nan)
    ptab = pv.completion_table()
    for a, name in enumerate(names):
        data = datasets[name]
        for b, key in enumerate(keys):
            if name in ptab and key in ptab[name]:
                paper[a, b] = np.array([ptab[name][key][m] for m in MEASURES])
        for f, s in enumerate(seeds):
            observed, hidden = hide_tags(data, frac=hidden_fraction, random_state=s)
            for b, key in enumerate(keys):
                if status[a, b] != "measured":
                    continue
                t0 = time.time()
                try:
                    # GC rows need a cluster count: the ground-truth one when the data
                    # set has groups, else the study's ``gc_clusters``
                    k = data.n_groups if data.n_groups is not None else _gc_clusters(cfg)
                    sc = completion_scores_for(key, observed, k, s, cfg)
                    res = completion_scores(sc, observed.Y, hidden, N=NS)
                    for c, meas in enumerate(MEASURES):
                        score[a, b, c, :, f] = [res[f"{meas}@{n}"] for n in NS]
                except Exception as exc:
                    status[a, b], reason[a, b] = _status_of(exc)
                    score[a, b] = np.nan
                if progress:
                    print(f"  {name:<10s} fold={f} {key:<16s} AP@1={score[a, b, 0, 0, f]:.3f} "
                          f"({time.time() - t0:.1f}s) {reason[a, b]}", flush=True)
    return xr.Dataset(
        {"score": (("dataset", "row", "measure", "N", "fold"), score),
         "paper": (("dataset", "row", "measure", "N"), paper),
         "status": (("dataset", "row"), status.astype(str)),
         "reason": (("dataset", "row"), reason.astype(str))},
        coords={"dataset": names, "row": keys, "label": ("row", [r[1] for r in rows]),
                "measure": list(MEASURES), "N": list(NS), "fold": np.arange(len(seeds))},
    )


# ----------------------------------------------------------------------------------------
# one helper per study (the notebooks call these)
# ----------------------------------------------------------------------------------------
TABLE1_KEYS = sorted({r[1] for r in pv.TABLE1})
TABLE2_KEYS = sorted({r[1] for r in pv.TABLE2})
TABLE3_KEYS = [r[1] for r in pv.TABLE3]
COMPLETION_KEYS = [r[0] for r in pv.COMPLETION_ROWS]
VARIANTS = {"flattags": {"hierarchy": False, "correlations": False},  # Eq. 4: no hierarchy, no correlations
            "nocorr": {"correlations": False},                          # Eq. 5 without soft tags
            "hmlrf": {}}


def sparseness_study(data, cfg, progress=True):
    """Fig 5 / Table 3: NMI of the top-7 methods (ViFeat&BiTag input) vs tag removal rate.

    Returns ``score(row, sparseness, metric, fold)``, ``drop(row, sparseness)`` (relative NMI
    drop of the fold means), ``paper_drop(row, sparseness)`` (Table 3; 0 at 0%) and
    ``paper_nmi(row, sparseness)`` (Fig 5 points derived from Tables 1 and 3)."""
    rows = filter_rows([(m, k, l, "measured", d) for m, k, l, d in pv.TABLE3], cfg.methods)
    variants = {f"{m}/{k}": table_variant(k, m, cfg) for m, k, _l, _s, _d in rows}
    ds = nmi_grid(data, variants, cfg["sparseness"], cfg, progress=progress).rename(variant="row")
    ds = ds.assign_coords(label=("row", [r[2] for r in rows]))
    nmi = ds["score"].sel(metric="nmi").mean("fold")
    ds["drop"] = relative_drop(nmi) if 0.0 in ds["sparseness"].values else nmi * np.nan
    f5 = pv.fig5_points()
    sp_ = list(ds["sparseness"].values)
    pdrop = np.full((len(rows), len(sp_)), np.nan)
    pnmi = np.full_like(pdrop, np.nan)
    for i, (m, k, _l, _s, drops) in enumerate(rows):
        table = {0.0: 0.0, **dict(zip(pv.SPARSENESS, drops))}
        for j, s in enumerate(sp_):
            pdrop[i, j] = table.get(round(float(s), 2), np.nan)
            pnmi[i, j] = f5[(m, k)].get(round(float(s), 2), np.nan)
    ds["paper_drop"] = (("row", "sparseness"), pdrop)
    ds["paper_nmi"] = (("row", "sparseness"), pnmi)
    return ds


def components_study(data, cfg, progress=True):
    """Fig 6: HML-RF(FlatTags), HML-RF(NoCorr), HML-RF vs sparseness; ``paper_nmi(variant, sparseness)``
    holds the points the text states."""
    names = [v for v in VARIANTS if cfg.methods is None or v in cfg.methods]
    ds = nmi_grid(data, {v: hmlrf_variant(cfg, **VARIANTS[v]) for v in names}, cfg["sparseness"], cfg,
                  progress=progress)
    p = np.array([[pv.FIG6_POINTS.get(v, {}).get(round(float(s), 2), np.nan) for s in ds["sparseness"].values]
                  for v in names], dtype=float)
    ds["paper_nmi"] = (("variant", "sparseness"), p)
    return ds


def depth_study(data, cfg, progress=True):
    """Table 4: HML-RF on ``n_layers`` estimated hierarchy layers (Sec 4.1) -> ``score(n_layers, metric, fold)``."""
    layers = list(cfg["n_layers"])
    seeds = cfg.seeds()
    score = np.full((len(layers), len(SCORE_METRICS), len(seeds)), np.nan)
    for i, L in enumerate(layers):
        d = with_layers(data, int(L), random_state=cfg.seed)
        for f, s in enumerate(seeds):
            t0 = time.time()
            score[i, :, f] = clustering_scores(data.groups, hmlrf_labels(d, data.n_groups, s, cfg.forest_params))
            if progress:
                print(f"  layers={L} fold={f} NMI={score[i, 1, f]:.3f} ({time.time() - t0:.1f}s)", flush=True)
    paper = _pad_paper([pv.TABLE4.get(int(L), (np.nan,) * 5) for L in layers])
    return xr.Dataset({"score": (("n_layers", "metric", "fold"), score), "paper": (("n_layers", "metric"), paper)},
                      coords={"n_layers": [int(l) for l in layers], "metric": list(SCORE_METRICS),
                              "fold": np.arange(len(seeds))})


def abstractness_study(datasets, cfg, progress=True):
    """Table 5: HML-RF with 1-layer most-specific tags vs the 2-layer hierarchy, per data set.

    ``datasets``: {name: TaggedData with its 2-layer hierarchy}."""
    names = list(datasets)
    structures = ("specific", "hierarchy")
    seeds = cfg.seeds()
    score = np.full((len(names), 2, len(SCORE_METRICS), len(seeds)), np.nan)
    paper = np.full((len(names), 2, len(SCORE_METRICS)), np.nan)
    for a, name in enumerate(names):
        data = datasets[name]
        if name in pv.TABLE5:
            paper[a] = _pad_paper([pv.TABLE5[name][s] for s in structures])
        for b, d in enumerate((specific_only(data), data)):
            for f, s in enumerate(seeds):
                t0 = time.time()
                score[a, b, :, f] = clustering_scores(data.groups,
                                                      hmlrf_labels(d, data.n_groups, s, cfg.forest_params))
                if progress:
                    print(f"  {name} {structures[b]:<9s} fold={f} NMI={score[a, b, 1, f]:.3f} "
                          f"({time.time() - t0:.1f}s)", flush=True)
    return xr.Dataset({"score": (("dataset", "structure", "metric", "fold"), score),
                       "paper": (("dataset", "structure", "metric"), paper)},
                      coords={"dataset": names, "structure": list(structures), "metric": list(SCORE_METRICS),
                              "fold": np.arange(len(seeds))})


def _tags_of(Y, i, names, limit=8):
    idx = Y.indices[Y.indptr[i]:Y.indptr[i + 1]]
    return ", ".join(names[j] for j in idx[:limit]) + (" ..." if len(idx) > limit else "")


def cluster_examples(data, labels, n_clusters=3, n_members=6, random_state=0):
    """Figs 4, 7: a few discovered clusters with some members' observed tags; a member is
    'inconsistent' (red box in the paper) when its true group is not its cluster's dominant one."""
    rng = np.random.default_rng(random_state)
    sizes = np.bincount(labels)
    # clusters drawn at random (seeded) among those with enough members: not picked for looks
    eligible = np.flatnonzero(sizes >= min(n_members, 2))
    shown = np.sort(rng.choice(eligible, size=min(n_clusters, eligible.size), replace=False))
    tags = np.full((n_clusters, n_members), "", dtype=object)
    consistent = np.full((n_clusters, n_members), -1, dtype=np.int8)
    purity = np.full(n_clusters, np.nan)
    for a, c in enumerate(shown):
        members = np.flatnonzero(labels == c)
        dom = np.bincount(data.groups[members]).argmax()
        purity[a] = float(np.mean(data.groups[members] == dom))
        pick = np.sort(rng.choice(members, size=min(n_members, members.size), replace=False))
        for b, i in enumerate(pick):
            tags[a, b] = _tags_of(data.Y, i, data.tag_names) or "(no tags)"
            consistent[a, b] = int(data.groups[i] == dom)
    return tags.astype(str), consistent, purity


def completion_examples(data, scores, observed, hidden, n_examples=9, top=3, random_state=0):
    """Fig 9: observed tags, hidden ground truth and the top-3 predicted tags of samples with
    hidden tags (drawn at random, not picked for success); ``hits`` = correct predictions."""
    rng = np.random.default_rng(random_state)
    cand = np.flatnonzero(np.diff(hidden.indptr) > 0)
    pick = np.sort(rng.choice(cand, size=min(n_examples, cand.size), replace=False)) if cand.size else []
    obs = np.full(n_examples, "", dtype=object)
    gt, pred = obs.copy(), obs.copy()
    hits = np.full(n_examples, -1, dtype=np.int64)
    for a, i in enumerate(pick):
        order = np.argsort(-scores[i], kind="stable")[:top]
        truth = set(hidden.indices[hidden.indptr[i]:hidden.indptr[i + 1]].tolist())
        obs[a] = _tags_of(observed.Y, i, data.tag_names) or "(none)"
        gt[a] = ", ".join(data.tag_names[j] for j in sorted(truth))
        pred[a] = ", ".join(("*" if j in truth else "") + data.tag_names[j] for j in order)
        hits[a] = sum(int(j in truth) for j in order)
    return obs.astype(str), gt.astype(str), pred.astype(str), hits


def examples_study(cfg, progress=True):
    """Figs 4, 7, 9 on the synthetic profiles (no images: the tags stand for the content).

    Fig 4: HML-RF clusters of ``nuswide`` (2 estimated layers); Fig 7: of ``trecvid`` with 50%
    of tags removed; Fig 9: HML-RF(AM) top-3 completions on both."""
    from .complete import HMLTagCompleter
    from .data import hide_tags

    n_cl, n_mem, n_ex = cfg["n_clusters_shown"], cfg["n_members_shown"], cfg["n_examples"]
    s = cfg.seed
    nus = with_layers(load_data("nuswide", cfg, random_state=s, groups=True), 2, random_state=s)
    trec = load_data("trecvid", cfg, random_state=s, groups=True)
    trec50 = sparsify(trec, 0.5, random_state=s)
    figs = {"fig4": nus, "fig7": trec50}
    tags = np.full((2, n_cl, n_mem), "", dtype=object)
    cons = np.full((2, n_cl, n_mem), -1, dtype=np.int8)
    pur = np.full((2, n_cl), np.nan)
    overall = np.full((2, len(SCORE_METRICS)), np.nan)
    for a, (fname, d) in enumerate(figs.items()):
        labels = hmlrf_labels(d, d.n_groups, s, cfg.forest_params)
        overall[a] = clustering_scores(d.groups, labels)
        tags[a], cons[a], pur[a] = cluster_examples(d, labels, n_cl, n_mem, random_state=s)
        if progress:
            print(f"  {fname}: NMI={overall[a, 1]:.3f}", flush=True)
    ex = {"trecvid": trec, "nuswide": nus}
    obs = np.full((2, n_ex), "", dtype=object)
    gt, pred = obs.copy(), obs.copy()
    hits = np.full((2, n_ex), -1, dtype=np.int64)
    cov3 = np.full(2, np.nan)
    from .metrics import completion_scores

    for a, (name, d) in enumerate(ex.items()):
        observed, hidden = hide_tags(d, frac=0.4, random_state=s)
        model = HMLTagCompleter(method="AM", random_state=s,
                                **{k: v for k, v in cfg.forest_params.items() if k != "methods"})
        model.fit(observed.X, observed.Y, layers=observed.layers)
        scores = model.predict_scores()
        cov3[a] = completion_scores(scores, observed.Y, hidden, N=(3,))["Coverage@3"]
        obs[a], gt[a], pred[a], hits[a] = completion_examples(d, scores, observed, hidden, n_ex, random_state=s)
    return xr.Dataset(
        {"member_tags": (("figure", "cluster", "member"), tags.astype(str)),
         "member_consistent": (("figure", "cluster", "member"), cons),
         "cluster_purity": (("figure", "cluster"), pur),
         "scores": (("figure", "metric"), overall),
         "observed_tags": (("example_dataset", "example"), obs.astype(str)),
         "hidden_tags": (("example_dataset", "example"), gt.astype(str)),
         "predicted_tags": (("example_dataset", "example"), pred.astype(str)),
         "hits": (("example_dataset", "example"), hits),
         "coverage3": (("example_dataset",), cov3)},
        coords={"figure": list(figs), "cluster": np.arange(n_cl), "member": np.arange(n_mem),
                "metric": list(SCORE_METRICS), "example_dataset": list(ex), "example": np.arange(n_ex)})


# ----------------------------------------------------------------------------------------
# display, plots, saving
# ----------------------------------------------------------------------------------------
def side_by_side(ds, var="score", paper="paper", index=("row",)):
    """A table with our mean over folds beside the paper's value, for every metric (or N...).

    Rows are the ``index`` dims; ``label``/``status`` coords along them come first."""
    import pandas as pd

    ours = ds[var].mean("fold") if "fold" in ds[var].dims else ds[var]
    cols = {"ours": ours}
    if paper in ds:
        cols["paper"] = ds[paper].broadcast_like(ours)
    df = xr.Dataset(cols).to_dataframe()[list(cols)]
    df = df.reset_index().set_index(list(ours.dims))[list(cols)]
    other = [d for d in ours.dims if d not in index]
    table = df.unstack(other) if other else df
    if other:
        table.columns = table.columns.reorder_levels(list(range(1, table.columns.nlevels)) + [0])
        order = [tuple(c) for c in ours.transpose(*index, *other).stack(_c=other)["_c"].values]
        table = table[[(*o, k) if isinstance(o, tuple) else (o, k) for o in order for k in cols]]
    if len(index) == 1:
        table = table.reindex(ours[index[0]].values)
    else:
        table = table.reindex(pd.MultiIndex.from_product([ours[i].values for i in index], names=list(index)))
    table = table.round(3)
    front = {}
    for c in ("label", "status", "paper_status"):
        if c in ds.coords and ds[c].dims and set(ds[c].dims) <= set(index):
            front[c] = ds[c].to_series().reindex(table.index if len(index) == len(ds[c].dims)
                                                 else table.index.get_level_values(ds[c].dims[0])).values
        elif c in ds.data_vars and set(ds[c].dims) == set(index):
            front[c] = ds[c].to_series().reindex(table.index).values
    for i, (c, v) in enumerate(front.items()):
        table.insert(i, (c,) + ("",) * (table.columns.nlevels - 1) if table.columns.nlevels > 1 else c, v)
    return table


def plot_clustering_table(ds, title, metric="nmi"):
    """Bars: our NMI per row beside the paper's; not-implemented rows are labelled."""
    import matplotlib.pyplot as plt

    ours = ds["score"].sel(metric=metric)
    mean = ours.mean("fold").values
    err = ours.std("fold").values if ours.sizes["fold"] > 1 else np.zeros_like(mean)
    paper = ds["paper"].sel(metric=metric).values
    labels = [f"{m}: {l}" for m, l in zip(ds["mode"].values, ds["label"].values)]
    y = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(labels) + 1.5))
    ax.barh(y - 0.2, np.nan_to_num(mean), 0.4, xerr=err, label="ours", color="C0")
    ax.barh(y + 0.2, np.nan_to_num(paper), 0.4, label="paper", color="C1", alpha=0.7)
    for i, st in enumerate(ds["status"].values):
        if st != "measured":
            ax.text(0.01, y[i] - 0.2, st, va="center", fontsize=7, color="crimson")
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(metric.upper())
    ax.set_xlim(0, 1)
    ax.set_title(title)
    ax.legend(loc="lower right")
    fig.tight_layout()
    return fig


def plot_sweep(ds, dim, var="score", metric="nmi", group="variant", paper=None, title="", xlabel=None, ax=None):
    """Lines: NMI vs ``dim`` for each ``group``; the paper's points (dict group -> {x: v}) as markers."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4))
    else:
        fig = ax.figure
    da = ds[var].sel(metric=metric)
    groups = da[group].values if group in da.dims else [None]
    for i, g in enumerate(groups):
        d = da.sel({group: g}) if g is not None else da
        m = d.mean("fold")
        ax.plot(d[dim].values, m.values, "o-", color=f"C{i}", label=f"{g} (ours)" if g is not None else "ours")
        if paper and g in paper:
            xs = sorted(paper[g])
            ax.plot(xs, [paper[g][x] for x in xs], "s--", color=f"C{i}", alpha=0.6, mfc="none",
                    label=f"{g} (paper)")
    ax.set_xlabel(xlabel or dim)
    ax.set_ylabel(metric.upper())
    ax.set_title(title)
    ax.legend(fontsize=7)
    return fig


def _fig(ncols=1, w=6.0, h=4.0):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ncols, figsize=(w * ncols, h), squeeze=False)
    return fig, axes[0]


def plot_sparseness(ds):
    """Fig 5 (NMI vs sparseness, ours solid, paper's derived points dashed) and Table 3 (relative drop)."""
    fig, (a1, a2) = _fig(2)
    x = ds["sparseness"].values * 100
    nmi = ds["score"].sel(metric="nmi").mean("fold")
    for i, key in enumerate(ds["row"].values):
        lab = str(ds["label"].values[i])
        a1.plot(x, nmi.sel(row=key), "o-", color=f"C{i}", label=lab)
        a1.plot(x, ds["paper_nmi"].sel(row=key), "s--", color=f"C{i}", alpha=0.5, mfc="none")
        a2.plot(x, ds["drop"].sel(row=key), "o-", color=f"C{i}", label=lab)
        a2.plot(x, ds["paper_drop"].sel(row=key), "s--", color=f"C{i}", alpha=0.5, mfc="none")
    a1.set(xlabel="tags removed (%)", ylabel="NMI", title="Fig 5: NMI (solid ours, dashed paper)")
    a2.set(xlabel="tags removed (%)", ylabel="relative NMI drop", title="Table 3: relative drop (smaller is better)")
    a1.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_components(ds):
    fig, (ax,) = _fig(1)
    x = ds["sparseness"].values * 100
    nmi = ds["score"].sel(metric="nmi").mean("fold")
    names = {"flattags": "HML-RF(FlatTags)", "nocorr": "HML-RF(NoCorr)", "hmlrf": "HML-RF"}
    for i, v in enumerate(ds["variant"].values):
        ax.plot(x, nmi.sel(variant=v), "o-", color=f"C{i}", label=f"{names.get(str(v), v)} (ours)")
        ax.plot(x, ds["paper_nmi"].sel(variant=v), "s", color=f"C{i}", ms=9, mfc="none", label=f"{v} (paper, text)")
    ax.set(xlabel="tags removed (%)", ylabel="NMI", title="Fig 6: HML-RF components")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_parameters(ds):
    fig, (a1, a2) = _fig(2)
    for ax, var, dim, pvar, lab in ((a1, "score_tau", "tau", "paper_nmi_tau", "forest size tau"),
                                    (a2, "score_phi", "phi", "paper_nmi_phi", "leaf size phi")):
        m = ds[var].sel(metric="nmi")
        ax.errorbar(ds[dim].values, m.mean("fold"), yerr=m.std("fold") if m.sizes["fold"] > 1 else None,
                    fmt="o-", label="ours")
        ax.plot(ds[dim].values, ds[pvar].values, "s", ms=9, mfc="none", color="C1", label="paper")
        ax.set(xlabel=lab, ylabel="NMI", title=f"Fig 8: NMI vs {dim}")
        ax.legend(fontsize=7)
    a1.set_xscale("log")
    fig.tight_layout()
    return fig


def plot_metric_table(ds, dim, title, xlabel=None):
    """Grouped bars of all metrics along ``dim`` (ours) with the paper's as outlined bars."""
    fig, (ax,) = _fig(1, 7, 4)
    vals = ds["score"].mean("fold")
    labels = [str(v) for v in ds[dim].values]
    w = 0.8 / len(METRICS)
    x = np.arange(len(labels))
    for i, met in enumerate(METRICS):
        ax.bar(x + i * w, vals.sel(metric=met).values, w, color=f"C{i}", label=met)
        ax.bar(x + i * w, ds["paper"].sel(metric=met).values, w, fill=False, edgecolor="k", lw=0.8)
    ax.set_xticks(x + 0.4 - w / 2, labels)
    ax.set(xlabel=xlabel or dim, ylim=(0, 1), title=title + " (filled ours, outline paper)")
    ax.legend(fontsize=7, ncol=5)
    fig.tight_layout()
    return fig


def plot_abstractness(ds):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ds.sizes["dataset"], figsize=(6 * ds.sizes["dataset"], 4), squeeze=False)
    for ax, d in zip(axes[0], ds["dataset"].values):
        sub = ds.sel(dataset=d)
        x = np.arange(len(METRICS))
        for j, st in enumerate(sub["structure"].values):
            ours = sub["score"].sel(structure=st, metric=list(METRICS)).mean("fold")
            ax.bar(x + 0.4 * j, ours, 0.4, color=f"C{j}", label=f"{st} (ours)")
            ax.bar(x + 0.4 * j, sub["paper"].sel(structure=st, metric=list(METRICS)), 0.4, fill=False, edgecolor="k",
                   lw=0.8)
        ax.set_xticks(x + 0.2, METRICS)
        ax.set(ylim=(0, 1), title=f"Table 5, {d}: 1-layer specific vs 2-layer (outline: paper)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_completion(ds):
    import matplotlib.pyplot as plt

    nd = ds.sizes["dataset"]
    fig, axes = plt.subplots(nd, 3, figsize=(15, 3.6 * nd), squeeze=False)
    for r, d in enumerate(ds["dataset"].values):
        sub = ds.sel(dataset=d)
        for c, meas in enumerate(sub["measure"].values):
            ax = axes[r, c]
            for i, key in enumerate(sub["row"].values):
                if str(sub["status"].sel(row=key).values) != "measured":
                    continue
                y = sub["score"].sel(row=key, measure=meas).mean("fold")
                col = plt.cm.tab20(i % 20)  # 13 rows: one colour each
                ax.plot(sub["N"].values, y, "o-", color=col, label=str(sub["label"].values[i]))
                ax.plot(sub["N"].values, sub["paper"].sel(row=key, measure=meas), "--", color=col, alpha=0.5)
            ax.set(xlabel="recovered tags N", ylabel=f"{meas}@N", title=f"{d}: {meas}@N (dashed: paper)",
                   xticks=list(sub["N"].values))
            if c == 0:
                ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


def plot_examples(ds):
    """Figs 4/7: composition of the shown clusters; Fig 9: hits of the top-3 completions."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    for ax, f in zip(axes[:2], ds["figure"].values):
        sub = ds.sel(figure=f)
        lines = []
        for c in sub["cluster"].values:
            lines.append(f"cluster {c} (dominant-group share {float(sub['cluster_purity'].sel(cluster=c)):.2f})")
            for m in sub["member"].values:
                t = str(sub["member_tags"].sel(cluster=c, member=m).values)
                ok = int(sub["member_consistent"].sel(cluster=c, member=m))
                if ok >= 0:
                    lines.append(("   " if ok else " x ") + t[:60])
        ax.text(0, 1, "\n".join(lines), va="top", family="monospace", fontsize=6, transform=ax.transAxes)
        ax.set_axis_off()
        ax.set_title({"fig4": "Fig 4: nuswide clusters", "fig7": "Fig 7: trecvid, 50% tags removed"}.get(str(f), str(f))
                     + " (x = inconsistent)", fontsize=9)
    ax = axes[2]
    lines = []
    for d in ds["example_dataset"].values:
        sub = ds.sel(example_dataset=d)
        lines.append(f"{d}")
        for e in sub["example"].values:
            if int(sub["hits"].sel(example=e)) < 0:
                continue
            lines.append(f" Obs: {str(sub['observed_tags'].sel(example=e).values)[:50]}")
            lines.append(f" GT:  {str(sub['hidden_tags'].sel(example=e).values)[:50]}")
            lines.append(f" Pr:  {str(sub['predicted_tags'].sel(example=e).values)[:50]}")
    ax.text(0, 1, "\n".join(lines), va="top", family="monospace", fontsize=5, transform=ax.transAxes)
    ax.set_axis_off()
    ax.set_title("Fig 9: HML-RF(AM) top-3 (* = correct)", fontsize=9)
    fig.tight_layout()
    return fig


def git_commit():
    try:
        root = Path(__file__).resolve().parent.parent
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                              text=True, timeout=5).stdout.strip() or "unknown"
    except Exception:
        return "unknown"


def save(ds, fig, cfg, data=None):
    """Write ``results/<name>.nc`` and ``figures/<name>.png`` atomically, with the run's
    parameters, seed, package version, git commit and duration in ``attrs``.

    Order: the dataset is written to a temporary file first (so an unwritable result fails
    before anything is replaced), then the figure is saved atomically, then the dataset's
    temporary file is renamed into place. A run that fails or is interrupted before or
    during this call leaves the previous ``.nc`` and ``.png`` intact."""
    import hmlkit
    from .study_io import atomic_path, save_figure_atomic

    ds = ds.copy()
    ds.attrs.update(cfg.as_attrs())
    ds.attrs.update({"study": cfg.name, "profile": cfg.profile, "seed": cfg.seed,
                     "hmlkit_version": hmlkit.__version__, "git_commit": git_commit(),
                     "duration_s": round(time.time() - cfg.started, 2),
                     "figure": f"{cfg.figures_dir}/{cfg.name}.png"})
    if data is not None:
        ds.attrs["data"] = json.dumps(data.summary() if hasattr(data, "summary") else data, default=_jsonable)
    nc_path = Path(f"{cfg.results_dir}/{cfg.name}.nc")
    with atomic_path(nc_path) as tmp:  # renamed only after the figure is saved
        ds.to_netcdf(tmp)
        fig_path = save_figure_atomic(fig, f"{cfg.figures_dir}/{cfg.name}.png")
    return nc_path, fig_path


def show_claims(ds, name=None):
    """Evaluate the paper's claims for this study on ``ds``; returns a DataFrame."""
    import pandas as pd

    from .studies.claims import evaluate

    rows = evaluate(name or ds.attrs.get("study"), ds)
    return pd.DataFrame([{"claim": r.text, "holds": r.verdict, "detail": r.detail} for r in rows])


__all__ = ["StudyConfig", "setup", "load_data", "check_sparseness", "check_dataset", "clustering_grid",
           "nmi_grid", "tau_phi_grid", "completion_grid", "side_by_side", "plot_clustering_table",
           "plot_sweep", "save", "show_claims", "PROFILES", "STUDIES", "METRICS"]
