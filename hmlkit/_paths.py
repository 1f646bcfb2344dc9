"""Where the kit finds things on disk, without any machine-specific path."""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def shared_data_dir() -> Path:
    """The shared development data folder.

    ``$HMLKIT_SHARED_DATA`` if set, else ``<repo>/../shared/data`` (the layout
    of the development and CI checkouts).
    """
    env = os.environ.get("HMLKIT_SHARED_DATA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data"


def corel16k_path() -> Path:
    return shared_data_dir() / "corel16k" / "Corel16k001-test.arff"


def corel5k_path() -> Path:
    """The shared Corel5k training split (mulan sparse ARFF, 4500 images)."""
    return shared_data_dir() / "corel5k" / "Corel5k-train-sparse.arff"
