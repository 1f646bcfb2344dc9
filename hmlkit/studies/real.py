"""The real-data study (``studies/real_corel.ipynb``): where the paper's method
and the kit's recommended settings stand on real tagged images.

Clustering on Corel5k (50 Corel CDs as ground truth) at several tag-removal
rates, and tag completion on Corel5k and Corel16k at 40 % hidden, each row a
method; the HML-RF rows are the recommended ``HMLClustering()`` /
``HMLTagCompleter()`` and the paper's exact variants beside them.
"""
from __future__ import annotations

import time

import numpy as np
import xarray as xr

from ..affinity import cosine_knn_graph
from ..cluster import PAPER_SETTINGS as PAPER_CLUSTERING  # the paper's exact HML-RF
from ..cluster import HMLClustering, shares_forest
from ..complete import PAPER_SETTINGS as PAPER_COMPLETION
from ..complete import HMLTagCompleter, cooccurrence_scores
from ..data import hide_tags, remove_tags
from ..metrics import clustering_scores as _clustering_scores
from ..metrics import completion_scores
from ..spectral import spectral_from_graph
from . import paper_values as pv
from .cells import Cell, run_cells
from .config import HUB_RATIO
from .data import supervised_ceiling
from .grids import cell_cost
from .methods import FOREST_METHODS

METRICS = pv.CLUSTER_METRICS
# the one clustering row that switches a fix off on purpose (the claims judge the
# HML-RF variants without it and quote it in their diagnoses)
ABLATION_RAW = "hmlrf_paper_raw"


# the last HML-RF clustering of this process and the data it was fitted on: a row that
# differs from it only after the forest (hmlrf, hmlrf_observed_tags and hmlrf_forest:
# the tag graph) takes its forest rather than growing the identical one again
_LAST_HML = {}


def _hml(cfg, **variant):
    def run(data, k, seed):
        est = HMLClustering(k, random_state=seed, **cfg.forest_params, **variant)
        last = _LAST_HML.get("fit")
        shared = last[1] if last is not None and last[0] is data and shares_forest(last[1], est) else None
        est.fit(data.X, data.Y, data.layers, forest_of=shared)
        _LAST_HML["fit"] = (data, est)
        return est.labels_
    return run


def _kmeans_visual(data, k, seed):
    from sklearn.cluster import KMeans

    return KMeans(k, n_init=10, random_state=seed).fit_predict(data.X)


def _graph_spectral(which):
    def run(data, k, seed):
        Z = data.Y if which == "tags" else data.X
        return spectral_from_graph(cosine_knn_graph(Z, 20), k, random_state=seed)
    return run


# Table 1's input modes, as the row labels name them
MODE_NAMES = {"vifeat": "ViFeat", "bitag": "BiTag", "detscore": "DetScore", "cmb": "Cmb", "blm": "Blnc"}


def _table_method(key, mode, cfg):
    from .methods import cluster_labels

    return lambda data, k, seed: cluster_labels(key, mode, data, k, seed, cfg.forest_params, cfg.method_params)


def _table1_chosen(cfg):
    """The rows of Tables 1-2 (``paper_values`` tuples, HML-RF excepted) the run takes:
    ``cfg["table1_methods"]`` lists methods ("cca": every mode of it) or single rows
    ("bitag/kmeans"); None = all."""
    chosen = cfg.extra.get("table1_methods")
    rows = [r for r in pv.TABLE1_2 if r[0] != "hml"]
    if chosen is None:
        return rows
    chosen = {chosen} if isinstance(chosen, str) else set(chosen)
    return [r for r in rows if r[1] in chosen or f"{r[0]}/{r[1]}" in chosen]


def table1_rows(cfg):
    """Every clustering row of the paper's Tables 1 and 2 other than HML-RF (those chosen by
    ``cfg["table1_methods"]``), keyed ``mode/method`` (the kit's names, as in
    ``table1_trecvid_clustering``); rows the kit lacks (S-MMC, F-MMC) stay in the table as
    *not implemented*."""
    return {f"{mode}/{key}": (f"{label} ({MODE_NAMES[mode]})", _table_method(key, mode, cfg))
            for mode, key, label, *_ in _table1_chosen(cfg)}


def clustering_rows(cfg, part="all"):
    """{row: (label, callable(data, n_clusters, seed) -> labels)}: the real-data rows
    (visual K-means, visual and tag cosine graphs, the HML-RF variants; ``part="kit"``),
    then every other method of Table 1 in each of its input modes (``part="table1"``)."""
    if part not in ("all", "kit", "table1"):
        raise ValueError(f"part must be 'all', 'kit' or 'table1', got {part!r}")
    if part == "table1":
        return table1_rows(cfg)
    kit = {
        "kmeans_visual": ("K-means, visual features", _kmeans_visual),
        "spclust_visual": ("SpClust, visual cosine 20-NN", _graph_spectral("visual")),
        "spclust_tags": ("SpClust, observed tags cosine 20-NN", _graph_spectral("tags")),
        "hmlrf": ("HML-RF recommended (defaults)", _hml(cfg)),
        # the defaults before tag completion: the tag graph on the observed tags only
        "hmlrf_observed_tags": ("HML-RF recommended, tag graph on the observed tags only",
                                _hml(cfg, complete_tags=False)),
        "hmlrf_forest": ("HML-RF recommended forest, no tag graph", _hml(cfg, tag_weight=0.0)),
        "hmlrf_flat": ("HML-RF recommended, FlatTags", _hml(cfg, hierarchy=False)),
        "hmlrf_paper": ("HML-RF as in the paper", _hml(cfg, **PAPER_CLUSTERING)),
        "hmlrf_paper_flat": ("HML-RF(FlatTags) as in the paper", _hml(cfg, hierarchy=False, **PAPER_CLUSTERING)),
        "hmlrf_paper_nocorr": ("HML-RF(NoCorr) as in the paper",
                               _hml(cfg, correlations=False, **PAPER_CLUSTERING)),
        # the paper's model splitting the raw binary words (why feature_map exists), measured
        ABLATION_RAW: ("ablation: HML-RF as in the paper on the raw visual words (feature_map=None)",
                       _hml(cfg, feature_map=None, **PAPER_CLUSTERING)),
    }
    return kit if part == "kit" else {**kit, **table1_rows(cfg)}


def _tag_free(name):
    """Rows whose input holds no tag: their labels do not depend on the removal rate."""
    return name in ("kmeans_visual", "spclust_visual") or name.startswith("vifeat/")


def _table1_folds(cfg):
    """How many of the run's seeds the Tables 1-2 rows (and their X(GC) rows) run on."""
    n = cfg.extra.get("table1_folds")
    return len(cfg.seeds()) if n is None else int(n)


def _grows_forest(row):
    """A row that grows the kit's forest (the HML-RF rows, Table 1's forest methods)."""
    return row.startswith("hmlrf") or any(row.split("/")[-1].startswith(m) for m in FOREST_METHODS)


def _is_table1(name):
    return "/" in name


def _per_task(cfg):
    """The config the fits of one task run with: one thread each when ``cfg.n_jobs`` tasks
    run at once in their own processes (threads on top would only compete for the cores)."""
    from dataclasses import replace

    return replace(cfg, n_jobs=1) if cfg.n_jobs > 1 else cfg


def _cell_key(cfg):
    """What a task's result depends on beside its rows, seed and rate: the run's settings
    (every parameter but the thread count and the output folders)."""
    import json

    params = json.loads(cfg.as_attrs()["parameters"])
    return {k: v for k, v in params.items() if k not in ("n_jobs", "results_dir", "figures_dir")}


def _clustering_task(data, rows, names, seed, rate):
    """Fit the rows ``names`` on ``data`` with ``rate`` of its tags removed (seed ``seed``).
    Per row ("measured", scores, largest cluster, seconds) or ("failed", status, reason)."""
    from .grids import status_of

    d = remove_tags(data, rate, random_state=seed) if rate else data
    out = {}
    try:
        for name in names:
            t0 = time.time()
            try:
                labels = np.asarray(rows[name][1](d, data.n_groups, seed))
            except Exception as exc:  # recorded in the table, never hidden
                out[name] = ("failed",) + status_of(exc)  # (a wrong parameter raises here)
                continue
            sc = _clustering_scores(data.groups, labels)
            out[name] = ("measured", [sc[m] for m in METRICS], int(np.bincount(labels).max()), time.time() - t0,
                         len(np.unique(labels)))
    finally:
        _LAST_HML.clear()  # a forest is shared within a task only
    return out


def clustering_study(data, cfg, rows=None, part="all", progress=True):
    """``score(row, sparseness, metric, fold)``, ``largest(row, sparseness, fold)``: the
    size of the largest cluster, and ``n_found``: the number of clusters found (of
    ``n_groups`` asked); ``hub`` flags a cluster over ``HUB_RATIO`` times the largest
    true group (:mod:`hmlkit.studies.sanity` flags the rest when the result is saved).

    A row that cannot run keeps NaN scores and says why in ``status`` / ``reason``
    (as in Tables 1-2). A row on visual features alone is fitted once per seed, since
    removing tags does not change its input. Table 1's rows (``mode/method``) run on
    the first ``cfg["table1_folds"]`` seeds only (all when None; their other folds stay
    NaN); the profile says how many. The kit's rows of each (seed, rate) are one cell
    (they share a forest), each Table 1 row another (:mod:`hmlkit.studies.cells`: local
    processes or a Dask cluster, stored when done); every fit is seeded, so the result does
    not depend on where or how many at once.
    """
    rows = clustering_rows(_per_task(cfg), part) if rows is None else rows
    names = list(rows)
    rates = list(cfg["sparseness"])
    seeds = cfg.seeds()
    n_t1 = _table1_folds(cfg)
    tasks = []  # (fold, rate index or None for the tag-free rows, names)
    for f, s in enumerate(seeds):
        run = [n for n in names if f < n_t1 or not _is_table1(n)]
        # a Table 1 row is a cell of its own (some take minutes); the kit's rows of a (seed,
        # rate) share one cell, as they share a forest
        tasks.append((f, None, [n for n in run if _tag_free(n) and not _is_table1(n)]))
        tasks += [(f, None, [n]) for n in run if _tag_free(n) and _is_table1(n)]
        for r in range(len(rates)):
            tasks.append((f, r, [n for n in run if not _tag_free(n) and not _is_table1(n)]))
            tasks += [(f, r, [n]) for n in run if not _tag_free(n) and _is_table1(n)]
    tasks = [t for t in tasks if t[2]]
    base = _cell_key(cfg)
    cells = [Cell({"settings": base, "rows": names_, "seed": seeds[f], "rate": 0.0 if r is None else float(rates[r])},
                  (rows, names_, seeds[f], 0.0 if r is None else rates[r]),
                  f"  seed={seeds[f]} {'any rate' if r is None else f'removed={rates[r]:.2f}'}: {len(names_)} rows",
                  {**cell_cost(data, "+".join(names_), {"n_estimators": cfg.n_estimators}),
                   "trees": int(cfg.n_estimators) if any(_grows_forest(n) for n in names_) else 0})
             for f, r, names_ in tasks]
    results = run_cells(_clustering_task, data, cells, n_jobs=cfg.n_jobs, desc="clustering seeds x rates",
                        progress=progress)

    score = np.full((len(names), len(rates), len(METRICS), len(seeds)), np.nan)
    largest = np.full((len(names), len(rates), len(seeds)), np.nan)
    n_found = np.full((len(names), len(rates), len(seeds)), np.nan)
    status, reason = {n: "measured" for n in names}, {n: "" for n in names}
    for (f, r, _part), out in zip(tasks, results):
        at = slice(None) if r is None else r  # a tag-free row's one fit stands for every rate
        for name, res in out.items():
            i = names.index(name)
            if res[0] == "failed":
                status[name], reason[name] = res[1], res[2]
                continue
            score[i, at, :, f] = res[1]
            largest[i, at, f] = res[2]
            n_found[i, at, f] = res[4]
            if progress:
                where = "any rate" if r is None else f"removed={rates[r]:.2f}"
                print(f"  seed={seeds[f]} {where:<13s} {name:<20s} NMI={res[1][METRICS.index('nmi')]:.3f} "
                      f"largest={res[2]} ({res[3]:.1f}s)", flush=True)
    for name in names:  # a row that failed anywhere is reported as failed, never half-measured
        if status[name] != "measured":
            score[names.index(name)], largest[names.index(name)], n_found[names.index(name)] = np.nan, np.nan, np.nan
            if progress:
                print(f"  {name:<20s} {reason[name]}", flush=True)
    true_max = int(np.bincount(np.asarray(data.groups)).max())
    return xr.Dataset(
        {"score": (("row", "sparseness", "metric", "fold"), score),
         "largest": (("row", "sparseness", "fold"), largest),
         "n_found": (("row", "sparseness", "fold"), n_found),
         "hub": (("row", "sparseness", "fold"), largest > HUB_RATIO * true_max)},
        coords={"row": names, "label": ("row", [rows[n][0] for n in names]), "sparseness": rates,
                "metric": list(METRICS), "fold": np.arange(len(seeds)),
                "status": ("row", [status[n] for n in names]), "reason": ("row", [reason[n] for n in names])},
        attrs={"largest_true_group": true_max, "n_groups": int(data.n_groups), "hub_factor": HUB_RATIO,
               "table1_folds": n_t1,
               # how much of the groups the visual features give away (the claims' diagnoses)
               **(supervised_ceiling(data, cfg.seed, cfg.n_jobs) if part != "table1" else {})},
    )


def add_rows(ds, more):
    """The clustering result ``ds`` with the rows of ``more`` (same rates, folds) after its own."""
    return xr.concat([ds, more], dim="row", data_vars="minimal", coords="minimal", compat="override",
                     combine_attrs="override")


def completion_rows(cfg):
    """{row: (label, callable(observed, seed, n_clusters) -> (n, m) scores)}: co-occurrence,
    tag kNN and the recommended completer, then every completion row of Tables 6-8 (LSR,
    TCMR, each X(GC), HML-RF(GC/LN), SFSS, the paper's HML-RF(AM)); ``hmlrf_am`` is left
    out, being the recommended row under another name."""
    from .methods import completion_scores_for, gc_base

    def hml(**variant):
        def run(obs, seed, n_clusters):
            return HMLTagCompleter("AM", random_state=seed, **cfg.forest_params, **variant).fit(
                obs.X, obs.Y, obs.layers).predict_scores()
        return run

    def tag_knn(obs, seed, n_clusters):
        W = cosine_knn_graph(obs.Y, 20)
        return (W @ obs.Y.astype(np.float64)).toarray()

    def table_row(key):
        return lambda obs, seed, n_clusters: completion_scores_for(key, obs, n_clusters, seed, cfg)

    rows = {
        "cooccurrence": ("Tag co-occurrence", lambda obs, seed, n_clusters: cooccurrence_scores(obs.Y)),
        "tag_knn": ("Tag kNN (cosine 20-NN vote)", tag_knn),
        "hmlrf": ("HML-RF recommended (co-occurrence x forest lift)", hml()),
        "hmlrf_am_forest": ("HML-RF(AM), recommended forest, no correlations", hml(lift_exponent=None)),
    }
    table1 = {r[1] for r in _table1_chosen(cfg)}
    for key, label, *_ in pv.COMPLETION_ROWS:
        if key == "hmlrf_am_paper":
            rows[key] = ("HML-RF(AM) as in the paper", hml(**PAPER_COMPLETION))
        elif _is_table1_gc(key) and gc_base(key) not in table1:
            continue  # the X(GC) rows follow the Table 1 methods the run takes
        elif key != "hmlrf_am":
            rows[key] = (label, table_row(key))
    return rows


def _is_table1_gc(key):
    return key.endswith("_gc") and key != "hmlrf_gc"


def _completion_task(datasets, rows, keys, name, n_clusters, seed, hidden_fraction, with_gc):
    """Every completion row (``keys``) on ``data`` with ``hidden_fraction`` of its tags hidden
    (seed ``seed``); the X(GC) rows only ``with_gc``. Per row ("measured", scores(measure, N),
    seconds), ("failed", status, reason) or None (not run on this seed)."""
    from .grids import status_of

    meas, ns = list(pv.COMPLETION_MEASURES), list(pv.COMPLETION_N)
    obs, hidden = hide_tags(datasets[name], frac=hidden_fraction, random_state=seed)
    out = {}
    for key in keys:
        if _is_table1_gc(key) and not with_gc:
            out[key] = None
            continue
        t0 = time.time()
        try:
            scores = np.asarray(rows[key][1](obs, seed, n_clusters), dtype=float)
        except Exception as exc:  # recorded in the table, never hidden
            out[key] = ("failed",) + status_of(exc)
            continue
        res = completion_scores(scores, obs.Y, hidden, N=ns)
        out[key] = ("measured", [[res[f"{m}@{n}"] for n in ns] for m in meas], time.time() - t0)
    return out


def completion_study(datasets, cfg, rows=None, hidden_fraction=0.4, progress=True):
    """``score(dataset, row, measure, N, fold)`` at ``hidden_fraction`` hidden; a row that
    cannot run on a data set (the X(GC) rows need ground-truth groups for their number of
    clusters) keeps NaN and says why in ``cstatus`` / ``creason``. The X(GC) rows of
    Table 1's methods run on the first ``cfg["table1_folds"]`` seeds, as in
    :func:`clustering_study`. Each (data set, seed) is one cell (:mod:`hmlkit.studies.cells`;
    seeded: the result does not depend on where it runs)."""
    rows = completion_rows(_per_task(cfg)) if rows is None else rows
    names, keys, seeds = list(datasets), list(rows), cfg.seeds()
    meas, ns = list(pv.COMPLETION_MEASURES), list(pv.COMPLETION_N)
    n_t1 = _table1_folds(cfg)
    score = np.full((len(names), len(keys), len(meas), len(ns), len(seeds)), np.nan)
    status = np.full((len(names), len(keys)), "measured", dtype=object)
    reason = np.full((len(names), len(keys)), "", dtype=object)
    tasks = [(a, f) for a in range(len(names)) for f in range(len(seeds))]
    base = _cell_key(cfg)
    cells = [Cell({"settings": base, "dataset": names[a], "rows": keys, "seed": seeds[f],
                   "hidden": float(hidden_fraction), "gc": f < n_t1},
                  (rows, keys, names[a], datasets[names[a]].n_groups, seeds[f], hidden_fraction, f < n_t1),
                  f"  {names[a]:<9s} seed={seeds[f]}: {len(keys)} completion rows",
                  {"what": "completion", "data": names[a], "n": int(datasets[names[a]].n_samples),
                   "d": int(datasets[names[a]].X.shape[1]), "m": int(datasets[names[a]].Y.shape[1]),
                   "trees": int(cfg.n_estimators)})
             for a, f in tasks]
    results = run_cells(_completion_task, datasets, cells, n_jobs=cfg.n_jobs, desc="completion data sets x seeds",
                        progress=progress)
    for (a, f), out in zip(tasks, results):
        for b, key in enumerate(keys):
            res = out[key]
            if res is None:
                continue
            if res[0] == "failed":
                if status[a, b] == "measured":  # the first failure (data set, seed order) says why
                    status[a, b], reason[a, b] = res[1], res[2]
                if progress:
                    print(f"  {names[a]:<9s} seed={seeds[f]} {key:<16s} {res[1]}: {res[2]}", flush=True)
                continue
            score[a, b, :, :, f] = res[1]
            if progress:
                print(f"  {names[a]:<9s} seed={seeds[f]} {key:<16s} AP@1={score[a, b, 0, 0, f]:.3f} "
                      f"({res[2]:.1f}s)", flush=True)
    score[status != "measured"] = np.nan  # a row that failed anywhere is reported failed, never half-measured
    return xr.Dataset(
        {"completion": (("dataset", "crow", "measure", "N", "fold"), score),
         "cstatus": (("dataset", "crow"), status.astype(str)), "creason": (("dataset", "crow"), reason.astype(str))},
        coords={"dataset": names, "crow": keys, "clabel": ("crow", [rows[k][0] for k in keys]),
                "measure": meas, "N": ns},
    )


def table(ds):
    """Mean NMI per row and rate (clustering) as a DataFrame, hubs marked with an asterisk."""
    nmi = ds["score"].sel(metric="nmi").mean("fold").to_pandas().round(3)
    hub = ds["hub"].any("fold").to_pandas()
    return nmi.astype(str).where(~hub, nmi.astype(str) + "*")


def completion_table(ds):
    return ds["completion"].sel(measure="AP", N=1).mean("fold").to_pandas().T.round(3)


def plot(ds):
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 7.5), gridspec_kw={"width_ratios": [3, 2]})
    nmi = ds["score"].sel(metric="nmi")
    styles = {"spclust_tags": ("k", "--"), "kmeans_visual": ("0.5", ":"), "spclust_visual": ("0.5", "-."),
              "hmlrf": ("C3", "-"), "hmlrf_paper": ("C0", "-")}
    # Table 1's other methods: thin grey lines, only the best of them (mean over rates) named
    table1 = [str(r) for r in ds.row.values if "/" in str(r) and not np.isnan(nmi.sel(row=r).values).all()]
    best = max(table1, key=lambda r: float(nmi.sel(row=r).mean()), default=None)
    others = iter(["C1", "C2", "C4", "C5", "C6", "C9"] * 4)  # red, blue: the two HML-RF rows; olive: best other
    for row in ds.row.values:
        m = nmi.sel(row=row)
        if np.isnan(m.values).all():
            continue
        if row in table1 and row != best:
            ax1.plot(100 * ds.sparseness.values, m.mean("fold"), color="0.8", lw=0.7, zorder=1)
            continue
        c, ls = styles.get(str(row), ("tab:olive", "-.") if row == best else (next(others), "-"))
        lw = 2.4 if row in ("hmlrf", "hmlrf_paper", "spclust_tags") else 1.0
        label = str(ds.label.sel(row=row).values) + (" (best other Tables 1-2 row)" if row == best else "")
        ax1.errorbar(100 * ds.sparseness.values, m.mean("fold"), yerr=m.std("fold"), color=c, ls=ls, lw=lw,
                     marker="o", ms=3, capsize=2, label=label)
        hubs = ds["hub"].sel(row=row).any("fold").values
        if hubs.any():
            ax1.plot(100 * ds.sparseness.values[hubs], m.mean("fold").values[hubs], "x", color="red", ms=10)
    ax1.set_xlabel("tags removed (%)")
    ax1.set_ylabel("NMI against the 50 Corel CDs")
    ax1.set_title("Corel5k clustering (grey: Tables 1-2's other rows; red x: a cluster > 3x the largest true group)",
                  fontsize=9)
    ax1.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, frameon=False)
    ax1.grid(alpha=0.3)
    if "completion" in ds and ds.sizes.get("dataset", 0) > 0:  # completion_datasets=[]: no bars to draw
        ap = ds["completion"].sel(measure="AP", N=1).mean("fold")
        names = [str(x) for x in ds.clabel.values]
        y = np.arange(len(names))
        h = 0.8 / ap.sizes["dataset"]
        for j, dname in enumerate(ds.dataset.values):
            ax2.barh(y + j * h, ap.sel(dataset=dname).fillna(0), height=h, label=str(dname))
            if "cstatus" in ds:
                for i, st in enumerate(ds["cstatus"].sel(dataset=dname).values):
                    if str(st) != "measured":
                        ax2.text(0.005, y[i] + j * h, str(st), va="center", fontsize=6, color="crimson")
        ax2.set_yticks(y + 0.4 - h / 2)
        ax2.set_yticklabels(names, fontsize=7)
        ax2.set_xlabel("AP@1, 40 % of tags hidden")
        ax2.set_title("Tag completion")
        ax2.legend(fontsize=8)
        ax2.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig
