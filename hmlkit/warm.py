"""Compile the kit's Numba kernels once, into Numba's disk cache: ``python -m hmlkit.warm``.

Numba compiles a kernel on its first call, and a cold compile of the forest and the
clustering pipeline takes about a minute. Processes started together (notebooks run
side by side, test workers, Dask workers) each compile the same kernels until one of
them has written the cache; run once after an install or an update, this leaves them
all loading it. Every Numba kernel is called here on a tiny problem, with the argument
types the estimators pass it, through the public estimators where one calls it.
"""
from __future__ import annotations

import time

from ._numba_cache import is_warm, mark_warm


PARTS = ("forest", "clustering", "completion", "cosine", "baselines")
# two processes of about a minute each from a cold cache: the forest and its uses, the rest
GROUPS = (("forest", "completion", "clustering"), ("cosine", "baselines"))


def check_parts(parts):
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise ValueError(f"unknown part(s) {unknown}; choose among {', '.join(PARTS)}")


def compile_kernels(parts=PARTS, log=None):
    """Call the Numba kernels of each of ``parts`` (all by default: every kernel) once on
    a tiny problem; returns {part: seconds}."""
    check_parts(parts)
    import numpy as np
    import scipy.sparse as sp

    from hmlkit import HMLClustering, HMLForest, HMLTagCompleter
    from hmlkit.affinity import cosine_knn_graph, leaf_affinity, leaf_knn
    from hmlkit.baselines.ccforest import ConstrainedClusteringForest
    from hmlkit.baselines.classic import AffinityPropagationClustering
    from hmlkit.baselines.ghfart import GHFART
    from hmlkit.baselines.mmc import MMC
    from hmlkit.complete import affinity_measure_top
    from hmlkit.data import hide_tags, make_synthetic
    from hmlkit.features import hik_feature_map
    from hmlkit.metrics import completion_scores

    D = make_synthetic("trecvid", n_samples=120, random_state=0)
    X, Y, layers = D.X, D.Y, D.layers
    k = 3

    def forest():
        f = HMLForest(n_estimators=2, random_state=0).fit(X, Y, layers)
        f.apply(X)
        leaf_affinity(f.train_leaves_, f.apply(X[:5]))
        HMLForest(n_estimators=2, random_state=0, hierarchy=False).fit(X, Y)

    def clustering():
        HMLClustering(k, n_estimators=2, random_state=0).fit_predict(X, Y, layers)

    def completion():
        obs, hidden = hide_tags(D, frac=0.4, random_state=0)
        for method in ("AM", "LN", "GC"):
            c = HMLTagCompleter(method, n_estimators=2, n_clusters=k, random_state=0)
            scores = c.fit(obs.X, obs.Y, obs.layers).predict_scores()
        completion_scores(scores, obs.Y, hidden)
        # the sparse AM scores for collections too large for dense ones (no estimator calls them)
        idx, w = leaf_knn(c.forest_.train_leaves_, k)  # the last completer's forest: no fit of its own
        affinity_measure_top(idx, w, obs.Y, k)

    def cosine():
        Z = sp.csr_matrix(Y, dtype=np.float64)
        for algorithm in ("brute", "inverted", "window"):
            cosine_knn_graph(Z, 5, algorithm=algorithm)

    def baselines():
        ConstrainedClusteringForest(k, n_estimators=2, random_state=0).fit(X, Y)
        AffinityPropagationClustering(k, random_state=0).fit(X)
        GHFART(n_clusters=k, random_state=0).fit(X, Y)
        MMC(k, max_iter=2, random_state=0).fit(X)
        hik_feature_map(np.abs(X[:10]))

    out = {}
    run = {"forest": forest, "clustering": clustering, "completion": completion, "cosine": cosine,
           "baselines": baselines}
    for name in parts:
        part = run[name]
        t = time.perf_counter()
        part()
        out[name] = time.perf_counter() - t
        if log:
            log(f"{name}: {out[name]:.1f} s")
    return out


def warm_in_processes(groups=GROUPS):
    """``python -m hmlkit.warm`` once per group of parts, the groups side by side, before
    several processes start that would each compile the same kernels (the test workers,
    the studies' notebooks). Returns {group: the end of its error output} for the groups
    that failed (empty when all succeeded): the kernels then compile where first called."""
    import subprocess
    import sys

    procs = []
    failed = {}
    try:
        for parts in groups:
            procs.append((parts, subprocess.Popen([sys.executable, "-m", "hmlkit.warm", *parts],
                                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        for parts, p in procs:
            _, err = p.communicate()
            if p.returncode != 0:
                failed[parts] = err[-2000:]
    except BaseException:  # Ctrl-C, the runner stopped by SIGTERM: no compiler left running behind it
        for _, p in procs:
            p.kill()
            p.wait()
        raise
    if not failed and set(PARTS) <= {part for g in groups for part in g}:
        mark_warm()
    return failed


def warm_if_needed(groups=GROUPS):
    """:func:`warm_in_processes` unless every kernel of the current sources was compiled
    already (:func:`hmlkit._numba_cache.is_warm`); returns its failures, or None if skipped."""
    return None if is_warm() else warm_in_processes(groups)


def main(argv=None):
    """``python -m hmlkit.warm [part ...]``: the given parts (default all), in this process."""
    import sys

    parts = tuple(sys.argv[1:] if argv is None else argv) or PARTS
    try:
        check_parts(parts)
    except ValueError as exc:
        sys.exit(f"python -m hmlkit.warm: {exc}")
    t = time.perf_counter()
    compile_kernels(parts, log=print)
    if set(parts) == set(PARTS):
        mark_warm()
    print(f"Numba kernels compiled or loaded in {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
