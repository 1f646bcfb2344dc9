"""A completion probe: which evidence could lift the recommended completer's AP@1 at
40 % hidden (Corel5k 0.399, Corel16k 0.367 at 100 trees) toward 0.42 / 0.40.

    python tools/probe_completion_sources.py [--datasets corel5k,corel16k] [--seeds 0,1,2] [--logistic] [--oracle]

Per data set, AP@1 (mean over the hiding seeds, then each seed) of the lift product
(``complete.lift_product_scores``: tag co-occurrence times a neighbourhood vote's smoothed
lift to the power a) with the vote taken from:

- ``oob``: the recommended completer's out-of-bag forest neighbours (``HMLTagCompleter``'s
  default; ``oob_a0.5`` is the recommended row);
- ``fused_ct0`` / ``fused_ct1``: the graph ``HMLClustering`` clusters (forest kNN graph fused
  with the tag graph; ct1 with ``complete_tags``), its diagonal dropped;
- ``tagknn``: the cosine 20-NN graph of the observed tags;

each alone (``_alone``) and in the product at a = 0.5 and 1.0; and naive Bayes on the
observed tags (``nb{beta}``: log P(j) + sum of the smoothed PMI of the sample's tags with j,
alone and plus a times the log lift of the oob vote). ``ease{lambda}`` / ``dlae{p}``: the
tag-to-tag linear autoencoders of recommender systems in place of co-occurrence (Steck
2019's EASE: ridge regression of each tag on the others, zero diagonal; 2020's emphasised
denoising form, the ridge of each tag being its own count times p / (1 - p), p the share
dropped), alone and in the product at a = 0.5 (``_a0.5``, the oob vote's lift). ``--oracle``
adds ``oracle_lr``: a logistic regression over seven of these scores per (sample, unobserved
tag) fitted on the hidden tags themselves, so an upper bound on any combination of them that
a pointwise model can learn (a few seconds a seed). ``--logistic`` adds per-tag logistic
regression (scikit-learn, liblinear, C = 1) on the sample's other observed tags
(``lr_tags``) and on those plus the LSA map of its features (``lr_both``): about 80 s a seed
on Corel5k.

Measured at cb89ed5 (seeds 0-2), Corel5k / Corel16k: oob_a0.5 0.399 / 0.367, fused_ct1_a0.5
0.401 / 0.370, fused_ct1_alone 0.393 / 0.366, fused_ct0_a0.5 0.395 / 0.363, tagknn_a0.5 0.373 /
0.348, every a = 1.0 row lower, nb1.0_lift0.5 0.384 / 0.359, nb0.1 0.372 / 0.356; with
``--logistic --datasets corel5k`` lr_tags 0.060, lr_both 0.064: nothing within 0.015 of the
targets. At 6b2a99f (seeds 0-2), Corel5k / Corel16k: ease10_a0.5 0.4020 / 0.3718 and dlae0.4_a0.5
0.3982 / 0.3704 against oob_a0.5 0.3988 / 0.3673; ease10 alone 0.3925 / 0.3595 (co-occurrence
alone: 0.387 / 0.356); ``--oracle`` 0.3949 / 0.3665: fitted on the very tags it is scored on, the
best pointwise combination of these scores is no better than the product.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

from hmlkit import HMLClustering
from hmlkit.affinity import cosine_knn_graph
from hmlkit.complete import (LIFT_SMOOTHING, HMLTagCompleter, conditional_cooccurrence, lift_product_scores,
                             rank_observed_last, tag_prior)
from hmlkit.data import hide_tags, load_dataset
from hmlkit.metrics import completion_scores


def ap1(S, obs, hidden):
    return completion_scores(rank_observed_last(S, obs.Y), obs.Y, hidden, N=(1,))["AP@1"]


def naive_bayes(Y, vote):
    """{name: scores}: log P(j) + sum_i y_i log(P(j | i) / P(j)), P(j | i) smoothed toward the
    prior with weight beta; alone and plus a log(lift) of ``vote``."""
    n = Y.shape[0]
    Yf = Y.astype(float)
    co = (Yf.T @ Yf).toarray()
    occ = np.diag(co).copy()
    np.fill_diagonal(co, 0)
    prior, per = tag_prior(Y), Y.nnz / n
    total = vote.sum(1, keepdims=True)
    v = np.divide(vote, total, out=np.zeros_like(vote), where=total > 0) * per
    log_lift = np.log((v + LIFT_SMOOTHING * prior) / ((1 + LIFT_SMOOTHING) * prior))
    untagged = np.diff(Y.indptr) == 0
    out = {}
    for beta in (0.1, 1.0):
        pmi = np.log((co + beta * prior[None, :]) / (occ[:, None] + beta)) - np.log(prior)[None, :]
        nb = np.log(prior)[None, :] + np.asarray(Yf @ pmi)
        out[f"nb{beta}"] = nb
        out[f"nb{beta}_lift0.5"] = nb + 0.5 * log_lift
    for S in out.values():
        S[untagged] = vote[untagged]
    return out


def linear_autoencoder(Y, ridge, dropout=None):
    """Scores Y B of a tag-to-tag linear autoencoder with zero diagonal: B = I - P / diag(P),
    P = (Y'Y + Lambda)^-1, Lambda = ``ridge`` I (EASE) or, with ``dropout`` p, the denoising
    form's p / (1 - p) diag(Y'Y) + ``ridge`` I."""
    Yf = Y.astype(float)
    G = (Yf.T @ Yf).toarray()
    lam = np.full(G.shape[0], float(ridge))
    if dropout is not None:
        lam += dropout / (1.0 - dropout) * np.diag(G)
    P = np.linalg.inv(G + np.diag(lam))
    B = -P / np.diag(P)[None, :]
    np.fill_diagonal(B, 0.0)
    return np.asarray(Yf @ B)


def smoothed_lift(vote, prior, per):
    """The lift of ``complete.lift_product_scores``: each row's vote rescaled to ``per`` tags,
    over the prior, smoothed toward 1."""
    s = vote.sum(1, keepdims=True)
    v = np.divide(vote, s, out=np.zeros_like(vote), where=s > 0) * per
    return (v + LIFT_SMOOTHING * prior) / ((1 + LIFT_SMOOTHING) * prior)


def oracle_combination(Y, hidden, scores, vote, tagknn, prior, per):
    """AP@1 scores of a logistic regression over seven scores per (tagged sample, unobserved
    tag), fitted on ``hidden`` itself (an upper bound on what a learned pointwise
    combination of them can do); untagged samples keep the product."""
    from sklearn.linear_model import LogisticRegression

    Yd = Y.toarray() > 0
    P = conditional_cooccurrence(Y)
    cooc = np.asarray(Y.astype(float) @ P)
    most = np.zeros_like(cooc)  # max_i P(j | i) over the sample's tags
    for i in range(Y.shape[0]):
        t = Y.indices[Y.indptr[i]:Y.indptr[i + 1]]
        if t.size:
            most[i] = P[t].max(0)

    feats = [np.log(cooc + 1e-4), np.log(most + 1e-4), linear_autoencoder(Y, 10.0),
             np.log(smoothed_lift(vote, prior, per)), np.log(smoothed_lift(tagknn, prior, per)), np.broadcast_to(np.log(prior), cooc.shape), np.log(scores + 1e-6)]
    tagged = np.diff(Y.indptr) > 0
    mask = ~Yd & tagged[:, None]
    F = np.stack([f[mask] for f in feats], 1)
    lr = LogisticRegression(C=1.0, max_iter=2000).fit(F, hidden.toarray()[mask] > 0)
    out = np.full(cooc.shape, -1e9)
    out[mask] = lr.decision_function(F)
    out[~tagged] = scores[~tagged] - 1e6
    return out


def logistic(obs):
    """{name: scores} of one L2 logistic regression per tag on the other observed tags, and on
    those plus the LSA-mapped features (each row of unit length)."""
    from sklearn.linear_model import LogisticRegression

    from hmlkit.tokens import resolve_feature_map

    Yd = sp.csr_matrix(obs.Y).toarray().astype(float)
    fm = resolve_feature_map("auto", obs.X)
    Z = obs.X if fm is None else fm.transform(obs.X)
    Z = Z / np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1e-12)
    out = {"lr_tags": np.zeros_like(Yd), "lr_both": np.zeros_like(Yd)}
    for j in range(Yd.shape[1]):
        if Yd[:, j].sum() < 2:
            continue
        others = Yd.copy()
        others[:, j] = 0
        for name, F in (("lr_tags", others), ("lr_both", np.hstack([others, Z]))):
            out[name][:, j] = LogisticRegression(C=1.0, solver="liblinear").fit(F, Yd[:, j]).decision_function(F)
    return out


def probe(data, seed, trees, with_logistic=False, with_oracle=False):
    obs, hidden = hide_tags(data, frac=0.4, random_state=seed)
    Y = sp.csr_matrix(obs.Y)
    Yf = Y.astype(float)
    P, prior, per = conditional_cooccurrence(Y), tag_prior(Y), Y.nnz / Y.shape[0]
    c = HMLTagCompleter("AM", random_state=seed, n_estimators=trees, lift_exponent=None).fit(obs.X, obs.Y, obs.layers)
    votes = {"oob": np.maximum(c.predict_scores(), 0)}
    for ct in (False, True):
        hc = HMLClustering(50, random_state=seed, n_estimators=trees, complete_tags=ct).fit(obs.X, obs.Y, obs.layers)
        A = hc.affinity_.tolil()
        A.setdiag(0)
        votes[f"fused_ct{int(ct)}"] = np.asarray((A.tocsr() @ Yf).todense())
    votes["tagknn"] = np.asarray((cosine_knn_graph(Y, 20) @ Yf).todense())
    out = {}
    for name, v in votes.items():
        for a in (0.5, 1.0):
            out[f"{name}_a{a}"] = ap1(lift_product_scores(v, Y, P, prior, per, a), obs, hidden)
        out[f"{name}_alone"] = ap1(v, obs, hidden)
    for name, S in naive_bayes(Y, votes["oob"]).items():
        out[name] = ap1(S, obs, hidden)
    untagged = np.diff(Y.indptr) == 0
    for name, E in (("ease10", linear_autoencoder(Y, 10.0)), ("dlae0.4", linear_autoencoder(Y, 1.0, 0.4))):
        out[name] = ap1(E, obs, hidden)
        S = np.maximum(E, 0) * smoothed_lift(votes["oob"], prior, per) ** 0.5
        S[untagged] = votes["oob"][untagged]
        out[f"{name}_a0.5"] = ap1(S, obs, hidden)
    if with_oracle:
        rec = lift_product_scores(votes["oob"], Y, P, prior, per, 0.5)
        out["oracle_lr"] = ap1(oracle_combination(Y, hidden, rec, votes["oob"], votes["tagknn"], prior, per),
                               obs, hidden)
    for name, S in (logistic(obs) if with_logistic else {}).items():
        out[name] = ap1(S, obs, hidden)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="corel5k,corel16k")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--logistic", action="store_true", help="add the per-tag logistic regressions (slow)")
    ap.add_argument("--oracle", action="store_true", help="add the combination fitted on the hidden tags")
    a = ap.parse_args(argv)
    for name in a.datasets.split(","):
        data = load_dataset(name)
        res = {}
        for seed in (int(s) for s in a.seeds.split(",")):
            t0 = time.time()
            for k, v in probe(data, seed, a.trees, a.logistic, a.oracle).items():
                res.setdefault(k, []).append(v)
            print(f"{name} seed {seed} ({time.time() - t0:.0f} s)", flush=True)
        for k, v in res.items():
            print(f"{name} {k:18s} AP@1 {np.mean(v):.4f} ({' '.join(f'{x:.3f}' for x in v)})", flush=True)


if __name__ == "__main__":
    main()
