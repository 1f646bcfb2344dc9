"""The real-data study (``studies/real_corel.ipynb``): where the paper's method
and the kit's recommended settings stand on real tagged images.

Clustering on Corel5k (50 Corel CDs as ground truth) at several tag-removal
rates, and tag completion on Corel5k and Corel16k at 40 % hidden, each row a
method; the HML-RF rows are the recommended ``HMLClustering()`` /
``HMLTagCompleter()`` and the paper's exact variants beside them.
"""
from __future__ import annotations

import time

import numpy as np
import xarray as xr

from ..cluster import PAPER_SETTINGS as PAPER_CLUSTERING  # the paper's exact HML-RF
from ..complete import PAPER_SETTINGS as PAPER_COMPLETION
from ..metrics import clustering_scores as _clustering_scores
from . import paper_values as pv
from .config import HUB_RATIO

METRICS = pv.CLUSTER_METRICS


def _hml(cfg, **variant):
    from ..cluster import HMLClustering

    def run(data, k, seed):
        return HMLClustering(k, random_state=seed, **cfg.forest_params, **variant).fit_predict(data.X, data.Y, data.layers)
    return run


def _kmeans_visual(data, k, seed):
    from sklearn.cluster import KMeans

    return KMeans(k, n_init=10, random_state=seed).fit_predict(data.X)


def _graph_spectral(which):
    def run(data, k, seed):
        from ..affinity import cosine_knn_graph
        from ..cluster import spectral_from_graph

        Z = data.Y if which == "tags" else data.X
        return spectral_from_graph(cosine_knn_graph(Z, 20), k, random_state=seed)
    return run


def clustering_rows(cfg):
    """{row: (label, callable(data, n_clusters, seed) -> labels)}."""
    return {
        "kmeans_visual": ("K-means, visual features", _kmeans_visual),
        "spclust_visual": ("SpClust, visual cosine 20-NN", _graph_spectral("visual")),
        "spclust_tags": ("SpClust, observed tags cosine 20-NN", _graph_spectral("tags")),
        "hmlrf": ("HML-RF recommended (defaults)", _hml(cfg)),
        "hmlrf_forest": ("HML-RF recommended forest, no tag graph", _hml(cfg, tag_weight=0.0)),
        "hmlrf_flat": ("HML-RF recommended, FlatTags", _hml(cfg, hierarchy=False)),
        "hmlrf_paper": ("HML-RF as in the paper", _hml(cfg, **PAPER_CLUSTERING)),
        "hmlrf_paper_flat": ("HML-RF(FlatTags) as in the paper", _hml(cfg, hierarchy=False, **PAPER_CLUSTERING)),
        "hmlrf_paper_nocorr": ("HML-RF(NoCorr) as in the paper",
                               _hml(cfg, correlations=False, **PAPER_CLUSTERING)),
    }


def clustering_study(data, cfg, rows=None, progress=True):
    """``score(row, sparseness, metric, fold)`` and ``largest(row, sparseness,
    fold)``: the size of the largest cluster; ``hub`` flags a cluster over
    ``HUB_RATIO`` times the largest true group."""
    from ..data import remove_tags

    rows = clustering_rows(cfg) if rows is None else rows
    names = list(rows)
    rates = list(cfg["sparseness"])
    seeds = cfg.seeds()
    k = data.n_groups
    score = np.full((len(names), len(rates), len(METRICS), len(seeds)), np.nan)
    largest = np.full((len(names), len(rates), len(seeds)), np.nan)
    for f, s in enumerate(seeds):
        for r, rate in enumerate(rates):
            d = remove_tags(data, rate, random_state=s) if rate else data
            for i, name in enumerate(names):
                t0 = time.time()
                labels = np.asarray(rows[name][1](d, k, s))
                sc = _clustering_scores(data.groups, labels)
                score[i, r, :, f] = [sc[m] for m in METRICS]
                largest[i, r, f] = np.bincount(labels).max()
                if progress:
                    print(f"  seed={s} removed={rate:.2f} {name:<20s} NMI={sc['nmi']:.3f} "
                          f"largest={int(largest[i, r, f])} ({time.time() - t0:.1f}s)", flush=True)
    true_max = int(np.bincount(np.asarray(data.groups)).max())
    return xr.Dataset(
        {"score": (("row", "sparseness", "metric", "fold"), score),
         "largest": (("row", "sparseness", "fold"), largest),
         "hub": (("row", "sparseness", "fold"), largest > HUB_RATIO * true_max)},
        coords={"row": names, "label": ("row", [rows[n][0] for n in names]), "sparseness": rates,
                "metric": list(METRICS), "fold": np.arange(len(seeds))},
        attrs={"largest_true_group": true_max, "hub_factor": HUB_RATIO},
    )


def completion_rows(cfg):
    """{row: (label, callable(observed) -> (n, m) scores)}."""
    from ..complete import HMLTagCompleter, cooccurrence_scores

    def hml(**variant):
        def run(obs, seed):
            return HMLTagCompleter("AM", random_state=seed, **cfg.forest_params, **variant).fit(
                obs.X, obs.Y, obs.layers).predict_scores()
        return run

    def tag_knn(obs, seed):
        from ..affinity import cosine_knn_graph

        W = cosine_knn_graph(obs.Y, 20)
        return (W @ obs.Y.astype(np.float64)).toarray()

    def registry(key):
        def run(obs, seed):
            from ..baselines import registry as reg

            est = reg()[key].factory()
            if "random_state" in est.get_params():
                est.set_params(random_state=seed)
            est.fit(obs.X, obs.Y)
            return est.predict_scores()
        return run

    return {
        "cooccurrence": ("Tag co-occurrence", lambda obs, seed: cooccurrence_scores(obs.Y)),
        "tag_knn": ("Tag kNN (cosine 20-NN vote)", tag_knn),
        "lsr": ("LSR", registry("lsr")),
        "tcmr": ("TCMR", registry("tcmr")),
        "hmlrf": ("HML-RF recommended (co-occurrence x forest lift)", hml()),
        "hmlrf_am_forest": ("HML-RF(AM), recommended forest, no correlations", hml(lift_exponent=None)),
        "hmlrf_am_paper": ("HML-RF(AM) as in the paper", hml(**PAPER_COMPLETION)),
    }


def completion_study(datasets, cfg, rows=None, hidden_fraction=0.4, progress=True):
    """``score(dataset, row, measure, N, fold)`` at ``hidden_fraction`` hidden."""
    from ..data import hide_tags
    from ..metrics import completion_scores

    rows = completion_rows(cfg) if rows is None else rows
    names, keys, seeds = list(datasets), list(rows), cfg.seeds()
    meas, ns = list(pv.COMPLETION_MEASURES), list(pv.COMPLETION_N)
    score = np.full((len(names), len(keys), len(meas), len(ns), len(seeds)), np.nan)
    for a, name in enumerate(names):
        for f, s in enumerate(seeds):
            obs, hidden = hide_tags(datasets[name], frac=hidden_fraction, random_state=s)
            for b, key in enumerate(keys):
                t0 = time.time()
                res = completion_scores(np.asarray(rows[key][1](obs, s), dtype=float), obs.Y, hidden, N=ns)
                for c, m in enumerate(meas):
                    score[a, b, c, :, f] = [res[f"{m}@{n}"] for n in ns]
                if progress:
                    print(f"  {name:<9s} seed={s} {key:<16s} AP@1={score[a, b, 0, 0, f]:.3f} "
                          f"({time.time() - t0:.1f}s)", flush=True)
    return xr.Dataset(
        {"completion": (("dataset", "crow", "measure", "N", "fold"), score)},
        coords={"dataset": names, "crow": keys, "clabel": ("crow", [rows[k][0] for k in keys]),
                "measure": meas, "N": ns},
    )


def table(ds):
    """Mean NMI per row and rate (clustering) as a DataFrame, hubs marked *."""
    nmi = ds["score"].sel(metric="nmi").mean("fold").to_pandas().round(3)
    hub = ds["hub"].any("fold").to_pandas()
    return nmi.astype(str).where(~hub, nmi.astype(str) + "*")


def completion_table(ds):
    return ds["completion"].sel(measure="AP", N=1).mean("fold").to_pandas().T.round(3)


def plot(ds):
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    nmi = ds["score"].sel(metric="nmi")
    styles = {"spclust_tags": ("k", "--"), "kmeans_visual": ("0.5", ":"), "spclust_visual": ("0.5", "-."),
              "hmlrf": ("C3", "-"), "hmlrf_paper": ("C0", "-")}
    for row in ds.row.values:
        c, ls = styles.get(str(row), (None, "-"))
        m = nmi.sel(row=row)
        lw = 2.4 if row in ("hmlrf", "hmlrf_paper", "spclust_tags") else 1.0
        ax1.errorbar(100 * ds.sparseness.values, m.mean("fold"), yerr=m.std("fold"), color=c, ls=ls, lw=lw,
                     marker="o", ms=3, capsize=2, label=str(ds.label.sel(row=row).values))
        hubs = ds["hub"].sel(row=row).any("fold").values
        if hubs.any():
            ax1.plot(100 * ds.sparseness.values[hubs], m.mean("fold").values[hubs], "x", color="red", ms=10)
    ax1.set_xlabel("tags removed (%)")
    ax1.set_ylabel("NMI against the 50 Corel CDs")
    ax1.set_title("Corel5k clustering (red x: a cluster > 3x the largest true group)")
    ax1.legend(fontsize=7, loc="upper right")
    ax1.grid(alpha=0.3)
    if "completion" in ds:
        ap = ds["completion"].sel(measure="AP", N=1).mean("fold")
        names = [str(x) for x in ds.clabel.values]
        y = np.arange(len(names))
        h = 0.8 / ap.sizes["dataset"]
        for j, dname in enumerate(ds.dataset.values):
            ax2.barh(y + j * h, ap.sel(dataset=dname), height=h, label=str(dname))
        ax2.set_yticks(y + 0.4 - h / 2)
        ax2.set_yticklabels(names, fontsize=7)
        ax2.set_xlabel("AP@1, 40 % of tags hidden")
        ax2.set_title("Tag completion")
        ax2.legend(fontsize=8)
        ax2.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig
