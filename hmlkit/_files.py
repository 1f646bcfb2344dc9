"""File modes shared by the kit's atomic writers (study results, ``save_npz``)."""
from __future__ import annotations

import os


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
