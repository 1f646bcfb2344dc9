"""Seed study: M-HCRF (Jiang, Wu, Zhang, Tang, Lu, Zhuang, Pattern Recognit. Lett. 2015),
its Tables 1 and 3 on the synthetic ``trecvid`` profile (``studies/seed_mhcrf.ipynb``; the
methods are in :mod:`hmlkit.baselines.mhcrf` and :mod:`hmlkit.baselines.mhcrf_baselines`).

The protocol (:func:`concept_split`, :func:`f1_binary`, :func:`run_concept`) is the paper's
Table 1/3 set-up on a :class:`~hmlkit.data.TaggedData`: one concept at a time, one-vs-rest, a
training set of ``n_pos`` positives and ``n_neg`` negatives drawn at random (the Wikipedia
protocol of Sec. 3.1), every other sample for testing, F1 of the positive class.
"""
from __future__ import annotations

import numbers
import time

import numpy as np

from .._validation import check_random_state_seed
from ..baselines.mhcrf import MHCRF
from ..baselines.mhcrf_baselines import (
    CCACRF,
    CCASVM,
    CCAProjection,
    CRFBaseline,
    SVMBaseline,
    UniModalCRF,
)
from ..data import make_synthetic
from . import paper_values as pv
from .cells import Cell, run_cells
from .config import _check_int, seed_setup


def setup(profile="quick", seed=0, results_dir="results", figures_dir="figures", n_jobs=1, **overrides):
    """Checked settings of the study (:func:`mhcrf_study_config`) as a seed-study config
    (``n_jobs``: (concept, round) cells at once)."""
    params = mhcrf_study_config(profile, seed, **overrides)
    del params["profile"], params["seed"]  # fields of the config
    return seed_setup("seed_mhcrf", MHCRF_PROFILES, profile, seed, results_dir, figures_dir,
                      n_jobs=_check_int("n_jobs", n_jobs), **params)


def load(cfg):
    """The synthetic ``trecvid`` data of the run and its first ``n_concepts`` groups."""
    data = make_synthetic("trecvid", n_samples=cfg["n_samples"], random_state=cfg.seed)
    concepts = np.unique(data.groups)[: cfg["n_concepts"]]
    print(data.n_samples, "samples,", data.n_features, "visual features,", data.n_tags, "tags; concepts:",
          concepts.tolist())
    return data, concepts


def run(data, concepts, cfg):
    return run_mhcrf_study(data, concepts=concepts, n_rounds=cfg["n_rounds"], n_pos=cfg["n_pos"],
                           n_neg=cfg["n_neg"], n_pca=cfg["n_pca"], n_hidden=cfg["n_hidden"],
                           hidden_grid=cfg["hidden_grid"], mhcrf_params=cfg["mhcrf_params"], C_grid=cfg["C_grid"],
                           random_state=cfg.seed, progress=True, n_jobs=cfg["n_jobs"])


def print_wins(table, wins):
    """M-HCRF against each baseline (share of runs won, mean F1 difference, Wilcoxon p), and
    whether it is the best method on our data."""
    for m, w in wins.items():
        print(f"M-HCRF vs {m}: higher F1 in {w['share_mhcrf_higher']:.0%} of runs, mean F1 difference "
              f"{w['mean_diff']:+.4f} (paired Wilcoxon p = {w['p_wilcoxon']:.3g})")
    best = table["F1 mean (ours)"].idxmax()
    print("best method on our data:", best, "-> M-HCRF wins" if best == "mhcrf" else "-> M-HCRF does NOT win")
    return best


def hidden_table(ds):
    """Table 3: F1 of M-HCRF per number of hidden variables, ours beside the paper's."""
    import pandas as pd

    ours = ds["f1_hidden"].mean(("concept", "round")).to_pandas().rename("ours")
    paper = pd.DataFrame({k: dict(zip(pv.MHCRF_TABLE3["n_hidden"], pv.MHCRF_TABLE3[k])) for k in ("NUS", "Wiki")})
    return pd.concat([ours, paper], axis=1).round(4)


# --------------------------------------------------------------------------
# protocol of the paper's Tables 1 and 3
# --------------------------------------------------------------------------

def f1_binary(y_true, y_pred):
    """F1 of the positive class (1); 0 when there is no true or predicted positive."""
    y_true = np.asarray(y_true).astype(bool)
    y_pred = np.asarray(y_pred).astype(bool)
    tp = float(np.sum(y_true & y_pred))
    denom = float(y_true.sum() + y_pred.sum())
    return 2.0 * tp / denom if denom > 0 else 0.0


def concept_split(groups, concept, n_pos, n_neg, random_state=None):
    """Training / test indices for one concept, one-vs-rest.

    ``n_pos`` positives and ``n_neg`` negatives are drawn at random for
    training (fewer if the concept has fewer, keeping at least a quarter of
    each class for testing); every other sample is a test sample.
    """
    groups = np.asarray(groups)
    rng = np.random.default_rng(check_random_state_seed(random_state))
    pos = np.flatnonzero(groups == concept)
    neg = np.flatnonzero(groups != concept)
    if pos.size < 2 or neg.size < 2:
        raise ValueError(f"concept {concept!r} has {pos.size} positives and {neg.size} negatives; need >= 2 each")
    k_pos = int(min(n_pos, max(1, (3 * pos.size) // 4)))
    k_neg = int(min(n_neg, max(1, (3 * neg.size) // 4)))
    tr = np.concatenate([rng.choice(pos, k_pos, replace=False), rng.choice(neg, k_neg, replace=False)])
    mask = np.ones(groups.size, dtype=bool)
    mask[tr] = False
    return np.sort(tr), np.flatnonzero(mask)


def reduce_visual(X, n_components, random_state=None):
    """PCA of the visual features to ``n_components`` dims (unsupervised, fitted on all samples)."""
    from sklearn.decomposition import PCA

    X = np.asarray(X, dtype=np.float64)
    k = int(min(n_components, X.shape[0], X.shape[1]))
    return PCA(n_components=k, random_state=check_random_state_seed(random_state) % (2**32)).fit_transform(X)


def _fit_two_view(est, Xv, Xt, y, train, unlabeled):
    if unlabeled is not None and len(unlabeled) and isinstance(est, CCASVM):
        return est.fit(Xv[train], Xt[train], y[train], X_vis_unlabeled=Xv[unlabeled], X_tag_unlabeled=Xt[unlabeled])
    return est.fit(Xv[train], Xt[train], y[train])


def select_C(est, Xv, Xt, y, train, C_grid, n_folds=3, random_state=0, unlabeled=None):
    """Pick ``C`` from ``C_grid`` by stratified ``n_folds``-fold F1 on the training samples only.

    Ties go to the first (smallest, if sorted) value. Returns ``(best_C, mean F1 per C)``.
    """
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold

    train = np.asarray(train)
    yt = y[train]
    k = int(min(n_folds, np.bincount(yt).min()))
    if k < 2:
        raise ValueError("C selection needs at least 2 training samples of each class")
    skf = StratifiedKFold(n_splits=k, shuffle=True, random_state=check_random_state_seed(random_state) % (2**32))
    folds = list(skf.split(train, yt))
    scores = []
    for C in C_grid:
        f = []
        for itr, iva in folds:
            unl = train[iva] if unlabeled is None else np.concatenate([train[iva], unlabeled])
            e = _fit_two_view(clone(est).set_params(C=C), Xv, Xt, y, train[itr], unl if unlabeled is not None else None)
            f.append(f1_binary(y[train[iva]], e.predict(Xv[train[iva]], Xt[train[iva]])))
        scores.append(float(np.mean(f)))
    return C_grid[int(np.argmax(scores))], np.asarray(scores)


def run_concept(Xv, Xt, y, train, test, methods, unlabeled=None, C_grid=None, n_inner=3, random_state=0):
    """Fit every ``methods[name]`` (an unfitted two-view estimator); return ``name -> (F1, seconds, C)``.

    ``C_grid``: when given, each method's ``C`` is first chosen by inner
    cross-validation on the training samples (:func:`select_C`); the
    seconds include that selection. ``unlabeled`` (sample indices) are
    handed, without labels, to the estimators whose ``fit`` takes unlabeled
    views (CCA+SVM's unsupervised CCA).
    """
    out = {}
    for name, est in methods.items():
        t0 = time.perf_counter()
        if C_grid is not None:
            C, _ = select_C(est, Xv, Xt, y, train, tuple(C_grid), n_inner, random_state, unlabeled)
            est.set_params(C=C)
        _fit_two_view(est, Xv, Xt, y, train, unlabeled)
        pred = est.predict(Xv[test], Xt[test])
        out[name] = (f1_binary(y[test], pred), time.perf_counter() - t0, float(est.C))
    return out





_METHODS = ("mhcrf", "svm", "crf", "ccasvm", "ccacrf", "unimodal")


def _concept_cell(shared, c, ci, r, seed, proj, st):
    """One (concept, round) of the protocol: (training size, [(F1, seconds, C)] per method of
    Table 1, the same per hidden-state count of Table 3)."""
    Xv, Xt, groups = shared["Xv"], shared["Xt"], shared["groups"]
    y = (groups == c).astype(np.int64)
    s = seed + 7919 * r + int(ci)
    tr, te = concept_split(groups, c, st["n_pos"], st["n_neg"], random_state=s)
    mp, svm_C, k = st["mp"], st["svm_C"], st["cca_components"]
    C_grid = None if st["C_grid"] is None else tuple(st["C_grid"])
    est = {"mhcrf": MHCRF(n_hidden=st["n_hidden"], random_state=s, **mp),
           "svm": SVMBaseline(C=svm_C, random_state=s),
           "crf": CRFBaseline(C=svm_C, random_state=s),
           "ccasvm": CCASVM(n_components=k, C=svm_C, projection=proj, random_state=s),
           "ccacrf": CCACRF(n_components=k, C=svm_C, projection=proj, random_state=s),
           "unimodal": UniModalCRF(C=svm_C, random_state=s)}
    res = run_concept(Xv, Xt, y, tr, te, est, C_grid=C_grid, random_state=s)
    # Table 3 grid: the C chosen for the table's M-HCRF; the grid point equal to n_hidden is that
    # very model (same seed), reused
    mpc = dict(mp, C=res["mhcrf"][2])
    hres = run_concept(Xv, Xt, y, tr, te, {h: MHCRF(n_hidden=h, random_state=s, **mpc)
                                           for h in st["hidden_grid"] if h != st["n_hidden"]})
    hres[st["n_hidden"]] = res["mhcrf"]
    return [int(tr.size), [list(res[m]) for m in _METHODS], [list(hres[h]) for h in st["hidden_grid"]]]


def run_mhcrf_study(data, concepts=None, n_rounds=1, n_pos=150, n_neg=250, n_pca=20, n_hidden=3,
                    hidden_grid=(1, 2, 3, 5, 10), mhcrf_params=None, svm_C=1.0, cca_components=10,
                    cca_fit="all", C_grid=(0.01, 0.1, 1.0, 10.0, 100.0), random_state=0, progress=False, n_jobs=1):
    """The paper's Table 1 and Table 3 protocol on a :class:`~hmlkit.data.TaggedData` with ``groups``.

    For each concept (a ground-truth group, one-vs-rest) and round, a
    training set of ``n_pos`` positives / ``n_neg`` negatives is drawn
    (:func:`concept_split`), every other sample is tested. Visual view: ``X``
    reduced by PCA to ``n_pca`` dims (None = raw features); tag view: the
    observed tags ``Y`` (binary). Methods: M-HCRF with ``n_hidden`` hidden
    variables, SVM, CRF, CCA+SVM, CCA+CRF, uni-modal CRFs (Table 1); M-HCRF for each ``hidden_grid`` value
    (Table 3). Returns an ``xarray.Dataset`` with ``f1`` (method, concept,
    round), ``f1_hidden`` (n_hidden, concept, round) and fit times. Each (concept, round) is a
    cell (:mod:`hmlkit.studies.cells`), ``n_jobs`` at a time.

    Unsupervised steps see every sample's features, never a label: the PCA
    of the visual view, and with ``cca_fit="all"`` (default) the CCA of
    CCA+SVM (fitted on training + test views; an unregularised CCA fitted on
    a few hundred training samples of 100+ dims overfits badly). ``"train"``
    fits CCA on the training views only.

    ``C`` of every method (M-HCRF's ``δ²``, the SVMs' ``C``) is chosen from
    ``C_grid`` by 3-fold F1 on the training set (None: the fixed
    ``mhcrf_params["C"]`` / ``svm_C``); the Table 3 grid reuses the ``C``
    chosen for the Table 1 M-HCRF. The paper states no tuning; this keeps
    the comparison from hinging on one arbitrary ``C``.
    """
    import xarray as xr

    if data.groups is None:
        raise ValueError("data has no ground-truth groups: the concepts of the protocol")
    seed = check_random_state_seed(random_state)
    groups = np.asarray(data.groups)
    if concepts is None:
        concepts = np.unique(groups)
    concepts = np.asarray(concepts)
    unknown = np.setdiff1d(concepts, groups)
    if unknown.size:
        raise ValueError(f"unknown concept(s) {unknown.tolist()}: not among the data's groups")
    if cca_fit not in ("all", "train"):
        raise ValueError(f"cca_fit must be 'all' or 'train', got {cca_fit!r}")
    if not isinstance(n_rounds, numbers.Integral) or n_rounds < 1:
        raise ValueError(f"n_rounds must be a positive integer, got {n_rounds!r}")
    hidden_grid = tuple(int(h) for h in hidden_grid)
    if C_grid is not None:
        C_grid = tuple(float(c) for c in C_grid)
        if not C_grid or any(not np.isfinite(c) or c <= 0 for c in C_grid):
            raise ValueError(f"C_grid must be positive finite numbers, got {C_grid!r}")
    mp = dict(n_restarts=3, C=1.0, max_iter=200)
    mp.update(mhcrf_params or {})
    for h in (n_hidden,) + hidden_grid:
        MHCRF(n_hidden=h, **mp)._check_params()
    Xv = np.asarray(data.X, dtype=np.float64)
    if n_pca is not None:
        Xv = reduce_visual(Xv, n_pca, seed)
    Xt = data.Y.toarray().astype(np.float64)
    # with cca_fit="all" the CCA sees every sample's views (never a label): one fit serves every concept
    proj = CCAProjection(cca_components).fit(Xv, Xt) if cca_fit == "all" else None
    methods = _METHODS
    f1 = np.full((len(methods), concepts.size, n_rounds), np.nan)
    tm = np.full_like(f1, np.nan)
    csel = np.full_like(f1, np.nan)
    f1h = np.full((len(hidden_grid), concepts.size, n_rounds), np.nan)
    tmh = np.full_like(f1h, np.nan)
    n_train = np.zeros((concepts.size, n_rounds), dtype=np.int64)
    settings = {"n_pos": n_pos, "n_neg": n_neg, "n_hidden": n_hidden, "hidden_grid": list(hidden_grid), "mp": mp,
                "svm_C": float(svm_C), "cca_components": cca_components, "cca_fit": cca_fit,
                "C_grid": None if C_grid is None else list(C_grid)}
    cells = [Cell({**settings, "concept": int(c), "index": ci, "round": r, "seed": seed},
                  (int(c), ci, r, seed, proj, settings), f"  concept {c} round {r}:",
                  {"what": "mhcrf+svm+crf+cca", "n": int(Xv.shape[0]), "d": int(Xv.shape[1]), "m": int(Xt.shape[1]),
                   "trees": 0})
             for ci, c in enumerate(concepts) for r in range(n_rounds)]
    out = run_cells(_concept_cell, {"Xv": Xv, "Xt": Xt, "groups": groups}, cells, n_jobs=n_jobs,
                    desc="concepts x rounds", progress=progress,
                    describe=lambda cell, res: cell.label + " F1 " + ", ".join(
                        f"{k}={v[0]:.3f}" for k, v in zip(methods, res[1])))
    nan = float("nan")
    for (ci, r), (nt, res, hres) in zip([(ci, r) for ci in range(concepts.size) for r in range(n_rounds)], out):
        n_train[ci, r] = nt
        for mi in range(len(methods)):
            f1[mi, ci, r], tm[mi, ci, r], csel[mi, ci, r] = (nan if v is None else v for v in res[mi])
        for hi in range(len(hidden_grid)):
            f1h[hi, ci, r], tmh[hi, ci, r] = (nan if v is None else v for v in hres[hi][:2])
    ds = xr.Dataset(
        {"f1": (("method", "concept", "round"), f1), "fit_seconds": (("method", "concept", "round"), tm),
         "C_selected": (("method", "concept", "round"), csel),
         "f1_hidden": (("n_hidden", "concept", "round"), f1h),
         "fit_seconds_hidden": (("n_hidden", "concept", "round"), tmh),
         "n_train": (("concept", "round"), n_train),
         "paper_f1": (("paper_dataset", "method"),
                      np.array([[pv.MHCRF_TABLE1[d][m] for m in methods] for d in pv.MHCRF_TABLE1])),
         "paper_f1_hidden": (("paper_dataset_t3", "paper_n_hidden"),
                             np.array([pv.MHCRF_TABLE3[d] for d in ("NUS", "Wiki")]))},
        coords={"method": list(methods), "concept": concepts, "round": np.arange(n_rounds),
                "n_hidden": list(hidden_grid), "paper_dataset": list(pv.MHCRF_TABLE1),
                "paper_dataset_t3": ["NUS", "Wiki"], "paper_n_hidden": list(pv.MHCRF_TABLE3["n_hidden"])},
        attrs={"n_pos": n_pos, "n_neg": n_neg, "n_pca": -1 if n_pca is None else int(n_pca),
               "mhcrf_n_hidden": int(n_hidden), "mhcrf_params": repr(mp if C_grid is None else {k: v for k, v in mp.items() if k != "C"}), "svm_C": float(svm_C),
               "cca_components": int(cca_components), "cca_fit": cca_fit, "C_grid": "none" if C_grid is None else repr(tuple(C_grid)), "seed": seed, "n_samples": int(Xv.shape[0]),
               "n_tags": int(Xt.shape[1]), "data": str(getattr(data, "name", ""))},
    )
    return ds


# --------------------------------------------------------------------------
# the seed notebook's profiles, checks, summary and plot
# --------------------------------------------------------------------------

#: run sizes per notebook profile; "paper" follows Sec. 3.1 (5 rounds, Wiki's 150/250 training draw,
#: Table 3's hidden grid) on every concept of the synthetic trecvid profile
MHCRF_PROFILES = {
    "quick": dict(n_samples=600, n_concepts=3, n_rounds=1, n_pos=30, n_neg=60, n_pca=10, n_hidden=3,
                  hidden_grid=(1, 2, 3), mhcrf_params={"n_restarts": 1, "max_iter": 100},
                  C_grid=(0.1, 1.0, 10.0)),
    "standard": dict(n_samples=None, n_concepts=None, n_rounds=2, n_pos=150, n_neg=250, n_pca=20, n_hidden=3,
                     hidden_grid=(1, 2, 3, 5), mhcrf_params={"n_restarts": 3, "max_iter": 200},
                     C_grid=(0.01, 0.1, 1.0, 10.0, 100.0)),
    "paper": dict(n_samples=None, n_concepts=None, n_rounds=5, n_pos=150, n_neg=250, n_pca=20, n_hidden=3,
                  hidden_grid=(1, 2, 3, 5, 10), mhcrf_params={"n_restarts": 3, "max_iter": 300},
                  C_grid=(0.01, 0.1, 1.0, 10.0, 100.0)),
}


def mhcrf_study_config(profile="quick", seed=0, **overrides):
    """The settings of a profile with non-None ``overrides`` applied; fails at once on a bad value."""
    if profile not in MHCRF_PROFILES:
        raise ValueError(f"profile must be one of {sorted(MHCRF_PROFILES)}, got {profile!r}")
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    cfg = dict(MHCRF_PROFILES[profile])
    unknown = set(overrides) - set(cfg)
    if unknown:
        raise ValueError(f"unknown setting(s) {sorted(unknown)}; known: {sorted(cfg)}")
    cfg.update({k: v for k, v in overrides.items() if v is not None})
    for k in ("n_rounds", "n_pos", "n_neg", "n_hidden"):
        if not isinstance(cfg[k], numbers.Integral) or cfg[k] < 1:
            raise ValueError(f"{k} must be a positive integer, got {cfg[k]!r}")
    for k in ("n_samples", "n_concepts", "n_pca"):
        if cfg[k] is not None and (not isinstance(cfg[k], numbers.Integral) or cfg[k] < 1):
            raise ValueError(f"{k} must be None or a positive integer, got {cfg[k]!r}")
    grid = tuple(np.atleast_1d(cfg["hidden_grid"]).tolist())  # a single count is a one-value grid
    if not grid or any(not isinstance(h, numbers.Integral) or h < 1 for h in grid):
        raise ValueError(f"hidden_grid must be a non-empty list of positive integers, got {cfg['hidden_grid']!r}")
    for h in grid + (cfg["n_hidden"],):
        MHCRF(n_hidden=h)._check_params()
    cfg["hidden_grid"] = grid
    if cfg["C_grid"] is not None:
        cg = tuple(cfg["C_grid"])
        if not cg or any(not isinstance(c, numbers.Real) or not np.isfinite(c) or c <= 0 for c in cg):
            raise ValueError(f"C_grid must be None or a non-empty list of positive numbers, got {cfg['C_grid']!r}")
        cfg["C_grid"] = cg
    cfg["profile"], cfg["seed"] = profile, int(seed)
    return cfg


def mhcrf_study_summary(ds):
    """Mean ± std F1 per method beside the paper's Table 1, and how often M-HCRF wins.

    Returns ``(table, wins)``: ``table`` a pandas DataFrame (rows = methods),
    ``wins`` a dict: per baseline, the share of (concept, round) runs where
    M-HCRF's F1 is higher, the mean paired difference and the two-sided
    Wilcoxon signed-rank p-value of the paired runs (NaN with < 2 non-zero
    differences).
    """
    import pandas as pd

    f1 = ds["f1"]
    rows = {}
    for m in f1["method"].values:
        v = f1.sel({"method": m}).values.ravel()
        rows[str(m)] = {"F1 mean (ours)": v.mean(), "F1 std (ours)": v.std(),
                        **{f"paper {k}": pv.MHCRF_TABLE1[k][str(m)] for k in pv.MHCRF_TABLE1}}
    table = pd.DataFrame(rows).T
    ours = f1.sel({"method": "mhcrf"}).values.ravel()
    wins = {}
    for m in f1["method"].values:
        if m == "mhcrf":
            continue
        other = f1.sel({"method": m}).values.ravel()
        diff = ours - other
        if np.count_nonzero(diff) >= 2:
            from scipy.stats import wilcoxon

            p = float(wilcoxon(ours, other, zero_method="wilcox").pvalue)
        else:
            p = float("nan")
        wins[str(m)] = {"share_mhcrf_higher": float(np.mean(diff > 0)),
                        "share_tied": float(np.mean(diff == 0)),
                        "mean_diff": float(np.mean(diff)), "p_wilcoxon": p}
    return table, wins


def plot_mhcrf_study(ds):
    """Left: F1 per method (ours, mean ± std over concepts × rounds). Right: F1 vs hidden variables, ours
    beside the paper's Table 3 (NUS-WIDE, Wiki)."""
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    f1 = ds["f1"].values.reshape(ds.sizes["method"], -1)
    names = [str(m) for m in ds["method"].values]
    a.bar(names, f1.mean(1), yerr=f1.std(1), color=["tab:red"] + ["tab:gray"] * (len(names) - 1), capsize=4)
    a.tick_params(axis="x", labelrotation=30)
    a.set_ylabel("F1 (positive class)")
    a.set_title(f"one-vs-rest concepts ({ds.sizes['concept']} × {ds.sizes['round']} runs)")
    h = ds["n_hidden"].values
    fh = ds["f1_hidden"].values.reshape(len(h), -1)
    b.errorbar(h, fh.mean(1), yerr=fh.std(1), marker="o", color="tab:red", label="M-HCRF, ours", capsize=3)
    for k, st in (("NUS", "--"), ("Wiki", ":")):
        b.plot(pv.MHCRF_TABLE3["n_hidden"], pv.MHCRF_TABLE3[k], st, marker="s", color="gray", label=f"paper, {k}")
    b.set_xlabel("number of hidden variables")
    b.set_ylabel("F1")
    b.set_xticks(sorted(set(h.tolist()) | set(pv.MHCRF_TABLE3["n_hidden"])))
    b.legend(fontsize=8)
    b.set_title("Table 3: F1 vs hidden variables")
    fig.tight_layout()
    return fig
