"""The sweep panel of ``studies/explore.ipynb``: pick a data set, a method, one parameter
and its values, the number of seeds and the metric; Start runs the sweep in a thread
(:class:`hmlkit.explore.engine.Sweep`), so the kernel keeps answering the controls while it runs
(ipywidgets #642): the progress bar counts the fits with an ETA, each point is drawn as
soon as its seeds are done, Cancel stops within a tree's time and keeps the points done,
Save writes the result (netCDF) and the plot (PNG) atomically.

>>> from hmlkit.explore.panel import SweepPanel
>>> panel = SweepPanel(param="tau", values="10:500:8", n_seeds=3)
>>> panel            # in a notebook; panel.result is the xarray Dataset

``run=True`` runs the sweep at once in the calling thread and saves it: the notebook's
batch mode (papermill ``-p sweep_run True``), which gives the numbers the panel gives for the
same settings. Mistakes made with the controls are shown in the panel, which stays usable;
the constructor's own settings raise, where a notebook run stops on them.
"""
from __future__ import annotations

import html
import io
import os
import re
import threading
from pathlib import Path

import numpy as np

from .._paths import REPO_ROOT
from ..studies.config import SCORE_METRICS
from ..studies.saving import save_result
from . import engine as sw
from .widgets import method_options as _explore_methods

_ERR = "<b style='color:crimson'>{}</b>"


def method_options():
    """(label, (key, mode)) of HML-RF, HML-RF with the paper's settings, and every
    registered clustering method x input mode (as the explore panel offers them)."""
    opts = _explore_methods()
    return opts[:1] + [("HML-RF (paper settings)", (sw.PAPER, "hml"))] + opts[1:]


MAX_SEEDS = 100  # the seeds box's bound
_SAVE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")
_NOTEBOOK = REPO_ROOT / "studies" / "explore.ipynb"


def default_dirs():
    """(results, figures) folders Save writes to by default: ``results/explore`` and
    ``figures/explore`` of the repository (git ignores them) when the kit runs from its
    checkout, whatever folder the kernel runs in (JupyterLab runs it in ``studies/``,
    papermill in the folder it is started from), else of the current folder."""
    root = REPO_ROOT if _NOTEBOOK.exists() else Path.cwd()
    return root / "results" / "explore", root / "figures" / "explore"


def _absolute(folder):
    """``folder`` as an absolute path ("." and ".." resolved, links kept)."""
    return Path(os.path.abspath(Path(folder).expanduser()))


class SweepPanel:
    """Controls: data set, method, parameter, values, seeds, metric, other settings; Start,
    Cancel, Save (name). Outputs: progress bar and ETA, status, the plot, the batch command.

    ``data``: a TaggedData with groups, offered as the data set ``given`` (swept whole:
    ``n_samples`` sizes the named data sets). ``results_dir`` / ``figures_dir``: where Save
    writes ``<name>.nc`` / ``<name>.png`` (None: :func:`default_dirs`, folders git ignores,
    never among the studies' committed results; a relative folder is taken from the
    kernel's folder when the panel is made). The panel shows them, and the batch command
    writes to them, as absolute paths."""

    def __init__(self, profile="quick", seed=0, n_samples=None, n_jobs=1, data=None, dataset="trecvid",
                 method="hmlrf", mode="hml", param="tau", values="4, 8, 16", n_seeds=1, metric="nmi", fixed=None,
                 results_dir=None, figures_dir=None, name="sweep", run=False):
        import ipywidgets as W

        self.given_data = data
        if data is not None and dataset == "trecvid":
            dataset = sw.GIVEN
        # the notebook's settings are checked here, where a run stops on them
        first = sw.SweepSettings(param=param, values=values, dataset=dataset, method=method, mode=mode,
                                 n_seeds=n_seeds, seed=seed, metric=metric, profile=profile, n_samples=n_samples,
                                 n_jobs=n_jobs, fixed=sw._fixed_dict(fixed)).checked()
        if first.n_seeds > MAX_SEEDS:  # the seeds box's bound would cut it down, silently
            raise ValueError(f"n_seeds must be at most {MAX_SEEDS} in the panel, got {first.n_seeds} (run_sweep "
                             f"takes more)")
        self.profile, self.seed, self.n_samples, self.n_jobs = first.profile, first.seed, first.n_samples, first.n_jobs
        default_results, default_figures = default_dirs()
        self.results_dir = str(_absolute(default_results if results_dir is None else results_dir))
        self.figures_dir = str(_absolute(default_figures if figures_dir is None else figures_dir))
        self.sweep = None  # the last sweep started
        self.error = None
        self.saved = None
        self.figure = None
        self._draw_lock = threading.Lock()
        self._data_cache = {}

        style = {"description_width": "90px"}
        lay = W.Layout(width="340px")
        datasets = [("trecvid (synthetic)", "trecvid"), ("nuswide (synthetic)", "nuswide"), ("Corel5k", "corel5k")]
        if data is not None:
            datasets.insert(0, (f"{getattr(data, 'name', 'data')} (given)", sw.GIVEN))
        if first.dataset not in [v for _, v in datasets]:
            datasets.append((str(first.dataset), first.dataset))
        self.dataset = W.Dropdown(options=datasets, value=first.dataset, description="data set", style=style,
                                  layout=lay)
        self.method = W.Dropdown(options=method_options(), value=(method, mode), description="method", style=style,
                                 layout=lay)
        self.param = W.Dropdown(options=self._param_options(method, mode), value=first.param,
                                description="parameter", style=style, layout=lay)
        self.values = W.Text(value=values if isinstance(values, str) else ", ".join(map(str, first.values)),
                             description="values", placeholder="10, 50, 100  or  10:500:8 (8 from 10 to 500)",
                             style=style, layout=lay)
        # a text box, read strictly: an integer box turned "2.5" into 25 and clipped 0 to 1, silently
        self.n_seeds = W.Text(value=str(first.n_seeds), description="seeds", placeholder=f"1 to {MAX_SEEDS}",
                              style=style, layout=lay)
        self.metric = W.Dropdown(options=list(SCORE_METRICS), value=first.metric, description="metric",
                                 style=style, layout=lay)
        self.fixed = W.Text(value=fixed if isinstance(fixed, str) else ", ".join(
            f"{k}={v}" for k, v in sw._fixed_dict(fixed).items()), description="fixed",
            placeholder="e.g. tau=50, sparseness=0.3", style=style, layout=lay)
        self.name = W.Text(value=name, description="save as", style=style, layout=lay)
        self.start_button = W.Button(description="Start", button_style="success", icon="play")
        self.cancel_button = W.Button(description="Cancel", button_style="danger", icon="stop", disabled=True)
        self.save_button = W.Button(description="Save", icon="save", disabled=True)
        self.progress = W.IntProgress(value=0, min=0, max=1, description="progress", style=style)
        self.progress_text = W.HTML()
        self.status = W.HTML()
        # not an Output widget (see widgets.py); hidden until there is a plot, not a broken image
        self.plot = W.Image(format="png", layout=W.Layout(width="600px", display="none"))
        self.effective = W.HTML()  # what runs: every setting and where it comes from
        self.batch = W.HTML()
        for w, cls in ((self.start_button, "start"), (self.cancel_button, "cancel"), (self.save_button, "save"),
                       (self.values, "values"), (self.status, "status"), (self.progress_text, "progress"),
                       (self.plot, "plot"), (self.param, "param"), (self.n_seeds, "seeds"), (self.name, "name"),
                       (self.effective, "effective"), (self.batch, "batch")):
            w.add_class(f"hmlkit-sweep-{cls}")
        self.start_button.on_click(lambda _b: self.start())
        self.cancel_button.on_click(lambda _b: self.cancel())
        self.save_button.on_click(lambda _b: self.save())
        self.method.observe(self._on_method, names="value")
        self.metric.observe(lambda _c: self._redraw(), names="value")
        for w in (self.dataset, self.method, self.param, self.values, self.n_seeds, self.metric, self.fixed, self.name):
            w.observe(lambda _c: self._show_batch(), names="value")
        self.controls = [self.dataset, self.method, self.param, self.values, self.n_seeds, self.metric, self.fixed]
        self.widget = W.VBox([
            W.HBox([W.VBox(self.controls[:4]), W.VBox(self.controls[4:] + [self.name])]),
            W.HBox([self.start_button, self.cancel_button, self.save_button, self.progress, self.progress_text]),
            self.status, self.plot, self.effective, self.batch])
        self.widget.add_class("hmlkit-sweep-panel")
        self._show_batch()
        if run:
            self.run_batch()

    # ---------------------------------------------------------------- settings
    @staticmethod
    def _param_options(method, mode):
        return [(sw.LABELS.get(p, p), p) for p in sw.sweepable(method, mode)]

    def _on_method(self, change):
        key, mode = change["new"]
        try:
            opts = self._param_options(key, mode)
        except ValueError as exc:
            return self._fail(str(exc))
        old = self.param.value
        self.param.options = opts
        self.param.value = old if old in [v for _, v in opts] else opts[0][1]

    def seeds(self):
        """The seeds box's number of seeds: a whole number from 1 to MAX_SEEDS (ValueError)."""
        text = str(self.n_seeds.value).strip()
        if not re.fullmatch(r"[0-9]+", text) or not 1 <= int(text) <= MAX_SEEDS:
            raise ValueError(f"seeds: {text!r} is not a number of seeds: give a whole number from 1 to {MAX_SEEDS}")
        return int(text)

    def _raw_settings(self):
        key, mode = self.method.value
        dataset = self.dataset.value
        return sw.SweepSettings(param=self.param.value, values=self.values.value, dataset=dataset,
                                method=key, mode=mode, n_seeds=self.seeds(), seed=self.seed,
                                metric=self.metric.value, profile=self.profile,
                                n_samples=None if dataset == sw.GIVEN else self.n_samples,
                                n_jobs=self.n_jobs, fixed=self.fixed.value)

    def settings(self):
        """The checked :class:`~hmlkit.explore.engine.SweepSettings` of the controls (ValueError)."""
        return self._raw_settings().checked()

    def paths(self):
        """The absolute paths Save writes to: (``<results_dir>/<name>.nc``, ``<figures_dir>/<name>.png``)."""
        name = (self.name.value or "").strip() or "sweep"
        return Path(self.results_dir) / f"{name}.nc", Path(self.figures_dir) / f"{name}.png"

    def batch_command(self):
        """The papermill command that reruns the current settings headless and saves where
        Save does (absolute paths: it gives the same files from any folder)."""
        key, mode = self.method.value
        name = (self.name.value or "").strip() or "sweep"
        p = {"profile": self.profile, "seed": self.seed, "n_jobs": self.n_jobs, "sweep_dataset": self.dataset.value,
             "sweep_method": key, "sweep_mode": mode, "sweep_param": self.param.value,
             "sweep_values": self.values.value, "sweep_seeds": str(self.n_seeds.value).strip(),
             "sweep_metric": self.metric.value, "sweep_fixed": self.fixed.value, "sweep_name": name,
             "sweep_run": True}
        if self.n_samples is not None:
            p["n_samples"] = self.n_samples
        p["results_dir"], p["figures_dir"] = self.results_dir, self.figures_dir
        args = " ".join(f"-p {k} {_quote(v)}" for k, v in p.items())
        notebook = _NOTEBOOK if _NOTEBOOK.exists() else Path("explore.ipynb")
        return f"papermill {_quote(notebook)} {_quote(Path(self.results_dir) / (name + '.ipynb'))} {args}"

    def _show_batch(self):
        note = (" (the data set given to the panel: save it, e.g. as .npz, and pass its path as sweep_dataset)"
                if self.dataset.value == sw.GIVEN else "")
        self.batch.value = (f"<small>rerun in batch{note}:</small><br><code style='font-size:11px'>"
                            f"{html.escape(self.batch_command())}</code>")
        self._show_effective()

    def _show_effective(self):
        """The settings a Start would run, each with where it comes from, and where Save writes."""
        nc, png = self.paths()
        where = (f"<br><small>Save writes <code>{html.escape(str(nc))}</code> and "
                 f"<code>{html.escape(str(png))}</code></small>")
        try:
            data = self.given_data if self.dataset.value == sw.GIVEN else None
            rows = sw.effective_settings(self._raw_settings(), data)
        except (ValueError, TypeError) as exc:
            self.effective.value = f"<small>settings: {html.escape(str(exc))}</small>{where}"
            return
        cells = "".join(f"<tr><td>{html.escape(str(k))}</td><td><b>{html.escape(str(v))}</b></td>"
                        f"<td><i>{html.escape(str(w))}</i></td></tr>" for k, v, w in rows)
        self.effective.value = (f"<small>what Start runs:</small><table style='font-size:11px'>{cells}</table>"
                                f"{where}")

    # ---------------------------------------------------------------- callbacks
    @property
    def running(self):
        return self.sweep is not None and self.sweep.running

    @property
    def result(self):
        """The last sweep's points done so far (an xarray Dataset), or None."""
        return None if self.sweep is None or self.sweep.started_at is None else self.sweep.result

    def _fail(self, message):
        self.error = message
        self.status.value = _ERR.format(html.escape(message))
        return False

    def _new_sweep(self):
        raw = self._raw_settings()  # n_samples sizes the named data sets; the data given is swept whole
        data = self.given_data if raw.dataset == sw.GIVEN else None
        if raw.dataset == sw.GIVEN and data is None:
            raise ValueError("data set 'given': no TaggedData was passed to the panel (data=)")
        return sw.Sweep(raw, data=data, on_event=self._on_event)

    def start(self):
        """Start the sweep of the controls' settings in a thread; False (and the reason in
        the panel) when it cannot start: bad settings, or another panel's sweep running.
        Start while this panel's sweep runs (a double click) changes nothing: no error."""
        if self.running:
            return False
        try:
            new = self._new_sweep()
        except (ValueError, TypeError) as exc:
            return self._fail(str(exc))
        try:
            new.start()
        except sw.SweepBusy as exc:  # another panel's sweep
            return self._fail(str(exc))
        self.sweep = new
        self.error = None
        self.start_button.disabled, self.cancel_button.disabled = True, False
        return True

    def run_batch(self):
        """Run the controls' sweep here to the end and save it (the notebook's batch mode);
        returns the Dataset. Errors are raised: a batch run stops on them."""
        self.sweep = self._new_sweep()
        self.sweep.run()
        if self.sweep.state == "failed":
            raise RuntimeError(f"the sweep failed: {self.sweep.error}")
        self.save()
        if self.error:
            raise RuntimeError(self.error)
        return self.result

    def cancel(self):
        """Ask the running sweep to stop; it keeps the points done."""
        if not self.running:
            self.status.value = "no sweep is running"
            return False
        self.sweep.cancel()
        self.status.value = "<i>cancelling...</i>"
        return True

    def wait(self, timeout=None):
        """Wait for the running sweep to end (tests, scripts); True when it has."""
        return True if self.sweep is None else self.sweep.join(timeout)

    def save(self):
        """Write ``<results_dir>/<name>.nc`` and ``<figures_dir>/<name>.png`` atomically; a
        sweep with no point done is refused, nothing written."""
        if self.running:
            return self._fail("a sweep is running: wait for it or cancel it before saving")
        ds = self.result
        if ds is None:
            return self._fail("nothing to save yet: start a sweep first")
        if not int(ds.attrs["n_points_done"]):
            return self._fail("nothing to save: the sweep has no point done (nothing was written)")
        name = (self.name.value or "").strip()
        if not _SAVE_NAME.fullmatch(name):
            return self._fail(f"save as: {name!r} is not a file name (letters, digits, -, _ and ., not first)")
        try:
            fig = self._figure(ds)
            self.saved = tuple(Path(p).absolute() for p in save_result(ds, fig, name, self.results_dir,
                                                                        self.figures_dir))
        except Exception as exc:  # the files are written atomically: the previous ones stay
            return self._fail(f"could not save: {type(exc).__name__}: {exc}")
        self.error = None
        self.status.value = f"saved {self.saved[0]} and {self.saved[1]} ({int(ds.attrs['n_points_done'])} points)"
        return True

    # ---------------------------------------------------------------- the running sweep's events
    def _on_event(self, event, sweep):
        """Called in the sweep's thread: progress, plot and status follow it. A failure here
        (drawing...) is shown, never left to stop the sweep."""
        try:
            self._follow(event, sweep)
        except Exception as exc:
            self._fail(f"the panel could not show the sweep's {event!r}: {type(exc).__name__}: {exc}")

    def _follow(self, event, sweep):
        if event == "start":
            self.error = None
            self.progress.max, self.progress.value = max(1, sweep.n_fits), 0
            self.progress_text.value = f"0/{sweep.n_points} points"
            self.status.value = f"<i>running: {html.escape(sweep.settings.label())} (loading the data)</i>"
            self.start_button.disabled, self.cancel_button.disabled, self.save_button.disabled = True, False, True
            self._redraw(sweep)
        elif event == "loaded":
            n = (sweep.data_summary or {}).get("n_samples", "?")
            self.status.value = f"<i>running: {html.escape(sweep.settings.label())} on {n} samples</i>"
        elif event == "fit":  # the status is left alone: it may hold a message for the user
            self.progress.value = sweep.fits_done
            self.progress_text.value = self._progress(sweep)
        elif event == "point":
            self.progress.value = sweep.fits_done
            self.progress_text.value = self._progress(sweep)
            if sweep.points[-1]["status"] != "done":
                self._fail(f"point failed: {sweep.points[-1]['reason']}")
            self._redraw(sweep)
        elif event == "end":
            self.start_button.disabled, self.cancel_button.disabled, self.save_button.disabled = False, True, False
            self.progress_text.value = self._progress(sweep)
            done = sum(p["status"] == "done" for p in sweep.points)
            failed = [p["reason"] for p in sweep.points if p["status"] != "done"]
            if sweep.state == "failed":
                self._fail(f"the sweep failed: {sweep.error}")
            elif failed:
                self._fail(f"{done} points done, {len(failed)} failed: " + "; ".join(failed))
            elif sweep.state == "cancelled":
                self.error = None
                self.status.value = (f"cancelled: {done} of {sweep.n_points} points kept "
                                     f"(stopped {sweep.ended_at - sweep.cancel_requested_at:.2f} s after Cancel)")
            else:
                self.error = None
                self.status.value = f"done: {done} points in {sweep.ended_at - sweep.started_at:.1f} s"
            self._redraw(sweep)

    @staticmethod
    def _progress(sweep):
        n = len(sweep.points)
        text = f"{n}/{sweep.n_points} points"
        left = sweep.eta() if sweep.running else None
        if left is not None:
            text += f", ETA {left:.0f} s"
        return text

    def _figure(self, ds, sweep=None):
        sweep = sweep or self.sweep
        return plot_sweep(ds, metric=self.metric.value, values=sweep.settings.values if sweep else None)

    def _redraw(self, sweep=None):
        sweep = sweep or self.sweep
        if sweep is None or sweep.started_at is None:
            return
        with self._draw_lock:  # the sweep's thread and a metric change may draw at once
            fig = self._figure(sweep.result, sweep)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=80)
            self.figure = fig
            self.plot.value = buf.getvalue()
            self.plot.layout.display = None

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)


def plot_sweep(ds, metric=None, values=None, ax=None):
    """The sweep's curve: the mean of ``metric`` over seeds at each point, the seeds' range
    shaded and each seed a dot; ``values``: the x range to show (the points requested, so
    the curve grows into it). Works on a Figure without pyplot (safe in a thread)."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    metric = metric or ds.attrs.get("metric", "nmi")
    dim = ds.attrs["parameter"]
    if ax is None:
        fig = Figure(figsize=(6.4, 3.2))
        ax = fig.add_subplot()
    fig = ax.figure
    done = ds.isel({dim: np.flatnonzero(ds["status"].values == "done")})
    xs = list(done[dim].values)
    wanted = list(values) if values is not None else xs
    numeric = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
                  for v in wanted) and not sw.as_labels(wanted)
    pos = (lambda v: float(v)) if numeric else (lambda v: [str(w) for w in wanted].index(str(v)))
    if len(xs):
        x = np.array([pos(v) for v in xs], dtype=float)
        y = done["score"].sel(metric=metric).values[np.isfinite(x)]  # (points, seeds)
        x = x[np.isfinite(x)]
        ax.fill_between(x, np.nanmin(y, axis=1), np.nanmax(y, axis=1), alpha=0.2, color="C0",
                        label="seeds' range" if y.shape[1] > 1 else None)
        for j in range(y.shape[1]):
            ax.plot(x, y[:, j], ".", color="C0", alpha=0.5)
        ax.plot(x, np.nanmean(y, axis=1), "o-", color="C0", label=f"mean over {y.shape[1]} seed(s)")
        ax.legend(loc="best", fontsize=8)
    xw = [x for x in (pos(v) for v in wanted) if np.isfinite(x)]  # a saved sweep may hold inf or nan
    if xw:
        lo, hi = min(xw), max(xw)
        if numeric and lo > 0 and hi / lo >= 20:  # e.g. tau = 10 ... 1000: a log axis spreads the points
            ax.set_xscale("log")
            ax.set_xlim(lo / 1.3, hi * 1.3)
            # labels at the values swept (at most a dozen), none at the minor ticks, which
            # overlapped over a decade or two (20 ... 400)
            ax.xaxis.set_minor_formatter(NullFormatter())
            if len(xw) <= 12:
                ax.set_xticks(xw)
                ax.xaxis.set_major_formatter(ScalarFormatter())
        else:
            pad = (hi - lo) * 0.05 or 0.5
            ax.set_xlim(lo - pad, hi + pad)
        if not numeric:
            ax.set_xticks(range(len(wanted)), [str(w) for w in wanted])
    ax.set(xlabel=ds.attrs.get("parameter_label", dim), ylabel=metric,
           title=f"{ds.attrs['method']} on {ds.attrs['dataset']} ({ds.attrs['profile']}): "
                 f"{int(ds.attrs['n_points_done'])}/{int(ds.attrs['n_points'])} points")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def _quote(v):
    s = str(v)
    return s if s and all(c.isalnum() or c in "._-/" for c in s) else "'" + s.replace("'", "'\\''") + "'"
