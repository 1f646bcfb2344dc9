"""The before/after comparison of study results (tests/compare_results.py)."""
import numpy as np
import xarray as xr

from compare_results import compare_dirs, main


def _ds(score, **attrs):
    return xr.Dataset({"score": (("row", "fold"), score), "status": (("row",), ["measured", "error"]),
                       "timing_s": 1.0 + np.random.rand()},
                      coords={"row": ["a", "b"], "fold": [0, 1]}, attrs=attrs)


def test_identical_values_with_other_attrs_and_timings(tmp_path, capsys):
    s = np.array([[0.5, np.nan], [0.25, 1.0]])
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    _ds(s, duration_s=1.0, git_commit="x").to_netcdf(tmp_path / "a" / "t.nc")
    _ds(s.copy(), duration_s=2.0, git_commit="y").to_netcdf(tmp_path / "b" / "t.nc")
    assert compare_dirs(tmp_path / "a", tmp_path / "b")[2] == []
    assert main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert capsys.readouterr().out.strip().endswith("1 files, 4 variables: identical")


def test_a_changed_value_a_missing_file_and_variable_are_reported(tmp_path):
    s = np.array([[0.5, np.nan], [0.25, 1.0]])
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    _ds(s).to_netcdf(tmp_path / "a" / "t.nc")
    t = s.copy()
    t[1, 1] = np.nextafter(1.0, 2.0)
    _ds(t).assign(extra=1).to_netcdf(tmp_path / "b" / "t.nc")
    _ds(s).to_netcdf(tmp_path / "a" / "u.nc")
    diffs = compare_dirs(tmp_path / "a", tmp_path / "b")[2]
    assert diffs == ["u.nc: only in before", "t.nc: variable 'extra' only in after", "t.nc: score: values differ"]
    assert main([str(tmp_path / "a"), str(tmp_path / "b")]) == 1
