"""Registry entries of the tag completion methods (Tables 6-8)."""
from __future__ import annotations

from ._spec import MethodSpec, build_estimator


def _hmlrf(method, paper=False):
    """HMLTagCompleter(method): the kit's defaults, or with ``paper`` the
    paper's exact settings (``hmlkit.complete.PAPER_SETTINGS``)."""
    def factory(**params):
        from ..complete import PAPER_SETTINGS, HMLTagCompleter

        return HMLTagCompleter(method=method, **(PAPER_SETTINGS if paper else {}), **params)

    return factory


def _lazy(module, cls):
    """Factory importing ``cls`` from ``hmlkit.baselines.<module>`` on use."""

    def factory(**params):
        import importlib

        return getattr(importlib.import_module(f"hmlkit.baselines.{module}"), cls)(**params)

    return factory


def _cooccur(**params):
    from ..complete import CooccurrenceCompleter  # the core's baseline

    return CooccurrenceCompleter(**params)


def _mhcrf_detector(**params):
    """M-HCRF (seed 003) as a per-tag detector: cross-validated P(tag | visual,
    other tags); its scores are also DetScore-style features
    (``hmlkit.baselines.mhcrf_tags.mhcrf_tag_scores``)."""
    from .mhcrf_tags import MHCRFTagCompleter

    return MHCRFTagCompleter(**params)


def _gc_factory(spec):
    """``<clustering>_gc``: GC completion from ``spec``'s clusters. Params go
    to the clusterer (e.g. ``n_clusters``, ``random_state``), except
    ``input_mode`` (default: ``hml`` if the method takes it, else ``cmb``,
    else its first mode) which says what the clusterer is fitted on."""

    def factory(input_mode=None, **params):
        from .gc import GCCompleter

        modes = tuple(spec.input_modes) or ("vifeat",)
        mode = input_mode or next((m for m in ("hml", "cmb") if m in modes), modes[0])
        if mode not in modes:
            raise ValueError(f"{spec.name} does not take input mode {mode!r}; it takes {modes}")
        return GCCompleter(clusterer=build_estimator(spec, **params), input_mode=mode)

    return factory


def _gc_methods(taken):
    """One GC row per clustering method, built at call time so clustering
    methods added later get their row automatically. A name already taken
    (``hmlrf_gc`` is HML-RF's own GC) is skipped."""
    from ._clustering_registry import clustering_methods

    out = []
    for spec in clustering_methods():
        name = f"{spec.name}_gc"
        if name in taken:
            continue
        out.append(MethodSpec(name, "completion", _gc_factory(spec), spec.input_modes,
                              spec.citation, f"{spec.name}(GC): Eq. 12 completion from its clusters",
                              spec.available))
    return out


def completion_methods():
    methods = [
        MethodSpec(f"hmlrf_{m.lower()}", "completion", _hmlrf(m), ("hml",), "Wang, Zhu, Gong (this paper)",
                   f"HML-RF({m}) tag completion")
        for m in ("LN", "GC", "AM")
    ]
    methods.append(MethodSpec("hmlrf_am_paper", "completion", _hmlrf("AM", paper=True), ("hml",),
                              "Wang, Zhu, Gong (this paper)", "HML-RF(AM) with the paper's exact settings"))
    methods += [
        MethodSpec("lsr", "completion", _lazy("lsr", "LSR"), ("cmb",),
                   "Lin, Ding, Hu, Wang, Ye, CVPR 2013",
                   "image- and tag-specific linear sparse reconstructions"),
        MethodSpec("tcmr", "completion", _lazy("tcmr", "TCMR"), ("cmb",),
                   "Feng, Feng, Jin, Jain, ECCV 2014",
                   "low-rank tag matrix recovery with graph-Laplacian visual consistency"),
        MethodSpec("sfss", "completion", _lazy("sfss", "SFSSCompleter"), ("cmb",),
                   "Ma, Yang, Nie, Uijlings, Sebe, ACM MM 2011",
                   "semi-supervised structural feature selection with sparsity as tag predictor"),
        MethodSpec("fscore_rls", "completion", _lazy("sfss", "FScoreRLSCompleter"), ("cmb",),
                   "Duda, Hart, Stork 2001 (as compared in Ma et al. 2011)",
                   "Fisher-score feature selection + regularised least squares"),
        MethodSpec("fsnm", "completion", _lazy("sfss", "FSNMCompleter"), ("cmb",),
                   "Nie, Huang, Cai, Ding, NIPS 2010",
                   "joint l2,1-norm feature selection + regularised least squares"),
        MethodSpec("cooccur", "completion", _cooccur, ("bitag",),
                   "tag co-occurrence baseline", "sum over observed tags i of P(j | i)"),
        MethodSpec("mhcrf", "completion", _mhcrf_detector, ("cmb",),
                   "Jiang, Wu, Zhang, Tang, Lu, Zhuang, Pattern Recognit. Lett. 2015",
                   "M-HCRF per-tag detectors (visual PCA + other observed tags), cross-validated "
                   "detection probabilities as completion scores; the detector use of M-HCRF, not its "
                   "paper's application. Cost: n_tags x n_folds fits; tags= restricts to a subset"),
    ]
    methods += _gc_methods({m.name for m in methods})
    return methods
