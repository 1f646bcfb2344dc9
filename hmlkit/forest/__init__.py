"""The HML-RF forest: numba kernels kept apart from the scikit-learn-style estimator
(``estimator.HMLForest``): the split keys (``_keys``), the criterion (``_criterion``), the
split search (``_split``), tree growth and the tree loop (``_grow``), routing (``_route``)."""
from .estimator import HMLForest

__all__ = ["HMLForest"]
