"""DCCA / DCCAE (optional PyTorch): recovery, determinism, CCA loss reference, missing torch."""
import sys

import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score as nmi

from hmlkit.baselines.inputs import make_input
from hmlkit.baselines.run import run_clustering

from test_baselines_clustering import _blobs


@pytest.fixture(scope="module")
def blobs():
    return _blobs()


@pytest.mark.parametrize("name", ["dcca", "dccae"])
def test_deep_recovers_blobs_and_is_deterministic(blobs, name):
    pytest.importorskip("torch")
    r1 = run_clustering(name, "blm", blobs, random_state=0, epochs=15)
    r2 = run_clustering(name, "blm", blobs, random_state=0, epochs=15)
    assert nmi(blobs.groups, r1.labels) >= 0.9
    np.testing.assert_array_equal(r1.labels, r2.labels)
    loss = r1.estimator.loss_
    assert len(loss) == 15 and loss[-1] < loss[0]  # training increases the correlation


def test_cca_loss_is_total_canonical_correlation():
    torch = pytest.importorskip("torch")
    from hmlkit.baselines.cca import multiview_cca
    from hmlkit.baselines.deep import cca_loss

    rng = np.random.default_rng(0)
    z = rng.normal(size=(400, 2))
    A = np.c_[z, rng.normal(size=(400, 2))] @ rng.normal(size=(4, 4))
    B = np.c_[z + 0.7 * rng.normal(size=(400, 2)), rng.normal(size=(400, 1))] @ rng.normal(size=(3, 3))
    loss = float(cca_loss(torch.as_tensor(A), torch.as_tensor(B), reg=0.0))
    vals, _, _ = multiview_cca([A, B], 3, reg=0.0)
    assert abs(-loss - np.sum(vals - 1)) < 1e-6


def test_deep_bad_input(blobs):
    pytest.importorskip("torch")
    from hmlkit.baselines.deep import DCCASpectralClustering

    X, Y = make_input("blm", blobs)
    with pytest.raises(ValueError, match="rows"):
        DCCASpectralClustering(3).fit(X, Y[:-3])
    with pytest.raises(ValueError, match="larger than"):
        DCCASpectralClustering(1000).fit(X, Y)
    with pytest.raises(ValueError, match="epochs"):
        DCCASpectralClustering(3, epochs=0).fit(X, Y)


def test_without_torch_clear_error(blobs, monkeypatch):
    from hmlkit.baselines import get_method
    from hmlkit.baselines.deep import DCCAESpectralClustering, DeepDependencyError

    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    ok, why = get_method("dcca").available()
    assert not ok and why == "dcca needs PyTorch: pip install 'hmlkit[deep]'"
    with pytest.raises(ImportError, match="needs PyTorch"):
        run_clustering("dccae", "blm", blobs)
    with pytest.raises(DeepDependencyError, match=r"dcca needs PyTorch: pip install 'hmlkit\[deep\]'"):
        get_method("dcca").factory(n_clusters=3)
    X, Y = make_input("blm", blobs)
    with pytest.raises(DeepDependencyError, match="dccae needs PyTorch"):
        DCCAESpectralClustering(3).fit(X, Y)
