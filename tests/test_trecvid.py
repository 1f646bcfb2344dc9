"""TRECVID MED 2011: building from user-made files, loading the kit's npz, malformed input."""
import numpy as np
import pytest

from hmlkit.data.npz import save_npz
from hmlkit.data.trecvid import MED11_EVENTS, build_trecvid_med11, load_trecvid_med11
from hmlkit.features import hik_feature_map

HIER = "# tag<TAB>layer\nparty\t0\nparade\t0\npeople\t1\nfood\t1\npark\t1\n"
TABLE = (
    "v1\tE006\tparty,people,food\n"
    "v2\tBirthday party\tparty\n"
    "v3\tE012\tparade,people\n"
    "v4\tE012\t\n"
    "v5\tE001\tpark\n"
)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "hierarchy.tsv").write_text(HIER)
    (tmp_path / "tags.tsv").write_text(TABLE)
    X = np.random.default_rng(0).integers(0, 5, size=(5, 8)).astype(float)
    np.save(tmp_path / "hog3d.npy", X)
    return tmp_path, X


def test_build_exact(files):
    d_, X = files
    d = build_trecvid_med11(d_ / "hog3d.npy", d_ / "tags.tsv", d_ / "hierarchy.tsv", hik=False)
    assert d.tag_names == ["parade", "party", "food", "park", "people"]  # layer 0 first
    assert [l.tolist() for l in d.layers] == [[0, 1], [2, 3, 4]]
    np.testing.assert_array_equal(
        d.Y.toarray(),
        [[0, 1, 1, 0, 1], [0, 1, 0, 0, 0], [1, 0, 0, 0, 1], [0, 0, 0, 0, 0], [0, 0, 0, 1, 0]],
    )
    np.testing.assert_array_equal(d.groups, [1, 1, 2, 2, 0])  # E001, E006, E012
    assert d.meta["group_names"][1] == "E006 " + MED11_EVENTS["E006"]
    np.testing.assert_array_equal(d.X, X.astype(np.float32))
    h = build_trecvid_med11(X, d_ / "tags.tsv", d_ / "hierarchy.tsv", hik=True, sample_steps=2)
    np.testing.assert_allclose(h.X, hik_feature_map(X / X.sum(1, keepdims=True), 2), rtol=1e-6)


def test_round_trip_and_checks(files, tmp_path):
    d_, X = files
    d = build_trecvid_med11(X, d_ / "tags.tsv", d_ / "hierarchy.tsv", hik=False)
    p = save_npz(tmp_path / "med11.npz", d)
    with pytest.warns(UserWarning, match=r"n_samples=5 \(paper 2379\)"):
        e = load_trecvid_med11(p, hik=True, sample_steps=2)
    assert e.n_features == 8 * 3 and e.meta["hik"] and e.n_groups == 3
    save_npz(tmp_path / "hik.npz", e)
    with pytest.raises(ValueError, match="already went through the HIK map"):
        load_trecvid_med11(tmp_path / "hik.npz", hik=True, check=False)
    np.savez(tmp_path / "nogroups.npz", X=X, Y=d.Y.toarray())
    with pytest.raises(ValueError, match=r"nogroups\.npz: no 'groups'"):
        load_trecvid_med11(tmp_path / "nogroups.npz")


@pytest.mark.parametrize(
    "table, msg",
    [
        ("v1\tE006\tparty,cake\n", r"tags\.tsv, line 1: unknown tag 'cake'"),
        ("v1\tE006\tparty\nv2\tE099\tparty\n", r"tags\.tsv, line 2: unknown event 'E099'"),
        ("v1\tE006\tparty\nv1\tE006\tparty\n", r"tags\.tsv, line 2: video 'v1' repeats line 1"),
        ("# c\nv1 E006 party\n", r"tags\.tsv, line 2: expected 'video_id<TAB>event"),
    ],
)
def test_malformed_tag_table(files, table, msg):
    d_, X = files
    (d_ / "tags.tsv").write_text(table)
    with pytest.raises(ValueError, match=msg):
        build_trecvid_med11(np.ones((table.count("\n"), 3)), d_ / "tags.tsv", d_ / "hierarchy.tsv")


def test_malformed_hierarchy_and_rows(files):
    d_, X = files
    (d_ / "hierarchy.tsv").write_text("party\t0\npeople\tone\n")
    with pytest.raises(ValueError, match=r"hierarchy\.tsv, line 2: layer must be an integer"):
        build_trecvid_med11(X, d_ / "tags.tsv", d_ / "hierarchy.tsv")
    (d_ / "hierarchy.tsv").write_text(HIER)
    with pytest.raises(ValueError, match=r"expected \(5, n_bins\) rows aligned"):
        build_trecvid_med11(X[:4], d_ / "tags.tsv", d_ / "hierarchy.tsv")
    with pytest.raises(FileNotFoundError, match="nope.npy"):
        build_trecvid_med11(d_ / "nope.npy", d_ / "tags.tsv", d_ / "hierarchy.tsv")
