"""Figs 4, 7, 9: example clusters (the purest, the largest and the least pure, members drawn
at random) and tag completions (drawn at random, seeded), never picked for looks."""
from __future__ import annotations

import numpy as np
import xarray as xr

from ..complete import HMLTagCompleter
from ..data import hide_tags
from ..metrics import completion_scores
from .cells import Cell, run_cells
from .config import SCORE_METRICS
from .data import load_data, sparsify, with_layers
from .grids import cell_cost, clustering_scores
from .methods import hmlrf_labels

def _tags_of(Y, i, names, limit=8):
    idx = Y.indices[Y.indptr[i]:Y.indptr[i + 1]]
    return ", ".join(names[j] for j in idx[:limit]) + (" ..." if len(idx) > limit else "")


def _chosen_clusters(labels, groups, n_clusters, rng):
    """The clusters shown: the purest, the largest and the least pure (of clusters with at
    least 2 members), then random others -- the worst beside the best, never picked for
    looks. Returns [(cluster, role)]."""
    sizes = np.bincount(labels)
    eligible = np.flatnonzero(sizes >= 2)
    if eligible.size == 0:
        eligible = np.flatnonzero(sizes >= 1)
    purity = np.array([np.bincount(groups[labels == c]).max() / sizes[c] for c in eligible])
    picks = [(eligible[np.lexsort((-sizes[eligible], -purity))[0]], "purest"),
             (eligible[np.argmax(sizes[eligible])], "largest"),
             (eligible[np.lexsort((-sizes[eligible], purity))[0]], "least pure")]
    out, seen = [], {}
    for c, role in picks:
        if c in seen:  # one cluster in two roles (the largest is the least pure): say both
            out[seen[c]] = (out[seen[c]][0], f"{out[seen[c]][1]} and {role}")
        else:
            seen[c] = len(out)
            out.append((int(c), role))
    rest = [c for c in eligible if c not in seen]
    for c in rng.permutation(rest)[:max(0, n_clusters - len(out))]:
        out.append((int(c), "random"))
    return out[:n_clusters]


def cluster_examples(data, labels, n_clusters=3, n_members=6, random_state=0):
    """Figs 4, 7: a few discovered clusters (the purest, the largest, the least pure) with
    some members' observed tags, drawn at random; a member is 'inconsistent' (red box in the
    paper) when its true group is not its cluster's dominant one. Returns (member tags,
    consistent, purity, role, size, top tags of the cluster)."""
    rng = np.random.default_rng(random_state)
    labels = np.asarray(labels)
    tags = np.full((n_clusters, n_members), "", dtype=object)
    consistent = np.full((n_clusters, n_members), -1, dtype=np.int8)
    purity = np.full(n_clusters, np.nan)
    role, top = np.full(n_clusters, "", dtype=object), np.full(n_clusters, "", dtype=object)
    size = np.zeros(n_clusters, dtype=np.int64)
    Y = data.Y.tocsr()
    for a, (c, r) in enumerate(_chosen_clusters(labels, data.groups, n_clusters, rng)):
        members = np.flatnonzero(labels == c)
        dom = np.bincount(data.groups[members]).argmax()
        purity[a], role[a], size[a] = float(np.mean(data.groups[members] == dom)), r, members.size
        freq = np.asarray(Y[members].sum(axis=0)).ravel() / members.size
        top[a] = ", ".join(f"{data.tag_names[j]} {freq[j]:.0%}" for j in np.argsort(-freq, kind="stable")[:4]
                           if freq[j] > 0) or "(no tags)"
        pick = np.sort(rng.choice(members, size=min(n_members, members.size), replace=False))
        for b, i in enumerate(pick):
            tags[a, b] = _tags_of(data.Y, i, data.tag_names, limit=5) or "(no tags)"
            consistent[a, b] = int(data.groups[i] == dom)
    return tags.astype(str), consistent, purity, role.astype(str), size, top.astype(str)


def completion_examples(data, scores, observed, hidden, n_examples=9, top=3, random_state=0):
    """Fig 9: observed tags, hidden ground truth and the top-3 predicted tags of samples with
    hidden tags (drawn at random, not picked for success); ``hits`` = correct predictions."""
    rng = np.random.default_rng(random_state)
    cand = np.flatnonzero(np.diff(hidden.indptr) > 0)
    pick = np.sort(rng.choice(cand, size=min(n_examples, cand.size), replace=False)) if cand.size else []
    obs = np.full(n_examples, "", dtype=object)
    gt, pred = obs.copy(), obs.copy()
    hits = np.full(n_examples, -1, dtype=np.int64)
    for a, i in enumerate(pick):
        order = np.argsort(-scores[i], kind="stable")[:top]
        truth = set(hidden.indices[hidden.indptr[i]:hidden.indptr[i + 1]].tolist())
        obs[a] = _tags_of(observed.Y, i, data.tag_names) or "(none)"
        gt[a] = ", ".join(data.tag_names[j] for j in sorted(truth))
        pred[a] = ", ".join(("*" if j in truth else "") + data.tag_names[j] for j in order)
        hits[a] = sum(int(j in truth) for j in order)
    return obs.astype(str), gt.astype(str), pred.astype(str), hits


def _cluster_cell(datasets, fname, seed, forest_params, n_cl, n_mem):
    """One figure's HML-RF clustering and its example clusters, as plain lists."""
    d = datasets[fname]
    labels = hmlrf_labels(d, d.n_groups, seed, forest_params)
    ex = cluster_examples(d, labels, n_cl, n_mem, random_state=seed)
    return [clustering_scores(d.groups, labels)] + [np.asarray(a).tolist() for a in ex]


def _completion_cell(datasets, name, seed, forest_params, n_ex):
    """Fig 9 on one data set: HML-RF(AM)'s Coverage@3 and its example completions."""
    d = datasets[name]
    observed, hidden = hide_tags(d, frac=0.4, random_state=seed)
    model = HMLTagCompleter(method="AM", random_state=seed, **forest_params)
    model.fit(observed.X, observed.Y, layers=observed.layers)
    scores = model.predict_scores()
    cov3 = completion_scores(scores, observed.Y, hidden, N=(3,))["Coverage@3"]
    return [float(cov3)] + [np.asarray(a).tolist() for a in completion_examples(d, scores, observed, hidden, n_ex,
                                                                                 random_state=seed)]


def examples_study(cfg, progress=True):
    """Figs 4, 7, 9 on the synthetic profiles (no images: the tags stand for the content).

    Fig 4: HML-RF clusters of ``nuswide`` (2 estimated layers); Fig 7: of ``trecvid`` with 50%
    of tags removed; Fig 9: HML-RF(AM) top-3 completions on both. Each of the four fits is a
    cell (:mod:`hmlkit.studies.cells`)."""
    n_cl, n_mem, n_ex = cfg["n_clusters_shown"], cfg["n_members_shown"], cfg["n_examples"]
    s = cfg.seed
    nus = with_layers(load_data("nuswide", cfg, random_state=s, groups=True), 2, random_state=s)
    trec = load_data("trecvid", cfg, random_state=s, groups=True)
    trec50 = sparsify(trec, 0.5, random_state=s)
    figs = {"fig4": nus, "fig7": trec50}
    ex = {"trecvid": trec, "nuswide": nus}
    fp = {**cfg.forest_params, "n_jobs": 1}  # one thread a cell: the cells run side by side
    fkey = {k: v for k, v in fp.items() if k != "n_jobs"}
    shared = {**figs, **ex}
    nmi = SCORE_METRICS.index("nmi")
    clus = run_cells(_cluster_cell, shared, [
        Cell({"figure": f, "seed": s, "forest": fkey, "shown": [n_cl, n_mem]}, (f, s, fp, n_cl, n_mem), f"  {f}:",
             cell_cost(d, "hmlrf", fp)) for f, d in figs.items()],
        n_jobs=cfg.n_jobs, desc="clusterings", progress=progress,
        describe=lambda c, r: c.label + f" NMI={r[0][nmi]:.3f}")
    comp = run_cells(_completion_cell, shared, [
        Cell({"dataset": n, "seed": s, "forest": fkey, "shown": n_ex}, (n, s, fp, n_ex), f"  fig9 {n}:",
             cell_cost(d, "hmlrf_am", fp)) for n, d in ex.items()],
        n_jobs=cfg.n_jobs, desc="completions", progress=progress,
        describe=lambda c, r: c.label + f" Coverage@3={r[0]:.3f}")
    overall = np.array([c[0] for c in clus], dtype=float)
    tags = np.array([c[1] for c in clus], dtype=object)
    cons = np.array([c[2] for c in clus], dtype=np.int8)
    pur = np.array([c[3] for c in clus], dtype=float)
    role = np.array([c[4] for c in clus], dtype=object)
    size = np.array([c[5] for c in clus], dtype=np.int64)
    top = np.array([c[6] for c in clus], dtype=object)
    cov3 = np.array([c[0] for c in comp], dtype=float)
    obs = np.array([c[1] for c in comp], dtype=object)
    gt = np.array([c[2] for c in comp], dtype=object)
    pred = np.array([c[3] for c in comp], dtype=object)
    hits = np.array([c[4] for c in comp], dtype=np.int64)
    return xr.Dataset(
        {"member_tags": (("figure", "cluster", "member"), tags.astype(str)),
         "member_consistent": (("figure", "cluster", "member"), cons),
         "cluster_purity": (("figure", "cluster"), pur),
         "cluster_role": (("figure", "cluster"), role.astype(str)),
         "cluster_size": (("figure", "cluster"), size),
         "cluster_top_tags": (("figure", "cluster"), top.astype(str)),
         "scores": (("figure", "metric"), overall),
         "observed_tags": (("example_dataset", "example"), obs.astype(str)),
         "hidden_tags": (("example_dataset", "example"), gt.astype(str)),
         "predicted_tags": (("example_dataset", "example"), pred.astype(str)),
         "hits": (("example_dataset", "example"), hits),
         "coverage3": (("example_dataset",), cov3)},
        coords={"figure": list(figs), "cluster": np.arange(n_cl), "member": np.arange(n_mem),
                "metric": list(SCORE_METRICS), "example_dataset": list(ex), "example": np.arange(n_ex)})

