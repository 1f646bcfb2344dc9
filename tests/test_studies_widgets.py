"""The explore panel: set widget values programmatically, the scores and figure follow."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

pytest.importorskip("ipywidgets")

from hmlkit.explore.widgets import ExplorePanel  # noqa: E402

from test_studies_core import toy  # noqa: E402


def test_panel_callbacks_update_scores_and_plot():
    panel = ExplorePanel(data=toy(n=90), n_estimators=6)
    first = panel.update()
    assert set(first) == {"purity", "nmi", "ri", "f1", "ari"} and panel.n_updates == 1
    fig1, png1 = panel.figure, panel.plot.value
    assert png1[:8] == b"\x89PNG\r\n\x1a\n"   # the plot shown as an image widget's PNG
    panel.tau.value = 2                      # the observer re-runs at once
    assert panel.n_updates == 2 and panel.history[-1]["tau"] == 2
    assert panel.figure is not fig1 and panel.plot.value[:8] == png1[:8] and panel.plot.value != png1
    assert len(panel.figure.axes[1].lines[0].get_xdata()) == 2   # NMI of both runs plotted
    panel.correlations.value = False
    panel.hierarchy.value = False
    assert panel.n_updates == 4
    assert panel.history[-1]["correlations"] is False and panel.history[-1]["hierarchy"] is False
    panel.phi.value = 1
    assert panel.history[-1]["phi"] == 1
    # the same settings give the same scores (seeded)
    panel.phi.value = 3
    panel.correlations.value = True
    panel.hierarchy.value = True
    panel.tau.value = 6
    assert panel.history[-1]["nmi"] == pytest.approx(first["nmi"])
    assert "<td>" in panel.table.value


def test_panel_reports_errors_without_breaking():
    panel = ExplorePanel(data=toy(n=90), n_estimators=4)
    panel.update()
    n = panel.n_updates
    panel.method.options = list(panel.method.options) + [("missing", ("nosuch", "bitag"))]
    panel.method.value = ("nosuch", "bitag")
    assert panel.error and "not implemented" in panel.error
    assert panel.n_updates == n and "crimson" in panel.status.value
    panel.method.value = ("hmlrf", "hml")
    assert panel.error is None and panel.n_updates == n + 1


def test_panel_settings_are_checked_where_a_notebook_run_stops_on_them():
    # -p n_samples abc used to run "ok" under papermill, the error only in the panel's HTML
    for kw, match in (({"n_samples": "abc"}, "n_samples must be an integer"), ({"seed": -1}, "seed must be"),
                      ({"n_jobs": 0}, "n_jobs must be")):
        with pytest.raises(ValueError, match=match):
            ExplorePanel(data=toy(n=90), auto_update=False, **kw)
