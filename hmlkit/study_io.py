"""Atomic writing of study results: a failed or interrupted run never leaves
a half-written file and never destroys the previous result."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _atomic_target(path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    return path, Path(tmp)


def write_dataset_atomic(ds, path):
    """Write an xarray Dataset to netCDF at ``path`` via a temporary file + rename."""
    path, tmp = _atomic_target(path)
    try:
        ds.to_netcdf(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def save_figure_atomic(fig, path, **kwargs):
    """Save a matplotlib figure at ``path`` via a temporary file + rename."""
    path, tmp = _atomic_target(path)
    kwargs.setdefault("dpi", 110)
    kwargs.setdefault("bbox_inches", "tight")
    try:
        fig.savefig(tmp, format=path.suffix.lstrip(".") or "png", **kwargs)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path
