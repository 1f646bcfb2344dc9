"""Loaders refuse corrupt files and odd arguments with a ValueError naming the file and
key: load_npz, load_arff(n_features=...), load_dataset(n_samples=...)."""
import json

import numpy as np
import pytest
import scipy.sparse as sp

from hmlkit.data import load_dataset
from hmlkit.data.arff import load_arff
from hmlkit.data.npz import load_npz


def _csr(tmp_path, name, Y, **extra):
    Y = sp.csr_matrix(Y)
    arrays = dict(X=np.ones((Y.shape[0], 2), np.float32), Y_data=Y.data.astype(np.uint8), Y_indices=Y.indices,
                  Y_indptr=Y.indptr, Y_shape=np.array(Y.shape))
    arrays.update(extra)
    path = tmp_path / name
    np.savez(path, **arrays)
    return path


def test_npz_sparse_column_out_of_range(tmp_path):
    """Used to load, and fit died later with an IndexError in forest/_tagdata.py."""
    Y = sp.csr_matrix(np.eye(3, dtype=np.uint8))
    path = tmp_path / "col.npz"
    np.savez(path, X=np.ones((3, 2), np.float32), Y_data=Y.data, Y_indices=np.array([0, 1, 7]),
             Y_indptr=Y.indptr, Y_shape=np.array([3, 3]))
    with pytest.raises(ValueError, match=r"col\.npz: Y CSR parts are inconsistent \(indices must be < 3\)"):
        load_npz(path)


def test_npz_that_is_a_npy_file(tmp_path):
    path = tmp_path / "one.npz"
    with open(path, "wb") as fh:
        np.save(fh, np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"one\.npz: holds a single array"):
        load_npz(path)


@pytest.mark.parametrize("meta, match", [("{not json", "key 'meta' is not valid JSON"),
                                         ("[1, 2]", "key 'meta' must be a JSON object")])
def test_npz_bad_meta(tmp_path, meta, match):
    path = _csr(tmp_path, "meta.npz", np.eye(3), meta=np.asarray(meta))
    with pytest.raises(ValueError, match=rf"meta\.npz: {match}"):
        load_npz(path)


def test_npz_object_dtype_X(tmp_path):
    path = tmp_path / "obj.npz"
    np.savez(path, X=np.array([[1, "a"], [2, "b"]], dtype=object), Y=np.eye(2))
    with pytest.raises(ValueError, match=r"obj\.npz: key 'X' cannot be read"):
        load_npz(path)


@pytest.mark.parametrize("layer, match", [([0, 1, 1.5], r"key 'tag_layer' must hold integers, got .*1\.5"),
                                          ([0, 1, -1], r"key 'tag_layer' has -1; values must be >= 0"),
                                          (["a", "b", "c"], r"key 'tag_layer' must hold integers")])
def test_npz_bad_layer_ids(tmp_path, layer, match):
    """[0, 1, 1.5] was truncated to [0, 1, 1]; -1 silently became the most abstract layer."""
    path = _csr(tmp_path, "layers.npz", np.eye(3), tag_layer=np.array(layer))
    with pytest.raises(ValueError, match=rf"layers\.npz: {match}"):
        load_npz(path)


def test_npz_integral_float_layers_and_good_file_still_load(tmp_path):
    path = _csr(tmp_path, "ok.npz", np.eye(3), tag_layer=np.array([0.0, 1.0, 1.0]),
                meta=np.asarray(json.dumps({"a": 1})))
    data = load_npz(path)
    assert [list(l) for l in data.layers] == [[0], [1, 2]] and data.meta["a"] == 1


# ------------------------------------------------------------------ ARFF
ARFF = """@relation 'toy: -C 2'
@attribute y1 {0,1}
@attribute y2 {0,1}
@attribute f1 numeric
@attribute f2 numeric
@data
1,0,0.5,1.5
0,1,2.5,3.5
"""


@pytest.mark.parametrize("kw", [dict(n_features=500.7), dict(n_features="2"), dict(n_features=True),
                                dict(n_labels=1.5), dict(n_labels="2")])
def test_arff_counts_must_be_integers(tmp_path, kw):
    """n_features=500.7 and '500' used to load silently (truncated / parsed)."""
    path = tmp_path / "toy.arff"
    path.write_text(ARFF)
    with pytest.raises(ValueError, match=next(iter(kw))):
        load_arff(path, label_location="start", **kw)
    assert load_arff(path, n_features=2, label_location="start").n_features == 2


# ------------------------------------------------------------------ load_dataset
def test_load_dataset_absurd_n_samples_is_refused_at_once():
    """n_samples=10**9 had no bound and ate memory until the process was killed."""
    with pytest.raises(ValueError, match=r"n_samples=1000000000 is too large for the 'trecvid' profile"):
        load_dataset("trecvid", n_samples=10**9)
    with pytest.raises(ValueError, match="positive integer"):
        load_dataset("trecvid", n_samples=True)
    assert load_dataset("trecvid", n_samples=50).n_samples == 50
