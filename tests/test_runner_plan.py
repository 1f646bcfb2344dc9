"""The runner's schedule: the longest study first, by the duration its last result
records (else the standard run's figures), and every core for a study that would set the
wall time alone."""
import xarray as xr

from hmlkit.studies import runner


def _result(folder, name, seconds):
    folder.mkdir(exist_ok=True)
    xr.Dataset(attrs={"duration_s": seconds}).to_netcdf(folder / f"{name}.nc")


def test_a_results_own_duration_comes_before_the_table(tmp_path):
    _result(tmp_path, "seed_lmmc", 1234.5)
    assert runner.expected_seconds("seed_lmmc", tmp_path) == 1234.5
    assert runner.expected_seconds("real_corel", tmp_path) == runner.STANDARD_SECONDS["real_corel"]
    assert runner.expected_seconds("seed_sfss", tmp_path) == runner.STANDARD_SECONDS.get("seed_sfss", 0)
    (tmp_path / "seed_ghfart.nc").write_bytes(b"not a netCDF file")  # unreadable: the table's figure
    assert runner.expected_seconds("seed_ghfart", tmp_path) == runner.STANDARD_SECONDS.get("seed_ghfart", 0)
    # a duration no run gives (written by hand): the table's figure, not an order NaN would scramble
    for bad in (float("nan"), float("inf"), -5.0, "soon"):
        _result(tmp_path, "seed_mhcrf", bad)
        assert runner.expected_seconds("seed_mhcrf", tmp_path) == runner.STANDARD_SECONDS.get("seed_mhcrf", 0), bad


def test_longest_first_and_every_core_for_the_one_that_sets_the_wall_time(tmp_path):
    for name, sec in (("seed_lmmc", 100), ("seed_sfss", 300), ("seed_ghfart", 200), ("seed_mhcrf", 900)):
        _result(tmp_path, name, sec)
    names = ["seed_lmmc", "seed_sfss", "seed_ghfart", "seed_mhcrf"]
    order, n_jobs = runner.plan(names, tmp_path, jobs=2, cores=2)
    assert order == ["seed_mhcrf", "seed_sfss", "seed_ghfart", "seed_lmmc"]
    assert n_jobs == {"seed_mhcrf": 2, "seed_sfss": 1, "seed_ghfart": 1, "seed_lmmc": 1}  # 900 > 100 + 200 + 300
    _result(tmp_path, "seed_mhcrf", 500)  # no longer longer than the others together
    order, n_jobs = runner.plan(names, tmp_path, jobs=2, cores=2)
    assert order[0] == "seed_mhcrf" and set(n_jobs.values()) == {1}
    order, n_jobs = runner.plan(names, tmp_path, jobs=1, cores=2)  # one at a time: every core each
    assert set(n_jobs.values()) == {2}
    order, n_jobs = runner.plan(["seed_lmmc"], tmp_path, jobs=1, cores=4)
    assert n_jobs == {"seed_lmmc": 4}
