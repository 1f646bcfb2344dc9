"""Run the study notebooks with papermill: validated up front, in parallel where cores allow,
with progress, executed notebooks kept, results written atomically by the notebooks
themselves (``hmlkit.study.save`` -> ``hmlkit.study_io``), then ``REPORT.md``."""
from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from .._paths import REPO_ROOT
from .profiles import STUDIES, check_profile, check_study

NOTEBOOK_DIR = REPO_ROOT / "studies"
EXTRA_NOTEBOOKS = ("explore",)


@dataclass
class RunResult:
    name: str
    ok: bool
    seconds: float
    output: str
    error: str = ""


def notebook_path(name):
    return NOTEBOOK_DIR / f"{name}.ipynb"


THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


def thread_env(n_jobs):
    """The environment that gives every thread pool of a notebook's kernel its
    share of the cores (``n_jobs``). numba too: its OpenMP layer sets the shared
    libgomp's thread count, which torch then follows; with two notebooks at once,
    2-thread torch barriers on a busy core made DCCA fits 15-30x slower (100-160 s
    instead of 3-7 s in the standard profile)."""
    return {var: str(int(n_jobs)) for var in THREAD_VARS}


# Per-cell execution timeout (seconds) by profile, and how often a notebook whose cell timed
# out is started again. Why: once in about six quick runs, a kernel finished a cell but its
# reply never reached nbclient, which then waited forever (papermill's default is no
# timeout). The longest quick cell takes well under a minute, the longest standard one
# about 8 min; paper-profile cells can take hours and get no timeout.
CELL_TIMEOUT = {"quick": 600, "standard": 3600, "paper": None}
TIMEOUT_RETRIES = 1


def execute_notebook(input_path, output_path, cell_timeout=None, retries=TIMEOUT_RETRIES, **kwargs):
    """``papermill.execute_notebook`` with a per-cell timeout: a notebook whose cell runs
    past ``cell_timeout`` seconds is started afresh from a new kernel up to ``retries``
    times, then nbclient's ``CellTimeoutError`` (a ``TimeoutError``) is raised. Study
    results are written atomically, so a cut-short attempt leaves nothing half-written.
    Other papermill keywords pass through (``progress_bar`` defaults to False)."""
    import papermill as pm

    kwargs.setdefault("progress_bar", False)
    for attempt in range(retries + 1):
        try:
            return pm.execute_notebook(str(input_path), str(output_path), execution_timeout=cell_timeout, **kwargs)
        except TimeoutError:
            if attempt == retries:
                raise


def _execute(name, parameters, output, cwd, kernel_name, cell_timeout=None, retries=TIMEOUT_RETRIES):
    """One notebook under papermill (runs in a worker process), restarted on a cell
    timeout as ``execute_notebook`` does; any failure is reported, not raised."""
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    for var, value in thread_env(parameters.get("n_jobs", 1)).items():
        os.environ.setdefault(var, value)
    t0 = time.time()
    try:
        execute_notebook(notebook_path(name), output, cell_timeout, retries, parameters=parameters, cwd=str(cwd),
                         kernel_name=kernel_name, log_output=False)
        return RunResult(name, True, time.time() - t0, str(output))
    except TimeoutError as exc:
        return RunResult(name, False, time.time() - t0, str(output),
                         f"a cell ran past the {cell_timeout} s cell timeout ({type(exc).__name__}; "
                         f"{retries + 1} attempt{'s' if retries else ''})")
    except Exception as exc:  # reported, the other studies go on
        msg = str(exc).strip().splitlines()
        short = next((l for l in reversed(msg) if l.strip()), type(exc).__name__)
        return RunResult(name, False, time.time() - t0, str(output), short[:500])


def resolve_names(names):
    if not names or names == ["all"]:
        return list(STUDIES)
    out = []
    for n in names:
        n = Path(n).stem
        if n not in EXTRA_NOTEBOOKS:
            check_study(n)
        if not notebook_path(n).exists():
            raise ValueError(f"notebook {notebook_path(n)} not found")
        out.append(n)
    return out


def run(names=None, profile="standard", jobs=None, results_dir="results", figures_dir="figures",
        executed_dir=None, parameters=None, kernel_name=None, cwd=None, report=True, log=print,
        cell_timeout="profile"):
    """Execute studies ``names`` (all by default) in ``profile``; returns [RunResult].

    ``cell_timeout``: seconds a cell may run before its notebook is started again (once)
    and then reported failed; "profile" takes ``CELL_TIMEOUT[profile]``, None waits forever.

    ``jobs`` notebooks run at once (default: min(#studies, #cores)); each gets
    ``n_jobs = cores // jobs`` threads. Executed notebooks go to ``executed_dir``
    (default ``<results_dir>/executed``). Every argument is checked before anything runs.
    """
    check_profile(profile)
    names = resolve_names(names)
    if cell_timeout == "profile":
        cell_timeout = CELL_TIMEOUT[profile]
    if cell_timeout is not None and not cell_timeout > 0:
        raise ValueError(f"cell_timeout must be a positive number of seconds or None, got {cell_timeout!r}")
    cores = os.cpu_count() or 1
    jobs = max(1, min(len(names), cores if jobs is None else int(jobs)))
    n_jobs = max(1, cores // jobs)
    cwd = Path(cwd) if cwd else REPO_ROOT
    results_dir, figures_dir = Path(results_dir), Path(figures_dir)
    executed_dir = Path(executed_dir) if executed_dir else results_dir / "executed"
    for d in (results_dir, figures_dir, executed_dir):
        (d if d.is_absolute() else cwd / d).mkdir(parents=True, exist_ok=True)
    if kernel_name is None:
        kernel_name = os.environ.get("HMLKIT_KERNEL", "python3")
    base = {"profile": profile, "results_dir": str(results_dir), "figures_dir": str(figures_dir),
            "n_jobs": n_jobs}
    base.update(parameters or {})
    log(f"running {len(names)} studies, profile={profile}, {jobs} at once, n_jobs={n_jobs} each")
    t0 = time.time()
    results = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futs = {}
        for name in names:
            out = executed_dir / f"{name}.ipynb"
            out = out if out.is_absolute() else cwd / out
            params = dict(base)
            if name in EXTRA_NOTEBOOKS:
                params = {k: v for k, v in params.items() if k in ("profile", "n_jobs")}
            futs[pool.submit(_execute, name, params, out, cwd, kernel_name, cell_timeout)] = name
        for i, fut in enumerate(as_completed(futs), 1):
            r = fut.result()
            results.append(r)
            state = "ok" if r.ok else f"FAILED: {r.error}"
            log(f"[{i}/{len(names)}] {r.name}: {state} ({r.seconds:.1f}s, elapsed {time.time() - t0:.0f}s)")
    if report:
        from .report import write_report

        rd = results_dir if results_dir.is_absolute() else cwd / results_dir
        fd = figures_dir if figures_dir.is_absolute() else cwd / figures_dir
        path, claims = write_report(rd, fd)
        n_hold = sum(c.verdict == "holds" for c in claims)
        log(f"report: {path} ({n_hold}/{len(claims)} claims hold)")
    log(f"done in {time.time() - t0:.0f}s: {sum(r.ok for r in results)}/{len(results)} studies ok")
    return sorted(results, key=lambda r: names.index(r.name))
