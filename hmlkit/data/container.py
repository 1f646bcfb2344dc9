"""The kit's data container: visual features, observed tags, tag hierarchy."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from .._validation import check_layers, check_X, check_Y, unshared


def _check_same_index(X, Y):
    """Two pandas inputs are paired by position, as scikit-learn pairs them: refuse two
    frames whose row labels differ (read from two files keyed by image, in two orders)."""
    ix, iy = getattr(X, "index", None), getattr(Y, "index", None)
    if ix is None or iy is None or not hasattr(ix, "equals") or not hasattr(iy, "equals"):
        return
    if len(ix) == len(iy) and not ix.equals(iy):
        j = next(k for k, (a, b) in enumerate(zip(ix, iy)) if a != b)
        raise ValueError(f"X and Y are pandas objects whose row labels differ (row {j}: {ix[j]!r} in X, "
                         f"{iy[j]!r} in Y); rows are paired by position, so align them first, "
                         f"e.g. Y = Y.loc[X.index]")


@dataclass(eq=False)
class TaggedData:
    """Tagged visual data.

    Attributes
    ----------
    X : ndarray (n, d) float32
        Visual features.
    Y : csr_matrix (n, m) uint8
        Observed (possibly sparse and incomplete) binary tags.
    layers : list of int64 arrays
        Tag hierarchy, most abstract layer first; disjoint, covering all tags.
    tag_names : list of str
        One name per tag column (default: a DataFrame ``Y``'s column names, else tag0, tag1...).
    groups : ndarray (n,) int64 or None
        Ground-truth cluster of each sample, when known.
    Y_true : csr_matrix (n, m) uint8 or None
        The complete tags, when known (for completion studies); every tag of ``Y``
        must be one of them.
    name : str
        A short label of the data set (profile name or file name).
    meta : dict
        Free-form provenance (generator parameters, source file, ...).
    """

    X: np.ndarray
    Y: sp.csr_matrix
    layers: list = None
    tag_names: list = None
    groups: np.ndarray | None = None
    Y_true: sp.csr_matrix | None = None
    name: str = "data"
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.tag_names is None and hasattr(self.Y, "columns"):  # a DataFrame's columns name its tags
            self.tag_names = [str(c) for c in self.Y.columns]
        _check_same_index(self.X, self.Y)
        self.X = check_X(self.X, "X")
        n = self.X.shape[0]
        source = self.Y
        # its own copy of the tags: check_Y shares a canonical CSR input's arrays, and a caller
        # editing its matrix afterwards would change this data set (and leave stored zeros)
        self.Y = unshared(check_Y(self.Y, n, "Y"), source)
        m = self.Y.shape[1]
        self.layers = check_layers(self.layers, m)
        if self.tag_names is None:
            self.tag_names = [f"tag{j}" for j in range(m)]
        if isinstance(self.tag_names, str):  # would be split into one-letter names
            raise ValueError("tag_names must be a list of names, one per tag column, got a string")
        self.tag_names = [str(t) for t in self.tag_names]
        if len(self.tag_names) != m:
            raise ValueError(f"tag_names has {len(self.tag_names)} names but Y has {m} tag columns")
        if len(set(self.tag_names)) != m:  # a name would stand for two columns (hierarchies, reports)
            twice = sorted(t for t, c in Counter(self.tag_names).items() if c > 1)
            raise ValueError(f"tag_names must be distinct, but {twice[:5]} name more than one tag column")
        if self.groups is not None:
            g = np.asarray(self.groups)
            if g.dtype.kind not in "biuf":  # str, object (None), categorical ...
                raise ValueError(f"groups must be integer labels, got dtype {g.dtype}: encode named groups "
                                 f"first, e.g. names, groups = np.unique(labels, return_inverse=True)")
            if g.dtype.kind == "f" and not np.isfinite(g).all():
                raise ValueError(f"groups contain NaN or inf (sample {int(np.flatnonzero(~np.isfinite(g))[0])}): "
                                 "every sample needs a ground-truth group, or pass groups=None")
            if g.dtype.kind == "f" and (g != np.round(g)).any():
                raise ValueError("groups must be integer labels")
            if g.shape != (n,):
                raise ValueError(f"groups must have shape ({n},), got {g.shape}")
            if g.size and g.dtype.kind in "uf" and (g.max() >= 2**63 or g.min() < -2**63):
                # int64's range: such ids would all wrap or saturate to one value, merging groups
                raise ValueError(f"groups must be integer labels within int64's range, got {float(g.max()):g}: "
                                 f"encode them first, e.g. np.unique(groups, return_inverse=True)[1]")
            self.groups = g.astype(np.int64)
        self._check_group_names()
        if self.Y_true is not None:
            source = self.Y_true
            self.Y_true = unshared(check_Y(self.Y_true, n, "Y_true"), source)
            if self.Y_true.shape != self.Y.shape:
                raise ValueError(f"Y_true shape {self.Y_true.shape} differs from Y shape {self.Y.shape}")
            # the observed tags are a part of the complete ones: a completion study scores the
            # tags hidden from Y, and an observed tag missing from Y_true is neither hidden nor true
            extra = (self.Y - self.Y.multiply(self.Y_true)).tocsr()
            extra.eliminate_zeros()
            if extra.nnz:
                i = int(np.repeat(np.arange(n), np.diff(extra.indptr))[0])
                j = int(extra.indices[extra.indptr[i]])
                raise ValueError(f"Y_true must hold every observed tag of Y (Y is the observed part of the "
                                 f"complete tags): {extra.nnz} observed tag(s) are not in Y_true, e.g. sample "
                                 f"{i}, tag {j} ({self.tag_names[j]!r})")

    def _check_group_names(self):
        """``meta["group_names"]`` names the group ids 0, 1, ...: a list of names with one for
        every id the groups use (a subset may use fewer of them)."""
        names = self.meta.get("group_names") if isinstance(self.meta, dict) else None
        if names is None:
            return
        if isinstance(names, str) or not hasattr(names, "__len__"):
            raise ValueError(f"meta['group_names'] must be a list of names, one per group id, got {names!r}")
        if self.groups is None:
            raise ValueError("meta['group_names'] is given but groups is None: names need the group ids")
        if self.groups.size and (self.groups.min() < 0 or self.groups.max() >= len(names)):
            bad = int(self.groups.min() if self.groups.min() < 0 else self.groups.max())
            raise ValueError(f"meta['group_names'] has {len(names)} names (ids 0..{len(names) - 1}) but the "
                             f"groups use id {bad}: give one name per group id")

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_tags(self) -> int:
        return self.Y.shape[1]

    @property
    def n_groups(self) -> int | None:
        return None if self.groups is None else int(np.unique(self.groups).size)

    def layer_of(self) -> np.ndarray:
        """Layer index of every tag (0 = most abstract)."""
        out = np.empty(self.n_tags, dtype=np.int64)
        for k, layer in enumerate(self.layers):
            out[layer] = k
        return out

    def subset(self, index) -> "TaggedData":
        """The samples selected by ``index`` (boolean mask or integer array)."""
        index = np.asarray(index)
        if index.dtype == bool:
            if index.shape != (self.n_samples,):
                raise ValueError(f"a boolean mask must have shape ({self.n_samples},), got {index.shape}")
            index = np.flatnonzero(index)
        elif index.size and index.dtype.kind not in "iu":
            raise ValueError(f"index must be a boolean mask or integer sample indices, got dtype {index.dtype}")
        if index.size == 0:
            raise ValueError("the selection is empty: a subset needs at least one sample")
        return replace(
            self,
            X=self.X[index],
            Y=self.Y[index],
            groups=None if self.groups is None else self.groups[index],
            Y_true=None if self.Y_true is None else self.Y_true[index],
            meta=dict(self.meta),
        )

    def with_tags(self, Y, **changes) -> "TaggedData":
        """A copy with the observed tags replaced (features shared, not copied)."""
        return replace(self, Y=Y, meta=dict(self.meta), **changes)

    def summary(self) -> dict:
        """The statistics the paper quotes for its data sets (Sec 4.1)."""
        tags_per = np.diff(self.Y.indptr)
        return {
            "name": self.name,
            "n_samples": self.n_samples,
            "n_features": self.n_features,
            "n_tags": self.n_tags,
            "n_layers": len(self.layers),
            "layer_sizes": [int(len(l)) for l in self.layers],
            "n_groups": self.n_groups,
            "tags_per_sample": float(tags_per.mean()),
            "tag_density": float(tags_per.mean() / self.n_tags),
            "untagged_samples": int((tags_per == 0).sum()),
        }

    def __eq__(self, other):
        """The same samples, tags, hierarchy, tag names, groups and complete tags (for a
        save/load round trip); ``name`` and ``meta`` are provenance, not compared."""
        if not isinstance(other, TaggedData):
            return NotImplemented

        def same_tags(a, b):
            return (a is None) == (b is None) and (a is None or (a.shape == b.shape and (a != b).nnz == 0))

        return (self.X.shape == other.X.shape and np.array_equal(self.X, other.X)
                and same_tags(self.Y, other.Y) and same_tags(self.Y_true, other.Y_true)
                and len(self.layers) == len(other.layers)
                and all(np.array_equal(a, b) for a, b in zip(self.layers, other.layers))
                and self.tag_names == other.tag_names
                and (self.groups is None) == (other.groups is None)
                and (self.groups is None or np.array_equal(self.groups, other.groups)))

    __hash__ = None  # mutable, compared by content

    def __repr__(self):
        s = self.summary()
        return (
            f"TaggedData({s['name']!r}: n={s['n_samples']}, d={s['n_features']}, m={s['n_tags']}, "
            f"layers={s['layer_sizes']}, groups={s['n_groups']}, tags/sample={s['tags_per_sample']:.2f})"
        )
