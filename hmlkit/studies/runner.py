"""Run the study notebooks with papermill: validated up front, in parallel where cores allow,
with progress, executed notebooks kept, then ``REPORT.md``.

A study's files move together: its notebook writes its results and figure into staging
folders (``hmlkit.studies.saving.staged_path``) and papermill its executed notebook into
another; once the whole notebook has run, :func:`commit` moves them all into place with
``REPORT.md`` rewritten to match, in one step that SIGINT / SIGTERM wait for. A failed
or stopped study's staging folders are removed: its previous results, figure, executed
notebook and the report stay as they were, all from one run.

The runner owns its children: on SIGTERM or SIGINT it stops its worker processes and
their Jupyter kernels, removes their temporary files and raises :class:`RunStopped`
(a ``KeyboardInterrupt``); the studies committed before the signal keep their new
files (``RunStopped.saved``), the others their previous ones. A worker whose runner
dies (even by SIGKILL) is sent SIGTERM by the kernel (Linux ``PR_SET_PDEATHSIG``) and
stops its own kernel."""
from __future__ import annotations

import ast
import json
import math
import numbers
import os
import re
import resource
import shutil
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from .._paths import REPO_ROOT
from .._validation import InvalidParameterError, check_int
from ..baselines import registry
from . import backends, cost, keys
from .profiles import STUDIES, check_profile, check_study
from .progress import ENV_FILE as PROGRESS_ENV
from .progress import read_status
from .report import render_report
from .saving import STAGE_ENV, check_folder, folder_lock, make_stage, remove_stale_temps, write_text_atomic

NOTEBOOK_DIR = REPO_ROOT / "studies"
EXTRA_NOTEBOOKS = ("explore",)


@dataclass
class RunResult:
    """One study of a run: ``ok`` if it ran to its end or was up to date (``up_to_date``:
    not run, its stored result made with the same key); ``reason`` why it ran."""
    name: str
    ok: bool
    seconds: float
    output: str
    error: str = ""
    up_to_date: bool = False
    reason: str = ""
    # CPU seconds of the study's kernel and the processes it waited for (its task pools),
    # user + system; NaN when not run
    cpu_seconds: float = float("nan")


def notebook_path(name):
    return NOTEBOOK_DIR / f"{name}.ipynb"


def _parameter_statements(name):
    """The statements of the ``parameters``-tagged cell of notebook ``name``, parsed."""
    import nbformat

    nb = nbformat.read(str(notebook_path(name)), as_version=4)
    return [node for cell in nb.cells if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", [])
            for node in ast.parse(cell.source).body]


def notebook_parameters(name):
    """Names assigned in the ``parameters``-tagged cell of notebook ``name``: the
    parameters papermill can set."""
    out = []
    for node in _parameter_statements(name):
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name) and n.id not in out:
                    out.append(n.id)
    return out


def notebook_defaults(name):
    """{parameter: default} of notebook ``name``'s parameters whose default is a literal."""
    out = {}
    for node in _parameter_statements(name):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass  # computed: never equal to a value given
    return out


def check_parameters(names, parameters):
    """Raise ``ValueError`` if a key of ``parameters`` is not a parameter of every notebook
    in ``names`` (a typo would otherwise run the study with its default and overwrite
    the results computed with it); returns {name: [its parameters]}."""
    valid = {name: notebook_parameters(name) for name in names}
    for name in names:
        bad = [k for k in (parameters or {}) if k not in valid[name]]
        if bad:
            raise ValueError(f"unknown parameter{'s' if len(bad) > 1 else ''} {', '.join(map(repr, bad))} "
                             f"for study {name}; its parameters are: {', '.join(valid[name])}")
    return valid


def default_dirs(profile):
    """(results_dir, figures_dir) of ``profile`` when none is given: ``results`` and
    ``figures`` for the standard profile, ``results/<profile>`` and ``figures/<profile>``
    for the others, so a quick or paper run never overwrites the standard results."""
    check_profile(profile)
    if profile == "standard":
        return Path("results"), Path("figures")
    return Path("results") / profile, Path("figures") / profile


class RunStopped(KeyboardInterrupt):
    """The run was stopped by a signal (SIGINT or SIGTERM): its children are stopped, the
    studies in ``saved`` (committed before the signal) have their new files, the others
    their previous ones. ``signum`` is the signal."""

    def __init__(self, signum):
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum
        self.saved = []


def _descendants():
    import psutil

    try:
        return psutil.Process().children(recursive=True)
    except psutil.Error:
        return []


def stop_children(timeout=3.0):
    """Terminate every descendant process of this one (workers and the kernels they
    started in sessions of their own), then kill those still alive after ``timeout``
    seconds; returns the pids stopped."""
    import psutil

    stopped = set()
    for _ in range(5):  # again, in case a worker was starting a kernel meanwhile
        procs = [p for p in _descendants() if p.pid not in stopped]
        if not procs:
            break
        for p in procs:
            try:
                p.terminate()
            except psutil.Error:
                pass
        _, alive = psutil.wait_procs(procs, timeout=timeout)
        for p in alive:
            try:
                p.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(alive, timeout=timeout)
        stopped |= {p.pid for p in procs}
    return stopped


_STAGING = []  # the staging folders of the study a worker runs (the runner removes them too)
_SOCKETS = []  # the folder of its kernel's IPC sockets and connection file (``execute_notebook``)


def _worker_stop(signum, frame):
    """SIGTERM in a worker: stop its kernel, remove its staged files, exit at once."""
    try:
        stop_children(timeout=2.0)
        for d in _STAGING + _SOCKETS:
            shutil.rmtree(d, ignore_errors=True)
    finally:
        os._exit(128 + signum)


# the thread-count variables as the user set them (None: not set), read when a worker starts
_USER_THREADS = {}


def _worker_init():
    """Runs first in every worker: Ctrl-C in a terminal reaches the whole foreground
    process group, but only the runner acts on it (it stops the workers); SIGTERM stops
    the worker's kernel with it; and the worker gets SIGTERM if the runner dies."""
    _USER_THREADS.update({var: os.environ.get(var) for var in THREAD_VARS})
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _worker_stop)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux
        pass
    if os.getppid() == 1:  # the runner died before prctl
        os._exit(128 + signal.SIGTERM)


class _StopOnSignal:
    """Within the block, SIGTERM and SIGINT raise :class:`RunStopped` in the main thread
    (once: later signals are ignored while the run stops), whose ``saved`` is then the
    list ``kept`` (the studies committed so far). Outside the main thread, nothing
    changes."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self, kept=None):
        self.kept = kept

    def __enter__(self):
        self.saved = None
        if threading.current_thread() is threading.main_thread():
            self.saved = {s: signal.getsignal(s) for s in self.SIGNALS}
            for s in self.SIGNALS:
                signal.signal(s, self._raise)
        return self

    def _raise(self, signum, frame):
        self.ignore()
        exc = RunStopped(signum)
        exc.saved = list(self.kept or [])
        raise exc

    def ignore(self):
        if self.saved is not None:
            for s in self.SIGNALS:
                signal.signal(s, signal.SIG_IGN)

    @contextmanager
    def deferred(self):
        """Within the block, SIGTERM and SIGINT wait: one that came meanwhile acts at its
        end (a flag handler rather than a blocked signal mask, which would hold only in
        this thread while the process's signal may go to another)."""
        if self.saved is None:
            yield
            return
        came = []
        handlers = {s: signal.getsignal(s) for s in self.SIGNALS}
        for s in self.SIGNALS:
            signal.signal(s, lambda signum, frame: came.append(signum))
        try:
            yield
        finally:
            for s, h in handlers.items():
                signal.signal(s, h)
        if came and callable(handlers[came[0]]):
            handlers[came[0]](came[0], None)

    def __exit__(self, *exc):
        if self.saved is not None:
            for s, h in self.saved.items():
                signal.signal(s, h)
        return False


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
# timeout). The two such hangs diagnosed (py-spy) were in the explore panel's cell:
# nbclient mirrors an Output widget by sending on the shell channel it awaits the reply on
# (jupyter/nbclient#312), and the panel has since drawn into an Image widget instead; the
# timeout stays as the guard. The longest quick cell takes well under a minute, the
# longest standard one about 8 min; paper-profile cells can take hours and get no timeout.
CELL_TIMEOUT = {"quick": 600, "standard": 3600, "paper": None}
TIMEOUT_RETRIES = 1
# Seconds each study took in the standard profile on 2 cores (the run at 0d5443a; performance.md, "The
# standard run"): the order the runner starts them in when a study's own last result
# does not say (its ``duration_s``), the longest first, so that none of them starts last
# and runs alone. Only the order, and which study gets every core, are read from these.
STANDARD_SECONDS = {
    "real_corel": 1594, "table2_nuswide_clustering": 276, "table1_trecvid_clustering": 197,
    "fig5_table3_sparseness": 169, "table6_8_completion": 166, "seed_ghfart": 93, "seed_sfss": 88,
    "fig6_components": 85, "seed_mhcrf": 78, "fig8_parameters": 29, "table4_hierarchy_depth": 28, "seed_lmmc": 23,
    "table5_abstractness": 14, "fig4_7_9_examples": 9,
}


def expected_seconds(name, results_dir):
    """How long study ``name`` is expected to run: the duration its last result in
    ``results_dir`` records, else ``STANDARD_SECONDS`` (0 for a study not listed there)."""
    nc = Path(results_dir) / f"{name}.nc"
    if nc.is_file():
        try:
            import netCDF4

            with netCDF4.Dataset(str(nc)) as ds:
                seconds = float(ds.getncattr("duration_s"))
            if math.isfinite(seconds) and seconds >= 0:  # else written by hand: the table's figure
                return seconds
        except (OSError, AttributeError, ValueError, TypeError):
            pass  # unreadable or made before durations were stored: the table's figure
    return float(STANDARD_SECONDS.get(name, 0))


def plan(todo, results_dir, jobs, cores):
    """(order, n_jobs per study): the studies longest first, each with ``cores // jobs``
    threads, except that a study expected to run longer than all the others together on the
    other workers gets every core: it sets the run's wall time, and its fits run as tasks
    of their own processes (``real_corel``), which then take the cores the others free."""
    est = {n: expected_seconds(n, results_dir) for n in todo}
    order = sorted(todo, key=lambda n: -est[n])
    n_jobs = {n: max(1, cores // jobs) for n in todo}
    if jobs > 1 and len(order) > 1 and est[order[0]] > sum(est[n] for n in order[1:]) / (jobs - 1):
        n_jobs[order[0]] = cores
    return order, n_jobs


def unavailable_methods():
    """[(method, why)] of the registry's methods that cannot run here (a missing optional
    dependency: PyTorch for DCCA / DCCAE), said before a run starts."""
    out = []
    for name, spec in registry().items():
        ok, why = spec.available()
        if not ok:
            out.append((name, why))
    return out


def children_cpu_seconds():
    """User + system CPU seconds of this process's children that have ended and been
    waited for (a notebook's kernel, and through it the task processes it waited for)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_cpu_seconds():
    """User + system CPU seconds of this process and its waited-for children."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime + children_cpu_seconds()


def execute_notebook(input_path, output_path, cell_timeout=None, retries=TIMEOUT_RETRIES, **kwargs):
    """``papermill.execute_notebook`` with a per-cell timeout: a notebook whose cell runs
    past ``cell_timeout`` seconds is started afresh from a new kernel up to ``retries``
    times, then nbclient's ``CellTimeoutError`` (a ``TimeoutError``) is raised. Study
    results are written atomically, so a cut-short attempt leaves nothing half-written.
    Other papermill keywords pass through (``progress_bar`` defaults to False)."""
    import papermill as pm

    kwargs.setdefault("progress_bar", False)
    # the worker's pid in the name: a folder left by a killed worker is recognisably stale
    with tempfile.TemporaryDirectory(prefix=f"hmlkit-kernel-{os.getpid()}-") as sockets:
        _SOCKETS[:] = [sockets]  # removed by a stopped worker too (_worker_stop)
        if os.name == "posix":
            kwargs.setdefault("kernel_manager_class", _ipc_kernel_manager(sockets))
        if cell_timeout is not None:
            # nbclient's own timeout must be a whole number of seconds (a traitlets Integer);
            # its per-cell timeout function may give any number
            kwargs.setdefault("timeout_func", lambda cell: cell_timeout)
        for attempt in range(retries + 1):
            try:
                return pm.execute_notebook(str(input_path), str(output_path), **kwargs)
            except TimeoutError:
                if attempt == retries:
                    raise


def _ipc_kernel_manager(sockets):
    """A kernel manager whose kernel talks over local socket files in the
    folder ``sockets`` (ZeroMQ IPC) instead of TCP ports: nothing listens on
    the network, and ipykernel no longer warns, once per notebook, that its
    TCP traffic is unencrypted; its shutdown does not interrupt the kernel. Its
    connection file (which holds the kernel's key) is in ``sockets`` too, not in
    TMPDIR where a stopped worker would leave it."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import CaselessStrEnum, default

    class IPCKernelManager(AsyncKernelManager):
        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

        def _ip_default(self):
            return os.path.join(sockets, "kernel")

        @default("connection_file")
        def _connection_file_default(self):
            return os.path.join(sockets, f"kernel-{os.urandom(4).hex()}.json")

        async def _async_interrupt_kernel(self):
            # jupyter_client sends SIGINT before every shutdown request; papermill shuts
            # the kernel down once the last cell has replied, and a kernel still in a
            # message handler then logs "KeyboardInterrupt caught in kernel" at ERROR.
            # A shutdown has nothing to interrupt (a cell timeout's interrupt and the
            # runner's own stop do not come through here while shutting_down is False).
            if self.shutting_down:
                return
            await super()._async_interrupt_kernel()

    return IPCKernelManager


@dataclass
class Stage:
    """Where one run of study ``name`` writes until :func:`commit`: a staging folder
    (``saving.make_stage``) inside each folder it writes to, so that its files move in
    by a rename; ``folders`` is {folder: its staging folder}."""

    name: str
    folders: dict

    @classmethod
    def make(cls, name, folders):
        stage = cls(name, {})
        try:
            for f in dict.fromkeys(Path(os.path.realpath(f)) for f in folders):  # one per distinct folder
                stage.folders[f] = make_stage(f, name)
        except BaseException:
            stage.remove()
            raise
        return stage

    def of(self, folder):
        return self.folders[Path(os.path.realpath(folder))]

    def remove(self):
        for d in self.folders.values():
            shutil.rmtree(d, ignore_errors=True)


class _KeptWriteError:
    """A papermill I/O handler for one output path that keeps a failed write's error
    instead of raising it: papermill saves the notebook after every cell, and on a full
    disk its error would replace the study's own (the error of the cell that failed).
    ``error`` is that of the last write (None once a write succeeds)."""

    def __init__(self, path):
        from papermill.iorw import LocalHandler

        self.path, self.local, self.error = str(path), LocalHandler(), None

    def __getattr__(self, attr):  # read, listdir, pretty_path: papermill's own
        return getattr(self.local, attr)

    def write(self, buf, path):
        try:
            self.local.write(buf, path)
            self.error = None
        except OSError as exc:
            self.error = exc
            Path(path).unlink(missing_ok=True)  # no partial notebook

    def __enter__(self):
        from papermill.iorw import papermill_io

        papermill_io.register(self.path, self)  # a prefix: only this exact path is handled here
        return self

    def __exit__(self, *exc):
        from papermill.iorw import papermill_io

        # papermill has no unregister: its registry is a list of (prefix, handler)
        papermill_io._handlers = [h for h in papermill_io._handlers if h[1] is not self]


def _keep_failed(staged, failed, write_error, run_key=None):
    """Keep a failed run's notebook (with the cell and its traceback) at ``failed``, beside
    the last good one, by a rename (a copy needs room a full disk does not have), with the
    run's key in its metadata (:func:`keys.status` then knows which run failed); what to
    add to the run's error."""
    failed.unlink(missing_ok=True)  # an earlier failure's: not this run's
    if write_error is None and staged.exists():
        try:
            if run_key is not None:
                keys.mark_failed_run(staged, run_key)
            os.replace(staged, failed)
            return f" (the failed notebook, with its traceback: {failed})"
        except OSError as exc:
            write_error = exc
    return f" (its notebook could not be written: {write_error})" if write_error else ""


def _machine_prefixes():
    """(folder, what stands for it) of this machine's folders, longest first."""
    pairs = {str(Path(sys.prefix)): "<python>", str(Path(sys.base_prefix)): "<python>",
             str(REPO_ROOT): ".", str(Path(tempfile.gettempdir())): "<tmp>", str(Path.home()): "~"}
    return sorted(((k, v) for k, v in pairs.items() if len(k) > 1), key=lambda kv: -len(kv[0]))


def scrub_machine_paths(path, name, executed_dir):
    """Rewrite the executed notebook ``path`` so that it names no folder of this machine:
    papermill's input and output paths become the repository's ``studies/<name>.ipynb``
    and ``<executed_dir>/<name>.ipynb``; a folder of the repository, the Python
    installation, the temporary folder or the home folder in an output (a warning's source
    line) becomes ``.``, ``<python>``, ``<tmp>`` or ``~``. Executed notebooks are committed
    beside the results, and read on other machines."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    pm = nb.get("metadata", {}).get("papermill")
    if isinstance(pm, dict):
        pm["input_path"] = f"studies/{name}.ipynb"
        ed = Path(os.path.realpath(executed_dir))
        rel = os.path.relpath(ed, REPO_ROOT) if ed.is_relative_to(REPO_ROOT) else ed.name
        pm["output_path"] = f"{Path(rel).as_posix()}/{name}.ipynb"
    text = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"  # as nbformat writes
    for folder, label in _machine_prefixes():  # a whole folder name only (not /rootfs for /root)
        text = re.sub(re.escape(folder) + r"(?=[/\\\"'\s:,)]|$)", label.replace("\\", r"\\"), text)
    Path(path).write_text(text, encoding="utf-8")


def _execute(name, parameters, stage, executed_dir, cwd, kernel_name, cell_timeout=None, retries=TIMEOUT_RETRIES,
             run_key=None, progress_file=None):
    """One notebook under papermill (runs in a worker process), restarted on a cell
    timeout as ``execute_notebook`` does; its results, figure and executed notebook go to
    ``stage`` (a :class:`Stage`). Any failure is reported, not raised: its error is the
    study's own, and its notebook is kept as ``<executed_dir>/<name>.failed.ipynb``.
    The kernel stores ``run_key`` (:func:`hmlkit.studies.keys.run_key`) in the result and
    writes its progress to ``progress_file``."""
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    for var, value in thread_env(parameters.get("n_jobs", 1)).items():
        # the user's own setting wins; else this study's (a worker runs several studies)
        os.environ[var] = _USER_THREADS[var] if _USER_THREADS.get(var) else value
    # the kernel inherits it: the notebook's atomic writes into its folders go to the stage
    os.environ[STAGE_ENV] = json.dumps({str(f): str(d) for f, d in stage.folders.items()})
    for var, value in ((keys.ENV_KEY, run_key and json.dumps(run_key, sort_keys=True)),
                       (PROGRESS_ENV, progress_file and str(progress_file))):
        if value:
            os.environ[var] = value
        else:
            os.environ.pop(var, None)
    _STAGING[:] = list(stage.folders.values())
    output = stage.of(executed_dir) / f"{name}.ipynb"
    failed = Path(executed_dir) / f"{name}.failed.ipynb"
    t0, c0 = time.time(), children_cpu_seconds()
    writer = _KeptWriteError(output)
    try:
        with writer:
            execute_notebook(notebook_path(name), output, cell_timeout, retries, parameters=parameters,
                             cwd=str(cwd), kernel_name=kernel_name, log_output=False)
        if writer.error is None:
            scrub_machine_paths(output, name, executed_dir)
            return RunResult(name, True, time.time() - t0, str(Path(executed_dir) / f"{name}.ipynb"),
                             cpu_seconds=children_cpu_seconds() - c0)
        error = "the study ran, but its executed notebook could not be written"
    except TimeoutError as exc:
        error = (f"a cell ran past the {cell_timeout} s cell timeout ({type(exc).__name__}; "
                 f"{retries + 1} attempt{'s' if retries else ''})")
    except Exception as exc:  # reported, the other studies go on
        msg = str(exc).strip().splitlines()
        error = next((l for l in reversed(msg) if l.strip()), type(exc).__name__)[:500]
    return RunResult(name, False, time.time() - t0, str(output),
                     error + _keep_failed(output, failed, writer.error, run_key),
                     cpu_seconds=children_cpu_seconds() - c0)


def commit(stage, results_dir, figures_dir, executed_dir, stop, saved, report=True, log=print):
    """Move the staged files of one study's successful run into place, with ``REPORT.md``
    rewritten to match (if ``report``), in one step: renames within each file system,
    with SIGINT / SIGTERM held until its end (``stop``, a :class:`_StopOnSignal`). A stop
    at any moment so leaves the study's results, figure, executed notebook and REPORT.md
    all from one run. The study's name is added to the list ``saved`` once its files are
    in place (before a signal held meanwhile acts). The staging folders are removed in
    any case. Returns the report's claim results (None without a report).

    A kill that cannot be held (SIGKILL, the OOM killer, power loss) may come between two
    renames: the staged files are on disk first (fsync), a marker (``keys.commit_marker``)
    is written before the first rename and removed after the last, and the results file
    that carries the run's key is renamed last. Such a study so reads stale (its marker,
    or its previous key beside newer files) and reruns; never up to date."""
    results_dir = Path(os.path.realpath(results_dir))
    try:
        moves = [(p, folder / p.name) for folder, d in stage.folders.items() for p in sorted(d.iterdir())]
        claims = None
        if report:  # written first, beside the staged results; then renamed with them
            staged_figures = stage.folders.get(Path(os.path.realpath(figures_dir)))
            staged_notebooks = stage.folders.get(Path(os.path.realpath(results_dir / "executed")))  # None unless the report's own folder
            text, claims = render_report(results_dir, figures_dir,
                                         staged=(stage.of(results_dir), staged_figures, staged_notebooks), log=log)
            rep = stage.of(results_dir) / ".REPORT.md.tmp"
            rep.write_text(text)
            moves.append((rep, results_dir / "REPORT.md"))
        key_file = results_dir / f"{stage.name}.nc"
        moves.sort(key=lambda move: move[1] == key_file)  # stable: the key's file last
        for src, _ in moves:
            _fsync(src)
        marker = keys.commit_marker(executed_dir, stage.name)
        with stop.deferred():
            marker.write_text(f"pid {os.getpid()}\n")
            _fsync(marker, parent=True)
            for src, dst in moves:
                os.replace(src, dst)
            for folder in {dst.parent for _, dst in moves}:
                _fsync(folder)
            (Path(executed_dir) / f"{stage.name}.failed.ipynb").unlink(missing_ok=True)  # a stale failure
            marker.unlink()
            saved.append(stage.name)
        return claims
    finally:
        stage.remove()


def _fsync(path, parent=False):
    """Flush a file or folder (and with ``parent``, its folder's entry of it) to disk; a file
    system that cannot (some network mounts) is left to its own order."""
    for p in (path, Path(path).parent) if parent else (path,):
        try:
            fd = os.open(p, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


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
        if n not in out:  # a study named twice (or as a name and a path) runs once
            out.append(n)
    return out


# the parameters the runner gives every notebook itself, and how to choose them
RUNNER_OWNED = {"profile": "--profile", "results_dir": "--results-dir", "figures_dir": "--figures-dir"}


def resolve_jobs(jobs, n_studies, cores=None):
    """Notebooks run at once: ``jobs`` (default: one per core), negative as in joblib
    (-1: one per core, -2: all cores but one), never more than ``n_studies``."""
    cores = cores or os.cpu_count() or 1
    if jobs is None:
        jobs = cores
    else:
        jobs = check_int(jobs, "jobs (--jobs)", min_val=-cores)
        if jobs == 0:
            raise InvalidParameterError("jobs (--jobs) must be a number of notebooks at once >= 1, or negative as "
                                        "in joblib (-1: one per core, -2: all cores but one), got 0")
        if jobs < 0:
            jobs = cores + 1 + jobs
    return max(1, min(n_studies, jobs))


def run(names=None, profile="standard", jobs=None, results_dir=None, figures_dir=None,
        executed_dir=None, parameters=None, kernel_name=None, cwd=None, report=True, log=print,
        cell_timeout="profile", force=False, dry_run=False, progress_every=30.0, local_cluster=None,
        scheduler=None):
    """Execute studies ``names`` (all by default) in ``profile``; returns [RunResult].

    Only the studies whose stored result is missing, failed or made with another key
    run (:mod:`hmlkit.studies.keys`: the notebook's code, the parameters, the libraries,
    the kit's code and the data the study used); the others are up to date. ``force``
    runs them all; ``dry_run`` runs nothing and returns each study with the reason it
    would run (``up_to_date`` if none). A running study's progress is logged every
    ``progress_every`` seconds.

    ``cell_timeout``: seconds a cell may run (any positive number) before its notebook is
    started again (once) and then reported failed; "profile" takes ``CELL_TIMEOUT[profile]``,
    None or ``inf`` waits forever.

    ``jobs`` notebooks run at once (default: min(#studies, #cores); negative as in joblib,
    -1 one per core), the longest first; each gets ``n_jobs = cores // jobs`` threads, but
    a study that would set the wall time alone gets every core (:func:`plan`). Results and figures go
    to ``results_dir`` and ``figures_dir`` (default :func:`default_dirs`:
    ``results``/``figures`` for the standard profile, ``results/<profile>``/``figures/<profile>``
    otherwise). Executed notebooks go to ``executed_dir`` (default ``<results_dir>/executed``).
    ``parameters`` must be parameters of every notebook run (:func:`check_parameters`).
    Every argument is checked, and each folder created and written to, before anything runs
    (a dry run checks the folders alike, creating nothing). One run at a time writes to a
    folder: a run whose folders another run holds is refused (``saving.folder_lock``).

    Each study that runs to its end is committed at once (:func:`commit`): its results,
    figure, executed notebook and REPORT.md (if ``report``) move into place together.
    SIGTERM or SIGINT stops the run: workers and kernels are stopped, the unfinished
    studies' staged files removed and :class:`RunStopped` is raised.

    Each study runs its fits as cells (:mod:`hmlkit.studies.cells`) on its own local processes,
    or, with ``local_cluster`` (a number of workers) or ``scheduler`` (an address; default
    ``DASK_SCHEDULER_ADDRESS``), on a Dask cluster shared by every study of the run
    (:mod:`hmlkit.studies.backends`); then every study runs at once unless ``jobs`` says
    otherwise. The dry run also prints each study's estimated cost (:mod:`hmlkit.studies.cost`).
    """
    check_profile(profile)
    names = resolve_names(names)
    owned = sorted(set(parameters or {}) & set(RUNNER_OWNED))
    if owned:
        # e.g. --profile standard --set profile=quick would write quick results over the
        # standard ones, and --set results_dir=... results the report never reads
        raise ValueError(f"{', '.join(owned)} cannot be set as a notebook parameter: the runner sets "
                         f"{'it' if len(owned) == 1 else 'them'} (use " +
                         ", ".join(RUNNER_OWNED[k] for k in owned) + ")")
    valid = check_parameters(names, parameters)
    # as the notebooks will receive them, and their keys record them (a tuple as a list)
    parameters = {k: keys.notebook_value(v) for k, v in (parameters or {}).items()}
    default_results, default_figures = default_dirs(profile)
    results_dir = default_results if results_dir is None else results_dir
    figures_dir = default_figures if figures_dir is None else figures_dir
    cell_timeout = resolve_cell_timeout(cell_timeout, profile)
    if local_cluster is not None:
        backends.check_workers(local_cluster)
        if scheduler is not None:
            raise ValueError("give local_cluster (--local-cluster) or scheduler (--scheduler), not both")
    cores = os.cpu_count() or 1
    jobs_given = jobs
    jobs = resolve_jobs(jobs, len(names), cores)
    n_jobs = max(1, cores // jobs)
    cwd = Path(cwd) if cwd else REPO_ROOT
    results_dir, figures_dir = Path(results_dir), Path(figures_dir)
    executed_dir = Path(executed_dir) if executed_dir else results_dir / "executed"
    rd, fd, ed = (d if d.is_absolute() else cwd / d for d in (results_dir, figures_dir, executed_dir))
    base = {"profile": profile, "results_dir": str(results_dir), "figures_dir": str(figures_dir),
            "n_jobs": n_jobs}
    base.update(parameters)
    params = {name: notebook_params(name, base, valid[name], parameters) for name in names}
    run_keys = {name: keys.run_key(notebook_path(name), params[name]) for name in names}
    folders = {rd: "results_dir (--results-dir)", fd: "figures_dir (--figures-dir)",
               ed: "executed_dir (--executed-dir)"}
    _check_folders(folders, create=not dry_run)  # a dry run: the same checks, nothing created
    saved = []  # the studies committed (a stop keeps their new files)
    # one run at a time in these folders; a stop from here on is a RunStopped (clean message)
    with _StopOnSignal(kept=saved), (nullcontext() if dry_run else folder_lock(folders)):
        keys.forget_digests()  # files may have changed since an earlier run of this process
        reasons = {name: "--force" if force else _reason(name, run_keys[name], rd, fd, ed) for name in names}
        todo = [n for n in names if reasons[n]]
        fresh = [n for n in names if not reasons[n]]
        for name in names:
            log(f"  {name}: " + (f"to run ({reasons[name]})" if reasons[name] else "up to date"))
        if dry_run:
            log(f"dry run: {len(todo)} of {len(names)} studies would run, {len(fresh)} up to date")
            if todo:
                workers = local_cluster or (backends.scheduler_workers(scheduler) if scheduler else None) or cores
                where = {p: cwd / default_dirs(p)[0] for p in ("quick", "standard", "paper")}
                where[profile] = rd
                for line in cost.dry_run_lines(todo, profile, where, workers):
                    log(line)
            if report and not todo and (rd / "REPORT.md").is_file() and _report_differs(rd, fd):
                log(f"{rd / 'REPORT.md'} would be rewritten: the claims' code judges these results otherwise")
            return [RunResult(n, True, 0.0, str(rd / f"{n}.nc"), up_to_date=not reasons[n], reason=reasons[n] or "")
                    for n in names]
        for d in (rd, fd, ed):  # staged files of a run that was killed (SIGKILL: no clean-up)
            remove_stale_temps(d)
        if kernel_name is None:
            kernel_name = os.environ.get("HMLKIT_KERNEL", "python3")
        jobs = max(1, min(jobs, len(todo)))
        n_jobs = max(1, cores // jobs)
        order, n_jobs_of = plan(todo, rd, jobs, cores)
        wide = []  # the studies given every core
        for name in todo:
            if "n_jobs" in params[name] and "n_jobs" not in parameters:
                params[name]["n_jobs"] = n_jobs_of[name]
                if n_jobs_of[name] != n_jobs:
                    wide.append(f"{name} {n_jobs_of[name]}, as it would set the wall time alone")
        t0, cpu0 = time.time(), run_cpu_seconds()
        results = [RunResult(n, True, 0.0, str(rd / f"{n}.nc"), up_to_date=True) for n in fresh]
        claims = None
        if todo:
            log(f"running {len(todo)} of {len(names)} studies, profile={profile}, {jobs} at once, "
                f"n_jobs={n_jobs} each{' (' + '; '.join(wide) + ')' if wide else ''} ({len(fresh)} up to date)")
            for name, why in unavailable_methods():
                log(f"method {name} is unavailable ({why}): its rows will say so and the claims comparing HML-RF "
                    f"with it will be 'not checked'")
            # processes at once: several studies, or one study's task processes (real_corel's n_jobs)
            with _StopOnSignal():  # a stop while compiling stops the compilers too (RunStopped)
                _warm(jobs > 1 or any(_many_processes(params[n].get("n_jobs")) for n in todo), log)
            with backends.start(local_cluster, scheduler) as backend, _environ(backend.env):
                log(f"cells run on {backend.describe}")
                if backend.env and jobs_given is None:
                    jobs = len(todo)  # the cluster runs the cells: every notebook at once feeds it
                claims = _run_pool(order, params, run_keys, reasons, jobs, rd, fd, ed, cwd, kernel_name,
                                   cell_timeout, report, log, progress_every, results, saved, t0)
        if report and claims is None:
            # no study committed: the report of the results there are, written when it is missing or
            # the claims' code (which no study loads, so none reruns for it) now judges them otherwise
            text, found = render_report(rd, fd, log=log)
            if not (rd / "REPORT.md").is_file() or (rd / "REPORT.md").read_text(encoding="utf-8") != text:
                write_text_atomic(text, rd / "REPORT.md")
                claims = found
    if report and claims is not None:
        n_hold = sum(c.verdict == "holds" for c in claims)
        log(f"report: {rd / 'REPORT.md'} ({n_hold}/{len(claims)} claims hold)")
    ran = [r.name for r in results if not r.up_to_date]
    ok = sum(r.ok for r in results if not r.up_to_date)
    log(f"done in {time.time() - t0:.0f}s: {ok}/{len(ran)} studies ok"
        + (f" ({', '.join(ran)})" if ran else "") + f"; {len(fresh)} up to date"
        + (f" ({', '.join(fresh)})" if fresh and ran else ""))
    if ran:  # where the time went: a run's wall time is at least its CPU time over the cores
        by_cpu = sorted((r for r in results if not r.up_to_date), key=lambda r: -r.cpu_seconds)
        log(f"CPU {run_cpu_seconds() - cpu0:.0f}s on {cores} cores (compiling, the studies, the report); by study: "
            + ", ".join(f"{r.name} {r.cpu_seconds:.0f}s" for r in by_cpu))
    log(f"report: {rd / 'REPORT.md'}; figures: {fd}; executed notebooks: {ed}")
    return sorted(results, key=lambda r: names.index(r.name))


@contextmanager
def _environ(env):
    """``env`` set in this process (so in the workers and kernels started within), then restored."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def resolve_cell_timeout(cell_timeout, profile):
    """Seconds a cell may run (a float), or None for no limit: "profile" takes
    ``CELL_TIMEOUT[profile]``; None and ``inf`` mean no limit. ``ValueError`` for anything
    but a positive number."""
    if isinstance(cell_timeout, str) and cell_timeout == "profile":
        return CELL_TIMEOUT[profile]
    if cell_timeout is None:
        return None
    if isinstance(cell_timeout, bool) or not isinstance(cell_timeout, numbers.Real) or not cell_timeout > 0:
        raise ValueError(f"cell_timeout (--cell-timeout) must be a positive number of seconds, or inf or None "
                         f"for no limit, got {cell_timeout!r}")
    return None if math.isinf(cell_timeout) else float(cell_timeout)


def _check_folders(folders, create=True):
    """Check (and with ``create``, create) each of ``folders`` ({folder: what gave it}),
    ``saving.check_folder``; the folders created are removed again (when still empty) if a
    later one is refused."""
    made = []
    try:
        for d, what in folders.items():
            new = [p for p in (Path(d), *Path(d).parents) if not p.exists()] if create else []
            check_folder(d, what, create=create)
            made += new
    except ValueError:
        for p in made:  # deepest first, as listed
            try:
                p.rmdir()
            except OSError:
                pass  # not empty, or gone: left as it is
        raise


def _reason(name, key, rd, fd, ed):
    """Why study ``name`` must run (``keys.status``), None if it is up to date. Never raises:
    one study's stored files, whatever they hold, do not stop the judgement of the others."""
    if name in EXTRA_NOTEBOOKS:
        return (f"{name} always runs: a panel, not a study; what it saves is named by its own settings "
                f"(<results_dir>/{name}/), not stored under a key")
    try:
        return keys.status(name, key, rd, fd, ed)
    except Exception as exc:  # noqa: BLE001 - said as the reason to rerun
        return f"its stored result cannot be judged ({type(exc).__name__}: {exc})"


def notebook_params(name, base, valid, given):
    """The parameters notebook ``name`` runs with: those of ``base`` (the runner's, then the
    user's ``given``) it has (``valid``), less the user's set to the notebook's own default
    (``--set seed=0`` changes nothing to rerun). An extra notebook (explore) saves into
    ``<folder>/<name>`` of the runner's folders (the user cannot set them: RUNNER_OWNED),
    as its own defaults do, never among the studies' results."""
    defaults = notebook_defaults(name) if given else {}
    out = {k: v for k, v in base.items() if k in valid and not (
        k in (given or {}) and k in defaults and _same_value(defaults[k], v))}
    if name in EXTRA_NOTEBOOKS:
        for k in ("results_dir", "figures_dir"):
            if k in out:
                out[k] = str(Path(out[k]) / name)
    return out


def _same_value(a, b):
    """Whether ``a`` and ``b`` reach a notebook as the same value, types included (True is
    not 1, 1.0 is not 1, [1, True] is not [1, 1]: a notebook reads them apart)."""
    return keys.canonical(keys.notebook_value(a)) == keys.canonical(keys.notebook_value(b))


def _many_processes(n_jobs):
    """Whether a study's ``n_jobs`` runs its tasks in several processes (joblib's meaning:
    None is one, -1 every core)."""
    return isinstance(n_jobs, int) and not isinstance(n_jobs, bool) and (n_jobs > 1 or n_jobs < 0)


def _report_differs(rd, fd):
    """Whether ``REPORT.md`` in ``rd`` differs from the one the results there give now."""
    try:
        text, _ = render_report(rd, fd, log=lambda *a, **k: None)
        return (Path(rd) / "REPORT.md").read_text(encoding="utf-8") != text
    except Exception:  # noqa: BLE001 - an unreadable result: the report step names it
        return True


def _warm(parallel, log):
    """Compile the kit's numba kernels before the studies start (``hmlkit.warm``, two
    processes) when several processes will run at once (``parallel``): from a cold cache
    every notebook and task process started before the first had written numba's cache
    compiled the same kernels beside the others, about two minutes of CPU each; a current
    cache is loaded in seconds."""
    if not parallel:
        return  # one process at a time: its first fits compile each kernel once anyway
    from .. import warm

    if warm.is_warm():
        return  # compiled by an earlier run or `make warm`, from these sources
    log("compiling the kit's numba kernels for these sources (about 2-3 min from a cold cache; once)")
    t = time.time()
    failed = warm.warm_in_processes()
    log(f"numba kernels compiled or loaded in {time.time() - t:.0f}s"
        + "".join(f"; compiling {', '.join(g)} failed (they compile where first called):\n{e}"
                  for g, e in failed.items()))


def _run_pool(todo, params, run_keys, reasons, jobs, rd, fd, ed, cwd, kernel_name, cell_timeout, report, log,
              progress_every, results, saved, t0):
    """Run studies ``todo`` in a process pool, committing each as it ends (results go to
    ``results``, the committed names to ``saved``); the claims of the last report."""
    claims = None
    stages = {}  # the studies not committed yet
    progress_dir = Path(tempfile.mkdtemp(prefix="hmlkit-progress-"))
    try:
        with _StopOnSignal() as stop:
            pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init)
            try:
                futs = {}
                for name in todo:  # in plan()'s order: the longest first
                    stages[name] = Stage.make(name, (rd, fd, ed))
                    futs[pool.submit(_execute, name, params[name], stages[name], ed, cwd, kernel_name, cell_timeout,
                                     run_key=run_keys[name], progress_file=progress_dir / name)] = name
                pending, i, shown = set(futs), 0, time.time()
                while pending:
                    done, pending = wait(pending, timeout=progress_every, return_when=FIRST_COMPLETED)
                    for fut in done:
                        i += 1
                        r = fut.result()
                        r.reason = reasons[r.name]
                        stage = stages.pop(r.name)
                        if r.ok:
                            claims = commit(stage, rd, fd, ed, stop, saved, report=report, log=log)
                        else:
                            stage.remove()
                        results.append(r)
                        state = "ok" if r.ok else f"FAILED: {r.error}"
                        log(f"[{i}/{len(todo)}] {r.name}: {state} ({r.seconds:.1f}s, CPU {r.cpu_seconds:.0f}s, "
                            f"elapsed {time.time() - t0:.0f}s)")
                    if pending and time.time() - shown >= progress_every:
                        shown = time.time()
                        for name in sorted(futs[f] for f in pending):
                            line = read_status(progress_dir / name)
                            if line:
                                log(f"  ... {name}: {line}")
                pool.shutdown(wait=True)
            except BaseException as exc:
                stop.ignore()
                stopped = stop_children()
                pool.shutdown(wait=False, cancel_futures=True)
                for stage in stages.values():
                    stage.remove()
                for d in (rd, fd, ed):
                    remove_stale_temps(d, dead_pids=stopped)
                if isinstance(exc, RunStopped):
                    exc.saved = list(saved)
                if isinstance(exc, KeyboardInterrupt):
                    log(f"stopped ({exc}): {len(stopped)} worker/kernel processes ended; {kept_message(saved)}")
                raise
    finally:
        shutil.rmtree(progress_dir, ignore_errors=True)
    return claims


def kept_message(saved):
    """What a stopped run kept: the previous results, but those of the studies it saved."""
    if not saved:
        return "previous results kept"
    return f"new results of {', '.join(saved)} saved, the other studies' previous results kept"
