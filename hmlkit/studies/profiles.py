"""Run settings of every study under the three profiles.

``quick``
    CI: tiny samples and forests; the whole set runs in a few minutes.
``standard``
    the main job (``make studies``): full-size ``trecvid``, reduced ``nuswide``, fewer trees
    and folds than the paper; the whole set in about 33 min on 2 cores from a fresh clone
    (docs/performance.md, "The standard run").
``paper``
    the paper's settings (tau = 1000 trees, phi = 3, 10 folds, full sizes).

A paper study's notebook reads ``settings(name, profile)`` for every parameter it was not
given explicitly (papermill parameters left at ``None``). The seed-paper studies
(``SEED_STUDIES``) keep their profiles in their own modules (``hmlkit.studies.seed_*``).
"""
from __future__ import annotations

import copy

PROFILES = ("quick", "standard", "paper")

# the HML-RF paper's tables and figures (their settings are below)
PAPER_STUDIES = (
    "table1_trecvid_clustering",
    "table2_nuswide_clustering",
    "fig5_table3_sparseness",
    "fig6_components",
    "fig8_parameters",
    "table4_hierarchy_depth",
    "table5_abstractness",
    "table6_8_completion",
    "fig4_7_9_examples",
    "real_corel",
)
# the seed papers' studies: each module hmlkit.studies.<name> holds its own PROFILES and setup
SEED_STUDIES = ("seed_lmmc", "seed_ghfart", "seed_sfss", "seed_mhcrf")
STUDIES = PAPER_STUDIES + SEED_STUDIES

# Data size per profile: (n_samples, n_tags, n_features) per synthetic data set; None = full
# size. Reduced tags keep the most frequent ones; reduced features are a seeded random subset
# of the columns (quick and standard: the 4096-d per-tag SVMs of DetScore, the deep and CCA
# baselines and the forests would otherwise take most of the standard run).
_DATA = {
    "quick": {"trecvid": (300, None, None), "nuswide": (400, 150, 512)},
    "standard": {"trecvid": (None, None, None), "nuswide": (2000, 400, 1024)},
    "paper": {"trecvid": (None, None, None), "nuswide": (None, None, None)},
}
_FOREST = {
    "quick": {"n_estimators": 16, "min_samples_leaf": 3},
    "standard": {"n_estimators": 100, "min_samples_leaf": 3},
    "paper": {"n_estimators": 1000, "min_samples_leaf": 3},
}
_FOLDS = {"quick": 1, "standard": 2, "paper": 10}
# Extra parameters of baselines per profile (quick: fewer training epochs of the deep models).
_METHOD_PARAMS = {"quick": {"dcca": {"epochs": 5}, "dccae": {"epochs": 5}}, "standard": {}, "paper": {}}

_SPECIFIC = {
    "fig5_table3_sparseness": {"sparseness": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)},
    "fig6_components": {"sparseness": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)},
    "fig8_parameters": {
        "taus": {"quick": (2, 4, 8, 16), "standard": (10, 25, 50, 100, 200),
                 "paper": (10, 50, 100, 200, 500, 1000, 1500, 2000)},
        "phis": (1, 2, 3, 5, 10),
    },
    "table4_hierarchy_depth": {"n_layers": (2, 3, 4, 5, 6, 7)},
    # gc_clusters: clusters of the GC rows on a data set without ground-truth
    # groups (e.g. Corel16k); with groups, their count is used
    "table6_8_completion": {"hidden_fraction": 0.4, "gc_clusters": 50},
    "fig4_7_9_examples": {"n_clusters_shown": 3, "n_members_shown": 6, "n_examples": 9},
    # real data: quick runs a 1800-image subset of Corel5k at two rates, and completion on
    # 1800-image subsets of Corel5k and Corel16k
    "real_corel": {"sparseness": {"quick": (0.0, 0.75), "standard": (0.0, 0.25, 0.5, 0.75),
                                  "paper": (0.0, 0.25, 0.5, 0.75)},
                   "n_samples": {"quick": 1800, "standard": None, "paper": None},
                   "folds": {"quick": 1, "standard": 3, "paper": 10},
                   # Table 1's other methods (or mode/method rows) beside the HML-RF rows, and
                   # their X(GC) completion rows (None: all of them); on the first table1_folds
                   # seeds only (None: every fold): on Corel5k they take 7-16 minutes of one process
                   # per seed and rate in the standard run (AffProp's four input modes about a third)
                   "table1_methods": {"quick": ("vifeat/kmeans", "bitag/kmeans", "blm/spclust", "blm/cca",
                                                "blm/smmc"), "standard": None, "paper": None},
                   "table1_folds": {"quick": 1, "standard": 1, "paper": None}},
}


def check_profile(profile):
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    return profile


def check_study(name):
    if name not in STUDIES:
        raise ValueError(f"unknown study {name!r}; known: {', '.join(STUDIES)}")
    return name


def data_size(dataset, profile):
    """(n_samples, n_tags, n_features) of a synthetic profile under ``profile``; Nones otherwise."""
    check_profile(profile)
    return _DATA[profile].get(dataset, (None, None, None))


def settings(name, profile):
    """All run settings of paper study ``name`` under ``profile`` (a fresh dict)."""
    check_study(name)
    if name in SEED_STUDIES:
        raise ValueError(f"{name} is a seed study: its settings are hmlkit.studies.{name}.PROFILES, "
                         f"checked by hmlkit.studies.{name}.setup")
    check_profile(profile)
    out = {"profile": profile, "folds": _FOLDS[profile], **_FOREST[profile],
           "data": copy.deepcopy(_DATA[profile]), "method_params": copy.deepcopy(_METHOD_PARAMS[profile])}
    for key, val in _SPECIFIC.get(name, {}).items():
        out[key] = val[profile] if isinstance(val, dict) else val
    if name == "fig8_parameters" and profile == "quick":
        out["phis"] = (1, 3, 5)
    if name in ("fig5_table3_sparseness", "fig6_components") and profile == "quick":
        out["sparseness"] = (0.0, 0.3, 0.5)
    return out

# What each study writes to results/<name>.nc: variable -> dims (documented contract; the
# notebook tests check it). Every clustering score has metric = purity, nmi, ri, f1, ari
# (then largest_ratio and clusters_ratio in the grids' results), and a ``flag`` string per
# result beside it ("" = clean; hmlkit.studies.sanity); ``fold`` indexes the repeats
# (seeds seed, seed+1, ...). Per-row ``status`` says "measured" / "not implemented" /
# "error" and ``reason`` why.
RESULT_SCHEMA = {
    "table1_trecvid_clustering": {"score": ("row", "metric", "fold"), "paper": ("row", "metric"),
                                  "status": ("row",), "paper_status": ("row",), "mode": ("row",),
                                  "method": ("row",), "label": ("row",)},
    "table2_nuswide_clustering": {"score": ("row", "metric", "fold"), "paper": ("row", "metric"),
                                  "status": ("row",), "paper_status": ("row",), "mode": ("row",),
                                  "method": ("row",), "label": ("row",)},
    "fig5_table3_sparseness": {"score": ("row", "sparseness", "metric", "fold"), "drop": ("row", "sparseness"),
                               "paper_drop": ("row", "sparseness"), "paper_nmi": ("row", "sparseness"),
                               "status": ("row",)},
    "fig6_components": {"score": ("variant", "sparseness", "metric", "fold"),
                        "paper_nmi": ("variant", "sparseness"), "status": ("variant",)},
    "fig8_parameters": {"score_tau": ("tau", "metric", "fold"), "score_phi": ("phi", "metric", "fold"),
                        "paper_nmi_tau": ("tau",), "paper_nmi_phi": ("phi",)},
    "table4_hierarchy_depth": {"score": ("n_layers", "metric", "fold"), "paper": ("n_layers", "metric"),
                               "layer_size": ("n_layers", "layer")},
    "table5_abstractness": {"score": ("dataset", "structure", "metric", "fold"),
                            "paper": ("dataset", "structure", "metric")},
    "table6_8_completion": {"score": ("dataset", "row", "measure", "N", "fold"),
                            "paper": ("dataset", "row", "measure", "N"), "status": ("dataset", "row"),
                            "reason": ("dataset", "row")},
    "real_corel": {"score": ("row", "sparseness", "metric", "fold"), "largest": ("row", "sparseness", "fold"),
                   "n_found": ("row", "sparseness", "fold"), "flag": ("row", "sparseness", "fold"),
                   "hub": ("row", "sparseness", "fold"), "status": ("row",),
                   "completion": ("dataset", "crow", "measure", "N", "fold"), "cstatus": ("dataset", "crow"),
                   "creason": ("dataset", "crow")},
    "fig4_7_9_examples": {"member_tags": ("figure", "cluster", "member"),
                          "member_consistent": ("figure", "cluster", "member"),
                          "cluster_purity": ("figure", "cluster"), "scores": ("figure", "metric"),
                          "cluster_role": ("figure", "cluster"), "cluster_size": ("figure", "cluster"),
                          "cluster_top_tags": ("figure", "cluster"),
                          "observed_tags": ("example_dataset", "example"),
                          "hidden_tags": ("example_dataset", "example"),
                          "predicted_tags": ("example_dataset", "example"), "hits": ("example_dataset", "example"),
                          "coverage3": ("example_dataset",)},
    "seed_lmmc": {"score": ("method", "metric", "seed"), "cpu_seconds": ("method", "seed")},
    "seed_ghfart": {"score": ("variant", "metric", "seed"), "n_clusters": ("variant", "seed"),
                    "fixed_score": ("tag_weight", "metric", "seed"), "adaptive_tag_gamma": ("seed",),
                    "timing_s": ()},
    "seed_sfss": {"map": ("dataset", "method", "share_index", "repeat"),
                  "best_setting": ("dataset", "method", "share_index", "repeat"),
                  "labelled_share": ("dataset", "share_index")},
    "seed_mhcrf": {"f1": ("method", "concept", "round"), "f1_hidden": ("n_hidden", "concept", "round"),
                   "C_selected": ("method", "concept", "round"), "paper_f1": ("paper_dataset", "method"),
                   "paper_f1_hidden": ("paper_dataset_t3", "paper_n_hidden")},
}
