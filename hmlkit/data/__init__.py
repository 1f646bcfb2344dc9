"""Data: the ``TaggedData`` container, synthetic profiles, loaders, tag sparsifiers."""
from .container import TaggedData

__all__ = ["TaggedData"]
