import os

# Keep BLAS from oversubscribing the two cores when xdist runs two workers.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")


def pytest_configure(config):
    """With xdist workers, compile the kit's kernels once before they start (``hmlkit.warm``):
    otherwise both workers and the study notebooks they run compile the same kernels side
    by side until one has written numba's cache (about two minutes each, cold)."""
    import subprocess
    import sys

    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        return  # a worker (the controller has warmed the cache), or a run without workers
    # two processes, about a minute each (cold): the forest's uses, and the rest
    procs = [subprocess.Popen([sys.executable, "-m", "hmlkit.warm", *parts], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for parts in (("forest", "completion", "clustering"), ("cosine", "baselines"))]
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:  # the tests that call the failing kernel say what is wrong
            print(f"hmlkit.warm failed:\n{err[-2000:]}", file=sys.stderr)
