"""Registry entries of the clustering methods (Tables 1-3)."""
from __future__ import annotations

from ._spec import MethodSpec


def _hmlrf(**params):
    from ..cluster import HMLClustering

    return HMLClustering(**params)


def clustering_methods():
    return [
        MethodSpec("hmlrf", "clustering", _hmlrf, ("hml",), "Wang, Zhu, Gong (this paper)",
                   "HML-RF affinity, kNN graph, spectral clustering"),
    ]
