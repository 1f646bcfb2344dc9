"""DCCA (Andrew et al., ICML 2013 [25]) and DCCAE (Wang et al., ICML 2015 [26]) + SpClust.

Optional: needs PyTorch (``pip install 'hmlkit[deep]'``). Without it,
fitting raises :class:`DeepDependencyError` (an ``ImportError``) and the
registry entries report themselves unavailable.

Model (CPU, small by default):

* one MLP per view, ``d_v → hidden → hidden → out_dim`` (ReLU), inputs
  standardised per column (visual) or centred (tags);
* **DCCA** maximises the total canonical correlation of the two outputs on
  each mini-batch: the nuclear norm of ``T = Σ11^-½ Σ12 Σ22^-½`` (Andrew et
  al., Sec 2.1, all ``out_dim`` directions, ridge ``reg`` on Σ11, Σ22; float64);
* **DCCAE** adds one decoder per view (``out_dim → hidden → d_v``) and the
  mean squared reconstruction error, weighted by ``recon_weight``, to the
  negative correlation (Wang et al., Eq. 5);
* after training, linear CCA of the two network outputs on all samples
  (as in both papers) gives the common space; the embedding, its κ-NN
  Gaussian affinity and the spectral clustering are those of CCA+SpClust
  (``hmlkit.baselines.cca``).

Training: Adam, ``epochs`` passes of shuffled mini-batches of
``batch_size`` (a last batch of at most ``out_dim`` samples is skipped: too few for a
covariance); seeded by ``random_state`` (``torch.manual_seed`` inside a fork of torch's
global random state, which the caller keeps, and a seeded batch order), so a fit is
repeatable on one machine.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from .._validation import check_n_clusters, check_not_constant, check_random_state_seed, check_X
from .cca import cca_embedding, multiview_cca
from .classic import knn_gaussian_affinity, spectral_labels

INSTALL_HINT = "pip install 'hmlkit[deep]'"


class DeepDependencyError(ImportError):
    """PyTorch, needed by DCCA / DCCAE, is not installed."""


def torch_available(name="dcca"):
    """``(True, "")`` if PyTorch imports, else ``(False, "<name> needs PyTorch: ...")``."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False, f"{name} needs PyTorch: {INSTALL_HINT}"
    return True, ""


def _require_torch(name):
    try:
        import torch
    except ImportError as exc:
        raise DeepDependencyError(f"{name} needs PyTorch: {INSTALL_HINT}") from exc
    return torch


def _mlp(torch, sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def cca_loss(H1, H2, reg=1e-3):
    """Negative total canonical correlation (nuclear norm of T) of two batches of outputs."""
    import torch

    H1 = H1.double()
    H2 = H2.double()
    n = H1.shape[0]
    H1 = H1 - H1.mean(dim=0, keepdim=True)
    H2 = H2 - H2.mean(dim=0, keepdim=True)
    o1, o2 = H1.shape[1], H2.shape[1]
    S11 = H1.T @ H1 / (n - 1) + reg * torch.eye(o1, dtype=H1.dtype)
    S22 = H2.T @ H2 / (n - 1) + reg * torch.eye(o2, dtype=H2.dtype)
    S12 = H1.T @ H2 / (n - 1)
    # T = L1^-1 S12 L2^-T with Cholesky factors S = L L^T has the singular values of
    # S11^-1/2 S12 S22^-1/2. Not an eigendecomposition: its gradient divides by the gaps
    # between eigenvalues, infinite when outputs collapse (Corel5k with 75 % of tags
    # removed: most tag rows empty, NaN weights after one epoch)
    L1 = torch.linalg.cholesky(S11)
    L2 = torch.linalg.cholesky(S22)
    T = torch.linalg.solve_triangular(L2, torch.linalg.solve_triangular(L1, S12, upper=False).T, upper=False).T
    return -torch.linalg.svdvals(T).sum()


class DCCASpectralClustering(ClusterMixin, BaseEstimator):
    """DCCA+SpClust (module docstring): ``fit(X, Y, layers=None)``.

    Attributes: ``labels_``, ``affinity_``, ``embedding_``, ``loss_``
    (mean training loss per epoch), ``eigvals_`` (linear CCA on the outputs).
    """

    _autoencoder = False
    _name = "dcca"

    def __init__(self, n_clusters=8, hidden=256, out_dim=None, epochs=30, batch_size=256, lr=1e-3,
                 weight_decay=1e-5, reg=1e-3, recon_weight=1.0, eig_power=4.0, n_neighbors=20,
                 random_state=None):
        self.n_clusters = n_clusters
        self.hidden = hidden
        self.out_dim = out_dim
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.reg = reg
        self.recon_weight = recon_weight
        self.eig_power = eig_power
        self.n_neighbors = n_neighbors
        self.random_state = random_state

    def fit(self, X, Y, layers=None):
        if not self._autoencoder and self.recon_weight != 1.0:  # accepted and ignored before
            raise ValueError("recon_weight weighs DCCAE's autoencoders; DCCA has no reconstruction term")
        torch = _require_torch(self._name)
        X = check_X(X, "X", dtype=np.float64)
        Y = check_X(Y, "Y", dtype=np.float64)
        if Y.shape[0] != X.shape[0]:
            raise ValueError(f"Y has {Y.shape[0]} rows but X has {X.shape[0]} samples")
        check_not_constant([X, Y], self._name.upper())
        n = X.shape[0]
        k = check_n_clusters(self.n_clusters, n)
        for name in ("hidden", "epochs", "batch_size"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.out_dim is None:  # the default: 2k directions, as many as both views have
            out = max(1, min(2 * k, X.shape[1], Y.shape[1]))
        else:
            if isinstance(self.out_dim, (bool, np.bool_)) or not isinstance(self.out_dim, (int, np.integer)) \
                    or self.out_dim < 1:
                raise ValueError(f"out_dim must be a positive integer or None, got {self.out_dim!r}")
            out = int(self.out_dim)
            if out > min(X.shape[1], Y.shape[1]):
                raise ValueError(f"out_dim={out} exceeds the narrower view ({X.shape[1]} features, "
                                 f"{Y.shape[1]} tags): CCA has at most {min(X.shape[1], Y.shape[1])} directions")
        bs = int(min(self.batch_size, n))
        if bs < max(out + 1, 2):  # every batch would be skipped: the networks would never train
            raise ValueError(f"batch_size={bs} (at most n_samples) must exceed the output dimension {out} "
                             f"(a batch's covariance needs more samples than directions): raise batch_size "
                             f"or lower out_dim (default 2 x n_clusters)")
        seed = check_random_state_seed(self.random_state)
        # the fit's own torch stream: the caller's global one is left as it was
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed % (2**63))
            self._train(torch, X, Y, k, out, bs, seed)
        return self

    def _train(self, torch, X, Y, k, out, bs, seed):
        n = X.shape[0]
        gen = np.random.default_rng(seed)
        sx = X.std(axis=0)
        Xs = (X - X.mean(axis=0)) / np.where(sx > 0, sx, 1.0)
        Ys = Y - Y.mean(axis=0)
        tX = torch.as_tensor(Xs, dtype=torch.float32)
        tY = torch.as_tensor(Ys, dtype=torch.float32)
        h = int(self.hidden)
        fx = _mlp(torch, [X.shape[1], h, h, out])
        fy = _mlp(torch, [Y.shape[1], h, h, out])
        params = list(fx.parameters()) + list(fy.parameters())
        if self._autoencoder:
            gx = _mlp(torch, [out, h, X.shape[1]])
            gy = _mlp(torch, [out, h, Y.shape[1]])
            params += list(gx.parameters()) + list(gy.parameters())
        opt = torch.optim.Adam(params, lr=self.lr, weight_decay=self.weight_decay)
        self.loss_ = []
        for _ in range(int(self.epochs)):
            perm = gen.permutation(n)
            total, batches = 0.0, 0
            for s in range(0, n, bs):
                idx = perm[s:s + bs]
                if idx.size < max(out + 1, 2):  # a last batch too small for a covariance estimate
                    continue
                idx = torch.as_tensor(idx)
                bx, by = tX[idx], tY[idx]
                hx, hy = fx(bx), fy(by)
                loss = cca_loss(hx, hy, self.reg)
                if self._autoencoder:
                    rec = torch.mean((gx(hx) - bx) ** 2) + torch.mean((gy(hy) - by) ** 2)
                    loss = loss + self.recon_weight * rec.double()
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += float(loss.detach())
                batches += 1
            self.loss_.append(total / max(batches, 1))
        with torch.no_grad():
            HX = fx(tX).double().numpy()
            HY = fy(tY).double().numpy()
        self.eigvals_, W, means = multiview_cca([HX, HY], out, reg=self.reg)
        self.embedding_ = cca_embedding([HX, HY], self.eigvals_, W, means, self.eig_power)
        self.affinity_ = knn_gaussian_affinity(self.embedding_, self.n_neighbors)
        self.labels_ = spectral_labels(self.affinity_, k, n_neighbors=self.n_neighbors, random_state=seed)

    def fit_predict(self, X, Y, layers=None):
        return self.fit(X, Y, layers=layers).labels_


class DCCAESpectralClustering(DCCASpectralClustering):
    """DCCAE+SpClust: DCCA plus per-view autoencoder reconstruction (``recon_weight``)."""

    _autoencoder = True
    _name = "dccae"
