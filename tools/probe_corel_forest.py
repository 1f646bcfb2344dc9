"""Where the flat forest's Corel5k time goes: the same fit with one part of the data swapped.

    python tools/probe_corel_forest.py [--trees 100] [--repeats 3]

Flat ``HMLForest`` (min leaf 3, sqrt features, no bootstrap, 2 threads, as the peers
benchmark) on Corel5k's 499 binary visual words and 374 tags, then with the tags cut to
the 10 most frequent, with the words mapped by LSA (the recommended pipeline's forest),
and with random features of the same shape: uniform continuous, binary at 50 % density,
and binary at Corel5k's density. Prints the median fit time and the leaves per tree:
time per leaf separates the cost of the features' shape from the size of the trees.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

from hmlkit import HMLForest
from hmlkit.data import load_dataset
from hmlkit.tokens import TokenFeatureMap


def fit(X, Y, label, trees, repeats):
    HMLForest(n_estimators=2, min_samples_leaf=3, random_state=0, hierarchy=False, n_jobs=2).fit(X, Y)  # compile
    times = []
    for r in range(repeats):
        t = time.perf_counter()
        f = HMLForest(n_estimators=trees, min_samples_leaf=3, random_state=r, hierarchy=False, n_jobs=2).fit(X, Y)
        times.append(time.perf_counter() - t)
    med, leaves = float(np.median(times)), float(f.n_leaves_.mean())
    print(f"{label:52s} {med:6.2f} s  {leaves:6.0f} leaves/tree  {1e6 * med / (trees * leaves):5.1f} us/leaf",
          flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    D = load_dataset("corel5k")
    X, Y = np.ascontiguousarray(D.X, dtype=np.float32), D.Y.tocsr()
    rng = np.random.default_rng(0)
    density = float((X != 0).mean())
    top = np.argsort(-np.asarray(Y.sum(0)).ravel())[:10]
    runs = [
        ("Corel5k binary words, 374 tags", X, Y),
        ("binary words, the 10 most frequent tags", X, sp.csr_matrix(Y[:, top])),
        ("LSA map of the words, 374 tags", TokenFeatureMap(random_state=0).fit_transform(X), Y),
        ("uniform random continuous, 374 tags", rng.random(X.shape), Y),
        ("random binary at 50 % density, 374 tags", rng.random(X.shape) < 0.5, Y),
        (f"random binary at Corel5k's {100 * density:.1f} % density, 374 tags", rng.random(X.shape) < density, Y),
    ]
    for label, Xi, Yi in runs:
        fit(np.ascontiguousarray(Xi, dtype=np.float32), Yi, label, a.trees, a.repeats)


if __name__ == "__main__":
    main()
