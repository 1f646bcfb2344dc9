"""The cells a study's process ran or loaded (:mod:`hmlkit.studies.cells`), saved with its
result for the dry run's cost model (:mod:`hmlkit.studies.cost`). Apart from the cells'
executor so that saving a result needs neither it nor what it loads."""
from __future__ import annotations

import json
import math
import time

LEDGER = []  # one dict per cell: what, data, n, d, m, trees, cpu, wall, stored, in_kernel


def _plain(x):
    import numpy as np

    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"a cell's description holds {type(x).__name__}")


def take_ledger():
    """The cells this process ran or loaded since the last call, for a result's ``attrs``
    (and forgotten here): ``cells`` (a JSON list of {what, n, d, m, trees, cpu, wall,
    stored}) and ``cells_cpu_s``, the CPU seconds the cells run now took; always
    ``kernel_cpu_s``, this process's CPU seconds so far."""
    rows = [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()} for r in LEDGER]
    LEDGER.clear()
    out = {"kernel_cpu_s": round(kernel_cpu_seconds(), 3)}
    if rows:
        out.update({"cells": json.dumps(rows, default=_plain),
                    "cells_cpu_s": round(float(sum(r["cpu"] for r in rows if not r["stored"])), 3)})
    return out


def kernel_cpu_seconds():
    """CPU seconds of this process so far (user + system; its cells run here included)."""
    try:
        import resource
    except ImportError:  # not POSIX
        return time.process_time()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime
