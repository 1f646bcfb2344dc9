"""A researcher's own data through the data layer: what the README's "Your own data" route
must not lose or mix up silently (an audit's findings, each failing on the code before)."""
import os
import threading

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from hmlkit._validation import check_layers
from hmlkit.data import TaggedData, load_dataset, load_npz, remove_tags, save_npz
from hmlkit.data import datasets as D
from hmlkit.data import fetch as F
from hmlkit.tags import cooccurrence, soft_tag_confidences


@pytest.fixture
def small():
    rng = np.random.default_rng(0)
    X = rng.random((30, 4)).astype(np.float32)
    Y = sp.csr_matrix((rng.random((30, 6)) < 0.4).astype(np.uint8))
    return X, Y


def test_a_hand_made_npz_with_an_unknown_key_is_refused_by_name(tmp_path, small):
    X, Y = small
    np.savez(tmp_path / "mine.npz", X=X, Y=Y.toarray(), layers=[0, 0, 0, 1, 1, 1])  # 'tag_layer' meant
    with pytest.raises(ValueError, match="unknown key.*'layers'.*tag_layer"):
        load_npz(tmp_path / "mine.npz")
    np.savez(tmp_path / "ok.npz", X=X, Y=Y.toarray(), tag_layer=[0, 0, 0, 1, 1, 1])
    assert [list(layer) for layer in load_npz(tmp_path / "ok.npz").layers] == [[0, 1, 2], [3, 4, 5]]


def test_save_npz_to_a_folder_is_refused_and_writes_nothing(tmp_path, small):
    (tmp_path / "out").mkdir()
    with pytest.raises(IsADirectoryError, match="is a directory"):
        save_npz(tmp_path / "out", TaggedData(*small))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no out.npz beside it


def test_two_threads_saving_one_path_leave_one_whole_file(tmp_path):
    rng = np.random.default_rng(1)
    a = TaggedData(rng.normal(size=(2000, 30)), rng.random((2000, 15)) < 0.2, name="a")
    b = TaggedData(rng.normal(size=(2000, 30)), rng.random((2000, 15)) < 0.2, name="b")
    path, errors = tmp_path / "out.npz", []
    for _ in range(5):
        barrier = threading.Barrier(2)

        def job(d):
            barrier.wait()
            try:
                save_npz(path, d)
            except Exception as e:  # noqa: BLE001 (any failure is the finding)
                errors.append(e)

        threads = [threading.Thread(target=job, args=(d,)) for d in (a, b)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        assert not errors
        assert load_npz(path) in (a, b)
    assert [p.name for p in tmp_path.iterdir()] == ["out.npz"]  # no temp file left
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_round_trip_compares_equal_and_a_change_does_not(tmp_path, small):
    X, Y = small
    d = TaggedData(X, Y, layers=[0, 0, 1, 1, 1, 1], groups=np.arange(30) % 3, tag_names=list("abcdef"))
    back = load_npz(save_npz(tmp_path / "d.npz", d))
    assert back == d and not (back != d)  # meta differs (the source file): provenance, not compared
    assert remove_tags(d, 0.5, random_state=0) != d
    assert d != TaggedData(X, Y, layers=[0, 0, 1, 1, 1, 1], groups=np.arange(30) % 3)  # other tag names
    with pytest.raises(TypeError):
        hash(d)


def test_frames_with_different_row_labels_are_refused(small):
    X, Y = small
    ids = [f"img{i}" for i in range(30)]
    Xf = pd.DataFrame(X, index=ids)
    Yf = pd.DataFrame(Y.toarray(), index=ids[::-1], columns=list("abcdef"))
    with pytest.raises(ValueError, match="row labels differ.*img0.*img29.*Y.loc"):
        TaggedData(Xf, Yf)
    d = TaggedData(Xf, Yf.loc[Xf.index])
    np.testing.assert_array_equal(d.Y.toarray(), Yf.loc[Xf.index].to_numpy())


def test_the_data_set_keeps_its_own_tags(small):
    X, Y = small
    d = TaggedData(X, Y, Y_true=Y)
    before = d.Y.toarray().copy()
    Y.data[:] = 0  # the caller reuses its matrix
    np.testing.assert_array_equal(d.Y.toarray(), before)
    np.testing.assert_array_equal(d.Y_true.toarray(), before)
    assert d.summary()["tags_per_sample"] == before.sum(1).mean()
    assert remove_tags(d, 0.0).Y.nnz == before.sum()  # no stored zero turned back into a tag


@pytest.mark.parametrize("groups", [np.full(30, 2.0**64), np.arange(30, dtype=np.uint64) + np.uint64(2**63)])
def test_group_ids_beyond_int64_are_refused(small, groups):
    with pytest.raises(ValueError, match="int64's range"):
        TaggedData(*small, groups=groups)


def test_per_tag_layer_ids_from_a_table():
    expect = [[0, 1], [2, 3]]
    for ids in (pd.Series([0, 0, 1, 1]), np.array([0.0, 0.0, 1.0, 1.0]), np.array([0, 0, 1, 1], dtype=object)):
        assert [list(layer) for layer in check_layers(ids, 4)] == expect
    with pytest.raises(ValueError, match="must be integers; tag 2 has nan"):
        check_layers(pd.Series([0, 0, None, 1]), 4)
    with pytest.raises(ValueError, match="must be integers; tag 1 has 0.5"):
        check_layers(np.array([0, 0.5, 1, 1]), 4)
    # a boolean column (a mask) read True / False as layers 1 / 0
    for mask in (np.array([True, False, True, False]), np.array([True, 0, 1, 0], dtype=object),
                 pd.Series([True, False, True, False])):
        with pytest.raises(ValueError, match="got booleans"):
            check_layers(mask, 4)


def test_group_names_must_name_every_group_id_used(small):
    X, Y = small
    groups = np.repeat([0, 1, 2], 10)
    with pytest.raises(ValueError, match="has 2 names .* use id 2"):
        TaggedData(X, Y, groups=groups, meta={"group_names": ["a", "b"]})
    with pytest.raises(ValueError, match="list of names"):
        TaggedData(X, Y, groups=groups, meta={"group_names": "abc"})
    with pytest.raises(ValueError, match="groups is None"):
        TaggedData(X, Y, meta={"group_names": ["a", "b", "c"]})
    d = TaggedData(X, Y, groups=groups, meta={"group_names": ["a", "b", "c"]})
    assert d.subset(np.arange(10)).meta["group_names"] == ["a", "b", "c"]  # a subset uses fewer ids


def test_a_tag_layer_key_of_another_length_is_named_as_the_files_key(tmp_path, small):
    X, Y = small
    np.savez(tmp_path / "mine.npz", X=X, Y=Y.toarray(), tag_layer=[0, 0, 1, 1])
    with pytest.raises(ValueError, match="key 'tag_layer' has 4 layer ids but Y has 6 tag columns"):
        load_npz(tmp_path / "mine.npz")


def test_save_npz_to_a_folder_named_with_the_suffix_is_refused(tmp_path, small):
    (tmp_path / "out.npz").mkdir()
    for target in ("out", "out.npz"):
        with pytest.raises(IsADirectoryError, match="out.npz is a directory"):
            save_npz(tmp_path / target, TaggedData(*small))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.npz"]


def test_corel16k_is_found_in_the_cache_after_a_fetch(tmp_path, monkeypatch):
    shared = D.corel16k_candidates()[0]
    if not shared.is_file():
        pytest.skip("shared Corel16k development set absent")
    monkeypatch.setenv("HMLKIT_SHARED_DATA", str(tmp_path / "nothing"))
    monkeypatch.setenv("HMLKIT_DATA_DIR", str(tmp_path / "cache"))
    with pytest.raises(FileNotFoundError, match="fetch_corel16k"):
        load_dataset("corel16k")
    (tmp_path / "cache" / "corel16k").mkdir(parents=True)
    os.symlink(shared, tmp_path / "cache" / "corel16k" / shared.name)
    assert load_dataset("corel16k").n_samples == 1744


def test_the_cache_of_an_installed_package_is_the_users(tmp_path, monkeypatch):
    monkeypatch.delenv("HMLKIT_DATA_DIR", raising=False)
    assert F.data_cache_dir() == F.REPO_ROOT / "data" / "cache"  # a checkout
    monkeypatch.setattr(F, "REPO_ROOT", tmp_path / "site-packages")  # no pyproject.toml there
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert F.data_cache_dir() == tmp_path / "xdg" / "hmlkit"


def test_given_correlations_count_only_the_pairs_the_hierarchy_allows():
    Y = np.array([[1, 0, 1, 0], [1, 0, 0, 1], [0, 1, 0, 1], [1, 0, 1, 1]])
    layers = [[0, 1], [2, 3]]
    unmasked = cooccurrence(Y, None) + 0.1  # not masked to this hierarchy
    pos, neg = soft_tag_confidences(Y, layers, rho=unmasked, eps=np.ones((4, 4)))
    assert not pos[:, 2:].any() and not neg[:, 2:].any()  # last layer: no layer below
    own, _ = soft_tag_confidences(Y, layers)
    masked = np.where(np.array([[0, 0, 1, 1]] * 2 + [[0, 0, 0, 0]] * 2, bool), unmasked, 0.0)
    np.testing.assert_array_equal(pos, soft_tag_confidences(Y, layers, rho=masked, eps=np.zeros((4, 4)))[0])
    assert own[:, :2].any()
