"""A tiny xorshift64* generator for numba kernels.

The state is a one-element uint64 array owned by one tree, so every tree is
reproducible whatever thread grows it (the pynndescent way)."""
from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, inline="always")
def next_u64(state):
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return x * np.uint64(0x2545F4914F6CDD1D)


@nb.njit(cache=True, inline="always")
def rand_below(state, n):
    """Uniform integer in [0, n) (n >= 1)."""
    return np.int64((next_u64(state) >> np.uint64(11)) % np.uint64(n))


def tree_seeds(seed, n_trees):
    """One non-zero uint64 state per tree, derived from ``seed`` only, so the
    forest is the same for any number of jobs."""
    ss = np.random.SeedSequence(seed)
    states = ss.generate_state(n_trees, dtype=np.uint64)
    states[states == 0] = np.uint64(0x9E3779B97F4A7C15)
    return states
