"""Parameter sweeps (hmlkit.sweep) and the sweep panel (hmlkit.sweep_panel), Python side: the
thread gives the headless numbers, Cancel stops between points and inside a forest fit, a
second sweep is refused while one runs, bad settings are messages in the panel."""
import threading
import time
from dataclasses import replace

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("ipywidgets")
xr = pytest.importorskip("xarray")

from test_studies_core import toy  # noqa: E402

from hmlkit import executors as _interrupt  # noqa: E402
from hmlkit import sweep as sw  # noqa: E402
from hmlkit.sweep_panel import SweepPanel  # noqa: E402


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
        assert panel.start() is False
        assert panel.error == "a sweep is running: cancel the running sweep first"
        assert "cancel the running sweep first" in panel.status.value and panel.running
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
    # a value refused only by the fit: that point fails with the reason, the others run
    panel.param.value = "tag_weight"
    panel.values.value = "0.5, 2"
    assert panel.start() and panel.wait(600)
    assert "tag_weight=2.0: InvalidParameterError: tag_weight must be 'auto' or a number in [0, 1]" in panel.error
    ds = panel.result
    assert panel.progress.value == panel.progress.max == 2
    assert list(ds.status.values) == ["done", "error"] and np.isfinite(ds.score.sel(tag_weight=0.5)).all()
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
    assert f"-p results_dir {tmp_path / 'r'}" in panel.batch_command() and "figures_dir" not in panel.batch_command()
    assert "results_dir" not in SweepPanel(data=toy(n=90)).batch_command()
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
