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


# --- seedclust: MMC, Latent MMC (seed 004), GHF-ART (seed 001) ---------------
def _mmc(**params):
    from .mmc import MMC

    return MMC(**params)


def _lmmc(**params):
    from .lmmc import LatentMMC

    return LatentMMC(**params)


def _ghfart(**params):
    from .ghfart import GHFART

    return GHFART(**params)


_SEEDCLUST = [
    MethodSpec("mmc", "clustering", _mmc, ("vifeat", "bitag", "detscore", "cmb", "blm"),
               "Xu et al. NIPS 2004; multi-class with balance bounds as in Zhou et al. NIPS 2013 (Eq. 1-2)",
               "multi-class maximum margin clustering, balanced labelling ILP (HiGHS); fit_predict(X)"),
    MethodSpec("lmmc", "clustering", _lmmc, ("detscore",),
               "Zhou, Lan, Vahdat, Mori, Latent Maximum Margin Clustering, NIPS 2013",
               "latent tag model on tag detection scores; fit_predict(S)"),
    MethodSpec("ghfart", "clustering", _ghfart, ("blm",),
               "Meng, Tan, Xu, Semi-Supervised Heterogeneous Fusion for Multimedia Data Co-clustering, TKDE 2014",
               "GHF-ART, visual + tag channels, adaptive weights; fit_predict(X, Y); n_clusters merges ART clusters"),
]
_clustering_methods_before_seedclust = clustering_methods


def clustering_methods():  # noqa: F811 -- appended entries, see _SEEDCLUST
    return list(_clustering_methods_before_seedclust()) + _SEEDCLUST

