import numpy as np
import pytest
import scipy.sparse as sp

from hmlkit.data import TaggedData, hide_tags, remove_tags


def _data(n=300, m=20, seed=0):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, m)) < 0.2).astype(np.uint8)
    Y[:5] = 0  # some untagged samples
    Y_true = Y.copy()
    Y_true[:, 0] = 1
    return TaggedData(X=rng.random((n, 3)), Y=Y, Y_true=Y_true, groups=rng.integers(0, 3, n))


def test_remove_tags_rate_and_subset():
    d = _data()
    out = remove_tags(d, 0.3, random_state=1)
    assert out.Y.nnz == d.Y.nnz - round(0.3 * d.Y.nnz)
    # removed tags only: observed ⊆ original
    assert (out.Y.multiply(d.Y)).nnz == out.Y.nnz
    assert (out.Y_true != d.Y_true).nnz == 0
    assert out.X is d.X and np.array_equal(out.groups, d.groups)
    assert out.meta["tag_removal_rate"] == 0.3
    assert d.Y.nnz == _data().Y.nnz  # input untouched


def test_remove_tags_deterministic_and_zero():
    d = _data()
    a = remove_tags(d, 0.5, random_state=3)
    b = remove_tags(d, 0.5, random_state=3)
    c = remove_tags(d, 0.5, random_state=4)
    assert (a.Y != b.Y).nnz == 0 and (a.Y != c.Y).nnz > 0
    assert (remove_tags(d, 0.0, random_state=0).Y != d.Y).nnz == 0


def test_remove_tags_uniform_over_tags():
    # every tag column loses about the same share
    d = _data(n=4000, m=10)
    out = remove_tags(d, 0.4, random_state=0)
    kept = np.asarray(out.Y.sum(0)).ravel() / np.asarray(d.Y.sum(0)).ravel()
    assert np.all(np.abs(kept - 0.6) < 0.05)


@pytest.mark.parametrize("bad", [-0.1, 1.0, 1.5, float("nan"), "0.3", None, True])
def test_bad_rates(bad):
    d = _data(n=20)
    with pytest.raises(ValueError):
        remove_tags(d, bad)
    with pytest.raises(ValueError):
        hide_tags(d, bad)


def test_hide_tags_partition():
    d = _data(n=2000, m=30)
    obs, hidden = hide_tags(d, 0.4, random_state=0)
    assert sp.isspmatrix_csr(hidden) and hidden.dtype == np.uint8 and hidden.shape == d.Y.shape
    assert obs.Y.multiply(hidden).nnz == 0
    assert ((obs.Y + hidden) != d.Y).nnz == 0
    assert abs(hidden.nnz / d.Y.nnz - 0.4) < 0.02
    assert (obs.Y_true != d.Y_true).nnz == 0 and obs.X is d.X


def test_hide_tags_stochastic_rounding_per_sample():
    # 1-tag samples: hidden with probability 0.4; 5-tag samples: exactly 2 hidden
    Y = np.zeros((4000, 8), dtype=np.uint8)
    Y[:2000, 3] = 1
    Y[2000:, :5] = 1
    d = TaggedData(X=np.zeros((4000, 1)), Y=Y)
    obs, hidden = hide_tags(d, 0.4, random_state=5)
    h = np.diff(hidden.indptr)
    assert abs(h[:2000].mean() - 0.4) < 0.04 and set(np.unique(h[:2000])) <= {0, 1}
    assert np.all(h[2000:] == 2)
    # the hidden choice within a row is uniform over its tags
    share = np.asarray(hidden[2000:].sum(0)).ravel()[:5] / 2000
    assert np.all(np.abs(share - 0.4) < 0.05)
    # 2.5 expected for k=5 with frac=0.5: 2 or 3, mean 2.5
    _, h2 = hide_tags(d, 0.5, random_state=5)
    k2 = np.diff(h2.indptr)[2000:]
    assert set(np.unique(k2)) == {2, 3} and abs(k2.mean() - 2.5) < 0.05


def test_hide_tags_deterministic():
    d = _data()
    a = hide_tags(d, random_state=7)[1]
    b = hide_tags(d, random_state=7)[1]
    assert (a != b).nnz == 0
