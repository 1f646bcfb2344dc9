"""Time the Table 1 baselines that dominate real_corel's standard run, one at a time, on
Corel5k with a share of its tags removed, and save their labels (or scores) so that two
commits can be compared value by value:

    python tools/time_baselines.py --rate 0.5 --out /tmp/after
    git stash; python tools/time_baselines.py --rate 0.5 --out /tmp/before; git stash pop
    python tools/time_baselines.py --compare /tmp/before /tmp/after

Every AffProp fit of real_corel's Table 1 rows, one rate at a time (vifeat only once):

    python tools/time_baselines.py --parts affprop --rate 0 --affprop-modes bitag,cmb,detscore,vifeat

One thread (numba, BLAS), as real_corel's task processes run; each kernel compiled on a
small problem before it is timed. Needs the development data (HMLKIT_SHARED_DATA or
../shared/data).
"""
from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

PARTS = ("affprop", "ccforest", "detscore", "mmc", "lmmc", "clustrf")


def _corel(rate):
    from hmlkit.data import load_corel5k, remove_tags

    data = load_corel5k()
    return data, (remove_tags(data, rate, random_state=0) if rate else data)


def run(rate, out, parts=PARTS, modes=("bitag", "cmb")):
    from hmlkit.baselines.ccforest import ConstrainedClusteringForest
    from hmlkit.baselines.classic import AffinityPropagationClustering
    from hmlkit.baselines.detscore import detection_scores
    from hmlkit.baselines.inputs import make_input

    data, d = _corel(rate)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    k = data.n_groups
    if "affprop" in parts:
        AffinityPropagationClustering(3, random_state=0).fit(np.random.default_rng(0).normal(size=(60, 3)))
        for mode in modes:
            X = make_input(mode, d, random_state=0)
            t, c = time.perf_counter(), time.process_time()
            est = AffinityPropagationClustering(k, random_state=0).fit(X)
            print(f"AffProp {mode:8s} rate {rate}: {time.perf_counter() - t:6.1f} s (CPU "
                  f"{time.process_time() - c:6.1f} s), {est.n_runs_} runs, {est.n_clusters_found_} clusters", flush=True)
            np.save(out / f"affprop_{mode}.npy", est.labels_)
    if "ccforest" in parts:
        X, Y = make_input("blm", d, random_state=0)
        ConstrainedClusteringForest(5, n_estimators=2, n_jobs=1, random_state=0).fit(X[:300], Y[:300])
        t = time.perf_counter()
        est = ConstrainedClusteringForest(k, n_estimators=100, n_jobs=1, random_state=0).fit(X, Y)
        print(f"CC-Forest blm    rate {rate}: {time.perf_counter() - t:6.1f} s (100 trees)", flush=True)
        np.save(out / "ccforest_leaves.npy", est.train_leaves_)
        np.save(out / "ccforest_labels.npy", est.labels_)
    if "detscore" in parts:
        t = time.perf_counter()
        S = detection_scores(d.X, d.Y, random_state=0)
        print(f"DetScore detectors rate {rate}: {time.perf_counter() - t:6.1f} s ({S.shape[1]} tags)", flush=True)
        np.save(out / "detscore.npy", S)
    _time_fits(parts, d, k, out, rate)


def _time_fits(parts, d, k, out, rate):
    """MMC (bitag, cmb, detscore), Latent MMC (detscore) and ClustRF (100 trees; bitag, cmb,
    detscore), each compiled on a small problem first."""
    from hmlkit.baselines.clustrf import ClusteringRandomForest
    from hmlkit.baselines.inputs import make_input
    from hmlkit.baselines.lmmc import LatentMMC
    from hmlkit.baselines.mmc import MMC

    fits = {"mmc": (lambda: MMC(k, random_state=0), ("bitag", "cmb", "detscore")),
            "lmmc": (lambda: LatentMMC(k, random_state=0), ("detscore",)),
            "clustrf": (lambda: ClusteringRandomForest(k, n_estimators=100, random_state=0),
                        ("bitag", "cmb", "detscore"))}
    small = np.random.default_rng(0).random((60, 4))
    for name in (p for p in fits if p in parts):
        make, modes = fits[name]
        type(make())(3, random_state=0).fit(small)
        for mode in modes:
            X = make_input(mode, d, random_state=0)
            t = time.perf_counter()
            est = make().fit(X)
            print(f"{name:7s} {mode:8s} rate {rate}: {time.perf_counter() - t:6.1f} s", flush=True)
            np.save(out / f"{name}_{mode}.npy", est.labels_)


def compare(before, after):
    for f in sorted(Path(before).glob("*.npy")):
        g = Path(after) / f.name
        if not g.exists():
            print(f"{f.name}: missing in {after}")
            continue
        a, b = np.load(f), np.load(g)
        if a.dtype.kind == "f":
            print(f"{f.name}: max |difference| {float(np.abs(a - b).max()):.4g}")
        else:
            print(f"{f.name}: {'identical' if np.array_equal(a, b) else 'DIFFERENT'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=float, default=0.5, help="share of Corel5k's tags removed (seed 0)")
    ap.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    ap.add_argument("--affprop-modes", default="bitag,cmb",
                    help="input modes of the AffProp fits (real_corel runs bitag, cmb, detscore, and vifeat once)")
    ap.add_argument("--out", default="/tmp/hmlkit-time-baselines", help="folder for the labels and scores")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two --out folders")
    a = ap.parse_args()
    if a.compare:
        compare(*a.compare)
    else:
        run(a.rate, a.out, tuple(p for p in a.parts.split(",") if p),
            modes=tuple(m for m in a.affprop_modes.split(",") if m))


if __name__ == "__main__":
    main()
