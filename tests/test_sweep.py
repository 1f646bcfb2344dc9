"""Parameter sweeps (hmlkit.explore.engine) and the sweep panel (hmlkit.explore.panel), Python side: the
thread gives the headless numbers, Cancel stops between points and inside a forest fit, a
second sweep is refused while one runs, bad settings are messages in the panel."""
import html
import json
import re
import threading
import time
from dataclasses import replace
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("ipywidgets")
xr = pytest.importorskip("xarray")

from test_studies_core import toy  # noqa: E402

from hmlkit import executors as _interrupt  # noqa: E402
from hmlkit.explore import engine as sw  # noqa: E402
from hmlkit.explore.panel import SweepPanel, plot_sweep  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def settings(**kw):
    base = dict(dataset=sw.GIVEN, param="tau", values=(2, 4), n_seeds=2, seed=0)
    return sw.SweepSettings(**{**base, **kw})


def test_values_are_parsed_and_checked():
    assert sw.parse_values("10:500:8", default=1) == (10, 80, 150, 220, 290, 360, 430, 500)
    assert sw.parse_values("0:0.5:3") == (0.0, 0.25, 0.5)
    assert sw.parse_values("auto, tokens, None, 3, 3") == ("auto", "tokens", None, 3)
    for bad in ("10:500:-1", "10:500:2.5", "a:b:3"):
        with pytest.raises(ValueError, match=r"is not a range 'start:stop:count' with a whole count"):
            sw.parse_values(bad)
    for empty in ("", " , ", "10:500:0", []):
        with pytest.raises(ValueError, match="no value to sweep"):
            sw.parse_values(empty)
    s = sw.SweepSettings(param="n_estimators", values="3, 5", dataset="trecvid").checked()
    assert s.param == "tau" and s.values == (3, 5) and s.fixed == {}
    s = sw.SweepSettings(param="phi", values=[1, 3], fixed="sparseness=0.3").checked()
    assert s.fixed == {"sparseness": 0.3, "tau": 16}  # the quick profile's tau, a forest method
    for kw, match in (({"values": "0"}, r"tau=0 is refused: n_estimators must be a positive integer"),
                      ({"values": "2.5"}, "n_estimators must be an integer, got 2.5"),
                      ({"param": "sparseness", "values": "0.2, 1.0"}, r"sparseness=1.0 is refused"),
                      ({"param": "nosuch"}, "param 'nosuch' is not a parameter of hmlrf"),
                      ({"method": "kmeans", "mode": "vifeat"}, "param 'tau' is not a parameter of kmeans"),
                      ({"metric": "acc"}, "metric must be one of"),
                      ({"fixed": "tau"}, "is not 'name=value'"),
                      ({"n_seeds": 0}, "n_seeds must be a positive integer")):
        with pytest.raises(ValueError, match=match):
            settings(**kw).checked()
    assert "tag_weight" in sw.sweepable("hmlrf", "hml") and "n_neighbors" not in sw.sweepable("kmeans", "vifeat")


def test_thread_run_gives_the_headless_numbers():
    data = toy(n=90)
    headless = sw.run_sweep(settings(), data=data)
    assert headless.score.dims == ("tau", "metric", "seed") and list(headless.tau.values) == [2, 4]
    assert list(headless.seed.values) == [0, 1] and headless.attrs["state"] == "done"
    assert np.isfinite(headless.score.values).all()
    panel = SweepPanel(data=data, values="2, 4", n_seeds=2)
    assert panel.start()
    assert panel.wait(600) and panel.sweep.state == "done"
    np.testing.assert_array_equal(panel.result.score.values, headless.score.values)
    assert "done: 2 points" in panel.status.value and panel.plot.value[:4] == b"\x89PNG"
    assert panel.progress.value == panel.progress.max == 4 and panel.progress_text.value.startswith("2/2 points")
    # the plot: the mean over seeds and the seeds' range, at the points done
    assert len(panel.figure.axes[0].lines[-1].get_xdata()) == 2
    # a data parameter and a method parameter sweep the same way
    ds = sw.run_sweep(settings(param="sparseness", values="0, 0.3", n_seeds=1, fixed="tau=3"), data=data)
    assert list(ds.sparseness.values) == [0.0, 0.3]
    ds = sw.run_sweep(settings(param="feature_map", values="auto, None", n_seeds=1, fixed="tau=3"), data=data)
    assert list(ds.feature_map.values) == ["auto", "None"] and (ds.status == "done").all()


def test_cancel_between_points_keeps_the_points_done():
    def on_event(event, sweep):
        if event == "point":
            sweep.cancel()

    sweep = sw.Sweep(settings(values=(2, 3, 4)), data=toy(n=90), on_event=on_event)
    ds = sweep.run()
    assert sweep.state == "cancelled" and list(ds.tau.values) == [2]
    assert ds.attrs["state"] == "cancelled" and ds.attrs["n_points_done"] == 1 and ds.attrs["n_points"] == 3
    assert np.isfinite(ds.score.values).all()


def test_cancel_stops_inside_a_forest_fit(monkeypatch):
    import hmlkit.executors as ex

    real, seen = ex.map_threads, {}

    def spy(task, n_calls, n_jobs, progress=None):  # the forest's tree loop runs through map_threads
        seen["asked"], seen["grown"] = n_calls, 0

        def counted(t):
            seen["grown"] += 1
            return task(t)

        return real(counted, n_calls, n_jobs, progress)

    monkeypatch.setattr(ex, "map_threads", spy)
    panel = SweepPanel(data=toy(n=90), values="100000", n_seeds=1)
    assert panel.start()
    t0 = time.time()
    while seen.get("grown", 0) < 5:
        assert time.time() - t0 < 600, "the fit did not start"
        time.sleep(0.01)
    assert panel.cancel()
    t_cancel = time.time()
    assert panel.wait(5)
    assert time.time() - t_cancel < 1.0
    assert panel.sweep.state == "cancelled" and 5 <= seen["grown"] < seen["asked"]
    assert panel.result.sizes["tau"] == 0 and "cancelled: 0 of 1 points kept" in panel.status.value


def test_stop_on_stops_a_fit_from_another_thread():
    ev, grown = threading.Event(), []

    def grow(t):
        grown.append(t)
        time.sleep(0.01)
        if t == 3:
            ev.set()  # as another thread would
        return t

    for n_jobs in (1, 2):
        ev.clear()
        grown.clear()
        with _interrupt.stop_on(ev), pytest.raises(KeyboardInterrupt):
            _interrupt.map_threads(grow, 1000, n_jobs)
        assert len(grown) < 20
    assert _interrupt.map_threads(grow, 3, 1) == [0, 1, 2]  # outside the block: no stop


def test_a_second_sweep_is_refused_while_one_runs():
    panel = SweepPanel(data=toy(n=90), values="100000")
    assert panel.start()
    try:
        status = panel.status.value
        # a second click on its own Start (a double click): nothing happens, no false error
        assert panel.start() is False and panel.error is None and panel.running
        assert panel.status.value == status and "crimson" not in panel.status.value
        other = SweepPanel(data=toy(n=90), values="2")
        assert other.start() is False and "cancel the running sweep first" in other.error
        with pytest.raises(sw.SweepBusy, match="cancel the running sweep first"):
            sw.run_sweep(settings(), data=toy(n=90))
        assert panel.save() is False and "cancel it before saving" in panel.error
        assert sw.running_sweep() is panel.sweep  # a panel no longer shown: its sweep can be cancelled
    finally:
        panel.cancel()
        assert panel.wait(5)
    assert sw.running_sweep() is None
    panel.values.value = "2"
    assert panel.start() and panel.wait(600) and panel.sweep.state == "done"   # usable again


def test_bad_values_are_messages_in_the_panel(tmp_path):
    panel = SweepPanel(data=toy(n=90), values="2", results_dir=tmp_path / "r", figures_dir=tmp_path / "f")
    assert panel.save() is False and "start a sweep first" in panel.error
    for values, match in (("", "no value to sweep"), ("10:5:0", "no value to sweep"),
                          ("0, 2", "tau=0 is refused: n_estimators must be a positive integer"),
                          ("abc", "n_estimators must be an integer")):
        panel.values.value = values
        assert panel.start() is False and match in panel.error, (values, panel.error)
        assert "crimson" in panel.status.value and panel.sweep is None
    # a value the estimator refuses: refused at Start by its own checks, before any data loads
    panel.param.value = "tag_weight"
    panel.values.value = "0.5, 2"
    assert panel.start() is False and "tag_weight=2 is refused: tag_weight must be 'auto' or a number" in panel.error
    # a data set without groups
    bare = SweepPanel(data=replace(toy(n=90), groups=None), values="2")
    assert bare.start() is False and "has no ground-truth groups: a sweep needs them" in bare.error
    # still usable: fixed, the panel runs and saves
    panel.param.value = "tau"
    panel.values.value = "2"
    assert panel.start() and panel.wait(600) and panel.error is None
    assert panel.save() and (tmp_path / "r" / "sweep.nc").exists() and (tmp_path / "f" / "sweep.png").exists()


def test_saved_sweep_reruns_to_the_same_numbers(tmp_path):
    data = toy(n=90)
    panel = SweepPanel(data=data, param="phi", values="1, 5", n_seeds=2, fixed="tau=3", name="phi_sweep",
                       results_dir=tmp_path, figures_dir=tmp_path)
    assert panel.start() and panel.wait(600)
    panel.metric.value = "ari"  # redraws, computes nothing
    assert panel.figure.axes[0].get_ylabel() == "ari"
    assert panel.save()
    with xr.open_dataset(tmp_path / "phi_sweep.nc") as saved:
        saved.load()
    assert saved.attrs["parameter"] == "phi" and saved.attrs["state"] == "done"
    rerun = sw.run_sweep(sw.SweepSettings.from_attrs(saved.attrs), data=data)
    np.testing.assert_array_equal(rerun.score.values, saved.score.values)
    assert "-p sweep_param phi" in panel.batch.value and "-p sweep_run True" in panel.batch.value


@pytest.mark.slow
def test_notebook_batch_run_gives_the_panel_numbers(tmp_path):
    """``papermill explore.ipynb -p sweep_run True ...`` saves the sweep the panel runs."""
    from pathlib import Path

    from hmlkit.studies.runner import execute_notebook

    nb = Path(__file__).resolve().parent.parent / "studies" / "explore.ipynb"
    params = dict(profile="quick", n_samples=60, sweep_values="2, 4", sweep_seeds=2, sweep_fixed="sparseness=0.2",
                  sweep_name="batch", sweep_run=True, results_dir=str(tmp_path), figures_dir=str(tmp_path))
    execute_notebook(str(nb), str(tmp_path / "out.ipynb"), cell_timeout=600, parameters=params, cwd=str(tmp_path))
    with xr.open_dataset(tmp_path / "batch.nc") as batch:
        batch.load()
    assert (tmp_path / "batch.png").exists() and batch.attrs["state"] == "done"
    panel = SweepPanel(profile="quick", n_samples=60, values="2, 4", n_seeds=2, fixed="sparseness=0.2")
    assert panel.start() and panel.wait(120) and panel.sweep.state == "done", panel.status.value
    np.testing.assert_array_equal(panel.result.score.values, batch.score.values)


def test_a_sweep_after_the_forest_grows_one_forest_a_seed(monkeypatch):
    """Sweeping a parameter that acts after the forest (tag_weight, complete_tags...), each seed's
    forest is grown once and lent to the other points: the same scores as growing it at every
    point (point_scores alone), a tenth of the forest fits."""
    from hmlkit.forest.estimator import HMLForest

    data = toy(n=90)
    s = settings(param="tag_weight", values="0, 0.25, 0.5, 0.75, 1", n_seeds=2, fixed="tau=4").checked()
    alone = np.array([[sw.point_scores(data, s, v, seed) for seed in s.seeds()] for v in s.values])
    grown = []
    fit = HMLForest.fit

    def counting(self, *a, **k):
        grown.append(1)
        return fit(self, *a, **k)

    monkeypatch.setattr(HMLForest, "fit", counting)
    ds = sw.run_sweep(s, data=data)
    assert len(grown) == 2  # one a seed, not one a (value, seed)
    np.testing.assert_array_equal(ds.score.transpose("tag_weight", "seed", "metric").values, alone)
    grown.clear()
    sw.run_sweep(settings(param="tau", values="2, 4", n_seeds=2), data=data)
    assert len(grown) == 4  # a forest parameter: every point grows its own


def test_fixed_settings_are_checked_not_dropped():
    """An audit: fixed accepted the sweep's own settings (every point then failed, or n_jobs
    was replaced), dropped a bad value of the swept parameter unchecked, and took a repeated
    key or a missing comma last-wins."""
    for fixed, match in (("n_clusters=2", "n_clusters is set by the sweep itself"),
                         ("random_state=3", "random_state is set by the sweep itself"),
                         ("n_jobs=2", "n_jobs is set by the sweep itself"),
                         ("tau=banana", "tau='banana' is refused"),
                         ("phi=2, phi=5", "'phi' is given twice"),
                         ("sparseness=0.3, tags_removed=0.5", r"'sparseness' is given twice \(as 'tags_removed'"),
                         ("phi=3 sparseness=0.2", "holds two settings: separate them with a comma")):
        with pytest.raises(ValueError, match=match):
            settings(fixed=fixed).checked()
    assert settings(fixed="tau=50, phi=2").checked().fixed == {"phi": 2}  # the swept values win, as documented


def test_a_sweep_of_data_given_says_so_and_runs_once():
    data = toy(n=90)
    ds = sw.run_sweep(sw.SweepSettings(param="tau", values="2"), data=data)  # dataset left at its default
    assert ds.attrs["dataset"] == sw.GIVEN and sw.SweepSettings.from_attrs(ds.attrs).dataset == sw.GIVEN
    with pytest.raises(ValueError, match="n_samples=10 subsamples a named data set"):
        sw.Sweep(sw.SweepSettings(param="tau", values="2", n_samples=10), data=data)
    sweep = sw.Sweep(settings(values="2", n_seeds=1), data=data)
    sweep.run()
    for again in (sweep.run, sweep.start):
        with pytest.raises(RuntimeError, match=r"a Sweep runs once"):
            again()
    assert list(sweep.result.tau.values) == [2]  # not run twice into one result


def test_the_panel_refuses_more_seeds_than_its_box_and_names_its_folders(tmp_path):
    with pytest.raises(ValueError, match="n_seeds must be at most 100 in the panel, got 150"):
        SweepPanel(data=toy(n=90), n_seeds=150)
    panel = SweepPanel(data=toy(n=90), n_samples=40, values="2", results_dir=tmp_path / "r")
    assert f"-p results_dir {tmp_path / 'r'}" in panel.batch_command()
    assert panel.start() and panel.wait(600) and panel.sweep.state == "done"  # n_samples: named data sets only
    assert panel.result.attrs["data"] and '"n_samples": 90' in panel.result.attrs["data"]


def test_visual_features_alone_offer_no_tag_setting_and_bad_save_names_are_messages(tmp_path):
    assert not {"sparseness", "n_layers"} & set(sw.sweepable("kmeans", "vifeat"))  # no tag in the input
    assert {"sparseness", "n_layers"} <= set(sw.sweepable("kmeans", "bitag"))
    panel = SweepPanel(data=toy(n=90), values="2", results_dir=tmp_path, figures_dir=tmp_path)
    assert panel.start() and panel.wait(600)
    for bad in ("a b", "a/b", ".hidden", "a\\b", "a\x00b", ""):
        panel.name.value = bad
        assert panel.save() is False and "is not a file name" in panel.error, bad
    panel.name.value = "run-2.v1"
    assert panel.save() and (tmp_path / "run-2.v1.nc").exists()


# ----------------------------------------------------------------------------- what a sweep runs, and where it goes
def _fit_fails_at(monkeypatch, bad):
    """point_scores raising for the value ``bad``, as a fit that fails on one point."""
    real = sw.point_scores

    def failing(base, s, value, seed, *a, **k):
        if value == bad:
            raise RuntimeError(f"no fit at {value}")
        return real(base, s, value, seed, *a, **k)

    monkeypatch.setattr(sw, "point_scores", failing)


def test_non_finite_values_are_refused_up_front_and_a_failed_point_loses_no_other(tmp_path, monkeypatch):
    """A batch sweep over tag_weight 0.25, 0.5, inf ended in 'could not save: Axis limits
    cannot be NaN or Inf', the two valid points lost."""
    for values, bad in (("0.25, 0.5, inf", "inf"), ("nan, 0.5", "nan"), ([0.5, float("-inf")], "-inf")):
        with pytest.raises(ValueError, match=rf"tag_weight={bad} is refused: not a finite number"):
            settings(param="tag_weight", values=values).checked()
    with pytest.raises(ValueError, match="tag_weight=inf is refused"):
        SweepPanel(data=toy(n=90), param="tag_weight", values="0.25, 0.5, inf", run=True, results_dir=tmp_path,
                   figures_dir=tmp_path)
    assert not list(tmp_path.iterdir())
    # a point failing at fit time: the batch run saves the others, and the plot draws them
    _fit_fails_at(monkeypatch, 0.5)
    panel = SweepPanel(data=toy(n=90), param="tag_weight", values="0.25, 0.5, 0.75", fixed="tau=2", run=True,
                       name="batch", results_dir=tmp_path, figures_dir=tmp_path)
    with xr.open_dataset(tmp_path / "batch.nc") as ds:
        ds.load()
    assert list(ds.status.values) == ["done", "error", "done"] and (tmp_path / "batch.png").exists()
    assert "no fit at 0.5" in str(ds.reason.values[1]) and panel.saved[0] == tmp_path / "batch.nc"
    # a sweep saved with a non-finite value (by an older kit) still draws its finite points
    old = ds.assign_coords(tag_weight=[0.25, float("inf"), 0.75])
    fig = plot_sweep(old, values=[0.25, float("inf"), 0.75, float("nan")])
    assert np.isfinite(fig.axes[0].get_xlim()).all()


def test_values_are_distinct_by_type_and_parsed_in_linear_time():
    """max_features 1.0 (every feature) and 1 (one feature) were one value; True was 1."""
    assert sw.parse_values("1.0, 1, 50") == (1.0, 1, 50)
    assert [type(v) for v in sw.parse_values("1.0, 1, 50")] == [float, int, int]
    assert sw.parse_values("yes, 1, True") == ("yes", 1, True) and sw.parse_values("yes, 1, True")[2] is True
    assert sw.parse_values([1, 1.0, True, 1, np.int64(1)]) == (1, 1.0, True)
    s = settings(param="max_features", values="1.0, 1, 50").checked()
    assert [type(v) for v in s.values] == [float, int, int]
    assert settings(param="tag_weight", values="1, 1.0, 0.5").checked().values == (1.0, 0.5)  # both are 1.0 here
    ds = sw.run_sweep(settings(param="max_features", values="1.0, 1", n_seeds=1, fixed="tau=2"), data=toy(n=90))
    assert list(ds.max_features.values) == ["1.0", "1"] and (ds.status == "done").all()
    fig = plot_sweep(ds, values=s.values[:2])
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["1.0", "1"]
    text = ", ".join(str(i) for i in range(30000))
    t0 = time.perf_counter()
    assert len(sw.parse_values(text)) == 30000
    assert time.perf_counter() - t0 < 1.0


@pytest.mark.parametrize("param, value", [("tag_weight", float("nan")), ("tag_weight", 1.5), ("tag_weight", True),
                                          ("completion_weight", -1), ("feature_map", "banana"),
                                          ("untagged", "maybe"), ("n_neighbors", 2**63 - 1)])
def test_values_the_estimator_refuses_are_refused_before_any_data_loads(param, value, monkeypatch):
    """Each was accepted up front and failed only at fit time, after the data loaded."""
    def no_load(*a, **k):
        raise AssertionError("the data was loaded")

    monkeypatch.setattr(sw, "load_base", no_load)
    for method in ("hmlrf", "hmlrf_paper"):
        with pytest.raises(ValueError, match=rf"^{param}={re.escape(repr(value))} is refused: "):
            sw.Sweep(sw.SweepSettings(param=param, values=[value], method=method))
        with pytest.raises(ValueError, match=rf"{param}={re.escape(repr(value))} is refused"):
            sw.SweepSettings(param="tau", values="2", fixed={param: value}, method=method).checked()


def test_the_estimator_refuses_them_itself_before_growing_a_tree(monkeypatch):
    from hmlkit.cluster import HMLClustering
    from hmlkit.forest.estimator import HMLForest

    def no_forest(*a, **k):
        raise AssertionError("a forest was grown")

    monkeypatch.setattr(HMLForest, "fit", no_forest)
    data = toy(n=30)
    for param, value in (("n_neighbors", 2**63 - 1), ("untagged", "maybe"), ("feature_map", "banana")):
        with pytest.raises(ValueError, match=rf"{param} must be .*got {re.escape(repr(value))}"):
            HMLClustering(n_clusters=3, n_estimators=2, **{param: value}).fit(data.X, data.Y)


def test_the_panel_shows_what_runs_and_where_it_saves(tmp_path, monkeypatch):
    """The quick profile fixed tau = 16 and 300 samples with the fixed box empty; Save wrote
    under studies/ (the kernel's folder) while the batch command wrote to the repository's."""
    panel = SweepPanel(param="phi", values="1, 3")
    shown = panel.effective.value
    for row in (("tau", "16", "the quick profile"), ("samples", "300", "the quick profile"),
                ("profile", "quick", "chosen"), ("phi", "1, 3", "swept")):
        assert all(f">{html.escape(x)}<" in shown or html.escape(x) in shown for x in row), (row, shown)
    results, figures = REPO / "results" / "explore", REPO / "figures" / "explore"
    assert panel.results_dir == str(results) and panel.figures_dir == str(figures)
    cmd = panel.batch_command()
    assert f"-p results_dir {results}" in cmd and f"-p figures_dir {figures}" in cmd
    assert cmd.startswith(f"papermill {REPO / 'studies' / 'explore.ipynb'} {results / 'sweep.ipynb'}")
    assert str(results / "sweep.nc") in shown
    panel.fixed.value = "tau=40, sparseness=0.2"
    assert "<i>fixed</i>" in panel.effective.value and ">40<" in panel.effective.value
    panel.values.value = "0"
    assert "phi=0 is refused" in panel.effective.value and panel.error is None  # shown, not an error yet
    # a relative folder: the kernel's folder when the panel is made, shown and saved absolute
    monkeypatch.chdir(tmp_path)
    panel = SweepPanel(data=toy(n=90), values="2", results_dir="r", figures_dir="f", name="x")
    assert panel.results_dir == str(tmp_path / "r") and f"-p results_dir {tmp_path / 'r'}" in panel.batch_command()
    assert panel.start() and panel.wait(600) and panel.save()
    assert panel.saved == (tmp_path / "r" / "x.nc", tmp_path / "f" / "x.png") and panel.saved[0].exists()
    assert str(tmp_path / "r" / "x.nc") in panel.status.value
    attrs = panel.result.attrs
    assert ["samples", 90, "the data given"] in json.loads(attrs["effective"])


def test_the_status_follows_the_sweep_and_the_plot_waits_for_one(tmp_path):
    """The status read "(loading the data)" for the whole sweep; an empty image showed as a
    broken-image icon before the first sweep."""
    panel = SweepPanel(data=toy(n=90), values="2, 3", results_dir=tmp_path, figures_dir=tmp_path)
    assert panel.plot.layout.display == "none" and not panel.plot.value
    seen = []
    follow = panel._follow

    def record(event, sweep):
        follow(event, sweep)
        seen.append((event, panel.status.value))

    panel._follow = record
    assert panel.start() and panel.wait(600)
    after = dict(seen)
    assert "loading the data" in after["start"]
    assert "on 90 samples" in after["loaded"] and "loading" not in after["loaded"]
    assert all("loading" not in text for event, text in seen if event in ("fit", "point"))
    assert panel.plot.layout.display is None and panel.plot.value[:4] == b"\x89PNG"


def test_the_seeds_box_refuses_what_is_not_a_number_of_seeds():
    """The seeds box turned 2.5 into 25 and 0 into 1, silently."""
    panel = SweepPanel(data=toy(n=90), values="2")
    for bad in ("2.5", "0", "-1", "101", "two", ""):
        panel.n_seeds.value = bad
        assert panel.start() is False and f"seeds: {bad!r} is not a number of seeds" in panel.error, bad
    panel.n_seeds.value = " 2 "
    assert panel.settings().n_seeds == 2


def test_log_axes_label_the_values_not_the_minor_ticks():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    values = [20, 50, 100, 200, 400]
    ds = xr.Dataset({"score": (("tau", "metric", "seed"), np.full((5, len(sw.SCORE_METRICS), 1), 0.5)),
                     "status": (("tau",), np.array(["done"] * 5))},
                    coords={"tau": values, "metric": list(sw.SCORE_METRICS), "seed": [0]},
                    attrs={"parameter": "tau", "method": "hmlrf", "dataset": "trecvid", "profile": "quick",
                           "n_points_done": 5, "n_points": 5})
    fig = plot_sweep(ds, values=values)
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels(minor=True) if t.get_text()] == []
    assert [t.get_text() for t in ax.get_xticklabels()] == ["20", "50", "100", "200", "400"]


def test_the_eta_weighs_the_fits_done_by_their_trees():
    """A tau sweep of 200 ... 1600 said 6 s with 19 s to go: every fit as long as the first."""
    sweep = sw.Sweep(settings(values="200, 400, 800, 1600", n_seeds=1), data=toy(n=90))
    sweep.state, sweep.started_at = "running", time.time() - 60  # a minute of loading the data
    assert sweep.eta() is None
    sweep.points = [{"status": "done"}]
    sweep.fit_times, sweep.fits_done = [(200, 2.0)], 1
    assert sweep.eta() == pytest.approx(2.0 / 200 * (400 + 800 + 1600))
    assert SweepPanel._progress(sweep) == "1/4 points, ETA 28 s"
    phi = sw.Sweep(settings(param="phi", values="1, 2, 3", n_seeds=2), data=toy(n=90))
    phi.state, phi.fit_times, phi.fits_done = "running", [(1, 1.0), (1, 3.0), (2, 2.0)], 3
    phi.points = [{"status": "done"}]
    assert phi.eta() == pytest.approx(2.0 * 3)  # the mean fit, 3 fits to go


def test_save_with_no_point_done_writes_nothing(tmp_path):
    panel = SweepPanel(data=toy(n=90), values="2", results_dir=tmp_path, figures_dir=tmp_path)
    sweep = panel._new_sweep()
    sweep.cancel()  # before the first fit: no point done
    sweep.run()
    panel.sweep = sweep
    assert sweep.state == "cancelled" and panel.result.sizes["tau"] == 0
    assert panel.save() is False and "no point done" in panel.error and "nothing was written" in panel.error
    assert not list(tmp_path.iterdir())


def test_a_notebook_saved_with_its_outputs_leaves_the_commit_clean(tmp_path):
    """JupyterLab autosaves studies/explore.ipynb with its outputs while its panels run: every
    sweep saved then recorded <commit>-dirty."""
    import subprocess

    from hmlkit.studies.saving import git_commit

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": ["x = 1\n", "x"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "studies").mkdir()
    (tmp_path / "hmlkit").mkdir()
    (tmp_path / "hmlkit" / "m.py").write_text("A = 1\n")
    path = tmp_path / "studies" / "explore.ipynb"
    path.write_text(json.dumps(nb, indent=1))
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    head = git_commit(tmp_path)
    assert head != "unknown" and not head.endswith("-dirty")
    run = json.loads(path.read_text())
    run["cells"][0].update(execution_count=3, outputs=[{"output_type": "execute_result", "execution_count": 3,
                                                        "data": {"text/plain": ["1"]}, "metadata": {}}])
    run["metadata"]["widgets"] = {"state": {}}
    path.write_text(json.dumps(run, indent=2))
    assert git_commit(tmp_path) == head  # outputs only: the code is the commit's
    run["cells"][0]["source"] = ["x = 2\n", "x"]
    path.write_text(json.dumps(run, indent=2))
    assert git_commit(tmp_path) == head + "-dirty"
    path.write_text(json.dumps(nb, indent=1))
    (tmp_path / "hmlkit" / "m.py").write_text("A = 2\n")
    assert git_commit(tmp_path) == head + "-dirty"


def test_every_default_passes_the_up_front_check():
    """The estimators' own checks run up front refuse no method's default value."""
    from hmlkit.explore.panel import method_options

    for _label, (method, mode) in method_options():
        defaults = sw.estimator_defaults(method, mode)
        for param in sw.sweepable(method, mode):
            value = defaults.get(sw.FOREST_KEYS.get(param, param), 0.0 if param == "sparseness" else 2)
            s = sw.SweepSettings(method=method, mode=mode, param=param, values=[value]).checked()
            assert len(s.values) == 1, (method, mode, param)
