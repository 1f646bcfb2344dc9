"""Data: the ``TaggedData`` container, synthetic profiles, loaders, tag sparsifiers."""
from .arff import load_arff
from .container import TaggedData
from .corel5k import load_corel5k
from .datasets import load_dataset, require
from .fetch import fetch_corel5k, fetch_corel16k, fetch_nuswide, fetch_url
from .npz import load_npz, save_npz
from .nuswide import load_nuswide
from .sparsify import hide_tags, remove_tags
from .synthetic import make_synthetic
from .trecvid import build_trecvid_med11, load_trecvid_med11

__all__ = [
    "TaggedData",
    "make_synthetic",
    "load_arff",
    "remove_tags",
    "hide_tags",
    "load_dataset",
    "require",
    "load_npz",
    "save_npz",
    "load_nuswide",
    "load_corel5k",
    "build_trecvid_med11",
    "load_trecvid_med11",
    "fetch_url",
    "fetch_nuswide",
    "fetch_corel16k",
    "fetch_corel5k",
]
