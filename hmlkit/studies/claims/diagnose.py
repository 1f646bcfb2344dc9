"""Why a claim came out as it did: one check per claim, run on the study's stored result.

A claim that does not hold gets its likely reason (``ClaimResult.diagnosis``); a claim that
holds only because the study could not have shown otherwise is marked trivial
(``ClaimResult.trivial``). Every sentence is computed from the result: the spread of the
folds, scores identical across settings, which rival won and where it started, a row whose
scores do not move with the tags, and the data's supervised ceiling (the cross-validated
accuracy of a random forest predicting the groups from the visual features, which the
clustering studies store; :func:`hmlkit.studies.data.supervised_ceiling`).
"""
from __future__ import annotations

import numpy as np

from .. import paper_values as pv
from ..real import ABLATION_RAW
from ._base import FAILS, HOLDS
from ._spread import versus
from .diagnose_seeds import SEED_DIAGNOSES
from .paper import FIG9_SLACK, _comp, _label, _row_nmi, _sparse_nmi, relative_drops
from .paper_real import real_rivals


def _ceiling(ds):
    c = ds.attrs.get("supervised_ceiling")
    if c is None or not np.isfinite(c):
        return ""
    chance = ds.attrs.get("chance_accuracy", float("nan"))
    return (f"the visual features alone let a random forest predict the groups with accuracy {c:.2f} "
            f"(5-fold; largest group {chance:.2f})")


def _nmi_folds(ds, row):
    return ds["score"].sel(row=row, metric="nmi").values


# ------------------------------------------------------------------ clustering tables
def _table_best(ds, r):
    nmi = _row_nmi(ds)
    others = {k: v for k, v in nmi.items() if not k.startswith("hml/")}
    best = max(others, key=others.get)
    parts = [versus("HML-RF", _nmi_folds(ds, "hml/hmlrf"), _label(ds, best), _nmi_folds(ds, best))]
    mode = str(ds["mode"].sel(row=best).values)
    if mode == "bitag":
        parts.append("the winner uses the tags alone: the forest's use of the features does not pay here")
    c = _ceiling(ds)
    if c:
        parts.append(c)
    return "; ".join(parts)


def _rows_versus(a, b, note=""):
    """A claim 'row a beats row b' (or the best of a mode prefix "blm/" against another's)."""
    def best(ds, key):
        if not key.endswith("/"):
            return key
        nmi = {k: v for k, v in _row_nmi(ds).items() if k.startswith(key)}
        return max(nmi, key=nmi.get)

    def f(ds, r):
        if r.verdict != FAILS:
            return ""
        ka, kb = best(ds, a), best(ds, b)
        text = versus(ka, _nmi_folds(ds, ka), kb, _nmi_folds(ds, kb))
        c = _ceiling(ds) if note == "ceiling" else ""
        return text + (f"; {c}" if c else "")
    return f


def _tags_double(ds, r):
    c = _ceiling(ds)
    return ("the visual-only rows are too strong for tags to double them" + (f": {c}" if c else "")
            ) if r.verdict == FAILS else ""


def _rows_static(ds, rate_dim="sparseness"):
    """Rows whose scores are identical at every rate: they do not use the tags."""
    out = []
    for row in ds["row"].values:
        v = ds["score"].sel(row=row, metric="nmi")
        if bool(np.isfinite(v).all()) and bool(np.isclose(v, v.isel({rate_dim: 0})).all()):
            out.append(str(row))
    return out


def _drops(ds, r):
    if r.verdict != FAILS:
        return ""
    static = _rows_static(ds)
    if static:
        return ("rows whose scores are the same at every rate (their input ignores the tags, so removing tags "
                "cannot lower them): " + ", ".join(static))
    # the rows that did not drop, each against its own start, with the folds' spread
    m = _sparse_nmi(ds)
    s0, s1 = float(m["sparseness"].min()), float(m["sparseness"].max())
    folds = ds["score"].sel(metric="nmi")
    parts = [versus(f"{row} at {s1:.0%}", folds.sel(row=row, sparseness=s1).values, f"at {s0:.0%}",
                    folds.sel(row=row, sparseness=s0).values)
             for row in m["row"].values if float(m.sel(row=row, sparseness=s1)) >= float(m.sel(row=row, sparseness=s0))]
    return "rows that did not drop: " + "; ".join(parts) if parts else ""


def _smallest_drop(ds, r):
    """A rival that drops less because it starts lower (a floor effect), or uses no tags."""
    m, drop, rates = relative_drops(ds)
    h0 = float(m.sel(row="hml/hmlrf", sparseness=0.0))
    notes = []
    static = set(_rows_static(ds))
    for s in rates:
        d = drop.sel(sparseness=s)
        for row in d["row"].values:
            if row == "hml/hmlrf" or float(d.sel(row=row)) >= float(d.sel(row="hml/hmlrf")):
                continue
            start = float(m.sel(row=row, sparseness=0.0))
            why = ("uses no tags" if row in static else
                   f"starts at NMI {start:.3f}, below HML-RF's {h0:.3f}: less to lose" if start < h0 else
                   f"starts at NMI {start:.3f}, at or above HML-RF's {h0:.3f}: a real advantage")
            notes.append(f"{row} at {s:.0%} ({why})")
    return "rivals with a smaller drop: " + "; ".join(dict.fromkeys(notes)) if notes else ""


def _best_every_rate(ds, r):
    m = _sparse_nmi(ds)
    folds = ds["score"].sel(metric="nmi")
    parts = []
    for s in m["sparseness"].values:
        o = m.sel(sparseness=s).drop_sel(row="hml/hmlrf")
        best = str(o.idxmax("row").values)
        if float(o.max()) > float(m.sel(row="hml/hmlrf", sparseness=s)):
            parts.append(f"{s:.0%}: " + versus("HML-RF", folds.sel(row="hml/hmlrf", sparseness=s).values, best,
                                                folds.sel(row=best, sparseness=s).values))
    return "; ".join(parts)


# ------------------------------------------------------------------ components (Fig 6)
def _variant_folds(ds, variant, s):
    return ds["score"].sel(metric="nmi", variant=variant, sparseness=s).values


def _hier_full(sfx=""):
    def f(ds, r):
        if r.verdict != FAILS:
            return ""
        parts = [versus("NoCorr", _variant_folds(ds, "nocorr" + sfx, 0.0), "FlatTags",
                        _variant_folds(ds, "flattags" + sfx, 0.0))]
        c = _ceiling(ds)
        if c:
            parts.append(c)
        if not sfx:
            parts.append("the kit's default fuses the observed-tag graph into every variant, which already "
                         "carries the group structure the hierarchy adds to the forest (F6-hier-paper: the "
                         "paper's forest-only model)")
        return "; ".join(parts)
    return f


def _gain_by_rate(a, b):
    def f(ds, r):
        if r.verdict != FAILS:
            return ""
        return "; ".join(f"{s:.0%}: " + versus(a, _variant_folds(ds, a, s), b, _variant_folds(ds, b, s))
                         for s in ds["sparseness"].values)
    return f


# ------------------------------------------------------------------ parameters (Fig 8)
def _tau(ds, r):
    m = ds["score_tau"].sel(metric="nmi")
    mean = m.mean("fold")
    spread = float(mean.max() - mean.min())
    if r.id == "F8-converge":
        if r.verdict == HOLDS and spread <= 0.02:
            return f"trivially: NMI varies by {spread:.3f} over the whole tau range, so it cannot fail to converge"
        if r.verdict == FAILS:
            taus = [int(t) for t in m["tau"].values]
            steps = ", ".join(f"{a}->{b}: {float(mean.sel(tau=b) - mean.sel(tau=a)):+.3f}"
                              for a, b in zip(taus, taus[1:]))
            return (f"the sweep ends at tau={taus[-1]} before NMI levels off (steps {steps}); the paper's "
                    f"sweep goes to tau=2000: " + versus(f"tau={taus[-1]}", m.isel(tau=-1).values,
                                                          f"tau={taus[-2]}", m.isel(tau=-2).values))
        return ""
    if r.verdict != FAILS:
        return ""
    return ("already converged at the smallest tau: " if spread <= 0.02 else "") + versus(
        f"tau={int(m['tau'][-1])}", m.isel(tau=-1).values, f"tau={int(m['tau'][0])}", m.isel(tau=0).values)


def _phi1(ds, r):
    if r.verdict != FAILS:
        return ""
    m = ds["score_phi"].sel(metric="nmi")
    small = [p for p in m["phi"].values if 1 < p <= 5]
    worst = min(small, key=lambda p: float(m.sel(phi=p).mean()))
    return versus("phi=1", m.sel(phi=1).values, f"phi={int(worst)}", m.sel(phi=worst).values)


# ------------------------------------------------------------------ hierarchy depth (Tables 4, 5)
def _identical_depths(ds):
    """The numbers of layers whose clusterings scored exactly alike in every fold and metric."""
    sc = ds["score"]
    groups = {}
    for L in sc["n_layers"].values:
        key = np.round(sc.sel(n_layers=L).values, 12).tobytes()
        groups.setdefault(key, []).append(int(L))
    return [g for g in groups.values() if len(g) > 1]


def _depth(ds, r):
    same = _identical_depths(ds)
    if same:
        text = ("the clusterings are identical for " + "; ".join(f"{g[0]}-{g[-1]}" if g == list(
            range(g[0], g[-1] + 1)) else ", ".join(map(str, g)) for g in same) + " layers (every fold, every "
            "metric): the number of estimated layers does not change the clustering here")
        if "layer_size" in ds:
            first = ds["layer_size"].isel(layer=0).values
            if (first == first[0]).all():
                text += (f"; the first estimated layer is the same {int(first[0])} tags for every number of "
                         f"layers, and a node splits on a deeper layer only where every tag of the first is "
                         f"pure on it (Eq. 5), which the forest rarely reaches before its leaves")
        if r.verdict == HOLDS and r.id == "T4-saturate":
            return "trivially: " + text
        if r.verdict == FAILS:
            return text
    if r.verdict == FAILS and r.id == "T4-saturate":
        # the depth beyond 5 that moved furthest from 5, against 5, with the folds' spread
        m = ds["score"].sel(metric="nmi")
        deeper = [int(L) for L in m["n_layers"].values if L > 5]
        far = max(deeper, key=lambda L: abs(float(m.sel(n_layers=L).mean() - m.sel(n_layers=5).mean())))
        return versus(f"{far} layers", m.sel(n_layers=far).values, "5 layers", m.sel(n_layers=5).values)
    if r.verdict == FAILS and r.id == "T4-more":
        m = ds["score"].sel(metric="nmi")
        best = int(m.mean("fold").drop_sel(n_layers=2).idxmax())
        return versus(f"{best} layers", m.sel(n_layers=best).values, "2 layers", m.sel(n_layers=2).values)
    return ""


def _abstractness(dataset):
    def f(ds, r):
        if r.verdict != FAILS:
            return ""
        m = ds["score"].sel(metric="nmi", dataset=dataset)
        return versus("2-layer hierarchy", m.sel(structure="hierarchy").values, "1-layer specific",
                       m.sel(structure="specific").values)
    return f


# ------------------------------------------------------------------ completion (Tables 6-8)
def _completion_winner(dataset, measure, n, ours_row=None):
    def f(ds, r):
        if r.verdict != FAILS:
            return ""
        sc = _comp(ds, dataset, measure, n)
        ours = {k: v for k, v in sc.items() if k.startswith("hmlrf")}
        h = ours_row if ours_row in sc else max(ours, key=ours.get)
        best = max((k for k in sc if k != h and (ours_row is not None or k not in ours)), key=sc.get)
        folds = ds["score"].sel(dataset=dataset, measure=measure, N=n)
        return f"{measure}@{n}: " + versus(h, folds.sel(row=h).values, best, folds.sel(row=best).values)
    return f


def _completion_pairs(dataset, a, b, measure, ns):
    def f(ds, r):
        if r.verdict != FAILS:
            return ""
        sc = ds["score"].sel(dataset=dataset, measure=measure)
        return "; ".join(f"{measure}@{n}: " + versus(a, sc.sel(row=a, N=n).values, b, sc.sel(row=b, N=n).values)
                         for n in ns)
    return f


# ------------------------------------------------------------------ examples (Figs 4, 7)
def _examples(figure, table, data_name):
    def f(ds, r):
        if r.verdict != FAILS:
            return ""
        sc = ds["scores"].sel(figure=figure)
        paper = {row[1]: row[4] for row in table if row[0] == "hml"}.get("hmlrf")
        text = f"the purity of all our clusters is {float(sc.sel(metric='purity')):.2f}"
        if paper is not None:
            text += f" (the paper's own HML-RF purity on {data_name}: {paper[pv.CLUSTER_METRICS.index('purity')]:.2f})"
        if "largest_ratio" in sc["metric"].values:
            text += (f"; the largest cluster holds {float(sc.sel(metric='largest_ratio')):.1f}x the samples of "
                     f"the largest true group")
        return text
    return f


def _coverage(ds, r):
    if r.verdict != FAILS:
        return ""
    paper = pv.FIG9_COVERAGE3
    parts = []
    for d in ds["example_dataset"].values:
        cov = float(ds["coverage3"].sel(example_dataset=d))
        if str(d) in paper and np.isfinite(cov) and cov < paper[str(d)] - FIG9_SLACK:
            parts.append(f"{d}: Coverage@3 {cov:.2f}, {paper[str(d)] - cov:.2f} below the paper's "
                         f"{paper[str(d)]:.2f} (the study stores no finer check of why)")
    return "; ".join(parts)


# ------------------------------------------------------------------ real data (Corel)
def _real_paper_rows(ds, r):
    """The paper's model beside the same forest with the recommended settings (and the
    ablation on the raw visual words beside the paper's model)."""
    if r.verdict != FAILS:
        return ""
    nmi = ds["score"].sel(metric="nmi").mean("fold")
    parts = []

    def steps(a, b):
        return ", ".join(f"{float(s):.0%}: {float(nmi.sel(row=a, sparseness=s)):.3f} -> "
                         f"{float(nmi.sel(row=b, sparseness=s)):.3f}" for s in ds.sparseness.values)
    if ABLATION_RAW in ds.row.values and "hmlrf_paper" in ds.row.values:
        raw = steps(ABLATION_RAW, "hmlrf_paper")
        parts.append(f"the paper's model on the raw visual words vs on the kit's input map ({raw})")
    if "hmlrf_paper" in ds.row.values and "hmlrf_forest" in ds.row.values:
        parts.append(f"the paper's model vs the same forest with untagged samples unknown, no tag graph "
                     f"({steps('hmlrf_paper', 'hmlrf_forest')})")
    c = _ceiling(ds)
    if c:
        parts.append(c)
    return "; ".join(parts)


def _real_spread(ds, r):
    """The recommended row's NMI per removal seed at each rate, beside the spread of the same
    model on the observed tags only (is the spread the completion's or the data's?)."""
    if r.verdict != FAILS:
        return ""
    nmi = ds["score"].sel(metric="nmi")
    parts = []
    for x in ds.sparseness.values:
        seeds = " / ".join(f"{float(v):.3f}" for v in nmi.sel(row="hmlrf", sparseness=x).values)
        part = f"{float(x):.0%}: seeds {seeds}"
        if "hmlrf_observed_tags" in ds.row.values:
            o = nmi.sel(row="hmlrf_observed_tags", sparseness=x)
            part += f" (observed tags only: spread {float(o.max() - o.min()):.3f})"
        parts.append(part)
    return "; ".join(parts)


def _real_hubs(ds, r):
    """How big and how frequent the HML-RF rows' catch-all clusters are, beside the
    tags-only graph's at the same rates (where untagged images have no tag edge)."""
    if r.verdict != FAILS:
        return ""
    big = ds["largest"] / float(ds.attrs.get("largest_true_group", 1))
    parts = []
    for x in ds.sparseness.values:
        hml = [(str(row), int(ds["hub"].sel(row=row, sparseness=x).sum()), float(big.sel(row=row, sparseness=x).max()))
               for row in ds.row.values if str(row).startswith("hmlrf") and str(row) != ABLATION_RAW
               and bool(ds["hub"].sel(row=row, sparseness=x).any())]
        if not hml:
            continue
        text = ", ".join(f"{row} {k} of {ds.sizes['fold']} folds (up to {m:.1f}x)" for row, k, m in hml)
        if "spclust_tags" in ds.row.values:
            text += f"; tags-only SpClust up to {float(big.sel(row='spclust_tags', sparseness=x).max()):.1f}x"
        parts.append(f"{float(x):.0%}: {text}")
    return "catch-all clusters: " + "; ".join(parts)


def _real_completion(row):
    def f(ds, r):
        if r.verdict != FAILS:
            return ""
        ap = ds["completion"].sel(measure="AP", N=1)
        return "; ".join(f"{d}: " + versus(row, ap.sel(dataset=d, crow=row).values, "co-occurrence",
                                            ap.sel(dataset=d, crow="cooccurrence").values)
                         for d in ds.dataset.values)
    return f


def _real_vs_tags(rate):
    def f(ds, r):
        if r.verdict != FAILS:
            return ""
        at = ds["score"].sel(metric="nmi").sel(sparseness=rate, method="nearest")
        return versus("recommended HML-RF", at.sel(row="hmlrf").values, "tags-only SpClust",
                      at.sel(row="spclust_tags").values)
    return f


def _phi_spread(ds, r):
    if r.verdict != FAILS:
        return ""
    m = ds["score_phi"].sel(metric="nmi")
    big = [p for p in m["phi"].values if p > 1]
    lo, hi = min(big, key=lambda p: float(m.sel(phi=p).mean())), max(big, key=lambda p: float(m.sel(phi=p).mean()))
    return versus(f"phi={int(hi)}", m.sel(phi=hi).values, f"phi={int(lo)}", m.sel(phi=lo).values)


def _real_best(ds, r):
    if r.verdict != FAILS:
        return ""
    # at each rate HML-RF does not win: the winning row, with the folds' spread
    nmi = ds["score"].sel(metric="nmi")
    mean = nmi.mean("fold")
    rivals = real_rivals(ds, mean)
    parts = []
    for x in ds.sparseness.values:
        best = max(rivals, key=lambda row: float(mean.sel(row=row, sparseness=x)))
        if float(mean.sel(row="hmlrf", sparseness=x)) <= float(mean.sel(row=best, sparseness=x)):
            parts.append(f"{float(x):.0%}: " + versus("hmlrf", nmi.sel(row="hmlrf", sparseness=x).values, best,
                                                    nmi.sel(row=best, sparseness=x).values))
    return "; ".join(p for p in ["; ".join(parts), _ceiling(ds)] if p)


DIAGNOSES = {
    "T1-best": _table_best, "T2-best": _table_best, "T1-tags": _tags_double,
    "T1-blm": _rows_versus("blm/", "cmb/"), "T1-clustrf": _rows_versus("cmb/clustrf", "bitag/clustrf", "ceiling"),
    "T2-spclust": _rows_versus("blm/spclust", "blm/cca"), "F8-phi": _phi_spread,
    "R-0": _real_vs_tags(0.0), "R-50": _real_vs_tags(0.5), "R-75": _real_vs_tags(0.75),
    "F5-drop": _drops, "T3-smallest": _smallest_drop, "F5-best": _best_every_rate,
    "F6-hier": _hier_full(), "F6-hier-shrinks": _gain_by_rate("nocorr", "flattags"),
    "F6-corr": _gain_by_rate("hmlrf", "nocorr"),
    "F6-hier-paper": _hier_full("_paper"), "F6-hier-shrinks-paper": _gain_by_rate("nocorr_paper", "flattags_paper"),
    "F6-corr-paper": _gain_by_rate("hmlrf_paper", "nocorr_paper"),
    "F8-tau": _tau, "F8-converge": _tau, "F8-phi1": _phi1,
    "T4-more": _depth, "T4-saturate": _depth,
    "T5-trecvid": _abstractness("trecvid"), "T5-nuswide": _abstractness("nuswide"),
    "T6-best": _completion_winner("trecvid", "AP", 1), "T6-ln-ar1": _completion_winner("trecvid", "AR", 1, "hmlrf_ln"),
    "T8-am": _completion_winner("nuswide", "AP", 1, "hmlrf_am"),
    "T6-gc-ln": _completion_pairs("trecvid", "hmlrf_gc", "hmlrf_ln", "AP", (2, 3, 4, 5)),
    "T8-ln-gc": _completion_pairs("nuswide", "hmlrf_ln", "hmlrf_gc", "AP", (1, 2, 3, 4, 5)),
    "F9": _coverage,
    "F4": _examples("fig4", pv.TABLE2, "NUS-WIDE, Table 2"),
    "F7": _examples("fig7", pv.TABLE1, "TRECVID at full tags, Table 1"),
    "R-comp": _real_completion("hmlrf"), "R-am": _real_completion("hmlrf_am_paper"),
    "R-km": _real_paper_rows, "R-hub": _real_hubs, "R-spread": _real_spread, "R-best-paper": _real_paper_rows, "R-best": _real_best,
}


def diagnose(result, ds):
    """(diagnosis, trivial): the diagnosis of a claim that does not hold, or "" ; ``trivial``
    is the reason a claim that holds holds trivially, or "". A check that cannot run on
    this result (a part missing) gives no diagnosis rather than a wrong one."""
    fn = DIAGNOSES.get(result.id) or SEED_DIAGNOSES.get(result.id)
    if fn is None or result.verdict not in (HOLDS, FAILS):
        return "", ""
    try:
        text = fn(ds, result)
    except (KeyError, ValueError, IndexError):
        return "", ""
    if text.startswith("trivially: "):
        return "", text[len("trivially: "):]
    return (text, "") if result.verdict == FAILS else ("", "")
