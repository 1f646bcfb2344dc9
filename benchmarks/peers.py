"""Peer comparison of the speed benchmark: flat ``HMLForest`` against
single-output random forests grown as deep, on the same X.

Every engine grows fully grown trees with the same settings: ``min_samples_leaf``
3, sqrt(d) features tried per node, no bootstrap, 2 threads (``n_jobs``). The
single-output engines get one continuous target, a random projection of the tag
matrix (``y = Y w``, w standard normal, seed 0), so that their trees grow about as
deep as the multi-label ones (leaves per tree are stored beside the times).

The layered HML-RF (``hmlkit_layered``: the data set's tag layers, soft tags) is timed
beside them on the same X with the same settings.

scikit-learn's ``RandomForestRegressor`` is the reference: every ratio is
``engine time / scikit-learn time`` from the same run, the engines interleaved
``repeats`` times and the median taken. LightGBM (``boosting="rf"``) and YDF
(``RandomForestLearner``) are optional peers (``pip install hmlkit[bench]``):
where one is not importable its row says why and holds no figure.

The regression guard: ``peers_record.json`` (beside this module, committed) holds, per
data set, the last recorded hmlkit / scikit-learn ratio and the spread of that ratio over
the record's interleaved runs; a run at the same size flags a data set whose ratio exceeds
the recorded one by more than the run-to-run noise (see :func:`compare`).
``python -m benchmarks.speed --parts peers --record`` updates it. The target guard
(:func:`target_guard`) judges each run against the targets themselves (``TARGET_RATIO``,
``LAYERED_TARGET``), with a margin for the machine (``TARGET_MARGIN``, or the run's own spread
when larger), so a run on another machine is judged without a record of its own.

Data sets (``DATASETS``): the trecvid profile (100 trees), the nuswide profile at
5,000 and at 17,523 samples (30 trees), Corel5k (100 trees; skipped with the
reason when the file is not found, see :func:`hmlkit.data.load_corel5k`).
"""
from __future__ import annotations

import datetime
import json
import math
import statistics
import time
from pathlib import Path

import numpy as np

from hmlkit import HMLForest
from hmlkit.data import load_dataset
from hmlkit.studies.saving import git_commit, write_text_atomic

from .common import warm_rank_codes

# name: (load_dataset spec, its options, trees)
DATASETS = {
    "trecvid": ("trecvid", {}, 100),
    "nuswide_5000": ("nuswide", {"n_samples": 5000}, 30),
    "nuswide": ("nuswide", {"n_samples": 17523}, 30),
    "corel5k": ("corel5k", {}, 100),
}
ENGINES = ("hmlkit", "hmlkit_layered", "sklearn", "lightgbm", "ydf")
OPTIONAL = {"lightgbm": "lightgbm", "ydf": "ydf"}
N_JOBS = 2
MIN_LEAF = 3
# flat HMLForest at most this many times scikit-learn's time on every shape
TARGET_RATIO = {"trecvid": 0.7, "nuswide_5000": 0.7, "nuswide": 0.7, "corel5k": 0.7}
# and the layered HML-RF (the data set's tag layers, soft tags) at most this many times
LAYERED_TARGET = 0.9
# the target guard (``target_guard``) fails a ratio above its target by more than this margin for
# the machine (or than the run's own spread, when larger)
TARGET_MARGIN = 0.05


def load(name, max_samples=None):
    """(X float32, Y csr, y, layers) of a data set of ``DATASETS``; the first
    ``max_samples`` rows when given (the synthetic profiles are generated at that size).
    ``layers``: the data set's tag layers for the layered forest; the nuswide profile has one
    layer of 1000 tags, so two are estimated from its tags (``estimate_layers``, seed 0)."""
    spec, opts, _ = DATASETS[name]
    opts = dict(opts)
    if max_samples is not None and spec != "corel5k":
        opts["n_samples"] = min(opts.get("n_samples", max_samples), max_samples)
    D = load_dataset(spec, **opts)
    X, Y = np.ascontiguousarray(D.X, dtype=np.float32), D.Y.tocsr()
    if max_samples is not None and X.shape[0] > max_samples:
        X, Y = X[:max_samples], Y[:max_samples]
    w = np.random.default_rng(0).standard_normal(Y.shape[1])
    layers = D.layers
    if layers is None or len(layers) < 2:
        from hmlkit.tags import estimate_layers

        layers = estimate_layers(Y, n_layers=2, random_state=0)
    return X, Y, np.asarray(Y @ w, dtype=np.float64).ravel(), layers


def missing_reason(engine):
    """Why an optional engine cannot run here (None when it can)."""
    if engine not in OPTIONAL:
        return None
    try:
        __import__(OPTIONAL[engine])
    except ImportError as exc:
        return f"{OPTIONAL[engine]} not importable ({exc}); pip install 'hmlkit[bench]'"
    return None


def _fit(engine, X, Y, y, trees, layers=None):
    """Fit one engine; returns (seconds, mean leaves per tree). ``hmlkit``: the flat forest
    (one layer of tags); ``hmlkit_layered``: the HML-RF on ``layers`` with soft tags."""
    d = X.shape[1]
    mf = max(1, int(math.sqrt(d)))
    if engine in ("hmlkit", "hmlkit_layered"):
        layered = engine == "hmlkit_layered"
        t = time.perf_counter()
        f = HMLForest(n_estimators=trees, min_samples_leaf=MIN_LEAF, max_features="sqrt", hierarchy=layered,
                      random_state=0, n_jobs=N_JOBS, verbose=False).fit(X, Y, layers if layered else None)
        return time.perf_counter() - t, float(f.n_leaves_.mean())
    if engine == "sklearn":
        from sklearn.ensemble import RandomForestRegressor

        t = time.perf_counter()
        f = RandomForestRegressor(n_estimators=trees, max_features="sqrt", min_samples_leaf=MIN_LEAF,
                                  bootstrap=False, n_jobs=N_JOBS, random_state=0).fit(X, y)
        return time.perf_counter() - t, float(np.mean([e.get_n_leaves() for e in f.estimators_]))
    if engine == "lightgbm":
        import lightgbm as lgb

        # rf mode refuses to run without row bagging or a per-tree feature fraction below 1: all rows,
        # d - 1 features per tree (the fraction is floored), sqrt(d) of them tried per node
        t = time.perf_counter()
        f = lgb.LGBMRegressor(boosting_type="rf", n_estimators=trees, num_leaves=max(2, X.shape[0]), max_depth=-1,
                              min_child_samples=MIN_LEAF, min_child_weight=0.0, min_split_gain=0.0,
                              feature_fraction=(d - 0.5) / d if d > 1 else 1.0, feature_fraction_bynode=mf / d,
                              bagging_freq=0, n_jobs=N_JOBS, random_state=0, max_bin=255, verbose=-1).fit(X, y)
        secs = time.perf_counter() - t
        leaves = f.booster_.trees_to_dataframe().groupby("tree_index")["split_feature"].apply(lambda s: s.isna().sum())
        return secs, float(leaves.mean())
    if engine == "ydf":
        import ydf

        data = {f"f{j}": X[:, j] for j in range(d)}
        data["y"] = y
        t = time.perf_counter()
        ydf.RandomForestLearner(label="y", task=ydf.Task.REGRESSION, num_trees=trees, min_examples=MIN_LEAF,
                                num_candidate_attributes=mf, bootstrap_training_dataset=False, max_depth=-1,
                                num_threads=N_JOBS).train(data)
        secs = time.perf_counter() - t
        return secs, float("nan")  # YDF does not expose leaf counts cheaply
    raise ValueError(f"unknown engine {engine!r}; choose from {ENGINES}")


def run_dataset(name, trees=None, max_samples=None, repeats=1):
    """Time every engine on one data set, interleaved ``repeats`` times (hmlkit,
    scikit-learn, then the optional ones); returns {figure: value} with each
    engine's median time, its median ratio to scikit-learn (per repeat, then the
    median), its leaves per tree and a status ("ok", or why it was skipped); for hmlkit
    also the ratio of every repeat (``hmlkit_ratios``) and their spread."""
    if name not in DATASETS:
        raise ValueError(f"unknown peer data set {name!r}; choose from {sorted(DATASETS)}")
    trees = DATASETS[name][2] if trees is None else int(trees)
    try:
        X, Y, y, layers = load(name, max_samples)
    except FileNotFoundError as exc:
        first = str(exc).splitlines()[0]
        return {"dataset": name, "status": f"skipped: data not found ({first})", "trees": trees}
    # compile the numba kernels (cached on disk) outside the timing
    for e in ("hmlkit", "hmlkit_layered"):
        _fit(e, X[: min(200, X.shape[0])], Y[: min(200, X.shape[0])], y[:200], 2, layers)
    warm_rank_codes()
    status = {e: (missing_reason(e) or "ok") for e in ENGINES}
    times = {e: [] for e in ENGINES}
    leaves = {e: float("nan") for e in ENGINES}
    for _ in range(int(repeats)):
        for e in ENGINES:
            if status[e] != "ok":
                continue
            try:
                secs, leaves[e] = _fit(e, X, Y, y, trees, layers)
            except Exception as exc:  # an optional peer's API may differ by version: say so, go on
                if e in ("hmlkit", "hmlkit_layered", "sklearn"):
                    raise
                status[e] = f"failed: {type(exc).__name__}: {exc}"
                continue
            times[e].append(secs)
    out = {"dataset": name, "n_samples": int(X.shape[0]), "n_features": int(X.shape[1]), "n_tags": int(Y.shape[1]),
           "trees": trees, "repeats": int(repeats), "status": "ok"}
    for e in ENGINES:
        ok = status[e] == "ok" and len(times[e]) == len(times["sklearn"])
        out[f"{e}_status"] = status[e] if status[e] != "ok" or ok else "failed"
        out[f"{e}_fit_s"] = statistics.median(times[e]) if ok else float("nan")
        out[f"{e}_ratio"] = (statistics.median(a / b for a, b in zip(times[e], times["sklearn"])) if ok
                             else float("nan"))
        out[f"{e}_leaves"] = leaves[e] if ok else float("nan")
    for e in ("hmlkit", "hmlkit_layered"):
        out[f"{e}_ratios"] = [a / b for a, b in zip(times[e], times["sklearn"])]
        out[f"{e}_ratio_spread"] = spread(out[f"{e}_ratios"])
    return out


def spread(ratios):
    """The run-to-run noise of a ratio: the range (largest minus smallest) of its values
    over the interleaved runs; 0 for a single run, which measures none."""
    return float(max(ratios) - min(ratios)) if len(ratios) else float("nan")


def judge(name, res):
    """"met" / "missed" for a data set with a target ratio, "reduced data" when
    run with fewer samples or trees than the comparison's own, "no target",
    or "not run"."""
    target = TARGET_RATIO.get(name)
    ratio = res.get("hmlkit_ratio", float("nan"))
    if target is None:
        return "no target"
    if res.get("status", "ok") != "ok" or np.isnan(ratio):
        return "not run"
    if res.get("n_samples", 0) < DATASETS[name][1].get("n_samples", 0) or res.get("trees") != DATASETS[name][2]:
        return "reduced data"
    return "met" if ratio <= target else "missed"


def to_dataset(peers):
    """The peer figures ({data set: run_dataset result}) as an xarray Dataset over
    ``dataset`` x ``engine``: ``peer_fit_s``, ``peer_ratio`` (to scikit-learn),
    ``peer_leaves``, ``peer_status``; per data set ``peer_ratio_spread`` (hmlkit's ratio over
    the interleaved runs, largest minus smallest), ``peer_target`` (NaN: none) and
    ``peer_verdict``."""
    import xarray as xr

    names = list(peers)
    shape = (len(names), len(ENGINES))
    fit = np.full(shape, np.nan)
    ratio = np.full(shape, np.nan)
    leaves = np.full(shape, np.nan)
    status = np.empty(shape, dtype=object)
    verdict = []
    for i, n in enumerate(names):
        r = peers[n]
        for j, e in enumerate(ENGINES):
            fit[i, j] = r.get(f"{e}_fit_s", np.nan)
            ratio[i, j] = r.get(f"{e}_ratio", np.nan)
            leaves[i, j] = r.get(f"{e}_leaves", np.nan)
            status[i, j] = r.get(f"{e}_status", r.get("status", ""))
        verdict.append(judge(n, r))
    return xr.Dataset(
        {"peer_fit_s": (("dataset", "engine"), fit), "peer_ratio": (("dataset", "engine"), ratio),
         "peer_leaves": (("dataset", "engine"), leaves), "peer_status": (("dataset", "engine"), status.astype(str)),
         "peer_ratio_spread": ("dataset", np.array([peers[n].get("hmlkit_ratio_spread", np.nan) for n in names],
                                                   dtype=float)),
         "peer_target": ("dataset", np.array([TARGET_RATIO.get(n, np.nan) for n in names])),
         "peer_verdict": ("dataset", np.array(verdict, dtype=str)),
         "peer_trees": ("dataset", np.array([int(peers[n].get("trees", 0)) for n in names])),
         "peer_n_samples": ("dataset", np.array([int(peers[n].get("n_samples", 0)) for n in names]))},
        coords={"dataset": names, "engine": list(ENGINES)})


def plot(ds, ax):
    """Grouped bars: each engine's fit time per data set (log scale), hmlkit's ratio
    to scikit-learn written above its bar; skipped engines have no bar."""
    names = list(ds["dataset"].values)
    x = np.arange(len(names))
    width = 0.8 / len(ENGINES)
    for j, e in enumerate(ENGINES):
        vals = ds["peer_fit_s"].sel(engine=e).values
        ax.bar(x + (j - (len(ENGINES) - 1) / 2) * width, np.where(np.isnan(vals), 0, vals), width, label=e)
    for i, n in enumerate(names):
        r = float(ds["peer_ratio"].sel(dataset=n, engine="hmlkit"))
        v = float(ds["peer_fit_s"].sel(dataset=n, engine="hmlkit"))
        if not np.isnan(r):
            ax.annotate(f"{r:.2f}x", (x[i] - (len(ENGINES) - 1) / 2 * width, v), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, [f"{n}\n{int(t)} trees" for n, t in zip(names, ds["peer_trees"].values)])
    ax.set_yscale("log")
    ax.set_ylabel("fit time (s), 2 threads")
    ax.set_title("flat HMLForest vs single-output forests (label: hmlkit / scikit-learn)")
    ax.legend(fontsize=8)


def format_table(peers):
    """The peer figures as printed lines (time, ratio to scikit-learn, leaves)."""
    lines = [f"{'data set':14s} {'engine':14s} {'fit s':>9s} {'/sklearn':>9s} {'leaves':>8s}  status"]
    for n, r in peers.items():
        if r.get("status", "ok") != "ok":
            lines.append(f"{n:14s} {'':14s} {'':>9s} {'':>9s} {'':>8s}  {r['status']}")
            continue
        for e in ENGINES:
            lines.append(f"{n:14s} {e:14s} {r[f'{e}_fit_s']:9.2f} {r[f'{e}_ratio']:9.3f} {r[f'{e}_leaves']:8.0f}  "
                         f"{r[f'{e}_status']}")
        target = TARGET_RATIO.get(n)
        note = f"hmlkit/sklearn {r['hmlkit_ratio']:.3f}"
        if len(r.get("hmlkit_ratios", ())) > 1:
            note += f" (spread {r['hmlkit_ratio_spread']:.3f} over {len(r['hmlkit_ratios'])} runs)"
        if target:
            v = judge(n, r)
            note += f"; target <= {target:g}: " + ("no verdict (reduced data)" if v == "reduced data" else v.upper()
                                                   if v == "missed" else v)
        lines.append(f"{'':14s} {note}")
        layered = r.get("hmlkit_layered_ratio", float("nan"))
        if np.isfinite(layered):
            v = "met" if layered <= LAYERED_TARGET else "MISSED"
            lines.append(f"{'':14s} layered HML-RF/sklearn {layered:.3f}; target <= {LAYERED_TARGET:g}: {v}")
    return lines


# ------------------------------------------------------------------ the regression guard
RECORD = Path(__file__).with_name("peers_record.json")


def load_record(path=None):
    """{data set: recorded entry} of the record file (default ``RECORD``); {} when there is
    none yet."""
    path = Path(RECORD if path is None else path)
    if not path.exists():
        return {}
    try:
        record = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"peers record {path} is not valid JSON ({exc})") from None
    if not isinstance(record, dict) or not all(isinstance(v, dict) and "ratio" in v and "spread" in v
                                               for v in record.values()):
        raise ValueError(f"peers record {path}: expected {{data set: {{'ratio': ..., 'spread': ..., ...}}}}")
    return record


def compare(name, res, recorded):
    """(verdict, text) of one data set's run against its recorded entry. The rule: the run is
    SLOWER when its hmlkit / scikit-learn ratio exceeds the recorded ratio by more than the
    run-to-run noise, taken as the larger of the two spreads (this run's and the record's;
    each the range of the ratio over its interleaved runs), so a run of one repeat, which
    measures no noise, is judged by the record's. Verdicts: "slower", "faster" (by more than
    the noise: a new record is due), "within noise", "no record", "not comparable" (another
    size or number of trees than the record's) and "not run"."""
    ratio = res.get("hmlkit_ratio", float("nan"))
    if res.get("status", "ok") != "ok" or not np.isfinite(ratio):
        return "not run", f"{name}: no ratio in this run"
    if recorded is None:
        return "no record", f"{name}: no recorded ratio (--record stores one)"
    if (res.get("n_samples"), res.get("trees")) != (recorded.get("n_samples"), recorded.get("trees")):
        return "not comparable", (f"{name}: run on {res.get('n_samples')} samples and {res.get('trees')} trees, "
                                  f"the record on {recorded.get('n_samples')} and {recorded.get('trees')}")
    noise = max(res.get("hmlkit_ratio_spread", 0.0) or 0.0, recorded["spread"])
    diff = ratio - recorded["ratio"]
    where = f"recorded {recorded['ratio']:.3f} on {recorded.get('date', '?')} at {recorded.get('commit', '?')}"
    if diff > noise:
        return "slower", (f"SLOWER than recorded: {name} hmlkit/sklearn {ratio:.3f}, {where}; "
                          f"+{diff:.3f} exceeds the run-to-run noise {noise:.3f}")
    if -diff > noise:
        return "faster", f"{name}: {ratio:.3f}, faster than {where} by more than the noise {noise:.3f}"
    return "within noise", f"{name}: {ratio:.3f}, within the noise {noise:.3f} of {where}"


def guard(peers, record):
    """{data set: (verdict, text)} of every data set of a run (``compare``)."""
    return {n: compare(n, r, record.get(n)) for n, r in peers.items()}


def target_guard(name, res):
    """[(verdict, text)] of a data set's flat and layered ratios against their targets
    (``TARGET_RATIO``, ``LAYERED_TARGET``), whatever was recorded: "over target" when a ratio
    exceeds its target by more than the margin, the larger of ``TARGET_MARGIN`` and the
    ratio's spread over this run's interleaved repeats; "within target" otherwise; "reduced
    data" (fewer samples or trees than the comparison's own: no verdict) or "not run"."""
    out = []
    for engine, target, label in (("hmlkit", TARGET_RATIO.get(name), "flat"),
                                  ("hmlkit_layered", LAYERED_TARGET, "layered")):
        ratio = res.get(f"{engine}_ratio", float("nan"))
        if target is None:
            continue
        if res.get("status", "ok") != "ok" or not np.isfinite(ratio):
            out.append(("not run", f"{name} {label}: no ratio in this run"))
            continue
        if judge(name, res) == "reduced data":
            out.append(("reduced data", f"{name} {label}: {ratio:.3f} on reduced data, target {target:g} not judged"))
            continue
        margin = max(TARGET_MARGIN, res.get(f"{engine}_ratio_spread", 0.0) or 0.0)
        if ratio > target + margin:
            out.append(("over target", f"OVER TARGET: {name} {label} hmlkit/sklearn {ratio:.3f} > {target:g} + "
                                       f"margin {margin:.3f}"))
        else:
            out.append(("within target", f"{name} {label}: {ratio:.3f}, within target {target:g} + margin "
                                         f"{margin:.3f}"))
    return out


def record_ratios(peers, path=None, date=None, commit=None):
    """Store each data set's ratio and spread of a run in the record file (atomically; the
    other data sets' entries kept); returns the names stored. Only a run of at least two
    interleaved repeats measures the noise the guard needs; a data set not run is not stored."""
    record = load_record(path)
    date = date or datetime.date.today().isoformat()
    commit = commit or git_commit()
    stored = []
    for n, r in peers.items():
        if r.get("status", "ok") != "ok" or not np.isfinite(r.get("hmlkit_ratio", float("nan"))):
            continue
        if len(r.get("hmlkit_ratios", ())) < 2:
            raise ValueError(f"peers record: {n} was run once; recording needs at least 2 interleaved repeats "
                             "(--peer-repeats) to measure the run-to-run noise")
        record[n] = {"ratio": float(r["hmlkit_ratio"]), "spread": float(r["hmlkit_ratio_spread"]),
                     "repeats": len(r["hmlkit_ratios"]), "n_samples": int(r["n_samples"]), "trees": int(r["trees"]),
                     "date": date, "commit": commit}
        stored.append(n)
    write_text_atomic(json.dumps(dict(sorted(record.items())), indent=1) + "\n", RECORD if path is None else path)
    return stored
