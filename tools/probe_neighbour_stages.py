"""Where the forest's neighbour stages spend their time, part by part, on one forest: the
figures behind the scale notes on the leaf kNN, the forest graph and AM top-10.

    python tools/probe_neighbour_stages.py --n 100000 [--trees 100] [--leaves FILE.npy] [--repeat 3]

Grows ``HMLForest(n_estimators=trees, min_samples_leaf=3, random_state=0)`` on the nuswide
profile with 512-d features (as ``benchmarks.scale`` does from 300,000 samples), or reads
its training leaves from ``--leaves`` (written there after a fit when the file is missing:
a 100-tree fit at a million samples takes 12 minutes on 2 cores). Then times, each
``--repeat`` times in this process (min and max printed):

- ``leaf_members``: each tree's leaf member lists (from the leaves' transpose);
- ``knn_rows``: the leaf kNN's row kernel alone;
- ``leaf_knn``: the whole stage;
- ``forest_graph``: ``knn_graph_from_neighbors`` on those lists;
- ``am_kernel``: AM top-10's kernel alone, and ``am_kernel_local``: the same with every
  neighbour id taken modulo 100,000, so that all of its reads of the tag matrix fall in
  its first 100,000 rows (a locality control: the same work per row).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, min(times), max(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--leaves", type=Path, default=None, help="training leaves (.npy), written after a fit if missing")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--neighbors", type=int, default=20)
    args = ap.parse_args(argv)

    from hmlkit.affinity import _kernels as K
    from hmlkit.affinity import knn_graph_from_neighbors, leaf_knn
    from hmlkit.affinity.leaf import _leaf_ids
    from hmlkit.complete import _kernels as KC
    from hmlkit.complete import compact_structure
    from hmlkit.data import make_synthetic
    from hmlkit.forest import HMLForest

    D = make_synthetic("nuswide", n_samples=args.n, random_state=0, n_features=512)
    if args.leaves is not None and args.leaves.exists():
        leaves = np.load(args.leaves)
        if leaves.shape[0] != args.n:
            raise SystemExit(f"{args.leaves} holds the leaves of {leaves.shape[0]} samples, not --n {args.n}")
    else:
        leaves = HMLForest(n_estimators=args.trees, min_samples_leaf=3, random_state=0).fit(
            D.X, D.Y, D.layers).train_leaves_
        if args.leaves is not None:
            np.save(args.leaves, leaves)
    Y = D.Y.tocsr()
    (indptr, indices), m, k = compact_structure(Y), Y.shape[1], args.neighbors

    # every kernel once on a small problem, so that no timing includes compiling
    small = np.ascontiguousarray(leaves[:500])
    i_s, w_s = leaf_knn(small, k)
    knn_graph_from_neighbors(i_s, w_s, 500)
    KC.affinity_measure_top_rows(i_s, w_s, indptr, indices, m, 10, K.chunk_bounds(500))

    n = leaves.shape[0]
    rows = np.arange(n, dtype=np.int64)
    ids = _leaf_ids(np.ascontiguousarray(leaves, dtype=np.int32))
    report = []
    (members, offsets, _), *t = timed(lambda: K.leaf_members(ids), args.repeat)
    report.append(("leaf_members", *t))
    _, *t = timed(lambda: K.knn_rows(ids, members, offsets, n, rows, k, K.chunk_bounds(n)), args.repeat)
    report.append(("knn_rows", *t))
    (idx, w), *t = timed(lambda: leaf_knn(leaves, k), args.repeat)
    report.append(("leaf_knn", *t))
    _, *t = timed(lambda: knn_graph_from_neighbors(idx, w, n), args.repeat)
    report.append(("forest_graph", *t))
    _, *t = timed(lambda: KC.affinity_measure_top_rows(idx, w, indptr, indices, m, 10, K.chunk_bounds(n)),
                  args.repeat)
    report.append(("am_kernel", *t))
    local = np.where(idx >= 0, idx % min(n, 100_000), -1).astype(np.int32)
    _, *t = timed(lambda: KC.affinity_measure_top_rows(local, w, indptr, indices, m, 10, K.chunk_bounds(n)),
                  args.repeat)
    report.append(("am_kernel_local", *t))
    print(f"n = {n:,}, {leaves.shape[1]} trees, {args.repeat} timings each (seconds, min - max):")
    for name, lo, hi in report:
        print(f"  {name:16s} {lo:8.3f} - {hi:.3f}")


if __name__ == "__main__":
    main()
