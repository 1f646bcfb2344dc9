"""The HML-RF forest: numba kernels (``_criterion``, ``_builder``) kept apart
from the scikit-learn-style estimator (``estimator.HMLForest``)."""
from .estimator import HMLForest

__all__ = ["HMLForest"]
