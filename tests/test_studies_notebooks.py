"""Every study notebook under papermill in the quick profile (one shared run), its .nc against
the documented schema, REPORT.md, atomic results on failure, identical numbers on rerun."""
import hashlib
import time

import numpy as np
import pytest
import xarray as xr

import hmlkit.data
from hmlkit.studies.profiles import RESULT_SCHEMA, STUDIES
from hmlkit.studies.runner import run

pytest.importorskip("papermill")
if not hasattr(hmlkit.data, "make_synthetic"):  # the synthetic profiles are part of the core
    pytest.skip("hmlkit.data.make_synthetic not available yet", allow_module_level=True)

ALL = list(STUDIES) + ["explore"]


@pytest.fixture(scope="session")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("studies")
    t0 = time.time()
    res = run(ALL, profile="quick", jobs=2, results_dir=out / "results", figures_dir=out / "figures",
              log=lambda *a: None)
    return out, {r.name: r for r in res}, time.time() - t0


@pytest.mark.parametrize("name", ALL)
def test_notebook_runs_in_quick_profile(quick_run, name):
    out, res, _ = quick_run
    assert res[name].ok, res[name].error
    assert (out / "results" / "executed" / f"{name}.ipynb").exists()


@pytest.mark.parametrize("name", STUDIES)
def test_result_has_documented_dims(quick_run, name):
    out, res, _ = quick_run
    with xr.open_dataset(out / "results" / f"{name}.nc") as ds:
        for var, dims in RESULT_SCHEMA[name].items():
            assert var in ds.variables, f"{name}: {var} missing"
            assert ds[var].dims == dims, f"{name}: {var} has dims {ds[var].dims}, documented {dims}"
        for dim in ds.dims:
            assert dim in ds.coords, f"{name}: dim {dim} has no coordinate"
        assert ds.attrs["profile"] == "quick" and ds.attrs["study"] == name
        assert "parameters" in ds.attrs and "git_commit" in ds.attrs and "duration_s" in ds.attrs
    assert (out / "figures" / f"{name}.png").stat().st_size > 1000


def test_report_lists_every_study(quick_run):
    out, _, _ = quick_run
    text = (out / "results" / "REPORT.md").read_text()
    for name in STUDIES:
        assert f"## {name}" in text
    assert "Claims:" in text and "Table 4 saturates from 5 layers" in text


def test_every_claim_that_does_not_hold_has_a_diagnosis(quick_run):
    """Each miss of the quick run gets a likely reason in REPORT.md, from a
    check run on the stored result (a diagnosis that cannot be computed would be empty)."""
    from hmlkit.studies.claims import FAILS, evaluate

    out, _, _ = quick_run
    misses = []
    for name in STUDIES:
        with xr.open_dataset(out / "results" / f"{name}.nc") as ds:
            misses += [(name, r.id, r.diagnosis) for r in evaluate(name, ds.load()) if r.verdict == FAILS]
    undiagnosed = [(n, cid) for n, cid, d in misses if not d]
    # the only claims without a diagnosis: those whose check needs what a quick run lacks
    assert not undiagnosed, undiagnosed
    text = (out / "results" / "REPORT.md").read_text()
    assert "| claim (paper) | verdict | our numbers | diagnosis |" in text


def test_seed_studies_write_their_results_and_claims(quick_run):
    """The seed studies run in the same quick run, are saved by study.save and their claims
    (the seed paper's numbers beside ours) are rows of REPORT.md."""
    from hmlkit.studies import claims
    from hmlkit.studies.profiles import SEED_STUDIES
    from hmlkit.studies.report import _MARK

    out, _, _ = quick_run
    text = (out / "results" / "REPORT.md").read_text()
    for name in SEED_STUDIES:
        with xr.open_dataset(out / "results" / f"{name}.nc") as ds:
            ds = ds.load()
        results = claims.evaluate(name, ds)
        assert [r.id for r in results] == [c[0] for c in claims.CLAIMS[name]]
        for r in results:
            assert f"| {name} | {r.text} | {_MARK[r.verdict]} |" in text
        # the seed paper's own numbers are in the dataset, beside ours
        if name == "seed_lmmc":
            assert set(ds.method.values) == {"LMMC", "MMC", "SC", "KM", "NC"}
            assert ((ds.score >= 0) & (ds.score <= 100)).all()
            assert ds["paper"].sel({"method": "LMMC"}).values.tolist() == [39.0, 28.7, 89.5, 22.1]  # method= is sel's own
        elif name == "seed_ghfart":
            assert ds.score.sizes["variant"] == 4 and float(ds.timing_s) > 0
            assert float(ds["paper"].sel(variant="adaptive (aw)", metric="purity")) == 0.8863
            assert float(ds["paper_average_precision"].sel(variant="equal (ew)")) == 0.8629
        elif name == "seed_sfss":
            assert np.isfinite(ds["map"].values).all()
            first = ds["paper_map"].sel({"method": "sfss"}).isel(share_index=0)  # at 1 % (NUS-WIDE) / 2 % (Corel)
            assert {str(d): float(first.sel(dataset=d)) for d in ds.dataset.values} == \
                {d: v for d, v in {"nuswide": 0.065, "corel16k": 0.090}.items() if d in ds.dataset.values}
        elif name == "seed_mhcrf":
            assert "paper_f1" in ds and "paper_f1_hidden" in ds
    assert "(paper 39.0/28.7/89.5/22.1)" in text.split("## seed_lmmc")[1]


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rerun(out, **kw):
    return {r.name: r for r in run(list(STUDIES), profile="quick", jobs=2, results_dir=out / "results",
                                   figures_dir=out / "figures", log=lambda *a: None, **kw)}


def test_a_second_run_with_nothing_changed_runs_nothing(quick_run):
    out, _, _ = quick_run
    # the run's folder lock (saving.folder_lock) is the one file a run writes whatever it runs: its holder
    files = sorted(p for p in out.rglob("*") if p.is_file() and p.name != ".hmlkit-run.lock")
    stamps = [p.stat().st_mtime_ns for p in files]
    res = _rerun(out)
    assert all(r.up_to_date and r.ok for r in res.values()), {n: r.reason for n, r in res.items() if not r.up_to_date}
    assert [p.stat().st_mtime_ns for p in files] == stamps  # not one file rewritten


def test_a_report_the_claims_now_judge_otherwise_is_rewritten(quick_run):
    """No study loads the claims' code, so a change to it reruns no study; the report it
    writes is then rewritten by the next run (the dry run says so), and only then."""
    out, _, _ = quick_run
    report = out / "results" / "REPORT.md"
    good = report.read_text()
    report.write_text(good.replace("| holds |", "| judged otherwise |", 1))  # as if the claims' code changed
    logged = []
    res = run(list(STUDIES), profile="quick", results_dir=out / "results", figures_dir=out / "figures",
              dry_run=True, log=logged.append)
    assert all(r.up_to_date for r in res) and any("REPORT.md would be rewritten" in line for line in logged)
    assert "judged otherwise" in report.read_text()  # a dry run writes nothing
    _rerun(out)
    assert report.read_text() == good


def test_dry_run_names_what_a_set_parameter_reruns(quick_run):
    out, _, _ = quick_run
    name = "table4_hierarchy_depth"
    res = {r.name: r for r in run([name], profile="quick", results_dir=out / "results",
                                  figures_dir=out / "figures", parameters={"seed": 1}, dry_run=True,
                                  log=lambda *a: None)}
    assert res[name].reason == "parameters changed: seed (default) -> 1"
    res = _rerun(out, dry_run=True)
    assert all(r.up_to_date for r in res.values())  # the other studies, and this one unset
    assert all(r.reason == "--force" for r in _rerun(out, dry_run=True, force=True).values())


def test_a_change_reruns_the_studies_that_used_what_changed(quick_run, monkeypatch):
    """As if a file changed: a study reruns when a kit module it loaded changed (a forest
    source: the studies that fit a forest, and not the seed studies that do not), never
    for a file it did not use (README.md)."""
    import json

    import netCDF4

    from hmlkit.studies import keys

    out, _, _ = quick_run
    real = keys.file_digest

    def changed(suffixes):
        return lambda path: "changed" if str(path).endswith(suffixes) else real(path)

    monkeypatch.setattr(keys, "file_digest", changed(("README.md",)))
    assert all(r.up_to_date for r in _rerun(out, dry_run=True).values())
    monkeypatch.setattr(keys, "file_digest", changed(("hmlkit/forest/estimator.py",)))
    res = _rerun(out, dry_run=True)
    fits_forest = set()
    for name in STUDIES:
        with netCDF4.Dataset(str(out / "results" / f"{name}.nc")) as ds:
            if "hmlkit/forest/estimator.py" in json.loads(ds.run_deps)["modules"]:
                fits_forest.add(name)
    assert {n for n, r in res.items() if not r.up_to_date} == fits_forest
    assert all(res[n].reason == "kit code changed: hmlkit/forest/estimator.py" for n in fits_forest)
    assert {"table1_trecvid_clustering", "fig8_parameters", "real_corel", "table6_8_completion"} <= fits_forest
    assert not {"seed_ghfart", "seed_lmmc", "seed_sfss"} & fits_forest  # SFSS loads no forest
    monkeypatch.setattr(keys, "file_digest", changed(("Corel5k-train-sparse.arff",)))
    res = _rerun(out, dry_run=True)
    assert res["real_corel"].reason.startswith("data changed: ") and "Corel5k" in res["real_corel"].reason
    assert res["table1_trecvid_clustering"].up_to_date


def test_failed_run_keeps_previous_results_and_rerun_is_identical(quick_run, tmp_path):
    out, _, _ = quick_run
    name = "table5_abstractness"
    nc, png = out / "results" / f"{name}.nc", out / "figures" / f"{name}.png"
    with xr.open_dataset(nc) as ds:
        before = ds.load()
    digests = (_digest(nc), _digest(png))
    # a data set that exists but is not data: validation passes, the run fails while loading
    bogus = tmp_path / "not_data.arff"
    bogus.write_text("this is not an ARFF file\n")
    bad = run([name], profile="quick", results_dir=out / "results", figures_dir=out / "figures",
              executed_dir=tmp_path, parameters={"datasets": [str(bogus)]}, report=False, log=lambda *a: None)
    assert not bad[0].ok
    assert (_digest(nc), _digest(png)) == digests
    # a bad parameter fails at once, in the validation cell
    bad = run([name], profile="quick", results_dir=out / "results", figures_dir=out / "figures",
              executed_dir=tmp_path, parameters={"datasets": ["no/such/dir"]}, report=False, log=lambda *a: None)
    assert not bad[0].ok and "not found" in bad[0].error
    assert (_digest(nc), _digest(png)) == digests
    # rerun with the same parameters: identical numbers
    again = run([name], profile="quick", results_dir=out / "results", figures_dir=out / "figures",
                executed_dir=tmp_path, report=False, log=lambda *a: None, force=True)
    assert again[0].ok
    with xr.open_dataset(nc) as ds:
        xr.testing.assert_equal(ds[list(ds.data_vars)].load(), before[list(before.data_vars)])


def test_completion_runs_on_corel16k(tmp_path):
    from hmlkit._paths import corel16k_path

    path = corel16k_path()
    if not path.exists():
        pytest.skip("shared Corel16k data not present")
    res = run(["table6_8_completion"], profile="quick", results_dir=tmp_path / "results",
              figures_dir=tmp_path / "figures", report=False, log=lambda *a: None,
              parameters={"dataset": str(path), "methods": ["hmlrf_am", "hmlrf_ln", "hmlrf_gc", "cca_gc", "mmc_gc", "sfss"]})
    assert res[0].ok, res[0].error
    with xr.open_dataset(tmp_path / "results" / "table6_8_completion.nc") as ds:
        assert list(ds["dataset"].values) == [path.stem]
        st = ds["status"].sel(dataset=path.stem)
        # no ground-truth groups: the GC rows cluster into the study's gc_clusters (50)
        for row in ("hmlrf_am", "hmlrf_ln", "hmlrf_gc", "cca_gc", "mmc_gc", "sfss"):
            assert st.sel(row=row) == "measured", (row, str(ds["reason"].sel(dataset=path.stem, row=row).values))
        ap1 = float(ds["score"].sel(dataset=path.stem, row="hmlrf_am", measure="AP", N=1).mean())
        assert 0.0 < ap1 <= 1.0
        assert np.isnan(ds["paper"].sel(dataset=path.stem)).all()  # the paper has no Corel numbers
