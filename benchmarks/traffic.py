"""Memory a forest fit reads, per tree: ``python -m benchmarks.traffic``.

Counts, by instrumentation of the growth itself (``grow_tree``'s ``tally``, exact and
independent of the machine), the bytes each loop of one tree's growth reads, for trees of the
flat forest (one layer of every tag, sqrt(d) features, min leaf 3, no bootstrap, the estimator's
``split_sample``) on:

- ``nuswide``: the nuswide profile at 17,523 x 4096 (``--n`` fewer samples);
- ``scale``: the scale benchmark's data, ``--n`` x ``--features`` (default 1,000,000 x 512).

Each tree is grown from the same seed with the local subtrees' blocks of float keys read
from X ("float keys": the former layout, and what a fit uses when a feature's ranks need more
than 16 bits) and, when every feature's ranks fit in 16 bits, with those of the rank codes
(``sample_keys``) in each layout, "dense codes" and "sparse codes" (the fit takes the sparse
one when fewer than half the keys are off their feature's mode), each at its own
``local_size_for`` (``--local-size``: all at that size); the trees must be identical (the
run stops otherwise). Per loop, for each:

- ``gather R``: ``search_node``'s gathers of a node's keys from the feature-major ranks R
  (the nodes above the local subtrees): the key bytes, and the 64-byte lines they lie on;
- ``gather sparse``: the gathers from a sparse feature's list (entry, position, key);
- ``fill read``: ``fill_local_keys`` / ``fill_local_ranks``: each local subtree's rows of X /
  of the ranks, read whole;
- ``fill write``: the block L they write (d x local_size keys);
- ``gather L``: the local subtrees' gathers from L;
- ``partition``: the key each sample of a split node is sent by (R, L, or X on a subsampled node).

"from memory" adds, in lines of 64 bytes where the reads are scattered, what comes from the
arrays larger than any cache (R, X, the ranks): gather R (lines) + gather sparse + fill read +
partition (lines, outside L); "block" what goes to and from L, a block sized to stay in cache
(``local_size_for``). The figures are means over the trees grown.
"""
from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from hmlkit.forest import _grow
from hmlkit.forest import _split as S_
from hmlkit.forest._keys import sample_keys
from hmlkit.forest._tagdata import build_tag_arrays
from hmlkit.forest.estimator import SPLIT_SAMPLE

MIN_LEAF = 3
NUSWIDE_N = 17523
SCALE_N, SCALE_D = 1_000_000, 512


def load(shape, n=None, n_features=None):
    """(X float32, Y csr) of a shape: the nuswide profile, or the scale benchmark's data."""
    from hmlkit.data import load_dataset, make_synthetic

    if shape == "nuswide":
        D = load_dataset("nuswide", n_samples=int(n or NUSWIDE_N))
    elif shape == "scale":
        D = make_synthetic("nuswide", n_samples=int(n or SCALE_N), n_features=int(n_features or SCALE_D),
                           random_state=0)
    else:
        raise ValueError(f"unknown shape {shape!r}; choose nuswide or scale")
    return np.ascontiguousarray(D.X, dtype=np.float32), D.Y.tocsr()


def tree_tally(X, keys, tag_args, seed, max_features, split_sample=SPLIT_SAMPLE, local_size=None):
    """(tree arrays, training leaves, tally, seconds) of one tree grown by ``grow_one``."""
    tally = np.zeros(S_.TALLY_SIZE, np.int64)
    t = time.perf_counter()
    out, leaf = _grow.grow_one(X, keys, tag_args, None, np.array([seed], np.uint64), MIN_LEAF, max_features,
                               split_sample, local_size, tally)
    return out, leaf, tally, time.perf_counter() - t


def figures(tally):
    """{loop: bytes} of one tally (see the module's docstring), with "from memory" and "block"."""
    r, l_ = S_.TALLY_R, S_.TALLY_L
    line = S_.LINE
    f = {"gather R keys": tally[r], "gather R lines": line * tally[r + 1], "gather sparse": tally[r + 2],
         "features gathered R": tally[r + 3], "fill read": tally[S_.TALLY_FILL_READ],
         "fill write": tally[S_.TALLY_FILL_WRITE], "gather L keys": tally[l_], "gather L lines": line * tally[l_ + 1],
         "features gathered L": tally[l_ + 3], "partition keys": tally[S_.TALLY_PART_BYTES],
         "partition lines": line * tally[S_.TALLY_PART_LINES], "nodes searched": tally[S_.TALLY_SEARCHES]}
    f["from memory"] = f["gather R lines"] + f["gather sparse"] + f["fill read"] + f["partition lines"]
    f["block"] = f["fill write"] + f["gather L lines"]
    return f


def measure(shape="nuswide", n=None, n_features=None, trees=3, local_size=None, progress=print):
    """Mean figures per tree ({way: {loop: bytes}}) over ``trees`` trees,
    each grown every way and checked identical; also the shape, local_size and seconds.
    ``local_size``: the local subtrees' size (None: ``local_size_for``, a fit's)."""
    X, Y = load(shape, n, n_features)
    n, d = X.shape
    tag_args = build_tag_arrays(Y, [np.arange(Y.shape[1], dtype=np.int64)]).kernel_args()
    max_features = max(1, int(math.sqrt(d)))
    t = time.perf_counter()
    keys = _grow.fit_keys(X)
    keys_s = time.perf_counter() - t
    ways = {"float keys": keys[:8]}
    fit_way = "float keys"
    if keys[8].shape[0] > 0 or keys[9].shape[0] > 0:
        fit_way = "sparse codes" if keys[9].shape[0] > 0 else "dense codes"
        for way, sparse in (("dense codes", False), ("sparse codes", True)):
            ways[way] = keys if way == fit_way else (*keys[:8], *sample_keys(keys[0], keys[3], keys[1], sparse))
    sums = {w: {} for w in ways}
    secs = {w: [] for w in ways}
    for i in range(trees):
        first = None
        for w, k in ways.items():
            out, leaf, tally, s = tree_tally(X, k, tag_args, 1 + i, max_features, local_size=local_size)
            if first is None:
                first = (out, leaf)
            elif not (all(np.array_equal(a, b) for a, b in zip(out, first[0])) and np.array_equal(leaf, first[1])):
                raise RuntimeError(f"tree {i}: {w} grew another tree than float keys")
            for key, v in figures(tally).items():
                sums[w][key] = sums[w].get(key, 0) + int(v)
            secs[w].append(s)
        if progress:
            progress(f"tree {i + 1}/{trees}: " + ", ".join(f"{w} {secs[w][-1]:.1f} s" for w in ways))
    mean = {w: {key: v / trees for key, v in sums[w].items()} for w in ways}
    return {"shape": shape, "n": n, "d": d, "trees": trees, "fit_way": fit_way,
            "local_size": {w: (_grow.local_size_for(d, n, 4 if w == "float keys" else 2) if local_size is None
                           else local_size) for w in ways},
            "keys_s": keys_s, "figures": mean, "seconds": secs, "identical": True}


def format_table(res):
    """The printed lines of ``measure``'s result: MB per tree by loop, each way, and the ratio."""
    ways = list(res["figures"])
    lines = [f"{res['shape']} {res['n']:,} x {res['d']}: {res['trees']} tree(s) (flat, sqrt features, min leaf "
             f"{MIN_LEAF}), local_size " + ", ".join(f"{v} ({w})" for w, v in res["local_size"].items())
             + "; MB per tree (1e6 bytes)",
             f"{'loop':22s}" + "".join(f"{w:>14s}" for w in ways) + "".join(f"{w.split()[0] + '/float':>14s}"
                                                                             for w in ways[1:])]
    first = res["figures"][ways[0]]
    for key in first:
        counts = key.startswith(("features", "nodes"))
        vals = [res["figures"][w][key] for w in ways]
        cells = "".join(f"{v:14,.0f}" if counts else f"{v / 1e6:14.1f}" for v in vals)
        ratio = "".join(f"{v / vals[0]:14.3f}" if vals[0] else f"{'':14s}" for v in vals[1:])
        lines.append(f"{key:22s}{cells}{ratio}")
    if len(ways) > 1:
        lines.append(f"trees identical every way: yes; a fit at this shape uses {res['fit_way']}")
    else:
        lines.append("rank codes: not used at this shape (a feature's ranks need more than 16 bits, or no local "
                     "subtrees)")
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.traffic", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", default="nuswide", choices=("nuswide", "scale"))
    p.add_argument("--n", type=int, default=None, help=f"samples (default: nuswide {NUSWIDE_N:,}, scale {SCALE_N:,})")
    p.add_argument("--features", type=int, default=None, help=f"scale: features (default {SCALE_D})")
    p.add_argument("--trees", type=int, default=3, help="trees grown (each every way)")
    p.add_argument("--local-size", type=int, default=None, help="local subtrees' size (default: a fit's)")
    args = p.parse_args(argv)
    if args.trees < 1 or (args.n is not None and args.n < 2 * MIN_LEAF):
        p.error("--trees must be >= 1 and --n >= 6")
    res = measure(args.shape, args.n, args.features, args.trees, args.local_size)
    for line in format_table(res):
        print(line)
    print(f"split keys {res['keys_s']:.1f} s; seconds per tree: "
          + "; ".join(f"{w} {', '.join(f'{s:.1f}' for s in v)}" for w, v in res["seconds"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
