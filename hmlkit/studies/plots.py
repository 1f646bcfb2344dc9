"""Tables and figures of the studies: ``side_by_side`` (ours beside the paper's) and one
``plot_*`` per figure."""
from __future__ import annotations

import numpy as np
import xarray as xr

from . import paper_values as pv
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
    """Bars: our score per row (HML-RF rows in red), the paper's as a black diamond on the
    same row (open grey where the paper only quotes the number); rows not measured say why."""
    import matplotlib.pyplot as plt

    ours = ds["score"].sel(metric=metric)
    mean = ours.mean("fold").values
    err = ours.std("fold").values if ours.sizes["fold"] > 1 else np.zeros_like(mean)
    paper = ds["paper"].sel(metric=metric).values
    quoted = (ds["paper_status"].values == "quoted") if "paper_status" in ds.coords else np.zeros(len(mean), bool)
    labels = [f"{m}: {l}" + (" (paper: quoted)" if q else "")
              for m, l, q in zip(ds["mode"].values, ds["label"].values, quoted)]
    y = np.arange(len(labels))
    hml = np.array([str(m) == "hml" for m in ds["mode"].values])
    fig, ax = plt.subplots(figsize=(8, 0.26 * len(labels) + 1.8))
    ax.barh(y, np.nan_to_num(mean), 0.6, xerr=err, color=np.where(hml, "C3", "C0"), label="ours (mean over folds)")
    ax.plot(np.where(~quoted, paper, np.nan), y, "D", color="k", ms=5, label="paper (measured there)")
    if quoted.any():
        ax.plot(np.where(quoted, paper, np.nan), y, "D", color="0.5", mfc="none", ms=5, label="paper (quoted there)")
    for i, st in enumerate(ds["status"].values):
        if st != "measured":
            ax.text(0.01, y[i], st, va="center", fontsize=7, color="crimson")
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(metric.upper())
    ax.set_xlim(0, 1)
    ax.set_title(title, pad=28)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=7, frameon=False)
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


_OTHERS = ("C0", "C1", "C2", "C4", "C5", "C6", "C8", "C9")  # the rows that are not HML-RF


def plot_sparseness(ds):
    """Fig 5 (NMI vs sparseness) and Table 3 (relative drop): ours as lines, the paper's
    points as open squares of the same colour; only rows that ran are drawn, the others are
    named under the panels; one legend below both panels."""
    fig, (a1, a2) = _fig(2, 6.0, 4.6)
    x = ds["sparseness"].values * 100
    nmi = ds["score"].sel(metric="nmi").mean("fold")
    ran = [i for i, st in enumerate(ds["status"].values) if st == "measured"] if "status" in ds.coords \
        else list(range(ds.sizes["row"]))
    handles = []
    for c, i in enumerate(ran):
        key, lab = ds["row"].values[i], str(ds["label"].values[i])
        hml = str(key).startswith("hml/")
        # red is HML-RF's alone; the paper's-settings row grey
        colour = "C3" if str(key) == "hml/hmlrf" else "C7" if hml else _OTHERS[c % len(_OTHERS)]
        style = dict(color=colour, lw=2.4 if hml else 1.2)
        h, = a1.plot(x, nmi.sel(row=key), "o-", label=lab, **style)
        a1.plot(x, ds["paper_nmi"].sel(row=key), "s", color=style["color"], mfc="none", ms=7)
        a2.plot(x, ds["drop"].sel(row=key), "o-", **style)
        a2.plot(x, ds["paper_drop"].sel(row=key), "s", color=style["color"], mfc="none", ms=7)
        handles.append(h)
    from matplotlib.lines import Line2D

    handles.append(Line2D([], [], marker="s", ls="none", color="k", mfc="none", label="paper (same colour)"))
    a1.set(xlabel="tags removed (%)", ylabel="NMI", title="Fig 5: NMI as tags are removed")
    a2.set(xlabel="tags removed (%)", ylabel="relative NMI drop", title="Table 3: relative drop (smaller is better)")
    missing = [f"{ds['label'].values[i]} ({ds['status'].values[i]})" for i in range(ds.sizes["row"]) if i not in ran]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=7, frameon=False)
    if missing:
        fig.text(0.5, 0.005, "not run: " + ", ".join(missing), ha="center", fontsize=7, color="crimson")
    fig.tight_layout(rect=(0, 0.06 + 0.035 * ((len(handles) + 3) // 4), 1, 1))
    return fig


def plot_components(ds):
    """Fig 6: each component variant with the kit's defaults (solid) and as in the paper
    (dashed, same colour); the points the paper's text states as open squares."""
    fig, (ax,) = _fig(1, 7.0, 4.6)
    x = ds["sparseness"].values * 100
    nmi = ds["score"].sel(metric="nmi").mean("fold")
    names = {"flattags": "FlatTags", "nocorr": "NoCorr", "hmlrf": "HML-RF"}
    colours = {"flattags": "C0", "nocorr": "C2", "hmlrf": "C3"}
    stated = set()
    for v in ds["variant"].values:
        base = str(v).removesuffix("_paper")
        paper_model = str(v).endswith("_paper")
        ax.plot(x, nmi.sel(variant=v), "o--" if paper_model else "o-", color=colours.get(base, "C7"),
                lw=1.2 if paper_model else 2.0,
                label=f"{names.get(base, base)}, " + ("paper's model" if paper_model else "kit's defaults"))
        if base not in stated and np.isfinite(ds["paper_nmi"].sel(variant=v).values).any():
            stated.add(base)
            ax.plot(x, ds["paper_nmi"].sel(variant=v), "s", color=colours.get(base, "C7"), ms=9, mfc="none",
                    label=f"{names.get(base, base)}, paper's text")
    ax.set(xlabel="tags removed (%)", ylabel="NMI", title="Fig 6: HML-RF components")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def plot_parameters(ds):
    """Fig 8: NMI vs tau and vs phi (ours with the folds' spread); the paper's stated points
    where the sweep reaches them, and named in the panel where it does not."""
    from matplotlib.ticker import NullFormatter, ScalarFormatter


    fig, (a1, a2) = _fig(2)
    for ax, var, dim, pvar, lab in ((a1, "score_tau", "tau", "paper_nmi_tau", "forest size tau"),
                                    (a2, "score_phi", "phi", "paper_nmi_phi", "leaf size phi")):
        m = ds[var].sel(metric="nmi")
        ax.errorbar(ds[dim].values, m.mean("fold"), yerr=m.std("fold") if m.sizes["fold"] > 1 else None,
                    fmt="o-", color="C3", label="ours (HML-RF)")
        if np.isfinite(ds[pvar].values).any():
            ax.plot(ds[dim].values, ds[pvar].values, "D", ms=7, color="k", label="paper")
        swept = set(int(v) for v in ds[dim].values)
        outside = {k: v for k, v in pv.FIG8_POINTS[dim].items() if k not in swept}
        note = ("\n(paper, outside this sweep: " + ", ".join(f"NMI {v:.2f} at {dim} = {k}" for k, v in
                                                         outside.items()) + ")") if outside else ""
        ax.set(xlabel=lab, ylabel="NMI")
        ax.set_title(f"Fig 8: NMI vs {dim}{note}", fontsize=10)
        ax.legend(fontsize=7, loc="lower right")
    a1.set_xscale("log")
    a1.set_xticks(ds["tau"].values)
    a1.xaxis.set_major_formatter(ScalarFormatter())
    a1.xaxis.set_minor_formatter(NullFormatter())
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
    ax.set(xlabel=xlabel or dim, ylim=(0, 1))
    ax.set_title(title + " (filled ours, outline paper)", pad=20)
    ax.legend(fontsize=7, ncol=len(METRICS), loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
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


def _card(ax, lines, title, face):
    """One image-free card: ``lines`` of (text, colour) from the top, wrapped to the card."""
    import textwrap

    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_facecolor(face)
    ax.set_title(title, fontsize=8, loc="left")
    wrapped = [(part, colour) for text, colour in lines
               for part in (textwrap.wrap(text, 62, subsequent_indent="    ") or [""])]
    step = min(0.062, 0.95 / max(len(wrapped), 1))
    y = 0.97
    for part, colour in wrapped:
        if y < 0.02:  # a card that cannot hold every line says so
            ax.text(0.98, 0.01, "...", ha="right", va="bottom", fontsize=7, transform=ax.transAxes)
            return
        ax.text(0.02, y, part, va="top", family="monospace", fontsize=6.5 if step > 0.045 else 5.5,
                color=colour, transform=ax.transAxes)
        y -= max(step, 0.034)


def plot_examples(ds):
    """Figs 4/7 as cluster cards (the purest, the largest and the least pure cluster, members'
    observed tags, inconsistent members in red); Fig 9 as completion cards (observed, hidden,
    top-3 with hits marked with an asterisk)."""
    import matplotlib.pyplot as plt

    n_cl = ds.sizes["cluster"]
    n_ex_sets = ds.sizes["example_dataset"]
    fig = plt.figure(figsize=(5.2 * max(n_cl, n_ex_sets), 3.6 * 3))
    grid = fig.add_gridspec(3, max(n_cl, n_ex_sets) * 2)
    width = 2 * max(n_cl, n_ex_sets) // n_cl
    names = {"fig4": "Fig 4: nuswide", "fig7": "Fig 7: trecvid, 50% of tags removed"}
    for row, f in enumerate(ds["figure"].values):
        sub = ds.sel(figure=f)
        sc = sub["scores"]
        for c in sub["cluster"].values:
            ax = fig.add_subplot(grid[row, c * width:(c + 1) * width])
            pur = float(sub["cluster_purity"].sel(cluster=c))
            if not np.isfinite(pur):
                ax.set_axis_off()
                continue
            role = str(sub["cluster_role"].sel(cluster=c).values) if "cluster_role" in sub else ""
            size = int(sub["cluster_size"].sel(cluster=c)) if "cluster_size" in sub else 0
            lines = [(f"top tags: {str(sub['cluster_top_tags'].sel(cluster=c).values)}", "0.25")] \
                if "cluster_top_tags" in sub else []
            for m in sub["member"].values:
                ok = int(sub["member_consistent"].sel(cluster=c, member=m))
                if ok >= 0:
                    t = str(sub["member_tags"].sel(cluster=c, member=m).values)
                    lines.append((("  " if ok else "x ") + t, "black" if ok else "#c0392b"))
            head = (f"{names.get(str(f), str(f))} (all clusters: purity {float(sc.sel(metric='purity')):.2f}, "
                    f"NMI {float(sc.sel(metric='nmi')):.2f})" if c == 0 else "")
            _card(ax, lines, f"{head}\n{role} cluster: {size} samples, purity {pur:.2f}",
                  "#f4f8fb" if pur >= 0.5 else "#fbf1f0")
    for e, d in enumerate(ds["example_dataset"].values):
        sub = ds.sel(example_dataset=d)
        ax = fig.add_subplot(grid[2, e * (2 * max(n_cl, n_ex_sets) // n_ex_sets):
                                  (e + 1) * (2 * max(n_cl, n_ex_sets) // n_ex_sets)])
        lines = []
        for x in sub["example"].values:
            h = int(sub["hits"].sel(example=x))
            if h < 0:
                continue
            lines += [(f"obs: {str(sub['observed_tags'].sel(example=x).values)}", "0.3"),
                      (f"hidden: {str(sub['hidden_tags'].sel(example=x).values)}", "0.3"),
                      (f"top-3: {str(sub['predicted_tags'].sel(example=x).values)}",
                       "#1e8449" if h > 0 else "#c0392b")]
        cov = float(sub["coverage3"])
        _card(ax, lines, f"Fig 9: HML-RF(AM) top-3 completions on {d} (* = a hidden tag recovered; "
                         f"Coverage@3 over all samples {cov:.2f})", "white")
    fig.tight_layout()
    return fig
