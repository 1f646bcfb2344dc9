"""What the benchmarks share: the process's peak memory, compiling the forest's kernels
before a timed fit, and running a measurement in a fresh interpreter."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from hmlkit.forest import HMLForest, _grow, _keys
from hmlkit.forest._tagdata import build_tag_arrays

# the folder holding the package ``benchmarks``: on a child's path whatever its working folder
REPO_ROOT = Path(__file__).resolve().parents[1]


def peak_gb():
    """The process's peak resident memory in GiB (the "_gb" names and the targets too)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # KiB on Linux


def warm():
    """Compile the kernels on a tiny problem (numba caches them on disk); returns the seconds."""
    rng = np.random.default_rng(0)
    X = rng.random((60, 5)).astype(np.float32)
    Y = (rng.random((60, 4)) < 0.3).astype(np.uint8)
    t = time.perf_counter()
    HMLForest(n_estimators=2, random_state=0).fit(X, Y, [np.arange(2), np.arange(2, 4)])
    HMLForest(n_estimators=2, random_state=0, hierarchy=False).fit(X, Y)
    # the uint32 split keys that most features with more than 65,536 values take: compiled here,
    # not inside the first timed fit of that size (narrow=2 makes these features wide)
    keys = _grow.split_keys(X, narrow=2)
    _grow.grow_one(X, keys, build_tag_arrays(sp.csr_matrix(Y), [np.arange(4)]).kernel_args(), None,
                   np.array([1], np.uint64), 3, 2, 32768)
    warm_rank_codes()
    return time.perf_counter() - t


def warm_rank_codes():
    """Compile the growth with local blocks of rank codes, which only fits of 16,384 samples
    or more take (``fit_keys``): here, not inside the first timed fit of that size."""
    rng = np.random.default_rng(0)
    X = rng.random((60, 5)).astype(np.float32)
    Y = sp.csr_matrix((rng.random((60, 4)) < 0.3).astype(np.uint8))
    keys = _grow.split_keys(X)
    tag_args = build_tag_arrays(Y, [np.arange(4)]).kernel_args()
    for sparse in (False, True):
        codes = _keys.sample_keys(keys[0], keys[3], keys[1], sparse=sparse)
        _grow.grow_one(X, (*keys, *codes), tag_args, None, np.array([1], np.uint64), 3, 2, None, 16)


def child_env():
    """The environment of a benchmark's child interpreter: this one's, with the repository
    root first on PYTHONPATH so that ``-m benchmarks...`` resolves from any working folder
    (a notebook's kernel runs in ``studies/``)."""
    env = os.environ.copy()
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                             if p])
    return env


def run_child(cmd, what):
    """Run a benchmark's child interpreter; its result is the JSON of its last printed
    line. A failure is raised with the child's own message, not only its exit status."""
    out = subprocess.run(cmd, capture_output=True, text=True, env=child_env())
    if out.returncode:
        raise RuntimeError(f"{what} failed (exit status {out.returncode}):\n"
                           + "\n".join(out.stderr.strip().splitlines()[-15:]))
    return json.loads(out.stdout.strip().splitlines()[-1])
