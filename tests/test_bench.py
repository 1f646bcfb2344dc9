"""The speed benchmark's bookkeeping (scaling to tau = 1000, verdicts, bad
input) and its notebook under papermill on a tiny run. The speed figures
themselves are printed by `make bench`, never asserted in a unit test."""
import numpy as np
import pytest
import xarray as xr

from hmlkit import bench


def _results(nuswide_n=17523):
    return {"trecvid": {"trecvid_fit_s": 5.0, "trees": 100},
            "sklearn": {"flat_fit_s": 2.0, "sklearn_fit_s": 9.8, "sklearn_ratio": 4.9, "trees": 100},
            "nuswide": {"nuswide_fit_s": 70.0, "nuswide_peak_gb": 1.5, "nuswide_cluster_s": 4.0,
                        "nuswide_n": nuswide_n, "trees": 100}}


def test_to_dataset_scales_fit_times_to_1000_trees_and_judges_each_target():
    ds = bench.to_dataset(_results())
    v = {k: ds.sel(figure=k) for k in ds["figure"].values}
    assert float(v["trecvid_fit_s"]["at_tau1000"]) == pytest.approx(50.0)
    assert str(v["trecvid_fit_s"]["verdict"].values) == "missed"  # 50 s > 30 s once scaled
    assert float(v["sklearn_ratio"]["at_tau1000"]) == pytest.approx(4.9)  # a ratio is not scaled
    assert str(v["sklearn_ratio"]["verdict"].values) == "missed"
    assert float(v["nuswide_fit_s"]["at_tau1000"]) == pytest.approx(700.0)
    assert str(v["nuswide_fit_s"]["verdict"].values) == "missed"
    for k in ("nuswide_peak_gb", "nuswide_cluster_s"):
        assert str(v[k]["verdict"].values) == "met"
    assert set(ds["figure"].values) == set(bench.TARGETS)


def test_reduced_nuswide_gets_no_verdict():
    ds = bench.to_dataset(_results(nuswide_n=2000))
    nus = [k for k in ds["figure"].values if k.startswith("nuswide_")]
    assert nus and all(str(ds["verdict"].sel(figure=k).values) == "reduced data" for k in nus)
    assert "no verdict" in bench._verdict("nuswide_fit_s", 70.0, _results(2000)["nuswide"])
    assert bench._verdict("trecvid_fit_s", 2.5, {"trecvid_fit_s": 2.5, "trees": 100}).endswith("met")


@pytest.mark.parametrize("kwargs, msg", [({"parts": ["gpu"]}, "unknown bench part"),
                                         ({"trees": 0}, "trees must be a positive int"),
                                         ({"sklearn_trees": 2.5}, "sklearn_trees must be a positive int")])
def test_run_rejects_bad_input(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        bench.run(**kwargs)
    with pytest.raises(ValueError, match="no targeted figure"):
        bench.to_dataset({"trecvid": {"trees": 3}})


def test_bench_notebook_runs_and_stores_its_figures(tmp_path):
    pytest.importorskip("papermill")
    from hmlkit.studies.runner import CELL_TIMEOUT, execute_notebook
    from pathlib import Path

    nb = Path(__file__).resolve().parents[1] / "studies" / "bench_speed.ipynb"
    execute_notebook(str(nb), str(tmp_path / "out.ipynb"), kernel_name="python3", progress_bar=False,
                     parameters={"trees": 3, "sklearn_trees": 3, "nuswide_samples": 300,
                                 "results_dir": str(tmp_path / "results"),
                                 "figures_dir": str(tmp_path / "figures")},
                     cell_timeout=CELL_TIMEOUT["quick"])
    ds = xr.load_dataset(tmp_path / "results" / "bench_speed.nc")
    assert (tmp_path / "figures" / "bench_speed.png").stat().st_size > 0
    assert set(ds["figure"].values) == set(bench.TARGETS)
    assert np.all(ds["value"].values > 0)
    fit = ds.sel(figure="trecvid_fit_s")
    assert float(fit["at_tau1000"]) == pytest.approx(float(fit["value"]) * 1000 / 3)
    assert all(str(ds["verdict"].sel(figure=k).values) == "reduced data"
               for k in ds["figure"].values if k.startswith("nuswide_"))
