"""An ipywidgets panel for parameter sweeps in JupyterLab (``studies/explore.ipynb``).

>>> from hmlkit.explore.widgets import ExplorePanel
>>> panel = ExplorePanel()
>>> panel            # in a notebook: the controls, the scores and a plot

Every control change re-runs the clustering (``auto_update=True``) and refreshes the scores
table and the plot. The callbacks are plain methods (``update``), so a test can set widget
values programmatically and check ``panel.scores`` / ``panel.figure`` / ``panel.history``.
"""
from __future__ import annotations

import io
import time

import numpy as np

from .. import studies as study
from .._validation import check_bool, check_int
from ..baselines import registry
from ..data import TaggedData, require
from ..studies.profiles import PROFILES

TAU_MAX, PHI_MAX = 1000, 20  # the tau and phi sliders' ranges start at 1


def method_options():
    """(label, (key, mode)) of HML-RF and of every registered clustering method x input mode."""
    opts = [("HML-RF", ("hmlrf", "hml"))]
    for name, spec in sorted(registry().items()):
        if spec.kind != "clustering" or name == "hmlrf" or not spec.available()[0]:
            continue  # a method whose optional dependency (PyTorch) is missing is not offered
        for mode in spec.input_modes:
            opts.append((f"{name} ({mode})", (name, mode)))
    return opts


class ExplorePanel:
    """Controls: profile, dataset, sparseness, layers, tau, phi, hierarchy and correlations
    on/off, method. Outputs: the five clustering scores and a plot (current scores, and NMI
    of every run so far)."""

    def __init__(self, profile="quick", dataset="trecvid", n_samples=None, seed=0, auto_update=True,
                 n_estimators=20, min_samples_leaf=3, n_jobs=1, data=None):
        import ipywidgets as W

        # the panel's own settings are checked here, where a notebook run stops on them; a
        # mistake made with a control later is shown in the panel, which stays usable.
        # A slider clips a value outside its range without a word: refused instead
        for value, name, choices in ((profile, "profile", PROFILES), (dataset, "dataset", study.SYNTHETIC)):
            if not isinstance(value, str) or value not in choices:
                raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
        n_estimators = check_int(n_estimators, "n_estimators", 1, TAU_MAX)
        min_samples_leaf = check_int(min_samples_leaf, "min_samples_leaf", 1, PHI_MAX)
        self.seed = check_int(seed, "seed", min_val=0)
        self.n_samples = None if n_samples is None else check_int(n_samples, "n_samples", min_val=2)
        self.n_jobs = check_int(n_jobs, "n_jobs")
        auto_update = check_bool(auto_update, "auto_update")
        if data is not None:
            if not isinstance(data, TaggedData):
                raise TypeError(f"data must be a hmlkit.data.TaggedData with ground-truth groups, "
                                f"got {type(data).__name__}")
            require(data, groups=True, study="the explore panel")
        self.given_data = data  # a TaggedData with groups replaces the profile/dataset choice
        self._data_cache = {}
        self.history = []
        self.scores = None
        self.figure = None
        self.n_updates = 0
        self.error = None
        style = {"description_width": "110px"}
        self.profile = W.Dropdown(options=list(PROFILES), value=profile, description="profile", style=style)
        self.dataset = W.Dropdown(options=list(study.SYNTHETIC), value=dataset, description="dataset", style=style)
        self.sparseness = W.FloatSlider(value=0.0, min=0.0, max=0.9, step=0.1, description="tags removed",
                                        style=style)
        self.layers = W.IntSlider(value=2, min=1, max=7, description="tag layers", style=style)
        self.tau = W.IntSlider(value=n_estimators, min=1, max=TAU_MAX, description="tau (trees)", style=style)
        self.phi = W.IntSlider(value=min_samples_leaf, min=1, max=PHI_MAX, description="phi (leaf size)",
                               style=style)
        self.hierarchy = W.Checkbox(value=True, description="hierarchy")
        self.correlations = W.Checkbox(value=True, description="correlations")
        self.method = W.Dropdown(options=method_options(), value=("hmlrf", "hml"), description="method",
                                 style=style)
        self.status = W.HTML()
        self.table = W.HTML()
        # the plot as a PNG image widget, not an Output widget: a notebook client (papermill's
        # nbclient) mirrors an Output widget's state by sending on the kernel's shell channel
        # while it waits for the cell's reply there, and now and then never sees that reply
        # (jupyter/nbclient#312): the run hangs with the kernel idle
        self.plot = W.Image(format="png")
        self.controls = [self.profile, self.dataset, self.sparseness, self.layers, self.tau, self.phi,
                         self.hierarchy, self.correlations, self.method]
        self.auto_update = auto_update
        for w in self.controls:
            w.observe(self._on_change, names="value")
        self.widget = W.VBox([W.HBox([W.VBox(self.controls[:5]), W.VBox(self.controls[5:])]),
                              self.status, self.table, self.plot])

    # ---------------------------------------------------------------- callbacks
    def _on_change(self, change):
        if self.auto_update:
            self.update()

    def params(self):
        key, mode = self.method.value
        return {"profile": self.profile.value, "dataset": self.dataset.value,
                "sparseness": float(self.sparseness.value), "layers": int(self.layers.value),
                "tau": int(self.tau.value), "phi": int(self.phi.value), "hierarchy": bool(self.hierarchy.value),
                "correlations": bool(self.correlations.value), "method": key, "mode": mode}

    def data(self, p):
        """The panel's data for the current profile/dataset/layers/sparseness (cached)."""
        k = (p["profile"], p["dataset"], p["layers"], p["sparseness"])
        if k not in self._data_cache:
            if self.given_data is not None:
                base = self.given_data
            else:
                cfg = study.setup("fig6_components", profile=p["profile"], seed=self.seed)
                base = study.load_data(p["dataset"], cfg, n_samples=self.n_samples, random_state=self.seed,
                                       groups=True)
            if p["layers"] != len(base.layers):
                if p["layers"] == 1:
                    base = base.with_tags(base.Y, layers=None)
                else:
                    base = study.with_layers(base, p["layers"], random_state=self.seed)
            self._data_cache[k] = study.sparsify(base, p["sparseness"], random_state=self.seed)
        return self._data_cache[k]

    def compute(self, p):
        """Cluster with the current settings; returns {metric: value}."""
        study.check_sparseness(p["sparseness"])
        d = self.data(p)
        forest = {"n_estimators": p["tau"], "min_samples_leaf": p["phi"], "n_jobs": self.n_jobs}
        if p["method"] == "hmlrf":
            labels = study.hmlrf_labels(d, d.n_groups, self.seed, forest, hierarchy=p["hierarchy"],
                                        correlations=p["correlations"])
        else:
            labels = study.cluster_labels(p["method"], p["mode"], d, d.n_groups, self.seed, forest)
        return dict(zip(study.METRICS, study.clustering_scores(d.groups, labels)))

    def update(self):
        """Re-run with the widgets' current values; refresh scores, table and plot."""
        p = self.params()
        self.status.value = "<i>running...</i>"
        t0 = time.time()
        try:
            self.scores = self.compute(p)
            self.error = None
        except Exception as exc:  # shown in the panel, the panel stays usable
            self.error = f"{type(exc).__name__}: {exc}"
            self.status.value = f"<b style='color:crimson'>{self.error}</b>"
            return None
        self.n_updates += 1
        self.history.append({**p, **self.scores, "seconds": time.time() - t0})
        self.status.value = f"done in {time.time() - t0:.1f}s (run {self.n_updates})"
        self.table.value = ("<table><tr>" + "".join(f"<th>{m}</th>" for m in self.scores) + "</tr><tr>"
                            + "".join(f"<td>{v:.3f}</td>" for v in self.scores.values()) + "</tr></table>")
        self.figure = self._draw()
        return self.scores

    def _draw(self):
        import matplotlib.pyplot as plt

        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.2))
        a1.bar(list(self.scores), list(self.scores.values()), color=[f"C{i}" for i in range(len(self.scores))])
        a1.set(ylim=(min(0, min(self.scores.values())), 1), title="scores of the last run")
        a2.plot(np.arange(1, len(self.history) + 1), [h["nmi"] for h in self.history], "o-")
        a2.set(xlabel="run", ylabel="NMI", title="NMI of every run")
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=90)
        self.plot.value = buf.getvalue()
        plt.close(fig)
        return fig

    def _ipython_display_(self):
        from IPython.display import display

        # shown first, so that the first run's status and plot update it in place
        display(self.widget)
        if self.scores is None and self.auto_update:
            self.update()
