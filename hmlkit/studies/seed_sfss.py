"""Seed study: SFSS (Ma, Yang, Nie, Uijlings, Sebe, ACM MM 2011), annotation MAP against
the share of labelled training images (its Tables 2-4 and Fig. 2), SFSS beside F-score +
RLS and FSNM (``studies/seed_sfss.ipynb``; the methods are in :mod:`hmlkit.baselines.sfss`).

The paper's claim: SFSS is best when 10 % or fewer of the training images are labelled.
"""
from __future__ import annotations

import time

import numpy as np

from .. import data as hd
from .._paths import corel16k_path
from .._validation import check_random_state_seed, check_X, check_Y
from ..baselines.sfss import FSNM, SFSS, FScoreRLS
from ..metrics import mean_average_precision
from . import paper_values as pv
from .cells import Cell, run_cells
from .config import _check_int, seed_setup
from .progress import Progress

# synthetic nuswide size and training size, PCA dims, Corel16k training size, grid, repeats
PROFILES = {
    "quick": dict(nuswide_n=900, nuswide_train=600, n_components=48, corel_train=500, grid=[1.0], repeats=1),
    "standard": dict(nuswide_n=6000, nuswide_train=4000, n_components=256, corel_train=1000,
                     grid=[0.1, 1.0, 10.0], repeats=3),
    "paper": dict(nuswide_n=None, nuswide_train=10000, n_components=345, corel_train=1000,
                  grid=[1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1e3], repeats=5),
}
DATASETS = ("nuswide", "corel16k")
SHARES = {"nuswide": [0.01, 0.05, 0.10, 0.25, 0.50, 1.0], "corel16k": [0.02, 0.05, 0.10, 0.25, 0.50, 1.0]}


def setup(profile="quick", seed=0, results_dir="results", figures_dir="figures", datasets=DATASETS, n_jobs=1):
    """Checked parameters of the study, with the profile's sizes, grid and repeats (``n_jobs``:
    fits at once, as cells)."""
    if isinstance(datasets, str) or not datasets or not set(datasets) <= set(DATASETS):
        raise ValueError(f"datasets must be a non-empty list drawn from {list(DATASETS)}, got {datasets!r}")
    cfg = seed_setup("seed_sfss", PROFILES, profile, seed, results_dir, figures_dir, datasets=list(datasets),
                     n_jobs=_check_int("n_jobs", n_jobs))
    cfg.params.update(PROFILES[profile])
    return cfg


def splits(cfg):
    """{data set: (X_train, Y_train, X_test, Y_test)}: synthetic ``nuswide`` (81 most frequent
    complete tags as labels, PCA) and the shared Corel16k file."""
    out = {}
    if "nuswide" in cfg["datasets"]:
        d = hd.make_synthetic("nuswide", n_samples=cfg["nuswide_n"], random_state=cfg.seed)
        out["nuswide"] = annotation_split(d.X, d.Y_true, cfg["nuswide_train"], n_labels=81,
                                          n_components=cfg["n_components"], random_state=cfg.seed)
    if "corel16k" in cfg["datasets"]:
        d = hd.load_arff(corel16k_path(), n_features=500)
        out["corel16k"] = annotation_split(d.X, d.Y, cfg["corel_train"], random_state=cfg.seed)
    return out


def run(splits, cfg, progress=True):
    """``(results, ds)``: the per-data-set results of :func:`label_share_study` and their
    concatenation along ``dataset`` (shares indexed by ``share_index``)."""
    import xarray as xr

    methods = method_grid(cfg["grid"], random_state=cfg.seed)
    bar = Progress(sum(cfg["repeats"] * len(SHARES[name]) * len(methods) for name in splits),
                   "data sets x repeats x shares x methods", enabled=progress)
    results, t0 = {}, time.time()
    for name, (Xtr, Ytr, Xte, Yte) in splits.items():
        results[name] = label_share_study(Xtr, Ytr, Xte, Yte, SHARES[name], methods,
                                          n_repeats=cfg["repeats"], random_state=cfg.seed,
                                          progress=lambda line, name=name: bar.step(f"  {name:<9s}{line}"),
                                          n_jobs=cfg["n_jobs"], cell_key={
                                              "dataset": name, "grid": [float(v) for v in cfg["grid"]],
                                              "seed": cfg.seed, "profile": {k: v for k, v in cfg.params.items()
                                                                            if k != "n_jobs"}})
    bar.close()
    ds = xr.concat([r.assign_coords(share_index=("share", np.arange(r.share.size))).swap_dims(share="share_index")
                    .rename(share="labelled_share").expand_dims(dataset=[k]) for k, r in results.items()], "dataset",
                   coords="different", compat="equals", combine_attrs="drop")
    # the paper's MAP (Tables 2-4) at its own shares, beside ours where the shares agree
    paper = np.full((ds.sizes["dataset"], ds.sizes["method"], ds.sizes["share_index"]), np.nan)
    for a, name in enumerate(ds["dataset"].values):
        table = pv.SFSS_MAP[pv.SFSS_PAPER_DATASET[str(name)]]
        shares = pv.SFSS_SHARES[pv.SFSS_PAPER_DATASET[str(name)]]
        for b, method in enumerate(ds["method"].values):
            for c, share in enumerate(ds["labelled_share"].sel(dataset=name).values):
                hit = [i for i, s in enumerate(shares) if np.isclose(s, share)]
                if str(method) in table and hit:
                    paper[a, b, c] = table[str(method)][hit[0]]
    ds["paper_map"] = (("dataset", "method", "share_index"), paper)
    ds.attrs.update(grid=str(cfg["grid"]), repeats=cfg["repeats"], study_seconds=round(time.time() - t0, 1),
                    protocol="SFSS paper Sec 4.3: MAP on the test set, best parameter setting per method")
    return results, ds


def map_table(ds):
    """Mean MAP over repeats, one column per method."""
    return ds["map"].mean("repeat").to_dataframe().unstack("method")["map"].round(3)


def plot(results):
    paper = {ours: (name, pv.SFSS_MAP[name]) for ours, name in pv.SFSS_PAPER_DATASET.items()}
    return plot_label_share(results, paper=paper)


def _share_cell(split, factories, lab):
    """One (repeat, share, method): the test MAP of each setting of the method's grid."""
    X_train, Y_train, X_test, Y_test = split
    return [float(mean_average_precision(f().fit(X_train, Y_train, labelled=np.asarray(lab, dtype=bool))
                                         .predict_scores(X_test), Y_test)) for f in factories]


def label_share_study(X_train, Y_train, X_test, Y_test, shares, methods, n_repeats=1, random_state=0,
                      progress=None, n_jobs=1, cell_key=None):
    """SFSS paper, Tables 2-4 / Fig 2: test MAP against the share of labelled
    training samples.

    ``methods``: name -> list of parameter-free factories (one per setting of
    its parameter grid); as in the paper (Sec 4.3) each method is scored with
    its best setting. Each repeat draws a new labelled subset (at least one
    sample) of the training set; the unlabelled rest is seen by the
    semi-supervised methods only. Returns an ``xarray.Dataset`` with
    ``map`` (method, share, repeat) and ``best_setting`` (index in the grid).
    ``progress``: called with a result line after each method's grid (e.g. a bar's ``step``).
    Each (repeat, share, method) is a cell (:mod:`hmlkit.studies.cells`), ``n_jobs`` at a
    time; with ``cell_key`` (JSON naming ``methods``' grids) finished cells are stored.
    """
    import xarray as xr

    X_train = check_X(X_train, dtype=np.float64)
    Y_train = check_Y(Y_train, n_samples=X_train.shape[0])
    X_test = check_X(X_test, dtype=np.float64)
    Y_test = check_Y(Y_test, n_samples=X_test.shape[0])
    shares = [float(s) for s in shares]
    if any(not 0.0 < s <= 1.0 for s in shares):
        raise ValueError(f"shares must lie in (0, 1], got {shares}")
    names = list(methods)
    n = X_train.shape[0]
    out = np.full((len(names), len(shares), n_repeats), np.nan)
    best = np.zeros(out.shape, dtype=np.int64)
    rng = np.random.default_rng(check_random_state_seed(random_state))
    at, cells = [], []
    for r in range(n_repeats):  # the labelled subsets, drawn in this order from one stream
        for si, share in enumerate(shares):
            lab = np.zeros(n, dtype=bool)
            lab[rng.permutation(n)[:max(1, int(round(share * n)))]] = True
            for mi, name in enumerate(names):
                at.append((mi, si, r))
                key = None if cell_key is None else {"grid": cell_key, "method": name, "labelled": np.flatnonzero(lab)}
                cells.append(Cell(key, (methods[name], lab), f" repeat={r} share={share:<5g} {name:<11s}",
                                  {"what": f"sfss/{name}", "n": int(n), "d": int(X_train.shape[1]),
                                   "m": int(Y_train.shape[1]), "trees": 0, "settings": len(methods[name])}))

    def line(cell, vals):
        if progress is not None:
            progress(f"{cell.label} MAP={max(vals):.3f}")

    results = run_cells(_share_cell, (X_train, Y_train, X_test, Y_test), cells, n_jobs=n_jobs,
                        desc="repeats x shares x methods", progress=False, describe=line)
    for (mi, si, r), vals in zip(at, results):
        best[mi, si, r] = int(np.argmax(vals))
        out[mi, si, r] = vals[best[mi, si, r]]
    return xr.Dataset(
        {"map": (("method", "share", "repeat"), out), "best_setting": (("method", "share", "repeat"), best)},
        coords={"method": names, "share": shares, "repeat": np.arange(n_repeats)},
        attrs={"metric": "annotation MAP on the test set", "n_train": n, "n_test": X_test.shape[0]},
    )


# Published MAP of the SFSS paper (Tables 2-4; share 1% for NUS-WIDE, 2% for
# Corel-5K in the first row), shown beside the reproduced curves.



def annotation_split(X, Y, n_train, n_labels=None, n_components=None, random_state=0):
    """The SFSS paper's split (Sec 4.3): a random training set of ``n_train``
    samples, the rest for testing. ``n_labels``: keep the most frequent
    labels only (NUS-WIDE's 81 concepts); ``n_components``: PCA of the
    features fitted on the training set (for wide CNN-like features; the
    paper's NUS-WIDE features are 3 descriptors of a few hundred dims).
    Returns ``X_train, Y_train, X_test, Y_test``."""
    from sklearn.decomposition import PCA

    X = check_X(X, dtype=np.float64)
    Y = check_Y(Y, n_samples=X.shape[0])
    n = X.shape[0]
    if not 1 <= int(n_train) < n:
        raise ValueError(f"n_train must lie in [1, {n}), got {n_train!r}")
    if n_labels is not None:
        if not 1 <= int(n_labels) <= Y.shape[1]:
            raise ValueError(f"n_labels must lie in [1, {Y.shape[1]}], got {n_labels!r}")
        keep = np.sort(np.argsort(-np.asarray(Y.sum(axis=0)).ravel(), kind="stable")[: int(n_labels)])
        Y = Y[:, keep]
    rng = np.random.default_rng(check_random_state_seed(random_state))
    perm = rng.permutation(n)
    tr, te = perm[: int(n_train)], perm[int(n_train):]
    Xtr, Xte = X[tr], X[te]
    if n_components is not None and int(n_components) < X.shape[1]:
        pca = PCA(n_components=int(n_components), random_state=int(rng.integers(2**31))).fit(Xtr)
        Xtr, Xte = pca.transform(Xtr), pca.transform(Xte)
    return Xtr, Y[tr], Xte, Y[te]


def plot_label_share(datasets, paper=None):
    """MAP against the labelled share, one panel per data set; the paper's
    points (Tables 2-4) as hollow markers of the same colour."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(datasets), figsize=(5 * len(datasets), 3.6), squeeze=False)
    for ax, (title, ds) in zip(axes[0], datasets.items()):
        for k, method in enumerate(ds.method.values):
            y = ds["map"].sel({"method": method}).mean("repeat")  # not sel(method=...): that is the lookup mode
            ax.plot(100 * ds.share.values, y.values, marker="o", color=f"C{k}", label=str(method))
            if paper and title in paper:
                name, vals = paper[title]
                if method in vals:
                    ax.plot(100 * np.asarray(pv.SFSS_SHARES[name]), vals[method], ls="", marker="o", mfc="none",
                            color=f"C{k}", label=f"{method} (paper, {name})")
        ax.set_xscale("log")
        ax.set_xlabel("labelled training images (%)")
        ax.set_ylabel("MAP")
        ax.set_title(title)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def method_grid(values, random_state=0):
    """Factories of SFSS, FScoreRLS and FSNM over a parameter grid (the
    paper tunes every parameter over {1e-3, ..., 1e3} and reports the best,
    Sec 4.3). SFSS takes ``mu = gamma = v`` (its Fig. 4: best when the two are
    comparable); FSNM ``gamma = alpha = v``; FScoreRLS ``alpha = v``."""
    values = [float(v) for v in values]
    if not values or any(v <= 0 for v in values):
        raise ValueError(f"grid values must be positive, got {values}")
    return {
        "sfss": [lambda v=v: SFSS(mu=v, gamma=v, random_state=random_state) for v in values],
        "fscore_rls": [lambda v=v: FScoreRLS(alpha=v) for v in values],
        "fsnm": [lambda v=v: FSNM(gamma=v, alpha=v) for v in values],
    }


def describe(splits):
    """{data set: (X_train shape, number of labels, number of test samples)}."""
    return {k: (v[0].shape, v[1].shape[1], v[2].shape[0]) for k, v in splits.items()}
