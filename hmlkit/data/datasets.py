"""One entry point from a study's ``dataset=`` parameter to a ``TaggedData``.

``load_dataset(spec)`` accepts:

* a synthetic profile name, ``"trecvid"`` or ``"nuswide"``
  (:func:`hmlkit.data.make_synthetic`);
* ``"corel16k"``: the real development set (mulan Corel16k sample 1 test split)
  at :func:`hmlkit._paths.corel16k_path`, else in the cache after
  :func:`hmlkit.data.fetch_corel16k` (:func:`find_corel16k`);
* ``"corel5k"``: the Corel5k training split with its 50 CD groups
  (:func:`hmlkit.data.load_corel5k`; options ``n_layers=``, ``path=``);
* a ``.arff`` file (:func:`hmlkit.data.load_arff`): mulan Corel16k files (the
  file name starts with ``Corel16k``) are split as 500 features + tags; a
  ``Corel5k*.arff`` file goes to :func:`hmlkit.data.load_corel5k` (499
  features + tags, CD groups for the 4500-row training split, estimated
  layers) unless ``n_features=`` / ``n_labels=`` is given; any other ARFF needs ``n_features=`` or ``n_labels=`` (mulan files carry the
  label names only in a separate XML) or a MEKA header ``@relation 'name: -C k'``;
* a ``.npz`` file in the kit's format (:func:`hmlkit.data.load_npz`);
* a folder in the official NUS-WIDE layout (:func:`hmlkit.data.load_nuswide`);
* a ``TaggedData`` (returned as is, or subsampled).

``require(data, ...)`` then says, before any work, what a study needs that the
data set lacks.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .._paths import corel16k_path
from .arff import _check_arff_file, load_arff
from .container import TaggedData
from .corel5k import load_corel5k
from .fetch import data_cache_dir
from .npz import load_npz
from .nuswide import load_nuswide
from .synthetic import make_synthetic

SYNTHETIC_PROFILES = ("trecvid", "nuswide")
REAL_ALIASES = ("corel16k", "corel5k")
COREL16K_N_FEATURES = 500
_ARFF_LAYOUT_OPTIONS = ("n_features", "n_labels", "label_location")

ACCEPTED = (
    "a synthetic profile name ('trecvid', 'nuswide'), 'corel16k' (the shared development set), "
    "'corel5k' (Corel5k training split with 50 CD groups), "
    "a .arff file (mulan/MEKA multi-label), a .npz file in hmlkit's format, "
    "or a folder in the official NUS-WIDE layout (ImageList/, NUS_WID_Tags/, Groundtruth/, Low_Level_Features/)"
)

def is_nuswide_root(path: Path) -> bool:
    return (path / "ImageList" / "Imagelist.txt").is_file() and (path / "NUS_WID_Tags").is_dir()


def _load_arff_spec(path: Path, kw: dict) -> TaggedData:
    n_features, n_labels = kw.pop("n_features", None), kw.pop("n_labels", None)
    label_location = kw.pop("label_location", "end")
    name = kw.pop("name", None)
    if kw:
        raise ValueError(f"unexpected options for an ARFF file: {', '.join(sorted(kw))}")
    is_corel = path.name.lower().startswith("corel16k")
    if is_corel and n_features is None and n_labels is None:
        n_features = COREL16K_N_FEATURES
        name = name or "corel16k"
    meka = _check_arff_file(path)  # an empty, binary or header-only file said as such, not as a layout
    if n_features is None and n_labels is None and meka is None:
        raise ValueError(
            f"{path}: cannot tell features from labels in this ARFF file; pass n_features= or n_labels= "
            "(mulan keeps the label list in a separate XML file) or use a MEKA header "
            "(@relation 'name: -C <n_labels>')"
        )
    return load_arff(path, n_features=n_features, n_labels=n_labels, label_location=label_location, name=name)


def _is_corel5k_file(path: Path, kw: dict) -> bool:
    """A ``Corel5k*.arff`` file given without an explicit feature/label layout."""
    return path.name.lower().startswith("corel5k") and not any(k in kw for k in _ARFF_LAYOUT_OPTIONS)


def _load_corel5k_spec(path, kw: dict, random_state) -> TaggedData:
    path = kw.pop("path", path)
    n_layers = kw.pop("n_layers", 2)
    if kw:
        raise ValueError(f"unexpected options for corel5k: {', '.join(sorted(kw))} (accepted: n_layers, path)")
    return load_corel5k(path=path, n_layers=n_layers, random_state=random_state)


def corel16k_candidates() -> list:
    """The places ``load_dataset("corel16k")`` looks at, in order: the shared data folder,
    then the cache :func:`hmlkit.data.fetch_corel16k` downloads into."""
    return [corel16k_path(), data_cache_dir() / "corel16k" / corel16k_path().name]


def find_corel16k() -> Path:
    """The first of :func:`corel16k_candidates` that exists; ``FileNotFoundError`` naming
    every place looked at and how to get the file."""
    places = corel16k_candidates()
    for p in places:
        if p.is_file():
            return p
    raise FileNotFoundError(
        "the Corel16k development set was not found; looked at: " + ", ".join(map(str, places))
        + f". Get it with hmlkit.data.fetch_corel16k() (mulan's corel16k.rar into the cache; unpack it "
        f"there), set HMLKIT_SHARED_DATA to a folder holding corel16k/{places[0].name}, or pass its path")


def load_dataset(spec, n_samples: int | None = None, random_state=0, **kw) -> TaggedData:
    """Resolve a study's ``dataset=`` parameter (see the module notes) to a ``TaggedData``.

    ``n_samples`` is passed to the synthetic generator; for real data it draws
    a seeded random subset of that many samples (all when None or larger).
    Extra keywords go to the loader (e.g. ``recipe=``/``features=`` for
    NUS-WIDE, ``n_features=`` for ARFF, ``n_layers=`` for Corel5k, which
    also gets ``random_state``).

    A name (``"trecvid"``, ``"corel5k"``...) is always the built-in data set, even where the
    current folder holds a file or folder of that name: give that one as ``"./trecvid"``
    or a ``Path``.

    Raises ``FileNotFoundError`` naming a missing path and ``ValueError``
    listing what is accepted for anything else (an empty string included).
    """
    if n_samples is not None and (isinstance(n_samples, (bool, np.bool_))
                                  or not isinstance(n_samples, (int, np.integer)) or n_samples < 1):
        raise ValueError(f"n_samples must be a positive integer or None, got {n_samples!r}")
    if isinstance(spec, TaggedData):
        if kw:
            raise ValueError(f"unexpected options for a TaggedData: {', '.join(sorted(kw))}")
        data = spec
    elif isinstance(spec, str) and not spec.strip():  # Path("") is ".", the current folder
        raise ValueError(f"dataset is an empty string; accepted: {ACCEPTED}")
    # a name is the built-in data set even where a file or folder of that name is (a study
    # runs in whatever folder it is started from): such a path is given as ./name or a Path
    elif isinstance(spec, str) and spec in SYNTHETIC_PROFILES:
        if kw:
            raise ValueError(f"unexpected options for the synthetic profile {spec!r}: {', '.join(sorted(kw))}")
        return make_synthetic(profile=spec, n_samples=n_samples, random_state=random_state)
    elif isinstance(spec, str) and spec == "corel5k":
        data = _load_corel5k_spec(None, kw, random_state)
    elif isinstance(spec, str) and spec in REAL_ALIASES:
        data = _load_arff_spec(find_corel16k(), kw)
    elif isinstance(spec, (str, Path)):
        path = Path(spec).expanduser()
        if not path.exists():
            raise FileNotFoundError(f"dataset not found: {path} (accepted: {ACCEPTED})")
        suffix = path.suffix.lower()
        if path.is_dir():
            if not is_nuswide_root(path):
                raise ValueError(f"{path} is a folder but not in the NUS-WIDE layout; accepted: {ACCEPTED}")
            kw.setdefault("random_state", random_state)
            data = load_nuswide(path, **kw)
        elif suffix == ".arff" and _is_corel5k_file(path, kw):
            data = _load_corel5k_spec(path, kw, random_state)
        elif suffix == ".arff":
            data = _load_arff_spec(path, kw)
        elif suffix == ".npz":
            name = kw.pop("name", None)
            if kw:
                raise ValueError(f"unexpected options for a .npz file: {', '.join(sorted(kw))}")
            data = load_npz(path, name=name)
        else:
            raise ValueError(f"cannot load {path}: unknown kind of file {suffix or '(no suffix)'!r}; accepted: {ACCEPTED}")
    else:
        raise ValueError(f"dataset must be a name or a path, got {type(spec).__name__}; accepted: {ACCEPTED}")

    if n_samples is not None and n_samples < data.n_samples:
        rng = np.random.default_rng(random_state)
        idx = np.sort(rng.choice(data.n_samples, size=n_samples, replace=False))
        data = data.subset(idx)
        data.meta["subsample"] = {"n_samples": int(n_samples), "random_state": random_state}
    return data


def _needs(study: str) -> str:
    return "need" if study.split()[-1].endswith("s") else "needs"


def require(data: TaggedData, groups: bool = True, Y_true: bool = False, hierarchy: bool = False,
            study: str = "this study") -> TaggedData:
    """Fail with a clear ``ValueError`` when ``data`` lacks what ``study`` needs; else return it.

    groups : ground-truth clusters (clustering tables).
    Y_true : complete tags (completion on data with complete annotation).
    hierarchy : a tag hierarchy of at least two layers.
    """
    missing = []
    if groups and data.groups is None:
        missing.append(f"{data.name} has no ground-truth groups: {study} {_needs(study)} them")
    if groups and data.groups is not None and data.n_groups < 2:
        missing.append(f"{data.name} has a single ground-truth group: {study} {_needs(study)} at least two")
    if Y_true and data.Y_true is None:
        missing.append(
            f"{data.name} has no complete tags (Y_true): {study} {_needs(study)} them "
            "(for hidden-tag completion use hmlkit.data.hide_tags on the observed tags instead)"
        )
    if hierarchy and len(data.layers) < 2:
        missing.append(
            f"{data.name} has a flat tag set: {study} {_needs(study)} a hierarchy "
            "(estimate one with hmlkit.tags.estimate_layers)"
        )
    if missing:
        raise ValueError("; ".join(missing))
    return data
