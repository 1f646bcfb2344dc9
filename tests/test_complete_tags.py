"""HMLClustering's tag completion (``complete_tags``): the tag graph built on the observed
tags plus the forest's predictions of the missing ones."""
import numpy as np
import pytest
import scipy.sparse as sp

from hmlkit import HMLClustering, HMLTagCompleter
from hmlkit.affinity import leaf_knn
from hmlkit.complete import affinity_measure_scores, completed_tags, conditional_cooccurrence, lift_product_scores, \
    tag_prior
from hmlkit.data import load_dataset, remove_tags
from hmlkit.spectral import cluster_forest


@pytest.fixture(scope="module")
def sparse_trecvid():
    return remove_tags(load_dataset("trecvid", n_samples=300), 0.5, random_state=0)


def _hand_made():
    """5 samples, 4 tags; sample 4 untagged. Neighbours: 0 <-> 1, 2 <-> 3, 4 -> 0."""
    Y = sp.csr_matrix(np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1], [0, 0, 0, 0]]))
    idx = np.array([[1], [0], [3], [2], [0]], np.int64)
    w = np.ones((5, 1))
    return Y, idx, w


def test_a_known_answer_on_a_hand_made_case():
    """Sample 0 (tag 0), whose neighbour 1 has tags 0 and 1, gains tag 1; sample 2 gains tag 3
    from sample 3; samples 1 and 3 already hold what their neighbours hold, and tag 1
    co-occurs with tag 0 only, so they gain nothing; untagged sample 4 gains nothing."""
    Y, idx, w = _hand_made()
    T = completed_tags(idx, w, Y, 1, weight=0.5, top=10).toarray()
    added = T - Y.toarray()
    assert added[4].sum() == 0  # untagged: no prediction
    assert (T[Y.toarray() > 0] == 1).all()  # observed tags keep weight 1
    assert added[0, 1] > 0 and added[2, 3] > 0
    assert added[0, [0, 2, 3]].sum() == 0 and added[2, [0, 1, 2]].sum() == 0
    assert added[1].sum() == 0 and added[3].sum() == 0
    assert added.max() <= 0.5 + 1e-12


def test_weight_zero_or_no_tags_leaves_the_observed_tags():
    Y, idx, w = _hand_made()
    np.testing.assert_array_equal(completed_tags(idx, w, Y, 1, weight=0.0).toarray(), Y.toarray())
    empty = sp.csr_matrix((5, 4))
    assert completed_tags(idx, w, empty, 1).nnz == 0


def test_against_the_dense_scores_at_any_chunk_size(sparse_trecvid):
    """The chunked top-t equals the dense computation: every tagged sample's t best
    unobserved tags by the lift product of the AM vote, divided by the row's maximum."""
    d = sparse_trecvid
    hc = HMLClustering(10, n_estimators=10, random_state=0, n_jobs=1).fit(d.X, d.Y, d.layers)
    idx, w = leaf_knn(hc.forest_.train_leaves_, 20)
    Y = sp.csr_matrix(d.Y)
    S = lift_product_scores(affinity_measure_scores(idx, w, Y, 20), Y, conditional_cooccurrence(Y), tag_prior(Y),
                            Y.nnz / Y.shape[0], 0.5)
    S = S / np.maximum(S.max(axis=1, keepdims=True), 1e-12)
    S[Y.toarray() > 0] = 0
    top = 3
    ref = np.zeros_like(S)
    for i in np.flatnonzero(np.diff(Y.indptr)):
        best = np.argsort(-S[i], kind="stable")[:top]
        ref[i, best] = S[i, best]
    ref = Y.toarray() + 0.25 * ref
    for chunk in (1, 7, 4096):
        T = completed_tags(idx, w, Y, 20, weight=0.25, top=top, chunk_rows=chunk)
        assert (np.diff(T.indptr) <= np.diff(Y.indptr) + top).all()
        np.testing.assert_allclose(T.toarray(), ref, atol=1e-12)
    np.testing.assert_array_equal(hc.tags_.toarray(),
                                  completed_tags(idx, w, Y, 20, weight=0.5, top=10).toarray())


def test_the_predictions_are_the_completers_own(sparse_trecvid):
    """The tags added are the best unobserved ones of HMLTagCompleter("AM", oob=False) grown
    with the same parameters, which grows the same forest."""
    d = sparse_trecvid
    kw = dict(n_estimators=10, random_state=3, n_jobs=1)
    hc = HMLClustering(10, completion_top=1, **kw).fit(d.X, d.Y, d.layers)
    S = HMLTagCompleter("AM", oob=False, **kw).fit(d.X, d.Y, d.layers).predict_scores()
    Y = sp.csr_matrix(d.Y)
    added = (hc.tags_ - Y.astype(float)).tocsr()
    rows = np.flatnonzero(np.diff(added.indptr))
    assert len(rows) > 0.5 * np.count_nonzero(np.diff(Y.indptr))
    for i in rows:
        assert S[i, added.indices[added.indptr[i]]] == S[i].max()


def test_off_is_the_clustering_on_the_observed_tags(sparse_trecvid):
    """complete_tags=False clusters the forest graph fused with the observed tags, as
    before the option existed; tag_weight=0 ignores the completion."""
    d = sparse_trecvid
    kw = dict(n_estimators=10, random_state=0, n_jobs=1)
    off = HMLClustering(10, complete_tags=False, **kw).fit(d.X, d.Y, d.layers)
    ref = cluster_forest(off.forest_, 10, 20, 0, Y=sp.csr_matrix(d.Y), tag_weight=0.5)[0]
    np.testing.assert_array_equal(off.labels_, ref)
    assert off.tags_.nnz == d.Y.nnz
    on = HMLClustering(10, **kw).fit(d.X, d.Y, d.layers)
    assert on.tags_.nnz > d.Y.nnz and not np.array_equal(on.affinity_.toarray(), off.affinity_.toarray())
    paper_forest = HMLClustering(10, tag_weight=0.0, **kw).fit(d.X, d.Y, d.layers)
    assert paper_forest.tags_.nnz == d.Y.nnz


def test_deterministic_whatever_the_number_of_jobs(sparse_trecvid):
    d = sparse_trecvid
    a = HMLClustering(10, n_estimators=10, random_state=5, n_jobs=1).fit(d.X, d.Y, d.layers)
    b = HMLClustering(10, n_estimators=10, random_state=5, n_jobs=2).fit(d.X, d.Y, d.layers)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.tags_.toarray(), b.tags_.toarray())


def test_bad_parameters_fail_before_the_forest_is_grown(sparse_trecvid, monkeypatch):
    import hmlkit.cluster as C

    def never(*a, **k):
        raise AssertionError("the forest was grown")
    monkeypatch.setattr(C, "forest_from", never)
    d = sparse_trecvid
    for kw, what in (({"complete_tags": "yes"}, "complete_tags"), ({"completion_weight": -0.1}, "completion_weight"),
                     ({"completion_top": 0}, "completion_top")):
        with pytest.raises(ValueError, match=what):
            HMLClustering(10, n_estimators=2, **kw).fit(d.X, d.Y, d.layers)
