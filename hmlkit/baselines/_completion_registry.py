"""Registry entries of the tag completion methods (Tables 6-8)."""
from __future__ import annotations

from ._spec import MethodSpec


def _hmlrf(method):
    def factory(**params):
        from ..complete import HMLTagCompleter

        return HMLTagCompleter(method=method, **params)

    return factory


def completion_methods():
    return [
        MethodSpec(f"hmlrf_{m.lower()}", "completion", _hmlrf(m), ("hml",), "Wang, Zhu, Gong (this paper)",
                   f"HML-RF({m}) tag completion")
        for m in ("LN", "GC", "AM")
    ]


def _mhcrf_detector(**params):
    from .mhcrf import MHCRFTagCompleter

    return MHCRFTagCompleter(**params)


def mhcrf_completion_methods():
    """M-HCRF (seed 003) used as a per-tag detector: cross-validated P(tag | visual, other tags).

    Input: visual features and observed tags together ("cmb"). Its scores are also DetScore-style
    features: ``hmlkit.baselines.mhcrf.mhcrf_tag_scores``.
    """
    return [
        MethodSpec("mhcrf", "completion", _mhcrf_detector, ("cmb",),
                   "Jiang, Wu, Zhang, Tang, Lu, Zhuang, Pattern Recognit. Lett. 2015",
                   "M-HCRF per-tag detectors (visual PCA + other observed tags), cross-validated "
                   "detection probabilities as completion scores; the detector use of M-HCRF, not its "
                   "paper's application. Cost: n_tags x n_folds fits; tags= restricts to a subset"),
    ]


_completion_methods_before_mhcrf = completion_methods


def completion_methods():  # noqa: F811 - extends the list above (append-only registry edits)
    return list(_completion_methods_before_mhcrf()) + mhcrf_completion_methods()
