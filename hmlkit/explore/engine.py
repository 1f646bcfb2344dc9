"""Parameter sweeps: one parameter of a clustering method over a list of values, each value
on ``n_seeds`` seeds, scored into an :class:`xarray.Dataset` shaped as the studies' results
(``score(<parameter>, metric, seed)``, the run's settings in ``attrs``).

>>> from hmlkit.explore.engine import SweepSettings, run_sweep
>>> ds = run_sweep(SweepSettings(param="tau", values="10:500:8", n_seeds=3))   # headless

:class:`Sweep` runs the same thing in a thread (:meth:`Sweep.start`), reporting each fit and
each point as it finishes, and stops on :meth:`Sweep.cancel` between fits and, inside a
forest fit, between trees (:func:`hmlkit.executors.stop_on`): the points done are
kept. One sweep runs at a time in a process; a second is refused (:class:`SweepBusy`).

The parameter: ``tau`` (trees), ``phi`` (leaf size), ``sparseness`` (fraction of tags
removed), ``n_layers`` (estimated tag layers; 1 = flat) or any parameter of the method's
estimator (``tag_weight``, ``n_neighbors``, ``feature_map``...). Seeds follow the studies:
the data set (its sample, its layers) is drawn with ``seed``; the fold with seed ``s``
(``seed``, ``seed + 1``, ...) removes its tags and fits its model with ``s``. So the same
settings give the same numbers, headless, in a thread or under papermill. A parameter that
acts after the forest (``tag_weight``, ``complete_tags``, ``completion_weight``,
``completion_top``) grows each seed's forest once and shares it between the points, with the
numbers of growing it at every point (a five-point ``tag_weight`` sweep of Corel5k at 100
trees: 43 s instead of 81 s).
"""
from __future__ import annotations

import json
import math
import re
import threading
import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import xarray as xr

import hmlkit

from .. import studies as study
from .._validation import InvalidParameterError, check_int, check_params_without_data
from ..baselines import registry, run_clustering
from ..baselines.run import make_estimator
from ..cluster import GRAPH_PARAMS, PAPER_SETTINGS, HMLClustering
from ..data import require
from ..executors import stop_on
from ..studies.config import SCORE_METRICS, check_dataset, check_sparseness
from ..studies.data import sparsify, with_layers
from ..studies.grids import clustering_scores
from ..studies.profiles import check_profile, data_size
from ..studies.profiles import settings as profile_settings
from ..studies.saving import git_commit

ALIASES = {"n_estimators": "tau", "min_samples_leaf": "phi", "layers": "n_layers", "tags_removed": "sparseness"}
FOREST_KEYS = {"tau": "n_estimators", "phi": "min_samples_leaf"}  # sweep name -> estimator parameter
DATA_PARAMS = ("sparseness", "n_layers")
LABELS = {"tau": "tau (trees)", "phi": "phi (leaf size)", "sparseness": "tags removed (sparseness)",
          "n_layers": "tag layers (n_layers)"}
NOT_SWEPT = ("n_clusters", "random_state", "n_jobs", "verbose")  # set by the sweep itself
PAPER = "hmlrf_paper"  # HML-RF with the paper's settings (hmlkit.cluster.PAPER_SETTINGS)
GIVEN = "given"  # the dataset of a sweep run on a TaggedData passed in


class SweepBusy(RuntimeError):
    """A sweep was started while another one runs in this process."""


_RUNNING = threading.Lock()  # held by the one sweep that runs
_running = {}  # its label


def _claim(sweep):
    if not _RUNNING.acquire(blocking=False):
        raise SweepBusy(f"a sweep is running ({_running['sweep'].settings.label()}): cancel the running sweep "
                        "first (its panel's Cancel, or hmlkit.explore.engine.running_sweep().cancel())")
    _running["sweep"] = sweep


def running_sweep():
    """The :class:`Sweep` running in this process, or None (e.g. to cancel the sweep of a
    panel no longer shown)."""
    return _running.get("sweep") if _RUNNING.locked() else None


# ----------------------------------------------------------------------------- settings
def canonical(param):
    """The sweep's name of a parameter: ``n_estimators`` -> ``tau``, ``min_samples_leaf`` ->
    ``phi``, ``layers`` -> ``n_layers``; any other name as it is."""
    if not isinstance(param, str) or not param:
        raise ValueError(f"param must be a parameter name, got {param!r}")
    return ALIASES.get(param, param)


def estimator_defaults(method, mode):
    """{parameter: default} of the estimator of ``method`` (``hmlrf``, ``hmlrf_paper`` or a
    registered clustering method) in input ``mode``; ValueError for an unknown one."""
    name = "hmlrf" if method == PAPER else method
    spec = registry().get(name)
    if spec is None or spec.kind != "clustering":
        known = sorted(n for n, s in registry().items() if s.kind == "clustering")
        raise ValueError(f"method must be one of {', '.join([PAPER] + known)}, got {method!r}")
    if mode not in spec.input_modes:
        raise ValueError(f"method {method!r} takes input mode {', '.join(spec.input_modes)}, not {mode!r}")
    ok, why = spec.available()
    if not ok:
        raise ValueError(f"method {method!r} is unavailable here: {why}")
    params = spec.factory().get_params(deep=False)
    if method == PAPER:
        params.update(PAPER_SETTINGS)
    return params


def sweepable(method, mode):
    """The parameters a sweep of ``method`` can vary, in the panel's order."""
    est = estimator_defaults(method, mode)
    forest = [k for k, p in FOREST_KEYS.items() if p in est]
    data = [] if mode == "vifeat" else list(DATA_PARAMS)  # visual features alone: no tag to remove or layer
    return forest + data + sorted(k for k in est if k not in NOT_SWEPT and k not in FOREST_KEYS.values())


def _token(text):
    """One value typed in the panel: an int, a float, True/False, None, or a string."""
    t = text.strip().strip("'\"")
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(t.lower(), t)


_RANGE = re.compile(r"^\s*([-+0-9.eE]+)\s*:\s*([-+0-9.eE]+)\s*:\s*([0-9]+)\s*$")


def parse_values(values, default=None):
    """A sweep's values: a list, one value, or text: ``"10, 50, 100"`` or ``"10:500:8"``
    (8 values evenly spaced from 10 to 500; integers when ``default`` is one). Duplicates
    (of the same type and value: ``1`` and ``1.0`` are distinct values of ``max_features``,
    ``1`` and ``True`` of any parameter) are dropped, the order kept. ValueError on an empty
    list or range."""
    if isinstance(values, str):
        m = _RANGE.match(values)
        if not m and values.count(":") == 2 and "," not in values:  # a range, not a value
            raise ValueError(f"values: {values!r} is not a range 'start:stop:count' with a whole count >= 0 "
                             f"(e.g. '10:500:8')")
        if m:
            lo, hi, n = float(m[1]), float(m[2]), int(m[3])
            vals = list(np.linspace(lo, hi, n)) if n > 1 else ([lo] if n == 1 else [])
            integral = isinstance(default, (int, np.integer)) and not isinstance(default, bool)
            vals = [int(round(v)) if integral else round(float(v), 10) for v in vals]
        else:
            vals = [_token(t) for t in values.split(",") if t.strip()]
    elif isinstance(values, (list, tuple, np.ndarray)):
        vals = [v.item() if isinstance(v, np.generic) else v for v in values]
    else:
        vals = [values.item() if isinstance(values, np.generic) else values]
    out = _distinct(vals)
    if not out:
        raise ValueError(f"values: no value to sweep (an empty list or range, {values!r}); give e.g. "
                         "'10, 50, 100' or '10:500:8' (8 values from 10 to 500)")
    return tuple(out)


def _key(v):
    """A value's identity for dropping duplicates: its type and value (``1 == 1.0 == True``
    in Python, three different settings of a parameter)."""
    try:
        hash(v)
        return type(v), v
    except TypeError:
        return type(v), repr(v)


def _distinct(vals):
    """``vals`` without repeats (by :func:`_key`), the order kept, in linear time."""
    seen, out = set(), []
    for v in vals:
        k = _key(v)
        if k not in seen:
            seen.add(k)
            out.append(v)
    return out


def as_labels(values):
    """True when ``values`` must be stored and drawn as text, not numbers: a None or a string
    among them, booleans beside numbers, or two values equal as numbers (``1`` and ``1.0`` of
    ``max_features``: one feature, every feature)."""
    values = list(values)
    if any(v is None or isinstance(v, str) for v in values):
        return True
    bools = [isinstance(v, (bool, np.bool_)) for v in values]
    if any(bools) and not all(bools):
        return True
    try:
        return len({float(v) for v in values}) < len(values)
    except (TypeError, ValueError):
        return True


def probe_estimator(method, fixed=None):
    """The unfitted estimator of ``method`` with the estimator parameters of the (checked)
    sweep settings ``fixed`` set, over the method's own settings (the paper's for
    ``hmlrf_paper``): :func:`check_value` runs its checks on each value."""
    name = "hmlrf" if method == PAPER else method
    params = {FOREST_KEYS.get(k, k): v for k, v in (fixed or {}).items() if k not in DATA_PARAMS}
    return make_estimator(name, **{**(PAPER_SETTINGS if method == PAPER else {}), **params})


def check_value(param, value, defaults, probe=None):
    """``value`` of sweep parameter ``param`` as the method takes it; a clear ValueError
    (naming the parameter and the value) when it is refused: a value that is not a finite
    number where it is a number, or one the estimator ``probe`` (the method's, unfitted, from
    :func:`probe_estimator`) refuses in its own checks
    (:func:`hmlkit._validation.check_params_without_data`), so that no value fails only at
    fit time, after the data loaded."""
    given = value
    try:
        if isinstance(value, (float, np.floating)) and not math.isfinite(value):
            raise ValueError("not a finite number")
        if param == "sparseness":
            return check_sparseness(value)[0]
        if param == "n_layers":
            return check_int(value, "n_layers")
        key = FOREST_KEYS.get(param, param)
        if key not in defaults:
            raise ValueError(f"the method does not take parameter {param!r} "
                             f"(its parameters: {', '.join(sorted(k for k in defaults if k not in NOT_SWEPT))})")
        d = defaults[key]
        integral = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
        if isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_)) and value is not None:
            if not integral:
                raise InvalidParameterError(f"{key} must be an integer, got {value!r}")
            value = int(value)
        elif isinstance(d, float) and integral:
            value = float(value)

        if probe is not None:  # the estimator's own parameter checks, without data
            old = getattr(probe, key)
            setattr(probe, key, value)
            try:
                check_params_without_data(probe)
            finally:
                setattr(probe, key, old)
        return value
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{param}={given!r} is refused: {exc}") from None


def _fixed_dict(fixed):
    """``fixed`` as a dict: a dict, None/"" (none) or text ``"tau=50, sparseness=0.3"``."""
    if fixed is None or (isinstance(fixed, str) and not fixed.strip()):
        return {}
    if isinstance(fixed, dict):
        return dict(fixed)
    if isinstance(fixed, str):
        out = {}
        for part in fixed.split(","):
            if not part.strip():
                continue
            if "=" not in part:
                raise ValueError(f"fixed: {part.strip()!r} is not 'name=value' (e.g. 'tau=50, sparseness=0.3')")
            k, v = part.split("=", 1)
            if "=" in v:
                raise ValueError(f"fixed: {part.strip()!r} holds two settings: separate them with a comma "
                                 f"(e.g. 'tau=50, sparseness=0.3')")
            if k.strip() in out:
                raise ValueError(f"fixed: {k.strip()!r} is given twice")
            out[k.strip()] = _token(v)
        return out
    raise ValueError(f"fixed must be a dict or text 'name=value, ...', got {fixed!r}")


@dataclass
class SweepSettings:
    """What a sweep runs: ``param`` over ``values`` (a list or text, :func:`parse_values`),
    ``n_seeds`` seeds from ``seed``, ``method`` in input ``mode`` on ``dataset`` (a synthetic
    profile sized by ``profile``, ``corel5k``, a data path, or ``given`` for a TaggedData
    passed in), the other parameters ``fixed`` (tau defaults to the profile's), ``metric``
    the one plotted (every metric is stored)."""

    param: str = "tau"
    values: object = (4, 8, 16)
    dataset: str = "trecvid"
    method: str = "hmlrf"
    mode: str = "hml"
    n_seeds: int = 1
    seed: int = 0
    metric: str = "nmi"
    profile: str = "quick"
    n_samples: int | None = None
    n_jobs: int = 1
    fixed: dict = field(default_factory=dict)

    def checked(self):
        """A validated copy: names canonical, values parsed and checked one by one; the
        tau of a forest method fixed to the profile's unless given. ValueError naming the
        setting otherwise. Cheap: no data is loaded."""
        check_profile(self.profile)
        defaults = estimator_defaults(self.method, self.mode)
        param = canonical(self.param)
        if param not in sweepable(self.method, self.mode):
            raise ValueError(f"param {self.param!r} is not a parameter of {self.method} "
                             f"(choose from {', '.join(sweepable(self.method, self.mode))})")
        fixed = {}
        for name, v in _fixed_dict(self.fixed).items():
            k = canonical(name)
            if k in NOT_SWEPT:
                raise ValueError(f"fixed: {name} is set by the sweep itself (n_clusters: the data's groups; "
                                 f"random_state: each seed; n_jobs: the sweep's own n_jobs), not fixed")
            if k in fixed:
                raise ValueError(f"fixed: {k!r} is given twice (as {name!r} too)")
            fixed[k] = check_value(k, v, defaults, probe_estimator(self.method))  # even where the swept values win
        fixed.pop(param, None)  # the swept parameter's values win over a fixed one
        probe = probe_estimator(self.method, fixed)
        values = tuple(_distinct(check_value(param, v, defaults, probe) for v in parse_values(
            self.values, defaults.get(FOREST_KEYS.get(param, param), 1 if param == "n_layers" else None))))
        if "n_estimators" in defaults and "tau" not in fixed and param != "tau":
            fixed["tau"] = profile_settings("fig8_parameters", self.profile)["n_estimators"]
        if self.metric not in SCORE_METRICS:
            raise ValueError(f"metric must be one of {', '.join(SCORE_METRICS)}, got {self.metric!r}")
        dataset = self.dataset if self.dataset == GIVEN else check_dataset(self.dataset)
        return SweepSettings(param=param, values=values, dataset=dataset, method=self.method, mode=self.mode,
                             n_seeds=check_int(self.n_seeds, "n_seeds"), seed=check_int(self.seed, "seed", min_val=0),
                             metric=self.metric, profile=self.profile,
                             n_samples=None if self.n_samples is None else check_int(self.n_samples, "n_samples", 2),
                             n_jobs=check_int(self.n_jobs, "n_jobs"), fixed=fixed)

    def seeds(self):
        return [self.seed + i for i in range(self.n_seeds)]

    def to_json(self):
        d = asdict(self)
        d["values"] = list(d["values"]) if isinstance(d["values"], (tuple, list)) else d["values"]
        return json.dumps(d, sort_keys=True)

    @classmethod
    def from_attrs(cls, attrs):
        """The settings a saved sweep ran with (its ``attrs["settings"]``): rerun it with
        :func:`run_sweep`."""
        return cls(**json.loads(attrs["settings"]))

    def label(self):
        return f"{self.method} {LABELS.get(self.param, self.param)} on {self.dataset}"


def effective_settings(settings, data=None):
    """What a sweep of ``settings`` (as given, before :meth:`SweepSettings.checked`) runs, as
    rows ``(name, value, where it comes from)``: the profile, the data set and its samples,
    the seeds, the swept values, every fixed value (the fixed box's, or the profile's: the
    quick profile fixes tau = 16 when another parameter is swept), the method's own settings
    (the paper's, the profile's) and n_jobs. Cheap: no data is loaded. ValueError as
    :meth:`SweepSettings.checked`."""
    s = settings.checked()
    given = {canonical(k) for k in _fixed_dict(settings.fixed)}
    prof = f"the {s.profile} profile"
    rows = [("profile", s.profile, "chosen"), ("data set", s.dataset, "chosen")]
    if data is not None:
        rows.append(("samples", data.n_samples, "the data given"))
    elif s.n_samples is not None:
        rows.append(("samples", s.n_samples, "n_samples"))
    elif s.dataset in study.SYNTHETIC:
        n = data_size(s.dataset, s.profile)[0]
        rows.append(("samples", n if n is not None else "all", prof))
    elif s.dataset in ("corel5k", "corel16k"):
        n = study.settings("real_corel", s.profile)["n_samples"]
        rows.append(("samples", n if n is not None else "all", f"{prof} (real_corel's subset)"))
    else:
        rows.append(("samples", "all", "the file"))
    rows.append(("seeds", ", ".join(map(str, s.seeds())), f"{s.n_seeds} from seed {s.seed}"))
    rows.append((s.param, ", ".join(map(repr, s.values)), "swept"))
    for k, v in s.fixed.items():
        rows.append((k, v, "fixed" if k in given else prof))
    method_params = profile_settings("fig8_parameters", s.profile)["method_params"].get(s.method, {})
    own = {**method_params, **(PAPER_SETTINGS if s.method == PAPER else {})}
    for k, v in own.items():
        if FOREST_KEYS.get(s.param, s.param) != k and not any(FOREST_KEYS.get(f, f) == k for f in s.fixed):
            rows.append((k, v, "the paper's settings" if s.method == PAPER and k in PAPER_SETTINGS else prof))
    if "n_jobs" in estimator_defaults(s.method, s.mode):
        rows.append(("n_jobs", s.n_jobs, "the panel's n_jobs"))
    rows.append(("the rest", f"{s.method}'s defaults", "the estimator"))
    return rows


# ----------------------------------------------------------------------------- running
def load_base(settings, data=None):
    """The sweep's data before its per-point changes (layers, tags removed), with ground-truth
    groups (ValueError naming the data set otherwise)."""
    s = settings
    if data is not None:
        return require(data, groups=True, study="a sweep")
    if s.dataset == GIVEN:
        raise ValueError("dataset 'given': pass the TaggedData as data=")
    if s.dataset in study.SYNTHETIC:
        cfg = study.setup("fig8_parameters", profile=s.profile, seed=s.seed)
        return study.load_data(s.dataset, cfg, n_samples=s.n_samples, random_state=s.seed, groups=True,
                               study="a sweep")
    n = s.n_samples
    if n is None and s.dataset in ("corel5k", "corel16k"):  # real_corel's subset under the profile
        n = study.settings("real_corel", s.profile)["n_samples"]
    return study.load_data(s.dataset, None, n_samples=n, random_state=s.seed, groups=True, study="a sweep")


def point_scores(base, settings, value, seed, _layered=None, _forests=None):
    """The scores (``SCORE_METRICS``) of one fit: ``settings.param = value`` on seed ``seed``.

    ``_forests`` (a dict the caller keeps over a sweep's points): where the parameter acts
    after the forest (:data:`hmlkit.cluster.GRAPH_PARAMS`, e.g. ``tag_weight``), the HML-RF
    fitted on a seed at the first point is kept there and lends its forest to the next
    points on that seed (``fit(..., forest_of=)``, the same labels as growing it again)."""
    s = settings
    p = {**s.fixed, s.param: value}
    d = base
    layers = p.pop("n_layers", None)
    if layers is not None:
        key = int(layers)
        if _layered is not None and key in _layered:
            d = _layered[key]
        else:
            d = d.with_tags(d.Y, layers=None) if key == 1 else with_layers(d, key, random_state=s.seed)
            if _layered is not None:
                _layered[key] = d
    d = sparsify(d, p.pop("sparseness", 0.0), random_state=seed)
    defaults = estimator_defaults(s.method, s.mode)
    params = dict(profile_settings("fig8_parameters", s.profile)["method_params"].get(s.method, {}))
    if s.method == PAPER:
        params.update(PAPER_SETTINGS)
    params.update({FOREST_KEYS.get(k, k): v for k, v in p.items()})
    if "n_jobs" in defaults:
        params["n_jobs"] = s.n_jobs
    name = "hmlrf" if s.method == PAPER else s.method
    share = _forests is not None and s.param in GRAPH_PARAMS and s.mode == "hml"
    lender = _forests.get(seed) if share else None
    if lender is not None:
        est = make_estimator(name, n_clusters=base.n_groups, random_state=seed, **params)
        labels = est.fit(d.X, d.Y, layers=d.layers, forest_of=lender).labels_
    else:
        res = run_clustering(name, s.mode, d, n_clusters=base.n_groups, random_state=seed, **params)
        labels = res.labels
        if share and isinstance(res.estimator, HMLClustering):
            _forests[seed] = res.estimator
    return clustering_scores(base.groups, labels)


class Sweep:
    """One sweep: :meth:`run` here, or :meth:`start` in a thread; :meth:`cancel` from any
    thread; :attr:`result` (the points done so far) at any time.

    ``on_event(event, sweep)`` is called in the running thread on ``"start"``, ``"loaded"``
    (the data is loaded: :attr:`data_summary`), ``"fit"``
    (a seed of a point done), ``"point"`` (a point done, or failed: its ``status`` and
    ``reason``) and ``"end"`` (:attr:`state` is then ``done``, ``cancelled`` or ``failed``,
    :attr:`error` says why it failed). A point that fails (a value the method refuses at
    fit time) is kept with status ``error`` and its reason; the others run."""

    def __init__(self, settings, data=None, on_event=None):
        settings = settings if isinstance(settings, SweepSettings) else SweepSettings(**settings)
        if data is not None:
            require(data, groups=True, study="a sweep")  # refused at once, not in the thread
            if settings.n_samples is not None:
                raise ValueError(f"n_samples={settings.n_samples} subsamples a named data set; with data= given, "
                                 f"pass the sample to sweep itself")
            settings = replace(settings, dataset=GIVEN)  # what the result names, and a rerun needs
        self.effective = effective_settings(settings, data)
        self.settings = settings.checked()
        self.data = data
        self.on_event = on_event
        self.stop_event = threading.Event()
        self.points = []  # {value, scores (seeds, metrics), seconds (seeds), finished_at, status, reason}
        self.fit_times = []  # (value, seconds) of every fit done, for the ETA
        self.fits_done = 0
        self.state = "ready"
        self.error = None
        self.thread = None
        self.started_at = self.ended_at = self.cancel_requested_at = None
        self.data_summary = None

    @property
    def n_points(self):
        return len(self.settings.values)

    @property
    def n_fits(self):
        return self.n_points * self.settings.n_seeds

    @property
    def running(self):
        return self.state == "running"

    def eta(self):
        """Seconds left, from the fits done so far (None before the first): their mean time a
        fit, or for ``tau`` their mean time a tree (a forest's time grows with its trees:
        after a first point of 200 trees, 400, 800 and 1600 take 14 times as long, not 3)."""
        if not self.fit_times:
            return None
        s = self.settings
        cost = (lambda v: max(float(v), 1.0)) if s.param == "tau" else (lambda v: 1.0)
        rate = sum(t for _, t in self.fit_times) / sum(cost(v) for v, _ in self.fit_times)
        i = len(self.points)  # the point running
        in_point = self.fits_done - sum(s.n_seeds for _ in self.points)
        left = sum(cost(v) * s.n_seeds for v in s.values[i + 1:])
        if i < len(s.values):
            left += cost(s.values[i]) * max(0, s.n_seeds - in_point)
        return rate * left

    def _emit(self, event):
        if self.on_event is not None:
            self.on_event(event, self)

    def _once(self):
        if self.state != "ready":
            raise RuntimeError(f"this sweep has run ({self.state}): a Sweep runs once; start a new "
                               f"Sweep(sweep.settings, data=...) to run it again")

    def start(self):
        """Run in a daemon thread; returns at once. SweepBusy if a sweep runs already; a
        RuntimeError if this one has run (a Sweep runs once)."""
        self._once()
        _claim(self)
        self.state = "running"
        self.thread = threading.Thread(target=self._run_claimed, name="hmlkit-sweep", daemon=True)
        self.thread.start()
        return self

    def run(self):
        """Run here, to the end or a cancel; returns :attr:`result` (a Sweep runs once)."""
        self._once()
        _claim(self)
        self.state = "running"
        self._run_claimed()
        return self.result

    def cancel(self):
        """Ask the sweep to stop (between fits; inside a forest fit between trees)."""
        if self.cancel_requested_at is None:
            self.cancel_requested_at = time.time()
        self.stop_event.set()

    def join(self, timeout=None):
        if self.thread is not None:
            self.thread.join(timeout)
        return not self.running

    def _run_claimed(self):
        s = self.settings
        self.started_at = time.time()
        try:
            self._emit("start")
            base = load_base(s, self.data)
            self.data_summary = base.summary()
            self._emit("loaded")
            layered, forests = {}, {}
            for value in s.values:
                scores = np.full((s.n_seeds, len(SCORE_METRICS)), np.nan)
                seconds = np.full(s.n_seeds, np.nan)
                status, reason, n_done = "done", "", 0
                for i, seed in enumerate(s.seeds()):
                    if self.stop_event.is_set():
                        break
                    t0 = time.time()
                    try:
                        with stop_on(self.stop_event):
                            scores[i] = point_scores(base, s, value, seed, layered, forests)
                    except KeyboardInterrupt:
                        if not self.stop_event.is_set():
                            raise
                        break
                    except Exception as exc:  # this value fails; the others run
                        status, reason = "error", f"{s.param}={value!r}: {type(exc).__name__}: {exc}"
                        scores[:] = np.nan
                        self.fits_done += s.n_seeds - n_done  # its fits will not run: the bar moves on
                        break
                    seconds[i] = time.time() - t0
                    self.fit_times.append((value, seconds[i]))
                    n_done += 1
                    self.fits_done += 1
                    self._emit("fit")
                if status == "done" and n_done < s.n_seeds:
                    break  # cancelled: a point cut short is not kept
                self.points.append({"value": value, "scores": scores, "seconds": seconds,
                                    "finished_at": time.time(), "status": status, "reason": reason})
                self._emit("point")
                if self.stop_event.is_set():
                    break
            self.state = "cancelled" if self.stop_event.is_set() else "done"
        except BaseException as exc:
            self.state, self.error = "failed", f"{type(exc).__name__}: {exc}"
            if not isinstance(exc, Exception):
                raise
        finally:
            self.ended_at = time.time()
            _RUNNING.release()
            self._emit("end")

    @property
    def result(self):
        """The points done so far as an xarray Dataset: ``score(<param>, metric, seed)``,
        ``seconds(<param>, seed)``, ``finished_at(<param>)`` (epoch seconds), ``status`` and
        ``reason`` per point; the settings and the run's state in ``attrs``."""
        s = self.settings
        pts = list(self.points)
        values = [p["value"] for p in pts]
        if as_labels(s.values):  # decided on every value asked for: the same coordinate as points arrive
            values = [str(v) for v in values]
        dim = s.param
        nm = len(SCORE_METRICS)
        ds = xr.Dataset(
            {"score": ((dim, "metric", "seed"), np.array([p["scores"].T for p in pts]).reshape(len(pts), nm,
                                                                                               s.n_seeds)),
             "seconds": ((dim, "seed"), np.array([p["seconds"] for p in pts]).reshape(len(pts), s.n_seeds)),
             "finished_at": ((dim,), np.array([p["finished_at"] for p in pts], dtype=float)),
             "status": ((dim,), np.array([p["status"] for p in pts], dtype=str)),
             "reason": ((dim,), np.array([p["reason"] for p in pts], dtype=str))},
            coords={dim: values, "metric": list(SCORE_METRICS), "seed": s.seeds()})
        ds.attrs.update({
            "study": "sweep", "parameter": dim, "parameter_label": LABELS.get(dim, dim), "method": s.method,
            "mode": s.mode, "dataset": s.dataset, "profile": s.profile, "seed": s.seed, "n_seeds": s.n_seeds,
            "metric": s.metric, "values": json.dumps(list(s.values)), "fixed": json.dumps(s.fixed, sort_keys=True),
            "settings": s.to_json(), "state": self.state, "error": self.error or "",
            "n_points": self.n_points, "n_points_done": sum(p["status"] == "done" for p in pts),
            "data": json.dumps(self.data_summary or {}), "hmlkit_version": hmlkit.__version__,
            "effective": json.dumps([[k, v if isinstance(v, (int, float, str, bool)) or v is None else str(v), w]
                                     for k, v, w in self.effective]),
            "git_commit": git_commit(),
            "duration_s": round(((self.ended_at or time.time()) - self.started_at) if self.started_at else 0.0, 2)})
        if self.cancel_requested_at is not None:
            ds.attrs["cancel_requested_at"] = self.cancel_requested_at
            if self.ended_at is not None:
                ds.attrs["cancel_to_stop_s"] = round(self.ended_at - self.cancel_requested_at, 3)
        return ds


def run_sweep(settings=None, data=None, **kw):
    """Run a sweep here, to the end; returns its Dataset (:attr:`Sweep.result`).

    ``settings``: a :class:`SweepSettings` (or ``SweepSettings(**kw)``). A sweep whose
    data cannot be loaded raises its error; a value the method refuses at fit time is a
    point with status ``error``."""
    sweep = Sweep(settings if settings is not None else SweepSettings(**kw), data=data)
    ds = sweep.run()
    if sweep.state == "failed":
        raise RuntimeError(f"the sweep failed: {sweep.error}")
    return ds


__all__ = ["SweepSettings", "Sweep", "SweepBusy", "run_sweep", "running_sweep", "parse_values", "sweepable",
           "effective_settings", "as_labels",
           "estimator_defaults", "load_base", "point_scores", "canonical"]
