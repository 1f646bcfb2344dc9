"""Saving a study: :func:`save` writes ``results/<name>.nc`` and ``figures/<name>.png``
atomically with the run's parameters, seed, version, git commit and duration in ``attrs``;
:func:`show_claims` judges the paper's claims on the result.

Atomic writing: a failed or interrupted run never leaves a half-written file and never
destroys the previous result.

Files are written world-readable (``0o666`` less the process umask, i.e. ``0644``
under the usual umask 022), as any file written with ``open`` would be: a
temporary file from ``tempfile.mkstemp`` is ``0600`` and would otherwise keep that
mode after the rename.

A temporary file is named ``.<name>.<pid>-<random>.tmp<suffix>`` beside its target,
``pid`` being the writing process. One left behind by a process that was killed
(SIGKILL, or a kernel stopped mid-save) is removed by the next write of the same
file, and by the study runner when it ends (:func:`remove_stale_temps`).

Staging: under the study runner, a notebook's atomic writes into its results and
figures folders go to a staging folder in each (:func:`staged_path`, set by the runner
through ``HMLKIT_STAGE_DIRS``); the runner moves them into place together with the
executed notebook and ``REPORT.md`` once the whole notebook has run, so that a stop at
any moment leaves all of them from one run. A staging folder is named like a
temporary file (``.<study>.<pid>-<random>.tmp.stage``) and removed as one.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import hmlkit
from hmlkit._files import check_folder, file_mode  # noqa: F401 - check_folder: its callers import it from here

from .config import jsonable
from .keys import result_attrs
from .ledger import take_ledger
from .sanity import with_flags

STAGE_ENV = "HMLKIT_STAGE_DIRS"  # JSON {folder: its staging folder}, set by the runner
_TMP_RE = re.compile(r"^\.(?P<target>.+?)\.(?:(?P<pid>\d+)-)?[A-Za-z0-9_]+\.tmp(?:\.[A-Za-z0-9]+)?$")


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is dead for our purpose (its parent has not reaped it yet)
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def remove_stale_temps(directory, target=None, dead_pids=()):
    """Remove temporary files of :func:`atomic_path` in ``directory`` (those of
    ``target`` only, if given) whose writing process is gone, or is one of
    ``dead_pids`` (processes the caller stopped). A temporary file without a pid
    in its name (written by an older version of the kit) counts as stale.
    Staging folders (:func:`make_stage`) are removed the same way. Returns the paths removed."""
    directory = Path(directory)
    dead = {int(p) for p in dead_pids}
    removed = []
    if not directory.is_dir():
        return removed
    for p in directory.iterdir():
        m = _TMP_RE.match(p.name)
        if not m or (target is not None and m["target"] != target):
            continue
        pid = m["pid"]
        if pid is not None and int(pid) not in dead and _pid_alive(int(pid)):
            continue  # a live process (maybe this one) is writing it
        try:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
            removed.append(p)
        except FileNotFoundError:
            pass
    return removed


LOCK_FILE = ".hmlkit-run.lock"


@contextmanager
def folder_lock(folders):
    """Hold each of ``folders`` ({folder: what gave it}) for the block: an exclusive
    ``fcntl.flock`` on a file ``.hmlkit-run.lock`` in it, which the holder's pid and command
    fill. Two study runners writing to one folder at once would replace each other's results
    and REPORT.md: the second is refused with a ``ValueError`` naming the folder and the
    holder. The lock ends with its holder, even one killed. POSIX only (Linux, macOS); where
    ``fcntl`` is missing (Windows), or a file system has no locks (some network mounts), no
    lock is taken, with a warning in the second case."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    import sys
    import warnings

    held = []
    try:
        for folder, what in {os.path.realpath(f): w for f, w in folders.items()}.items():
            path, fd = os.path.join(folder, LOCK_FILE), None
            for flags in (os.O_RDWR | os.O_CREAT, os.O_RDONLY):  # read-only: a lock file of another user
                try:
                    fd = os.open(path, flags | os.O_CLOEXEC, file_mode())
                    break
                except OSError as exc:
                    error = exc
            try:
                if fd is None:
                    raise error
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 400, 0).decode(errors="replace").strip() or "a process"
                os.close(fd)
                raise ValueError(f"{what} {folder!r} is in use by another run of the study runner ({holder}); "
                                 f"wait for it to end, or give this run other folders") from None
            except OSError as exc:
                if fd is not None:
                    os.close(fd)
                warnings.warn(f"{what} {folder!r} cannot be locked ({exc.strerror or exc}): a second run writing "
                              f"there at once would not be refused", stacklevel=3)
                continue
            held.append(fd)
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"pid {os.getpid()}: {' '.join(sys.argv)}"[:400].encode(), 0)
            except OSError:
                pass  # opened read-only: the holder goes unnamed
        yield
    finally:
        for fd in held:
            os.close(fd)  # releases the lock


def make_stage(directory, name):
    """A new, empty staging folder for study ``name`` inside ``directory`` (on the same
    file system, so that its files move into ``directory`` by an atomic rename); named
    as a temporary file of this process, so a stale one is removed by
    :func:`remove_stale_temps`."""
    return Path(tempfile.mkdtemp(prefix=f".{name}.{os.getpid()}-", suffix=".tmp.stage", dir=directory))


def staged_path(path):
    """Where a write to ``path`` goes: into the staging folder of its folder when the
    runner staged that folder (``HMLKIT_STAGE_DIRS``), else ``path`` itself."""
    path = Path(path)
    stages = os.environ.get(STAGE_ENV)
    if stages:
        stage = json.loads(stages).get(os.path.realpath(path.parent))
        if stage:
            return Path(stage) / path.name
    return path


@contextmanager
def atomic_path(path, suffix=""):
    """Yield a temporary path beside ``path``; on leaving the block without an
    error, give it the mode of a normally written file (:func:`file_mode`) and
    rename it onto ``path`` (atomic on one file system). On an error the
    temporary file is removed and ``path`` is left as it was. Stale temporary
    files of ``path`` left by killed processes are removed first. ``suffix`` ends
    the temporary name (e.g. ``".ipynb"`` for tools that look at the extension).
    Under the study runner, a ``path`` in a staged folder is written into its staging
    folder instead (:func:`staged_path`)."""
    path = staged_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path.parent, target=path.name)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}-", suffix=f".tmp{suffix}", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_dataset_atomic(ds, path):
    """Write an xarray Dataset to netCDF at ``path`` via a temporary file + rename."""
    with atomic_path(path) as tmp:
        ds.to_netcdf(tmp)
    return Path(path)


def save_figure_atomic(fig, path, **kwargs):
    """Save a matplotlib figure at ``path`` via a temporary file + rename."""
    kwargs.setdefault("dpi", 110)
    kwargs.setdefault("bbox_inches", "tight")
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or "png", **kwargs)
    return Path(path)


def write_text_atomic(text, path):
    """Write ``text`` to ``path`` via a temporary file + rename."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def git_commit(root=None):
    """The short commit of the kit's checkout (or of the checkout ``root``), ``-dirty`` when
    its code or notebooks differ from that commit (so a result never claims a commit it was
    not made with). A notebook whose cells' sources are the commit's is not a difference:
    JupyterLab autosaves ``studies/explore.ipynb`` with its outputs while its panels run."""
    root = Path(root) if root is not None else Path(__file__).resolve().parents[2]

    def git(*args):
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=5)

    try:
        head = git("rev-parse", "--short", "HEAD").stdout.strip()
        if not head:
            return "unknown"
        changed = git("diff", "--name-only", "-z", "HEAD", "--", "hmlkit", "studies").stdout.split("\0")
        dirty = [f for f in changed if f and not (f.endswith(".ipynb") and _same_sources(
            root / f, git("show", f"HEAD:{f}").stdout))]
        return head + ("-dirty" if dirty else "")
    except Exception:
        return "unknown"


def _same_sources(path, committed):
    """Notebook ``path`` holds the cells (types and sources) of the notebook text ``committed``;
    outputs, execution counts and metadata aside."""
    def cells(text):
        return [(c.get("cell_type"), "".join(c.get("source", ""))) for c in json.loads(text)["cells"]]

    try:
        return cells(Path(path).read_text()) == cells(committed)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def key_id(run_key):
    """A short name of a result's run key (REPORT.md and the figures carry it)."""
    return hashlib.sha256(str(run_key).encode()).hexdigest()[:12] if run_key else "none"


def given_settings(run_key):
    """The settings a run was given beyond its profile and seed, ``["k=v", ...]``, from its
    key's JSON (the runner's ``--set``); None for a run without a key (outside the runner)."""
    try:
        given = json.loads(run_key)["parameters"]
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    if not isinstance(given, dict):  # a key of another form: nothing to say about it
        return None
    return [f"{k}={json.dumps(v)}" for k, v in sorted(given.items()) if k not in ("profile", "seed")]


def save(ds, fig, cfg, data=None):
    """Write ``results/<name>.nc`` and ``figures/<name>.png`` atomically, with the run's
    parameters, seed, package version, git commit and duration in ``attrs``, and a
    clustering result's sanity flags (``flag``, :mod:`hmlkit.studies.sanity`).

    Order: the dataset is written to a temporary file first (so an unwritable result fails
    before anything is replaced), then the figure is saved atomically, then the dataset's
    temporary file is renamed into place. A run that fails or is interrupted before or
    during this call leaves the previous ``.nc`` and ``.png`` intact."""
    ds = with_flags(ds)  # every clustering result: its sanity flags beside its scores
    ds = ds.copy()
    ds.attrs.update(cfg.as_attrs())
    ds.attrs.update({"study": cfg.name, "profile": cfg.profile, "seed": cfg.seed,
                     "hmlkit_version": hmlkit.__version__, "git_commit": git_commit(),
                     "duration_s": round(time.time() - cfg.started, 2),
                     "figure": f"{cfg.figures_dir}/{cfg.name}.png"})
    if data is not None:
        ds.attrs["data"] = json.dumps(data.summary() if hasattr(data, "summary") else data, default=jsonable)
    ds.attrs.update(result_attrs())  # under the runner: the key this result was made with
    ds.attrs.update(take_ledger())  # each cell's size and CPU: the runner's cost model
    nc_path = Path(f"{cfg.results_dir}/{cfg.name}.nc")
    # the figure says what made it, as its result does (PNG text chunks)
    stamp = {"Software": f"hmlkit {hmlkit.__version__}",
             "Description": f"study {cfg.name}, profile {cfg.profile}, seed {cfg.seed}"
                            + "".join(f", {s}" for s in given_settings(ds.attrs.get("run_key")) or [])
                            + f", commit {ds.attrs['git_commit']}, key {key_id(ds.attrs.get('run_key'))}"}
    with atomic_path(nc_path) as tmp:  # renamed only after the figure is saved
        ds.to_netcdf(tmp)
        fig_path = save_figure_atomic(fig, f"{cfg.figures_dir}/{cfg.name}.png", metadata=stamp)
    return nc_path, fig_path


def save_result(ds, fig, name, results_dir="results", figures_dir="figures"):
    """Write ``<results_dir>/<name>.nc`` and ``<figures_dir>/<name>.png`` atomically, as
    :func:`save` does, with ``ds``'s own attrs (for results that are not studies: the
    speed benchmark)."""
    nc_path = Path(results_dir) / f"{name}.nc"
    with atomic_path(nc_path) as tmp:  # renamed only after the figure is saved
        ds.to_netcdf(tmp)
        fig_path = save_figure_atomic(fig, Path(figures_dir) / f"{name}.png")
    return nc_path, fig_path


def show_claims(ds, name=None):
    """Evaluate the paper's claims for this study on ``ds``; returns a DataFrame."""
    import pandas as pd


    # imported here, not with the module: the claims load every protocol (the forest with
    # them), and the modules a study has loaded when it saves are the code its result's key
    # records (hmlkit.studies.keys); the claims are judged again in REPORT.md anyway
    from .claims import evaluate

    rows = evaluate(name or ds.attrs.get("study"), ds)
    return pd.DataFrame([{"claim": r.text, "holds": r.verdict, "detail": r.detail} for r in rows])
