"""DetScore input: cross-validated per-tag linear SVM detection scores.

Latent MMC (Zhou et al., NIPS 2013, Sec. 5) represents every video by the
scores of one linear SVM tag detector per tag, z-scored per tag "to remove
biases between tag detectors". The paper trains its detectors on a separate
annotated collection; we have only the observed tags of the samples being
clustered, so each sample's score comes from a model trained on the other
folds (K-fold cross-validation, stratified per tag): no sample is ever scored
by a detector that saw it.

The detector is the objective of scikit-learn's ``LinearSVC`` with its
defaults (L2 penalty, squared hinge loss, intercept as a regularised constant
feature, ``intercept_scaling=1``) and ``class_weight="balanced"``::

    min_w  1/2 ||w||^2 + C * sum_i c_i * max(0, 1 - y_i w.[x_i, 1])^2

liblinear solves it one tag at a time (0.5-25 s per tag at n=2000, d=1000,
i.e. minutes for 114 tags x 5 folds), so here all tags of a fold are solved
together by a batched primal Newton method with conjugate-gradient inner
solves (Keerthi & DeCoste 2005, "A modified finite Newton method for fast
solution of large scale linear SVMs"): every Hessian-vector product for every
tag is two dense matrix products (float32; ~2.5 s CPU per fold at n=2379,
d=1000, m=114). ``tests/test_detscore.py`` checks agreement with
``sklearn.svm.LinearSVC`` on small problems. Features are standardised and
scaled by ``1/sqrt(d)`` before training (see ``detection_scores``).

Tags with fewer than ``n_folds`` positives (or fewer than ``n_folds``
negatives) cannot give every fold a positive to train on; their score is 0,
the value of an uninformative detector after z-scoring (documented fallback).
"""
from __future__ import annotations

import numpy as np
from sklearn.model_selection import StratifiedKFold

from .._validation import check_random_state_seed, check_X, check_Y


def _batched_l2svm(X, Ypm, cw, C, max_newton=20, max_cg=40, tol=1e-3, cg_tol=1e-2):
    """Solve one squared-hinge L2-SVM per column of ``Ypm`` jointly.

    Parameters
    ----------
    X : (n, d) float64, last column the constant 1 (regularised intercept).
    Ypm : (n, m) float64 in {-1, +1}.
    cw : (n, m) float64 per-sample class weights of each tag.
    C : float.

    Returns
    -------
    W : (d, m) float64.

    The columns are independent problems, so each stops on its own: a tag whose
    gradient met ``tol`` leaves the Newton loop, and within a Newton step's CG solve a
    column whose residual met ``cg_tol`` leaves the products. (Run until every column
    met them, the converged ones kept taking steps below the tolerance: on Corel5k at
    50 % of the tags removed, 228 tags, a third of the Newton steps' columns had
    converged, and the detectors took 42.9 s against 23.5 s; the z-scored scores moved
    by at most 0.008.)
    """
    n, d = X.shape
    m = Ypm.shape[1]
    dt = X.dtype
    W = np.zeros((d, m), dtype=dt)
    WC_all = (2.0 * C * cw).astype(dt)
    Y_all = Ypm.astype(dt)
    active = np.arange(m)  # the tags not converged yet
    for _ in range(max_newton):
        Wa, Ya, WC = W[:, active], Y_all[:, active], WC_all[:, active]
        M = X @ Wa                                  # margins before labels (n, a)
        slack = 1.0 - Ya * M
        act = slack > 0
        # gradient of 1/2|w|^2 + C sum c_i slack_i^2 over active samples
        G = Wa - X.T @ (WC * act * slack * Ya)
        gnorm = np.sqrt((G * G).sum(0))
        keep = ~_converged(gnorm, tol, Wa)
        if not keep.any():
            break
        active, Wa, Ya, WC, M, act, G = (active[keep], Wa[:, keep], Ya[:, keep], WC[:, keep], M[:, keep],
                                         act[:, keep], G[:, keep])
        # generalised Hessian H = I + X^T diag(2 C c act) X ; solve H P = -G by batched CG
        D = WC * act
        P = np.zeros_like(Wa)
        R = -G
        Z = R.copy()
        rr = (R * R).sum(0)
        rr0 = rr.copy()
        live = np.arange(active.size)  # the columns whose CG has not met cg_tol
        for _k in range(max_cg):
            Zl = Z[:, live]
            HZ = Zl + X.T @ (D[:, live] * (X @ Zl))
            zHz = (Zl * HZ).sum(0)
            a = np.where(zHz > 0, rr[live] / np.maximum(zHz, 1e-300), 0.0)
            P[:, live] += a * Zl
            Rl = R[:, live] - a * HZ
            R[:, live] = Rl
            rr_new = (Rl * Rl).sum(0)
            Z[:, live] = Rl + (rr_new / np.maximum(rr[live], 1e-300)) * Zl
            rr[live] = rr_new
            live = live[rr_new > cg_tol**2 * rr0[live]]
            if live.size == 0:
                break
        # exact line search on the piecewise-quadratic objective along P, per tag,
        # by a few safeguarded Newton steps on the step size (1-D, convex)
        XP = X @ P
        wp, pp = (Wa * P).sum(0), (P * P).sum(0)
        t = np.ones(active.size)
        for _ls in range(8):
            s = 1.0 - Ya * (M + t * XP)
            a_ = s > 0
            yxp = Ya * XP
            d1 = wp + t * pp - (WC * a_ * s * yxp).sum(0)
            d2 = pp + (WC * a_ * yxp * yxp).sum(0)
            t_new = np.clip(t - d1 / np.maximum(d2, 1e-300), 0.0, None)
            if np.all(np.abs(t_new - t) < 1e-6):
                t = t_new
                break
            t = t_new
        W[:, active] = Wa + t * P
    return W


def _converged(gnorm, tol, W):
    """Per column: the gradient's norm within ``tol`` of the weights' (at least 1)."""
    scale = np.maximum(1.0, np.sqrt((W * W).sum(0)))
    return gnorm <= tol * scale


def detection_scores(X, Y, random_state=None, n_folds=5, C=1.0):
    """Cross-validated, per-tag z-scored linear SVM detection scores.

    Parameters
    ----------
    X : (n, d) visual features.
    Y : (n, m) binary observed tags (dense or sparse).
    random_state : seed of the per-tag stratified fold split.
    n_folds : number of cross-validation folds (>= 2).
    C : SVM trade-off (as ``LinearSVC(C=...)``).

    Returns
    -------
    S : (n, m) float32. Column j is the out-of-fold decision value of tag j's
        detector, z-scored over the samples; 0 for tags with fewer than
        ``n_folds`` positives or negatives. A ValueError when no tag has that many
        (every score would be 0).
    """
    X = check_X(X, "X", dtype=np.float64)
    n = X.shape[0]
    Y = check_Y(Y, n, "Y")
    if not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise ValueError(f"n_folds must be an integer >= 2, got {n_folds!r}")
    if n_folds > n:
        raise ValueError(f"n_folds={n_folds} is larger than the number of samples ({n})")
    if not np.isfinite(C) or C <= 0:
        raise ValueError(f"C must be a positive number, got {C!r}")
    seed = check_random_state_seed(random_state)
    m = Y.shape[1]
    Yd = Y.toarray().astype(bool)
    pos = Yd.sum(0)
    usable = np.flatnonzero((pos >= n_folds) & (n - pos >= n_folds))
    S = np.zeros((n, m), dtype=np.float64)
    if usable.size == 0:  # every score would be 0: a clusterer would split n identical vectors
        raise ValueError(f"no tag has {n_folds} positives and {n_folds} negatives (n_folds) to train and "
                         f"score its detector by cross-validation, so every detection score would be 0; "
                         f"most positives of a tag: {int(pos.max()) if m else 0}")

    # Standardise features (unsupervised, on all samples) and scale by 1/sqrt(d)
    # so that the mean squared sample norm is 1: the regime in which C ~ 1 is a
    # sensible default and the Newton systems are well conditioned (on raw
    # standardised 1000-d features C = 1 is practically a hard margin).
    mu = X.mean(0)
    sd = X.std(0)
    sd[sd == 0] = 1.0
    Xs = np.hstack([(X - mu) / (sd * np.sqrt(X.shape[1])), np.ones((n, 1))]).astype(np.float32)

    # per-tag stratified folds: fold id of every (sample, tag)
    rng = np.random.default_rng(seed)
    fold = np.empty((n, usable.size), dtype=np.int64)
    for c, j in enumerate(usable):
        skf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=int(rng.integers(2**31 - 1)))
        for f, (_, te) in enumerate(skf.split(np.zeros(n), Yd[:, j])):
            fold[te, c] = f

    Ypm_all = np.where(Yd[:, usable], 1.0, -1.0).astype(np.float32)
    for f in range(n_folds):
        train = fold != f                                  # (n, u): each tag its own train set
        # one batched solve per fold: a sample outside tag j's train set gets weight 0
        npos = ((Ypm_all > 0) & train).sum(0)
        nneg = ((Ypm_all < 0) & train).sum(0)
        ntr = npos + nneg
        cw = np.where(Ypm_all > 0, ntr / (2.0 * npos), ntr / (2.0 * nneg)) * train
        W = _batched_l2svm(Xs, Ypm_all, cw, C)
        dec = (Xs @ W).astype(np.float64)
        S[:, usable] = np.where(~train, dec, S[:, usable])
    sub = S[:, usable]
    sd = sub.std(0)
    sd[sd == 0] = 1.0
    S[:, usable] = (sub - sub.mean(0)) / sd
    return S.astype(np.float32)


__all__ = ["detection_scores"]
