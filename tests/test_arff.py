import time

import numpy as np
import pytest

from hmlkit._paths import corel16k_path
from hmlkit.data import load_arff

NNZ_COREL = 5330  # tag assignments in Corel16k001-test (counted independently with awk)

HEADER = """% a comment
@relation {rel}
@attribute f1 numeric
@attribute f2 real
@attribute f3 numeric
@attribute sky {{0,1}}
@attribute water {{0,1}}
@data
"""
X_EXP = np.array([[0.5, 0, 2], [0, 0, 0], [1, -3, 0.25]], dtype=np.float32)
Y_EXP = np.array([[1, 0], [0, 0], [1, 1]], dtype=np.uint8)


def _write(tmp_path, body, rel="toy", name="toy.arff"):
    p = tmp_path / name
    p.write_text(HEADER.format(rel=rel) + body)
    return p


DENSE = "0.5,0,2,1,0\n0,0,0,0,0\n\n1,-3,0.25,1,1\n"
SPARSE = "{0 0.5, 2 2, 3 1}\n{}\n% a comment inside data\n{0 1, 1 -3, 2 0.25, 3 1, 4 1}\n"


@pytest.mark.parametrize("body", [DENSE, SPARSE], ids=["dense", "sparse"])
@pytest.mark.parametrize("kw", [{"n_features": 3}, {"n_labels": 2}, {"n_features": 3, "n_labels": 2}])
def test_tiny_mulan(tmp_path, body, kw):
    d = load_arff(_write(tmp_path, body), **kw)
    assert d.X.dtype == np.float32
    np.testing.assert_array_equal(d.X, X_EXP)
    np.testing.assert_array_equal(d.Y.toarray(), Y_EXP)
    assert d.Y.dtype == np.uint8
    assert d.tag_names == ["sky", "water"]
    assert d.name == "toy" and d.groups is None and len(d.layers) == 1
    assert d.meta["feature_names"] == ["f1", "f2", "f3"]


def test_labels_first_and_meka(tmp_path):
    # labels at the start: MEKA -C 2 (first two attributes are labels)
    head = "@relation 'scene: -C 2'\n@attribute a {0,1}\n@attribute b {0,1}\n@attribute x numeric\n@data\n"
    p = tmp_path / "meka.arff"
    p.write_text(head + "1,0,3.5\n{1 1, 2 -1}\n")
    d = load_arff(p)
    assert d.tag_names == ["a", "b"]
    np.testing.assert_array_equal(d.Y.toarray(), [[1, 0], [0, 1]])
    np.testing.assert_array_equal(d.X, [[3.5], [-1]])
    # the same layout given explicitly
    d2 = load_arff(p, n_labels=2, label_location="start")
    np.testing.assert_array_equal(d2.Y.toarray(), d.Y.toarray())
    # MEKA negative -C: last |k| attributes
    d3 = load_arff(_write(tmp_path, DENSE, rel="'toy: -C -2'"))
    np.testing.assert_array_equal(d3.Y.toarray(), Y_EXP)
    np.testing.assert_array_equal(d3.X, X_EXP)


def test_missing_file(tmp_path):
    p = tmp_path / "nope.arff"
    with pytest.raises(FileNotFoundError, match="nope.arff"):
        load_arff(p, n_labels=2)


@pytest.mark.parametrize(
    "body, line",
    [
        ("0.5,0,2,1,0\n0,0,0,0\n", 10),  # too few values
        ("0.5,0,2,1,0\n0,0,0,0,0,1\n", 10),  # too many
        ("0.5,0,2,1,0\n0,0,0,2,0\n", 10),  # label not in {0,1}
        ("0.5,0,2,1,0\n\n0,0,0,0,0\n{0 1, 4 7}\n", 12),  # sparse, bad label
    ],
)
def test_malformed(tmp_path, body, line):
    p = _write(tmp_path, body)
    with pytest.raises(ValueError, match=rf"toy\.arff.*line {line}\b"):
        load_arff(p, n_features=3)


def test_numeric_label_not_binary(tmp_path):
    head = "@relation r\n@attribute x numeric\n@attribute lab numeric\n@data\n1,1\n2,0.5\n"
    p = tmp_path / "num.arff"
    p.write_text(head)
    with pytest.raises(ValueError, match=r"num\.arff.*line 6.*0 or 1"):
        load_arff(p, n_labels=1)


def test_layout_errors(tmp_path):
    p = _write(tmp_path, DENSE)
    with pytest.raises(ValueError, match="n_features or n_labels"):
        load_arff(p)  # no -C and no sizes
    with pytest.raises(ValueError):
        load_arff(p, n_features=3, n_labels=3)
    with pytest.raises(ValueError):
        load_arff(p, n_labels=5)
    with pytest.raises(ValueError):
        load_arff(p, n_labels=2, label_location="middle")


def test_corel16k():
    path = corel16k_path()
    if not path.is_file():
        pytest.skip(f"shared Corel16k data not present at {path}")
    t = time.perf_counter()
    d = load_arff(path, n_features=500)
    elapsed = time.perf_counter() - t
    assert d.X.shape == (1744, 500) and d.X.dtype == np.float32
    assert set(np.unique(d.X)) == {0.0, 1.0}
    assert d.n_tags == 153 and d.tag_names[0] == "animal"
    assert d.Y.nnz == NNZ_COREL
    assert abs(d.Y.nnz / 1744 - 3.1) < 0.1
    assert d.name == "Corel16k001-test"
    assert elapsed < 3.0
