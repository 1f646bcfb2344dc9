"""Speed benchmark of the core kit: ``python -m benchmarks.speed`` (``make bench``).

Prints, for this machine:

1. HMLForest fit time (tau trees, phi = 3) on the ``trecvid`` profile;
2. the ratio of scikit-learn's RandomForestClassifier fit time (multi-output
   on the same X and observed Y, same tau, max_features, min_samples_leaf,
   no bootstrap) to HMLForest's in the FlatTags setting;
3. HMLForest fit time and peak memory on the ``nuswide`` profile;
4. affinity (kNN) + spectral clustering time there;
5. ``peers``: flat HMLForest against single-output random forests grown as deep
   (scikit-learn's RandomForestRegressor, the reference, and LightGBM / YDF where
   installed) on the trecvid and nuswide profiles and Corel5k, every ratio from
   one run (``benchmarks.peers``), each shape's ratio checked against the one last
   recorded (``benchmarks/peers_record.json``);
6. ``scale``: every stage of the pipeline at growing n (and, optionally, numbers of
   tags), with peak memory and growth exponents (``benchmarks.scale``).

Every part runs in a fresh subprocess so its peak memory is its own; numba
compilation is done (and timed) before the measured fit. Targets are
printed beside the figures; a missed target is printed as missed.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
import xarray as xr

from hmlkit import HMLForest
from hmlkit._validation import check_int
from hmlkit.affinity import knn_graph_from_neighbors, leaf_knn
from hmlkit.data import make_synthetic
from hmlkit.data.synthetic import PROFILES
from hmlkit.metrics import clustering_scores
from hmlkit.spectral import spectral_from_graph
from hmlkit.tags import estimate_layers

from . import peers, scale
from .common import REPO_ROOT, peak_gb, run_child, warm

TARGETS = {
    "trecvid_fit_s": ("<=", 30.0),
    "sklearn_ratio": (">=", 5.0),
    "nuswide_fit_s": ("<=", 600.0),
    "nuswide_peak_gb": ("<=", 8.0),
    "nuswide_cluster_s": ("<=", 120.0),
}


def part_trecvid(trees):
    compile_s = warm()
    D = make_synthetic("trecvid", random_state=0)
    t = time.perf_counter()
    f = HMLForest(n_estimators=trees, min_samples_leaf=3, random_state=0, verbose=False).fit(D.X, D.Y, D.layers)
    fit = time.perf_counter() - t
    return {"trecvid_fit_s": fit, "trecvid_compile_s": compile_s, "trees": trees,
            "mean_nodes_per_tree": float(f.n_nodes_.mean()), "peak_gb": peak_gb()}


def part_sklearn(trees):
    from sklearn.ensemble import RandomForestClassifier

    warm()
    D = make_synthetic("trecvid", random_state=0)
    t = time.perf_counter()
    HMLForest(n_estimators=trees, min_samples_leaf=3, hierarchy=False, random_state=0, verbose=False).fit(D.X, D.Y)
    hml = time.perf_counter() - t
    Yd = D.Y.toarray()
    t = time.perf_counter()
    RandomForestClassifier(n_estimators=trees, max_features="sqrt", min_samples_leaf=3, bootstrap=False,
                           n_jobs=-1, random_state=0).fit(D.X, Yd)
    sk = time.perf_counter() - t
    return {"flat_fit_s": hml, "sklearn_fit_s": sk, "sklearn_ratio": sk / hml, "trees": trees}


def part_nuswide(trees, n_samples):
    warm()
    D = make_synthetic("nuswide", n_samples=n_samples, random_state=0)
    t = time.perf_counter()
    layers = estimate_layers(D.Y, n_layers=2, random_state=0)
    layers_s = time.perf_counter() - t
    t = time.perf_counter()
    f = HMLForest(n_estimators=trees, min_samples_leaf=3, random_state=0, verbose=False).fit(D.X, D.Y, layers)
    fit = time.perf_counter() - t
    t = time.perf_counter()
    idx, w = leaf_knn(f.train_leaves_, 20)
    W = knn_graph_from_neighbors(idx, w, D.n_samples)
    labels = spectral_from_graph(W, D.n_groups, random_state=0)
    cl = time.perf_counter() - t
    return {"nuswide_fit_s": fit, "nuswide_layers_s": layers_s, "nuswide_cluster_s": cl,
            "nuswide_peak_gb": peak_gb(), "nuswide_n": D.n_samples, "nuswide_d": D.n_features,
            "nuswide_nmi": clustering_scores(D.groups, labels)["nmi"], "trees": trees}


def part_peers(name, trees, max_samples, repeats):
    return peers.run_dataset(name, trees=trees, max_samples=max_samples, repeats=repeats)


PARTS = {"trecvid": part_trecvid, "sklearn": part_sklearn, "nuswide": part_nuswide, "peers": part_peers,
         "scale": None}  # scale: benchmarks.scale runs each size in its own interpreter
DEFAULT_PARTS = ("trecvid", "sklearn", "nuswide", "peers", "scale")
SCALE_NS = (10_000, 30_000, 100_000)


def _run_part(name, args, peer_set=None):
    """Run one part (for ``peers``: one data set) in a fresh interpreter; return its JSON result."""
    cmd = [sys.executable, "-m", "benchmarks.speed", "--_part", name, "--trees", str(args.trees),
           "--sklearn-trees", str(args.sklearn_trees), "--nuswide-samples", str(args.nuswide_samples or 0),
           "--peer-trees", str(args.peer_trees or 0), "--peer-samples", str(args.peer_samples or 0),
           "--peer-repeats", str(args.peer_repeats)]
    if peer_set is not None:
        cmd += ["--peer-sets", peer_set]
    return run_child(cmd, f"bench part {name!r}")


NUSWIDE_FULL = 17523  # the nuswide profile's size: its targets are set for it


def _tau_factor(key, res):
    """Factor taking a figure to tau = 1000 trees, where the targets are set:
    1000 / trees for a fit time (tree growth is linear in tau), else 1."""
    trees = res.get("trees", 1000)
    return 1000.0 / trees if key.endswith("_fit_s") and trees != 1000 else 1.0


def _judge(key, value, res):
    """(value at tau = 1000, "met" / "missed" / "reduced data") of a targeted
    figure; "reduced data" for a nuswide figure measured on fewer samples
    than the full profile, whose target does not apply."""
    op, target = TARGETS[key]
    scaled = value * _tau_factor(key, res)
    if key.startswith("nuswide_") and res.get("nuswide_n", NUSWIDE_FULL) < NUSWIDE_FULL:
        return scaled, "reduced data"
    ok = scaled <= target if op == "<=" else scaled >= target
    return scaled, "met" if ok else "missed"


def _verdict(key, value, res):
    """The printed verdict of ``make bench`` (see ``_judge``); a fit time
    measured with fewer trees says how it was scaled."""
    if key not in TARGETS:
        return ""
    op, target = TARGETS[key]
    scaled, verdict = _judge(key, value, res)
    factor = _tau_factor(key, res)
    note = f" (x{factor:g} for tau=1000: {scaled:.0f})" if factor != 1.0 else ""
    if verdict == "reduced data":
        return f"target {op} {target:g} is for the full profile{note}: no verdict"
    return f"target {op} {target:g}{note}: {'met' if verdict == 'met' else 'MISSED'}"


def _int_list(values):
    """A tuple of ints from a sequence or a comma-separated string ("" or None: empty)."""
    if values is None:
        return ()
    if isinstance(values, str):
        values = [v for v in values.split(",") if v.strip()]
    try:
        return tuple(int(v) for v in values)
    except (TypeError, ValueError):
        raise ValueError(f"expected integers, e.g. '10000,30000', got {values!r}") from None


def _check_parts(parts, flags=False):
    if not parts:  # nothing to run is a mistake in the command, not a benchmark done
        raise ValueError(f"{'--parts' if flags else 'parts'} names no part; choose from {', '.join(DEFAULT_PARTS)}")
    unknown = [s for s in parts if s not in PARTS]
    if unknown:
        raise ValueError(f"unknown bench part(s) {unknown}; choose from {sorted(PARTS)}")


def least_samples():
    """The fewest samples of a reduced nuswide profile: one per group (the generator's
    rule) and one more, as the nuswide part clusters them into as many clusters."""
    return PROFILES["nuswide"]["n_groups"] + 1


def _check_options(parts, trees, sklearn_trees, peer_repeats, peer_sets, flags=False, nuswide_samples=None,
                   peer_trees=None, peer_samples=None):
    """The checks ``run`` and the command line share, all made before any part runs;
    ``flags``: name the options as the command line spells them (``--peer-repeats``)."""
    _check_parts(parts, flags)
    least = least_samples()
    for name, v, low in (("trees", trees, 1), ("sklearn_trees", sklearn_trees, 1), ("peer_repeats", peer_repeats, 1),
                         ("nuswide_samples", nuswide_samples, least), ("peer_trees", peer_trees, 1),
                         ("peer_samples", peer_samples, least)):
        label = "--" + name.replace("_", "-") if flags else name
        optional = name in ("nuswide_samples", "peer_trees", "peer_samples")  # None: the part's own
        if not (optional and v is None):
            check_int(v, label, min_val=low)
    unknown = [s for s in peer_sets or () if s not in peers.DATASETS]
    if unknown:
        raise ValueError(f"unknown {'--peer-sets' if flags else 'peer data set(s)'} {unknown}; "
                         f"choose from {', '.join(peers.DATASETS)}")


def run(parts=DEFAULT_PARTS, trees=1000, sklearn_trees=1000, nuswide_samples=None, peer_sets=None,
        peer_trees=None, peer_samples=None, peer_repeats=3, progress=print, scale_ns=SCALE_NS, scale_trees=100,
        scale_tags=None, scale_tags_n=30_000, scale_dask=0, scale_features=None):
    """Run the benchmark parts (each in a fresh interpreter) and return
    {part: {figure: value}}; what ``make bench`` prints and the
    ``studies/bench_speed.ipynb`` notebook stores. ``peers`` gives
    {data set: {figure: value}}, each data set in a fresh interpreter
    (``peer_sets``: names of ``peers.DATASETS``, default all;
    ``peer_trees`` / ``peer_samples``: fewer trees / samples than the
    comparison's own, for a quick run; ``peer_repeats``: interleaved repeats,
    medians stored; ``scale_ns`` / ``scale_trees`` / ``scale_tags``: the sizes, trees and
    vocabulary sweep of the ``scale`` part, ``benchmarks.scale.run``; ``scale_dask``: each
    size again on a Dask LocalCluster of that many workers, 0 = not; ``scale_features``: one
    feature dimension at every size, None = 4096 below 300,000 samples and 512 from there)."""
    parts = [parts] if isinstance(parts, str) else list(parts)
    if peer_sets is None:
        peer_sets = list(peers.DATASETS)
    peer_sets = [peer_sets] if isinstance(peer_sets, str) else list(peer_sets)
    _check_options(parts, trees, sklearn_trees, peer_repeats, peer_sets, nuswide_samples=nuswide_samples,
                   peer_trees=peer_trees, peer_samples=peer_samples)
    if "scale" in parts:  # checked before the first part runs, not when the scale part starts
        scale_ns, scale_tags = _int_list(scale_ns), _int_list(scale_tags) or None
        scale.check_options(scale_ns, scale_trees, scale_tags, scale_tags_n, scale_dask, scale_features)
    args = argparse.Namespace(trees=trees, sklearn_trees=sklearn_trees, nuswide_samples=nuswide_samples,
                              peer_trees=peer_trees, peer_samples=peer_samples, peer_repeats=peer_repeats)
    out = {}
    for name in parts:
        t = time.perf_counter()
        if name == "scale":
            out[name] = scale.run(scale_ns, scale_trees, scale_tags, scale_tags_n, progress=progress,
                                  dask_workers=scale_dask, n_features=scale_features)
        elif name == "peers":
            out[name] = {}
            for s in peer_sets:
                out[name][s] = _run_part(name, args, s)
                if progress:
                    progress(f"[peers: {s}] done ({out[name][s].get('status')})")
        else:
            out[name] = _run_part(name, args)
            out[name]["part_wall_s"] = time.perf_counter() - t
        if progress:
            progress(f"[{name}] done in {time.perf_counter() - t:.1f} s")
    return out


def to_dataset(results):
    """The targeted figures of ``run``'s results as an xarray Dataset over
    ``figure``: ``value`` (measured), ``at_tau1000`` (fit times scaled to
    tau = 1000), ``target``, ``op`` and ``verdict`` ("met" / "missed")."""
    rows = []
    for part, res in results.items():
        if part in ("peers", "scale"):
            continue
        for key, (op, target) in TARGETS.items():
            if key in res:
                scaled, verdict = _judge(key, float(res[key]), res)
                rows.append((key, part, float(res[key]), scaled, target, op, verdict, int(res.get("trees", 0))))
    if not rows and not results.get("peers") and not results.get("scale"):
        raise ValueError("no targeted figure in the results")
    keys, part, val, scaled, target, op, verdict, trees = (map(list, zip(*rows)) if rows else ([] for _ in range(8)))
    ds = xr.Dataset(
        {"value": ("figure", np.array(val)), "at_tau1000": ("figure", np.array(scaled)),
         "target": ("figure", np.array(target)), "op": ("figure", np.array(op, dtype=str)),
         "verdict": ("figure", np.array(verdict, dtype=str)), "part": ("figure", np.array(part, dtype=str)),
         "trees": ("figure", np.array(trees))},
        coords={"figure": keys},
        attrs={"cpu_count": os.cpu_count() or 0, "numba_threads": os.environ.get("NUMBA_NUM_THREADS", "all"),
               "extra": json.dumps(results)})
    if results.get("peers"):
        ds = ds.merge(peers.to_dataset(results["peers"]))
    if results.get("scale"):
        sc = scale.to_dataset(results["scale"])
        sc = sc.rename({v: f"scale_{v}" for v in sc.data_vars})
        attrs = {f"scale_{k}": v for k, v in sc.attrs.items()}
        sc.attrs = {}
        ds = ds.merge(sc)
        ds.attrs.update(attrs)
    return ds


def plot(ds):
    """One panel per part present: bars of each targeted figure at tau = 1000 as a fraction
    of its target (green met, red missed, grey no verdict); the peer comparison; the scaling
    stages against n (log-log)."""
    import matplotlib.pyplot as plt

    n_fig = ds.sizes.get("figure", 0)
    panels = (["targets"] if n_fig else []) + (["peers"] if "dataset" in ds.dims else []) + \
        (["scale"] if "stage" in ds.dims else []) + (["scale_tags"] if "n_tags" in ds.dims else [])
    heights = {"targets": 0.6 + 0.5 * n_fig, "peers": 4, "scale": 4.5, "scale_tags": 4.0}
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, sum(heights[p] for p in panels) + 0.5), squeeze=False,
                             gridspec_kw={"height_ratios": [heights[p] for p in panels]})
    for ax, panel in zip(axes[:, 0], panels):
        if panel == "peers":
            peers.plot(ds, ax)
        elif panel == "scale":
            scale.plot_axes(ds, ax, prefix="scale_")
        elif panel == "scale_tags":
            scale.plot_tags(ds, ax, prefix="scale_")
        else:
            frac = ds["at_tau1000"].values / ds["target"].values
            colors = [{"met": "tab:green", "missed": "tab:red"}.get(v, "tab:grey") for v in ds["verdict"].values]
            labels = [f"{k} ({o} {t:g})" for k, o, t in zip(ds["figure"].values, ds["op"].values, ds["target"].values)]
            ax.barh(labels, frac, color=colors)
            ax.axvline(1.0, color="k", lw=1)
            ax.set_xlabel("measured (fit times scaled to tau = 1000) / target")
            ax.set_title(f"hmlkit speed on {ds.attrs.get('cpu_count')} core(s): green met, red missed, grey reduced")
    fig.tight_layout()
    return fig


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.speed", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--parts", default=",".join(DEFAULT_PARTS), help="comma-separated: " + ",".join(DEFAULT_PARTS))
    p.add_argument("--trees", type=int, default=1000, help="tau for the HMLForest fits (paper: 1000)")
    p.add_argument("--sklearn-trees", type=int, default=1000, help="tau of the scikit-learn comparison")
    p.add_argument("--nuswide-samples", type=int, default=None, help="reduce the nuswide profile (default: full)")
    p.add_argument("--peer-sets", default=None, help="peers: comma-separated data sets (default: all of "
                   "trecvid,nuswide_5000,nuswide,corel5k)")
    p.add_argument("--peer-trees", type=int, default=None, help="peers: trees for every data set (default: its own)")
    p.add_argument("--peer-samples", type=int, default=None, help="peers: at most this many samples (default: all)")
    p.add_argument("--peer-repeats", type=int, default=3, help="peers: interleaved repeats (medians)")
    p.add_argument("--record", action="store_true", help="peers: store this run's ratios and their spread as the "
                   "ones later runs are checked against (benchmarks/peers_record.json); a run exits with status 1 "
                   "when a data set is slower than its recorded ratio by more than the run-to-run noise")
    p.add_argument("--_part", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._part:
        fn = PARTS[args._part]
        if args._part == "trecvid":
            res = fn(args.trees)
        elif args._part == "sklearn":
            res = fn(args.sklearn_trees)
        elif args._part == "peers":
            res = fn(args.peer_sets, args.peer_trees or None, args.peer_samples or None, args.peer_repeats)
        else:
            res = fn(args.trees, args.nuswide_samples or None)
        print(json.dumps(res))
        return 0
    parts = [s.strip() for s in args.parts.split(",") if s.strip()]
    peer_sets = None if args.peer_sets is None else [s.strip() for s in args.peer_sets.split(",") if s.strip()]
    try:
        _check_options(parts, args.trees, args.sklearn_trees, args.peer_repeats, peer_sets, flags=True,
                       nuswide_samples=args.nuswide_samples, peer_trees=args.peer_trees,
                       peer_samples=args.peer_samples)
    except ValueError as exc:
        p.error(str(exc))
    try:
        record = _check_record(args, parts)
    except ValueError as exc:
        p.error(str(exc))
    print(f"hmlkit benchmark on {os.cpu_count()} core(s); numba threads: {os.environ.get('NUMBA_NUM_THREADS', 'all')}")
    slower = []
    over = []
    for name in parts:
        if name == "scale":
            print(f"\n[scale] every stage at n = {', '.join(f'{n:,}' for n in SCALE_NS)} (100 trees, fresh "
                  "process per size; seconds, peak memory of the process, growth exponents)")
            sc = scale.to_dataset(run(["scale"], progress=None)["scale"])
            for line in scale.format_table(sc):
                print("  " + line)
            continue
        if name == "peers":
            print("\n[peers] flat HMLForest vs single-output forests (2 threads; medians of "
                  f"{args.peer_repeats} interleaved runs)")
            res = run(["peers"], args.trees, args.sklearn_trees, args.nuswide_samples, peer_sets,
                      args.peer_trees or None, args.peer_samples or None, args.peer_repeats, progress=None)["peers"]
            for line in peers.format_table(res):
                print("  " + line)
            print(f"  against the recorded ratios ({_shown(peers.RECORD)}):")
            for n, (verdict, text) in peers.guard(res, record).items():
                print("  " + text)
                slower += [n] if verdict == "slower" else []
            print(f"  against the targets (flat <= {peers.TARGET_RATIO['nuswide']:g}, layered <= "
                  f"{peers.LAYERED_TARGET:g} x scikit-learn; margin for the machine {peers.TARGET_MARGIN:g}):")
            for n, r in res.items():
                for verdict, text in peers.target_guard(n, r):
                    print("  " + text)
                    over += [n] if verdict == "over target" else []
            if args.record:
                stored = peers.record_ratios(res)
                print(f"  recorded: {', '.join(stored) or 'nothing (no data set ran)'}")
            continue
        res = run([name], args.trees, args.sklearn_trees, args.nuswide_samples, progress=None)[name]
        print(f"\n[{name}] ({res.pop('part_wall_s'):.1f} s including set-up)")
        for k, v in res.items():
            vs = f"{v:.3f}" if isinstance(v, float) else str(v)
            print(f"  {k:24s} {vs:>12s}  {_verdict(k, v, res) if isinstance(v, (int, float)) else ''}")
    if slower:
        print(f"\nSLOWER than recorded: {', '.join(slower)} (see [peers]; exit status 1)")
    if over:
        print(f"\nOVER TARGET: {', '.join(dict.fromkeys(over))} (see [peers]; exit status 1)")
    return 1 if slower or over else 0


def _shown(path):
    """``path`` relative to the repository root when it is inside it."""
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def _check_record(args, parts):
    """The record the peers part is compared with, read (and checked) before any part runs;
    ``--record`` only for the comparison's own sizes, with the repeats that measure the noise."""
    record = peers.load_record() if "peers" in parts else {}
    if args.record:
        if "peers" not in parts:
            raise ValueError("--record stores the peers part's ratios; add peers to --parts")
        if args.peer_trees or args.peer_samples:
            raise ValueError("--record stores the data sets' own sizes: drop --peer-trees and --peer-samples")
        if args.peer_repeats < 2:
            raise ValueError("--record needs --peer-repeats of at least 2 to measure the run-to-run noise")
    return record


if __name__ == "__main__":
    sys.exit(main())
