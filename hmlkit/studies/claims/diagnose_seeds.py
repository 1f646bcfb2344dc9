"""Diagnoses of the seed papers' claims (:mod:`.seeds`) that do not hold: each compared pair
against the spread of the repeats (seeds, rounds), as :mod:`.diagnose` does for the HML-RF
paper's claims."""
from __future__ import annotations

import numpy as np

from .. import paper_values as pv
from ._base import FAILS
from ._spread import versus


def _lmmc(winner, rivals, metrics):
    def f(ds, r):
        if r.verdict != FAILS:
            return ""
        sc = ds["score"]
        parts = []
        for rival in rivals:
            for m in metrics:
                # sel(method=...) would be sel's lookup mode: the dimension is named in a dict
                a, b = sc.sel({"method": winner, "metric": m}).values, sc.sel({"method": rival, "metric": m}).values
                if not a.mean() > b.mean():
                    parts.append(f"{m}: " + versus(winner, a, rival, b))
        return "; ".join(parts)
    return f


def _ghf(a, b, metrics):
    def f(ds, r):
        if r.verdict != FAILS:
            return ""
        sc = ds["score"]
        return "; ".join(f"{m}: " + versus(a, sc.sel(variant=a, metric=m).values, b, sc.sel(variant=b, metric=m).values)
                         for m in metrics)
    return f


def _ghf_gamma(ds, r):
    if r.verdict != FAILS:
        return ""
    fixed = ds["fixed_score"].sel(metric="nmi")
    best = float(fixed.mean("seed").idxmax())
    return versus("adaptive", ds["score"].sel(variant="adaptive (aw)", metric="nmi").values,
                  f"fixed tag weight {best:g}", fixed.sel(tag_weight=best).values)


def _ghf_speed(ds, r):
    """Wall time against the process's CPU time of the one timed pass: a machine shared with
    other work shows as wall well above CPU."""
    if r.verdict != FAILS or "timing_cpu_s" not in ds:
        return ""
    wall, cpu = float(ds["timing_s"]), float(ds["timing_cpu_s"])
    passes = np.atleast_1d(ds.attrs.get("timing_passes_s", []))
    text = f"the pass took {wall:.2f} s wall for {cpu:.2f} s of CPU"
    if passes.size > 1:
        text = (f"the {passes.size} passes took {' / '.join(f'{w:.2f}' for w in passes)} s wall; the fastest "
                f"{wall:.2f} s for {cpu:.2f} s of CPU")
    if wall > 1.2 * cpu:
        text += ": the wall time includes waiting for a busy machine (the study runs beside others)"
    else:
        text += (": it did not wait for a core, so the pass is slower than the paper's on this machine, or "
                 "shared its memory bus with the studies running beside it (CPU time counts those stalls)")
    return text


def _sfss(dataset):
    def f(ds, r):
        if r.verdict != FAILS:
            return ""
        mp = ds["map"].sel(dataset=dataset)
        shares = ds["labelled_share"].sel(dataset=dataset).values
        parts = []
        for i, s in enumerate(shares):
            if s > 0.10 + 1e-9:
                continue
            v = mp.isel(share_index=i)
            rival = str(v.mean("repeat").drop_sel({"method": "sfss"}).idxmax().values)
            if float(v.sel({"method": "sfss"}).mean()) < float(v.sel({"method": rival}).mean()):
                parts.append(f"{s:.0%}: " + versus("SFSS", v.sel({"method": "sfss"}).values, rival,
                                                   v.sel({"method": rival}).values))
        return "; ".join(parts)
    return f


def _mhcrf(pick_rival):
    def f(ds, r):
        if r.verdict != FAILS:
            return ""
        f1 = ds["f1"].mean("concept")  # (method, round)
        ours, rival = pick_rival(f1.mean("round").to_series())
        return versus(ours, f1.sel({"method": ours}).values, rival, f1.sel({"method": rival}).values) + " (folds: rounds)"
    return f


def _best_other(s):
    return "mhcrf", s.drop("mhcrf").idxmax()


def _lowest_other(s):
    return "unimodal", s.drop("unimodal").idxmin()


def _mhcrf_hidden(ds, r):
    """Where F1 peaks among the hidden-variable counts, against the largest count, with the
    spread over the rounds."""
    if r.verdict != FAILS:
        return ""
    f = ds["f1_hidden"].mean("concept")  # (n_hidden, round)
    mean = f.mean("round")
    peak, last = int(mean.idxmax()), int(f["n_hidden"].values[-1])
    if peak == last:
        return (f"F1 is highest at the largest count tried ({last} hidden variables): "
                + versus(f"{last}", f.sel(n_hidden=last).values, f"{int(f['n_hidden'].values[0])}",
                         f.isel(n_hidden=0).values) + " (folds: rounds); the grid ends before any fall")
    return versus(f"peak {peak}", f.sel(n_hidden=peak).values, f"{last}", f.sel(n_hidden=last).values) + " (folds: rounds)"


SEED_DIAGNOSES = {
    "L-mmc": _lmmc("LMMC", ["MMC"], pv.LMMC_METRICS),
    "L-conv": _lmmc("LMMC", ["SC", "KM", "NC"], pv.LMMC_METRICS),
    "L-mmc-conv": _lmmc("MMC", ["SC", "KM", "NC"], ("PUR", "NMI", "RI")),
    "G-aw": _ghf("adaptive (aw)", "equal (ew)", ("purity", "nmi")),
    "G-ss": _ghf("semi-supervised (SS)", "adaptive (aw)", ("purity", "ri")),
    "G-inc": _ghf("4 sequential subsets", "adaptive (aw)", ("purity",)),
    "G-gamma": _ghf_gamma, "G-speed": _ghf_speed,
    "S-nuswide": _sfss("nuswide"), "S-corel": _sfss("corel16k"),
    "M-best": _mhcrf(_best_other), "M-unimodal": _mhcrf(_lowest_other), "M-hidden": _mhcrf_hidden,
}
