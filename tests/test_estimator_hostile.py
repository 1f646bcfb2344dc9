"""Hostile inputs, the estimators: predict reads the fitted state, not today's parameters; pandas
column names are tracked as scikit-learn tracks them; verbose, a ragged X and a Y_true
without the observed tags are clear errors; numeric object-dtype X is taken."""
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from hmlkit import HMLClustering, HMLForest, HMLTagCompleter
from hmlkit._validation import check_Y
from hmlkit.data import TaggedData


def _data(n=40, d=5, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    X = rng.normal(size=(n, d)).astype(np.float32)
    X[:, 0] += 3 * g
    Y = np.zeros((n, 6), np.uint8)
    Y[np.arange(n), g] = 1
    Y[np.arange(n), 3 + g] = rng.integers(0, 2, n)
    return X, Y


def _frame(X):
    return pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])


SMALL = dict(n_estimators=6, random_state=0, n_jobs=1)


# ------------------------------------------------------------------ fitted state predicts
# every parameter predict_scores reads (method, n_neighbors, oob, lift_exponent) and the
# others too: after fit, none of them may change the scores until the next fit
CHANGES = [dict(lift_exponent=-3), dict(lift_exponent=None), dict(lift_exponent=0.5), dict(lift_exponent=2.0),
           dict(oob=False), dict(oob=True), dict(n_neighbors=3), dict(method="LN"), dict(method="AM"),
           dict(method="GC", n_clusters=3), dict(n_clusters=5), dict(feature_map=None), dict(random_state=7),
           dict(n_estimators=2), dict(hierarchy=False), dict(untagged="negative")]


@pytest.mark.parametrize("params", [dict(method="AM"), dict(method="LN", oob=False, lift_exponent=None),
                                    dict(method="GC", n_clusters=3, lift_exponent=None)],
                         ids=["AM-oob-lift", "LN-insample-vote", "GC"])
def test_predict_scores_uses_the_fitted_parameters_not_todays(params):
    """set_params(lift_exponent=-3) after fit was used unchecked and changed the scores;
    lift_exponent None -> 0.5 was ignored; oob True -> False switched to in-sample
    neighbourhoods; oob False -> True raised AttributeError inbag_; lift_exponent 0.5 ->
    None raised a TypeError."""
    X, Y = _data()
    Xn, Yn = _data(n=12, seed=1)
    est = HMLTagCompleter(n_neighbors=5, **params, **SMALL).fit(X, Y)
    before = est.predict_scores(), est.predict_scores(Xn, Yn), est.predict_scores(Xn)
    fitted = est.get_params()
    for change in CHANGES:
        est.set_params(**change)
        after = est.predict_scores(), est.predict_scores(Xn, Yn), est.predict_scores(Xn)
        for a, b in zip(before, after):
            np.testing.assert_array_equal(a, b, err_msg=f"set_params({change}) after fit changed the scores")
        est.set_params(**fitted)
    assert est.method_ == params["method"] and est.n_neighbors_ == 5
    assert est.oob_ is params.get("oob", True)
    assert est.lift_exponent_ == params.get("lift_exponent", 0.5)


def test_the_next_fit_takes_the_new_parameters():
    X, Y = _data()
    est = HMLTagCompleter(n_neighbors=5, **SMALL).fit(X, Y)
    vote = est.set_params(lift_exponent=None).fit(X, Y).predict_scores()
    assert est.lift_exponent_ is None
    assert not np.array_equal(vote, est.set_params(lift_exponent=0.5).fit(X, Y).predict_scores())
    assert est.set_params(oob=False).fit(X, Y).oob_ is False and not hasattr(est.forest_, "inbag_")


@pytest.mark.parametrize("param, value, message", [
    ("lift_exponent", -3, "lift_exponent must be None or a finite number >= 0, got -3"),
    ("lift_exponent", np.inf, "lift_exponent must be None or a finite number"),
    ("lift_exponent", "0.5", "lift_exponent must be None or a finite number"),
    ("lift_exponent", True, "lift_exponent must be None or a finite number"),
    ("oob", "yes", "oob must be True or False, got 'yes'"),
    ("oob", 1, "oob must be True or False"),
    ("n_neighbors", 0, "n_neighbors must be a positive integer"),
    ("n_neighbors", 2.0, "n_neighbors must be a positive integer"),
    ("method", "kNN", "method must be one of"),
])
def test_predict_time_parameters_are_checked_at_fit(param, value, message):
    X, Y = _data()
    with pytest.raises(ValueError, match=message):
        HMLTagCompleter(**{param: value}, **SMALL).fit(X, Y)


def test_use_before_fit_is_sklearns_not_fitted_error():
    X, _ = _data()
    with pytest.raises(NotFittedError, match="HMLForest is not fitted yet"):
        HMLForest().apply(X)
    with pytest.raises(NotFittedError, match="HMLForest is not fitted yet"):
        HMLForest().affinity()
    with pytest.raises(NotFittedError, match="HMLTagCompleter is not fitted yet"):
        HMLTagCompleter().predict_scores()


# ------------------------------------------------------------------ column names
def test_forest_checks_the_column_names_it_was_fitted_on():
    """f.apply(df[df.columns[::-1]]) gave other leaves, silently; renamed columns were taken."""
    X, Y = _data()
    df = _frame(X)
    f = HMLForest(**SMALL).fit(df, Y)
    assert list(f.feature_names_in_) == list(df.columns) and f.n_features_in_ == 5
    np.testing.assert_array_equal(f.apply(df), f.train_leaves_)
    with pytest.raises(ValueError, match="Feature names must be in the same order as they were in fit"):
        f.apply(df[df.columns[::-1]])
    with pytest.raises(ValueError, match="(?s)unseen at fit time:\n- g0.*missing:\n- f0"):
        f.apply(df.rename(columns={"f0": "g0"}))
    with pytest.raises(ValueError, match="(?s)seen at fit time, yet now missing:\n- f4"):
        f.affinity(df.drop(columns="f4"))
    with pytest.warns(UserWarning, match="X does not have valid feature names, but HMLForest was fitted with"):
        np.testing.assert_array_equal(f.apply(X), f.train_leaves_)
    # the same forest from the array: no names, and a frame at apply warns
    g = HMLForest(**SMALL).fit(X, Y)
    assert not hasattr(g, "feature_names_in_")
    np.testing.assert_array_equal(g.train_leaves_, f.train_leaves_)
    with pytest.warns(UserWarning, match="X has feature names, but HMLForest was fitted without"):
        g.apply(df)
    # a refit on an array forgets the names
    assert not hasattr(f.fit(X, Y), "feature_names_in_")
    with pytest.raises(ValueError, match="X has 4 features, but HMLForest is expecting 5 features as input"):
        f.apply(X[:, :4])


def test_clustering_and_completer_record_and_check_column_names():
    X, Y = _data()
    df = _frame(X)
    c = HMLClustering(n_clusters=3, n_neighbors=5, **SMALL).fit(df, Y)
    assert list(c.feature_names_in_) == list(df.columns) and c.n_features_in_ == 5
    t = HMLTagCompleter(n_neighbors=5, **SMALL).fit(df, Y)
    assert list(t.feature_names_in_) == list(df.columns)
    from_array = HMLTagCompleter(n_neighbors=5, **SMALL).fit(X, Y)
    np.testing.assert_array_equal(t.predict_scores(df[:7]), from_array.predict_scores(X[:7]))
    with pytest.raises(ValueError, match="Feature names must be in the same order"):
        t.predict_scores(df[df.columns[::-1]])
    with pytest.raises(ValueError, match="unseen at fit time"):
        t.predict_scores(df.rename(columns=str.upper))
    with pytest.warns(UserWarning, match="X does not have valid feature names, but HMLTagCompleter"):
        t.predict_scores(X[:3])
    with pytest.raises(ValueError, match="X has 6 features, but HMLTagCompleter is expecting 5 features"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an array after a frame: the names' warning comes first
            t.predict_scores(np.hstack([X, X[:, :1]]))
    # names of the frame, not the inner forest's (it sees the mapped array)
    assert not hasattr(t.forest_, "feature_names_in_")


# ------------------------------------------------------------------ weak inputs
@pytest.mark.parametrize("est", [HMLForest, HMLClustering, HMLTagCompleter])
@pytest.mark.parametrize("verbose", ["no", 3, 2.5, None, -1])
def test_verbose_other_than_a_bool_0_1_or_auto_is_refused_at_fit(est, verbose):
    X, Y = _data()
    with pytest.raises(ValueError, match=r"verbose must be True, False, 0, 1 or 'auto', got "):
        est(verbose=verbose, **SMALL).fit(X, Y)


@pytest.mark.parametrize("verbose", [False, True, 0, 1, np.int64(0), np.bool_(True), "auto"])
def test_verbose_bools_0_1_and_auto_still_fit(verbose, capsys):
    X, Y = _data()
    leaves = HMLForest(verbose=verbose, **SMALL).fit(X, Y).train_leaves_
    np.testing.assert_array_equal(leaves, HMLForest(verbose=False, **SMALL).fit(X, Y).train_leaves_)


def test_a_ragged_list_is_refused_naming_its_argument():
    """numpy's "inhomogeneous shape" came without the name of the argument."""
    with pytest.raises(ValueError, match="X must be a 2-D array with one row per sample, all of one length"):
        HMLForest(**SMALL).fit([[1.0, 2.0], [3.0]], np.eye(2))
    with pytest.raises(ValueError, match="Y must be a 2-D array with one row per sample, all of one length"):
        check_Y([[1, 0], [1]])
    X, Y = _data()
    t = HMLTagCompleter(n_neighbors=5, **SMALL).fit(X, Y)
    with pytest.raises(ValueError, match="X must be a 2-D array with one row per sample"):
        t.predict_scores([list(X[0]), list(X[1][:3])])


def test_Y_true_must_hold_the_observed_tags():
    """TaggedData took a Y_true that lacked observed tags."""
    X, Y = _data()
    Y[4] = [0, 1, 0, 0, 1, 0]
    Y_true = Y.copy()
    Y_true[4] = 0
    with pytest.raises(ValueError, match=r"Y_true must hold every observed tag of Y .*: 2 observed tag\(s\) "
                                         r"are not in Y_true, e.g. sample 4, tag 1 \('tag1'\)"):
        TaggedData(X, Y, Y_true=Y_true)
    more = Y.copy()
    more[:, 5] = 1
    d = TaggedData(X, Y, Y_true=more)  # hidden tags: Y a part of Y_true
    assert d.Y_true.nnz > d.Y.nnz
    assert TaggedData(X, Y, Y_true=Y).subset(np.arange(5)).Y_true.shape == (5, 6)


def test_numeric_object_dtype_X_is_taken_as_numbers():
    """A numeric object-dtype X was refused ("must be numeric, got dtype object")."""
    X, Y = _data()
    f = HMLForest(**SMALL).fit(X.astype(object), Y)
    np.testing.assert_array_equal(f.train_leaves_, HMLForest(**SMALL).fit(X, Y).train_leaves_)
    np.testing.assert_array_equal(f.apply(X.astype(np.float64).astype(object)), f.train_leaves_)
    bad = X.astype(object)
    bad[2, 1] = {"a": 1}
    with pytest.raises(TypeError, match="X must be numeric: float.. argument must be a string or a real number"):
        HMLForest(**SMALL).fit(bad, Y)
    bad[2, 1] = "two"
    with pytest.raises(ValueError, match="X must be numeric: could not convert string to float"):
        HMLForest(**SMALL).fit(bad, Y)


def test_a_frame_of_new_tags_must_name_the_fitted_tags_in_order():
    """A frame Y given to predict_scores with its columns reordered used to be read by
    position: every score on another tag, silently."""
    X, Y = _data()
    names = [f"t{j}" for j in range(Y.shape[1])]
    Ydf = pd.DataFrame(Y, columns=names)
    tc = HMLTagCompleter(n_estimators=5, random_state=0).fit(X, Ydf)
    assert list(tc.tag_names_in_) == names
    by_frame = tc.predict_scores(X[:4], Ydf.iloc[:4])
    np.testing.assert_array_equal(by_frame, tc.predict_scores(X[:4], Y[:4]))  # an array: by position
    with pytest.raises(ValueError, match="another order"):
        tc.predict_scores(X[:4], Ydf.iloc[:4][names[::-1]])
    with pytest.raises(ValueError, match=r"tags not seen at fit: \['u0'\]"):
        tc.predict_scores(X[:4], Ydf.iloc[:4].rename(columns={"t0": "u0"}))
    assert not hasattr(tc.fit(X, Y), "tag_names_in_")  # a refit without names forgets them


def test_the_completer_keeps_its_own_tags_and_no_stale_clusters():
    """The fitted completer's tags were the caller's CSR arrays (a later edit of them changed
    the model); a GC fit's labels_ outlived a refit with another method."""
    import scipy.sparse as sp

    X, Y = _data()
    Yc = sp.csr_matrix(Y)
    tc = HMLTagCompleter(n_estimators=5, random_state=0).fit(X, Yc)
    before = tc.predict_scores()
    Yc.data[:] = 0
    np.testing.assert_array_equal(tc.predict_scores(), before)
    gc = HMLTagCompleter("GC", n_clusters=3, n_estimators=5, random_state=0).fit(X, Y)
    assert hasattr(gc, "labels_")
    assert not hasattr(gc.set_params(method="AM").fit(X, Y), "labels_")


def test_a_gc_completer_takes_its_clusterers_parameters_and_fits_a_copy():
    from hmlkit.baselines.run import MethodParameterError, make_estimator

    X, Y = _data()
    assert make_estimator("kmeans_gc", n_clusters=3).clusterer.n_clusters == 3
    gc = make_estimator("kmeans_gc", clusterer__n_clusters=4, random_state=0)
    assert gc.clusterer.n_clusters == 4 and gc.clusterer.random_state == 0
    with pytest.raises(MethodParameterError, match="'bogus'.*n_clusters"):
        make_estimator("kmeans_gc", bogus=1)
    gc.fit(X, Y)
    assert not hasattr(gc.clusterer, "labels_")  # the parameter stays unfitted, as clone expects
    np.testing.assert_array_equal(gc.clusterer_.labels_, gc.labels_)


def test_tagged_data_refuses_a_tag_name_twice():
    X, Y = _data()
    with pytest.raises(ValueError, match=r"tag_names must be distinct, but \['a'\]"):
        TaggedData(X=X, Y=Y, tag_names=["a", "a", "b", "c", "d", "e"])
    with pytest.raises(ValueError, match="must be distinct"):
        TaggedData(X=X, Y=pd.DataFrame(Y, columns=["a", "b", "c", "a", "d", "e"]))
