"""Corel5k: load_corel5k on the shared training split, and its rules on small files written here."""
import numpy as np
import pytest

import hmlkit.data as hd
from hmlkit._paths import corel5k_path
from hmlkit.data import load_corel5k, load_dataset, require
from hmlkit.data.corel5k import COREL5K_N_FEATURES

real = pytest.mark.skipif(not corel5k_path().is_file(),
                          reason=f"shared Corel5k training split absent ({corel5k_path()})")


def _write_corel5k_like(path, rows):
    """A mulan sparse ARFF with Corel5k's layout (499 Cluster attributes, then tags); rows: sets of columns."""
    tags = ["sky", "water", "tiger"]
    lines = ["@relation Corel5k-test", ""]
    lines += [f"@attribute Cluster{j + 1} {{0,1}}" for j in range(COREL5K_N_FEATURES)]
    lines += [f"@attribute {t} {{0,1}}" for t in tags]
    lines += ["", "@data"]
    lines += ["{" + ",".join(f"{j} 1" for j in sorted(r)) + "}" for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path, tags


@pytest.fixture(scope="module")
def corel5k():
    return load_corel5k()


@real
def test_real_training_split(corel5k):
    d = corel5k
    assert (d.n_samples, d.n_features, d.n_tags) == (4500, 499, 374)
    assert d.name == "corel5k"
    assert np.isin(d.X, (0.0, 1.0)).all() and d.X.any()
    assert d.meta["feature_names"][0] == "Cluster1" and d.meta["feature_names"][-1] == "Cluster499"
    assert np.array_equal(d.groups, np.arange(4500) // 90)
    assert d.n_groups == 50 and (np.bincount(d.groups) == 90).all()
    assert "i // 90" in d.meta["groups"]
    assert len(d.tag_names) == 374 and all(isinstance(t, str) and t for t in d.tag_names)
    assert len(set(d.tag_names)) == 374 and d.tag_names[:3] == ["city", "mountain", "sky"]
    assert len(d.layers) == 2
    assert np.array_equal(np.sort(np.concatenate(d.layers)), np.arange(374))  # a partition of all tags
    assert d.meta["layers"]["method"] == "hmlkit.tags.estimate_layers"
    assert d.meta["layers"]["sizes"] == [len(l) for l in d.layers]
    assert require(d, groups=True, hierarchy=True) is d


@real
def test_load_dataset_name_and_path(corel5k):
    for d in (load_dataset("corel5k"), load_dataset(corel5k_path())):
        assert d.name == "corel5k" and d.tag_names == corel5k.tag_names
        assert np.array_equal(d.X, corel5k.X) and (d.Y != corel5k.Y).nnz == 0
        assert np.array_equal(d.groups, corel5k.groups)
        assert all(np.array_equal(a, b) for a, b in zip(d.layers, corel5k.layers))
        assert len(d.layers) == len(corel5k.layers)


@real
def test_flat_and_options():
    for d in (load_corel5k(n_layers=1), load_corel5k(n_layers=None), load_dataset("corel5k", n_layers=1)):
        assert len(d.layers) == 1 and np.array_equal(d.layers[0], np.arange(374))
        assert d.meta["layers"]["method"] == "flat"
    d3 = load_dataset("corel5k", n_layers=3, random_state=1)
    assert len(d3.layers) == 3 and d3.meta["layers"]["random_state"] == 1
    sub = load_dataset("corel5k", n_samples=200, random_state=1)
    assert sub.n_samples == 200 and sub.n_groups > 1
    with pytest.raises(ValueError, match="unexpected options for corel5k: recipe"):
        load_dataset("corel5k", recipe="hmlrf")
    with pytest.raises(ValueError, match="n_layers must be a positive integer or None"):
        load_corel5k(n_layers=0)


def test_other_row_counts_get_no_groups(tmp_path):
    rows = [{3, 499}, {0, 17, 500, 501}, {498}, {1, 2, 3, 501}, set()]
    path, tags = _write_corel5k_like(tmp_path / "Corel5k-test-sparse.arff", rows)
    for d in (load_corel5k(path, n_layers=1), load_dataset(path, n_layers=1)):
        assert (d.n_samples, d.n_features, d.n_tags) == (5, 499, 3) and d.name == "corel5k"
        assert d.groups is None and "none: 5 rows" in d.meta["groups"]
        assert d.tag_names == tags and d.Y.toarray()[1].tolist() == [0, 1, 1]
    with pytest.raises(ValueError, match="corel5k has no ground-truth groups"):
        require(d, study="the clustering tables")
    d2 = load_corel5k(path, n_layers=2, random_state=0)
    assert np.array_equal(np.sort(np.concatenate(d2.layers)), np.arange(3)) and len(d2.layers) == 2
    # an explicit layout reads it as a plain ARFF
    plain = load_dataset(path, n_features=499)
    assert plain.name == path.stem and plain.groups is None


def test_missing_file_names_places_and_fetch(tmp_path, monkeypatch):
    monkeypatch.setenv("HMLKIT_SHARED_DATA", str(tmp_path / "shared"))
    monkeypatch.setenv("HMLKIT_DATA_DIR", str(tmp_path / "cache"))
    assert corel5k_path() == tmp_path / "shared" / "corel5k" / "Corel5k-train-sparse.arff"
    shared = str(tmp_path / "shared" / "corel5k" / "Corel5k-train-sparse.arff")
    cache = str(tmp_path / "cache" / "corel5k" / "Corel5k-train-sparse.arff")
    for call in (load_corel5k, lambda: load_dataset("corel5k")):
        with pytest.raises(FileNotFoundError) as e:
            call()
        msg = str(e.value)
        assert shared in msg and cache in msg and "fetch_corel5k()" in msg
    with pytest.raises(FileNotFoundError, match=r"looked at: .*nope\.arff\..*fetch_corel5k\(\)"):
        load_corel5k(tmp_path / "nope.arff")


def test_found_in_shared_then_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HMLKIT_SHARED_DATA", str(tmp_path / "shared"))
    monkeypatch.setenv("HMLKIT_DATA_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache" / "corel5k").mkdir(parents=True)
    cached, _ = _write_corel5k_like(tmp_path / "cache" / "corel5k" / "Corel5k-train-sparse.arff", [{1, 500}] * 2)
    d = load_dataset("corel5k", n_layers=1)
    assert d.n_samples == 2 and d.meta["source_path"] == str(cached)
    (tmp_path / "shared" / "corel5k").mkdir(parents=True)
    shared, _ = _write_corel5k_like(corel5k_path(), [{2, 501}] * 3)
    d = load_corel5k(n_layers=1)
    assert d.n_samples == 3 and d.meta["source_path"] == str(shared)


def test_load_arff_is_called_with_499_features(tmp_path, monkeypatch):
    path, _ = _write_corel5k_like(tmp_path / "Corel5k-train-sparse.arff", [{0, 500}] * 2)
    calls = []
    real_load_arff = hd.arff.load_arff

    def load_arff(p, **kw):
        calls.append(kw)
        return real_load_arff(p, **kw)

    monkeypatch.setattr(hd.arff, "load_arff", load_arff)
    load_dataset(path, n_layers=1)
    assert calls == [{"n_features": 499, "name": "corel5k"}]


def test_studies_accept_the_name():
    from hmlkit.studies import check_dataset, dataset_name

    assert check_dataset("corel5k") == "corel5k" and dataset_name("corel5k") == "corel5k"
