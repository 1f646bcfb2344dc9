"""Which registry entry plays each method of the paper's tables.

The paper's tables name methods (``K-means``, ``3VCCA+SpClust``...); the kit's registry
(:func:`hmlkit.baselines.registry`) names them in lower case. ``resolve`` finds the
entry, or says why there is none: a method the paper lists but the kit lacks is reported
as "not implemented", never dropped.
"""
from __future__ import annotations

# table key -> registry names tried in order
ALIASES = {
    "kmeans": ("kmeans", "k-means"),
    "spclust": ("spclust", "spectral"),
    "clustrf": ("clustrf",),
    "affprop": ("affprop", "affinity_propagation"),
    "mmc": ("mmc",),
    "lmmc": ("lmmc", "l-mmc", "latent_mmc"),
    "cca": ("cca", "cca_spclust", "cca+spclust"),
    "3vcca": ("3vcca", "vcca3", "cca3", "3vcca_spclust"),
    "ccforest": ("ccforest", "cc_forest", "cc-forest"),
    "aasc": ("aasc",),
    "dcca": ("dcca",),
    "dccae": ("dccae",),
    "smmc": ("smmc", "s-mmc", "structural_mmc"),
    "fmmc": ("fmmc", "f-mmc", "flip_mmc"),
    "hmlrf": ("hmlrf",),
    "lsr": ("lsr",),
    "tcmr": ("tcmr",),
    "hmlrf_gc": ("hmlrf_gc",),
    "hmlrf_ln": ("hmlrf_ln",),
    "hmlrf_am": ("hmlrf_am",),
}


def _registry():
    try:
        from ..baselines import registry
    except ImportError as exc:  # pragma: no cover - package always has it
        return {}, f"hmlkit.baselines unavailable: {exc}"
    try:
        return registry(), ""
    except Exception as exc:  # a broken entry must not hide the rest of the table
        return {}, f"registry failed: {exc}"


def resolve(key, kind, mode=None):
    """``(spec, "")`` for the entry that plays table method ``key`` in input ``mode``,
    or ``(None, reason)``."""
    reg, err = _registry()
    if err:
        return None, err
    for name in ALIASES.get(key, (key,)):
        spec = reg.get(name)
        if spec is None:
            continue
        if spec.kind != kind:
            continue
        ok, why = spec.available()
        if not ok:
            return None, f"{name}: unavailable ({why})"
        if mode is not None and spec.input_modes and mode not in spec.input_modes:
            return None, f"{name}: input mode {mode!r} not implemented (has {', '.join(spec.input_modes)})"
        return spec, ""
    return None, f"not implemented: no {kind} method {key!r} in hmlkit.baselines.registry()"


def known_keys():
    return tuple(ALIASES)
