"""How a run of the studies scales with workers, from the cells its results measured.

    python tools/scaling.py [--results results] [--profile standard] [--workers 2,8,32,128]
    python tools/scaling.py --profile paper --estimate      # the paper profile, scaled (cost model)

Reads each study's stored cells (their CPU seconds, ``hmlkit.studies.cells``) and its CPU
outside them, then prints: the run's CPU, its critical path (the longest cell; with
``--estimate`` of the profile's estimated cells) and, per worker count, the wall time of a
list schedule of every study's cells, longest first, on that many single-threaded workers,
plus each study's own part (loading, plots) spread over them. It is a projection: it
assumes the workers as fast as the machine that measured the cells and no transfer time.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hmlkit.studies import cost  # noqa: E402
from hmlkit.studies.profiles import STUDIES  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=str(ROOT / "results"), help="the repository's results folder")
    ap.add_argument("--profile", default="standard")
    ap.add_argument("--workers", default="2,8,32,128")
    ap.add_argument("--estimate", action="store_true",
                    help="scale the nearest stored profile's cells to --profile (else: its own measured cells)")
    args = ap.parse_args(argv)
    workers = [int(w) for w in args.workers.split(",")]
    cells, overhead, missing = [], 0.0, []
    longest = (0.0, "")
    for name in STUDIES:
        est = cost.estimate(name, args.profile, args.results)
        if not est.basis or (est.basis != args.profile and not args.estimate):
            missing.append(name)
            continue
        cells += est.cells
        overhead += est.overhead
        if est.longest > longest[0]:
            longest = (est.longest, name)
    if not cells:
        print(f"no stored cells for profile {args.profile} under {args.results}")
        return 1
    total = sum(cells) + overhead
    print(f"profile {args.profile}: {len(cells)} cells, CPU {cost.format_seconds(total)} "
          f"({cost.format_seconds(sum(cells))} in cells, {cost.format_seconds(overhead)} in the studies' own part)")
    print(f"critical path: the longest cell, {cost.format_seconds(longest[0])} ({longest[1]})")
    for w in workers:
        wall = cost.schedule(cells, w) + overhead / w
        print(f"  {w:>4d} workers: wall {cost.format_seconds(wall)} (CPU / workers {cost.format_seconds(total / w)})")
    if missing:
        print(f"not counted (no stored cells{' in this profile' if not args.estimate else ''}): {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
