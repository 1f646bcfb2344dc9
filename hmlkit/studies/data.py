"""The data of a study: a synthetic profile sized by the run's profile, or a file or
directory through :func:`hmlkit.data.load_dataset`, and the changes the studies make to it
(fewer tags, estimated layers, only the specific tags, tags removed)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..data import TaggedData, load_dataset, remove_tags, require
from ..tags import estimate_layers
from .config import SYNTHETIC, check_dataset, dataset_name
from .profiles import data_size


def reduce_tags(data, n_tags):
    """Keep the ``n_tags`` most frequent tags (by complete tags when known); layers follow.

    Used by the quick/standard profiles to shrink the 1000-tag ``nuswide`` profile.
    """
    if n_tags is None or n_tags >= data.n_tags:
        return data
    ref = data.Y_true if data.Y_true is not None else data.Y
    freq = np.asarray(ref.sum(axis=0)).ravel()
    keep = np.sort(np.argsort(-freq, kind="stable")[:n_tags])
    remap = -np.ones(data.n_tags, dtype=np.int64)
    remap[keep] = np.arange(keep.size)

    def _layers(layers):
        if layers is None:
            return None
        out = [remap[np.asarray(l)][remap[np.asarray(l)] >= 0] for l in layers]
        return [np.sort(l) for l in out if l.size]

    meta = dict(data.meta)
    if meta.get("true_layers") is not None:
        meta["true_layers"] = _layers(meta["true_layers"])
    meta["reduced_tags"] = int(n_tags)
    return TaggedData(X=data.X, Y=data.Y[:, keep], layers=_layers(data.layers),
                      tag_names=[data.tag_names[j] for j in keep], groups=data.groups,
                      Y_true=None if data.Y_true is None else data.Y_true[:, keep],
                      name=data.name, meta=meta)


def load_data(dataset, cfg=None, n_samples=None, n_tags=None, random_state=0, groups=False, study=None):
    """The data of a study: a synthetic profile (sized by the run's profile unless
    ``n_samples``/``n_tags`` say otherwise) or a file/directory through
    ``hmlkit.data.load_dataset``. ``groups=True`` demands ground-truth groups."""
    dataset = check_dataset(dataset)
    n_features = None
    if cfg is not None and dataset in SYNTHETIC:
        n0, m0, n_features = data_size(dataset, cfg.profile)
        n_samples = n0 if n_samples is None else n_samples
        n_tags = m0 if n_tags is None else n_tags
    data = load_dataset(dataset, n_samples=n_samples, random_state=random_state)
    data = reduce_tags(data, n_tags)
    if n_features is not None and n_features < data.n_features:
        cols = np.sort(np.random.default_rng(random_state).choice(data.n_features, n_features, replace=False))
        data = replace(data, X=np.ascontiguousarray(data.X[:, cols]),
                       meta={**data.meta, "feature_subset": int(n_features)})
    study = study or (cfg.name if cfg is not None else "this study")
    return require(data, groups=groups, study=study)


def load_datasets(datasets, cfg, random_state=0, groups=False, n_layers=None, n_samples=None):
    """{short name: data} of several data sets (:func:`load_data` each, with an estimated
    ``n_layers`` hierarchy when given; ``n_samples``: a seeded subset of each that has more)."""
    out = {}
    for d in datasets:
        data = load_data(d, cfg, n_samples=n_samples, random_state=random_state, groups=groups)
        out[dataset_name(d)] = with_layers(data, n_layers, random_state=random_state)
    return out


def with_layers(data, n_layers, random_state=0):
    """``data`` with an estimated ``n_layers`` hierarchy (Sec 4.1) when its tags are flat."""
    if n_layers is None or len(data.layers) == n_layers:
        return data

    layers = estimate_layers(data.Y, n_layers=n_layers, random_state=random_state)
    return data.with_tags(data.Y, layers=list(layers))


def specific_only(data):
    """Table 5's '1-layer most specific tags': only the last (most specific) layer's tags, flat."""
    keep = np.sort(np.asarray(data.layers[-1]))
    return TaggedData(X=data.X, Y=data.Y[:, keep], layers=None,
                      tag_names=[data.tag_names[j] for j in keep], groups=data.groups,
                      Y_true=None if data.Y_true is None else data.Y_true[:, keep],
                      name=data.name, meta=dict(data.meta))


def sparsify(data, rate, random_state):
    """Remove a fraction ``rate`` of the observed tags (Fig 5/6's sparseness rate)."""
    if rate == 0:
        return data
    return remove_tags(data, rate, random_state=random_state)



def supervised_ceiling(data, random_state=0, n_jobs=1, n_splits=5):
    """How much of the groups the visual features alone give away: the 5-fold cross-validated
    accuracy of a random forest (scikit-learn, 100 trees) predicting ``data.groups`` from
    ``data.X``, beside the accuracy of always guessing the largest group. Stored by the
    clustering studies (``attrs``) so that a claim's diagnosis can say, e.g., that the
    hierarchy cannot help when the features already place the groups. NaN without groups or
    with too few samples per group for the folds."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    if data.groups is None:
        return {"supervised_ceiling": float("nan"), "chance_accuracy": float("nan")}
    counts = np.bincount(data.groups)
    chance = float(counts.max() / counts.sum())
    k = min(n_splits, int(counts[counts > 0].min()))
    if k < 2:
        return {"supervised_ceiling": float("nan"), "chance_accuracy": chance}
    from .fitcache import cached

    def compute():
        rf = RandomForestClassifier(100, n_jobs=n_jobs, random_state=random_state)
        return cross_val_score(rf, data.X, data.groups, cv=StratifiedKFold(k, shuffle=True, random_state=random_state))
    # Tables 1-2 and Figs 5-6 each store it for the same data: computed once (a disk cache)
    acc = cached("supervised_ceiling", {"n_splits": k}, data, random_state, compute)
    return {"supervised_ceiling": float(acc.mean()), "chance_accuracy": chance}
