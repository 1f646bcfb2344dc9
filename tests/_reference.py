"""Slow, obviously correct reference of the HML-RF split criterion (Eq. 3-9),
straight from the definitions, for checking the numba kernels."""
import numpy as np

from hmlkit.forest.equations import layer_is_impure, split_gain  # noqa: F401 (Eq. 3-5, used by tests)


def node_masses(Y, S, tags, soft, pos, neg, ignore_untagged=False):
    """Positive / total mass of each tag of ``tags`` for each sample of S.
    ``ignore_untagged``: in a hard layer a sample with none of ``tags`` has
    no mass (unknown) instead of counting as a negative."""
    P = np.zeros((len(S), len(tags)))
    M = np.zeros((len(S), len(tags)))
    for r, s in enumerate(S):
        if soft and Y[s, tags].sum() == 0:  # missing in this layer: soft tags
            P[r] = pos[s, tags]
            M[r] = pos[s, tags] + neg[s, tags]
        elif ignore_untagged and Y[s, tags].sum() == 0:
            continue  # unknown: no mass
        else:
            P[r] = Y[s, tags]
            M[r] = 1.0
    return P, M


def reference_best_split(X, S, features, Y, layers, pos, neg, use_soft, min_leaf, ignore_untagged=False):
    """Return (feature, threshold, gain, target_layer) of the best split."""
    Y = np.asarray(Y)
    L = len(layers)
    target = -1
    for k in range(L):
        soft = use_soft and k < L - 1
        P, M = node_masses(Y, S, layers[k], soft, pos, neg, ignore_untagged)
        if layer_is_impure(P, M):
            target = k
            break
    if target < 0:
        return -1, 0.0, 0.0, -1
    best = (-1, np.float32(0.0), 1e-12)
    for f in features:
        v = X[S, f]
        u = np.unique(v)
        for a, b in zip(u[:-1], u[1:]):
            t = np.float32((np.float64(a) + np.float64(b)) / 2)
            if t <= a:
                t = b
            left = v < t
            if left.sum() < min_leaf or (~left).sum() < min_leaf:
                continue
            gain = split_gain(P, M, left)
            if gain > best[2]:
                best = (f, t, gain)
    return best[0], best[1], best[2], target
