import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import average_precision_score

from hmlkit.metrics import clustering_scores, completion_scores, mean_average_precision, pair_counts, purity


def _brute_pairs(truth, pred):
    tp = fp = fn = 0
    for i, j in itertools.combinations(range(len(truth)), 2):
        same_k, same_c = pred[i] == pred[j], truth[i] == truth[j]
        tp += same_k and same_c
        fp += same_k and not same_c
        fn += same_c and not same_k
    return tp, fp, fn


def test_pair_f1_agrees_with_brute_force():
    rng = np.random.default_rng(0)
    for trial in range(15):
        n = int(rng.integers(2, 40))
        truth = rng.integers(0, int(rng.integers(1, 6)), n)
        pred = rng.integers(0, int(rng.integers(1, 7)), n)
        tp, fp, fn = _brute_pairs(truth, pred)
        assert pair_counts(truth, pred) == (tp, fp, fn)
        p = tp / (tp + fp) if tp + fp else 1.0
        r = tp / (tp + fn) if tp + fn else 1.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        s = clustering_scores(truth, pred)
        assert s["f1"] == pytest.approx(f1)
        # RI from the same pair counts
        pairs = n * (n - 1) / 2
        assert s["ri"] == pytest.approx((pairs - fp - fn) / pairs)
        # purity by brute force
        pur = sum(np.bincount(truth[pred == k]).max() for k in np.unique(pred)) / n
        assert s["purity"] == pytest.approx(pur)


def test_hand_case():
    truth = np.array([0, 0, 0, 1, 1, 2])
    pred = np.array([5, 5, 7, 7, 7, 7])
    s = clustering_scores(truth, pred)
    assert s["purity"] == pytest.approx((2 + 2) / 6)
    # pairs: same pred: C(2,2)+C(4,2)=7; TP: {0,1} and {3,4} = 2; same truth: 3+1 = 4
    assert pair_counts(truth, pred) == (2, 5, 2)
    p, r = 2 / 7, 2 / 4
    assert s["f1"] == pytest.approx(2 * p * r / (p + r))
    assert set(s) == {"purity", "nmi", "ri", "f1", "ari"}
    assert all(isinstance(v, float) for v in s.values())


def test_nmi_is_geometric():
    truth = np.array([0, 0, 1, 1, 2, 2, 2])
    pred = np.array([0, 0, 0, 1, 1, 1, 1])
    # geometric NMI by hand: I / sqrt(H1 H2)
    n = len(truth)
    C = np.zeros((3, 2))
    for t, p in zip(truth, pred):
        C[t, p] += 1
    P = C / n
    pt, pp = P.sum(1), P.sum(0)
    nz = P > 0
    mi = (P[nz] * np.log(P[nz] / np.outer(pt, pp)[nz])).sum()
    ht, hp = -(pt * np.log(pt)).sum(), -(pp * np.log(pp)).sum()
    assert clustering_scores(truth, pred)["nmi"] == pytest.approx(mi / np.sqrt(ht * hp))


def test_perfect_and_permutation_invariance():
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 5, 50)
    perm = np.array([3, 0, 4, 1, 2])
    s = clustering_scores(truth, perm[truth])
    for k in ("purity", "nmi", "ri", "f1", "ari"):
        assert s[k] == pytest.approx(1.0)
    pred = rng.integers(0, 4, 50)
    a = clustering_scores(truth, pred)
    b = clustering_scores(truth, np.array([9, 7, 8, 6])[pred])
    assert a == pytest.approx(b)
    # singletons vs singletons is perfect; everything-in-one vs singletons has F1 0
    assert clustering_scores(np.arange(4), np.arange(4))["f1"] == 1.0
    assert clustering_scores(np.arange(4), np.zeros(4, int))["f1"] == 0.0
    assert purity(np.array([0, 0, 1]), np.zeros(3, int)) == pytest.approx(2 / 3)


def test_clustering_bad_input():
    with pytest.raises(ValueError, match="labels but pred"):
        clustering_scores([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="empty"):
        clustering_scores([], [])
    with pytest.raises(ValueError, match="1-D"):
        clustering_scores(np.zeros((2, 2)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        clustering_scores([0.0, np.nan], [0, 1])


# 3 samples x 5 tags. Sample 2 has no hidden tag and is not evaluated.
SC = np.array(
    [
        [0.9, 0.8, 0.1, 0.5, 0.5],
        [0.2, 0.3, 0.4, 0.6, 0.1],
        [0.0, 0.9, 0.8, 0.7, 0.6],
    ]
)
OBS = np.array([[1, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 1, 0, 0, 0]], np.uint8)
HID = np.array([[0, 0, 0, 0, 1], [0, 0, 1, 1, 0], [0, 0, 0, 0, 0]], np.uint8)


def test_completion_hand_case():
    # sample 0 ranking (observed tag 0 excluded; tie 3/4 -> 3 first): 1, 3, 4, 2 -> hits 0,0,1,1,1
    # sample 1 ranking: 3, 2, 1, 0, 4 -> hits 1,2,2,2,2 (2 hidden)
    s = completion_scores(SC, sp.csr_matrix(OBS), HID)
    exp = {
        "AP@1": 0.5, "AP@2": 0.5, "AP@3": 0.5, "AP@4": 0.375, "AP@5": 0.3,
        "AR@1": 0.25, "AR@2": 0.5, "AR@3": 1.0, "AR@4": 1.0, "AR@5": 1.0,
        "Coverage@1": 0.5, "Coverage@2": 0.5, "Coverage@3": 1.0, "Coverage@4": 1.0, "Coverage@5": 1.0,
    }
    assert list(s) == list(exp)
    assert s == pytest.approx(exp)
    assert completion_scores(SC, OBS, HID, N=3) == {"AP@3": 0.5, "AR@3": 1.0, "Coverage@3": 1.0}
    for bad in (1.0, np.float64(2), "3", None):  # 1.0 was "'float' object is not iterable"
        with pytest.raises(ValueError, match="positive integer"):
            completion_scores(SC, OBS, HID, N=bad)


def test_completion_tie_break_and_observed_exclusion():
    # all scores equal: ranking is by tag index; observed tag 0 (the best index) is skipped
    sc = np.zeros((1, 5))
    s = completion_scores(sc, [[1, 0, 0, 0, 0]], [[0, 1, 0, 0, 0]], N=(1,))
    assert s["AP@1"] == 1.0
    s = completion_scores(sc, [[1, 0, 0, 0, 0]], [[0, 0, 1, 0, 0]], N=(1, 2))
    assert s["AP@1"] == 0.0 and s["AP@2"] == 0.5
    # a high score on an observed tag never takes a slot; -inf ranks last among unobserved
    sc = np.array([[10.0, -np.inf, 1.0, 0.0, 0.0]])
    s = completion_scores(sc, [[1, 0, 0, 0, 0]], [[0, 1, 0, 0, 0]], N=(3, 4))
    assert s["AR@3"] == 0.0 and s["AR@4"] == 1.0


def _slow_completion(scores, obs, hid, N):
    rows = [i for i in range(scores.shape[0]) if hid[i].any()]
    out = {}
    for k in N:
        ap, ar, cov = [], [], []
        for i in rows:
            cand = [j for j in range(scores.shape[1]) if not obs[i, j]]
            cand.sort(key=lambda j: (-scores[i, j], j))
            hits = sum(hid[i, j] for j in cand[:k])
            ap.append(hits / k)
            ar.append(hits / hid[i].sum())
            cov.append(hits > 0)
        out[f"AP@{k}"], out[f"AR@{k}"], out[f"Coverage@{k}"] = np.mean(ap), np.mean(ar), np.mean(cov)
    return out


def test_completion_agrees_with_slow_loop():
    rng = np.random.default_rng(3)
    n, m = 40, 9
    truth = (rng.random((n, m)) < 0.35).astype(np.uint8)
    hid = truth * (rng.random((n, m)) < 0.4)
    obs = truth - hid
    scores = np.round(rng.random((n, m)), 1)  # many ties
    s = completion_scores(scores, obs, hid, N=(1, 2, 3, 5))
    assert s == pytest.approx(_slow_completion(scores, obs, hid, (1, 2, 3, 5)))


def test_completion_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        completion_scores(np.where(SC > 0.85, np.nan, SC), OBS, HID)
    with pytest.raises(ValueError, match="shape"):
        completion_scores(SC[:, :4], OBS, HID)
    with pytest.raises(ValueError, match="shape"):
        completion_scores(SC, OBS, HID[:2])
    with pytest.raises(ValueError, match="overlap"):
        completion_scores(SC, OBS, OBS)
    with pytest.raises(ValueError, match="larger than the number of tags"):
        completion_scores(SC, OBS, HID, N=(6,))
    with pytest.raises(ValueError, match="positive integer"):
        completion_scores(SC, OBS, HID, N=(0,))
    with pytest.raises(ValueError, match="no sample has a hidden tag"):
        completion_scores(SC, OBS, np.zeros_like(HID))
    with pytest.raises(ValueError, match="0/1"):
        completion_scores(SC, OBS, HID * 2)
    with pytest.raises(ValueError, match="must be real, got complex"):  # was a ComplexWarning only
        completion_scores(SC + 1j, OBS, HID)
    with pytest.raises(ValueError, match="must be numeric"):
        completion_scores(np.full(SC.shape, "high"), OBS, HID)


def test_clustering_bad_labels():
    with pytest.raises(ValueError, match="pred contains None"):  # was scikit-learn's TypeError
        clustering_scores([0, 1, 1], [0, None, 1])


def test_mean_average_precision():
    rng = np.random.default_rng(4)
    truth = (rng.random((30, 6)) < 0.3).astype(np.uint8)
    truth[:, 2] = 0  # no positive: skipped
    scores = rng.random((30, 6))
    exp = np.mean([average_precision_score(truth[:, j], scores[:, j]) for j in (0, 1, 3, 4, 5)])
    assert mean_average_precision(scores, sp.csr_matrix(truth)) == pytest.approx(exp)
    assert mean_average_precision(truth.astype(float), truth) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="shape"):
        mean_average_precision(scores[:, :5], truth)
    with pytest.raises(ValueError, match="NaN"):
        mean_average_precision(np.full((30, 6), np.nan), truth)
    with pytest.raises(ValueError, match="no positive"):
        mean_average_precision(scores, np.zeros_like(truth))


def test_completion_float32_and_dense_sparse_agree():
    a = completion_scores(SC.astype(np.float32), OBS, HID)
    b = completion_scores(SC, sp.csr_matrix(OBS), sp.csc_matrix(HID))
    assert a == b
