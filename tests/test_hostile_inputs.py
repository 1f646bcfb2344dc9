"""Hostile inputs against the loaders, the explore panel and the benchmarks'
command lines: each is a clear error naming the argument or file, made before any work,
and a failed write leaves no stray file."""
import errno
import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from benchmarks import scale as bench_scale
from benchmarks import speed as bench
from hmlkit.data import TaggedData, load_arff, load_dataset
from hmlkit.data.npz import load_npz, save_npz


def _toy(groups=True, n=40):
    rng = np.random.default_rng(0)
    return TaggedData(X=rng.random((n, 4)), Y=(rng.random((n, 5)) < 0.4).astype(np.uint8),
                      groups=np.arange(n) % 3 if groups else None, name="toy")


# ---------------------------------------------------------------- save_npz
def test_save_npz_to_a_directory_is_named_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "d.npz"
    target.mkdir()
    with pytest.raises(IsADirectoryError, match="d.npz is a directory"):
        save_npz(target, _toy())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.npz"]  # no .d.npz.<pid>.tmp


@pytest.mark.parametrize("compressed", [True, False])
def test_save_npz_on_a_full_disk_removes_its_temp_file(tmp_path, monkeypatch, compressed):
    def full_disk(fh, **arrays):
        fh.write(b"PK\x03\x04 half an archive")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "savez_compressed" if compressed else "savez", full_disk)
    with pytest.raises(OSError, match=r"could not write .*toy\.npz: No space left") as info:
        save_npz(tmp_path / "toy.npz", _toy(), compressed=compressed)
    assert info.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []  # neither the target nor the temporary file
    monkeypatch.undo()
    assert load_npz(save_npz(tmp_path / "toy.npz", _toy())).n_samples == 40  # and a later write works


# ---------------------------------------------------------------- load_dataset on bad files
ARFF = ("@relation 'toy: -C -2'\n@attribute a numeric\n@attribute b numeric\n"
        "@attribute t1 {0,1}\n@attribute t2 {0,1}\n@data\n")
ROWS = "1.0,2.0,1,0\n3.0,4.0,0,1\n"


@pytest.mark.parametrize("content, message", [
    (b"", "the file is empty"),
    (bytes(np.random.default_rng(1).integers(0, 256, 600, dtype=np.uint8)), "not an ARFF text file"),
    (b"x,y\n1,2\n", "not an ARFF file: its first statement is 'x,y'"),
    (b"% a comment only\n\n", "not an ARFF file: no @relation line"),
    (ARFF.split("@data")[0].encode(), "has no @data section"),
    (ARFF.encode(), "has a header but no data rows"),
    (ARFF.replace("'toy: -C -2'", "toy").encode() + b"% no rows\n", "has a header but no data rows"),
    (gzip.compress(ARFF.encode() + ROWS.encode(), mtime=0)[:40], "a damaged gzip-compressed file"),
], ids=["empty", "random-bytes", "csv", "comment-only", "no-data-section", "no-rows", "no-rows-comment",
        "damaged-gzip"])
def test_load_dataset_names_what_is_wrong_with_the_file(tmp_path, content, message):
    # each of these used to say "cannot tell features from labels; pass n_features=..."
    path = tmp_path / "bad.arff"
    path.write_bytes(content)
    for load in (lambda: load_dataset(path), lambda: load_dataset(path, n_features=2),
                 lambda: load_arff(path, n_features=2)):
        with pytest.raises(ValueError, match=message) as info:
            load()
        assert str(path) in str(info.value) and "n_features" not in str(info.value)


@pytest.mark.parametrize("encode", [lambda t: b"\xef\xbb\xbf" + t, gzip.compress,
                                    lambda t: gzip.compress(b"\xef\xbb\xbf" + t)],
                         ids=["utf8-bom", "gzip", "gzip-bom"])
def test_arff_with_a_byte_order_mark_or_gzipped_is_read(tmp_path, encode):
    path = tmp_path / "toy.arff"
    path.write_bytes(encode((ARFF + ROWS).encode()))
    d = load_dataset(path)
    assert d.tag_names == ["t1", "t2"] and d.meta["feature_names"] == ["a", "b"]
    np.testing.assert_array_equal(d.X, [[1, 2], [3, 4]])
    assert d.Y.toarray().tolist() == [[1, 0], [0, 1]]


def test_arff_error_line_numbers_survive_the_byte_order_mark(tmp_path):
    path = tmp_path / "toy.arff"
    path.write_bytes(b"\xef\xbb\xbf" + (ARFF + ROWS + "5.0,?,1,0\n").encode())
    with pytest.raises(ValueError, match="line 9: missing value '\\?' for attribute 'b'"):
        load_dataset(path)


# ---------------------------------------------------------------- the explore panel
@pytest.mark.parametrize("kw, error, message", [
    ({"n_estimators": 5000}, ValueError, r"n_estimators must be .*<= 1000, got 5000"),
    ({"n_estimators": 0}, ValueError, r"n_estimators must be a positive integer .*<= 1000, got 0"),
    ({"n_estimators": 2.7}, TypeError, r"n_estimators must be .*got 2.7"),
    ({"n_estimators": "20"}, TypeError, r"n_estimators must be .*got '20'"),
    ({"min_samples_leaf": 50}, ValueError, r"min_samples_leaf must be .*<= 20, got 50"),
    ({"min_samples_leaf": 0}, ValueError, r"min_samples_leaf must be .*got 0"),
    ({"min_samples_leaf": True}, TypeError, r"min_samples_leaf must be an integer, got the boolean"),
    ({"auto_update": "no"}, TypeError, r"auto_update must be True or False, got 'no'"),
    ({"auto_update": 1}, TypeError, r"auto_update must be True or False, got 1"),
    ({"profile": "bogus"}, ValueError, r"profile must be one of 'quick', 'standard', 'paper', got 'bogus'"),
    ({"dataset": "bogus"}, ValueError, r"dataset must be one of 'trecvid', 'nuswide', got 'bogus'"),
    ({"dataset": ["trecvid"]}, ValueError, r"dataset must be one of"),
    ({"data": np.zeros((5, 3))}, TypeError, r"data must be a hmlkit.data.TaggedData .*got ndarray"),
    ({"data": _toy(groups=False)}, ValueError, r"toy has no ground-truth groups: the explore panel needs them"),
])
def test_explore_panel_refuses_what_it_used_to_change_or_defer(kw, error, message):
    pytest.importorskip("ipywidgets")
    from hmlkit.explore.widgets import ExplorePanel

    kw = {"data": _toy(), "auto_update": False, **kw}
    with pytest.raises(error, match=message):
        ExplorePanel(**kw)


def test_explore_panel_keeps_its_arguments_at_the_slider_ends():
    pytest.importorskip("ipywidgets")
    from hmlkit.explore.widgets import PHI_MAX, TAU_MAX, ExplorePanel

    panel = ExplorePanel(data=_toy(), n_estimators=np.int64(TAU_MAX), min_samples_leaf=PHI_MAX,
                         auto_update=np.bool_(False))
    assert panel.params()["tau"] == TAU_MAX and panel.params()["phi"] == PHI_MAX
    assert panel.auto_update is False
    panel = ExplorePanel(data=_toy(), n_estimators=1, min_samples_leaf=1, auto_update=False, profile="standard")
    assert (panel.params()["tau"], panel.params()["phi"], panel.params()["profile"]) == (1, 1, "standard")


# ---------------------------------------------------------------- the benchmarks' options
def _no_work(monkeypatch):
    """Make any benchmark part or size fail the test if it runs."""
    def ran(*a, **k):
        raise AssertionError("a benchmark part ran before the options were checked")

    monkeypatch.setattr(bench, "_run_part", ran)
    monkeypatch.setattr(bench_scale, "_run_one", ran)


@pytest.mark.parametrize("argv, message", [
    (["--parts", ""], "--parts names no part"),
    (["--parts", " , "], "--parts names no part"),
    (["--nuswide-samples", "-5"], r"--nuswide-samples must be an integer >= 31, got -5"),
    (["--nuswide-samples", "10"], r"--nuswide-samples must be an integer >= 31, got 10"),
    (["--peer-trees", "-3"], r"--peer-trees must be a positive integer, got -3"),
    (["--peer-trees", "0"], r"--peer-trees must be a positive integer, got 0"),
    (["--peer-samples", "-1"], r"--peer-samples must be an integer >= 31, got -1"),
])
def test_bench_command_line_refuses_bad_options_before_any_part(monkeypatch, capsys, argv, message):
    _no_work(monkeypatch)
    with pytest.raises(SystemExit) as info:
        bench.main(argv)
    assert info.value.code == 2 and message.replace("\\", "") in capsys.readouterr().err


@pytest.mark.parametrize("kwargs, message", [
    ({"parts": []}, "parts names no part"),
    ({"nuswide_samples": -5}, "nuswide_samples must be"),
    ({"nuswide_samples": 0}, "nuswide_samples must be"),
    ({"peer_trees": -3}, "peer_trees must be"),
    ({"peer_samples": 2.5}, "peer_samples must be"),
    # the scale part's options, checked before the trecvid part runs, not when scale starts
    ({"parts": ["trecvid", "scale"], "scale_ns": "1"}, r"every size of ns must be an integer >= 31"),
    ({"parts": ["trecvid", "scale"], "scale_ns": "300,300"}, "names a size twice"),
    ({"parts": ["trecvid", "scale"], "scale_trees": 0}, "trees must be"),
    ({"parts": ["trecvid", "scale"], "scale_tags": "10"}, r"every size of tags must be an integer >= 87"),
    ({"parts": ["trecvid", "scale"], "scale_dask": -1}, "dask_workers must be"),
    ({"parts": ["trecvid", "scale"], "scale_features": 2}, "n_features must be"),
])
def test_bench_run_checks_every_option_before_the_first_part(monkeypatch, kwargs, message):
    _no_work(monkeypatch)
    with pytest.raises(ValueError, match=message):
        bench.run(progress=None, **kwargs)


def test_bench_with_no_part_fails_fast_as_a_command():
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "benchmarks.speed", "--parts", ""], capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert out.returncode == 2 and "--parts names no part" in out.stderr
    assert time.perf_counter() - t < 60  # an import and a check, no benchmark


def _unwritable_folder(tmp_path):
    """A folder no file can be created in: a read-only one, or /proc where permission bits
    do not stop root."""
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        (d / "probe").touch()
    except OSError:
        return d
    (d / "probe").unlink()
    if not os.path.isdir("/proc"):
        pytest.skip("running as root without /proc: no unwritable folder to try")
    return "/proc"


@pytest.mark.parametrize("argv, message", [
    (["--n", "1"], r"every size of --n must be an integer >= 31, got 1"),
    (["--n", "300,300"], "--n names a size twice"),
    (["--n", ""], "--n must list at least one sample count"),
    (["--n", "300", "--tags", "5"], r"every size of --tags must be an integer >= 87, got 5"),
    (["--n", "300", "--tags-n", "2"], r"--tags-n must be an integer >= 31, got 2"),
    (["--n", "300", "--features", "3"], r"--features must be an integer >= 8, got 3"),
    (["--n", "300", "--dask", "-1"], r"--dask must be an integer >= 0, got -1"),
    (["--n", "300", "--out", "{tmp}"], "is a directory; give a file name"),
    (["--n", "300", "--figure", "{tmp}"], "is a directory; give a file name"),
    (["--n", "300", "--figure", "{tmp}/scale.xyz"], "unknown format '.xyz'"),
    (["--n", "300", "--out", "{file}/scale.nc"], "is a file, not a folder"),
    (["--n", "300", "--out", "{ro}/scale.nc"], "cannot write in"),
    (["--n", "300", "--figure", "{ro}/new/scale.png"], "cannot write in"),
])
def test_bench_scale_refuses_bad_options_and_outputs_before_the_sweep(monkeypatch, capsys, tmp_path, argv,
                                                                       message):
    _no_work(monkeypatch)
    (tmp_path / "file").write_text("x")
    names = {"tmp": tmp_path, "file": tmp_path / "file"}
    if any("{ro}" in a for a in argv):
        names["ro"] = _unwritable_folder(tmp_path)
    with pytest.raises(SystemExit) as info:
        bench_scale.main([a.format(**names) for a in argv])
    assert info.value.code == 2 and message.replace("\\", "") in capsys.readouterr().err


def test_bench_scale_run_refuses_a_size_the_pipeline_cannot_take(monkeypatch):
    _no_work(monkeypatch)
    with pytest.raises(ValueError, match=r"every size of ns must be an integer >= 31, got 30"):
        bench_scale.run(ns=(300, 30), progress=None)  # 30 samples, 30 clusters: failed at its turn
    with pytest.raises(ValueError, match="tags_n must be"):
        bench_scale.run(ns=(300,), tags=(100,), tags_n=10, progress=None)
