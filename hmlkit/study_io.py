"""Atomic writing of study results: a failed or interrupted run never leaves
a half-written file and never destroys the previous result."""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path``; on leaving the block without an
    error, rename it onto ``path`` (atomic on one file system). On an error the
    temporary file is removed and ``path`` is left as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_dataset_atomic(ds, path):
    """Write an xarray Dataset to netCDF at ``path`` via a temporary file + rename."""
    with atomic_path(path) as tmp:
        ds.to_netcdf(tmp)
    return Path(path)


def save_figure_atomic(fig, path, **kwargs):
    """Save a matplotlib figure at ``path`` via a temporary file + rename."""
    kwargs.setdefault("dpi", 110)
    kwargs.setdefault("bbox_inches", "tight")
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or "png", **kwargs)
    return Path(path)


def write_text_atomic(text, path):
    """Write ``text`` to ``path`` via a temporary file + rename."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)
