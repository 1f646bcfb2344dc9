"""Multi-label ARFF loader (mulan and MEKA layouts, dense and sparse rows).

Parsing is delegated to liac-arff (``import arff``), which reads both the
dense (``v1,v2,...``) and the sparse (``{i v, ...}``) row forms and reports
the offending line of a malformed row. On the Corel16k sample (1744 x 653,
2.3 MB) it takes about 0.3 s, so no hand-written parser is needed.

Where the labels are:

* mulan: labels are the *last* attributes; their number comes from the
  companion XML file, which we do not read -- give ``n_labels`` (or
  ``n_features``).
* MEKA: the ``@relation`` line carries ``-C k``; ``k > 0`` means the *first*
  ``k`` attributes are labels, ``k < 0`` the *last* ``|k|``.

Explicit ``n_features`` / ``n_labels`` win over the ``-C`` option.
"""
from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._validation import check_int
from .container import TaggedData

_MEKA_C = re.compile(r"-C\s+(-?\d+)")


def _open_text(path: Path, errors: str = "strict"):
    """``path`` as UTF-8 text, a leading byte-order mark dropped (some editors write one,
    and liac-arff then fails on the first line) and a gzip-compressed file read through
    gzip (an ``.arff.gz`` saved as ``.arff``)."""
    with open(path, "rb") as fh:
        compressed = fh.read(2) == b"\x1f\x8b"
    if compressed:
        return gzip.open(path, "rt", encoding="utf-8-sig", errors=errors)
    return open(path, "r", encoding="utf-8-sig", errors=errors)


def _check_arff_file(path: Path):
    """Say what is wrong with a file that cannot hold an ARFF data set (empty, not text,
    no ``@relation`` first, no ``@data`` section, no data rows) before parsing it, and
    return the MEKA ``-C`` option of its ``@relation`` line (None without one).
    Reads up to the first data row only."""
    if path.stat().st_size == 0:
        raise ValueError(f"{path}: the file is empty, not an ARFF data set")
    meka, state = None, "start"
    try:
        with _open_text(path) as fh:
            for line in fh:
                if "\x00" in line:
                    raise ValueError(f"{path}: not an ARFF text file (it holds binary data)")
                s = line.strip()
                if not s or s.startswith("%"):
                    continue
                if state == "start":
                    if not s.lower().startswith("@relation"):
                        raise ValueError(f"{path}: not an ARFF file: its first statement is {s[:40]!r}, "
                                         f"not @relation")
                    meka, state = _meka_label_count(s), "header"
                elif state == "header":
                    if s.lower().startswith("@data"):
                        state = "data"
                else:
                    return meka
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not an ARFF text file (not UTF-8 text: {exc})") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:  # gzip's errors on a damaged archive
        raise ValueError(f"{path}: a damaged gzip-compressed file ({exc})") from None
    if state == "start":
        raise ValueError(f"{path}: not an ARFF file: no @relation line (only blank lines and comments)")
    if state == "header":
        raise ValueError(f"{path}: the ARFF file has no @data section")
    raise ValueError(f"{path}: the ARFF file has a header but no data rows")


def _data_line_numbers(path: Path) -> np.ndarray:
    """1-based file line number of every data row (to name lines in errors)."""
    lines = []
    in_data = False
    with _open_text(path, errors="replace") as fh:
        for no, line in enumerate(fh, start=1):
            s = line.strip()
            if not in_data:
                if s.lower().startswith("@data"):
                    in_data = True
                continue
            if s and not s.startswith("%"):
                lines.append(no)
    return np.asarray(lines, dtype=np.int64)


def _meka_label_count(relation: str):
    m = _MEKA_C.search(relation or "")
    return None if m is None else int(m.group(1))


def load_arff(path, n_features=None, n_labels=None, label_location="end", name=None) -> TaggedData:
    """Load a multi-label ARFF file as :class:`TaggedData`.

    Parameters
    ----------
    path : str or Path
        The ``.arff`` file.
    n_features, n_labels : int, optional
        Number of visual-feature / label attributes (give one; the other is
        the rest). If neither is given, the MEKA ``-C k`` option of the
        ``@relation`` line is used; without it the call fails.
    label_location : {"end", "start"}
        Where the labels are when ``n_features`` / ``n_labels`` is given
        (mulan: ``"end"``). Ignored when the layout comes from ``-C``.
    name : str, optional
        Data set name; defaults to the file stem.

    Returns
    -------
    TaggedData
        ``X`` float32 features, ``Y`` CSR uint8 labels, ``tag_names`` the
        label attribute names, one flat layer, no groups.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        On a malformed file (bad row, wrong value count, missing value, label
        not 0/1, non-numeric feature) -- naming the file and line -- or on an
        impossible label layout.
    """
    import arff as liac_arff

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"ARFF file not found: {path}")
    if label_location not in ("end", "start"):
        raise ValueError(f"label_location must be 'end' or 'start', got {label_location!r}")
    # 500.7 or '500' used to be truncated / parsed silently
    n_features = None if n_features is None else check_int(n_features, "n_features")
    n_labels = None if n_labels is None else check_int(n_labels, "n_labels")
    _check_arff_file(path)
    try:
        with _open_text(path) as fh:
            obj = liac_arff.load(fh)
    except liac_arff.ArffException as exc:
        # liac-arff messages already say "line N"
        raise ValueError(f"{path}: malformed ARFF: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a UTF-8 text ARFF file ({exc})") from exc

    attrs = obj["attributes"]
    n_attr = len(attrs)
    rows = obj["data"]

    # --- where are the labels -------------------------------------------------
    if n_features is not None or n_labels is not None:
        if n_features is not None and n_labels is not None and n_features + n_labels != n_attr:
            raise ValueError(
                f"{path}: n_features={n_features} + n_labels={n_labels} != {n_attr} attributes"
            )
        k = int(n_labels) if n_labels is not None else n_attr - int(n_features)
        if not 1 <= k < n_attr:
            raise ValueError(f"{path}: {k} label attributes out of {n_attr} is impossible")
        label_first = label_location == "start"
    else:
        c = _meka_label_count(obj.get("relation", ""))
        if c is None or c == 0:
            raise ValueError(
                f"{path}: cannot tell which attributes are labels; give n_features or n_labels "
                f"(mulan) or use a MEKA '-C k' option in the @relation line"
            )
        k, label_first = abs(c), c > 0
        if k >= n_attr:
            raise ValueError(f"{path}: -C {c} names {k} labels but the file has only {n_attr} attributes")
    if label_first:
        lab_idx, feat_idx = np.arange(k), np.arange(k, n_attr)
    else:
        lab_idx, feat_idx = np.arange(n_attr - k, n_attr), np.arange(n_attr - k)

    # --- values ----------------------------------------------------------------
    line_of = None

    def where(i):
        nonlocal line_of
        if line_of is None:
            line_of = _data_line_numbers(path)
        return f"line {int(line_of[i])}" if i < line_of.size else f"data row {i + 1}"

    n = len(rows)
    if n == 0:
        raise ValueError(f"{path}: no data rows")
    table = np.empty((n, n_attr), dtype=object)
    for i, r in enumerate(rows):
        table[i] = r
    missing = np.equal(table, None)
    if missing.any():
        i, j = np.argwhere(missing)[0]
        raise ValueError(f"{path}: {where(i)}: missing value '?' for attribute {attrs[j][0]!r}")
    try:
        vals = table.astype(np.float64)
    except (TypeError, ValueError):
        for i in range(n):
            for j in range(n_attr):
                try:
                    float(table[i, j])
                except (TypeError, ValueError):
                    raise ValueError(
                        f"{path}: {where(i)}: non-numeric value {table[i, j]!r} for attribute {attrs[j][0]!r}"
                    ) from None
        raise
    L = vals[:, lab_idx]
    bad = ~np.isin(L, (0.0, 1.0))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"{path}: {where(i)}: label {attrs[lab_idx[j]][0]!r} has value {L[i, j]!r}, must be 0 or 1"
        )
    X = vals[:, feat_idx]
    if not np.isfinite(X).all():
        i, j = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(f"{path}: {where(i)}: non-finite value for attribute {attrs[feat_idx[j]][0]!r}")
    big = np.abs(X) > np.finfo(np.float32).max
    if big.any():
        i, j = np.argwhere(big)[0]
        raise ValueError(f"{path}: {where(i)}: value {X[i, j]!r} of attribute {attrs[feat_idx[j]][0]!r} is too "
                         f"large for float32 features: rescale the feature")
    X = X.astype(np.float32)
    Y = sp.csr_matrix(L.astype(np.uint8))
    return TaggedData(
        X=X,
        Y=Y,
        layers=None,
        tag_names=[attrs[j][0] for j in lab_idx],
        name=name if name is not None else path.stem,
        meta={
            "source": path.name,
            "format": "arff",
            "relation": obj.get("relation", ""),
            "feature_names": [attrs[j][0] for j in feat_idx],
            "labels_first": bool(label_first),
        },
    )
