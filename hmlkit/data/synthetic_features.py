"""The visual features of the synthetic profiles (:mod:`hmlkit.data.synthetic`): bag-of-words
histograms (``trecvid``) and CNN-like dense features (``nuswide``) drawn from each sample's
group and true tags."""
from __future__ import annotations

import numpy as np


def _histogram_features(p, w_rng, groups, super_of, Y_true, salience, rng):
    """Bag-of-visual-words histograms (float32, rows sum to 1)."""
    V = p["n_features"]
    G, m = p["n_groups"], p["n_tags"]
    # world-level word distributions (drawn from the world rng for stability)
    bg = w_rng.gamma(0.5, size=V)
    bg /= bg.sum()

    def sparse_dists(k, support):
        support = min(support, V)  # a small n_features: every bin
        D = np.zeros((k, V))
        for i in range(k):
            idx = w_rng.choice(V, size=support, replace=False)
            D[i, idx] = w_rng.gamma(1.0, size=support)
        return D / D.sum(1, keepdims=True)

    styles = sparse_dists(p["n_styles"], 150)
    phi_g = sparse_dists(G, 80)
    phi_t = sparse_dists(m, 25)
    # groups of one super-group look alike (a wedding and a birthday party): a share
    # sibling_look of a group's own look is its super-group's
    sib = p["sibling_look"]
    phi_g = sib * sparse_dists(p["n_super"], 80)[super_of] + (1.0 - sib) * phi_g

    noise = p["noise"]
    n = groups.size
    style = rng.integers(0, p["n_styles"], size=n)
    style_w = rng.uniform(0.3, 0.7, size=n)  # nuisance share of the noise mass
    # the true tags' looks, weighted by how visible each tag is
    Yt = Y_true * salience[None, :]
    deg = Yt.sum(1, keepdims=True)
    tag_mix = np.where(deg > 0, (Yt / np.maximum(deg, 1e-12)) @ phi_t, phi_g[groups])
    # per-sample signal strength (mean 1 - noise): typical and atypical videos
    signal = (1.0 - noise) * rng.beta(2.0, 2.0, size=n) * 2.0
    signal = np.minimum(signal, 1.0)[:, None]
    rest = 1.0 - signal
    P = (
        rest * (1 - style_w)[:, None] * bg
        + rest * style_w[:, None] * styles[style]
        + signal * p["group_share"] * phi_g[groups]
        + signal * (1.0 - p["group_share"]) * tag_mix
    )
    P /= P.sum(1, keepdims=True)
    n_words = np.maximum(20, rng.lognormal(np.log(p["n_words"]), 0.5, size=n)).astype(np.int64)
    counts = rng.multinomial(n_words, P)
    X = counts.astype(np.float32)
    X /= X.sum(1, keepdims=True)
    return X


def _cnn_features(p, w_rng, groups, super_of, Y_true, salience, rng, chunk=2048):
    """CNN-like non-negative sparse activations relu(z W + b + sigma*eps), float32."""
    d, L = p["n_features"], p["latent_dim"]
    G, m = p["n_groups"], p["n_tags"]
    f32 = np.float32
    # sparse-ish loadings: each unit is driven by a few latent factors, as
    # fc-layer units are selective for a few visual concepts
    mask = w_rng.random((L, d)) < p["unit_selectivity"]
    W = np.where(mask, w_rng.standard_normal((L, d), dtype=f32), f32(0.0))
    W /= np.maximum(np.sqrt((W * W).sum(0, keepdims=True)), f32(1e-6))  # unit-norm columns
    b = (w_rng.normal(-0.6, 0.3, size=d)).astype(f32)  # negative bias: ~70 % units off

    def sparse_embed(k, active):
        # each group / tag is a few latent visual concepts (same expected norm as dense)
        E = np.zeros((k, L), dtype=f32)
        for i in range(k):
            E[i, w_rng.choice(L, size=active, replace=False)] = w_rng.standard_normal(active) * np.sqrt(L / active)
        return E

    e_g = sparse_embed(G, p["concepts_per_group"])
    e_t = sparse_embed(m, p["concepts_per_tag"])
    e_s = w_rng.standard_normal((p["n_styles"], L), dtype=f32)
    # groups of one super-group look alike: a share sibling_look of a group's look (in
    # variance) is its super-group's
    sib = p["sibling_look"]
    e_sup = sparse_embed(p["n_super"], p["concepts_per_group"])
    e_g = (np.sqrt(sib) * e_sup[super_of] + np.sqrt(1.0 - sib) * e_g).astype(f32)

    noise = p["noise"]
    n = groups.size
    # per-sample signal strength (mean 1 - noise): typical and atypical images
    signal = np.minimum((1.0 - noise) * rng.beta(2.0, 2.0, size=n) * 2.0, 1.0).astype(f32)[:, None]
    rest = 1.0 - signal
    style = rng.integers(0, p["n_styles"], size=n)
    # salience-weighted sum of the true tags' embeddings, scaled to unit variance
    Yt = Y_true * salience.astype(f32)[None, :]
    norm = np.sqrt((Yt * Yt).sum(1, keepdims=True))
    tag_emb = (Yt @ e_t) / np.maximum(norm, f32(1e-6))
    z = (
        signal * f32(p["group_share"]) * e_g[groups]
        + signal * f32(1.0 - p["group_share"]) * tag_emb
        + rest * f32(0.6) * e_s[style]
        + rest * f32(0.8) * rng.standard_normal((n, L), dtype=f32)
    ).astype(f32)
    X = np.empty((n, d), dtype=f32)
    sigma = f32(0.5 * noise)
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        blk = z[s:e] @ W
        blk += b
        blk += sigma * rng.standard_normal((e - s, d), dtype=f32)
        np.maximum(blk, 0, out=blk)
        X[s:e] = blk
    return X
