"""The soft sweep scores only the cuts that its step bound cannot rule out
(``sweep_soft``): it must return what scoring every cut returns."""
import numpy as np
import pytest
import scipy.sparse as sp
from _reference import split_gain

from hmlkit.forest import _criterion, _keys, _split
from hmlkit.forest._tagdata import build_tag_arrays


def _node(seed, n=240, lsz=12, d=10):
    """A soft node: the first layer's sweep state for all n samples."""
    rng = np.random.default_rng(seed)
    m = lsz + 5
    Y = (rng.random((n, m)) < 0.15).astype(np.uint8)
    Y[rng.random(n) < 0.3, :lsz] = 0  # missing in the first layer: soft
    pos = rng.random((n, m)).astype(np.float32) * (rng.random((n, m)) < 0.6)
    neg = rng.random((n, m)).astype(np.float32) * (rng.random((n, m)) < 0.6)
    X = np.where(rng.random((n, d)) < 0.6, 0.0, rng.integers(-3, 4, (n, d)) + rng.random((n, d)) * (seed % 2))
    X = X.astype(np.float32)
    tags = build_tag_arrays(sp.csr_matrix(Y), [np.arange(lsz), np.arange(lsz, m)], (pos, neg))
    R, mode_rank, *_ = _keys.feature_keys(X)
    samples = np.arange(n, dtype=np.int64)
    ws = _split._workspace(n, tags.n_layers, tags.layer_ptr, _split.tag_entries(samples, tags.ly_indptr),
                             _split.soft_rows(samples, tags.n_layers, tags.has_layer, True))
    cS, PS, MS, W, PL, ML, T = ws.cS, ws.PS, ws.MS, ws.W, ws.P_swept, ws.M_swept, ws.T
    nptr, ntag, nrow, slots, nsoft, wstep, wmiss = ws.nptr, ws.ntag, ws.nrow, ws.slots, ws.nsoft, ws.wstep, ws.wmiss
    k, soft_mode, imp, _, _, _, K = _split.target_layer(samples, 0, n, *tags.kernel_args(), cS, PS, MS, nptr, ntag,
                                                        nrow, slots, nsoft)
    assert k == 0 and soft_mode
    nlab, SW, C2, C1 = _criterion.soft_step_bounds(n, nptr, ntag, nrow, lsz, nsoft, PS, MS, W, wstep, wmiss)
    assert nlab == (nrow[:n] < 0).sum()
    margin = 1e-9 * (1.0 + imp + C1)

    def sweep(f, best0, margin, min_leaf):
        key = R[f].astype(np.uint32)
        keep = np.flatnonzero(key != mode_rank[f])
        o = keep[np.argsort(key[keep], kind="stable")]
        g0 = int((key[o] < mode_rank[f]).sum())
        return _criterion.sweep_soft(n, len(o), g0, o.astype(np.int64), key[o].copy(), nptr, ntag, nrow, slots, K,
                                     lsz, nsoft, PS, MS, W, PL, ML, T, min_leaf, imp, best0, float(nlab), wstep,
                                     wmiss, SW, C2, margin)

    return d, margin, sweep


@pytest.mark.parametrize("seed", range(4))
def test_pruned_soft_sweep_returns_the_exhaustive_best(seed):
    d, margin, sweep = _node(seed)
    for f in range(d):
        for min_leaf in (1, 3):
            g, nl = sweep(f, -1.0, np.inf, min_leaf)  # infinite margin: every cut scored
            assert nl > 0 and g > 0
            for best0 in (-1.0, 1e-12, 0.5 * g, g - 1e-6, g - 1e-12, g, g + 1e-6):
                gp, nlp = sweep(f, best0, margin, min_leaf)
                if g > best0:
                    assert (gp, nlp) == (g, nl), (f, min_leaf, best0)
                else:
                    assert nlp == -1 and gp == best0


def _bound(P, M, missing, left, x):
    """``soft_step_bound`` for moving row x (not in ``left``) into ``left``."""
    PS, MS = P.sum(0), M.sum(0)
    W = np.where(MS > 0, 2.0 / np.where(MS > 0, MS, 1.0), 0.0)
    if missing[x]:
        w, wm, wm2 = W @ P[x], W @ M[x], (W * PS * PS) @ M[x]
    else:
        w, wm, wm2 = W @ P[x], 0.0, 0.0
    nlabB = float((~missing & ~left).sum())
    return _criterion.soft_step_bound(bool(missing[x]), w, wm, wm2, nlabB, W.sum(), (W * PS * PS).sum())


def _check_moves(P, M, missing, left, xs):
    ratios = []
    for x in xs:
        moved = left.copy()
        moved[x] = True
        rise = split_gain(P, M, moved) - split_gain(P, M, left)
        b = _bound(P, M, missing, left, x)
        assert rise <= b * (1 + 1e-12) + 1e-12, (x, rise, b)
        ratios.append(rise / b)
    return max(ratios, default=0.0)


@pytest.mark.parametrize("seed", range(6))
def test_step_bound_holds_on_random_nodes(seed):
    """Labelled rows (0/1 tags, mass 1) and missing rows (soft y^+ <= mass):
    moving any row of B to A never raises the gain above the bound."""
    rng = np.random.default_rng(seed)
    n, lsz = [(40, 3), (80, 6), (25, 9)][seed % 3]
    missing = rng.random(n) < 0.3
    P = (rng.random((n, lsz)) < [0.05, 0.3, 0.7][seed % 3]).astype(float)
    M = np.ones((n, lsz))
    soft_pos = rng.random((missing.sum(), lsz)) * (rng.random((missing.sum(), lsz)) < 0.7)
    P[missing] = soft_pos
    M[missing] = soft_pos + rng.random((missing.sum(), lsz)) * (rng.random((missing.sum(), lsz)) < 0.5)
    for _ in range(5):
        left = rng.random(n) < rng.random()
        _check_moves(P, M, missing, left, np.flatnonzero(~left))


def test_step_bound_is_nearly_tight_where_it_should_be():
    """Three moves for which the bound is within a few per cent of the true
    rise, so that a looser-than-proven or a too-small bound shows."""
    # a positive labelled row leaves 200 negatives for a side of 5 positives
    P = np.array([1.0] * 5 + [1.0] + [0.0] * 200)[:, None]
    M = np.ones_like(P)
    missing = np.zeros(len(P), bool)
    left = np.arange(len(P)) < 5
    assert _check_moves(P, M, missing, left, [5]) > 0.99
    # a negative labelled row leaves 10 positives and 9 negatives for a side of 3 negatives
    P = np.array([0.0] * 3 + [0.0] + [1.0] * 10 + [0.0] * 9)[:, None]
    M = np.ones_like(P)
    missing = np.zeros(len(P), bool)
    left = np.arange(len(P)) < 3
    assert _check_moves(P, M, missing, left, [3]) > 0.94
    # a missing row (y^+ = mass = 0.5) joins four like it, leaving 50 labelled negatives
    P = np.array([0.5] * 5 + [0.0] * 50)[:, None]
    M = np.array([0.5] * 5 + [1.0] * 50)[:, None]
    missing = np.arange(len(P)) < 5
    left = np.arange(len(P)) < 4
    assert _check_moves(P, M, missing, left, [4]) > 0.98
