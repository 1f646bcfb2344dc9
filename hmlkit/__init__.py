"""hmlkit: Hierarchical-Multi-Label Random Forests for sparsely tagged visual data.

The model (``HMLForest``) and its two uses, clustering (``HMLClustering``) and
missing-tag completion (``HMLTagCompleter``), after Wang, Zhu & Gong,
"Discovering Visual Concept Structure with Sparse and Incomplete Tags".
"""
__version__ = "0.1.0"

from ._numba_cache import install as _install_numba_cache

# before any kernel is defined: the kit's kernels get a cache in step with every kernel
# source, healed when damaged; nothing is deleted (see _numba_cache)
_install_numba_cache()

_LAZY = {
    "HMLForest": "hmlkit.forest",
    "HMLClustering": "hmlkit.cluster",
    "HMLTagCompleter": "hmlkit.complete",
    "TaggedData": "hmlkit.data",
}


def __getattr__(name):
    # Lazy so that `import hmlkit` stays cheap (numba compiles on first use).
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'hmlkit' has no attribute {name!r}")


__all__ = list(_LAZY) + ["__version__"]
