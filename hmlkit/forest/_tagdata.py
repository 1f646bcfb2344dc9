"""Tag arrays handed to the numba kernels (see ``_criterion``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class TagArrays:
    ly_indptr: np.ndarray
    ly_indices: np.ndarray
    layer_ptr: np.ndarray
    layer_order: np.ndarray
    has_layer: np.ndarray
    soft_pos: np.ndarray
    soft_neg: np.ndarray
    use_soft: bool
    # True: a sample with no observed tag in a hard-criterion layer carries no
    # mass there (unknown, not negative); see ``layer_parent_stats``
    ignore_untagged: bool = False

    @property
    def n_layers(self):
        return self.layer_ptr.shape[0] - 1

    def kernel_args(self):
        return (self.n_layers, self.ly_indptr, self.ly_indices, self.layer_ptr,
                self.has_layer, self.soft_pos, self.soft_neg, self.use_soft,
                self.ignore_untagged)


def build_tag_arrays(Y, layers, soft=None, ignore_untagged=False):
    """Kernel arrays from observed tags ``Y`` (csr), validated ``layers`` and
    optional soft confidences ``soft = (pos, neg)`` (n, m) dense."""
    n, m = Y.shape
    L = len(layers)
    tag_layer = np.empty(m, np.int64)
    tag_local = np.empty(m, np.int64)
    layer_ptr = np.zeros(L + 1, np.int64)
    for k, layer in enumerate(layers):
        tag_layer[layer] = k
        tag_local[layer] = np.arange(len(layer))
        layer_ptr[k + 1] = layer_ptr[k] + len(layer)
    layer_order = np.concatenate(layers).astype(np.int64)
    rows = np.repeat(np.arange(n), np.diff(Y.indptr))
    has_layer = np.zeros((n, L), np.uint8)
    has_layer[rows, tag_layer[Y.indices]] = 1
    if soft is not None and L > 1:
        cols = layer_order[: layer_ptr[L - 1]]
        soft_pos = np.ascontiguousarray(soft[0][:, cols], dtype=np.float32)
        soft_neg = np.ascontiguousarray(soft[1][:, cols], dtype=np.float32)
        use_soft = True
    else:
        soft_pos = np.zeros((n, 0), np.float32)
        soft_neg = np.zeros((n, 0), np.float32)
        use_soft = False
    # one CSR block per layer holding each sample's tags of that layer as
    # positions within the layer
    ly_indptr = np.zeros((L, n + 1), np.int64)
    blocks = []
    base = 0
    for k, layer in enumerate(layers):
        Yk = Y[:, layer]
        Yk.sort_indices()
        ly_indptr[k] = Yk.indptr + base
        blocks.append(Yk.indices.astype(np.int32))
        base += Yk.nnz
    ly_indices = np.concatenate(blocks) if blocks else np.zeros(0, np.int32)
    return TagArrays(ly_indptr, ly_indices, layer_ptr,
                     layer_order, has_layer, soft_pos, soft_neg, use_soft, bool(ignore_untagged))
