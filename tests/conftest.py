import os

# Keep BLAS from oversubscribing the two cores when xdist runs two workers.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

# The studies' fit cache (hmlkit.studies.fitcache) of a test run is its own, emptied at its
# end: no test reads a fit an earlier run (or a study run by hand) left in data/cache/fits.
if "HMLKIT_FIT_CACHE" not in os.environ:
    import atexit
    import shutil
    import tempfile

    _FITS = tempfile.mkdtemp(prefix="hmlkit-test-fits-")
    os.environ["HMLKIT_FIT_CACHE"] = _FITS
    atexit.register(shutil.rmtree, _FITS, ignore_errors=True)


def pytest_configure(config):
    """With xdist workers, compile the kit's kernels once before they start (``hmlkit.warm``):
    otherwise both workers and the study notebooks they run compile the same kernels side
    by side until one has written numba's cache (about two minutes each, cold)."""
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        return  # a worker (the controller has warmed the cache), or a run without workers
    import sys

    from hmlkit.warm import warm_if_needed

    for err in (warm_if_needed() or {}).values():  # the tests that call the failing kernel say what is wrong
        print(f"hmlkit.warm failed:\n{err}", file=sys.stderr)


# What enables a test that skipped, by a word of its skip reason (first match wins).
ENABLE_HINTS = (
    ("chromedriver", "make test-browser  (installs Debian's chromium and chromium-driver, needs root)"),
    ("torch", "make install-deep"),
    ("development data", "put the shared data at ../shared/data or set HMLKIT_SHARED_DATA"),
    ("shared corel", "put the shared data at ../shared/data or set HMLKIT_SHARED_DATA"),
    ("distributed", ".venv/bin/python -m pip install -e '.[dask]'"),
    ("papermill", ".venv/bin/python -m pip install -e '.[studies]'"),
    ("nbformat", ".venv/bin/python -m pip install -e '.[studies]'"),
    ("ipywidgets", ".venv/bin/python -m pip install -e '.[studies]'"),
    ("psutil", ".venv/bin/python -m pip install -e '.[studies]'"),
    ("running as root", "run the tests as a user other than root"),
    ("docs extra", ".venv/bin/python -m pip install -e '.[docs]'"),
    ("package index", "a network connection to PyPI (or the package index pip is configured with)"),
)


def enable_hint(reason):
    """The command that makes a skipped test run, or None where the reason is the machine's."""
    low = reason.lower()
    return next((hint for word, hint in ENABLE_HINTS if word in low), None)


def pytest_terminal_summary(terminalreporter):
    """At the end of the run: each skipped test, grouped by its reason, and what enables it
    (a fresh `make test` skips the browser test, for one, until Chromium is installed)."""
    by_reason = {}
    for rep in terminalreporter.stats.get("skipped", []):
        reason = rep.longrepr[2] if isinstance(rep.longrepr, (tuple, list)) else str(rep.longrepr)
        reason = reason.removeprefix("Skipped: ")
        by_reason.setdefault(reason, []).append(rep.nodeid)
    if not by_reason:
        return
    tr = terminalreporter
    tr.section(f"{sum(map(len, by_reason.values()))} skipped: what enables them", sep="-")
    for reason, nodeids in sorted(by_reason.items()):  # xdist reports in the order tests end
        tr.line(f"{reason}:")
        for nodeid in sorted(nodeids):
            tr.line(f"    {nodeid}")
        hint = enable_hint(reason)
        tr.line(f"  to run: {hint}" if hint else "  (nothing to install: the reason is this machine's)")
