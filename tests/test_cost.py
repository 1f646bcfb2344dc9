"""The dry run's cost model (hmlkit.studies.cost): list scheduling, the work of a cell, and a
study's estimate scaled from the cells stored with its result in another profile."""
import json
import math

import pytest
import xarray as xr

from hmlkit.studies import cost


def test_list_scheduling_longest_first():
    assert cost.schedule([], 4) == 0
    assert cost.schedule([5, 3, 3, 2, 2, 1], 1) == 16
    assert cost.schedule([5, 3, 3, 2, 2, 1], 2) == 8           # 5+3 | 3+2+2+1... longest first: 5,2,1 / 3,3,2
    assert cost.schedule([10, 1, 1, 1], 8) == 10                # the longest cell is the floor
    assert cost.schedule([1.0] * 8, 3) == 3


def test_work_follows_each_methods_size_law():
    forest = {"what": "hmlrf", "n": 1000, "d": 100, "m": 50, "trees": 100}
    assert cost.work({**forest, "trees": 1000}) == pytest.approx(10 * cost.work(forest))
    assert cost.work({**forest, "d": 400}) == pytest.approx(2 * cost.work(forest))
    aff = {"what": "bitag/affprop", "n": 1000, "d": 100, "m": 50, "trees": 0}
    assert cost.work({**aff, "n": 3000}) == pytest.approx(9 * cost.work(aff))
    lin = {"what": "bitag/kmeans", "n": 1000, "d": 100, "m": 50, "trees": 0}
    assert cost.work({**lin, "n": 2000}) == pytest.approx(2 * cost.work(lin))
    assert cost.cell_memory({**aff, "n": 17523}) > 7e9  # three n x n float64 message matrices


def _result(path, cells, kernel):
    ds = xr.Dataset({"x": ("a", [1.0])}, attrs={"cells": json.dumps(cells), "kernel_cpu_s": kernel})
    path.parent.mkdir(parents=True, exist_ok=True)
    ds.to_netcdf(path)


def test_an_estimate_scales_the_stored_cells_to_the_target_profile(tmp_path):
    # table5 in the standard profile: trecvid full size, 100 trees, 2 folds -> one cell per fold
    cells = [{"what": "hmlrf", "data": "trecvid", "n": 2379, "d": 1000, "m": 114, "trees": 100, "cpu": 3.0,
              "in_kernel": False} for _ in range(2)]
    _result(tmp_path / "table5_abstractness.nc", cells, kernel=12.0)
    same = cost.estimate("table5_abstractness", "standard", tmp_path)
    assert same.basis == "standard" and same.cpu == pytest.approx(6.0 + 12.0)
    paper = cost.estimate("table5_abstractness", "paper", tmp_path)
    # 10 folds for 2 (x5 cells), 1000 trees for 100 (x10 each), same data size
    assert paper.basis == "standard"
    assert len(paper.cells) == 10 and paper.cells[0] == pytest.approx(30.0)
    assert paper.cpu == pytest.approx(300.0 + 12.0)
    assert paper.wall(4) == pytest.approx(3 * 30.0 + 12.0)
    quick = cost.estimate("table5_abstractness", "quick", tmp_path)
    # quick: 300 of 2379 samples, 16 trees, 1 fold
    n_ratio = 300 / 2379
    expect = 3.0 * 0.16 * n_ratio * math.log2(301) / math.log2(2380)
    assert quick.cells == [pytest.approx(expect)] and quick.basis == "standard"


def test_cells_run_in_the_kernel_are_not_counted_twice(tmp_path):
    cells = [{"what": "hmlrf", "data": "trecvid", "n": 2379, "d": 1000, "m": 114, "trees": 100, "cpu": 3.0,
              "in_kernel": True}]
    _result(tmp_path / "table5_abstractness.nc", cells, kernel=10.0)
    est = cost.estimate("table5_abstractness", "standard", tmp_path)
    assert est.overhead == pytest.approx(7.0) and est.cpu == pytest.approx(10.0)


def test_no_stored_result_or_an_unreadable_one_gives_no_estimate(tmp_path):
    assert cost.estimate("table4_hierarchy_depth", "paper", tmp_path).basis == ""
    (tmp_path / "table4_hierarchy_depth.nc").write_text("not netcdf")
    assert cost.estimate("table4_hierarchy_depth", "paper", tmp_path).basis == ""
    _result(tmp_path / "table4_hierarchy_depth.nc", [{"what": "x", "cpu": "lots"}], kernel=1.0)
    assert cost.estimate("table4_hierarchy_depth", "paper", tmp_path).basis == ""


def test_the_dry_run_lines_say_estimated_and_name_what_it_cannot_estimate(tmp_path):
    cells = [{"what": "hmlrf", "data": "trecvid", "n": 2379, "d": 1000, "m": 114, "trees": 100, "cpu": 3.0}] * 2
    _result(tmp_path / "table5_abstractness.nc", cells, kernel=12.0)
    lines = cost.dry_run_lines(["table5_abstractness", "table4_hierarchy_depth"], "paper", tmp_path, workers=2)
    assert lines[0].startswith("  table5_abstractness: estimated CPU 5 min")
    assert "no estimate" in lines[1]
    assert lines[-1].startswith("estimated: CPU 5 min") and "not estimated: table4_hierarchy_depth" in lines[-1]


def test_with_no_stored_cells_anywhere_the_total_says_so_not_zero(tmp_path):
    lines = cost.dry_run_lines(["table4_hierarchy_depth"], "paper", tmp_path, workers=2)
    assert lines[-1].startswith("estimated: nothing") and "0 s" not in lines[-1]


def test_only_forest_methods_count_trees():
    from hmlkit.data import make_synthetic
    from hmlkit.studies.grids import cell_cost

    d = make_synthetic("trecvid", n_samples=60, random_state=0)
    fp = {"n_estimators": 100}
    assert cell_cost(d, "bitag/kmeans", fp)["trees"] == 0
    assert cell_cost(d, "blm/clustrf", fp)["trees"] == 100 and cell_cost(d, "hmlrf_am", fp)["trees"] == 100
    assert cost.family("bitag/kmeans", 0) == "linear" and cost.family("vifeat/affprop", 0) == "quadratic"
