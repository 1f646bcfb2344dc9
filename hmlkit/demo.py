"""A first look: HML-RF on the embedded ``trecvid`` profile, beside
K-means on the visual features and spectral clustering on the tags.

``python -m hmlkit.demo [--trees N]``
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None):
    from sklearn.cluster import KMeans

    from hmlkit import HMLClustering, HMLTagCompleter
    from hmlkit.complete import cooccurrence_scores
    from hmlkit.data import hide_tags, make_synthetic
    from hmlkit.metrics import clustering_scores, completion_scores
    from hmlkit.spectral import spectral_from_affinity

    p = argparse.ArgumentParser(prog="python -m hmlkit.demo", description=__doc__)
    p.add_argument("--trees", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    if a.trees < 1 or a.seed < 0:  # before the baselines run, not after
        p.error(f"--trees must be positive and --seed non-negative, got {a.trees} and {a.seed}")
    D = make_synthetic("trecvid", random_state=a.seed)
    print(D)
    rows = []
    t = time.perf_counter()
    km = KMeans(D.n_groups, n_init=10, random_state=a.seed).fit_predict(D.X)
    rows.append(("ViFeat  K-means", clustering_scores(D.groups, km), time.perf_counter() - t))
    t = time.perf_counter()
    Y = D.Y.toarray().astype(float)
    Yn = Y / np.maximum(np.linalg.norm(Y, axis=1), 1e-12)[:, None]
    sc = spectral_from_affinity(Yn @ Yn.T, D.n_groups, random_state=a.seed)
    rows.append(("BiTag   SpClust", clustering_scores(D.groups, sc), time.perf_counter() - t))
    t = time.perf_counter()
    hml = HMLClustering(D.n_groups, n_estimators=a.trees, random_state=a.seed).fit_predict(D.X, D.Y, D.layers)
    rows.append((f"HML-RF  (tau={a.trees})", clustering_scores(D.groups, hml), time.perf_counter() - t))
    print(f"\nClustering ({D.n_groups} groups)")
    print(f"{'method':24s}" + "".join(f"{k:>8s}" for k in ("purity", "nmi", "ri", "f1", "ari")) + "   time")
    for name, s, dt in rows:
        print(f"{name:24s}" + "".join(f"{s[k]:8.3f}" for k in ("purity", "nmi", "ri", "f1", "ari")) + f"  {dt:5.1f}s")
    obs, hidden = hide_tags(D, 0.4, random_state=a.seed)
    print("\nTag completion (40% of each sample's tags hidden)")
    co = completion_scores(cooccurrence_scores(obs.Y), obs.Y, hidden)
    t = time.perf_counter()
    am = completion_scores(HMLTagCompleter("AM", n_estimators=a.trees, random_state=a.seed)
                           .fit(obs.X, obs.Y, obs.layers).predict_scores(), obs.Y, hidden)
    dt = time.perf_counter() - t
    for name, r in (("tag co-occurrence", co), ("HML-RF(AM)", am)):
        print(f"{name:24s}" + "".join(f"  {k}={r[k]:.3f}" for k in ("AP@1", "AP@3", "AR@3", "Coverage@3")))
    print(f"(HML-RF(AM) {dt:.1f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
