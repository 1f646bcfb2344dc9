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
    assert nmi(blobs.groups, r1.labels) >= 0.9  # measured 1.0 (seeds 0-2) here: 0.1 of room
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


def test_cca_loss_gradient_is_finite_when_outputs_collapse():
    """Most tag rows empty (Corel5k with 75 % of tags removed) make the tag network's
    outputs collapse onto a few directions: S22 then has repeated eigenvalues, where an
    eigendecomposition's gradient is NaN (DCCA / DCCAE failed there after one epoch)."""
    torch = pytest.importorskip("torch")
    from hmlkit.baselines.deep import cca_loss

    rng = np.random.default_rng(0)
    H1 = torch.tensor(rng.normal(size=(200, 10)), requires_grad=True)
    h2 = np.zeros((200, 10))
    h2[:, :2] = rng.normal(size=(200, 2))  # 8 of 10 output dims constant
    H2 = torch.tensor(h2, requires_grad=True)
    cca_loss(H1, H2).backward()
    assert torch.isfinite(H1.grad).all() and torch.isfinite(H2.grad).all()


def test_dcca_trains_on_corel5k_with_most_tags_removed():
    pytest.importorskip("torch")
    from hmlkit._paths import corel5k_path
    from hmlkit.baselines.deep import DCCASpectralClustering
    from hmlkit.data import load_dataset, remove_tags

    if not corel5k_path().exists():
        pytest.skip(f"development data not found at {corel5k_path()}")
    d = remove_tags(load_dataset("corel5k"), 0.75, random_state=0)
    est = DCCASpectralClustering(n_clusters=50, epochs=2, random_state=0).fit(d.X[:1500], d.Y[:1500])
    assert np.isfinite(est.loss_).all() and np.isfinite(est.embedding_).all()


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


def test_dcca_refuses_the_reconstruction_weight_it_has_no_use_for():
    from hmlkit.baselines.deep import DCCASpectralClustering

    X = np.random.default_rng(0).normal(size=(30, 4))
    with pytest.raises(ValueError, match="DCCA has no reconstruction term"):  # accepted and ignored before
        DCCASpectralClustering(2, recon_weight=0.5).fit(X, X)


def test_a_batch_too_small_to_train_and_a_bad_out_dim_are_refused():
    """Batches of at most out_dim samples were all skipped: the clusters came from untrained
    networks with a loss of 0 and no word (an audit's finding)."""
    torch = pytest.importorskip("torch")
    from hmlkit.baselines.deep import DCCASpectralClustering

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(120, 12)), (rng.random((120, 9)) < 0.3).astype(float)
    with pytest.raises(ValueError, match="batch_size=8 .* must exceed the output dimension 8"):
        DCCASpectralClustering(n_clusters=4, batch_size=8, out_dim=8, epochs=1).fit(X, Y)
    with pytest.raises(ValueError, match="batch_size=9 .* must exceed the output dimension 9"):
        DCCASpectralClustering(n_clusters=5, epochs=1).fit(X[:9], Y[:9])  # 2k = 10, but 9 tags, 9 samples
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="out_dim must be a positive integer"):
            DCCASpectralClustering(n_clusters=3, out_dim=bad, epochs=1).fit(X, Y)
    with pytest.raises(ValueError, match="out_dim=10 exceeds the narrower view"):
        DCCASpectralClustering(n_clusters=3, out_dim=10, epochs=1).fit(X, Y)
    # a fit draws from a stream of its own: the caller's global torch stream is untouched
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    est = DCCASpectralClustering(n_clusters=3, epochs=2, batch_size=64, random_state=0).fit(X, Y)
    assert torch.equal(torch.rand(3), expected)
    assert all(v != 0.0 for v in est.loss_)  # it trained
