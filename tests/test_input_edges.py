"""Estimators and data: odd but valid input works, degenerate input
says so, and bad input names the problem."""
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from hmlkit import HMLClustering, HMLForest, HMLTagCompleter
from hmlkit._validation import check_layers
from hmlkit.data import TaggedData


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(2), n // 2)
    X = rng.normal(size=(n, 4)) + 4 * g[:, None]
    Y = np.eye(4, dtype=np.uint8)[2 * g + rng.integers(0, 2, n)]
    return X, Y


def test_pandas_nullable_dtypes_are_accepted():
    X, Y = _data()
    Xf = pd.DataFrame(X).astype("Float64")
    Yf = pd.DataFrame(Y).astype("Int64")
    a = HMLForest(n_estimators=3, random_state=0).fit(Xf, Yf).train_leaves_
    b = HMLForest(n_estimators=3, random_state=0).fit(X, Y).train_leaves_
    assert np.array_equal(a, b)
    Xf.iloc[0, 0] = pd.NA
    with pytest.raises(ValueError, match="NaN"):
        HMLForest(n_estimators=3).fit(Xf, Y)


def test_layer_errors_name_the_right_tag():
    with pytest.raises(ValueError, match=r"layers\[0\] names tag 1 more than once"):
        check_layers([[0, 1, 1]], 2)
    with pytest.raises(ValueError, match="tag 1 is in more than one layer"):
        check_layers([[0, 1], [1]], 2)
    with pytest.raises(ValueError, match="must be >= 0"):
        check_layers(np.array([0, -1, 1]), 3)


def test_nan_groups_are_rejected():
    X, Y = _data()
    g = np.zeros(40)
    g[3] = np.nan
    with pytest.raises(ValueError, match="groups contain NaN"):
        TaggedData(X, Y, groups=g)
    with pytest.raises(ValueError, match="integer labels"):
        TaggedData(X, Y, groups=np.full(40, 0.5))


def test_degenerate_data_warns():
    X, Y = _data()
    with pytest.warns(UserWarning, match="no tag at all"):
        HMLClustering(2, n_estimators=3, random_state=0).fit(X, np.zeros_like(Y))
    with pytest.warns(UserWarning, match="forest could split"):
        HMLClustering(2, n_estimators=3, random_state=0).fit(np.ones_like(X), Y)
    few = np.repeat(X[:5], 8, axis=0)
    with pytest.warns(UserWarning, match="only 5 distinct samples"):
        HMLClustering(10, n_estimators=3, random_state=0).fit(few, np.repeat(Y[:5], 8, axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        HMLClustering(2, n_estimators=3, random_state=0).fit(X, Y)  # ordinary data: no warning


def test_n_features_in_and_sparse_tags():
    X, Y = _data()
    assert HMLClustering(2, n_estimators=3, random_state=0).fit(X, Y).n_features_in_ == 4
    assert HMLTagCompleter(n_estimators=3, random_state=0).fit(X, Y).n_features_in_ == 4
    for est in (HMLForest(), HMLClustering(), HMLTagCompleter()):
        assert est.__sklearn_tags__().input_tags.sparse
    a = HMLForest(n_estimators=3, random_state=0).fit(sp.csr_matrix(X), Y).train_leaves_
    assert np.array_equal(a, HMLForest(n_estimators=3, random_state=0).fit(X, Y).train_leaves_)


def test_n_jobs_boolean_is_rejected():
    X, Y = _data()
    with pytest.raises(ValueError, match="boolean"):
        HMLForest(n_estimators=3, n_jobs=True).fit(X, Y)


def test_baselines_cli_starts_without_runpy_warning():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", "hmlkit.baselines.run", "--help"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "RuntimeWarning" not in out.stderr


def test_integer_tags_are_checked_without_a_float_copy_and_still_refused_when_not_0_1():
    """Integer tag values are checked by their least and greatest value (no float64 copy
    of every value); any other value than 0 and 1 is still refused, in every dtype."""
    from hmlkit._validation import check_Y

    for Y in (np.array([[0, 2]]), np.array([[0, -1]], np.int8), sp.csr_matrix(np.array([[0, 3]], np.uint8)),
              np.array([[0.5, 1.0]]), np.array([[np.nan, 1.0]])):
        with pytest.raises(ValueError, match="only 0/1"):
            check_Y(Y)
    for Y, want in ((np.array([[1, 0]], np.int8), [[1, 0]]), (np.array([[True, False]]), [[1, 0]]),
                    (sp.csr_matrix(np.array([[0, 1]], np.uint16)), [[0, 1]]), (np.array([[1.0, 0.0]]), [[1, 0]])):
        out = check_Y(Y)
        assert out.dtype == np.uint8 and out.toarray().tolist() == want


@pytest.mark.parametrize("dtype", [np.uint8, np.int64, bool, np.float64])
def test_check_Y_leaves_the_callers_matrix_as_it_was(dtype):
    """A CSR input's arrays are shared by the checked matrix (no copy of a million rows'
    tags): its explicit zeros are dropped and its unsorted rows sorted in a copy, never in
    the caller's arrays; a clean input (sorted, no stored zero) is kept without a copy."""
    from hmlkit._validation import check_Y

    Y = sp.csr_matrix((np.array([1, 0, 1, 1, 1], dtype), np.array([2, 1, 0, 0, 2]), np.array([0, 3, 5])),
                      shape=(2, 3))
    kept = Y.data.copy(), Y.indices.copy(), Y.indptr.copy()
    out = check_Y(Y)
    assert out.toarray().tolist() == [[1, 0, 1], [1, 0, 1]] and out.nnz == 4
    assert out.indices.tolist() == [0, 2, 0, 2] and out.has_sorted_indices
    for a, b in zip((Y.data, Y.indices, Y.indptr), kept):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()
    assert check_Y(Y).toarray().tolist() == [[1, 0, 1], [1, 0, 1]]  # checked twice: the same

    clean = sp.csr_matrix((np.ones(4, np.uint8), np.array([0, 2, 0, 2]), np.array([0, 2, 4])), shape=(2, 3))
    out = check_Y(clean)
    assert out.has_sorted_indices and out.toarray().tolist() == [[1, 0, 1], [1, 0, 1]]
    assert np.shares_memory(out.indices, clean.indices) and np.shares_memory(out.data, clean.data)



def test_a_tag_named_twice_in_a_csr_row_is_refused_as_a_coo_one_is():
    """scipy sums a column repeated in a row (a COO matrix's conversion already did):
    a 0/1 tag matrix naming a tag twice holds a 2 and is refused, naming the cause, where
    it used to pass and count the tag twice; a bool matrix's sum stays True."""
    from hmlkit._validation import check_Y

    rows = np.array([0, 2, 3]), np.array([0, 0, 1])  # indptr, indices: row 0 names tag 0 twice
    Y = sp.csr_matrix((np.ones(3, np.uint8), rows[1], rows[0]), shape=(2, 3))
    with pytest.raises(ValueError, match="names a tag twice"):
        check_Y(Y)
    assert Y.indices.tolist() == [0, 0, 1] and Y.nnz == 3  # the caller's matrix as it was
    with pytest.raises(ValueError, match="only 0/1"):
        check_Y(sp.coo_matrix((np.ones(3), ([0, 0, 1], [0, 0, 1])), shape=(2, 3)))
    out = check_Y(sp.csr_matrix((np.ones(3, bool), rows[1], rows[0]), shape=(2, 3)))
    assert out.toarray().tolist() == [[1, 0, 0], [0, 1, 0]] and out.nnz == 2 and out.has_canonical_format

def _noncanonical_csr(n=30, m=8, seed=0):
    """A float64 CSR matrix whose rows are unsorted, name a column twice and store a zero."""
    rng = np.random.default_rng(seed)
    cols, vals = [], []
    for i in range(n):
        c = rng.choice(m, 3, replace=False)
        cols += [c[2], c[1], c[0], c[0], (c[0] + 1) % m if (c[0] + 1) % m not in c else c[0]]
        vals += [1.0, 2.0, 0.5, 0.5, 0.0]
    return sp.csr_matrix((np.array(vals), np.array(cols), np.arange(0, 5 * n + 1, 5)), shape=(n, m))


@pytest.mark.parametrize("algorithm", ["brute", "inverted", "window"])
def test_cosine_graph_leaves_the_callers_matrix_as_it_was_and_sums_its_duplicates(algorithm):
    """The caller's CSR arrays are shared by the float64 copy the graph works on: its
    duplicates are summed and its rows sorted in a copy; the graph is the one of the
    canonical matrix."""
    from hmlkit.affinity import cosine_knn_graph

    Z = _noncanonical_csr()
    kept = Z.data.copy(), Z.indices.copy(), Z.indptr.copy()
    G = cosine_knn_graph(Z, 4, algorithm=algorithm)
    for a, b in zip((Z.data, Z.indices, Z.indptr), kept):
        assert a.tolist() == b.tolist()
    canonical = Z.copy()
    canonical.sum_duplicates()
    canonical.eliminate_zeros()
    assert (abs(G - cosine_knn_graph(canonical, 4, algorithm=algorithm)) > 1e-12).nnz == 0


def test_intersection_kernel_map_leaves_the_callers_matrix_as_it_was():
    """Stored zeros are pruned and a repeated column summed in a copy; the map is the one
    of the dense matrix."""
    from hmlkit.features import hik_feature_map

    X = sp.csr_matrix((np.array([1.0, 0.0, 2.0, 0.5, 0.25]), np.array([0, 1, 2, 1, 2]), np.array([0, 2, 5])),
                      shape=(2, 3))
    kept = X.data.copy(), X.indices.copy(), X.indptr.copy()
    Z = hik_feature_map(X)
    for a, b in zip((X.data, X.indices, X.indptr), kept):
        assert a.tolist() == b.tolist()
    assert np.allclose(Z.toarray(), hik_feature_map(X.toarray()))


@pytest.mark.filterwarnings("ignore:GHF-ART made")
def test_no_estimator_changes_the_arrays_it_is_given():
    """A researcher's own features and tags come back as they were given: the CSR tags
    with unsorted rows and a stored zero, the float32 features (the forest's own dtype, so
    used without a copy), after the core estimators and every clustering baseline that
    takes them."""
    from hmlkit import HMLClustering, HMLForest, HMLTagCompleter
    from hmlkit.affinity import leaf_knn
    from hmlkit.baselines import registry
    from hmlkit.baselines.run import make_estimator
    from hmlkit.complete import affinity_measure_top, cooccurrence_scores

    rng = np.random.default_rng(0)
    n, m = 60, 6
    g = np.repeat(np.arange(3), n // 3)
    X = (rng.normal(0, 3, (3, 5))[g] + rng.normal(0, 1, (n, 5))).astype(np.float32)
    cols, ptr = [], [0]
    for i in range(n):
        row = [3 + g[i], g[i]] + ([int((g[i] + 1) % 3)] if i % 4 == 0 else [])  # unsorted: the deep tag first
        cols += row
        ptr.append(len(cols))
    data = np.ones(len(cols), np.uint8)
    data[2] = 0  # a stored zero
    Y = sp.csr_matrix((data, np.array(cols, np.int32), np.array(ptr, np.int32)), shape=(n, m))
    layers = [np.arange(3), np.arange(3, 6)]
    kept = [a.copy() for a in (X, Y.data, Y.indices, Y.indptr)]

    def same():
        return all(a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip((X, Y.data, Y.indices, Y.indptr), kept))

    f = HMLForest(n_estimators=5, random_state=0).fit(X, Y, layers)
    f.apply(X)
    HMLClustering(3, n_estimators=5, random_state=0).fit_predict(X, Y, layers)
    for method in ("AM", "LN", "GC"):
        HMLTagCompleter(method, n_estimators=5, n_clusters=3, random_state=0).fit(X, Y, layers).predict_scores()
    idx, w = leaf_knn(f.train_leaves_, 5)
    affinity_measure_top(idx, w, Y, 5)
    cooccurrence_scores(Y)
    assert same(), "a core estimator changed its input"
    for name, spec in registry().items():
        if spec.kind != "clustering" or name == "hmlrf" or not spec.available()[0]:
            continue
        params = {"n_estimators": 5} if "n_estimators" in spec.factory().get_params() else {}
        est = make_estimator(name, n_clusters=3, random_state=0, **params)
        if "blm" in spec.input_modes:
            est.fit(X, Y, layers=layers)
        else:
            est.fit(X)
        assert same(), f"{name} changed its input"


def test_a_seed_the_kit_draws_is_one_every_consumer_takes():
    """random_state=None or a Generator gives a seed below 2**32: scikit-learn and numpy's
    RandomState refuse larger ones (MMC with its default random_state failed in KMeans)."""
    from hmlkit._validation import check_random_state_seed

    gen = np.random.default_rng(0)
    seeds = [check_random_state_seed(None) for _ in range(200)] + [check_random_state_seed(gen) for _ in range(200)]
    assert all(0 <= s < 2**32 for s in seeds) and len(set(seeds)) > 390
    assert check_random_state_seed(2**40) == 2**40  # a seed the user gives is kept


@pytest.mark.filterwarnings("ignore:GHF-ART made")
def test_every_clustering_method_fits_with_its_default_random_state():
    """First contact: each registered clustering method, built with no random_state, fits."""
    from hmlkit.baselines import registry
    from hmlkit.baselines.run import make_estimator

    rng = np.random.default_rng(1)
    g = np.repeat(np.arange(3), 20)
    X = (rng.normal(0, 3, (3, 5))[g] + rng.normal(0, 1, (60, 5))).astype(np.float32)
    eye = np.eye(3, dtype=np.uint8)
    Y = sp.csr_matrix(np.hstack([eye[g], eye[(g + rng.integers(0, 2, 60)) % 3]]))
    layers = [np.arange(3), np.arange(3, 6)]
    for name, spec in registry().items():
        if spec.kind != "clustering" or not spec.available()[0]:
            continue
        params = {"n_estimators": 5} if "n_estimators" in spec.factory().get_params() else {}
        est = make_estimator(name, n_clusters=3, **params)
        assert est.get_params()["random_state"] is None, name
        if "hml" in spec.input_modes or "blm" in spec.input_modes:
            est.fit(X, Y, layers=layers)
        else:
            est.fit(X)
        assert np.asarray(est.labels_).shape == (60,), name


# ------------------------------------------------------- the data layer's own checks

def test_data_layer_bad_input_names_the_problem(tmp_path):
    from hmlkit._validation import check_random_state_seed, check_X, check_Y
    from hmlkit.data import (
        hide_tags,
        load_arff,
        load_dataset,
        load_npz,
        make_synthetic,
        remove_tags,
    )

    X, Y = np.random.default_rng(0).random((5, 3)), np.eye(5, 4, dtype=np.uint8)
    d = TaggedData(X, Y)
    cases = [
        (lambda: TaggedData(X, Y, groups=["a", "b", "a", "b", "a"]), "groups must be integer labels, got dtype <U1"),
        (lambda: TaggedData(X, Y, groups=[0, 1, 0, 1, None]), "groups must be integer labels, got dtype object"),
        (lambda: TaggedData(X, Y, tag_names="abcd"), "tag_names must be a list of names"),
        (lambda: d.subset(np.array([True, False, True])), r"a boolean mask must have shape \(5,\)"),
        (lambda: d.subset([]), "the selection is empty"),
        (lambda: d.subset(np.zeros(5, bool)), "the selection is empty"),
        (lambda: check_Y(np.eye(3) + 0.5j), "must be real 0/1 values"),  # the imaginary part was dropped
        (lambda: check_Y(sp.coo_matrix((np.ones(2), ([0, 0], [1, 1])), shape=(2, 3))), "names a tag twice"),
        (lambda: check_random_state_seed(-1), "random_state must be an int >= 0"),
        (lambda: hide_tags(d, 0.4, random_state=-3), "random_state must be an int >= 0"),
        (lambda: hide_tags(sp.csr_matrix(Y), 0.4), "hide_tags expects a TaggedData, got csr_matrix"),
        (lambda: remove_tags(Y, 0.4), "remove_tags expects a TaggedData, got ndarray"),
        (lambda: make_synthetic(n_samples=200, noise="0.3"), "noise must be a number"),
        (lambda: make_synthetic(n_samples=200, group_share=True), "group_share must be a number"),
        (lambda: load_dataset(d, foo=1), "unexpected options for a TaggedData: foo"),
    ]
    for fn, match in cases:
        with pytest.raises(ValueError, match=match):
            fn()
    # an xarray DataArray is data, not "non-numeric"
    import xarray as xr

    np.testing.assert_array_equal(check_X(xr.DataArray(X)), X.astype(np.float32))
    assert (check_Y(xr.DataArray(Y)) != sp.csr_matrix(Y)).nnz == 0
    # a finite ARFF value too large for float32 is named as such, not "non-finite"
    p = tmp_path / "big.arff"
    p.write_text("@relation r\n@attribute f1 numeric\n@attribute f2 numeric\n@attribute a {0,1}\n"
                 "@attribute b {0,1}\n@data\n1,1e40,0,1\n")
    with pytest.raises(ValueError, match="1e.?40.* of attribute 'f2' is too large for float32"):
        load_arff(p, n_labels=2)
    # a 2-D tag_layer in an npz is named, not read as one layer per row
    q = tmp_path / "f.npz"
    np.savez(q, X=X, Y=Y, tag_layer=np.array([[0, 0, 1, 1]]))
    with pytest.raises(ValueError, match="'tag_layer' must be 1-D"):
        load_npz(q)


# ------------------------------------------------- the core's edges (audit of stop 42)

def test_brute_cosine_graph_gives_each_row_k_neighbours_even_with_duplicates():
    from hmlkit.affinity import cosine_knn_graph
    from hmlkit.affinity.cosine import _brute_cosine_edges

    # rows 0-3 are identical: scikit-learn's search for k + 1 could return two duplicates
    # and not the row itself, and the row kept k + 1 out-edges (rows 2 and 3 here, at k = 1)
    Z = sp.csr_matrix(np.array([[1, 0, 0]] * 4 + [[0, 1, 0], [0, 1, 1]], float))
    rows = np.arange(6)
    src, dst, _ = _brute_cosine_edges(Z, rows, 1)
    assert np.bincount(src, minlength=6).tolist() == [1] * 6 and not (src == dst).any()
    rng = np.random.default_rng(0)
    Zr = sp.csr_matrix((rng.random((300, 15)) < 0.15).astype(float))
    Zr = sp.vstack([Zr, Zr[:40]]).tocsr()  # 40 duplicated rows
    rows = np.flatnonzero(np.diff(Zr.indptr) > 0)
    src, dst, _ = _brute_cosine_edges(Zr, rows, 5)
    assert np.bincount(src).max() <= 5 and not (src == dst).any()
    assert (cosine_knn_graph(Z, 1, algorithm="brute").diagonal() == 0).all()


def test_leaf_ids_beyond_int32_are_refused_not_wrapped():
    from hmlkit.affinity import leaf_affinity, leaf_knn

    L = np.array([[1], [2**32 + 1], [5]])
    with pytest.raises(ValueError, match="beyond int32"):  # 2**32 + 1 became 1: one leaf with sample 0
        leaf_affinity(L)
    with pytest.raises(ValueError, match="beyond int32"):
        leaf_knn(L, 1)
    assert leaf_affinity(np.array([[1], [2**31 - 1], [5]], np.int64)).nnz == 3  # in range: kept


def test_leaf_knn_checks_self_index_and_its_neighbour_count():
    from hmlkit.affinity import leaf_knn

    L = np.random.default_rng(0).integers(0, 5, (40, 6))
    with pytest.raises(ValueError, match=r"self_index must be \(10,\) integers"):  # was read past its end
        leaf_knn(L, 5, query_leaves=L[:10], self_index=np.arange(3))
    with pytest.raises(ValueError, match=r"training indices in \[0, 40\)"):
        leaf_knn(L, 5, query_leaves=L[:10], self_index=np.arange(35, 45))
    with pytest.raises(ValueError, match="n_neighbors must be a positive integer"):
        leaf_knn(L, 2.7)
    idx, _ = leaf_knn(L, 5, query_leaves=L[:10], self_index=np.arange(10))
    assert not (idx == np.arange(10)[:, None]).any()


def test_neighbour_graph_refuses_nan_weights_and_bad_ids():
    from hmlkit.affinity import knn_graph_from_neighbors

    with pytest.raises(ValueError, match="finite weights"):  # gave an asymmetric graph
        knn_graph_from_neighbors(np.array([[1], [0]]), np.array([[np.nan], [1.0]]), 2)
    with pytest.raises(ValueError, match="or -1"):
        knn_graph_from_neighbors(np.array([[-2], [0]]), np.array([[1.0], [1.0]]), 2)


def test_clustering_takes_every_random_state_the_forest_takes_and_checks_its_map():
    X, Y = _data(60)
    ref = HMLClustering(2, n_estimators=5, random_state=5).fit_predict(X, Y)
    for rs in (np.random.RandomState(0), np.random.default_rng(0), 2**40):  # TypeError / numpy's seed error
        assert HMLClustering(2, n_estimators=5, random_state=rs).fit_predict(X, Y).shape == (60,)
    assert np.array_equal(HMLClustering(2, n_estimators=5, random_state=5).fit_predict(X, Y), ref)
    # one feature: "auto" leaves it as it is (the token map needs two)
    X1 = np.zeros((30, 1), np.float32)
    X1[:3] = 1
    HMLClustering(2, n_estimators=5, random_state=0).fit(X1, np.eye(30, 3, dtype=np.uint8))
    # max_features counts the features the forest splits: the token map's, and says so
    rng = np.random.default_rng(0)
    Xt = (rng.random((200, 50)) < 0.08).astype(np.float32)
    Yt = (rng.random((200, 4)) < 0.3).astype(np.uint8)
    with pytest.raises(ValueError, match=r"features of X through its feature map \(50 -> 49\)"):
        HMLClustering(3, n_estimators=3, max_features=50, random_state=0).fit(Xt, Yt)
    # tag_weight is checked before the forest is grown
    with pytest.raises(ValueError, match="tag_weight"):
        HMLClustering(2, n_estimators=5, tag_weight=2.0).fit(X, Y)


def test_a_refit_without_bootstrap_drops_the_old_inbag_flags():
    X, Y = _data(50)
    f = HMLForest(n_estimators=3, bootstrap=True, random_state=0).fit(X, Y)
    f.set_params(bootstrap=False).fit(X[:20], Y[:20])
    assert not hasattr(f, "inbag_")  # was (50, 3) beside (20, 3) leaves


def test_intersection_kernel_map_takes_a_list_in_transform_as_in_fit():
    from hmlkit.features import HIKFeatureMap

    X = np.abs(np.random.default_rng(0).normal(size=(5, 3)))
    m = HIKFeatureMap().fit(X.tolist())
    np.testing.assert_array_equal(m.transform(X.tolist()), m.transform(X))
    with pytest.raises(ValueError, match="sample_interval must be a positive number"):
        HIKFeatureMap(sample_interval="a").fit(X)


def test_layers_as_a_list_of_per_tag_ids_and_tag_names_from_a_dataframe():
    """One layer id per tag reads the same as an array or a list (a list used to be taken for
    a list of tag-index arrays and refused); a DataFrame's columns name the tags."""
    X, Y = _data()
    ids = [0, 0, 1, 1]
    expect = [np.array([0, 1]), np.array([2, 3])]
    for given in (ids, tuple(ids), np.array(ids)):
        got = check_layers(given, 4)
        assert len(got) == 2 and all(np.array_equal(a, b) for a, b in zip(got, expect))
    assert [list(a) for a in TaggedData(X, Y, layers=ids).layers] == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="per-tag layer ids must have length 4, got 3"):
        check_layers([0, 1, 1], 4)
    with pytest.raises(ValueError, match=r"layers\[0\] must be a 1-D array"):
        check_layers([True, False, True, True], 4)  # bools are not layer ids
    d = TaggedData(X, pd.DataFrame(Y, columns=["sky", "sea", "cat", "dog"]))
    assert d.tag_names == ["sky", "sea", "cat", "dog"]
    assert TaggedData(X, pd.DataFrame(Y), tag_names=list("abcd")).tag_names == list("abcd")
