"""A new sample's leaf k-NN and tag scores depend only on the sample and the fitted model,
not on its row in the batch nor on the batch's other rows; the training samples' own
neighbours (the self-queries of clustering and in-sample / out-of-bag completion) keep
their order among ties: a hash of (training index, neighbour)."""
import numpy as np
import pytest

from hmlkit import HMLTagCompleter
from hmlkit.affinity import leaf_knn
from hmlkit.complete import affinity_measure_scores, rank_observed_last
from hmlkit.data.synthetic import make_synthetic
from hmlkit.primitives.topk import tie_keys

# a tiny forest (12 samples, 3 trees, 3 leaves each: most neighbours tie) and the leaf k-NN
# (k = 4) the row-index tie key gave before new samples were keyed by their leaves
LEAVES = np.array([[2, 1, 2], [2, 1, 2], [2, 0, 0], [0, 0, 2], [2, 0, 1], [2, 0, 2],
                   [0, 1, 2], [0, 1, 0], [2, 0, 2], [1, 1, 1], [1, 1, 1], [2, 2, 2]])
SELF_IDX = np.array([[1, 11, 5, 8], [0, 6, 11, 5], [4, 8, 5, 11], [8, 6, 5, 2], [2, 5, 8, 9], [8, 4, 2, 1],
                     [7, 3, 0, 1], [6, 1, 10, 9], [5, 11, 3, 2], [10, 6, 1, 4], [9, 1, 0, 4], [5, 1, 8, 0]])
SELF_COUNTS = np.array([[3, 2, 2, 2], [3, 2, 2, 2], [2, 2, 2, 1], [2, 2, 2, 1], [2, 2, 2, 1], [3, 2, 2, 2],
                        [2, 2, 2, 2], [2, 1, 1, 1], [3, 2, 2, 2], [3, 1, 1, 1], [3, 1, 1, 1], [2, 2, 2, 2]])
# out-of-bag style self-queries: each sample's leaves in the trees not grown on it
OOB_QUERY = np.array([[2, 1, 2], [2, 1, 2], [2, 0, -1], [0, -1, -1], [-1, -1, 1], [2, -1, 2],
                      [0, 1, 2], [-1, 1, -1], [-1, -1, 2], [1, 1, 1], [1, -1, -1], [2, -1, 2]])
OOB_IDX = np.array([[10, 3, 4, 8], [10, 4, 8, 3], [4, 8, 5, 3], [7, -1, -1, -1], [10, -1, -1, -1],
                    [4, 8, 3, -1], [7, 3, 10, -1], [10, -1, -1, -1], [3, -1, -1, -1], [10, -1, -1, -1],
                    [-1, -1, -1, -1], [3, 4, 8, -1]])


def brute_knn(train, query, self_index, k):
    """The k training samples sharing most trees with each query, ties ordered by
    tie_key(self_index, neighbour): the documented order of training self-queries."""
    idx = np.full((len(query), k), -1)
    w = np.zeros((len(query), k), np.float32)
    for q, (row, me) in enumerate(zip(query, self_index)):
        counts = ((train == row) & (row >= 0)).sum(axis=1)
        counts[me] = 0
        js = np.flatnonzero(counts)
        order = np.lexsort((tie_keys(np.full(js.size, me, np.int64), js.astype(np.int64)), -counts[js]))[:k]
        idx[q, :order.size] = js[order]
        w[q, :order.size] = counts[js[order]] / train.shape[1]
    return idx, w


def test_training_neighbours_keep_the_row_index_tie_key():
    idx, w = leaf_knn(LEAVES, 4)
    np.testing.assert_array_equal(idx, SELF_IDX)
    np.testing.assert_array_equal(w, (SELF_COUNTS / 3).astype(np.float32))
    train = np.where(OOB_QUERY < 0, LEAVES, -1)
    idx, _ = leaf_knn(train, 4, query_leaves=OOB_QUERY, self_index=np.arange(12))
    np.testing.assert_array_equal(idx, OOB_IDX)


def test_training_neighbours_match_the_brute_force_order():
    L = np.random.default_rng(0).integers(0, 4, size=(300, 5))
    idx, w = leaf_knn(L, 10)
    ref_idx, ref_w = brute_knn(L, L, np.arange(300), 10)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_array_equal(w, ref_w)


def test_new_sample_neighbours_ignore_the_batch():
    rng = np.random.default_rng(1)
    L = rng.integers(0, 4, size=(300, 5))
    Q = rng.integers(-1, 4, size=(60, 5))
    Q = np.vstack([Q, Q[:10]])  # 10 duplicates
    idx, w = leaf_knn(L, 10, query_leaves=Q)
    assert (w[:, -1] == w[:, -2]).any()  # the lists end inside ties
    perm = rng.permutation(len(Q))
    pidx, pw = leaf_knn(L, 10, query_leaves=Q[perm])
    np.testing.assert_array_equal(pidx, idx[perm])
    np.testing.assert_array_equal(pw, w[perm])
    for one in (7, 42):
        np.testing.assert_array_equal(leaf_knn(L, 10, query_leaves=Q[one:one + 1])[0], idx[one:one + 1])
    np.testing.assert_array_equal(idx[60:], idx[:10])
    # a new sample shares no index with the training ones: the same leaves as training
    # sample 5, it keeps sample 5 among its neighbours and ranks its ties its own way
    assert 5 in leaf_knn(L, 10, query_leaves=L[5:6])[0]


@pytest.fixture(scope="module")
def split():
    d = make_synthetic("trecvid", n_samples=400, random_state=0)
    X, Y = d.X, d.Y
    return X[:300], Y[:300], X[300:], Y[300:], d.layers


@pytest.mark.parametrize("method", ["AM", "GC"])
@pytest.mark.parametrize("oob", [True, False])
def test_new_sample_scores_ignore_the_batch(split, method, oob):
    X, Y, Xn, Yn, layers = split
    c = HMLTagCompleter(method=method, n_neighbors=10, n_clusters=6, oob=oob, n_estimators=4,
                        random_state=0, n_jobs=1).fit(X, Y, layers)
    Xb = np.vstack([Xn, Xn[:15]])
    Yb = Yn[np.r_[np.arange(Xn.shape[0]), np.arange(15)]]
    perm = np.random.default_rng(2).permutation(Xb.shape[0])
    sub = np.array([3, 50, 17, 99])
    for known in (None, Yb):
        s = c.predict_scores(Xb, known)
        np.testing.assert_array_equal(c.predict_scores(Xb[perm], None if known is None else known[perm]), s[perm])
        np.testing.assert_array_equal(c.predict_scores(Xb[sub], None if known is None else known[sub]), s[sub])
        np.testing.assert_array_equal(s[Xn.shape[0]:], s[:15])  # identical samples, identical scores


def test_training_scores_keep_the_row_index_tie_key(split):
    """In-sample AM scores are the vote of the neighbours the row-index key ranks first."""
    X, Y, _, _, layers = split
    c = HMLTagCompleter(method="AM", n_neighbors=10, oob=False, lift_exponent=None, n_estimators=4,
                        random_state=0, n_jobs=1).fit(X, Y, layers)
    L = c.forest_.train_leaves_
    idx, w = brute_knn(L, L, np.arange(L.shape[0]), 10)
    np.testing.assert_array_equal(c.predict_scores(), rank_observed_last(affinity_measure_scores(idx, w, c.Y_, 10), c.Y_))
