"""What a study's result depends on, so that ``make studies`` reruns only what changed.

A result (``results/<study>.nc``) stores in its ``attrs``:

``run_key``   set by the runner before the notebook starts: a digest of the notebook's code
              cells, the resolved parameters (profile and every ``--set``; not the thread
              count nor the output folders, which do not change a result) and the versions
              of the numerical libraries;
``run_deps``  set by the notebook's kernel when it saves: the content digest of every
              module of the kit loaded in the kernel (``sys.modules``), of the kit's package
              data, and of every file the kit's data layer (``hmlkit.data``) opened.

Why the loaded modules are the right per-study code digest: code that ran in the kernel
belongs to a module the kernel imported, so a change anywhere else cannot move the result;
and a change that makes the study import a new module changes a module it already loaded
(the importer), so the study reruns and records the new set. Library code running in
another process (joblib, Dask workers) is imported by the kernel too, to be sent there.

A study is up to date when its result, figure and executed notebook exist, no failed
notebook of a later run lies beside them, its ``run_key`` equals the one computed now, and
every file in its ``run_deps`` still has the recorded digest. A failed or interrupted run
commits nothing (``hmlkit.studies.runner``), so it stores no key.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from importlib import metadata
from pathlib import Path

from .._paths import REPO_ROOT

PACKAGE_DIR = REPO_ROOT / "hmlkit"
ENV_KEY = "HMLKIT_RUN_KEY"  # the runner hands its key to the kernel through the environment
LIBRARIES = ("numpy", "scipy", "scikit-learn", "numba", "torch")
# parameters that change where or how fast a study runs, never what it finds
# (results are identical for any thread count: tests/test_forest.py and others)
NOT_IN_KEY = ("n_jobs", "results_dir", "figures_dir")

_READS = set()  # files opened by hmlkit.data in this process (recorded under the runner only)


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


_DIGESTS = {}  # (path, size, mtime) -> sha256: a file is read once per process


def file_digest(path):
    """sha256 of a file's content (remembered per path, size and modification time)."""
    st = os.stat(path)
    stamp = (str(path), st.st_size, st.st_mtime_ns)
    if stamp not in _DIGESTS:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        _DIGESTS[stamp] = h.hexdigest()
    return _DIGESTS[stamp]


def notebook_digest(path):
    """Digest of a notebook's code cells, in order (text cells, outputs and metadata do
    not change what it computes)."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    code = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb["cells"] if c["cell_type"] == "code"]
    return _sha256(json.dumps(code).encode())


def library_versions():
    """{library: version} of the numerical libraries a result depends on (None: absent)."""
    out = {"python": ".".join(map(str, sys.version_info[:3]))}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def run_key(notebook, parameters):
    """The key the runner computes for one study: {"notebook", "parameters", "versions"}."""
    params = {k: v for k, v in parameters.items() if k not in NOT_IN_KEY}
    return {"notebook": notebook_digest(notebook),
            "parameters": json.loads(json.dumps(params, sort_keys=True, default=str)),
            "versions": library_versions()}


def _relative(path):
    """``path`` relative to the repository (``../shared/data/...`` for the shared data), so
    that a stored key names no folder of one machine."""
    return os.path.relpath(Path(path).resolve(), REPO_ROOT)


def _data_roots():
    """(placeholder, folder) of the folders a data file is found in through a setting: a
    result names its data files by these, so that pointing the setting elsewhere (other
    data) makes it stale instead of re-reading the files it was made from."""
    from .._paths import shared_data_dir
    from ..data.fetch import data_cache_dir

    return (("$HMLKIT_SHARED_DATA", shared_data_dir()), ("$HMLKIT_DATA_DIR", data_cache_dir()))


def _data_name(path):
    """A data file's name in a result: under a data folder of a setting, relative to it
    (``$HMLKIT_SHARED_DATA/corel5k/...``); else relative to the repository."""
    real = Path(path).resolve()
    for placeholder, root in _data_roots():
        try:
            return f"{placeholder}/{real.relative_to(Path(root).resolve()).as_posix()}"
        except ValueError:
            continue
    return _relative(path)


def _absolute(name):
    for placeholder, root in _data_roots() if name.startswith("$") else ():
        if name.startswith(placeholder + "/"):
            return Path(root) / name[len(placeholder) + 1:]
    return Path(name) if os.path.isabs(name) else REPO_ROOT / name


# ---- in the kernel ---------------------------------------------------------------------

def _from_data_layer():
    """True when the current call comes from a module of ``hmlkit.data``, not through
    the import system (whose reads of modules are the code digest's business)."""
    f = sys._getframe(2)
    while f is not None:
        name = f.f_globals.get("__name__", "")
        if name.startswith("importlib"):
            return False
        if name.startswith("hmlkit.data"):
            return True
        f = f.f_back
    return False


# where no data set lives: the system's pseudo-files (a library reading /proc/self/maps
# under a loader's call) and the Python installation (modules are the code digest's)
_NOT_DATA = tuple(os.path.join(os.path.realpath(p), "") for p in
                  ("/proc", "/sys", "/dev", sys.prefix, sys.base_prefix, sys.exec_prefix))


def _audit(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)) and _from_data_layer():
        mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
        path = os.path.realpath(os.fsdecode(args[0]))
        if not any(c in mode for c in "wax+") and not path.startswith(_NOT_DATA):
            _READS.add(path)


def record_reads():
    """Record the files ``hmlkit.data`` opens from now on in this process (audit hooks
    cannot be removed, so this runs only under the runner, once)."""
    if not getattr(record_reads, "installed", False):
        sys.addaudithook(_audit)
        record_reads.installed = True


def package_files(suffixes):
    """The kit's files whose suffix is in ``suffixes``, sorted (caches left out): what the
    run keys (package data) and the fit cache's kit digest (sources too) read."""
    return [f for f in sorted(PACKAGE_DIR.rglob("*"))
            if f.suffix in suffixes and f.is_file() and "__pycache__" not in f.parts]


def dependencies():
    """{"modules": {file: sha256}, "data": {file: sha256}} of this process so far: the
    kit's loaded modules and package data, and the data files ``hmlkit.data`` read."""
    modules = {}
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if (name == "hmlkit" or name.startswith("hmlkit.")) and f and Path(f).is_file():
            modules[_relative(f)] = file_digest(f)
    for f in package_files((".json", ".csv")):
        modules[_relative(f)] = file_digest(f)
    data = {_data_name(f): file_digest(f) for f in sorted(_READS) if os.path.isfile(f)}
    return {"modules": dict(sorted(modules.items())), "data": data}


def result_attrs():
    """The attrs :func:`hmlkit.studies.saving.save` adds to a result: the runner's key
    (if run by it) and this kernel's dependencies."""
    key = os.environ.get(ENV_KEY)
    if not key:
        return {}
    return {"run_key": key, "run_deps": json.dumps(dependencies(), sort_keys=True)}


if os.environ.get(ENV_KEY):
    record_reads()


# ---- in the runner ---------------------------------------------------------------------

def stored_attrs(nc_path):
    """The ``run_key`` and ``run_deps`` attrs of a result file ({} if it has none);
    ``ValueError`` naming the file if it cannot be read."""
    import netCDF4

    try:
        with netCDF4.Dataset(str(nc_path)) as ds:
            return {k: ds.getncattr(k) for k in ("run_key", "run_deps") if k in ds.ncattrs()}
    except OSError as exc:
        raise ValueError(f"cannot read {nc_path}: {exc}") from None


def _describe_key_change(old, new):
    if old.get("notebook") != new["notebook"]:
        return "its notebook's code changed"
    if old.get("parameters") != new["parameters"]:
        a, b = old.get("parameters", {}), new["parameters"]
        diff = [f"{k} {_shown(a, k)} -> {_shown(b, k)}"
                for k in sorted(set(a) | set(b)) if k not in a or k not in b or a[k] != b[k]]
        return "parameters changed: " + ", ".join(diff)
    a, b = old.get("versions", {}), new["versions"]
    diff = [f"{k} {a.get(k)} -> {b.get(k)}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return "library versions changed: " + ", ".join(diff)


def _shown(params, k):
    return repr(params[k]) if k in params else "(default)"


def _changed_files(recorded, limit=3):
    changed = []
    for name, digest in recorded.items():
        p = _absolute(name)
        if not p.is_file() or file_digest(p) != digest:
            changed.append(name)
    if len(changed) > limit:
        return changed[:limit] + [f"{len(changed) - limit} more"]
    return changed


FAILED_KEY = "hmlkit_run_key"  # a failed run's notebook metadata: the key it ran under


def mark_failed_run(notebook, key):
    """Store ``key`` in the metadata of the failed run's ``notebook`` (in place)."""
    path = Path(notebook)
    nb = json.loads(path.read_text(encoding="utf-8"))
    nb.setdefault("metadata", {})[FAILED_KEY] = key
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def failed_run_key(notebook):
    """The key a failed run's notebook stored, or None (unreadable, or kept before keys were)."""
    try:
        return json.loads(Path(notebook).read_text(encoding="utf-8")).get("metadata", {}).get(FAILED_KEY)
    except (OSError, ValueError, AttributeError):
        return None


def status(name, key, results_dir, figures_dir, executed_dir):
    """Why study ``name`` must run under ``key`` (:func:`run_key`), or None if its stored
    result is up to date."""
    nc = Path(results_dir) / f"{name}.nc"
    if not nc.is_file():
        return "no result"
    failed = Path(executed_dir) / f"{name}.failed.ipynb"
    if failed.is_file() and failed_run_key(failed) in (json.loads(json.dumps(key)), None):
        # a failure of another run (a bad --set value, code since changed) leaves the stored
        # result as good as it was: it is judged below on its own key
        return "its last run failed"
    for p, what in ((Path(figures_dir) / f"{name}.png", "figure"), (Path(executed_dir) / f"{name}.ipynb",
                                                                     "executed notebook")):
        if not p.is_file():
            return f"no {what} ({p.name})"
    try:
        attrs = stored_attrs(nc)
    except ValueError as exc:
        return str(exc)
    if "run_key" not in attrs or "run_deps" not in attrs:
        return "its result stores no key (made before keys or outside the runner)"
    try:
        old = json.loads(attrs["run_key"])
        deps = json.loads(attrs["run_deps"])
    except ValueError:
        return "its stored key cannot be read"
    if old != key:
        return _describe_key_change(old, key)
    for part, what in (("modules", "kit code changed"), ("data", "data changed")):
        changed = _changed_files(deps.get(part, {}))
        if changed:
            return f"{what}: {', '.join(changed)}"
    return None
