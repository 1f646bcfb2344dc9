"""The runner's cells options: where the cells run (checked before anything runs) and the
dry run's cost lines."""
import json

import pytest
import xarray as xr

from hmlkit.studies import runner


def _ledger_result(folder, name, cells, kernel):
    folder.mkdir(parents=True, exist_ok=True)
    xr.Dataset({"x": ("a", [1.0])}, attrs={"cells": json.dumps(cells), "kernel_cpu_s": kernel}).to_netcdf(
        folder / f"{name}.nc")


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_a_local_cluster_of_no_workers_is_refused_by_name(tmp_path, bad):
    with pytest.raises(ValueError, match="local_cluster"):
        runner.run(["table5_abstractness"], profile="quick", results_dir=tmp_path / "r",
                   figures_dir=tmp_path / "f", dry_run=True, local_cluster=bad, log=lambda *a: None)


def test_the_dry_run_prints_each_studys_estimated_cost_and_the_total(tmp_path):
    cells = [{"what": "hmlrf", "data": "trecvid", "n": 300, "d": 1000, "m": 114, "trees": 16, "cpu": 0.5}]
    _ledger_result(tmp_path / "r", "table5_abstractness", cells, kernel=4.0)
    lines = []
    # cwd: the other profiles' folders are looked up there (empty), not in the repository's committed results
    runner.run(["table5_abstractness", "table4_hierarchy_depth"], profile="quick", results_dir=tmp_path / "r",
               figures_dir=tmp_path / "f", dry_run=True, log=lines.append, local_cluster=4, cwd=tmp_path)
    text = "\n".join(lines)
    assert "table5_abstractness: estimated CPU 4 s, wall 4 s on 4 workers" in text
    assert "table4_hierarchy_depth: no estimate" in text
    assert any(l.startswith("estimated: CPU") and "on 4 workers" in l for l in lines)
