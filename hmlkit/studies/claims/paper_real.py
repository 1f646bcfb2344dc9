"""The claims on real tagged images (``real_corel``: Corel5k clustering, Corel5k and
Corel16k completion), beside the paper's own (:mod:`.paper`)."""
from __future__ import annotations

import numpy as np

from ..real import ABLATION_RAW
from ._base import NotChecked, require_all_rivals, require_measured, verdict
from ._spread import beats


def _hml_rows(ds):
    """The HML-RF variants the claims judge: every ``hmlrf*`` row but the ablation that
    switches the input map off on purpose."""
    return [str(r) for r in ds.row.values if str(r).startswith("hmlrf") and str(r) != ABLATION_RAW]


# ------------------------------------------------------------------ real data (Corel)
def _real_nmi(ds, row, rate):
    if row not in ds.row.values:
        raise NotChecked(f"row {row} was not run")
    rates = [float(r) for r in ds.sparseness.values]
    if rate not in rates:
        raise NotChecked(f"tag removal rate {rate:.0%} was not run")
    return float(ds["score"].sel(row=row, sparseness=ds.sparseness.values[rates.index(rate)], metric="nmi").mean())


def _real_vs_tags(rate, margin):
    def claim(ds):
        h, t = _real_nmi(ds, "hmlrf", rate), _real_nmi(ds, "spclust_tags", rate)
        return verdict(h >= t + margin), f"recommended HML-RF {h:.3f} vs tags-only SpClust {t:.3f} at {rate:.0%} removed"
    return claim


def _real_beats_kmeans(ds):
    rows = _hml_rows(ds)
    if not rows or "kmeans_visual" not in ds.row.values:
        raise NotChecked("HML-RF rows or visual K-means were not run")
    nmi = ds["score"].sel(metric="nmi").mean("fold")
    km = nmi.sel(row="kmeans_visual")
    require_measured(**{r: nmi.sel(row=r).values for r in [*rows, "kmeans_visual"]})
    bad = [f"{r} at {float(x):.0%}" for r in rows for x in ds.sparseness.values
           if float(nmi.sel(row=r, sparseness=x)) <= float(km.sel(sparseness=x))]
    text = "below K-means: " + (", ".join(bad) if bad else "none")
    if ABLATION_RAW in ds.row.values:  # shown, not judged: the fix switched off
        text += ("; not judged, the ablation on the raw visual words: " + " / ".join(
            f"{float(nmi.sel(row=ABLATION_RAW, sparseness=x)):.3f}" for x in ds.sparseness.values)
            + " vs K-means " + " / ".join(f"{float(km.sel(sparseness=x)):.3f}" for x in ds.sparseness.values))
    return verdict(not bad), text


def real_rivals(ds, nmi):
    """The rows R-best judges HML-RF against: every measured row that is not HML-RF's
    (``nmi``: the mean NMI by row and rate)."""
    return [str(r) for r in ds.row.values if not str(r).startswith("hmlrf") and not np.isnan(nmi.sel(row=r).values).all()]


def _real_best(row):
    """``row`` has the best mean NMI of every non-HML-RF row (Table 1's methods, the
    visual and tag graphs) at every removal rate."""
    def claim(ds):
        if row not in ds.row.values:
            raise NotChecked(f"row {row} was not run")
        require_all_rivals(ds)
        nmi = ds["score"].sel(metric="nmi").mean("fold")
        rivals = real_rivals(ds, nmi)
        if not rivals:
            raise NotChecked("no other clustering row was measured")
        parts, ok = [], True
        for x in ds.sparseness.values:
            def at(r):
                return float(nmi.sel(row=r, sparseness=x))
            best = max(rivals, key=at)
            h, b = at(row), at(best)
            folds = ds["score"].sel(metric="nmi", sparseness=x)
            won, tie = beats(folds.sel(row=row).values, folds.sel(row=best).values)
            ok &= won
            part = f"{float(x):.0%}: {h:.3f} vs {best} {b:.3f}{tie}"
            off = _off_count(ds, best, x)
            if off:  # more clusters than asked raise NMI: say so, and which row is best at the count
                fair = [r for r in rivals if not _off_count(ds, r, x)]
                top = max(fair, key=at) if fair else None
                part += f" ({off}" + (f"; best at the count asked: {top} {at(top):.3f})" if fair else ")")
            parts.append(part)
        return verdict(ok), "; ".join(parts)
    return claim


def _off_count(ds, row, x):
    """"N clusters for K asked" when ``row`` at rate ``x`` found, on average over the seeds, a
    number of clusters other than the K asked (AffProp when no preference gives K); else ""."""
    if "n_found" not in ds or "n_groups" not in ds.attrs:
        return ""
    found = float(ds["n_found"].sel(row=row, sparseness=x).mean("fold", skipna=True))
    asked = int(ds.attrs["n_groups"])
    return f"{found:.0f} clusters for {asked} asked" if np.isfinite(found) and round(found) != asked else ""


def _real_spread(row, limit):
    """``row``'s NMI differs by at most ``limit`` between the removal seeds at every rate (a
    default a user can trust scores the same on the next draw of missing tags)."""
    def claim(ds):
        if row not in ds.row.values:
            raise NotChecked(f"row {row} was not run")
        nmi = ds["score"].sel(row=row, metric="nmi")
        require_measured(**{row: nmi.values})
        if ds.sizes["fold"] < 2:
            raise NotChecked("one removal seed: no spread to judge")
        spread = nmi.max("fold") - nmi.min("fold")
        return verdict(bool((spread <= limit).all())), "largest - smallest over the seeds: " + ", ".join(
            f"{float(x):.0%}: {float(spread.sel(sparseness=x)):.3f}" for x in ds.sparseness.values)
    return claim


def _real_no_hubs(ds):
    # a row that failed has no clusters, so no hub: it must not count as one without
    nmi = ds["score"].sel(metric="nmi")
    require_measured(**{r: nmi.sel(row=r).values for r in _hml_rows(ds)})
    hub = ds["hub"].any("fold")
    rows = [f"{r} at {float(x):.0%}" for r in _hml_rows(ds) for x in ds.sparseness.values
            if bool(hub.sel(row=r, sparseness=x))]
    return verdict(not rows), (f"clusters over {ds.attrs.get('hub_factor', 3)}x the largest true group: "
                          + (", ".join(rows) if rows else "none"))


def _real_completion(row):
    def claim(ds):
        if "completion" not in ds:
            raise NotChecked("no completion part")
        folds = ds["completion"].sel(measure="AP", N=1)
        ap = folds.mean("fold")
        out = [(str(d), float(ap.sel(dataset=d, crow=row)), float(ap.sel(dataset=d, crow="cooccurrence")))
               for d in ds.dataset.values]
        require_measured(**{f"{d} {name}": v for d, a, c in out for name, v in ((row, a), ("cooccurrence", c))})
        won = {d: beats(folds.sel(dataset=d, crow=row).values, folds.sel(dataset=d, crow="cooccurrence").values)
               for d, _a, _c in out}
        return verdict(all(w for w, _tie in won.values())), "; ".join(
            f"{d}: {a:.3f} vs co-occurrence {c:.3f}{won[d][1]}" for d, a, c in out)
    return claim


REAL_CLAIMS = [
        ("R-0", "Corel5k, 0% removed: recommended HML-RF within 0.01 NMI of tags-only SpClust or above",
         _real_vs_tags(0.0, -0.01)),
        ("R-50", "Corel5k, 50% removed: recommended HML-RF within 0.01 NMI of tags-only SpClust or above",
         _real_vs_tags(0.5, -0.01)),
        ("R-75", "Corel5k, 75% removed: recommended HML-RF beats tags-only SpClust by at least 0.03 NMI",
         _real_vs_tags(0.75, 0.03)),
        ("R-km", "Corel5k: every HML-RF variant beats visual K-means at every rate (paper's Table 1 ordering; "
                 "the raw-visual-words ablation is quoted, not judged)",
         _real_beats_kmeans),
        ("R-best", "Corel5k: the recommended HML-RF has the best NMI of every Table 1-2 method at every rate",
         _real_best("hmlrf")),
        ("R-spread", "Corel5k: the recommended HML-RF's NMI varies by at most 0.02 between removal seeds at "
                     "every rate", _real_spread("hmlrf", 0.02)),
        ("R-best-paper", "Corel5k: the paper's HML-RF has the best NMI of every Table 1-2 method at every rate "
                         "(Tables 1-2's claim, on real data)", _real_best("hmlrf_paper")),
        ("R-hub", "Corel5k: no HML-RF clustering has a cluster over 3x the largest true group (the ablation "
                  "aside)", _real_no_hubs),
        ("R-comp", "Recommended HML-RF completion beats tag co-occurrence in AP@1 on every real data set",
         _real_completion("hmlrf")),
        ("R-am", "The paper's HML-RF(AM) beats tag co-occurrence in AP@1 on every real data set",
         _real_completion("hmlrf_am_paper")),
    ]
