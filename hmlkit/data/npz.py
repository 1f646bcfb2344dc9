"""The kit's own on-disk format for any tagged data set: one ``.npz`` file.

Keys (all plain arrays, so the file loads with ``allow_pickle=False``):

==================  ==========================================================
``X``               (n, d) float32 features
``Y_indptr`` ...    observed tags as CSR parts ``Y_data``, ``Y_indices``,
                    ``Y_indptr``, ``Y_shape``; a dense 0/1 ``Y`` (n, m) is
                    accepted instead (handy for files built by hand)
``tag_names``       (m,) str, optional
``tag_layer``       (m,) int64 layer id of every tag (0 = most abstract),
                    optional (absent = one flat layer)
``groups``          (n,) int64 ground-truth cluster, optional
``group_names``     (n_groups,) str names of the group ids 0..k-1, optional
``Y_true_*``        complete tags, same two forms as ``Y``, optional
``name``            0-d str
``meta``            0-d str, JSON of the ``meta`` dict (JSON-able entries only)
``format``          0-d str ``"hmlkit-npz"``, ``format_version`` 0-d int
==================  ==========================================================

A file written by hand with just ``np.savez(path, X=X, Y=Y)`` loads too.
"""
from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .container import TaggedData

FORMAT = "hmlkit-npz"
FORMAT_VERSION = 1


def _jsonable(meta: dict) -> dict:
    out = {}
    for k, v in meta.items():
        if isinstance(v, np.ndarray):
            v = v.tolist()
        elif isinstance(v, np.generic):
            v = v.item()
        try:
            json.dumps(v)
        except TypeError:
            continue  # provenance only; skip what JSON cannot hold
        out[str(k)] = v
    return out


def _put_csr(arrays: dict, key: str, M: sp.csr_matrix):
    M = sp.csr_matrix(M)
    arrays[f"{key}_data"] = M.data.astype(np.uint8)
    arrays[f"{key}_indices"] = M.indices.astype(np.int64)
    arrays[f"{key}_indptr"] = M.indptr.astype(np.int64)
    arrays[f"{key}_shape"] = np.asarray(M.shape, dtype=np.int64)


def save_npz(path, data: TaggedData, compressed: bool = True) -> Path:
    """Write ``data`` to ``path`` in the kit's format (atomically) and return the path."""
    if not isinstance(data, TaggedData):
        raise ValueError(f"save_npz expects a TaggedData, got {type(data).__name__}")
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    arrays = {
        "format": np.asarray(FORMAT),
        "format_version": np.asarray(FORMAT_VERSION),
        "X": np.asarray(data.X, dtype=np.float32),
        "tag_names": np.asarray(data.tag_names, dtype=str),
        "tag_layer": data.layer_of(),
        "name": np.asarray(str(data.name)),
    }
    _put_csr(arrays, "Y", data.Y)
    if data.groups is not None:
        arrays["groups"] = np.asarray(data.groups, dtype=np.int64)
    if data.Y_true is not None:
        _put_csr(arrays, "Y_true", data.Y_true)
    meta = dict(data.meta)
    group_names = meta.pop("group_names", None)
    if group_names is not None:
        arrays["group_names"] = np.asarray(group_names, dtype=str)
    arrays["meta"] = np.asarray(json.dumps(_jsonable(meta)))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        (np.savez_compressed if compressed else np.savez)(fh, **arrays)
    os.replace(tmp, path)
    return path


def _get_tags(z, key: str, path: Path, n: int):
    """Tags stored as CSR parts or as a dense matrix; None if absent."""
    if f"{key}_indptr" in z.files:
        need = [f"{key}_{p}" for p in ("data", "indices", "indptr", "shape")]
        missing = [k for k in need if k not in z.files]
        if missing:
            raise ValueError(f"{path}: {key} is stored sparse but {', '.join(missing)} is missing")
        shape = tuple(int(s) for s in z[f"{key}_shape"])
        try:
            return sp.csr_matrix((z[f"{key}_data"], z[f"{key}_indices"], z[f"{key}_indptr"]), shape=shape)
        except ValueError as e:
            raise ValueError(f"{path}: {key} CSR parts are inconsistent ({e})") from None
    if key in z.files:
        Y = z[key]
        if Y.ndim != 2:
            raise ValueError(f"{path}: {key} must be 2-D (n_samples, n_tags), got shape {Y.shape}")
        return Y
    return None


def load_npz(path, name: str | None = None) -> TaggedData:
    """Read a data set written by :func:`save_npz` (or a hand-made ``X``/``Y`` npz).

    Raises ``FileNotFoundError`` naming a missing file and ``ValueError``
    naming the file and the offending key for a malformed one.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such .npz file: {path}")
    try:
        z = np.load(path, allow_pickle=False)
    except (zipfile.BadZipFile, ValueError, OSError) as e:
        raise ValueError(f"{path}: not a readable .npz file ({e})") from None
    with z:
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise ValueError(f"{path}: holds a single array, not an .npz archive of named arrays")
        if "X" not in z.files:
            raise ValueError(f"{path}: no 'X' array (keys: {', '.join(z.files) or 'none'})")
        if "format_version" in z.files and int(z["format_version"]) > FORMAT_VERSION:
            raise ValueError(
                f"{path}: format_version {int(z['format_version'])} is newer than this hmlkit reads "
                f"({FORMAT_VERSION}); upgrade hmlkit"
            )
        X = z["X"]
        n = X.shape[0] if X.ndim else 0
        Y = _get_tags(z, "Y", path, n)
        if Y is None:
            raise ValueError(f"{path}: no observed tags ('Y' or 'Y_indptr'...) (keys: {', '.join(z.files)})")
        Y_true = _get_tags(z, "Y_true", path, n)
        tag_names = [str(t) for t in z["tag_names"]] if "tag_names" in z.files else None
        layers = z["tag_layer"].astype(np.int64) if "tag_layer" in z.files else None
        groups = z["groups"] if "groups" in z.files else None
        meta = json.loads(str(z["meta"])) if "meta" in z.files else {}
        if "group_names" in z.files:
            meta["group_names"] = [str(g) for g in z["group_names"]]
        stored_name = str(z["name"]) if "name" in z.files else path.stem
    meta.setdefault("source", str(path))
    try:
        return TaggedData(
            X=X, Y=Y, layers=layers, tag_names=tag_names, groups=groups, Y_true=Y_true,
            name=name or stored_name, meta=meta,
        )
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
