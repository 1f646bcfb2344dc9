"""NUS-WIDE (Chua et al., CIVR 2009) from its official distribution layout.

Layout read (the folders of the official archives, unpacked under one root)::

    root/ImageList/Imagelist.txt               one image path per line (269,648)
    root/Low_Level_Features/Normalized_CH.dat  64-D colour histogram
                           Normalized_CM55.dat 225-D block-wise colour moments (5x5 grid)
                           Normalized_CORR.dat 144-D colour correlogram
                           Normalized_EDH.dat  73-D edge direction histogram
                           Normalized_WT.dat   128-D wavelet texture
                           BoW_int.dat         500-D bag of SIFT visual words
    root/NUS_WID_Tags/TagList1k.txt            the 1,000 tag names, one per line
    root/NUS_WID_Tags/AllTags1k.txt            n x 1000 0/1 matrix, one image per line
    root/Groundtruth/AllLabels/Labels_<c>.txt  one 0/1 per line and image, 81 concepts

Every ``.dat`` / ``.txt`` matrix is whitespace separated with one row per image
in ``Imagelist.txt`` order. A feature file may also be named ``<TYPE>.dat``.
Assumptions (from the distribution as we know it; no file was available to
check against): tags and labels are plain ``0``/``1`` tokens; features are
decimal floats. Malformed files fail with a ``ValueError`` naming the file and
the (1-based) line.

Cost on the full set: the ground-truth labels are read completely (81 small
files); tag and feature files are streamed once, and only the rows of the
selected images are parsed (plus the row count and the last row, which is
where a truncated file shows).

Sampling recipes (``recipe=``), our readings of the papers' text:

``"hmlrf"`` (Wang, Zhu & Gong, Sec 4.1: "randomly sampled 30 clusters, each of
    which contains over 500 images ... a total of 17523 images")
    A group is a concept; an image belongs to it when that concept is its only
    positive one among the concept pool (``concepts``, default all 81), so the
    ground truth is unambiguous. Concepts with more than ``min_group_size``
    (500) such images are eligible; ``n_groups`` (30) of them are drawn at
    random with ``random_state``; all their single-concept images are kept
    unless ``max_per_group`` caps them (a seeded sample); ``exclusive="chosen"``
    reads "only positive" among the 30 drawn concepts instead. The paper's exact
    image list is not published, so its 17,523 is not reproduced exactly.
``"ghfart9"`` (Meng, Tan & Xu, TKDE 2014, Sec 6.1: nine classes dog, bear,
    cat, bird, flower, lake, sky, sunset, wedding; 23,284 images, "nearly
    3000" each, bear 1,271 and wedding 1,353)
    Images whose only positive concept among those nine is the class, at most
    3,000 per class (seeded sample), with the paper's visual features
    CM55 + EDH + WT (225 + 73 + 128 = 426-D; the paper's "255" is the 5x5x3x3
    = 225 colour moments). GHF-ART built its own 1,142-word tag vocabulary from
    the raw tags; we use the official 1k tag list.
``"ghfart18"`` (ibid.: plus beach, boat, bridge, car, cloud, coral, fish,
    garden, tree, "each of which contains 1500 images")
    The same rule among the 18 concepts: at most 3,000 per original class and
    1,500 per new class.
``None``
    All images, in list order, without ground-truth groups.

The HML-RF paper's NUS-WIDE features are VGG-16 fc6 activations (4096-D),
which are not part of the official distribution: pass them as
``features="path/to/cnn.npy"`` (one row per line of ``Imagelist.txt``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .container import TaggedData

# The official low-level feature types and their dimensions.
FEATURE_TYPES = {"CH": 64, "CM55": 225, "CORR": 144, "EDH": 73, "WT": 128, "BoW_int": 500}

CONCEPTS_81 = (
    "airport animal beach bear birds boats book bridge buildings cars castle cat cityscape clouds "
    "computer coral cow dancing dog earthquake elk fire fish flags flowers food fox frost garden "
    "glacier grass harbor horses house lake leaf map military moon mountain nighttime ocean person "
    "plane plants police protest railroad rainbow reflection road rocks running sand sign sky snow "
    "soccer sports statue street sun sunset surf swimmers tattoo temple tiger tower town toy train "
    "tree valley vehicle water waterfall wedding whales window zebra"
).split()

# GHF-ART's classes, named as the NUS-WIDE concepts ("bird" = birds, "boat" = boats, ...).
GHFART_9 = ("dog", "bear", "cat", "birds", "flowers", "lake", "sky", "sunset", "wedding")
GHFART_18_NEW = ("beach", "boats", "bridge", "cars", "clouds", "coral", "fish", "garden", "tree")
GHFART_FEATURES = ("CM55", "EDH", "WT")

RECIPES = ("hmlrf", "ghfart9", "ghfart18", None)
_BITS = frozenset("01")


def _err(path, line, msg) -> ValueError:
    where = f"{path}" if line is None else f"{path}, line {line}"
    return ValueError(f"{where}: {msg}")


def _need(path: Path, what: str) -> Path:
    if not path.is_file():
        raise FileNotFoundError(f"NUS-WIDE {what} not found: {path}")
    return path


def _read_lines(path: Path) -> list[str]:
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().splitlines()
    while lines and not lines[-1].strip():  # a trailing blank line is not a row
        lines.pop()
    return lines


def read_image_list(root) -> list[str]:
    """The image paths of ``ImageList/Imagelist.txt`` (defines row order and count)."""
    path = _need(Path(root) / "ImageList" / "Imagelist.txt", "image list")
    lines = _read_lines(path)
    for i, line in enumerate(lines):
        if not line.strip():
            raise _err(path, i + 1, "empty line in the image list")
    if not lines:
        raise _err(path, None, "the image list is empty")
    return [ln.strip() for ln in lines]


def available_concepts(root) -> list[str]:
    """Concept names that have a ``Groundtruth/AllLabels/Labels_<c>.txt`` file."""
    d = Path(root) / "Groundtruth" / "AllLabels"
    if not d.is_dir():
        raise FileNotFoundError(f"NUS-WIDE ground-truth folder not found: {d}")
    return sorted(p.stem[len("Labels_"):] for p in d.glob("Labels_*.txt"))


def read_concept_labels(root, concepts, n_images: int) -> np.ndarray:
    """(n_images, len(concepts)) bool matrix of ground-truth concept labels."""
    d = Path(root) / "Groundtruth" / "AllLabels"
    have = set(available_concepts(root))
    out = np.zeros((n_images, len(concepts)), dtype=bool)
    for k, c in enumerate(concepts):
        path = d / f"Labels_{c}.txt"
        if c not in have:
            raise FileNotFoundError(
                f"unknown NUS-WIDE concept {c!r}: {path} does not exist "
                f"(available: {', '.join(sorted(have)) or 'none'})"
            )
        lines = _read_lines(path)
        if len(lines) != n_images:
            raise _err(path, None, f"has {len(lines)} rows but ImageList/Imagelist.txt lists {n_images} images")
        vals = np.array([ln.strip() for ln in lines])
        bad = np.flatnonzero((vals != "0") & (vals != "1"))
        if bad.size:
            raise _err(path, int(bad[0]) + 1, f"expected 0 or 1, got {lines[bad[0]]!r}")
        out[:, k] = vals == "1"
    return out


def read_tag_list(root) -> list[str]:
    path = _need(Path(root) / "NUS_WID_Tags" / "TagList1k.txt", "tag list")
    names = [ln.strip() for ln in _read_lines(path)]
    seen = {}
    for i, t in enumerate(names):
        if not t:
            raise _err(path, i + 1, "empty tag name")
        if t in seen:
            raise _err(path, i + 1, f"tag {t!r} repeats line {seen[t]}")
        seen[t] = i + 1
    return names


def _stream_rows(path: Path, rows: np.ndarray, n_expected: int, parse):
    """Stream ``path`` once: ``parse(k, line_no, tokens)`` for the k-th selected row.

    Also parses the last row (where a truncated file shows) with ``k = -1`` and
    checks the row count against the image list. Memory stays O(one line).
    """
    pos = np.full(n_expected, -1, dtype=np.int64)
    pos[rows] = np.arange(len(rows))
    count = 0
    last = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for i, line in enumerate(fh):
            if count >= n_expected and not line.strip():
                continue  # trailing blank lines
            if count < n_expected and pos[count] >= 0:
                parse(int(pos[count]), i + 1, line.split())
            last = (i + 1, line)
            count += 1
    if count != n_expected:
        raise _err(
            path, None,
            f"has {count} rows but ImageList/Imagelist.txt lists {n_expected} images"
            + (" (truncated file?)" if count < n_expected else ""),
        )
    parse(-1, last[0], last[1].split())


def read_tags(root, rows: np.ndarray, n_images: int, n_tags: int) -> sp.csr_matrix:
    """Rows ``rows`` of ``AllTags1k.txt`` as a CSR uint8 matrix."""
    path = _need(Path(root) / "NUS_WID_Tags" / "AllTags1k.txt", "tag matrix")
    per_row = [None] * len(rows)

    def parse(k, line_no, tok):
        if len(tok) != n_tags:
            raise _err(path, line_no, f"has {len(tok)} values, TagList1k.txt names {n_tags} tags")
        # fast path: n_tags one-character tokens joined -> bytes compared at C speed
        joined = "".join(tok)
        if len(joined) != n_tags or not set(joined) <= _BITS:
            bad = next(j for j, t in enumerate(tok) if t not in ("0", "1"))
            raise _err(path, line_no, f"column {bad + 1}: expected 0 or 1, got {tok[bad]!r}")
        if k >= 0:
            per_row[k] = np.flatnonzero(np.frombuffer(joined.encode("ascii"), dtype=np.uint8) == 49)

    _stream_rows(path, rows, n_images, parse)
    counts = np.fromiter((r.size for r in per_row), dtype=np.int64, count=len(per_row))
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = np.concatenate(per_row) if per_row else np.zeros(0, np.int64)
    return sp.csr_matrix((np.ones(indices.size, np.uint8), indices, indptr), shape=(len(rows), n_tags))


def feature_file(root, ftype: str) -> Path:
    """The ``.dat`` file of one low-level feature type."""
    if ftype not in FEATURE_TYPES:
        raise ValueError(f"unknown NUS-WIDE feature type {ftype!r}; choose from {', '.join(FEATURE_TYPES)}")
    d = Path(root) / "Low_Level_Features"
    for name in (f"Normalized_{ftype}.dat", f"{ftype}.dat"):
        if (d / name).is_file():
            return d / name
    raise FileNotFoundError(f"NUS-WIDE feature file for {ftype} not found: {d / f'Normalized_{ftype}.dat'}")


def read_features(root, ftype: str, rows: np.ndarray, n_images: int) -> np.ndarray:
    """Rows ``rows`` of one low-level feature file as float32 (len(rows), dim)."""
    path = feature_file(root, ftype)
    dim = FEATURE_TYPES[ftype]
    out = np.empty((len(rows), dim), dtype=np.float32)

    def parse(k, line_no, tok):
        if len(tok) != dim:
            raise _err(path, line_no, f"has {len(tok)} values; {ftype} features are {dim}-D (truncated line?)")
        try:
            vals = np.asarray(tok, dtype=np.float64)
        except ValueError:
            bad = next(t for t in tok if not _is_float(t))
            raise _err(path, line_no, f"not a number: {bad!r}") from None
        if not np.isfinite(vals).all():
            raise _err(path, line_no, "NaN or inf value")
        if k >= 0:
            out[k] = vals

    _stream_rows(path, rows, n_images, parse)
    return out


def _is_float(t):
    try:
        float(t)
        return True
    except ValueError:
        return False


def _load_precomputed(features, rows, n_images) -> np.ndarray:
    if isinstance(features, (str, Path)):
        path = Path(features)
        if not path.is_file():
            raise FileNotFoundError(f"precomputed feature file not found: {path} (features is a file of "
                                    f"precomputed features, 'all', or NUS-WIDE feature types: "
                                    f"{', '.join(FEATURE_TYPES)})")
        if path.suffix == ".npy":
            A = np.load(path, mmap_mode="r", allow_pickle=False)
        elif path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as z:
                if len(z.files) != 1:
                    raise ValueError(f"{path}: expected one array, found {', '.join(z.files)}")
                A = z[z.files[0]]
        else:
            raise ValueError(f"precomputed features must be a .npy or .npz file, got {path}")
        where = str(path)
    else:
        A, where = np.asarray(features), "features"
    if A.ndim != 2 or A.shape[0] != n_images:
        raise ValueError(
            f"{where}: precomputed features must be (n_images, d) with one row per line of "
            f"ImageList/Imagelist.txt ({n_images}), got shape {A.shape}"
        )
    return np.asarray(A[rows], dtype=np.float32)


def _sample_groups(labels, caps, rng, single):
    """Rows whose only positive concept is column k (``single`` marks one-positive rows).

    ``caps[k]``: max images kept for column k (None = all, else a seeded sample).
    Returns (rows, group ids) sorted by row.
    """
    rows, groups = [], []
    for k in range(labels.shape[1]):
        idx = np.flatnonzero(single & labels[:, k])
        if caps[k] is not None and idx.size > caps[k]:
            idx = np.sort(rng.choice(idx, size=caps[k], replace=False))
        rows.append(idx)
        groups.append(np.full(idx.size, k, dtype=np.int64))
    rows, groups = np.concatenate(rows), np.concatenate(groups)
    order = np.argsort(rows, kind="stable")
    return rows[order], groups[order]


def select_images(labels, concepts, recipe, *, n_groups=30, min_group_size=500, max_per_group=None,
                  exclusive="pool", random_state=0):
    """Apply a sampling recipe to a (n_images, n_concepts) label matrix.

    ``exclusive`` (``hmlrf`` only): ``"pool"`` = an image joins a group when the
    concept is its only positive one in the whole pool, and eligibility counts
    such images; ``"chosen"`` = eligibility counts every positive image, and
    after the draw an image joins when the concept is its only positive one
    among the drawn concepts (more images per group; the paper does not say
    which it did).

    Returns ``(rows, groups, group_names)``; ``groups`` is None for ``recipe=None``.
    """
    if exclusive not in ("pool", "chosen"):
        raise ValueError(f"exclusive must be 'pool' or 'chosen', got {exclusive!r}")
    rng = np.random.default_rng(random_state)
    concepts = list(concepts)
    if recipe is None:
        return np.arange(labels.shape[0]), None, None
    if recipe == "hmlrf":
        single = labels.sum(axis=1) == 1
        sizes = (labels & single[:, None]).sum(axis=0) if exclusive == "pool" else labels.sum(axis=0)
        eligible = np.flatnonzero(sizes > min_group_size)
        if eligible.size < n_groups:
            kind = "single-concept " if exclusive == "pool" else ""
            raise ValueError(
                f"recipe 'hmlrf' needs {n_groups} concepts with more than {min_group_size} {kind}"
                f"images; only {eligible.size} qualify ({', '.join(concepts[i] for i in eligible) or 'none'})"
            )
        chosen = np.sort(rng.choice(eligible, size=n_groups, replace=False))
        if exclusive == "chosen":
            single = labels[:, chosen].sum(axis=1) == 1
        rows, groups = _sample_groups(labels[:, chosen], [max_per_group] * n_groups, rng, single)
        return rows, groups, [concepts[i] for i in chosen]
    if recipe in ("ghfart9", "ghfart18"):
        names = list(GHFART_9) + (list(GHFART_18_NEW) if recipe == "ghfart18" else [])
        missing = [c for c in names if c not in concepts]
        if missing:
            raise ValueError(f"recipe {recipe!r} needs concepts {', '.join(missing)} which are not loaded")
        cols = [concepts.index(c) for c in names]
        caps = [3000] * 9 + [1500] * (len(names) - 9)
        if max_per_group is not None:
            caps = [min(c, max_per_group) for c in caps]
        sub = labels[:, cols]
        rows, groups = _sample_groups(sub, caps, rng, sub.sum(axis=1) == 1)
        return rows, groups, names
    raise ValueError(f"unknown recipe {recipe!r}; choose from {', '.join(map(repr, RECIPES))}")


def load_nuswide(
    root,
    features=None,
    recipe="hmlrf",
    concepts=None,
    n_groups: int = 30,
    min_group_size: int = 500,
    max_per_group: int | None = None,
    exclusive: str = "pool",
    drop_untagged: bool = False,
    random_state=0,
    name: str | None = None,
) -> TaggedData:
    """Load NUS-WIDE from its official layout under ``root`` (see the module notes).

    Parameters
    ----------
    root : path
        Folder holding ``ImageList/``, ``Low_Level_Features/``, ``NUS_WID_Tags/``
        and ``Groundtruth/``.
    features : None, str, sequence of str, path or array
        Low-level feature types to concatenate (``"CH"``, ``"CM55"``, ``"CORR"``,
        ``"EDH"``, ``"WT"``, ``"BoW_int"``, or ``"all"``), or precomputed features
        (a ``.npy``/``.npz`` path or an array, one row per image of the list).
        None: GHF-ART's CM55+EDH+WT for its recipes, all six types otherwise.
    recipe : "hmlrf", "ghfart9", "ghfart18" or None
    concepts : list of str, optional
        The concept pool (default: every ``Labels_*.txt`` present).
    n_groups, min_group_size, max_per_group, exclusive : recipe parameters
        (see the module notes and :func:`select_images`).
    drop_untagged : bool
        Drop selected images with none of the 1k tags.
    random_state : int
        Seed of the recipe's random draws.

    Returns
    -------
    TaggedData with ``groups`` (concept of each image) for a recipe, flat layers,
    ``meta["group_names"]`` (the concepts) and ``meta["image_index"]`` (rows of
    ``Imagelist.txt``).
    """
    if recipe not in RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}; choose from {', '.join(map(repr, RECIPES))}")
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"NUS-WIDE root folder not found: {root}")
    images = read_image_list(root)
    n_images = len(images)
    pool = list(concepts) if concepts is not None else available_concepts(root)
    if recipe is not None and not pool:
        raise FileNotFoundError(f"no Labels_<concept>.txt files under {root / 'Groundtruth' / 'AllLabels'}")
    if recipe is not None:
        labels = read_concept_labels(root, pool, n_images)
        rows, groups, group_names = select_images(
            labels, pool, recipe, n_groups=n_groups, min_group_size=min_group_size,
            max_per_group=max_per_group, exclusive=exclusive, random_state=random_state,
        )
    else:
        rows, groups, group_names = np.arange(n_images), None, None
    tag_names = read_tag_list(root)
    Y = read_tags(root, rows, n_images, len(tag_names))
    if drop_untagged:
        keep = np.diff(Y.indptr) > 0
        rows, Y = rows[keep], Y[keep]
        groups = None if groups is None else groups[keep]
    if features is None:
        features = GHFART_FEATURES if recipe in ("ghfart9", "ghfart18") else tuple(FEATURE_TYPES)
    if isinstance(features, str) and features == "all":
        features = tuple(FEATURE_TYPES)
    if isinstance(features, str) and features in FEATURE_TYPES:
        features = (features,)
    if isinstance(features, (list, tuple)) and not features:
        raise ValueError(f"features lists no feature type; choose from {', '.join(FEATURE_TYPES)}")
    if isinstance(features, (list, tuple)) and all(isinstance(f, str) for f in features):
        for f in features:
            if f not in FEATURE_TYPES:
                raise ValueError(f"unknown NUS-WIDE feature type {f!r}; choose from {', '.join(FEATURE_TYPES)}")
        X = np.hstack([read_features(root, f, rows, n_images) for f in features])
        feature_desc = list(features)
    else:
        X = _load_precomputed(features, rows, n_images)
        feature_desc = str(features) if isinstance(features, (str, Path)) else "array"
    meta = {
        "source": str(root),
        "recipe": recipe,
        "exclusive": exclusive,
        "features": feature_desc,
        "random_state": random_state,
        "image_index": rows.tolist(),
    }
    if group_names is not None:
        meta["group_names"] = group_names
    return TaggedData(
        X=X, Y=Y, tag_names=tag_names, groups=groups,
        name=name or (f"nuswide-{recipe}" if recipe else "nuswide"), meta=meta,
    )
