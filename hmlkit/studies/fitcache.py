"""A disk cache of the studies' clusterings, so that a fit several studies make is made once.

Table 1's rows at full tags are Fig 5's points at 0 % removed, Fig 5's HML-RF row is Fig 6's
full model at every rate, Fig 8's phi = 3 point is Table 1's HML-RF row: the same method on
the same data with the same seed and settings. :func:`cached_labels` stores each clustering
(``joblib.Memory``) under a key of

* the method and its settings (the thread count excepted: results do not depend on it),
* the content of the data it clusters (features, tags, hierarchy, tag names, groups),
* the number of clusters and the seed,
* the kit's code (every source file of the package and its package data) and the versions
  of the numerical libraries,

so an entry is reused only where recomputing would give the same labels, and any change
to the kit or a library makes new entries. The studies' own keys stay right too: a hit
imports the kit's modules the computing process had loaded, so the study records them
in its ``run_deps`` as if it had made the fit itself (:mod:`hmlkit.studies.keys`).

The cache lives in ``data/cache/fits`` (ignored by git); ``HMLKIT_FIT_CACHE`` names
another folder, or ``off`` turns it off.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
from pathlib import Path

import numpy as np

from .._paths import REPO_ROOT
from .keys import PACKAGE_DIR, file_digest, library_versions, package_files

ENV = "HMLKIT_FIT_CACHE"
DEFAULT_DIR = REPO_ROOT / "data" / "cache" / "fits"
# settings that change how fast a fit runs, never what it finds
NOT_IN_KEY = ("n_jobs", "verbose")

_KIT = {}  # the kit digest, once per process
_MEMORY = {}


def cache_dir():
    """The cache folder, or None when ``HMLKIT_FIT_CACHE=off``."""
    where = os.environ.get(ENV, "")
    if where.lower() == "off":
        return None
    return Path(where) if where else DEFAULT_DIR


def kit_digest():
    """sha256 of every source file and package data file of the kit, and of the library
    versions: the code a cached fit was made with."""
    if "digest" not in _KIT:
        h = hashlib.sha256(json.dumps(library_versions(), sort_keys=True).encode())
        for f in package_files((".py", ".json", ".csv")):
            h.update(str(f.relative_to(PACKAGE_DIR)).encode())
            h.update(file_digest(f).encode())
        _KIT["digest"] = h.hexdigest()
    return _KIT["digest"]


def _update(h, a):
    a = np.ascontiguousarray(a)
    h.update(f"{a.dtype.str}{a.shape}".encode())
    h.update(a.tobytes())


def data_digest(data):
    """sha256 of what a clustering method may read of a TaggedData: its features, observed
    tags, hierarchy, tag names and groups (never ``Y_true``, which no method reads)."""
    import scipy.sparse as sp

    h = hashlib.sha256()
    _update(h, data.X)
    Y = sp.csr_matrix(data.Y)
    Y.sort_indices()
    for a in (Y.indptr, Y.indices, Y.data, np.asarray(Y.shape)):
        _update(h, a)
    h.update(json.dumps([[int(t) for t in layer] for layer in data.layers] if data.layers is not None else None)
             .encode())
    h.update(json.dumps(None if data.tag_names is None else [str(t) for t in data.tag_names]).encode())
    _update(h, np.asarray([] if data.groups is None else data.groups))
    return h.hexdigest()


def _settings(settings):
    """The settings of a fit as stable JSON, the thread count left out."""
    def strip(v):
        if isinstance(v, dict):
            return {str(k): strip(x) for k, x in sorted(v.items()) if k not in NOT_IN_KEY}
        if isinstance(v, (list, tuple)):
            return [strip(x) for x in v]
        return v
    return json.dumps(strip(settings), sort_keys=True, default=str)


def _kit_modules():
    return sorted(n for n, m in sys.modules.items()
                  if (n == "hmlkit" or n.startswith("hmlkit.")) and getattr(m, "__file__", None))


def _fit(key, compute):
    """The cached function: ``key`` (hashed by joblib) names the fit; ``compute`` makes it."""
    return compute(), _kit_modules()


def _memory(where):
    if where not in _MEMORY:
        from joblib import Memory

        _MEMORY[where] = Memory(str(where), verbose=0).cache(_fit, ignore=["compute"])
    return _MEMORY[where]


def cached(what, settings, data, seed, compute):
    """``compute()``: the result of ``what`` with ``settings`` (a dict of JSON-able values)
    on ``data`` with seed ``seed``, from the cache when it was computed before."""
    where = cache_dir()
    if where is None:
        return compute()
    key = {"what": str(what), "settings": _settings(settings), "data": data_digest(data),
           "seed": None if seed is None else int(seed), "kit": kit_digest()}
    out, modules = _memory(where)(key, compute)
    for name in modules:  # the code behind the result, as if this process had run it
        if name not in sys.modules:
            importlib.import_module(name)
    return out


def cached_labels(what, settings, data, n_clusters, seed, compute):
    """The labels ``compute()`` of clustering ``what`` with ``settings`` on ``data`` into
    ``n_clusters`` clusters with seed ``seed``, from the cache when that fit was made before."""
    return np.asarray(cached(what, {**settings, "n_clusters": int(n_clusters)}, data, seed,
                             lambda: np.asarray(compute(), dtype=np.int64)))
