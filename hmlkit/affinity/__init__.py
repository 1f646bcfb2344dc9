"""Forest affinity (Eq. 10) and the kNN graphs built from it, kept sparse throughout.

One module per concern, their names importable from here:

- :mod:`.leaf`: Eq. 10, ``leaf_affinity``;
- :mod:`.knn`: the leaf k-NN (``leaf_knn``, on Dask's workers under joblib's dask backend) and
  the kNN graph of an affinity matrix (``knn_affinity``);
- :mod:`.cosine`: the cosine kNN graph (``cosine_knn_graph``, with the windowed search);
- :mod:`.graph`: the symmetric graph builder and the normalisation (``normalized_graph``).

Their numba kernels are in ``_kernels`` (leaf members, co-leaf counts, kNN rows), ``_cosine``
and ``_graph``."""
from __future__ import annotations

from .cosine import COSINE_ALGORITHMS, cosine_knn_graph, window_order
from .graph import knn_graph_from_neighbors, normalized_graph, symmetric_graph
from .knn import knn_affinity, leaf_knn
from .leaf import leaf_affinity

__all__ = ["leaf_affinity", "leaf_knn", "knn_affinity", "symmetric_graph", "knn_graph_from_neighbors",
           "cosine_knn_graph", "window_order", "normalized_graph", "COSINE_ALGORITHMS"]
