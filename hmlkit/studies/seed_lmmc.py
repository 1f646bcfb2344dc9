"""Seed study: Latent Maximum Margin Clustering (Zhou, Lan, Vahdat, Mori, NIPS 2013), the
shape of its Table 1 (``studies/seed_lmmc.ipynb``; the methods are in
:mod:`hmlkit.baselines.lmmc`, :mod:`hmlkit.baselines.mmc`, :mod:`hmlkit.baselines.detscore`).

LMMC, MMC, SC, KM and NC on DetScore input (cross-validated per-tag linear SVM detection
scores) of the synthetic ``trecvid`` profile, averaged over data seeds; measures as in the
paper (PUR, NMI, RI, FM, in %). Question: does LMMC beat MMC? (judged in
:mod:`hmlkit.studies.claims.seeds`; the paper's numbers are in :mod:`.paper_values`)
"""
from __future__ import annotations

import time

import numpy as np

from ..baselines.detscore import detection_scores
from ..baselines.lmmc import LatentMMC
from ..baselines.mmc import MMC
from ..data import make_synthetic
from ..metrics import clustering_scores
from . import paper_values as pv
from .cells import Cell, run_cells
from .config import _check_int, seed_setup

PROFILES = {"quick": 450, "standard": 1200, "paper": 2379}  # samples of the synthetic trecvid profile
METRICS = dict(zip(pv.LMMC_METRICS, ("purity", "nmi", "ri", "f1")))  # the paper's measures, ours


def setup(profile="quick", seed=0, results_dir="results", figures_dir="figures", n_seeds=3, C=10.0, n_jobs=1):
    """Checked parameters; ``C`` is fixed (the paper picks it from {10, 100, 1000}: no
    selection on the test labels here). ``n_jobs``: data seeds run at once (cells)."""
    if isinstance(n_seeds, bool) or not (isinstance(n_seeds, int) and n_seeds >= 1):
        raise ValueError(f"n_seeds must be a positive integer, got {n_seeds!r}")
    if isinstance(C, bool) or not (isinstance(C, (int, float)) and C > 0):
        raise ValueError(f"C must be a positive number, got {C!r}")
    return seed_setup("seed_lmmc", PROFILES, profile, seed, results_dir, figures_dir,
                      n_seeds=n_seeds, C=C, n_samples=PROFILES.get(profile), n_jobs=_check_int("n_jobs", n_jobs))


def spectral_5nn(S, k, rs):
    """SC as the paper sets it up (Sec. 5): a 5-nearest-neighbour graph, Gaussian width the
    mean 5-NN distance."""
    from sklearn.cluster import SpectralClustering
    from sklearn.neighbors import kneighbors_graph

    D = kneighbors_graph(S, 5, mode="distance", include_self=False)
    sigma = D.data.mean()
    D.data = np.exp(-D.data ** 2 / (2 * sigma ** 2))
    A = D.maximum(D.T)
    return SpectralClustering(k, affinity="precomputed", random_state=rs).fit_predict(A)


def ncut_full(S, k, rs):
    """NC (Shi & Malik) on the full Gaussian similarity (width: the median pairwise distance)."""
    from scipy.spatial.distance import pdist, squareform
    from sklearn.cluster import SpectralClustering

    d = pdist(S)
    A = squareform(np.exp(-d ** 2 / (2 * np.median(d) ** 2)))
    return SpectralClustering(k, affinity="precomputed", assign_labels="discretize", random_state=rs).fit_predict(A)


def methods(C):
    """{name: callable(S, n_clusters, seed) -> labels}, in the paper's order."""
    from sklearn.cluster import KMeans


    return {
        "LMMC": lambda S, k, rs: LatentMMC(k, C=C, random_state=rs).fit_predict(S),
        "MMC": lambda S, k, rs: MMC(k, C=C, random_state=rs).fit_predict(S),
        "SC": spectral_5nn,
        "KM": lambda S, k, rs: KMeans(k, n_init=10, random_state=rs).fit_predict(S),
        "NC": ncut_full,
    }


def _seed_cell(_shared, C, n_samples, seed):
    """One data seed: its DetScore input, then every method on it: [(scores in %, CPU s)]."""
    data = make_synthetic("trecvid", n_samples=n_samples, random_state=seed)
    S = detection_scores(data.X, data.Y, random_state=seed)
    out = []
    for fn in methods(C).values():
        t0 = time.process_time()
        labels = fn(S, data.n_groups, seed)
        seconds = time.process_time() - t0
        sc = clustering_scores(data.groups, labels)
        out.append([[100 * sc[v] for v in METRICS.values()], seconds])
    return out


def run(cfg, progress=True):
    """``score(method, metric, seed)`` in % and ``cpu_seconds(method, seed)``; each data
    seed is a cell (:mod:`hmlkit.studies.cells`)."""
    import xarray as xr

    runs = methods(cfg["C"])
    n_seeds, seed = cfg["n_seeds"], cfg.seed
    n = cfg["n_samples"]
    cells = [Cell({"C": float(cfg["C"]), "n": n, "seed": seed + s}, (float(cfg["C"]), n, seed + s),
                  f"  seed={seed + s}", {"what": "detscore+lmmc+mmc+sc+km+nc", "data": "trecvid", "n": n or 2379,
                                         "d": 1000, "m": 114, "trees": 0})
             for s in range(n_seeds)]
    out = run_cells(_seed_cell, None, cells, n_jobs=cfg["n_jobs"], desc="data seeds", progress=progress,
                    describe=lambda c, r: c.label + " " + ", ".join(
                        f"{name} NMI={res[0][1]:.1f}" for name, res in zip(runs, r)))
    scores = np.zeros((len(runs), len(METRICS), n_seeds))
    seconds = np.zeros((len(runs), n_seeds))
    for s, res in enumerate(out):
        for a, (sc, sec) in enumerate(res):
            scores[a, :, s] = sc
            seconds[a, s] = sec
    # the paper's Table 1 (TRECVID MED 11) beside ours, NaN for a method it does not list
    paper = np.array([[pv.LMMC_TABLE1[m][j] if m in pv.LMMC_TABLE1 else np.nan for j in range(len(METRICS))]
                      for m in runs], dtype=float)
    return xr.Dataset(
        {"score": (("method", "metric", "seed"), scores), "cpu_seconds": (("method", "seed"), seconds),
         "paper": (("method", "metric"), paper)},
        coords={"method": list(runs), "metric": list(METRICS), "seed": seed + np.arange(n_seeds)},
        attrs={"n_samples": cfg["n_samples"], "C": cfg["C"], "balance": "0.9N/K..1.1N/K",
               "input": "detscore (5-fold CV linear SVM per tag, z-scored)", "data": "make_synthetic('trecvid')"},
    )


def table(ds):
    """Mean over seeds, ours beside the paper's Table 1."""
    out = ds.score.mean("seed").to_pandas().round(1)
    out.columns = [f"{c} (ours)" for c in out.columns]
    for j, c in enumerate(METRICS):
        out[f"{c} (paper)"] = [pv.LMMC_TABLE1[m][j] for m in out.index]
    return out


def plot(ds):
    import matplotlib.pyplot as plt

    names = list(ds.method.values)
    fig, axes = plt.subplots(1, 4, figsize=(13, 3), sharey=False)
    for ax, met in zip(axes, METRICS):
        v = ds.score.sel(metric=met)
        x = np.arange(len(names))
        ax.bar(x, v.mean("seed"), yerr=v.std("seed"), color="C0", alpha=.8, label="ours (synthetic)")
        ax.plot(x, [pv.LMMC_TABLE1[m][list(METRICS).index(met)] for m in names], "k_", ms=18, mew=2, label="paper (TRECVID)")
        ax.set_xticks(x, names)
        ax.set_title(met)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Latent MMC Table 1 shape on DetScore of synthetic trecvid "
                 f"(n={ds.attrs['n_samples']}, {ds.sizes['seed']} seeds)")
    return fig
