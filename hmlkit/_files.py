"""File modes shared by the kit's atomic writers (study results, ``save_npz``, the fit cache),
and the check of a folder they write in."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask():
    """The process umask, read without changing it where the OS allows."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode():
    """Mode of a normally written file: ``0o666`` less the umask (``0644`` under umask 022).
    A temporary file from ``tempfile.mkstemp`` is ``0600`` and would keep that after a rename."""
    return 0o666 & ~_umask()


def check_folder(path, what, create=True):
    """Folder ``path``, created if need be, after writing a file in it: permission bits
    alone do not stop root, a read-only mount does. Raises ``ValueError`` naming ``what``
    (the argument that gave the folder) and the path if ``path`` is a file or cannot be
    created or written to. ``create=False`` (a dry run) creates nothing: a missing folder
    is judged by its nearest existing parent, as creating it would be."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{what} {str(path)!r} is a file, not a folder")
    if create:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"{what} {str(path)!r} cannot be created ({exc.strerror or exc})") from None
        where, fails = path, "is not writable"
    elif path.is_dir():
        where, fails = path, "is not writable"
    else:
        where = next(p for p in path.absolute().parents if p.exists())
        if not where.is_dir():
            raise ValueError(f"{what} {str(path)!r} cannot be created (Not a directory: {where})")
        fails = f"cannot be created (in {where})"
    try:  # named as a temporary file of this process: swept by remove_stale_temps if left
        fd, probe = tempfile.mkstemp(prefix=f".write-check.{os.getpid()}-", suffix=".tmp", dir=where)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"{what} {str(path)!r} {fails} ({exc.strerror or exc})") from None
    return path
