"""The kit's npz format: exact round trip, hand-made files, malformed files."""
import numpy as np
import pytest
import scipy.sparse as sp

from hmlkit.data import TaggedData
from hmlkit.data.npz import load_npz, save_npz


def _data():
    rng = np.random.default_rng(0)
    Y = (rng.random((9, 5)) < 0.4).astype(np.uint8)
    Yt = Y.copy()
    Yt[:, 4] = 1
    return TaggedData(
        X=rng.random((9, 3)), Y=Y, layers=[np.array([0, 2]), np.array([1, 3, 4])],
        tag_names=["party", "food", "parade", "park", "people"], groups=rng.integers(0, 3, 9),
        Y_true=Yt, name="toy", meta={"group_names": ["a", "b", "c"], "seed": 3, "obj": object()},
    )


def test_round_trip_exact(tmp_path):
    d = _data()
    path = save_npz(tmp_path / "toy", d)
    assert path.name == "toy.npz"
    e = load_npz(path)
    np.testing.assert_array_equal(e.X, d.X)
    assert (e.Y != d.Y).nnz == 0 and (e.Y_true != d.Y_true).nnz == 0
    assert e.tag_names == d.tag_names and e.name == "toy"
    assert [l.tolist() for l in e.layers] == [[0, 2], [1, 3, 4]]
    np.testing.assert_array_equal(e.groups, d.groups)
    assert e.meta["group_names"] == ["a", "b", "c"] and e.meta["seed"] == 3
    assert "obj" not in e.meta  # not JSON-able provenance is dropped, not pickled
    assert load_npz(path, name="other").name == "other"


def test_hand_made_dense_file(tmp_path):
    X = np.arange(6, dtype=float).reshape(3, 2)
    Y = np.array([[1, 0], [0, 0], [1, 1]])
    np.savez(tmp_path / "plain.npz", X=X, Y=Y)
    d = load_npz(tmp_path / "plain.npz")
    assert d.name == "plain" and d.groups is None and d.Y_true is None and len(d.layers) == 1
    np.testing.assert_array_equal(d.Y.toarray(), Y)


def test_malformed(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.npz"):
        load_npz(tmp_path / "missing.npz")
    np.savez(tmp_path / "noy.npz", X=np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"noy\.npz: no observed tags"):
        load_npz(tmp_path / "noy.npz")
    np.savez(tmp_path / "rows.npz", X=np.ones((2, 2)), Y=np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"rows\.npz: Y has 3 rows but X has 2"):
        load_npz(tmp_path / "rows.npz")
    np.savez(tmp_path / "vals.npz", X=np.ones((2, 2)), Y=np.full((2, 2), 2))
    with pytest.raises(ValueError, match=r"vals\.npz: Y must contain only 0/1"):
        load_npz(tmp_path / "vals.npz")
    np.savez(tmp_path / "names.npz", X=np.ones((2, 2)), Y=np.ones((2, 2)), tag_names=np.array(["a"]))
    with pytest.raises(ValueError, match=r"names\.npz: tag_names has 1 names"):
        load_npz(tmp_path / "names.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"junk\.npz: not a readable"):
        load_npz(tmp_path / "junk.npz")
    Y = sp.csr_matrix(np.eye(2))
    np.savez(tmp_path / "part.npz", X=np.ones((2, 2)), Y_indptr=Y.indptr, Y_data=Y.data)
    with pytest.raises(ValueError, match=r"part\.npz: Y is stored sparse but Y_indices, Y_shape"):
        load_npz(tmp_path / "part.npz")
