"""load_dataset dispatch and require messages (other loaders monkeypatched where not ours)."""
import importlib.util

import numpy as np
import pytest

from hmlkit.data import datasets
from hmlkit._paths import corel16k_path
from hmlkit.data import TaggedData, load_dataset, require, save_npz


def _toy(n=12, groups=True, name="toy"):
    rng = np.random.default_rng(0)
    return TaggedData(X=rng.random((n, 3)), Y=(rng.random((n, 4)) < 0.5).astype(np.uint8),
                      groups=rng.integers(0, 3, n) if groups else None, name=name)


@pytest.fixture
def fake_arff(monkeypatch):
    calls = []

    def load_arff(path, n_features=None, n_labels=None, label_location="end", name=None):
        calls.append(dict(path=path, n_features=n_features, n_labels=n_labels,
                          label_location=label_location, name=name))
        return _toy(groups=False, name=name or "arff")

    monkeypatch.setattr(datasets, "load_arff", load_arff)
    return calls


def test_profile_goes_to_make_synthetic(monkeypatch):
    calls = []

    def make_synthetic(profile="trecvid", n_samples=None, random_state=0):
        calls.append((profile, n_samples, random_state))
        return _toy(name=profile)

    monkeypatch.setattr(datasets, "make_synthetic", make_synthetic)
    assert load_dataset("nuswide", n_samples=300, random_state=7).name == "nuswide"
    assert calls == [("nuswide", 300, 7)]
    with pytest.raises(ValueError, match="unexpected options"):
        load_dataset("trecvid", recipe="x")


def test_arff_conventions(tmp_path, fake_arff):
    corel = tmp_path / "Corel16k005-train.arff"
    corel.write_text("@relation Corel16k005-train\n@data\n1\n")  # read by the fake loader
    d = load_dataset(corel)
    assert d.name == "corel16k" and fake_arff[-1]["n_features"] == 500 and fake_arff[-1]["path"] == corel
    plain = tmp_path / "scene.arff"
    plain.write_text("% comment\n@relation scene\n@attribute a numeric\n@data\n1\n")
    with pytest.raises(ValueError, match=r"scene\.arff: cannot tell features from labels.*n_features="):
        load_dataset(plain)
    load_dataset(plain, n_labels=6)
    assert fake_arff[-1]["n_labels"] == 6 and fake_arff[-1]["n_features"] is None
    meka = tmp_path / "meka.arff"
    meka.write_text("@relation 'Music: -C 6'\n@data\n1\n")
    load_dataset(meka)
    assert fake_arff[-1]["path"] == meka and fake_arff[-1]["n_features"] is None
    with pytest.raises(ValueError, match="unexpected options for an ARFF file: recipe"):
        load_dataset(meka, recipe="hmlrf")


def test_npz_and_subsample(tmp_path):
    p = save_npz(tmp_path / "toy.npz", _toy(n=30))
    full = load_dataset(str(p))
    assert full.n_samples == 30
    a = load_dataset(p, n_samples=10, random_state=3)
    b = load_dataset(p, n_samples=10, random_state=3)
    assert a.n_samples == 10 and np.array_equal(a.X, b.X) and a.meta["subsample"]["n_samples"] == 10
    rows = [np.flatnonzero((full.X == x).all(1))[0] for x in a.X]
    assert rows == sorted(rows) and np.array_equal(a.groups, full.groups[rows])
    assert load_dataset(p, n_samples=100).n_samples == 30
    with pytest.raises(ValueError, match="n_samples must be a positive integer"):
        load_dataset(p, n_samples=0)


def test_nuswide_folder(tmp_path):
    from test_loaders_nuswide import N, _labels, make_layout

    make_layout(tmp_path / "NUS-WIDE", ["animal", "beach", "clouds", "sky"], _labels(4))
    d = load_dataset(tmp_path / "NUS-WIDE", features="CH", recipe=None)
    assert d.n_samples == N and d.n_features == 64
    (tmp_path / "other").mkdir()
    with pytest.raises(ValueError, match="not in the NUS-WIDE layout"):
        load_dataset(tmp_path / "other")


def test_bad_specs(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"dataset not found: .*nope\.arff"):
        load_dataset(tmp_path / "nope.arff")
    (tmp_path / "x.csv").write_text("1,2\n")
    with pytest.raises(ValueError, match=r"unknown kind of file '\.csv'; accepted: a synthetic profile name"):
        load_dataset(tmp_path / "x.csv")
    with pytest.raises(ValueError, match="must be a name or a path"):
        load_dataset(3.5)
    with pytest.raises(FileNotFoundError, match="dataset not found: imagenet"):
        load_dataset("imagenet")


def test_require_messages():
    d = _toy(groups=False, name="corel16k")
    with pytest.raises(ValueError, match="^corel16k has no ground-truth groups: the clustering tables need them$"):
        require(d, groups=True, study="the clustering tables")
    with pytest.raises(ValueError, match="no complete tags \\(Y_true\\): the completion study needs them"):
        require(d, groups=False, Y_true=True, study="the completion study")
    with pytest.raises(ValueError, match="flat tag set: Table 4 needs a hierarchy"):
        require(d, groups=False, hierarchy=True, study="Table 4")
    ok = _toy()
    assert require(ok, groups=True) is ok


@pytest.mark.skipif(importlib.util.find_spec("hmlkit.data.arff") is None,
                    reason="hmlkit.data.arff (branch 'data') not merged yet")
@pytest.mark.skipif(not corel16k_path().is_file(), reason="shared Corel16k development set absent")
def test_real_corel16k():
    d = load_dataset(corel16k_path())
    assert (d.n_samples, d.n_features, d.n_tags) == (1744, 500, 153)
    assert d.name == "corel16k" and d.groups is None
    assert load_dataset("corel16k").n_samples == 1744
    with pytest.raises(ValueError, match="corel16k has no ground-truth groups: the clustering tables need them"):
        require(d, study="the clustering tables")
