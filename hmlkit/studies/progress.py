"""Progress of a study's long loops: a tqdm bar (a widget in JupyterLab, text elsewhere),
the loop's own result lines, and, under the study runner, a one-line status file the
runner reads to log each study's progress with an ETA.

>>> bar = Progress(12, "Table 1")
>>> for ...:
...     bar.step(f"  kmeans NMI=0.41 (2.1s)")     # one unit of work done, its line printed
>>> bar.close()
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ENV_FILE = "HMLKIT_PROGRESS_FILE"  # set by the runner for each notebook it runs


def format_eta(seconds):
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Progress:
    """``total`` units of work named ``desc``; ``enabled=False`` prints nothing and shows no
    bar (the status file for the runner is still written)."""

    def __init__(self, total, desc, enabled=True):
        self.total, self.desc, self.enabled = max(int(total), 1), desc, enabled
        self.done, self.t0 = 0, time.time()
        self.status_file = os.environ.get(ENV_FILE)
        self.bar = None
        if enabled:
            from tqdm.auto import tqdm

            # a text bar goes to stderr; in JupyterLab tqdm.auto draws a widget
            self.bar = tqdm(total=self.total, desc=desc, unit="fit", file=sys.stderr, leave=True,
                            mininterval=1.0)
        self._write_status()

    def step(self, message=None, n=1):
        """``n`` units done; ``message`` (a result line) is printed above the bar."""
        self.done = min(self.done + n, self.total)
        if self.enabled:
            if message is not None:
                print(message, flush=True)
            self.bar.update(n)
        self._write_status()

    def eta(self):
        """Seconds left, from the mean time per unit so far (None before the first one)."""
        if not self.done:
            return None
        return (time.time() - self.t0) / self.done * (self.total - self.done)

    def _write_status(self):
        if not self.status_file:
            return
        eta = self.eta()
        line = f"{self.desc}: {self.done}/{self.total}" + ("" if eta is None else f", ETA {format_eta(eta)}")
        tmp = Path(f"{self.status_file}.{os.getpid()}.tmp")
        try:
            tmp.write_text(line)
            os.replace(tmp, self.status_file)
        except OSError:  # progress is a courtesy: never the reason a study fails
            tmp.unlink(missing_ok=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def read_status(path):
    """The last status line a study wrote (None if it wrote none yet)."""
    try:
        return Path(path).read_text().strip() or None
    except OSError:
        return None
