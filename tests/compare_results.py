"""Compare two folders of study results (``.nc``) value by value, attributes ignored.

    python tests/compare_results.py BEFORE_DIR AFTER_DIR [--ignore VAR ...]

Every ``.nc`` of either folder must be in both; every data variable and coordinate of
each must have the same dims, the same shape and the same values (NaN equal to NaN,
floats compared exactly unless ``--rtol`` is given). Attributes (duration, git commit,
parameters, timestamps) are not compared. Variables that measure time (``--ignore``,
default: ``timing_s``, ``timing_cpu_s``, ``cpu_seconds``, ``fit_seconds``, ``fit_seconds_hidden``) are skipped:
they differ run to run. Exit status 0 when everything matches, 1 otherwise; the last
line says ``N files, M variables: identical`` or lists the differences.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

TIMING_VARS = ("timing_s", "timing_cpu_s", "cpu_seconds", "seconds", "fit_seconds", "fit_seconds_hidden", "duration_s")


def _equal(a, b, rtol):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        if rtol:
            return bool(np.allclose(a, b, rtol=rtol, atol=0.0, equal_nan=True))
        return bool(np.array_equal(a, b, equal_nan=True))
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        return False
    return bool(np.array_equal(a.astype(str) if a.dtype.kind in "OUS" else a,
                               b.astype(str) if b.dtype.kind in "OUS" else b))


def compare_datasets(a, b, ignore=TIMING_VARS, rtol=0.0):
    """Differences between two xarray Datasets (a list of strings; empty when equal)."""
    diffs = []
    names_a = set(a.variables) - set(ignore)
    names_b = set(b.variables) - set(ignore)
    for name in sorted(names_a ^ names_b):
        diffs.append(f"variable {name!r} only in {'before' if name in names_a else 'after'}")
    for name in sorted(names_a & names_b):
        va, vb = a.variables[name], b.variables[name]
        if va.dims != vb.dims:
            diffs.append(f"{name}: dims {va.dims} != {vb.dims}")
        elif not _equal(va.values, vb.values, rtol):
            diffs.append(f"{name}: values differ")
    return diffs


def compare_dirs(before, after, ignore=TIMING_VARS, rtol=0.0):
    """(n_files, n_variables, differences) of the ``.nc`` files of two folders."""
    import xarray as xr

    before, after = Path(before), Path(after)
    fa = {p.name for p in before.glob("*.nc")}
    fb = {p.name for p in after.glob("*.nc")}
    diffs = [f"{n}: only in {'before' if n in fa else 'after'}" for n in sorted(fa ^ fb)]
    n_vars = 0
    for n in sorted(fa & fb):
        with xr.open_dataset(before / n) as a, xr.open_dataset(after / n) as b:
            a, b = a.load(), b.load()
            n_vars += len(set(a.variables) - set(ignore))
            diffs += [f"{n}: {d}" for d in compare_datasets(a, b, ignore, rtol)]
    return len(fa & fb), n_vars, diffs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--ignore", nargs="*", default=list(TIMING_VARS))
    ap.add_argument("--rtol", type=float, default=0.0)
    args = ap.parse_args(argv)
    n_files, n_vars, diffs = compare_dirs(args.before, args.after, args.ignore, args.rtol)
    for d in diffs:
        print("DIFF", d)
    if n_files == 0:
        print("no .nc file in common")
        return 1
    verdict = "identical" if not diffs else f"{len(diffs)} difference(s)"
    print(f"{n_files} files, {n_vars} variables: {verdict}")
    return 0 if not diffs and n_files else 1


if __name__ == "__main__":
    sys.exit(main())
