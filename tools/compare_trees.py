"""Same trees before and after a change of the forest kernels: grow fixed-seed forests with two
copies of hmlkit and compare every tree array and every training leaf.

    python tools/compare_trees.py BEFORE_SRC AFTER_SRC [--out DIR]

BEFORE_SRC / AFTER_SRC are folders holding an ``hmlkit`` package (e.g. a git worktree of main
and this one); each grows the forests below in its own subprocess (``PYTHONPATH=SRC``) and saves
them as ``.npz``; then every array (feature, threshold, children, leaf ids, leaf counts and
``train_leaves_``) must be identical, threshold bits included. Forests (seed 0, min leaf 3,
sqrt features, 2 threads):

- ``trecvid``: trecvid profile with its layers and soft tags, 50 trees;
- ``flat``: trecvid profile, ``hierarchy=False``, 50 trees;
- ``nuswide_flat``: nuswide profile at 5,000 samples, ``hierarchy=False``, 12 trees;
- ``nuswide_layers``: the same with 2 estimated layers and soft tags, 12 trees;
- ``corel5k``: Corel5k with its estimated layers, 50 trees, and ``corel5k_flat`` without them,
  50 trees (both skipped when the file is missing): binary visual words, the sparse gather's shape;
- ``nuswide_local``: the nuswide profile at 17,523 samples, ``hierarchy=False``, 4 trees: local
  subtrees, with sparse rank codes where the kernels have them;
- ``dense_local``: the trecvid profile at 20,000 samples with its features made continuous (a
  little noise, seed 0), ``hierarchy=False``, 4 trees: local subtrees with dense rank codes.

Exit status 0 when all match; the last line says ``identical`` or lists the differences.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import numpy as np

ARRAYS = ("feature_", "threshold_", "children_left_", "children_right_", "leaf_id_", "n_leaves_", "node_offset_",
          "train_leaves_")


def _forests():
    from hmlkit.data import load_dataset
    from hmlkit.tags import estimate_layers

    tv = load_dataset("trecvid")
    nus = load_dataset("nuswide", n_samples=5000)
    from hmlkit.data import make_synthetic

    out = [("trecvid", tv, tv.layers, True, 50), ("flat", tv, None, False, 50),
           ("nuswide_flat", nus, None, False, 12),
           ("nuswide_layers", nus, estimate_layers(nus.Y, n_layers=2, random_state=0), True, 12),
           ("nuswide_local", load_dataset("nuswide", n_samples=17523), None, False, 4)]
    dense = make_synthetic("trecvid", n_samples=20000, random_state=0)
    X = np.asarray(dense.X, np.float32)
    X = X + np.float32(0.01) * np.random.default_rng(0).standard_normal(X.shape, dtype=np.float32)
    out.append(("dense_local", types.SimpleNamespace(X=X, Y=dense.Y), None, False, 4))
    try:
        cor = load_dataset("corel5k")
        out.append(("corel5k", cor, cor.layers, True, 50))
        out.append(("corel5k_flat", cor, None, False, 50))
    except (FileNotFoundError, OSError) as exc:
        print(f"corel5k skipped: {exc}", file=sys.stderr)
    return out


def dump(folder):
    """Grow the forests with the hmlkit on sys.path and save them in ``folder``."""
    from hmlkit import HMLForest

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, D, layers, hierarchy, trees in _forests():
        f = HMLForest(n_estimators=trees, min_samples_leaf=3, hierarchy=hierarchy, random_state=0, n_jobs=2,
                      verbose=False).fit(D.X, D.Y, layers)
        np.savez(folder / f"{name}.npz", **{a: getattr(f, a) for a in ARRAYS})
        print(f"{name}: {trees} trees, {int(f.n_leaves_.sum())} leaves", file=sys.stderr)


def compare(a, b):
    """Differences between the forests saved in folders ``a`` and ``b`` (empty: identical)."""
    diffs = []
    names = sorted(p.stem for p in Path(a).glob("*.npz"))
    if names != sorted(p.stem for p in Path(b).glob("*.npz")):
        diffs.append(f"different forests: {names} vs {sorted(p.stem for p in Path(b).glob('*.npz'))}")
    for name in names:
        if not (Path(b) / f"{name}.npz").exists():
            continue
        A, B = np.load(Path(a) / f"{name}.npz"), np.load(Path(b) / f"{name}.npz")
        for arr in ARRAYS:
            x, y = A[arr], B[arr]
            if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
                diffs.append(f"{name}.{arr} differs")
    return names, diffs


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("before", nargs="?")
    p.add_argument("after", nargs="?")
    p.add_argument("--out", help="folder for the saved forests (default: a temporary one)")
    p.add_argument("--_dump", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._dump:
        dump(args._dump)
        return 0
    if not (args.before and args.after):
        p.error("give BEFORE_SRC and AFTER_SRC")
    out = Path(args.out or tempfile.mkdtemp(prefix="compare_trees_"))
    for tag, src in (("before", args.before), ("after", args.after)):
        env = dict(os.environ, PYTHONPATH=str(Path(src).resolve()))
        code = "import hmlkit, sys; print(hmlkit.__file__, file=sys.stderr)"
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--_dump", str(out / tag)], check=True, env=env)
    names, diffs = compare(out / "before", out / "after")
    for d in diffs:
        print(d)
    print(f"{len(names)} forests ({', '.join(names)}), {len(ARRAYS)} arrays each: "
          + ("identical" if not diffs else f"{len(diffs)} DIFFERENCES"))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
