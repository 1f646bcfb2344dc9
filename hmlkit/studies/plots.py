"""Tables and figures of the studies: ``side_by_side`` (ours beside the paper's) and one
``plot_*`` per figure."""
from __future__ import annotations

import numpy as np
import xarray as xr

from .config import METRICS


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


def _completion_highlights(ds, most=6):
    """Rows drawn in colour: the HML-RF rows, then the best others by mean score at the
    first N of the first measure, at most ``most`` in all; the rest are drawn grey."""
    measured = [str(r) for r in ds["row"].values
                if (ds["status"].sel(row=r).values == "measured").any()]
    ours = ds["score"].isel(measure=0, N=0).mean([d for d in ("fold", "dataset") if d in ds["score"].dims])
    hml = [r for r in measured if r.startswith("hmlrf")][:most]
    rest = sorted((r for r in measured if r not in hml), key=lambda r: -float(ours.sel(row=r)))
    return hml + rest[:max(0, most - len(hml))]


def plot_completion(ds):
    """Tables 6-8 as lines over N, one panel per data set and measure: at most six
    highlighted rows (the HML-RF rows, then the best others) in colour, ours as lines and
    the paper's as open squares of the same colour; every other row as a thin grey line.
    One legend under the panels, covering no data."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    nd = ds.sizes["dataset"]
    fig, axes = plt.subplots(nd, 3, figsize=(15, 3.4 * nd + 1.2), squeeze=False)
    shown = _completion_highlights(ds)
    colour = {r: plt.cm.tab10(i) for i, r in enumerate(shown)}
    label = dict(zip(map(str, ds["row"].values), map(str, ds["label"].values)))
    for r, d in enumerate(ds["dataset"].values):
        sub = ds.sel(dataset=d)
        for c, meas in enumerate(sub["measure"].values):
            ax = axes[r, c]
            N = sub["N"].values
            for key in map(str, sub["row"].values):
                if str(sub["status"].sel(row=key).values) != "measured":
                    continue
                y = sub["score"].sel(row=key, measure=meas).mean("fold")
                if key not in colour:
                    ax.plot(N, y, "-", color="0.8", lw=0.8, zorder=1)
                    continue
                ax.plot(N, y, "o-", color=colour[key], lw=1.8, ms=4, zorder=3)
                ax.plot(N, sub["paper"].sel(row=key, measure=meas), "s", mfc="none", mec=colour[key], ms=6, zorder=2)
            ax.set(xlabel="recovered tags N", ylabel=f"{meas}@N", title=f"{d}: {meas}@N", xticks=list(N))
            ax.grid(alpha=0.3)
    handles = [Line2D([], [], color=colour[k], marker="o", lw=1.8, label=label[k]) for k in shown]
    handles += [Line2D([], [], color="0.8", lw=0.8, label="other rows (ours)"),
                Line2D([], [], color="k", marker="s", mfc="none", lw=0, label="the paper's value (same colour)")]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 1.0 / (3.4 * nd + 1.2), 1, 1))
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

