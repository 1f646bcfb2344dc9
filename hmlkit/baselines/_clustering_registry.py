"""Registry entries of the clustering methods (Tables 1-3).

Factory convention: ``factory(n_clusters=..., random_state=..., **params)``
returns an unfitted estimator with ``fit``/``fit_predict`` and ``labels_``
(and ``affinity_`` where the method has one). A study runs a method for an
input mode with ONE call, ``hmlkit.baselines.run.run_clustering(name, mode,
data, n_clusters, random_state)``, which builds the mode's input
(``hmlkit.baselines.inputs.make_input``) and says how it is passed to ``fit``.
"""
from __future__ import annotations

from ._spec import MethodSpec

SINGLE = ("vifeat", "bitag", "detscore", "cmb")


def _hmlrf(**params):
    from ..cluster import HMLClustering

    return HMLClustering(**params)


def _lazy(module, cls):
    def factory(**params):
        import importlib

        return getattr(importlib.import_module(f"hmlkit.baselines.{module}"), cls)(**params)

    return factory


def _torch_available(name):
    def available():
        from .deep import torch_available

        return torch_available(name)

    return available


def _deep(name, cls):
    def factory(**params):
        from . import deep

        ok, why = deep.torch_available(name)
        if not ok:
            raise deep.DeepDependencyError(why)
        return getattr(deep, cls)(**params)

    return factory


def clustering_methods():
    return [
        MethodSpec("hmlrf", "clustering", _hmlrf, ("hml",), "Wang, Zhu, Gong (this paper)",
                   "HML-RF affinity, kNN graph, spectral clustering"),
        MethodSpec("kmeans", "clustering", _lazy("classic", "KMeansClustering"), SINGLE,
                   "MacQueen 1967 [2]", "K-means (scikit-learn, k-means++)"),
        MethodSpec("spclust", "clustering", _lazy("classic", "SpectralClustering"), SINGLE + ("blm",),
                   "Ng, Jordan, Weiss, NIPS 2002 [15]",
                   "spectral clustering on a Gaussian kNN affinity; blm: averaged normalised per-modality affinities"),
        MethodSpec("affprop", "clustering", _lazy("classic", "AffinityPropagationClustering"), SINGLE,
                   "Frey & Dueck, Science 2007 [70]", "affinity propagation, preference searched for n_clusters"),
        MethodSpec("clustrf", "clustering", _lazy("clustrf", "ClusteringRandomForest"), SINGLE,
                   "Breiman 2001 [53]; Shi & Horvath, JCGS 2006 [54]",
                   "pseudo two-class random forest, leaf co-membership affinity, spectral clustering"),
        MethodSpec("ccforest", "clustering", _lazy("ccforest", "ConstrainedClusteringForest"), ("blm",),
                   "Zhu, Loy, Gong, ICCV 2013 [51]",
                   "multi-source clustering forest (visual splits, visual pseudo two-class + tag Gini gain), "
                   "leaf affinity, spectral clustering"),
        MethodSpec("aasc", "clustering", _lazy("aasc", "AffinityAggregationSpectralClustering"), ("blm",),
                   "Huang, Chuang, Chen, CVPR 2012 [14]",
                   "affinity aggregation: per-modality affinity weights learnt with the spectral embedding"),
        MethodSpec("cca_spclust", "clustering", _lazy("cca", "CCASpectralClustering"), ("blm",),
                   "Hardoon, Szedmak, Shawe-Taylor, Neural Comput. 2004 [20]",
                   "regularised closed-form CCA of visual and tag views, spectral clustering of the embedding"),
        MethodSpec("3vcca_spclust", "clustering", _lazy("cca", "ThreeViewCCASpectralClustering"), ("blm",),
                   "Gong, Ke, Isard, Lazebnik, IJCV 2014 [22]",
                   "three-view CCA (third view: abstract tag layer), spectral clustering of the embedding"),
        MethodSpec("dcca", "clustering", _deep("dcca", "DCCASpectralClustering"), ("blm",),
                   "Andrew, Arora, Bilmes, Livescu, ICML 2013 [25]",
                   "deep CCA (one MLP per view, CCA loss), spectral clustering of the common space",
                   available=_torch_available("dcca")),
        MethodSpec("dccae", "clustering", _deep("dccae", "DCCAESpectralClustering"), ("blm",),
                   "Wang, Arora, Livescu, Bilmes, ICML 2015 [26]",
                   "deep canonically correlated autoencoders, spectral clustering of the common space",
                   available=_torch_available("dccae")),
        MethodSpec("mmc", "clustering", _lazy("mmc", "MMC"), ("vifeat", "bitag", "detscore", "cmb", "blm"),
                   "Xu et al. NIPS 2004; multi-class with balance bounds as in Zhou et al. NIPS 2013 (Eq. 1-2)",
                   "multi-class maximum margin clustering, balanced labelling ILP (exact, as a min-cost flow); fit_predict(X)"),
        MethodSpec("lmmc", "clustering", _lazy("lmmc", "LatentMMC"), ("detscore",),
                   "Zhou, Lan, Vahdat, Mori, Latent Maximum Margin Clustering, NIPS 2013",
                   "latent tag model on tag detection scores; fit_predict(S)"),
        MethodSpec("ghfart", "clustering", _lazy("ghfart", "GHFART"), ("blm",),
                   "Meng, Tan, Xu, Semi-Supervised Heterogeneous Fusion for Multimedia Data Co-clustering, TKDE 2014",
                   "GHF-ART, visual + tag channels, adaptive weights; fit_predict(X, Y); n_clusters merges ART clusters"),
    ]
