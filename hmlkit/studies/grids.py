"""The grids of the studies: every method row x data set x sparseness x fold, run and
scored into an :class:`xarray.Dataset` with named dims (``row``, ``metric``, ``fold``...), the
paper's published numbers beside ours; then one helper per paper study (the notebooks call
these). Methods the paper lists but the kit lacks are rows with ``status = "not
implemented"`` and the reason; their scores are NaN (never the paper's)."""
from __future__ import annotations


import numpy as np
import xarray as xr

from ..affinity import leaf_affinity
from ..cluster import PAPER_SETTINGS as PAPER_CLUSTERING
from ..data import hide_tags
from ..forest import HMLForest
from ..metrics import clustering_scores as cs
from ..metrics import completion_scores
from ..spectral import spectral_from_affinity
from . import paper_values as pv
from .config import METRICS, RESTRICTED_ATTR, SCORE_METRICS
from .data import sparsify, specific_only, supervised_ceiling, with_layers
from .methods import (
    FOREST_METHODS,
    MethodParameterError,
    NotApplicable,
    cluster_labels,
    completion_scores_for,
    hmlrf_labels,
)
from .cells import Cell, run_cells


def clustering_scores(truth, labels):
    s = cs(truth, labels)
    _, true_sizes = np.unique(np.asarray(truth), return_counts=True)
    _, sizes = np.unique(np.asarray(labels), return_counts=True)
    return [float(s[m]) for m in METRICS] + [float(sizes.max() / true_sizes.max()),
                                             float(len(sizes) / len(true_sizes))]


def _pad_paper(values):
    """Paper values over METRICS, padded with NaN to SCORE_METRICS (the paper
    gives no cluster sizes)."""
    values = np.asarray(values, dtype=float)
    pad = np.full(values.shape[:-1] + (len(SCORE_METRICS) - len(METRICS),), np.nan)
    return np.concatenate([values, pad], axis=-1)



def sweep(values):
    """A swept parameter's values in increasing order: a single value is a one-value sweep
    (``-p taus 8``), and a sweep given in any order is plotted and judged in order."""
    return sorted({int(v) for v in np.atleast_1d(values)})


def restricted(ds, cfg):
    """``ds`` marked with the methods its run was restricted to (``cfg.methods``), if it
    was: a claim that HML-RF beats every competitor is then not checked, never judged
    against only the rivals the user chose to run."""
    if getattr(cfg, "methods", None) is not None:
        ds.attrs[RESTRICTED_ATTR] = ", ".join(map(str, cfg.methods))
    return ds


def status_of(exc):
    """A row's (status, reason) for the exception it raised. A method given a parameter it
    does not take stops the study instead: a study states the settings it ran with."""
    if isinstance(exc, MethodParameterError):
        raise exc
    if isinstance(exc, NotApplicable):
        return "not applicable", str(exc)
    if isinstance(exc, (NotImplementedError, ImportError)):  # a missing piece, not a failure
        return "not implemented", str(exc) or "not implemented"
    return "error", f"{type(exc).__name__}: {exc}"


def cell_forest(cfg):
    """The forest settings a cell's fits run with: one thread each, since the cells
    themselves run side by side (:mod:`hmlkit.studies.cells`)."""
    return {**cfg.forest_params, "n_jobs": 1}


def _forest_key(fp):
    return {k: v for k, v in fp.items() if k != "n_jobs"}


def cell_cost(data, what, fp=None):
    """A cell's description for the cost model: its method, the data's size, and its trees if
    the method grows a forest (``what`` names one of ``FOREST_METHODS``, e.g. ``bitag/hmlrf``)."""
    d = 0 if getattr(data, "X", None) is None else int(np.asarray(data.X).shape[1])
    forest = any(str(what).split("/")[-1].startswith(m) for m in FOREST_METHODS)
    return {"what": str(what), "data": str(getattr(data, "name", "")), "n": int(data.n_samples), "d": d,
            "m": int(data.Y.shape[1]), "trees": int(fp["n_estimators"]) if fp and forest else 0}


def _failed(res):
    return isinstance(res, list) and len(res) == 3 and res[0] == "failed"


def _clustering_cell(data, key, mode, seed, forest_params, method_params):
    """One (row, fold) of Tables 1-2: the row's scores, or ["failed", status, reason]."""
    try:
        labels = cluster_labels(key, mode, data, data.n_groups, seed, forest_params, method_params)
        return clustering_scores(data.groups, labels)
    except Exception as exc:  # recorded in the table, never hidden
        return ["failed", *status_of(exc)]


def clustering_grid(data, rows, cfg, progress=True):
    """Run every (mode, method) row over the folds, each (row, fold) a cell
    (:func:`hmlkit.studies.cells.run_cells`).

    ``rows``: list of (mode, key, label, paper_status, paper_values) as in
    :mod:`hmlkit.studies.paper_values` (TABLE1/TABLE2).
    Returns ``score(row, metric, fold)``, ``paper(row, metric)`` and per-row
    ``status``/``reason``/``paper_status``/``mode``/``method``/``label`` coords. A row that
    fails in a fold is reported with the first such fold's reason and NaN scores.
    """
    seeds = cfg.seeds()
    fp = cell_forest(cfg)
    cells = [Cell({"row": f"{mode}/{key}", "seed": s, "forest": _forest_key(fp), "params": cfg.method_params},
                  (key, mode, s, fp, cfg.method_params), f"  {mode:>8s} {label:<16s} fold={f}",
                  cell_cost(data, f"{mode}/{key}", fp))
             for mode, key, label, _ps, _pv in rows for f, s in enumerate(seeds)]
    out = run_cells(_clustering_cell, data, cells, n_jobs=cfg.n_jobs, desc="methods x folds", progress=progress,
                    describe=lambda c, r: c.label + (f" {r[1]}: {r[2]}" if _failed(r) else f" NMI={r[1]:.3f}"))
    score = np.full((len(rows), len(SCORE_METRICS), len(seeds)), np.nan)
    status, reason = [], []
    for i in range(len(rows)):
        st, why = "measured", ""
        for f in range(len(seeds)):
            res = out[i * len(seeds) + f]
            if _failed(res):
                st, why = res[1], res[2]
                score[i] = np.nan
                break
            score[i, :, f] = res
        status.append(st)
        reason.append(why)
    keys = [f"{r[0]}/{r[1]}" for r in rows]
    ds = xr.Dataset(
        {"score": (("row", "metric", "fold"), score),
         "paper": (("row", "metric"), _pad_paper([r[4] for r in rows]))},
        coords={"row": keys, "metric": list(SCORE_METRICS), "fold": np.arange(len(seeds)),
                "mode": ("row", [r[0] for r in rows]), "method": ("row", [r[1] for r in rows]),
                "label": ("row", [r[2] for r in rows]), "paper_status": ("row", [r[3] for r in rows]),
                "status": ("row", status), "reason": ("row", reason)},
    )
    ds.attrs.update(supervised_ceiling(data, cfg.seed, cfg.n_jobs))  # for the claims' diagnoses
    return restricted(ds, cfg)


def completion_rows(methods):
    """The rows of Tables 6-8 (all, or those of the keys in ``methods``)."""
    return [r for r in pv.COMPLETION_ROWS if methods is None or r[0] in methods]


def filter_rows(rows, methods):
    if methods is None:
        return list(rows)
    return [r for r in rows if r[1] in methods or f"{r[0]}/{r[1]}" in methods]


def _nmi_cell(data, variant, rate, seed):
    """One (variant, sparseness, fold) of an NMI sweep: its scores, or ["failed", status, reason]."""
    d = sparsify(data, rate, random_state=seed)
    try:
        return clustering_scores(data.groups, variant(d, data.n_groups, seed))
    except Exception as exc:
        return ["failed", *status_of(exc)]


def nmi_grid(data, variants, sparseness, cfg, progress=True):
    """NMI-style sweep: every variant x sparseness x fold -> ``score(variant, sparseness, metric, fold)``,
    each one a cell (:func:`hmlkit.studies.cells.run_cells`).

    ``variants``: {name: callable(data, n_clusters, seed) -> labels}. A callable raising
    ``NotImplementedError`` marks its variant "not implemented". A variant with a
    ``cell_key()`` (:func:`table_variant`, :func:`hmlrf_variant`) is stored when done, so a
    rerun does not fit it again; another callable is always run."""
    names = list(variants)
    seeds = cfg.seeds()
    score = np.full((len(names), len(sparseness), len(SCORE_METRICS), len(seeds)), np.nan)
    status = ["measured"] * len(names)
    reason = [""] * len(names)
    at, cells = [], []
    for j, rate in enumerate(sparseness):
        for f, s in enumerate(seeds):
            for i, name in enumerate(names):
                v = variants[name]
                key = v.cell_key() if hasattr(v, "cell_key") else None
                at.append((i, j, f))
                cells.append(Cell(None if key is None else {"variant": key, "rate": float(rate), "seed": s},
                                  (v, float(rate), s), f"  sparseness={rate:.2f} fold={f} {name:<18s}",
                                  cell_cost(data, getattr(v, "what", name), getattr(v, "forest_params", None))))
    out = run_cells(_nmi_cell, data, cells, n_jobs=cfg.n_jobs, desc="variants x sparseness x folds",
                    progress=progress,
                    describe=lambda c, r: c.label + (f" {r[1]}: {r[2]}" if _failed(r) else f" NMI={r[1]:.3f}"))
    for (i, j, f), res in zip(at, out):  # in the order of the loops: the first failure says why
        if status[i] != "measured":
            continue
        if _failed(res):
            status[i], reason[i] = res[1], res[2]
            score[i] = np.nan
            continue
        score[i, j, :, f] = res
    return restricted(xr.Dataset(
        {"score": (("variant", "sparseness", "metric", "fold"), score)},
        coords={"variant": names, "sparseness": list(sparseness), "metric": list(SCORE_METRICS),
                "fold": np.arange(len(seeds)), "status": ("variant", status), "reason": ("variant", reason)},
    ), cfg)


class _Variant:
    """A sweep variant that names itself (``cell_key``), so that its finished cells are stored."""

    def __init__(self, what, key, fn, forest_params):
        self.what, self._key, self.fn, self.forest_params = what, key, fn, forest_params

    def cell_key(self):
        return self._key

    def __call__(self, d, k, s):
        return self.fn(d, k, s)


def _table_fit(key, mode, forest_params, method_params):
    return lambda d, k, s: cluster_labels(key, mode, d, k, s, forest_params, method_params)


def _hmlrf_fit(forest_params, variant):
    return lambda d, k, s: hmlrf_labels(d, k, s, forest_params, **variant)


def table_variant(key, mode, cfg):
    """A clustering row of the tables as an ``nmi_grid`` variant."""
    fp = cell_forest(cfg)
    return _Variant(f"{mode}/{key}", {"table": f"{mode}/{key}", "forest": _forest_key(fp),
                                      "params": cfg.method_params},
                    _table_fit(key, mode, fp, cfg.method_params), fp)


def hmlrf_variant(cfg, **variant):
    """HML-RF with forest parameters changed (``hierarchy=False``, ``correlations=False``...)."""
    fp = cell_forest(cfg)
    return _Variant("hmlrf", {"hmlrf": variant, "forest": _forest_key(fp)}, _hmlrf_fit(fp, variant), fp)


def relative_drop(nmi):
    """Table 3's relative NMI drop (NMI(0) - NMI(s)) / NMI(0), along ``sparseness``."""
    base = nmi.sel(sparseness=0.0)
    return (base - nmi) / base


def _tau_cell(data, taus, seed, min_samples_leaf):
    """Fig 8's tau points of one fold: one forest of max(taus) trees, its first t trees per point."""
    forest = HMLForest(n_estimators=int(max(taus)), min_samples_leaf=min_samples_leaf, random_state=seed,
                       n_jobs=1).fit(data.X, data.Y, layers=data.layers)
    leaves = forest.apply(data.X)
    out = []
    for t in taus:
        A = leaf_affinity(np.ascontiguousarray(leaves[:, :int(t)]))
        out.append(clustering_scores(data.groups, spectral_from_affinity(A, data.n_groups, random_state=seed)))
    return out


def _phi_cell(data, seed, forest_params):
    return clustering_scores(data.groups, hmlrf_labels(data, data.n_groups, seed, forest_params))


def tau_phi_grid(data, taus, phis, cfg, progress=True):
    """Fig 8: NMI of HML-RF vs forest size tau and leaf size phi.

    tau: one forest of max(tau) trees per fold; the first t trees give the tau = t point
    (trees are independent, so a forest's first t trees are a t-tree forest with the same
    seed stream): one cell per fold. phi: a forest of ``cfg.n_estimators`` trees per value
    and fold, each a cell.
    """
    taus, phis = sweep(taus), sweep(phis)
    seeds = cfg.seeds()
    fp = cell_forest(cfg)
    tau_cells = [Cell({"taus": taus, "seed": s, "phi": cfg.min_samples_leaf}, (taus, s, cfg.min_samples_leaf),
                      f"  fold={f} tau={','.join(map(str, taus))}",
                      {**cell_cost(data, "hmlrf_forest_spectral", {"n_estimators": max(taus)}),
                       "trees_from": "taus"})
                 for f, s in enumerate(seeds)]
    phi_fp = [dict(fp, min_samples_leaf=int(phi)) for phi in phis]
    phi_cells = [Cell({"forest": _forest_key(p), "seed": s}, (s, p), f"  fold={f} phi={p['min_samples_leaf']:<3d}",
                      cell_cost(data, "hmlrf", p))
                 for f, s in enumerate(seeds) for p in phi_fp]
    nmi = SCORE_METRICS.index("nmi")
    tau_out = run_cells(_tau_cell, data, tau_cells, n_jobs=cfg.n_jobs, desc="tau forests x folds",
                        progress=progress,
                        describe=lambda c, r: c.label + " NMI=" + ",".join(f"{x[nmi]:.3f}" for x in r))
    phi_out = run_cells(_phi_cell, data, phi_cells, n_jobs=cfg.n_jobs, desc="phi points x folds",
                        progress=progress, describe=lambda c, r: c.label + f" NMI={r[nmi]:.3f}")
    tau_score = np.full((len(taus), len(SCORE_METRICS), len(seeds)), np.nan)
    phi_score = np.full((len(phis), len(SCORE_METRICS), len(seeds)), np.nan)
    for f in range(len(seeds)):
        tau_score[:, :, f] = tau_out[f]
        for i in range(len(phis)):
            phi_score[i, :, f] = phi_out[f * len(phis) + i]
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


def _gc_clusters(cfg):
    try:
        k = cfg["gc_clusters"]
    except (KeyError, AttributeError):
        return None
    return None if k is None else int(k)


def _completion_cell(datasets, name, key, seed, hidden_fraction, n_clusters, cfg):
    """One (data set, row, fold) of Tables 6-8: scores(measure, N), or ["failed", status, reason]."""
    observed, hidden = hide_tags(datasets[name], frac=hidden_fraction, random_state=seed)
    try:
        sc = completion_scores_for(key, observed, n_clusters, seed, cfg)
        res = completion_scores(sc, observed.Y, hidden, N=NS)
        return [[res[f"{meas}@{n}"] for n in NS] for meas in MEASURES]
    except Exception as exc:
        return ["failed", *status_of(exc)]


def completion_grid(datasets, rows, cfg, hidden_fraction=0.4, progress=True):
    """Tables 6-8: every completion row x data set x fold, each a cell.

    Each fold hides ``hidden_fraction`` of every sample's observed tags (the paper's
    60/40 split, Sec 4.1) and scores the recovered tags against the hidden ones.
    ``datasets``: {name: TaggedData}. Returns ``score(dataset, row, measure, N, fold)``,
    ``paper(dataset, row, measure, N)`` (NaN for data sets the paper did not use) and
    ``status(dataset, row)`` / ``reason(dataset, row)``."""
    from dataclasses import replace

    names = list(datasets)
    keys = [r[0] for r in rows]
    seeds = cfg.seeds()
    score = np.full((len(names), len(keys), len(MEASURES), len(NS), len(seeds)), np.nan)
    status = np.full((len(names), len(keys)), "measured", dtype=object)
    reason = np.full((len(names), len(keys)), "", dtype=object)
    paper = np.full((len(names), len(keys), len(MEASURES), len(NS)), np.nan)
    ptab = pv.completion_table()
    one = replace(cfg, n_jobs=1)
    fp = cell_forest(cfg)
    at, cells = [], []
    for a, name in enumerate(names):
        data = datasets[name]
        for b, key in enumerate(keys):
            if name in ptab and key in ptab[name]:
                paper[a, b] = np.array([ptab[name][key][m] for m in MEASURES])
        # GC rows need a cluster count: the ground-truth one when the data set has groups,
        # else the study's ``gc_clusters``
        k = data.n_groups if data.n_groups is not None else _gc_clusters(cfg)
        for f, s in enumerate(seeds):
            for b, key in enumerate(keys):
                at.append((a, b, f))
                cells.append(Cell({"dataset": name, "row": key, "seed": s, "hidden": float(hidden_fraction),
                                   "k": k, "forest": _forest_key(fp), "params": cfg.method_params},
                                  (name, key, s, float(hidden_fraction), k, one),
                                  f"  {name:<10s} fold={f} {key:<16s}", cell_cost(data, key, fp)))
    out = run_cells(_completion_cell, datasets, cells, n_jobs=cfg.n_jobs, desc="data sets x folds x rows",
                    progress=progress,
                    describe=lambda c, r: c.label + (f" {r[1]}: {r[2]}" if _failed(r) else f" AP@1={r[0][0]:.3f}"))
    for (a, b, f), res in zip(at, out):  # in the order of the loops: the first failure says why
        if status[a, b] != "measured":
            continue
        if _failed(res):
            status[a, b], reason[a, b] = res[1], res[2]
            score[a, b] = np.nan
            continue
        score[a, b, :, :, f] = res
    return restricted(xr.Dataset(
        {"score": (("dataset", "row", "measure", "N", "fold"), score),
         "paper": (("dataset", "row", "measure", "N"), paper),
         "status": (("dataset", "row"), status.astype(str)),
         "reason": (("dataset", "row"), reason.astype(str))},
        coords={"dataset": names, "row": keys, "label": ("row", [r[1] for r in rows]),
                "measure": list(MEASURES), "N": list(NS), "fold": np.arange(len(seeds))},
    ), cfg)


# ----------------------------------------------------------------------------------------
# one helper per study (the notebooks call these)
# ----------------------------------------------------------------------------------------
TABLE1_KEYS = sorted({r[1] for r in pv.TABLE1})
TABLE2_KEYS = sorted({r[1] for r in pv.TABLE2})
TABLE3_KEYS = [r[1] for r in pv.TABLE3]
COMPLETION_KEYS = [r[0] for r in pv.COMPLETION_ROWS]
# Fig 6's components, each with the kit's defaults and, "_paper", as in the paper (forest-only
# affinity, untagged negative): the paper's Fig 6 measures the latter, while the
# kit's default fuses the observed-tag graph into every variant
VARIANTS = {"flattags": {"hierarchy": False, "correlations": False},  # Eq. 4: no hierarchy, no correlations
            "nocorr": {"correlations": False},                          # Eq. 5 without soft tags
            "hmlrf": {}}
VARIANTS.update({f"{k}_paper": {**v, **PAPER_CLUSTERING} for k, v in list(VARIANTS.items())})


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
    ds.attrs.update(supervised_ceiling(data, cfg.seed, cfg.n_jobs))
    return ds


def components_study(data, cfg, progress=True):
    """Fig 6: HML-RF(FlatTags), HML-RF(NoCorr), HML-RF vs sparseness; ``paper_nmi(variant, sparseness)``
    holds the points the text states."""
    names = [v for v in VARIANTS if cfg.methods is None or v in cfg.methods]
    ds = nmi_grid(data, {v: hmlrf_variant(cfg, **VARIANTS[v]) for v in names}, cfg["sparseness"], cfg,
                  progress=progress)
    p = np.array([[pv.FIG6_POINTS.get(v.removesuffix("_paper"), {}).get(round(float(s), 2), np.nan)
                   for s in ds["sparseness"].values] for v in names], dtype=float)
    ds["paper_nmi"] = (("variant", "sparseness"), p)
    ds.attrs.update(supervised_ceiling(data, cfg.seed, cfg.n_jobs))
    return ds


def _hmlrf_cell(datasets, name, seed, forest_params):
    """HML-RF's scores on ``datasets[name]`` (scored against its own ground truth)."""
    d = datasets[name]
    return clustering_scores(d.groups, hmlrf_labels(d, d.n_groups, seed, forest_params))


def depth_study(data, cfg, progress=True):
    """Table 4: HML-RF on ``n_layers`` estimated hierarchy layers (Sec 4.1) -> ``score(n_layers, metric, fold)``;
    each (depth, fold) a cell."""
    layers = sweep(cfg["n_layers"])
    seeds = cfg.seeds()
    fp = cell_forest(cfg)
    sizes = np.zeros((len(layers), max(int(L) for L in layers)), dtype=np.int64)  # tags per estimated layer
    by_depth = {}
    for i, L in enumerate(layers):
        d = by_depth[str(L)] = with_layers(data, int(L), random_state=cfg.seed)
        sizes[i, :len(d.layers)] = [len(l) for l in d.layers]
    cells = [Cell({"layers": int(L), "seed": s, "forest": _forest_key(fp)}, (str(L), s, fp),
                  f"  layers={L} fold={f}", cell_cost(data, "hmlrf", fp))
             for L in layers for f, s in enumerate(seeds)]
    nmi = SCORE_METRICS.index("nmi")
    out = run_cells(_hmlrf_cell, by_depth, cells, n_jobs=cfg.n_jobs, desc="depths x folds", progress=progress,
                    describe=lambda c, r: c.label + f" NMI={r[nmi]:.3f}")
    score = np.asarray(out, dtype=float).reshape(len(layers), len(seeds), len(SCORE_METRICS)).transpose(0, 2, 1)
    paper = _pad_paper([pv.TABLE4.get(int(L), (np.nan,) * 5) for L in layers])
    return xr.Dataset({"score": (("n_layers", "metric", "fold"), score), "paper": (("n_layers", "metric"), paper),
                       "layer_size": (("n_layers", "layer"), sizes)},
                      coords={"n_layers": [int(l) for l in layers], "metric": list(SCORE_METRICS),
                              "fold": np.arange(len(seeds)), "layer": np.arange(sizes.shape[1])})


def abstractness_study(datasets, cfg, progress=True):
    """Table 5: HML-RF with 1-layer most-specific tags vs the 2-layer hierarchy, per data set;
    each (data set, structure, fold) a cell.

    ``datasets``: {name: TaggedData with its 2-layer hierarchy}."""
    names = list(datasets)
    structures = ("specific", "hierarchy")
    seeds = cfg.seeds()
    fp = cell_forest(cfg)
    paper = np.full((len(names), 2, len(SCORE_METRICS)), np.nan)
    inputs, cells = {}, []
    for a, name in enumerate(names):
        data = datasets[name]
        if name in pv.TABLE5:
            paper[a] = _pad_paper([pv.TABLE5[name][s] for s in structures])
        for st, d in zip(structures, (specific_only(data), data)):
            inputs[f"{name}/{st}"] = d
            cells += [Cell({"dataset": name, "structure": st, "seed": s, "forest": _forest_key(fp)},
                           (f"{name}/{st}", s, fp), f"  {name} {st:<9s} fold={f}", cell_cost(d, "hmlrf", fp))
                      for f, s in enumerate(seeds)]
    nmi = SCORE_METRICS.index("nmi")
    out = run_cells(_hmlrf_cell, inputs, cells, n_jobs=cfg.n_jobs, desc="data sets x structures x folds",
                    progress=progress, describe=lambda c, r: c.label + f" NMI={r[nmi]:.3f}")
    score = np.asarray(out, dtype=float).reshape(len(names), 2, len(seeds), len(SCORE_METRICS)).transpose(0, 1, 3, 2)
    return xr.Dataset({"score": (("dataset", "structure", "metric", "fold"), score),
                       "paper": (("dataset", "structure", "metric"), paper)},
                      coords={"dataset": names, "structure": list(structures), "metric": list(SCORE_METRICS),
                              "fold": np.arange(len(seeds))})

