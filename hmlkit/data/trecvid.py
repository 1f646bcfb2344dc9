"""TRECVID MED 2011 as the HML-RF and Latent MMC papers used it.

The data (2,379 Event-Kit videos of 15 events E001-E015, HOG3D bag-of-words,
tags from the textual judgement files) are licensed to TRECVID participants and
cannot be fetched. Users build the arrays once from their copy (recipe in
``data/README.md``) and keep them in the kit's npz format:

1. ``features``: one HOG3D bag-of-words histogram per video (the papers: a
   1000-word K-means codebook), an ``(n, 1000)`` ``.npy``.
2. ``tags.tsv``: one line per video, ``video_id <TAB> event <TAB> tag,tag,...``
   (event as ``E001``..``E015`` or its name; tags as extracted from the
   video's judgement text; empty third field = untagged video), rows in the
   order of the feature rows. ``#`` starts a comment line.
3. ``hierarchy.tsv``: ``tag <TAB> layer`` per tag (0 = most abstract; the
   paper has 2 layers from the structure of the meta-data files, 114 tags).

:func:`build_trecvid_med11` joins them, applies the paper's histogram
intersection feature map (``hik=True``) and returns a ``TaggedData`` to
``save_npz``; :func:`load_trecvid_med11` reads that file back and checks it
looks like the papers' set (it warns, not fails, when counts differ, so
subsets load too). Parse errors name the file and line.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .container import TaggedData
from .npz import load_npz

# The 15 MED 2011 events (E001-E005 from the 2010 pilot kit, E006-E015 new in 2011).
MED11_EVENTS = {
    "E001": "Attempting a board trick",
    "E002": "Feeding an animal",
    "E003": "Landing a fish",
    "E004": "Wedding ceremony",
    "E005": "Working on a woodworking project",
    "E006": "Birthday party",
    "E007": "Changing a vehicle tire",
    "E008": "Flash mob gathering",
    "E009": "Getting a vehicle unstuck",
    "E010": "Grooming an animal",
    "E011": "Making a sandwich",
    "E012": "Parade",
    "E013": "Parkour",
    "E014": "Repairing an appliance",
    "E015": "Working on a sewing project",
}
PAPER_STATS = {"n_samples": 2379, "n_groups": 15, "n_tags": 114, "n_layers": 2, "n_features": 1000}


def _err(path, line, msg):
    return ValueError(f"{path}, line {line}: {msg}" if line else f"{path}: {msg}")


def _data_lines(path: Path):
    with open(path, encoding="utf-8") as fh:
        for i, raw in enumerate(fh, 1):
            line = raw.rstrip("\n").rstrip("\r")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            yield i, line


def read_hierarchy(path) -> dict:
    """``tag <TAB> layer`` lines -> {tag: layer}."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"tag hierarchy file not found: {path}")
    out = {}
    for i, line in _data_lines(path):
        parts = line.split("\t")
        if len(parts) != 2:
            raise _err(path, i, f"expected 'tag<TAB>layer', got {line!r}")
        tag, layer = parts[0].strip(), parts[1].strip()
        if not tag:
            raise _err(path, i, "empty tag name")
        try:
            layer = int(layer)
        except ValueError:
            raise _err(path, i, f"layer must be an integer, got {layer!r}") from None
        if layer < 0:
            raise _err(path, i, f"layer must be >= 0, got {layer}")
        if tag in out:
            raise _err(path, i, f"tag {tag!r} listed twice")
        out[tag] = layer
    if not out:
        raise _err(path, None, "no tags")
    return out


def _event_id(ev: str):
    ev = ev.strip()
    if ev.upper() in MED11_EVENTS:
        return ev.upper()
    for k, name in MED11_EVENTS.items():
        if ev.lower() == name.lower():
            return k
    return None


def read_tag_table(path, hierarchy: dict):
    """``video_id <TAB> event <TAB> tags`` lines -> (video_ids, event ids, list of tag lists)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"video tag table not found: {path}")
    vids, events, tags, seen = [], [], [], {}
    for i, line in _data_lines(path):
        parts = line.split("\t")
        if len(parts) == 2:
            parts.append("")
        if len(parts) != 3:
            raise _err(path, i, f"expected 'video_id<TAB>event<TAB>tag,tag,...', got {len(parts)} fields")
        vid, ev, tl = (p.strip() for p in parts)
        if not vid:
            raise _err(path, i, "empty video id")
        if vid in seen:
            raise _err(path, i, f"video {vid!r} repeats line {seen[vid]}")
        seen[vid] = i
        e = _event_id(ev)
        if e is None:
            raise _err(path, i, f"unknown event {ev!r} (expected E001..E015 or an MED 2011 event name)")
        row = [t.strip() for t in tl.split(",") if t.strip()]
        for t in row:
            if t not in hierarchy:
                raise _err(path, i, f"unknown tag {t!r} (not in the tag hierarchy)")
        vids.append(vid)
        events.append(e)
        tags.append(sorted(set(row), key=row.index))
    if not vids:
        raise _err(path, None, "no videos")
    return vids, events, tags


def build_trecvid_med11(features, tag_table, hierarchy, hik: bool = True, sample_steps: int = 4,
                        name: str = "trecvid-med11") -> TaggedData:
    """Build the MED 2011 ``TaggedData`` from user-made arrays (see the module notes).

    Parameters
    ----------
    features : path to ``.npy`` or array (n_videos, n_bins)
        HOG3D bag-of-words histograms, rows in the order of ``tag_table``.
    tag_table, hierarchy : paths to the two tab-separated files.
    hik : bool
        Apply the paper's histogram intersection feature map
        (:func:`hmlkit.features.hik_feature_map`; histograms are L1-normalised first).
    """
    hier = read_hierarchy(hierarchy)
    vids, events, tags = read_tag_table(tag_table, hier)
    if isinstance(features, (str, Path)):
        fpath = Path(features)
        if not fpath.is_file():
            raise FileNotFoundError(f"feature file not found: {fpath}")
        X = np.load(fpath, allow_pickle=False)
        where = str(fpath)
    else:
        X, where = np.asarray(features), "features"
    if X.ndim != 2 or X.shape[0] != len(vids):
        raise ValueError(f"{where}: expected ({len(vids)}, n_bins) rows aligned with {tag_table}, got shape {X.shape}")
    X = np.asarray(X, dtype=np.float64)
    if not np.isfinite(X).all() or (X < 0).any():
        raise ValueError(f"{where}: bag-of-words histograms must be finite and non-negative")
    tag_names = sorted(hier, key=lambda t: (hier[t], t))
    col = {t: j for j, t in enumerate(tag_names)}
    rows = np.repeat(np.arange(len(vids)), [len(t) for t in tags])
    cols = np.asarray([col[t] for row in tags for t in row], dtype=np.int64)
    Y = sp.csr_matrix((np.ones(cols.size, np.uint8), (rows, cols)), shape=(len(vids), len(tag_names)))
    layer_ids = np.asarray([hier[t] for t in tag_names], dtype=np.int64)
    present = sorted(set(events))
    groups = np.asarray([present.index(e) for e in events], dtype=np.int64)
    meta = {
        "source": str(tag_table),
        "video_ids": vids,
        "group_names": [f"{e} {MED11_EVENTS[e]}" for e in present],
        "hik": bool(hik),
    }
    if hik:
        from ..features import hik_feature_map  # here: the feature map loads numba, reading does not

        s = X.sum(axis=1, keepdims=True)
        X = hik_feature_map(np.divide(X, s, out=np.zeros_like(X), where=s > 0), sample_steps=sample_steps)
        meta["hik_sample_steps"] = int(sample_steps)
    # layer ids must be consecutive for check_layers' per-tag form
    _, layer_ids = np.unique(layer_ids, return_inverse=True)
    return TaggedData(X=X, Y=Y, layers=layer_ids.astype(np.int64), tag_names=tag_names, groups=groups,
                      name=name, meta=meta)


def load_trecvid_med11(path, hik: bool = False, sample_steps: int = 4, check: bool = True,
                       name: str | None = None) -> TaggedData:
    """Load user-built MED 2011 arrays saved with ``save_npz``.

    ``hik=True`` applies the intersection feature map at load time (for files
    saved with raw histograms). ``check`` warns when the set differs from the
    papers' (2,379 videos, 15 events, 114 tags in 2 layers) and fails when
    ground-truth events are absent (the clustering tables need them).
    """
    data = load_npz(path, name=name)
    if data.groups is None:
        raise ValueError(f"{path}: no 'groups' (the event of each video); TRECVID MED 2011 files must carry them")
    if hik:
        if data.meta.get("hik"):
            raise ValueError(f"{path}: features already went through the HIK map (meta['hik'] is true)")
        from ..features import hik_feature_map  # here: the feature map loads numba, reading does not

        X = data.X.astype(np.float64)
        s = X.sum(axis=1, keepdims=True)
        data.X = hik_feature_map(np.divide(X, s, out=np.zeros_like(X), where=s > 0), sample_steps=sample_steps)
        data.meta["hik"] = True
    if check:
        got = {"n_samples": data.n_samples, "n_groups": data.n_groups, "n_tags": data.n_tags,
               "n_layers": len(data.layers)}
        diff = {k: (v, PAPER_STATS[k]) for k, v in got.items() if v != PAPER_STATS[k]}
        if diff:
            warnings.warn(
                f"{path}: differs from the papers' MED 2011 set: "
                + ", ".join(f"{k}={v} (paper {p})" for k, (v, p) in diff.items()),
                stacklevel=2,
            )
    return data
