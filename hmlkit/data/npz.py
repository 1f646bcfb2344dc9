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

A file written by hand with just ``np.savez(path, X=X, Y=Y)`` loads too; a key not in
this table is refused by name (``layers`` for ``tag_layer`` would otherwise be lost).
"""
from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._files import file_mode
from .container import TaggedData

FORMAT = "hmlkit-npz"
FORMAT_VERSION = 1
_KNOWN_KEYS = frozenset(
    ["format", "format_version", "X", "tag_names", "tag_layer", "groups", "group_names", "name", "meta"]
    + [f"{key}{part}" for key in ("Y", "Y_true") for part in ("", "_data", "_indices", "_indptr", "_shape")])


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
    given = Path(path)
    path = given if given.suffix == ".npz" else given.with_name(given.name + ".npz")
    for p in {given, path}:  # a folder "out" would otherwise become a file "out.npz" beside it;
        if p.is_dir():       # a folder "out.npz" would fail os.replace after the whole file is written
            raise IsADirectoryError(f"save_npz: {p} is a directory; give a file path")
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
    # a temp file of its own (not named by the process: two threads may write the same path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp)
    try:
        with os.fdopen(fd, "wb") as fh:
            (np.savez_compressed if compressed else np.savez)(fh, **arrays)
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except BaseException as e:  # a full disk, Ctrl-C: no half-written temp file left behind
        tmp.unlink(missing_ok=True)
        if isinstance(e, OSError) and e.errno is not None:  # OSError(errno, ..) keeps the subclass
            raise OSError(e.errno, f"save_npz could not write {path}: {e.strerror}") from e
        raise
    return path


def _read(z, key: str, path: Path):
    """Array ``key`` of the archive; a ValueError naming the file and key if it cannot be
    read (an object array, refused with ``allow_pickle=False``; a corrupt member)."""
    try:
        a = z[key]
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as e:
        raise ValueError(f"{path}: key {key!r} cannot be read ({e})") from None
    if a.dtype == object:
        raise ValueError(f"{path}: key {key!r} has dtype object; numeric arrays expected")
    return a


def _integral(a, key: str, path: Path, minimum=None):
    """``a`` as int64, refusing non-integral values (1.5 would be truncated to 1) and,
    with ``minimum``, values below it."""
    a = np.asarray(a)
    if a.dtype == bool or not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        raise ValueError(f"{path}: key {key!r} must hold integers, got dtype {a.dtype}")
    if not np.issubdtype(a.dtype, np.integer):
        bad = ~np.isfinite(a) | (a != np.round(a)) if a.size else np.zeros(0, bool)
        if bad.any():
            raise ValueError(f"{path}: key {key!r} must hold integers, got {a.ravel()[np.flatnonzero(bad.ravel())[0]]!r}")
    out = a.astype(np.int64)
    if minimum is not None and out.size and out.min() < minimum:
        raise ValueError(f"{path}: key {key!r} has {int(out.min())}; values must be >= {minimum}")
    return out


def _get_tags(z, key: str, path: Path, n: int):
    """Tags stored as CSR parts or as a dense matrix; None if absent."""
    if f"{key}_indptr" in z.files:
        need = [f"{key}_{p}" for p in ("data", "indices", "indptr", "shape")]
        missing = [k for k in need if k not in z.files]
        if missing:
            raise ValueError(f"{path}: {key} is stored sparse but {', '.join(missing)} is missing")
        shape = tuple(int(s) for s in _integral(_read(z, f"{key}_shape", path), f"{key}_shape", path, 0))
        if len(shape) != 2:
            raise ValueError(f"{path}: key '{key}_shape' must hold 2 numbers, got {shape}")
        indices = _integral(_read(z, f"{key}_indices", path), f"{key}_indices", path)
        indptr = _integral(_read(z, f"{key}_indptr", path), f"{key}_indptr", path)
        try:
            M = sp.csr_matrix((_read(z, f"{key}_data", path), indices, indptr), shape=shape)
            M.check_format(full_check=True)  # column indices in range, indptr monotone
        except ValueError as e:
            raise ValueError(f"{path}: {key} CSR parts are inconsistent ({e})") from None
        return M
    if key in z.files:
        Y = _read(z, key, path)
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
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as e:
        raise ValueError(f"{path}: not a readable .npz file ({e})") from None
    if not isinstance(z, np.lib.npyio.NpzFile):  # a .npy (one array) named .npz
        raise ValueError(f"{path}: holds a single array (.npy format), not an .npz archive of named arrays")
    with z:
        unknown = sorted(set(z.files) - _KNOWN_KEYS)
        if unknown:  # e.g. 'layers' for 'tag_layer': silently dropped, the hierarchy would be lost
            raise ValueError(f"{path}: unknown key(s) {', '.join(map(repr, unknown))}; the keys read are "
                             f"{', '.join(sorted(_KNOWN_KEYS))} (see hmlkit.data.npz)")
        if "X" not in z.files:
            raise ValueError(f"{path}: no 'X' array (keys: {', '.join(z.files) or 'none'})")
        if "format_version" in z.files:
            version = _integral(_read(z, "format_version", path), "format_version", path)
            if version.size != 1:
                raise ValueError(f"{path}: key 'format_version' must be one integer, got shape {version.shape}")
            if int(version.ravel()[0]) > FORMAT_VERSION:
                raise ValueError(
                    f"{path}: format_version {int(version.ravel()[0])} is newer than this hmlkit reads "
                    f"({FORMAT_VERSION}); upgrade hmlkit"
                )
        X = _read(z, "X", path)
        if not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
            raise ValueError(f"{path}: key 'X' must be numeric, got dtype {X.dtype}")
        n = X.shape[0] if X.ndim else 0
        Y = _get_tags(z, "Y", path, n)
        if Y is None:
            raise ValueError(f"{path}: no observed tags ('Y' or 'Y_indptr'...) (keys: {', '.join(z.files)})")
        Y_true = _get_tags(z, "Y_true", path, n)
        tag_names = [str(t) for t in _read(z, "tag_names", path)] if "tag_names" in z.files else None
        layers = _integral(_read(z, "tag_layer", path), "tag_layer", path, 0) if "tag_layer" in z.files else None
        if layers is not None and layers.ndim != 1:
            raise ValueError(f"{path}: key 'tag_layer' must be 1-D (one layer id per tag), got shape {layers.shape}")
        if layers is not None and Y.ndim == 2 and layers.shape[0] != Y.shape[1]:
            raise ValueError(f"{path}: key 'tag_layer' has {layers.shape[0]} layer ids but Y has {Y.shape[1]} "
                             f"tag columns (one layer id per tag)")
        groups = _integral(_read(z, "groups", path), "groups", path) if "groups" in z.files else None
        meta = {}
        if "meta" in z.files:
            text = str(_read(z, "meta", path))
            try:
                meta = json.loads(text)
            except ValueError as e:
                raise ValueError(f"{path}: key 'meta' is not valid JSON ({e})") from None
            if not isinstance(meta, dict):
                raise ValueError(f"{path}: key 'meta' must be a JSON object, got {type(meta).__name__}")
        if "group_names" in z.files:
            meta["group_names"] = [str(g) for g in _read(z, "group_names", path)]
        stored_name = str(_read(z, "name", path)) if "name" in z.files else path.stem
    meta.setdefault("source", str(path))
    try:
        return TaggedData(
            X=X, Y=Y, layers=layers, tag_names=tag_names, groups=groups, Y_true=Y_true,
            name=name or stored_name, meta=meta,
        )
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
