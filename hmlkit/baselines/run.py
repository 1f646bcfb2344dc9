"""One call for a study to run any clustering method of Tables 1-3 in any input mode.

>>> from hmlkit.baselines.run import run_clustering
>>> res = run_clustering("spclust", "blm", data, random_state=0)
>>> res.labels, res.affinity          # affinity is None for K-means / AffProp

How the input reaches the estimator (``hmlkit.baselines.inputs``):

* ``vifeat`` / ``bitag`` / ``detscore`` / ``cmb``: ``est.fit(Z)`` with ``Z``
  the one (n, k) matrix of that mode;
* ``blm``: ``est.fit(X, Y, layers=data.layers)`` with the two modalities
  apart (``layers`` is used by 3VCCA only: its third view is the most
  abstract tag layer ``layers[0]``);
* ``hml`` (HML-RF): ``est.fit(data.X, data.Y, layers=data.layers)``.

The estimator is built by the registry factory as
``factory(n_clusters=..., random_state=..., **params)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .inputs import make_input


@dataclass
class ClusteringResult:
    """What ``run_clustering`` returns."""

    method: str
    mode: str
    labels: np.ndarray
    affinity: Any  # csr / dense (n, n) or None
    estimator: Any


def run_clustering(name, mode, data, n_clusters=None, random_state=None, **params) -> ClusteringResult:
    """Fit registered clustering method ``name`` on ``data`` in input ``mode``.

    ``n_clusters`` defaults to the number of ground-truth groups of ``data``.
    Extra ``params`` go to the method's factory (e.g. ``n_estimators``).
    """
    from . import get_method

    spec = get_method(name)
    if spec.kind != "clustering":
        raise ValueError(f"{name!r} is a {spec.kind} method, not a clustering method")
    if mode not in spec.input_modes:
        raise ValueError(f"method {name!r} does not take input mode {mode!r}; it takes {', '.join(spec.input_modes)}")
    ok, why = spec.available()
    if not ok:
        raise ImportError(f"method {name!r} is not available: {why}")
    if n_clusters is None:
        if data.n_groups is None:
            raise ValueError("n_clusters not given and data has no ground-truth groups to take it from")
        n_clusters = data.n_groups
    est = spec.factory(n_clusters=n_clusters, random_state=random_state, **params)
    if mode == "hml":
        est.fit(data.X, data.Y, layers=data.layers)
    elif mode == "blm":
        X, Y = make_input(mode, data, random_state=random_state)
        est.fit(X, Y, layers=data.layers)
    else:
        est.fit(make_input(mode, data, random_state=random_state))
    return ClusteringResult(name, mode, np.asarray(est.labels_), getattr(est, "affinity_", None), est)
