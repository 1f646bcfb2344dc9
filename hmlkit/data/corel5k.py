"""Corel5k (mulan sparse ARFF): a real tagged-image set with ground-truth groups.

The training split ``Corel5k-train-sparse.arff`` has 4500 images; 499 binary
visual-word attributes ``Cluster1..Cluster499`` (blob tokens, the visual
features) followed by 374 binary keyword tags, about 3.5 per image.

Ground-truth groups: the rows of the training split keep the Corel CD order,
50 CDs (themes such as sunsets, tigers, aircraft) of 90 consecutive images, so
the group of row ``i`` is ``i // 90``. This holds for the 4500-row training
split only; for any other row count (the 500-row test split, the 5000-row full
set, a subset) no groups are made up: ``groups`` is None and ``meta["groups"]``
says why.

The tags have no published hierarchy; :func:`load_corel5k` estimates one with
:func:`hmlkit.tags.estimate_layers` (or keeps them flat), and records which in
``meta["layers"]``.

Where the file is looked for: an explicit ``path``; else the shared data
folder (:func:`hmlkit._paths.corel5k_path`, ``$HMLKIT_SHARED_DATA`` honoured);
else ``<cache>/corel5k/Corel5k-train-sparse.arff`` (the cache of
:func:`hmlkit.data.fetch.data_cache_dir`, where :func:`hmlkit.data.fetch_corel5k`
downloads mulan's archive).
"""
from __future__ import annotations

import numbers
from pathlib import Path

import numpy as np

from .._paths import corel5k_path
from . import arff
from .container import TaggedData
from .fetch import data_cache_dir

COREL5K_FILE = "Corel5k-train-sparse.arff"
COREL5K_N_FEATURES = 499
COREL5K_TRAIN_ROWS = 4500
COREL5K_CD_SIZE = 90  # images per Corel CD, consecutive in the training split


def corel5k_candidates() -> list:
    """The places :func:`load_corel5k` looks at without ``path``, in order."""
    return [corel5k_path(), data_cache_dir() / "corel5k" / COREL5K_FILE]


def find_corel5k(path=None) -> Path:
    """The Corel5k training file: ``path`` if given, else the first candidate that exists.

    Raises ``FileNotFoundError`` naming every place looked at and how to get the file.
    """
    places = [Path(path).expanduser()] if path is not None else corel5k_candidates()
    for p in places:
        if p.is_file():
            return p
    raise FileNotFoundError(
        "Corel5k not found; looked at: " + ", ".join(str(p) for p in places)
        + ". Get it with hmlkit.data.fetch_corel5k() (mulan's corel5k.rar into the cache; unpack it "
        f"and put the training split at {corel5k_candidates()[-1]}), set HMLKIT_SHARED_DATA to a folder "
        f"holding corel5k/{COREL5K_FILE}, or pass path="
    )


def _cd_groups(n: int):
    """(groups, note): ``i // 90`` for the 4500-row training split, else (None, why not)."""
    if n == COREL5K_TRAIN_ROWS:
        return (
            np.arange(n, dtype=np.int64) // COREL5K_CD_SIZE,
            f"Corel CD of each image: row i -> i // {COREL5K_CD_SIZE} "
            f"({n // COREL5K_CD_SIZE} CDs of {COREL5K_CD_SIZE} consecutive images; "
            "the training split keeps the CD order)",
        )
    return None, (
        f"none: {n} rows, not the {COREL5K_TRAIN_ROWS}-row training split whose rows follow the "
        f"{COREL5K_TRAIN_ROWS // COREL5K_CD_SIZE} Corel CDs of {COREL5K_CD_SIZE} images in order; "
        "CD groups are not guessed for other files (e.g. the test split)"
    )


def _state_repr(random_state):
    return int(random_state) if isinstance(random_state, numbers.Integral) else repr(random_state)


def load_corel5k(path=None, n_layers=2, random_state=0) -> TaggedData:
    """Load the Corel5k training split as :class:`TaggedData` named ``"corel5k"``.

    Parameters
    ----------
    path : str or Path, optional
        The ARFF file. Default: the shared data folder, else the cache (see the
        module notes).
    n_layers : int or None
        Tag layers to estimate with :func:`hmlkit.tags.estimate_layers`
        (default 2, as in the paper); 1 or None keeps the tags flat (one layer).
    random_state : None or int
        Seed of the layer estimation (K-means).

    Returns
    -------
    TaggedData
        ``X`` (n, 499) float32 binary visual words, ``Y`` (n, 374) CSR uint8
        tags, ``tag_names`` the ARFF names of the tag attributes, ``groups``
        ``i // 90`` when the file has the 4500 rows of the training split (else
        None), ``layers`` as asked; ``meta["groups"]`` / ``meta["layers"]``
        say where they came from.

    Raises
    ------
    FileNotFoundError
        No file; the message names every place looked at and ``fetch_corel5k()``.
    ValueError
        A malformed file (from :func:`hmlkit.data.load_arff`) or a bad ``n_layers``.
    """
    if n_layers is not None and (
        not isinstance(n_layers, numbers.Integral) or isinstance(n_layers, bool) or n_layers < 1
    ):
        raise ValueError(f"n_layers must be a positive integer or None, got {n_layers!r}")
    file = find_corel5k(path)
    # looked up at call time, so a replaced hmlkit.data.arff.load_arff is used
    data = arff.load_arff(file, n_features=COREL5K_N_FEATURES, name="corel5k")
    groups, groups_note = _cd_groups(data.n_samples)

    if n_layers is None or n_layers == 1:
        layers = [np.arange(data.n_tags, dtype=np.int64)]
        layers_note = {"method": "flat", "n_layers": 1}
    else:
        # here, not at the top: the tag layers load numba and scikit-learn, which reading the
        # data does not need (import hmlkit.data stays light)
        from ..tags import estimate_layers

        layers = estimate_layers(data.Y, int(n_layers), random_state=random_state)
        layers_note = {
            "method": "hmlkit.tags.estimate_layers",
            "n_layers": int(n_layers),
            "random_state": _state_repr(random_state),
        }
    layers_note["sizes"] = [int(len(l)) for l in layers]

    meta = dict(data.meta)
    meta.update(source_path=str(file), groups=groups_note, layers=layers_note)
    return TaggedData(X=data.X, Y=data.Y, layers=layers, tag_names=data.tag_names, groups=groups,
                      name="corel5k", meta=meta)


__all__ = ["load_corel5k", "find_corel5k", "corel5k_candidates", "COREL5K_N_FEATURES"]
