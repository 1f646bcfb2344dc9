"""``python -m hmlkit.studies run [NAMES...] --profile quick|standard|paper``

Other commands: ``list`` (the studies), ``report`` (rewrite results/REPORT.md from the
``.nc`` files present).

Results of the standard profile go to ``results/`` and ``figures/``; those of another
profile to ``results/<profile>/`` and ``figures/<profile>/`` (unless ``--results-dir`` /
``--figures-dir`` say otherwise: folders given are taken from where the command runs),
so a quick run never overwrites standard results.
Only the studies whose stored result is missing, failed or out of date run (its key:
the notebook's code, the parameters, the libraries, the kit's code and the data it
used); ``--force`` runs them anyway, ``--dry-run`` lists each with the reason it would run.
``--set`` accepts only parameters of the notebooks run. A study's results, figure,
executed notebook and REPORT.md are replaced together when its notebook has run to the
end. SIGINT/SIGTERM stop the run, its workers and kernels; the studies not finished keep
their previous results (exit status 130 / 143).
"""
from __future__ import annotations

import argparse
import ast
import os
import sys
from pathlib import Path

from .._paths import REPO_ROOT
from .profiles import PROFILES, STUDIES


def _given(path):
    """A folder given on the command line, relative to where the command runs (the
    defaults are in the repository, for ``run`` and ``report`` alike)."""
    return None if path is None else Path(path).expanduser().resolve()


def _param(text):
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--set expects key=value, got {text!r}")
    k, v = text.split("=", 1)
    try:
        v = ast.literal_eval(v)
    except (ValueError, SyntaxError):
        pass
    return k.strip(), v


STOPPED_IDLE = "stopped by SIGINT while no study was running: every result is as its last run left it"

# the parameters that name data: a relative path in them is the user's, from where the command
# runs (the notebooks run in the repository)
DATA_PARAMS = ("dataset", "datasets", "completion_datasets")


def _data_paths_from_here(parameters):
    """``parameters`` with every relative data path of :data:`DATA_PARAMS` made absolute from
    the current folder, as ``--results-dir`` is; a named data set (``trecvid``, ``corel5k``...)
    stays a name."""
    from .config import NAMED

    def here(v):
        if isinstance(v, str) and not v.strip():  # Path("") is ".": the current folder
            raise ValueError(f"--set {k}={v!r}: an empty data path; give a named data set "
                             f"({', '.join(NAMED)}) or the path of a data file or folder")
        if isinstance(v, (str, os.PathLike)) and str(v) not in NAMED and not Path(v).expanduser().is_absolute():
            return str(_given(v))
        return v

    out = dict(parameters)
    for k in DATA_PARAMS:
        if k in out:
            v = out[k]
            out[k] = type(v)(here(x) for x in v) if isinstance(v, (list, tuple)) else here(v)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m hmlkit.studies", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="{run,report,list}")
    r = sub.add_parser("run", help="execute study notebooks with papermill")
    r.add_argument("names", nargs="*", help=f"studies to run (default all): {', '.join(STUDIES)}")
    r.add_argument("--profile", default="standard", choices=PROFILES)
    r.add_argument("--jobs", type=int, default=None,
                   help="notebooks at once (default: #cores; -1 one per core, -2 all cores but one)")
    r.add_argument("--results-dir", default=None, help="default results/ (standard), results/PROFILE/ (others)")
    r.add_argument("--figures-dir", default=None, help="default figures/ (standard), figures/PROFILE/ (others)")
    r.add_argument("--executed-dir", default=None, help="executed notebooks (default RESULTS_DIR/executed)")
    r.add_argument("--set", type=_param, action="append", default=[], metavar="KEY=VALUE",
                   help="override a notebook parameter, e.g. --set seed=1 (a relative data path, as in "
                        "--set dataset=mine.npz, is from the current folder)")
    r.add_argument("--kernel", default=None, help="Jupyter kernel name (default python3)")
    r.add_argument("--force", action="store_true",
                   help="run every study named, even those whose stored result is up to date")
    r.add_argument("--dry-run", action="store_true",
                   help="run nothing: list each study as up to date or with the reason it would run")
    where = r.add_mutually_exclusive_group()
    where.add_argument("--local-cluster", type=int, default=None, metavar="N",
                       help="run the studies' cells on a Dask LocalCluster of N single-threaded workers")
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="run the studies' cells on the workers of this Dask scheduler (default: "
                            "$DASK_SCHEDULER_ADDRESS if set, else local processes; docs/cluster.md)")
    r.add_argument("--cell-timeout", type=float, default=None, metavar="SECONDS",
                   help="seconds a cell may run before its notebook is restarted once, then failed; inf: no "
                        "limit (default by profile: quick 600, standard 3600, paper none)")
    rep = sub.add_parser("report", help="rewrite REPORT.md from existing results")
    rep.add_argument("--profile", default="standard", choices=PROFILES,
                     help="whose results (default standard: results/; others results/PROFILE/)")
    rep.add_argument("--results-dir", default=None, help="the results to report (default: the profile's)")
    rep.add_argument("--figures-dir", default=None, help="the figures REPORT.md shows (default: the profile's)")
    sub.add_parser("list", help="list the studies")
    args = ap.parse_args(argv)
    if args.cmd == "list":
        print("\n".join(STUDIES))
        return 0
    if args.cmd == "report":
        from .report import write_report
        from .runner import default_dirs
        from .saving import check_folder

        rd, fd = default_dirs(args.profile)  # in the repository, where run writes them
        rd, fd = _given(args.results_dir) or REPO_ROOT / rd, _given(args.figures_dir) or REPO_ROOT / fd
        try:
            if not rd.exists():
                raise ValueError(f"--results-dir {str(rd)!r} not found: no results to report")
            check_folder(rd, "--results-dir")  # a folder REPORT.md can be written in
            path, claims = write_report(rd, fd)
        except (ValueError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"{path}: {sum(c.verdict == 'holds' for c in claims)}/{len(claims)} claims hold")
        return 0
    try:
        from .cells import CellError
        from .runner import RunStopped, kept_message, run
    except KeyboardInterrupt:  # Ctrl-C while the runner loads: nothing has started
        print(STOPPED_IDLE, file=sys.stderr)
        return 130
    try:
        res = run(args.names, profile=args.profile, jobs=args.jobs, results_dir=_given(args.results_dir),
                  figures_dir=_given(args.figures_dir), executed_dir=_given(args.executed_dir),
                  parameters=_data_paths_from_here(args.set),
                  kernel_name=args.kernel, force=args.force, dry_run=args.dry_run,
                  cell_timeout="profile" if args.cell_timeout is None else args.cell_timeout,
                  local_cluster=args.local_cluster, scheduler=args.scheduler)
    except (ValueError, CellError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except RunStopped as exc:
        print(f"{exc}: workers and kernels stopped, {kept_message(exc.saved)}", file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:  # outside the run's own handling: before its studies or after them
        print(STOPPED_IDLE, file=sys.stderr)
        return 130
    return 0 if all(x.ok for x in res) else 1


if __name__ == "__main__":
    sys.exit(main())
