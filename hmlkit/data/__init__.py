"""Data: the ``TaggedData`` container, synthetic profiles, loaders, tag sparsifiers."""
from .arff import load_arff
from .container import TaggedData
from .sparsify import hide_tags, remove_tags
from .synthetic import make_synthetic

__all__ = ["TaggedData", "make_synthetic", "load_arff", "remove_tags", "hide_tags"]
