"""A study's parameters: :func:`setup` validates a notebook's papermill parameters (and
fails at once on a bad one), fills those left ``None`` from the profile
(:mod:`.profiles`) and returns a :class:`StudyConfig`. Cheap: nothing is loaded here."""
from __future__ import annotations

import json
import numbers
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import paper_values as pv
from .profiles import check_profile, check_study, settings

METRICS = pv.CLUSTER_METRICS
# what every clustering result stores: the paper's metrics, then the largest
# cluster over the largest true group (a catch-all cluster shows as a ratio
# over HUB_RATIO) and the clusters found over those asked (the true groups);
# hmlkit.studies.sanity flags both, and chance-level ARI, in the dataset and REPORT.md
SCORE_METRICS = METRICS + ("largest_ratio", "clusters_ratio")
HUB_RATIO = 3.0
SYNTHETIC = ("trecvid", "nuswide")
NAMED = SYNTHETIC + ("corel16k", "corel5k")  # names hmlkit.data.load_dataset resolves
# a result's attribute naming the methods a run was restricted to (its ``methods`` parameter):
# the claims that HML-RF beats every competitor are then not checked (hmlkit.studies.claims)
RESTRICTED_ATTR = "restricted_to_methods"


@dataclass
class StudyConfig:
    """The validated, resolved parameters of one study run."""

    name: str
    profile: str
    seed: int
    results_dir: str
    figures_dir: str
    folds: int
    n_estimators: int
    min_samples_leaf: int
    n_jobs: int = 1
    datasets: tuple = ()
    methods: tuple | None = None
    method_params: dict = field(default_factory=dict)  # {method key: {parameter: value}} of the profile
    extra: dict = field(default_factory=dict)
    started: float = field(default_factory=time.time)

    @property
    def forest_params(self):
        """The forest settings of every forest the study grows (tau, phi, threads)."""
        return {"n_estimators": self.n_estimators, "min_samples_leaf": self.min_samples_leaf,
                "n_jobs": self.n_jobs}

    def seeds(self):
        """One model seed per fold (repeat): seed, seed+1, ..."""
        return [self.seed + f for f in range(self.folds)]

    def as_attrs(self):
        d = {k: v for k, v in self.__dict__.items() if k not in ("extra", "started")}
        d.update(self.extra)
        return {"parameters": json.dumps(d, default=jsonable, sort_keys=True)}

    def __getitem__(self, key):
        return self.extra[key] if key in self.extra else getattr(self, key)


def jsonable(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, (tuple, set, np.ndarray)):
        return list(o)
    return str(o)


# Upper bounds of a study's counts: far above any profile's, below what would run for days
# or fail deep inside numpy ("Maximum allowed dimension exceeded") without naming the parameter.
MAX_TREES = 100_000        # n_estimators, taus (the paper's largest forest has 2000 trees)
MAX_FOLDS = 1000           # folds, table1_folds (the paper repeats 10 times)
MAX_SHOWN = 100            # clusters, members and examples a figure shows (rows or panels of one figure)
MAX_SEED = 2 ** 32 - 1     # numpy's RandomState (scikit-learn's random_state) takes seeds below 2**32
_HIGH = {"n_estimators": MAX_TREES, "taus": MAX_TREES, "folds": MAX_FOLDS, "table1_folds": MAX_FOLDS,
         "n_clusters_shown": MAX_SHOWN, "n_members_shown": MAX_SHOWN, "n_examples": MAX_SHOWN}


def _check_int(name, value, low=1, high=None):
    high = _HIGH.get(name) if high is None else high
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be an integer <= {high}, got {value!r}")
    return int(value)


def check_sparseness(values):
    """Tag-removal rates: each in [0, 1)."""
    arr = np.asarray(values, dtype=object)
    if arr.ndim > 1:  # [[0.1, 0.2]] would be read as its first rate only
        raise ValueError(f"sparseness must be one rate or a flat list of rates, got {values!r}")
    raw = list(np.atleast_1d(arr))
    for v in raw:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):  # False would read as 0.0
            raise ValueError(f"sparseness rate {v!r} is not a number: rates are fractions of tags removed, "
                             f"in [0, 1)")
    vals = tuple(float(v) for v in raw)
    if not vals:
        raise ValueError("sparseness must list at least one rate")
    for v in vals:
        if not (0.0 <= v < 1.0) or not np.isfinite(v):
            raise ValueError(f"sparseness rate {v!r} is outside [0, 1): it is the fraction of tags removed")
    return vals


def dataset_name(dataset):
    """Short name of a data set: the profile name, else the file or directory stem."""
    return str(dataset) if str(dataset) in NAMED else Path(dataset).stem


def check_dataset(dataset):
    """A synthetic profile name (``trecvid``, ``nuswide``) or an existing path (.arff, .npz,
    NUS-WIDE directory)."""
    if not isinstance(dataset, (str, os.PathLike)):
        raise ValueError(f"dataset must be one name {NAMED} or a path, got {dataset!r}")
    if isinstance(dataset, str) and not dataset.strip():  # Path("") is ".", the folder the study runs in
        raise ValueError(f"dataset is an empty string: give one name {NAMED} or the path of a data file or folder")
    if isinstance(dataset, str) and dataset in NAMED:  # the name, even where a folder of that name is
        return dataset
    path = Path(dataset).expanduser()
    if not path.exists():
        raise ValueError(f"dataset {str(dataset)!r} is neither a named data set {NAMED} "
                         f"nor an existing file or data directory (not found: {path})")
    return str(path)


def check_datasets(datasets):
    """One data set or a list of them, each through :func:`check_dataset`, as a tuple (a
    single one that is neither a name nor a path is named by ``check_dataset``)."""
    if isinstance(datasets, (str, os.PathLike)) or not isinstance(datasets, (list, tuple)):
        datasets = (datasets,)
    return tuple(check_dataset(d) for d in datasets)


def check_injected_parameters():
    """In a notebook run by papermill: refuse a parameter the notebook does not have (papermill
    only warns "Passed unknown parameter", and the study then ran on its default, e.g.
    ``-p n_estimator 4``). The kernel's history holds papermill's injected cell (its first
    line ``# Parameters``) right after the notebook's parameters cell; outside IPython, or
    without an injected cell (JupyterLab), nothing is checked. The study runner refuses
    unknown names before it starts."""
    import ast

    try:
        from IPython import get_ipython
    except ImportError:
        return
    ip = get_ipython()
    history = list(ip.user_ns.get("In", [])) if ip is not None else []
    at = [i for i, src in enumerate(history) if isinstance(src, str) and src.lstrip().startswith("# Parameters")]
    if not at or at[-1] == 0:
        return

    def assigned(src):
        try:
            tree = ast.parse(src)
        except SyntaxError:
            return set()
        return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                if isinstance(t, ast.Name)}

    known = assigned(history[at[-1] - 1])
    unknown = sorted(assigned(history[at[-1]]) - known)
    if known and unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(unknown)} for this notebook (papermill -p): its "
                         f"parameters are {', '.join(sorted(known))}")


def profile_dir(folder, profile):
    """Where a study of ``profile`` writes, given the folder it was passed: the committed
    folders ``results`` and ``figures`` hold the standard profile's results only, so another
    profile left at the notebooks' defaults writes into ``results/<profile>`` (as the runner
    does); a plain ``papermill`` run of a notebook (profile ``quick``) replaced them."""
    if profile != "standard" and str(folder) in ("results", "figures"):
        return str(Path(folder) / profile)
    return str(folder)


def setup(name, profile="quick", seed=0, results_dir="results", figures_dir="figures", *,
          dataset=None, datasets=None, methods=None, folds=None, n_estimators=None,
          min_samples_leaf=None, n_jobs=1, allowed_methods=None, **extra):
    """Validate a study's papermill parameters, fill the ones left ``None`` from the profile.

    Raises ``ValueError`` with a clear message on an unknown study, profile or method, a
    sparseness rate outside [0, 1), a missing data file or directory, or a non-positive count.
    ``results_dir`` / ``figures_dir`` left at ``"results"`` / ``"figures"`` by a profile other
    than standard become ``results/<profile>`` / ``figures/<profile>`` (:func:`profile_dir`).
    Cheap: nothing is computed or loaded here.
    """
    check_injected_parameters()
    check_study(name)
    check_profile(profile)
    s = settings(name, profile)
    folds = _check_int("folds", s["folds"] if folds is None else folds)
    seed = _check_int("seed", seed, low=0, high=MAX_SEED - folds + 1)  # seeds seed, ..., seed + folds - 1
    n_estimators = _check_int("n_estimators", s["n_estimators"] if n_estimators is None else n_estimators)
    min_samples_leaf = _check_int("min_samples_leaf",
                                  s["min_samples_leaf"] if min_samples_leaf is None else min_samples_leaf)
    n_jobs = _check_int("n_jobs", n_jobs if n_jobs is not None else 1)
    if datasets is None:
        datasets = () if dataset is None else (dataset,)
    datasets = check_datasets(datasets)
    if extra.get("completion_datasets") is not None:  # real_corel: checked before its clustering part runs
        extra["completion_datasets"] = check_datasets(extra["completion_datasets"])
    if methods is not None:
        if isinstance(methods, str):
            methods = (methods,)
        methods = tuple(methods)
        if allowed_methods is not None:
            bad = [m for m in methods if m not in allowed_methods]
            if bad:
                raise ValueError(f"unknown method(s) {bad} for {name}; "
                                 f"choose from {', '.join(sorted(set(allowed_methods)))}")
    for key, val in list(extra.items()):
        if val is None and key in s:
            extra[key] = s[key]
    if "sparseness" in extra and extra["sparseness"] is not None:
        extra["sparseness"] = check_sparseness(extra["sparseness"])
    for key in ("n_samples", "n_tags"):
        if extra.get(key) is not None:
            extra[key] = _check_int(key, extra[key], low=2)
    if extra.get("table1_methods") is not None:  # real_corel: Table 1's methods beside HML-RF
        from .paper_values import TABLE1_2

        chosen = extra["table1_methods"]
        chosen = (chosen,) if isinstance(chosen, str) else tuple(chosen)
        known = sorted({r[1] for r in TABLE1_2 if r[0] != "hml"} | {f"{r[0]}/{r[1]}" for r in TABLE1_2 if r[0] != "hml"})
        bad = [m for m in chosen if m not in known]
        if bad:
            raise ValueError(f"unknown Table 1 method(s) {bad}; choose from {', '.join(known)}")
        extra["table1_methods"] = chosen
    for key in ("n_clusters_shown", "n_members_shown", "n_examples", "table1_folds", "gc_clusters"):
        if extra.get(key) is not None:
            extra[key] = _check_int(key, extra[key])
    for key, low in (("taus", 1), ("phis", 1), ("n_layers", 1)):
        val = extra.get(key)
        if val is not None:
            vals = tuple(np.atleast_1d(val).tolist())
            if not vals:
                raise ValueError(f"{key} must list at least one value")
            extra[key] = vals if len(vals) > 1 or not np.isscalar(val) else vals[0]
            for v in vals:
                _check_int(key, v, low=low)
    if extra.get("hidden_fraction") is not None:
        h = extra["hidden_fraction"]
        if isinstance(h, (bool, np.bool_)) or not isinstance(h, numbers.Real):
            raise ValueError(f"hidden_fraction must be one number in (0, 1), got {h!r}")
        h = float(h)
        if not 0.0 < h < 1.0:
            raise ValueError(f"hidden_fraction must be in (0, 1), got {h!r}")
        extra["hidden_fraction"] = h
    results_dir, figures_dir = profile_dir(results_dir, profile), profile_dir(figures_dir, profile)
    return StudyConfig(name=name, profile=profile, seed=seed, results_dir=str(results_dir),
                       figures_dir=str(figures_dir), folds=folds, n_estimators=n_estimators,
                       min_samples_leaf=min_samples_leaf, n_jobs=n_jobs, datasets=datasets,
                       methods=methods, method_params=s["method_params"], extra=extra)



@dataclass
class SeedConfig:
    """The validated parameters of a seed-paper study (``studies/seed_*.ipynb``): the
    run's name, profile, seed and folders, and the study's own settings in ``params``
    (``cfg["n_samples"]``). :func:`hmlkit.studies.save` writes its results like a paper
    study's."""

    name: str
    profile: str
    seed: int
    results_dir: str
    figures_dir: str
    params: dict = field(default_factory=dict)
    started: float = field(default_factory=time.time)

    def __getitem__(self, key):
        return self.params[key]

    def as_attrs(self):
        d = {"name": self.name, "profile": self.profile, "seed": self.seed, "results_dir": self.results_dir,
             "figures_dir": self.figures_dir, **self.params}
        return {"parameters": json.dumps(d, default=jsonable, sort_keys=True)}


def seed_setup(name, profiles, profile, seed, results_dir, figures_dir, **params):
    """A :class:`SeedConfig` after the checks every seed study shares: ``profile`` one of
    ``profiles``, ``seed`` an integer >= 0. ``params`` are the study's own (checked by it)."""
    check_injected_parameters()
    if profile not in profiles:
        raise ValueError(f"profile must be one of {sorted(profiles)}, got {profile!r}")
    seed = _check_int("seed", seed, low=0, high=MAX_SEED)
    return SeedConfig(name=name, profile=profile, seed=seed, results_dir=profile_dir(results_dir, profile),
                      figures_dir=profile_dir(figures_dir, profile), params=params)
