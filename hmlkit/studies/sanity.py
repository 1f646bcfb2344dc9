"""Sanity checks on every stored clustering result: a result that is not what it claims
to be (a different number of clusters than asked, one catch-all cluster, a partition no
better than chance) is flagged in the saved dataset (``flag``) and in REPORT.md, never
stored as a clean measurement.

Two layouts carry what the checks need:

- the grids' ``score(..., metric, ...)`` with the metrics ``ari``, ``largest_ratio``
  (largest cluster / largest true group) and ``clusters_ratio`` (clusters found / asked,
  the number asked being the number of true groups);
- the real-data study's ``score`` with ``largest`` and ``n_found`` beside it (attrs
  ``largest_true_group``, ``n_groups``).
"""
from __future__ import annotations

import re

import numpy as np
import xarray as xr

from .config import HUB_RATIO

# ARI is chance-corrected (a random partition scores about 0 whatever the number of
# clusters); NMI is not (30 random clusters of 2000 samples score about 0.06)
CHANCE_ARI = 0.01


def _checks(ds):
    """(ari, largest ratio, clusters ratio) DataArrays over the cells of a clustering
    result, or None when ``ds`` holds no clustering score."""
    if "score" not in ds or "metric" not in ds["score"].dims:
        return None
    metrics = [str(m) for m in ds["metric"].values]
    if "ari" not in metrics:
        return None
    score = ds["score"]
    ari = score.sel(metric="ari", drop=True)
    missing = xr.full_like(ari, np.nan)  # a result saved before a check existed: that check is skipped
    if "largest_ratio" in metrics:
        found = score.sel(metric="clusters_ratio", drop=True) if "clusters_ratio" in metrics else missing
        return ari, score.sel(metric="largest_ratio", drop=True), found
    if "largest" in ds and "largest_true_group" in ds.attrs:
        found = ds["n_found"] / float(ds.attrs["n_groups"]) if "n_found" in ds and "n_groups" in ds.attrs else missing
        return ari, ds["largest"] / float(ds.attrs["largest_true_group"]), found
    return None


def flags(ds):
    """A string per cell of ``ds``'s clustering score ("" = clean; otherwise each problem,
    "; "-separated), over the score's dims without ``metric``; None when ``ds`` holds no
    clustering score with the needed metrics."""
    checks = _checks(ds)
    if checks is None:
        return None
    ari, largest, found = xr.broadcast(*checks)
    out = np.full(ari.shape, "", dtype=object)
    for idx in np.ndindex(ari.shape):
        a, big, f = (float(x.values[idx]) for x in (ari, largest, found))
        problems = []
        if np.isfinite(f) and abs(f - 1.0) > 1e-9:
            problems.append(f"{f:.2f}x the clusters asked")
        if np.isfinite(big) and big > HUB_RATIO:
            problems.append(f"catch-all cluster {big:.1f}x the largest true group")
        if np.isfinite(a) and a < CHANCE_ARI:
            problems.append(f"chance-level partition (ARI {a:.3f})")
        out[idx] = "; ".join(problems)
    return xr.DataArray(out.astype(str), dims=ari.dims, coords={d: ari[d] for d in ari.dims})


def with_flags(ds):
    """``ds`` with its ``flag`` variable (when it holds a clustering score)."""
    f = flags(ds)
    if f is None:
        return ds
    ds = ds.copy()
    ds["flag"] = f
    return ds


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _merge(problems):
    """One line per kind of problem, its figures over the folds as a range:
    "catch-all cluster 5.2-5.9x the largest true group"."""
    kinds = {}
    for p in problems:
        m = _NUMBER.search(p)
        kind = p if m is None else p[:m.start()] + "{}" + p[m.end():]
        kinds.setdefault(kind, []).append(m.group() if m else None)
    out = []
    for kind, nums in sorted(kinds.items()):
        if nums[0] is None:
            out.append(kind)
            continue
        lo, hi = min(nums, key=float), max(nums, key=float)
        out.append(kind.format(lo if lo == hi else f"{lo} to {hi}"))
    return out


def _measured_folds(ds, f, outer):
    """How many folds of each flagged cell were measured (a finite score), or None when the
    scores do not line up with the flags: a row run on one removal seed of three (real_corel's
    Table 1 rows) is then flagged "in 1 of 1 folds", not "in 1 of 3"."""
    if "fold" not in f.dims or "score" not in ds:
        return None
    try:
        sc = ds["score"]
        sc = sc.notnull().any([d for d in sc.dims if d not in f.dims]) if set(sc.dims) - set(f.dims) else sc.notnull()
        return sc.transpose(*outer, "fold").sum("fold").values
    except (ValueError, KeyError):
        return None


def flagged(ds):
    """[(where, problems)] of every flagged result of ``ds`` (its stored ``flag``, or the
    checks run on it now for results saved before the checks existed); the folds of one
    result are merged ("in 2 of 3 folds")."""
    f = ds["flag"] if "flag" in ds else flags(ds)
    if f is None:
        return []
    f = f.transpose(*[d for d in f.dims if d != "fold"], *(["fold"] if "fold" in f.dims else []))
    outer = [d for d in f.dims if d != "fold"]
    vals = f.values.reshape(f.shape[:len(outer)] + (-1,))
    measured = _measured_folds(ds, f, outer)
    out = []
    for idx in np.ndindex(vals.shape[:-1]):
        cells = [str(v) for v in vals[idx]]
        problems = _merge([p for c in cells for p in c.split("; ") if p])
        if not problems:
            continue
        hit = sum(bool(c) for c in cells)
        where = " / ".join(f"{d}={f[d].values[i]}" for d, i in zip(outer, idx)) or "result"
        n = len(cells) if measured is None else max(int(measured[idx]), hit)
        folds = f" (in {hit} of {n} folds)" if "fold" in f.dims and n > 1 else ""
        out.append((where + folds, "; ".join(problems)))
    return out
