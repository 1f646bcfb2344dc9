"""Regenerate the skeletons of the study notebooks (outputs cleared).

    python studies/_build_notebooks.py

Each notebook: a markdown header, a ``parameters`` cell (papermill), a validation cell
(``hmlkit.studies.setup``: fails at once on a bad parameter), then short cells calling
``hmlkit.studies``. Edit here, not in the .ipynb files, to keep the set uniform.
"""
from pathlib import Path

import nbformat as nbf

HERE = Path(__file__).resolve().parent

COMMON = '''profile = "quick"        # quick | standard | paper
seed = 0
results_dir = "results"
figures_dir = "figures"
folds = None             # repeats with seeds seed, seed+1, ... (None: the profile's)
n_estimators = None      # tau (None: the profile's; paper 1000)
min_samples_leaf = None  # phi (None: the profile's; paper 3)
n_jobs = 1
'''
SETUP_ARGS = ("profile, seed, results_dir, figures_dir, folds=folds, n_estimators=n_estimators, "
              "min_samples_leaf=min_samples_leaf, n_jobs=n_jobs")

NB = {
    "table1_trecvid_clustering": dict(
        title="Table 1: clustering methods on TRECVID MED 2011 (synthetic `trecvid` profile)",
        params='dataset = "trecvid"       # synthetic profile name or a data path with groups\n'
               'n_samples = None\nmethods = None           # None: every row of Table 1; or a list of method keys\n',
        setup='dataset=dataset, methods=methods, n_samples=n_samples, allowed_methods=study.TABLE1_KEYS',
        body=['data = study.load_data(dataset, cfg, n_samples=cfg["n_samples"], random_state=seed, groups=True)\ndata',
              'ds = study.clustering_grid(data, study.filter_rows(pv.TABLE1, cfg.methods), cfg)',
              'study.side_by_side(ds)',
              'fig = study.plot_clustering_table(ds, "Table 1: TRECVID clustering")'],
    ),
    "table2_nuswide_clustering": dict(
        title="Table 2: clustering methods on NUS-WIDE (synthetic `nuswide` profile, 2 estimated tag layers)",
        params='dataset = "nuswide"\nn_samples = None\nn_tags = None\nn_layers = 2             # estimated hierarchy (Sec 4.1)\nmethods = None\n',
        setup='dataset=dataset, methods=methods, n_samples=n_samples, n_tags=n_tags, n_layers=n_layers, '
              'allowed_methods=study.TABLE2_KEYS',
        body=['data = study.load_data(dataset, cfg, n_samples=cfg["n_samples"], n_tags=cfg["n_tags"], random_state=seed, groups=True)\n'
              'data = study.with_layers(data, cfg["n_layers"], random_state=seed)\ndata',
              'ds = study.clustering_grid(data, study.filter_rows(pv.TABLE2, cfg.methods), cfg)',
              'study.side_by_side(ds)',
              'fig = study.plot_clustering_table(ds, "Table 2: NUS-WIDE clustering")'],
    ),
    "fig5_table3_sparseness": dict(
        title="Fig 5 and Table 3: robustness to tag sparseness (TRECVID, ViFeat&BiTag input)",
        params='dataset = "trecvid"\nn_samples = None\nsparseness = None        # tag removal rates in [0, 1) (None: 0, 10, ..., 50%)\nmethods = None\n',
        setup='dataset=dataset, methods=methods, n_samples=n_samples, sparseness=sparseness, '
              'allowed_methods=study.TABLE3_KEYS',
        body=['data = study.load_data(dataset, cfg, n_samples=cfg["n_samples"], random_state=seed, groups=True)\ndata',
              'ds = study.sparseness_study(data, cfg)',
              'ds[["drop", "paper_drop"]].to_dataframe().unstack("sparseness").round(3)',
              'fig = study.plot_sparseness(ds)'],
    ),
    "fig6_components": dict(
        title="Fig 6: HML-RF components: FlatTags (Eq. 4), NoCorr (Eq. 5), full (Eq. 5-9), vs tag sparseness",
        params='dataset = "trecvid"\nn_samples = None\nsparseness = None\nmethods = None           # subset of flattags, nocorr, hmlrf\n',
        setup='dataset=dataset, methods=methods, n_samples=n_samples, sparseness=sparseness, '
              'allowed_methods=list(study.VARIANTS)',
        body=['data = study.load_data(dataset, cfg, n_samples=cfg["n_samples"], random_state=seed, groups=True)\ndata',
              'ds = study.components_study(data, cfg)',
              'study.side_by_side(ds.sel(metric="nmi"), paper="paper_nmi", index=("variant",))',
              'fig = study.plot_components(ds)'],
    ),
    "fig8_parameters": dict(
        title="Fig 8: HML-RF sensitivity to forest size tau and leaf size phi (TRECVID)",
        params='dataset = "trecvid"\nn_samples = None\ntaus = None              # forest sizes (None: the profile\'s)\nphis = None              # leaf sizes\n',
        setup='dataset=dataset, n_samples=n_samples, taus=taus, phis=phis',
        body=['data = study.load_data(dataset, cfg, n_samples=cfg["n_samples"], random_state=seed, groups=True)\ndata',
              'ds = study.tau_phi_grid(data, cfg["taus"], cfg["phis"], cfg)',
              'ds["score_tau"].sel(metric="nmi").mean("fold").to_series().round(3), ds["score_phi"].sel(metric="nmi").mean("fold").to_series().round(3)',
              'fig = study.plot_parameters(ds)'],
    ),
    "table4_hierarchy_depth": dict(
        title="Table 4: number of estimated tag layers (NUS-WIDE)",
        params='dataset = "nuswide"\nn_samples = None\nn_tags = None\nn_layers = None          # layer counts to try (None: 2..7)\n',
        setup='dataset=dataset, n_samples=n_samples, n_tags=n_tags, n_layers=n_layers',
        body=['data = study.load_data(dataset, cfg, n_samples=cfg["n_samples"], n_tags=cfg["n_tags"], random_state=seed, groups=True)\ndata',
              'ds = study.depth_study(data, cfg)',
              'study.side_by_side(ds, index=("n_layers",))',
              'fig = study.plot_metric_table(ds, "n_layers", "Table 4: HML-RF vs tag layers (NUS-WIDE)")'],
    ),
    "table5_abstractness": dict(
        title="Table 5: tag abstractness: 1-layer most-specific tags vs 2-layer hierarchy",
        params='datasets = ["trecvid", "nuswide"]\n',
        setup='datasets=datasets',
        body=['data = study.load_datasets(cfg.datasets, cfg, random_state=seed, groups=True, n_layers=2)\ndata',
              'ds = study.abstractness_study(data, cfg)',
              'study.side_by_side(ds, index=("dataset", "structure"))',
              'fig = study.plot_abstractness(ds)'],
    ),
    "real_corel": dict(
        title="Real tagged images: clustering on Corel5k against tag removal, tag completion on Corel5k and "
              "Corel16k (beyond the paper's tables)",
        params='dataset = "corel5k"        # Corel5k training split (50 Corel CDs as ground-truth groups)\n'
               'completion_datasets = ["corel5k", "corel16k"]\n'
               'n_samples = None          # a seeded subset of Corel5k (None: the profile\'s)\n'
               'sparseness = None         # tag removal rates (None: the profile\'s; standard 0, 25, 50, 75 %)\n',
        setup='dataset=dataset, completion_datasets=completion_datasets, n_samples=n_samples, sparseness=sparseness',
        body=['from hmlkit.studies import real\n'
              'data = study.load_data(dataset, cfg, n_samples=cfg["n_samples"], random_state=seed, groups=True)\ndata',
              'ds = real.clustering_study(data, cfg)\nreal.table(ds)',
              'comp = study.load_datasets(cfg["completion_datasets"], cfg, random_state=seed)\n'
              'ds = ds.merge(real.completion_study(comp, cfg))\nreal.completion_table(ds)',
              'fig = real.plot(ds)'],
    ),
    "table6_8_completion": dict(
        title="Tables 6, 7, 8: missing-tag completion (AP@N, AR@N, Coverage@N)",
        params='datasets = ["trecvid", "nuswide"]   # profile names or data paths (e.g. the Corel16k ARFF)\n'
               'dataset = None           # a single data set, overrides datasets\n'
               'hidden_fraction = None   # share of tags hidden as ground truth (paper: 0.4)\n'
               'gc_clusters = None       # clusters of the GC rows on data without ground-truth groups\n'
               'methods = None\n',
        setup='datasets=[dataset] if dataset is not None else datasets, methods=methods, hidden_fraction=hidden_fraction, '
              'gc_clusters=gc_clusters, '
              'allowed_methods=study.COMPLETION_KEYS',
        body=['data = study.load_datasets(cfg.datasets, cfg, random_state=seed, n_layers=2)\ndata',
              'ds = study.completion_grid(data, study.completion_rows(cfg.methods), cfg, '
              'hidden_fraction=cfg["hidden_fraction"])',
              'study.side_by_side(ds.sel(N=[1, 3, 5]), index=("dataset", "row"))',
              'fig = study.plot_completion(ds)'],
    ),
    "fig4_7_9_examples": dict(
        title="Figs 4, 7, 9: example clusters (NUS-WIDE; TRECVID at 50% sparseness) and tag completions",
        params='n_clusters_shown = None\nn_members_shown = None\nn_examples = None\n',
        setup='n_clusters_shown=n_clusters_shown, n_members_shown=n_members_shown, n_examples=n_examples',
        body=['ds = study.examples_study(cfg)',
              'ds[["observed_tags", "hidden_tags", "predicted_tags", "hits"]].to_dataframe()',
              'fig = study.plot_examples(ds)'],
    ),
}


def build(name, spec):
    nb = nbf.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cells = [nbf.v4.new_markdown_cell(
        f"# {spec['title']}\n\nReproduces the HML-RF paper (Wang, Zhu, Gong), Section 4. Run by "
        f"`python -m hmlkit.studies run {name} --profile quick|standard|paper`; writes "
        f"`results/{name}.nc` and `figures/{name}.png`. Our numbers stand beside the paper's; "
        "methods the kit lacks are rows marked *not implemented*.")]
    p = nbf.v4.new_code_cell(COMMON + spec["params"])
    p.metadata["tags"] = ["parameters"]
    cells.append(p)
    cells.append(nbf.v4.new_code_cell(
        "from hmlkit import studies as study\nfrom hmlkit.studies import paper_values as pv\n\n"
        f'cfg = study.setup("{name}", {SETUP_ARGS},\n                  {spec["setup"]})\ncfg'))
    cells += [nbf.v4.new_code_cell(c) for c in spec["body"]]
    cells.append(nbf.v4.new_code_cell("study.save(ds, fig, cfg)"))
    cells.append(nbf.v4.new_markdown_cell("## The paper's claims, judged on this run"))
    cells.append(nbf.v4.new_code_cell("study.show_claims(ds, cfg.name)"))
    nb.cells = cells
    return nb


def write(nb, path):
    """Write ``nb``, keeping the cell ids of the notebook already at ``path`` (same cell
    count), so that regenerating changes only what changed."""
    if path.exists():
        old = nbf.read(path, as_version=4)
        if len(old.cells) == len(nb.cells):
            for new, prev in zip(nb.cells, old.cells):
                if "id" in prev:
                    new["id"] = prev["id"]
    nbf.write(nb, path)
    print("wrote", path.stem)


def main():
    for name, spec in NB.items():
        write(build(name, spec), HERE / f"{name}.ipynb")
    write(build_explore(), HERE / "explore.ipynb")
    write(build_bench(), HERE / "bench_speed.ipynb")


def build_bench():
    """The speed benchmark (``make bench``) as a notebook: stores its figures."""
    nb = nbf.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    p = nbf.v4.new_code_cell(
        'parts = "trecvid,sklearn,nuswide,peers"   # any of trecvid, sklearn, nuswide, peers\n'
        "trees = 1000             # tau of the HMLForest fits (targets are set for 1000; fewer are scaled)\n"
        "sklearn_trees = 1000     # tau of the scikit-learn comparison\n"
        "nuswide_samples = None   # None: the full profile (17523); fewer: no verdict on its targets\n"
        "peer_sets = None         # peers: None = trecvid, nuswide_5000, nuswide (17523), corel5k\n"
        "peer_trees = None        # peers: None = each data set's own (100 trecvid / Corel5k, 30 nuswide)\n"
        "peer_samples = None      # peers: None = all samples; fewer: no verdict\n"
        "peer_repeats = 3         # peers: interleaved repeats, medians stored\n"
        'results_dir = "results"\nfigures_dir = "figures"\n')
    p.metadata["tags"] = ["parameters"]
    nb.cells = [
        nbf.v4.new_markdown_cell(
            "# Speed benchmark of the core kit\n\nThe figures `make bench` prints, with their targets "
            "(issue 2): HMLForest fit on `trecvid` (tau = 1000, phi = 3), the ratio to scikit-learn's "
            "RandomForestClassifier in the FlatTags setting, fit time, peak memory and affinity + clustering "
            "time on the full `nuswide` profile; and the peer comparison (issue 19): flat HMLForest against "
            "single-output random forests grown as deep (scikit-learn's RandomForestRegressor on a random "
            "projection of the tags, the reference; LightGBM `boosting=\"rf\"` and YDF where installed, "
            "`pip install hmlkit[bench]`) on the trecvid and nuswide profiles and Corel5k, every ratio from one "
            "run (target on nuswide: at most 1.0x scikit-learn). Each part runs in a fresh process; run it on an "
            "idle machine. Writes `results/bench_speed.nc` and `figures/bench_speed.png`."),
        p,
        nbf.v4.new_code_cell(
            "from hmlkit import bench\nfrom hmlkit.studies import save_result\n\n"
            'results = bench.run(parts.split(","), trees=trees, sklearn_trees=sklearn_trees, '
            "nuswide_samples=nuswide_samples, peer_sets=peer_sets, peer_trees=peer_trees, "
            "peer_samples=peer_samples, peer_repeats=peer_repeats)"),
        nbf.v4.new_code_cell('ds = bench.to_dataset(results)\n'
                             'ds[["part", "value", "at_tau1000", "op", "target", "verdict"]].to_dataframe()'),
        nbf.v4.new_code_cell('# the peer comparison: fit time (s), ratio to scikit-learn, leaves per tree\n'
                             '(ds[["peer_fit_s", "peer_ratio", "peer_leaves", "peer_status"]].to_dataframe()\n'
                             ' if "dataset" in ds.dims else "peers not run")'),
        nbf.v4.new_code_cell("fig = bench.plot(ds)"),
        nbf.v4.new_code_cell('save_result(ds, fig, "bench_speed", results_dir, figures_dir)'),
    ]
    return nb


def build_explore():
    nb = nbf.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    p = nbf.v4.new_code_cell('profile = "quick"\nseed = 0\nn_samples = None\nn_jobs = 1\n')
    p.metadata["tags"] = ["parameters"]
    nb.cells = [
        nbf.v4.new_markdown_cell(
            "# Explore HML-RF interactively\n\nChange any control: the clustering re-runs and the scores and "
            "plot update. `profile` sets the data size (quick: small, fast)."),
        p,
        nbf.v4.new_code_cell("from hmlkit.studies.profiles import check_profile\ncheck_profile(profile)\n"
                             "from hmlkit.widgets import ExplorePanel\n\n"
                             "panel = ExplorePanel(profile=profile, seed=seed, n_samples=n_samples, n_jobs=n_jobs)\npanel"),
        nbf.v4.new_code_cell("# the history of runs as a table\nimport pandas as pd\npd.DataFrame(panel.history)"),
    ]
    return nb


if __name__ == "__main__":
    main()
