"""What a run of the studies will cost, said before it starts (``run --dry-run``).

Each study stores, with its result, the cells it ran (:mod:`hmlkit.studies.cells`): each
cell's method (``what``), data size (samples ``n``, features ``d``, tags ``m``), trees and
the CPU seconds it took, and the study's own CPU outside its cells (``kernel_cpu_s``: data
loading, notebook, plots). A study's cost in a profile is estimated from its last result in
the nearest profile that has one (the same profile first, then standard, quick, paper):

* each stored cell is scaled to the target's data size and trees by its method's work
  (:func:`work`: a forest's ``trees * n log n * sqrt(d)``; AffProp's ``n**2`` messages;
  ``n * (d + m)`` for the rest), and counted as often as the target has cells of its kind
  (its folds, and every list setting the study sweeps: rates, depths, phis);
* the study's CPU outside its cells is added as measured.

The wall time for ``w`` workers is a list-scheduling of the cells, longest first, on ``w``
single-threaded workers (:func:`schedule`); a study whose largest cell needs more memory
than the machine has is named (:func:`cell_memory`).

It is a model, with its limits: a cell's work is a power law of its size, measured on the
sizes that were run; beyond them (the paper's NUS-WIDE is 8.8 times the standard one) it
extrapolates. ``docs/cluster.md`` gives the estimates against measured runs.
"""
from __future__ import annotations

import heapq
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from .profiles import PAPER_STUDIES, PROFILES, STUDIES, data_size, settings

# the list settings a paper study sweeps, each value a set of cells (fig8's taus are one
# forest per fold, so they change its trees, not its count of cells)
_SWEPT = ("sparseness", "phis", "n_layers")


def family(what, trees):
    w = str(what).lower()
    if "affprop" in w:
        return "quadratic"
    return "forest" if trees else "linear"


def work(cell):
    """The units of work of a cell (the model's unit: CPU seconds = rate x work)."""
    n, d, m, t = (max(float(cell.get(k) or 0), 1.0) for k in ("n", "d", "m", "trees"))
    fam = family(cell.get("what", ""), cell.get("trees"))
    if fam == "quadratic":
        return n * n
    if fam == "forest":
        return t * n * math.log2(n + 1) * math.sqrt(d)
    return n * (d + m)


def cell_memory(cell):
    """Bytes a cell holds at its peak, roughly: its data (float64), and AffProp's three n x n
    message matrices or a forest's leaf table."""
    n, d, m, t = (float(cell.get(k) or 0) for k in ("n", "d", "m", "trees"))
    base = 8 * n * (d + m)
    if family(cell.get("what", ""), t) == "quadratic":
        return base + 3 * 8 * n * n
    return base + 8 * n * max(t, 1) + 8 * n * 64


def schedule(durations, workers):
    """Wall time of ``durations`` on ``workers`` single-threaded workers, longest first onto
    the first free worker (list scheduling; at most 4/3 of the optimum)."""
    if not durations:
        return 0.0
    free = [0.0] * max(int(workers), 1)
    for d in sorted(durations, reverse=True):
        heapq.heappush(free, heapq.heappop(free) + d)
    return max(free)


@dataclass
class Estimate:
    study: str
    profile: str
    basis: str = ""           # the result the estimate scales ("" when there is none)
    cpu: float = float("nan")  # CPU seconds
    cells: list = field(default_factory=list)  # each target cell's estimated CPU seconds
    overhead: float = 0.0
    memory: float = 0.0        # bytes of the largest cell

    def wall(self, workers):
        """Wall seconds on ``workers`` workers: the cells scheduled, then the study's own part."""
        return schedule(self.cells, workers) + self.overhead

    @property
    def longest(self):
        return max(self.cells, default=0.0)


def result_path(results, name, profile):
    """Where ``name``'s result in ``profile`` is: ``results`` a {profile: folder} mapping, or the
    repository's layout under one folder (``<folder>/`` standard, ``<folder>/<profile>/`` others)."""
    if isinstance(results, dict):
        return Path(results[profile]) / f"{name}.nc" if profile in results else Path("/nonexistent")
    root = Path(results)
    return root / f"{name}.nc" if profile == "standard" else root / profile / f"{name}.nc"


def read_ledger(path):
    """(cells, kernel CPU outside the cells, attrs) stored with a result, or None."""
    try:
        import netCDF4

        with netCDF4.Dataset(str(path)) as ds:
            attrs = {k: ds.getncattr(k) for k in ds.ncattrs()}
    except (OSError, RuntimeError, ValueError):
        return None
    if "cells" not in attrs and "kernel_cpu_s" not in attrs:
        return None  # made before cells were measured
    try:
        cells = json.loads(attrs.get("cells", "[]"))
        assert isinstance(cells, list) and all(isinstance(c, dict) and isinstance(c.get("cpu"), (int, float))
                                               for c in cells)
    except (ValueError, TypeError, AssertionError):
        return None
    kernel = attrs.get("kernel_cpu_s")
    try:
        kernel = float(kernel)
    except (TypeError, ValueError):
        kernel = float("nan")
    return cells, kernel, attrs


def _seed_sizes(name, profile):
    """A seed study's (samples each cell sees, cells, work per cell) under ``profile``, from its
    own profiles: data seeds are the same in every profile; M-HCRF has a cell per concept and
    round (15 concepts when all), each fitting the hidden-state grid; SFSS a cell per repeat,
    share and method, each fitting the method's parameter grid on the training split."""
    import importlib

    mod = importlib.import_module(f"hmlkit.studies.{name}")
    if name == "seed_lmmc":
        return mod.PROFILES[profile] or 2379, 1, 1
    if name == "seed_ghfart":
        return mod.PROFILES[profile] or 17523, 1, 1
    if name == "seed_mhcrf":
        p = mod.MHCRF_PROFILES[profile]
        return p["n_samples"] or 2379, (p["n_concepts"] or 15) * p["n_rounds"], 6 + len(p["hidden_grid"])
    p = mod.PROFILES[profile]  # seed_sfss
    return p["nuswide_train"], p["repeats"], len(p["grid"])


def _settings(name, profile):
    if name in PAPER_STUDIES:
        return settings(name, profile)
    n, cells, per_cell = _seed_sizes(name, profile)
    return {"folds": cells, "profile": profile, "n_samples": n, "per_cell": per_cell}


def _count_ratio(name, source, target):
    """How many cells of a kind the target profile has per one in the source profile."""
    s, t = _settings(name, source), _settings(name, target)
    r = t.get("folds", 1) / max(s.get("folds", 1), 1)
    for key in _SWEPT:
        if isinstance(s.get(key), (list, tuple)) and isinstance(t.get(key), (list, tuple)) and s[key]:
            r *= len(t[key]) / len(s[key])
    return r


def _sizes(name, profile):
    """{data set: (n, m, d)} of the synthetic sets under ``profile`` (None: full size)."""
    return {ds: data_size(ds, profile) for ds in ("trecvid", "nuswide")}


FULL = {"trecvid": (2379, 114, 1000), "nuswide": (17523, 1000, 4096)}  # the paper's sizes of the synthetic sets


def _resized(cell, name, source, target):
    """The cell with its data size and trees as they are in the target profile."""
    out = dict(cell)
    src_s, tgt_s = _settings(name, source), _settings(name, target)
    data = cell.get("data")
    if data in FULL and name in PAPER_STUDIES:  # a seed study sizes its data by its own profiles
        full = FULL[data]
        src = [v if v is not None else f for v, f in zip(data_size(data, source), full)]
        tgt = [v if v is not None else f for v, f in zip(data_size(data, target), full)]
        for key, a, b in zip(("n", "m", "d"), src, tgt):
            if cell.get(key) and a:
                out[key] = cell[key] * b / a  # a subset (a fold's sample) keeps its share
    elif "n_samples" in src_s and src_s.get("n_samples") != tgt_s.get("n_samples"):
        a, b = src_s.get("n_samples"), tgt_s.get("n_samples")
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a and b:
            out["n"] = cell.get("n", 0) * b / a  # a subset (a split, a fold's sample) keeps its share
    if cell.get("trees"):
        if cell.get("trees_from") == "taus":
            out["trees"] = max(tgt_s.get("taus") or [cell["trees"]])
        elif src_s.get("n_estimators"):
            out["trees"] = cell["trees"] * tgt_s["n_estimators"] / src_s["n_estimators"]
    return out


def estimate(name, profile, results_root):
    """The :class:`Estimate` of study ``name`` in ``profile`` from its nearest stored result."""
    order = [profile] + [p for p in ("standard", "quick", "paper") if p != profile]
    for source in order:
        got = read_ledger(result_path(results_root, name, source))
        if got is None:
            continue
        cells, kernel, _attrs = got
        if not cells and source != profile:
            continue  # a study whose fits are not cells: only its own profile's run says its cost
        est = Estimate(name, profile, basis=source)
        ratio = _count_ratio(name, source, profile) if source != profile else 1.0
        kinds = {}  # cells of one kind (method, data, size): the target has `ratio` times as many
        for c in cells:
            kinds.setdefault(json.dumps({k: c.get(k) for k in ("what", "data", "n", "d", "m", "trees")},
                                        sort_keys=True), []).append(c)
        inside = sum(float(c["cpu"]) for c in cells if c.get("in_kernel"))
        for group in kinds.values():
            t = _resized(group[0], name, source, profile) if source != profile else group[0]
            scale = work(t) / work(group[0]) if source != profile else 1.0
            if source != profile:  # a seed study's cell fits a grid of another size
                scale *= _settings(name, profile).get("per_cell", 1) / _settings(name, source).get("per_cell", 1)
            count = max(int(round(len(group) * ratio)), 1)
            est.cells += [float(group[i % len(group)]["cpu"]) * scale for i in range(count)]
            est.memory = max(est.memory, cell_memory(t))
        if math.isfinite(kernel):
            est.overhead = max(kernel - inside, 0.0)
        est.cpu = sum(est.cells) + est.overhead
        return est
    return Estimate(name, profile)


def machine_memory():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return float("nan")


def format_seconds(s):
    if not math.isfinite(s):
        return "?"
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    if s < 2 * 86400:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} days"


def dry_run_lines(names, profile, results_root, workers):
    """The dry run's cost lines: one per study to run, then the total."""
    lines, total_cpu, all_cells, overhead, unknown = [], 0.0, [], 0.0, []
    mem = machine_memory()
    for name in names:
        est = estimate(name, profile, results_root)
        if not est.basis:
            unknown.append(name)
            lines.append(f"  {name}: no estimate (no stored result with measured cells in any profile)")
            continue
        total_cpu += est.cpu
        all_cells += est.cells
        overhead += est.overhead
        big = "; its largest cell needs more memory than this machine has" if est.memory > mem else ""
        lines.append(f"  {name}: estimated CPU {format_seconds(est.cpu)}, wall {format_seconds(est.wall(workers))} on "
                     f"{workers} worker{'s' if workers != 1 else ''} (longest cell {format_seconds(est.longest)}; "
                     f"scaled from its {est.basis} result){big}")
    if len(unknown) == len(names):
        lines.append("estimated: nothing (no study has a stored result with measured cells; a run stores them)")
        return lines
    wall = schedule(all_cells, workers) + overhead / max(workers, 1)
    lines.append(f"estimated: CPU {format_seconds(total_cpu)}, wall {format_seconds(wall)} on {workers} "
                 f"worker{'s' if workers != 1 else ''}" + (f"; not estimated: {', '.join(unknown)}" if unknown else ""))
    return lines


__all__ = ["Estimate", "estimate", "work", "schedule", "dry_run_lines", "PROFILES", "STUDIES"]
