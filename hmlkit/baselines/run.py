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

The estimator is the registry factory's, with ``n_clusters``, ``random_state`` and the
extra parameters set (:func:`make_estimator`: a parameter it does not take raises).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data import make_synthetic
from ..data.datasets import SYNTHETIC_PROFILES
from ..metrics import clustering_scores
from ._spec import MethodParameterError, build_estimator  # noqa: F401 (MethodParameterError: API)
from .inputs import INPUT_MODES, fit_in_mode  # noqa: F401 (fit_in_mode: API)
from .registry import get_method


@dataclass
class ClusteringResult:
    """What ``run_clustering`` returns."""

    method: str
    mode: str
    labels: np.ndarray
    affinity: Any  # csr / dense (n, n) or None
    estimator: Any


def make_estimator(method, **params):
    """The unfitted estimator of registered method ``method`` (a name or a
    :class:`MethodSpec`) with ``params`` set (:func:`hmlkit.baselines._spec.build_estimator`:
    a parameter it does not take raises :class:`MethodParameterError`)."""
    spec = get_method(method) if isinstance(method, str) else method
    return build_estimator(spec, **params)


def run_clustering(name, mode, data, n_clusters=None, random_state=None, **params) -> ClusteringResult:
    """Fit registered clustering method ``name`` on ``data`` in input ``mode``.

    ``n_clusters`` defaults to the number of ground-truth groups of ``data``.
    Extra ``params`` are set on the method's estimator (e.g. ``n_estimators``); one it does
    not take raises :class:`MethodParameterError`.
    """
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
    est = make_estimator(name, n_clusters=n_clusters, random_state=random_state, **params)
    fit_in_mode(est, mode, data, random_state=random_state)
    return ClusteringResult(name, mode, np.asarray(est.labels_), getattr(est, "affinity_", None), est)


def main(argv=None):
    """``python -m hmlkit.baselines.run``: Table-1-style scores on a synthetic profile.

    Example: ``python -m hmlkit.baselines.run --profile trecvid --methods kmeans,spclust
    --modes vifeat,bitag --param n_estimators=200``. Each (method, mode) the
    method supports prints purity, NMI, RI, F1, ARI and the wall time.
    """
    import argparse
    import ast
    import time

    ap = argparse.ArgumentParser(prog="python -m hmlkit.baselines.run", description=main.__doc__.split("\n")[0])
    ap.add_argument("--profile", default="trecvid", choices=SYNTHETIC_PROFILES)
    ap.add_argument("--n-samples", type=int, default=None)
    ap.add_argument("--methods", required=True, help="comma-separated registry names")
    ap.add_argument("--modes", default=None, help="comma-separated input modes (default: all a method takes)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--param", action="append", default=[],
                    help="name=value passed to every method whose factory accepts it (repeatable)")
    args = ap.parse_args(argv)
    # every name checked before the data are made and the first method fits
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not methods:
        ap.error("--methods: no method given")
    for name in methods:
        try:
            kind = get_method(name).kind
        except ValueError as exc:
            ap.error(f"--methods: {exc}")
        if kind != "clustering":
            ap.error(f"--methods: {name!r} is a {kind} method, not a clustering method")
    modes = None if args.modes is None else [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes or [] if m not in INPUT_MODES]
    if bad or modes == []:
        ap.error(f"--modes: unknown input mode(s) {', '.join(map(repr, bad)) or 'none given'}; "
                 f"known: {', '.join(INPUT_MODES)}")
    params = {}
    for p in args.param:
        k, _, v = p.partition("=")
        owner = {"random_state": "--seed", "n_clusters": "the data set's number of groups"}.get(k)
        if owner:  # passed by the run itself: a second value crashed run_clustering with a TypeError
            ap.error(f"--param {k}: set by the run ({owner}), not by --param")
        if not k or not _:
            ap.error(f"--param {p!r}: expected name=value")
        try:
            params[k] = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            params[k] = v
    data = make_synthetic(args.profile, n_samples=args.n_samples, random_state=args.seed)
    print(f"# {data!r} seed={args.seed} params={params}")
    print(f"{'method':<14} {'mode':<8} {'purity':>6} {'nmi':>6} {'ri':>6} {'f1':>6} {'ari':>6} {'sec':>7}")
    for name in methods:
        spec = get_method(name)
        modes_of = spec.input_modes if modes is None else [m for m in modes if m in spec.input_modes]
        ok, why = spec.available()
        if not ok:
            print(f"{name:<14} {'':<8} unavailable: {why}")
            continue
        # --param applies to the listed methods that take it; the others say which they leave out
        taken = spec.factory(n_clusters=2).get_params()
        est_params = {k: v for k, v in params.items() if k in taken}
        if len(est_params) < len(params):
            print(f"# {name} takes no parameter {', '.join(sorted(set(params) - set(est_params)))}: not applied")
        for mode in modes_of:
            t = time.perf_counter()
            res = run_clustering(name, mode, data, random_state=args.seed, **est_params)
            s = clustering_scores(data.groups, res.labels)
            print(f"{name:<14} {mode:<8} {s['purity']:6.3f} {s['nmi']:6.3f} {s['ri']:6.3f} {s['f1']:6.3f} "
                  f"{s['ari']:6.3f} {time.perf_counter() - t:7.1f}", flush=True)


if __name__ == "__main__":
    main()
