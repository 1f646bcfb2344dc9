"""Scaling benchmark: every stage of the clustering and completion pipeline at
growing sample counts and vocabulary sizes, with its time, the process's peak memory and
each stage's growth exponent.

``python -m benchmarks.scale --n 10000,30000,100000`` (and the ``scale`` part of
``python -m benchmarks.speed``). Each size runs in a fresh interpreter so that its peak memory
is its own; every stage runs once on 2,000 samples before the timed run, so that no
stage's time includes compiling or loading its numba kernels. A stage that takes less
than ``REPEAT_BELOW`` seconds is timed up to ``REPEATS`` times and its best time kept, as
``timeit`` does: on a shared machine noise only adds time, and a tenth of a second
measured once moved a growth exponent by 0.25 between runs of the same code. A stage
repeated at the sweep's first size is repeated as often at every later size, so that both
ends of a growth exponent are timed by the same rule (the best of five against one time
would bias it upwards). Each stage's first time is kept as well (``first_time``, and its
exponents): a pipeline calls each stage once, and a repeated call can be quicker than the
first for a reason of its own (at 100,000 samples a stage's arrays come back from the heap
that its previous call freed, while at 1,000,000 they are fresh pages of the system's).

Data: the ``nuswide`` profile (4096-d CNN-like features, 1000 tags) up to 100,000 samples;
from 300,000 on the feature dimension drops to 512 (``make_synthetic(n_features=512)``)
so that the data fit in memory; ``--tags 100,1000,10000`` sweeps the vocabulary at one n
(``make_synthetic(n_tags=...)``).

Stages (tau trees, phi = 3, 30 clusters, kappa = 20):

``fit``            HMLForest on (X, Y), the profile's flat tags;
``apply``          the fitted forest's leaves of the same X, as for new samples;
``leaf_knn``       each sample's kappa forest-affinity neighbours (Eq. 10);
``forest_graph``   their symmetric kNN graph;
``complete_tags``  the observed tags plus each tagged sample's 10 best predicted ones
                   from the same kNN lists (``complete.completed_tags``, ``HMLClustering``'s
                   default ``complete_tags=True``);
``tag_graph``      the cosine kNN graph of those tags, fused with the forest's
                   (``HMLClustering``'s default ``tag_weight=0.5``);
``spectral``       normalised spectral clustering of the fused graph;
``am_top``         AM completion (Eq. 13): every sample's 10 best tags, kept sparse
                   (``complete.affinity_measure_top``; the dense (n, m) scores would need
                   8 GB at a million samples and 1000 tags).

``--dask W`` measures each size a second time with the forest's work (fit, apply, leaf
k-NN) on a ``dask.distributed.LocalCluster`` of W single-threaded worker processes
(``hmlkit.dask_backend``); the later stages are the same local code, so they are not run
again (NaN). Its peak memory adds the workers' peaks to the main process's.

Growth exponents are the slopes of log(time) against log(n) between consecutive sizes
(and, in the printed table, from the first size to the last). The tag sweep's features
are 512-d at every vocabulary size.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import xarray as xr

from hmlkit._validation import check_int
from hmlkit.affinity import cosine_knn_graph, knn_graph_from_neighbors, leaf_knn, normalized_graph
from hmlkit.spectral import spectral_from_graph
from hmlkit.complete import affinity_measure_top, completed_tags
from hmlkit.data import make_synthetic
from hmlkit.data.synthetic import PROFILES, least_tags
from hmlkit.forest import HMLForest
from hmlkit.studies.saving import save_figure_atomic, write_dataset_atomic

from .common import peak_gb, run_child, warm

STAGES = ("generate", "fit", "apply", "leaf_knn", "forest_graph", "complete_tags", "tag_graph", "spectral", "am_top")
# "end to end": fit, affinity, clustering (not the data, nor apply / AM)
END_TO_END = ("fit", "leaf_knn", "forest_graph", "complete_tags", "tag_graph", "spectral")
LOW_DIM_FROM = 300_000  # from this n on the features are 512-d
LOW_DIM = 512
REPEAT_BELOW = 1.0  # seconds: a stage quicker than this is timed again ...
REPEATS = 5  # ... up to this many times in all, its best time kept
N_CLUSTERS, N_NEIGHBORS = 30, 20  # the pipeline's clusters and kappa


def best_time(fn, always=False):
    """(result, best time, timings, first time) of ``fn()``: timed again while its best
    time is below ``REPEAT_BELOW``, up to ``REPEATS`` times in all; ``always``:
    ``REPEATS`` times."""
    best = first = math.inf
    for i in range(REPEATS):
        # the previous call's result is released before the clock starts, not when its name
        # is rebound inside the timed span: a pipeline never pays for a second result (at a
        # million samples unmapping a graph's 384 MB took about 0.03 s of a 0.5 s stage)
        res = None
        t = time.perf_counter()
        res = fn()
        dt = time.perf_counter() - t
        first = dt if i == 0 else first
        best = min(best, dt)
        if best >= REPEAT_BELOW and not always:
            break
    return res, best, i + 1, first


def _worker_peak_gb(dask_worker=None):
    """A Dask worker's peak memory (``client.run`` hands it the worker)."""
    return peak_gb()


def measure(n, trees=100, n_tags=None, n_features=None, n_clusters=N_CLUSTERS, n_neighbors=N_NEIGHBORS, seed=0,
            n_jobs=None, dask_workers=0, repeat=()):
    """Time every stage on ``n`` samples (in this process); returns {stage: seconds,
    "peak_gb_<stage>": the process's peak memory after the stage, "timings_<stage>": how
    many times it was timed, ...}. A stage is timed again while quicker than
    ``REPEAT_BELOW``, and the stages in ``repeat`` ``REPEATS`` times whatever their time.
    ``dask_workers``: the forest's stages on a LocalCluster of that many processes."""
    warm()
    if n_features is None and n >= LOW_DIM_FROM:
        n_features = LOW_DIM
    out = {"n": int(n), "trees": int(trees), "n_clusters": int(n_clusters), "skipped": {},
           "dask_workers": int(dask_workers)}
    client = None
    forest_work = contextlib.nullcontext
    if dask_workers:
        from dask.distributed import Client, LocalCluster
        from joblib import parallel_config

        client = Client(LocalCluster(n_workers=int(dask_workers), threads_per_worker=1, processes=True,
                                     dashboard_address=None))
        client.run(warm)

        def forest_work():
            return parallel_config(backend="dask")

    def peak():
        return peak_gb() + (sum(client.run(_worker_peak_gb).values()) if client is not None else 0.0)

    def stage(name, fn, on_cluster=False):
        def run_stage():
            with forest_work() if on_cluster else contextlib.nullcontext():
                return fn()

        res, out[name], out[f"timings_{name}"], out[f"first_{name}"] = best_time(run_stage, name in repeat)
        out[f"peak_gb_{name}"] = peak()
        return res

    def pipeline(n, trees, stage, local_only):
        D = stage("generate", lambda: make_synthetic("nuswide", n_samples=int(n), random_state=seed,
                                                       n_features=n_features, n_tags=n_tags))
        f = stage("fit", lambda: HMLForest(n_estimators=trees, min_samples_leaf=3, random_state=seed,
                                           n_jobs=n_jobs).fit(D.X, D.Y, D.layers), on_cluster=True)
        stage("apply", lambda: f.apply(D.X), on_cluster=True)
        idx, w = stage("leaf_knn", lambda: leaf_knn(f.train_leaves_, n_neighbors), on_cluster=True)
        if not local_only:
            return D
        W = stage("forest_graph", lambda: knn_graph_from_neighbors(idx, w, D.n_samples))
        T = stage("complete_tags", lambda: completed_tags(idx, w, D.Y, n_neighbors))
        G = stage("tag_graph", lambda: (0.5 * normalized_graph(W) + 0.5 * normalized_graph(
            cosine_knn_graph(T, n_neighbors))).tocsr())
        stage("spectral", lambda: spectral_from_graph(G, n_clusters, random_state=seed))
        stage("am_top", lambda: affinity_measure_top(idx, w, D.Y, n_neighbors, n_top=10))
        return D

    # every stage once on a small problem first, so that no timed stage includes compiling
    # or loading its numba kernels from the disk cache; the tag graph's index searches too,
    # which "auto" takes only from 20,000 samples
    small = pipeline(2000, 2, lambda name, fn, on_cluster=False: fn(), True)
    for algorithm in ("inverted", "window"):
        cosine_knn_graph(small.Y, n_neighbors, algorithm=algorithm)
    D = pipeline(n, trees, stage, client is None)
    out.update(n_features=int(D.n_features), n_tags=int(D.n_tags), tags_per_sample=D.Y.nnz / D.n_samples)
    if client is not None:  # the later stages run the same local code as the local measurement
        out["peak_gb"] = peak()
        out["skipped"].update({s: "local code, as in the local run" for s in STAGES[STAGES.index("leaf_knn") + 1:]})
        client.cluster.close()
        client.close()
        return out
    out["peak_gb"] = peak()
    return out


def _sizes(parser, option, text):
    """Comma-separated integers (their range is checked by ``check_options``)."""
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        parser.error(f"{option} must be comma-separated integers, got {text!r}")


def least_n():
    """The fewest samples a size of the sweep can have: the nuswide profile's generator
    wants one per group, spectral clustering more samples than clusters, and each sample
    kappa neighbours."""
    return max(PROFILES["nuswide"]["n_groups"], N_CLUSTERS, N_NEIGHBORS) + 1


def check_options(ns, trees=100, tags=None, tags_n=30_000, dask_workers=0, n_features=None, flags=False):
    """Refuse, before any size is measured, what would fail in a child or after the sweep
    (a sweep at a million samples takes a quarter of an hour); ``flags``: name the options
    as the command line spells them. Raises ValueError."""
    def label(name, flag):
        return flag if flags else name

    least = least_n()
    for name, flag, values, low in (("ns", "--n", ns, least), ("tags", "--tags", tags or (), least_tags("nuswide"))):
        values = list(values)
        if name == "ns" and not values:  # the tables and exponents are by n
            raise ValueError(f"{label(name, flag)} must list at least one sample count")
        for v in values:
            check_int(v, f"every size of {label(name, flag)}", min_val=low)
        if len(set(values)) < len(values):  # a growth exponent would divide by log 1
            raise ValueError(f"{label(name, flag)} names a size twice: {values}")
    check_int(trees, label("trees", "--trees"))
    check_int(tags_n, label("tags_n", "--tags-n"), min_val=least)
    check_int(dask_workers, label("dask_workers", "--dask"), min_val=0)
    if n_features is not None:
        check_int(n_features, label("n_features", "--features"), min_val=8)  # make_synthetic's least


def check_output(path, option, suffixes=None):
    """Refuse an output path the sweep could not write at its end, before the sweep: a
    directory, a file below a file, a folder where no file can be created (tried, since
    permission bits say nothing for root), or, with ``suffixes``, an unknown format."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{option} {path} is a directory; give a file name")
    if suffixes is not None and path.suffix.lstrip(".").lower() not in suffixes:
        raise ValueError(f"{option} {path}: unknown format {path.suffix or '(no suffix)'!r}; "
                         f"use one of {', '.join(sorted(suffixes))}")
    folder = path.parent
    while not folder.exists():  # the atomic writers create missing folders
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(f"{option} {path}: {folder} is a file, not a folder")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ValueError(f"{option} {path}: cannot write in {folder} ({exc.strerror or exc})") from None


def _run_one(n, trees, n_tags=None, n_features=None, dask_workers=0, repeat=()):
    cmd = [sys.executable, "-m", "benchmarks.scale", "--_one", str(n), "--trees", str(trees)]
    if repeat:
        cmd += ["--_repeat", ",".join(repeat)]
    if n_tags:
        cmd += ["--_tags", str(n_tags)]
    if n_features:
        cmd += ["--_features", str(n_features)]
    if dask_workers:
        cmd += ["--dask", str(dask_workers)]
    return run_child(cmd, f"the measurement at n={n:,}")


def _summary(r):
    """One line of a size's stage times and peak memory (printed as each size ends, so a
    long sweep that fails later keeps what it measured)."""
    e2e = sum(r.get(s, math.nan) for s in END_TO_END)
    return (", ".join(f"{s} {r[s]:.1f}" for s in STAGES if s in r) + f"; end to end {e2e:.1f}"
            + f"; peak {r['peak_gb']:.2f} GiB")


def _repeated(first):
    """The stages the first size of a sweep timed more than once (``measure``'s result)."""
    return tuple(s for s in STAGES if first.get(f"timings_{s}", 1) > 1)


def run(ns=(10_000, 30_000, 100_000), trees=100, tags=None, tags_n=30_000, progress=print, dask_workers=0,
        n_features=None):
    """Every stage at each n of ``ns`` (the profile's 1000 tags), then, when ``tags`` is
    given, at ``tags_n`` samples with each vocabulary size; each in a fresh interpreter.
    ``dask_workers``: each n measured again on a LocalCluster of that many workers.
    ``n_features``: the feature dimension at every n (default: the profile's 4096 below
    ``LOW_DIM_FROM``, 512 from there; one dimension throughout makes the growth
    exponents across that boundary mean what they say).
    Returns {"n": [result per n], "tags": [result per vocabulary size], "dask": [...]}."""
    check_options(ns, trees, tags, tags_n, dask_workers, n_features)
    out = {"n": [], "tags": [], "dask": []}
    repeat = ()  # the stages timed more than once at the first size: as often at the others
    for n in ns:
        t = time.perf_counter()
        out["n"].append(_run_one(n, trees, n_features=n_features, repeat=repeat))
        repeat = repeat or _repeated(out["n"][0])
        if progress:
            progress(f"[scale] n={n:,}: {time.perf_counter() - t:.0f} s ({_summary(out['n'][-1])})")
        if dask_workers:
            t = time.perf_counter()
            out["dask"].append(_run_one(n, trees, n_features=n_features, dask_workers=dask_workers, repeat=repeat))
            if progress:
                progress(f"[scale] n={n:,} on {dask_workers} Dask workers: {time.perf_counter() - t:.0f} s "
                         f"({_summary(out['dask'][-1])})")
    repeat = ()  # the tag sweep's own first size sets its repeated stages, by the same rule
    for m in tags or ():
        out["tags"].append(_run_one(tags_n, trees, n_tags=m, n_features=LOW_DIM, repeat=repeat))
        repeat = repeat or _repeated(out["tags"][0])
        if progress:
            progress(f"[scale] {tags_n:,} samples, {m:,} tags: {_summary(out['tags'][-1])}")
    return out


def exponents(ns, times):
    """Slopes of log(time) on log(n) between consecutive sizes (NaN where a time is missing)."""
    out = []
    for (n0, t0), (n1, t1) in zip(zip(ns, times), zip(ns[1:], times[1:])):
        ok = t0 is not None and t1 is not None and t0 > 0 and t1 > 0
        out.append(math.log(t1 / t0) / math.log(n1 / n0) if ok else float("nan"))
    return out


def to_dataset(results):
    """``time(n, stage)``, ``peak_gb(n, stage)``, ``exponent(step, stage)`` (the growth between
    consecutive n), ``first_time(n, stage)`` and ``first_exponent(step, stage)`` (each
    stage's first call alone) and, for a tag sweep, ``tag_time(n_tags, stage)``; skipped
    stages NaN with the reason in ``attrs``."""
    def grid(rows, key_fmt):
        return np.array([[r.get(key_fmt.format(s), np.nan) for s in STAGES] for r in rows], dtype=float)

    rows = results["n"]
    ns = [r["n"] for r in rows]
    t = grid(rows, "{}")
    first = grid(rows, "first_{}")

    def slopes(times):
        return np.array([exponents(ns, list(times[:, j])) for j in range(len(STAGES))]).T if len(ns) > 1 else \
            np.zeros((0, len(STAGES)))

    exps = slopes(t)
    ds = xr.Dataset(
        {"time": (("n", "stage"), t), "peak_gb": (("n", "stage"), grid(rows, "peak_gb_{}")),
         "first_time": (("n", "stage"), first), "first_exponent": (("step", "stage"), slopes(first)),
         "total_peak_gb": (("n",), np.array([r["peak_gb"] for r in rows], dtype=float)),
         "n_features": (("n",), np.array([r["n_features"] for r in rows])),
         "exponent": (("step", "stage"), exps)},
        coords={"n": ns, "stage": list(STAGES), "step": [f"{a}->{b}" for a, b in zip(ns, ns[1:])]},
        attrs={"trees": rows[0]["trees"] if rows else 0, "cpu_count": os.cpu_count() or 0,
               "skipped": json.dumps({r["n"]: r["skipped"] for r in rows if r["skipped"]})})
    if results.get("tags"):
        tr = results["tags"]
        ds["tag_time"] = (("n_tags", "stage"), grid(tr, "{}"))
        ds = ds.assign_coords(n_tags=[r["n_tags"] for r in tr])
        ds.attrs["tags_n"] = tr[0]["n"]
    if results.get("dask"):
        dr = results["dask"]
        ds["dask_time"] = (("n_dask", "stage"), grid(dr, "{}"))
        ds["dask_peak_gb"] = (("n_dask",), np.array([r["peak_gb"] for r in dr], dtype=float))
        ds = ds.assign_coords(n_dask=[r["n"] for r in dr])
        ds.attrs["dask_workers"] = dr[0]["dask_workers"]
    return ds


def plot_axes(ds, ax_n, ax_tags=None, prefix=""):
    """Log-log time per stage against n on ``ax_n``; the tag sweep on ``ax_tags``."""
    for s in ds["stage"].values:
        if s != "generate":
            ax_n.loglog(ds["n"].values, ds[prefix + "time"].sel(stage=s).values, "o-", label=str(s))
    if prefix + "dask_time" in ds:
        ax_n.loglog(ds["n_dask"].values, ds[prefix + "dask_time"].sel(stage="fit").values, "k^--",
                    label=f"fit on {ds.attrs.get(prefix + 'dask_workers', '?')} Dask workers")
    ax_n.set(xlabel="samples n", ylabel="seconds",
             title=f"scaling: stages vs n ({ds.attrs.get('scale_trees', ds.attrs.get('trees'))} trees)")
    ax_n.legend(fontsize=7, ncol=2)
    ax_n.grid(alpha=0.3, which="both")
    if ax_tags is not None:
        plot_tags(ds, ax_tags, prefix)


def plot_tags(ds, ax, prefix=""):
    """Log-log time per stage against the number of tags (the vocabulary sweep)."""
    if prefix + "tag_time" not in ds:
        return
    for s in ds["stage"].values:
        if s != "generate":
            ax.loglog(ds["n_tags"].values, ds[prefix + "tag_time"].sel(stage=s).values, "o-", label=str(s))
    n = ds.attrs.get(prefix + "tags_n")
    ax.set(xlabel="tags m", ylabel="seconds",
           title="scaling: stages vs number of tags" + (f" ({n:,} samples)" if n else ""))
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3, which="both")


def plot(ds):
    """Log-log time per stage against n; the tag sweep beside it when present."""
    import matplotlib.pyplot as plt

    tags = "tag_time" in ds
    fig, axes = plt.subplots(1, 2 if tags else 1, figsize=(12 if tags else 6.5, 4.5), squeeze=False)
    plot_axes(ds, axes[0][0], axes[0][1] if tags else None)
    fig.tight_layout()
    return fig


def format_table(ds, prefix=""):
    """Printable lines: one row per n, seconds per stage, peak memory; exponents below; the
    tag sweep last. ``prefix``: the variables' prefix (``"scale_"`` in ``bench_speed.nc``)."""
    stages = [s for s in ds["stage"].values if s != "generate"]
    t, peak, ex = ds[prefix + "time"], ds[prefix + "total_peak_gb"], ds[prefix + "exponent"]
    lines = ["n".rjust(9) + "d".rjust(6) + "".join(s.rjust(13) for s in stages) + "end to end".rjust(12)
             + "peak GiB".rjust(9)]
    for n in ds["n"].values:
        d = int(ds[prefix + "n_features"].sel(n=n)) if prefix + "n_features" in ds else -1
        e2e = sum(float(t.sel(n=n, stage=s)) for s in END_TO_END)
        lines.append(f"{n:>9,}{d:>6}" + "".join(f"{float(t.sel(n=n, stage=s)):>13.2f}" for s in stages)
                     + f"{e2e:>12.1f}" + f"{float(peak.sel(n=n)):>9.2f}")
    for step in ds["step"].values:
        lines.append(f"{'exp ' + step:>9}" + "".join(f"{float(ex.sel(step=step, stage=s)):>13.2f}" for s in stages))
    if prefix + "first_exponent" in ds:  # each stage's first call alone (see the module's notes)
        fx = ds[prefix + "first_exponent"]
        for step in ds["step"].values:
            lines.append(f"{'first calls ' + step:>9}"
                         + "".join(f"{float(fx.sel(step=step, stage=s)):>13.2f}" for s in stages))
    ns = [int(v) for v in ds["n"].values]
    if len(ns) > 2:  # the growth over the whole sweep (the targets span 100k -> 1M)
        over = [exponents([ns[0], ns[-1]], [float(t.sel(n=ns[0], stage=s)), float(t.sel(n=ns[-1], stage=s))])[0]
                for s in stages]
        lines.append(f"{f'exp {ns[0]}->{ns[-1]}':>9}" + "".join(f"{e:>13.2f}" for e in over))
    if prefix + "tag_time" in ds:
        lines.append(f"tags, at n = {ds.attrs.get(prefix + 'tags_n', '?'):,}:")
        for m in ds["n_tags"].values:
            lines.append(f"{m:>9,}" + "".join(f"{float(ds[prefix + 'tag_time'].sel(n_tags=m, stage=s)):>13.2f}"
                                              for s in stages))
    if prefix + "dask_time" in ds:
        lines.append(f"on a LocalCluster of {ds.attrs.get(prefix + 'dask_workers', '?')} single-threaded workers "
                     "(fit / apply / leaf_knn there), and its fit time over the local one:")
        for n in ds["n_dask"].values:
            dt = ds[prefix + "dask_time"].sel(n_dask=n)
            ratio = float(dt.sel(stage="fit")) / float(t.sel(n=n, stage="fit")) if n in ds["n"].values else float("nan")
            lines.append(f"{n:>9,}" + "".join(f"{float(dt.sel(stage=s)):>13.2f}" for s in stages)
                         + f"{float(ds[prefix + 'dask_peak_gb'].sel(n_dask=n)):>9.2f}" + f"   fit x{ratio:.2f}")
    skipped = ds.attrs.get(prefix + "skipped", "{}")
    if skipped not in ("{}", ""):
        lines.append(f"skipped: {skipped}")
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", default="10000,30000,100000", help="comma-separated sample counts")
    p.add_argument("--trees", type=int, default=100)
    p.add_argument("--tags", default="", help="comma-separated vocabulary sizes for the tag sweep (e.g. "
                   "100,1000,10000); empty: no sweep")
    p.add_argument("--tags-n", type=int, default=30_000, help="samples of the tag sweep")
    p.add_argument("--dask", type=int, default=0, help="also measure each n with the forest's stages on a "
                   "LocalCluster of this many worker processes")
    p.add_argument("--features", type=int, default=None, help="feature dimension at every n (default: 4096 below "
                   f"{LOW_DIM_FROM:,} samples, {LOW_DIM} from there)")
    p.add_argument("--out", default=None, help="also write the results here as netCDF (atomically), to be read "
                   "back with xarray.open_dataset and printed again with format_table")
    p.add_argument("--figure", default=None, help="also draw the log-log plot of the results here (png)")
    p.add_argument("--_one", type=int, help=argparse.SUPPRESS)
    p.add_argument("--_tags", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--_features", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--_repeat", default="", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._one:
        print(json.dumps(measure(args._one, args.trees, n_tags=args._tags, n_features=args._features,
                                 dask_workers=args.dask, repeat=tuple(s for s in args._repeat.split(",") if s))))
        return 0
    ns, tags = _sizes(p, "--n", args.n), _sizes(p, "--tags", args.tags)
    try:
        check_options(ns, args.trees, tags, args.tags_n, args.dask, args.features, flags=True)
        if args.out:
            check_output(args.out, "--out")
        if args.figure:
            from matplotlib.figure import Figure

            check_output(args.figure, "--figure", set(Figure().canvas.get_supported_filetypes()))
    except ValueError as exc:
        p.error(str(exc))
    ds = to_dataset(run(ns, args.trees, tags or None, args.tags_n, dask_workers=args.dask, n_features=args.features))
    # a 1M sweep takes a quarter of an hour: its results are written before anything else can fail
    if args.out:
        print(f"results: {write_dataset_atomic(ds, args.out)}")
    for line in format_table(ds):
        print(line)
    if args.figure:
        import matplotlib.pyplot as plt

        fig = plot(ds)
        print(f"figure: {save_figure_atomic(fig, args.figure)}")
        plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main())
