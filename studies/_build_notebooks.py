"""Regenerate the skeletons of the study notebooks (outputs cleared).

    python studies/_build_notebooks.py

Each notebook: a markdown header, a ``parameters`` cell (papermill), a validation cell
(``hmlkit.studies.setup``, or the seed study's ``setup``: fails at once on a bad parameter),
then short cells calling ``hmlkit.studies``, ``study.save`` and the paper's claims. Edit here, not in the .ipynb files, to keep the set uniform.
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
               'sparseness = None         # tag removal rates (None: the profile\'s; standard 0, 25, 50, 75 %)\n'
               'table1_methods = None     # Table 1 methods beside HML-RF, e.g. ["kmeans", "cca"] (None: the profile\'s; standard all)\n'
               'table1_folds = None       # seeds Table 1\'s methods run on (None: the profile\'s; standard 1, paper every fold)\n',
        setup='dataset=dataset, completion_datasets=completion_datasets, n_samples=n_samples, sparseness=sparseness, '
              'table1_methods=table1_methods, table1_folds=table1_folds',
        body=['from hmlkit.studies import real\n'
              'data = study.load_data(dataset, cfg, n_samples=cfg["n_samples"], random_state=seed, groups=True)\ndata',
              'ds = real.clustering_study(data, cfg, part="kit")\nreal.table(ds)',
              'ds = real.add_rows(ds, real.clustering_study(data, cfg, part="table1"))\nreal.table(ds)',
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


# Seed-paper studies: the protocol lives in hmlkit/studies/seed_*.py (module ``S``), the
# paper's numbers in hmlkit/studies/paper_values.py, its claims in hmlkit/studies/claims/seeds.py.
# Cells: ("md", text) or ("code", source); the parameters cell, study.save and the claims follow.
SEED_NB = {
    'seed_lmmc': dict(
        params='profile = "quick"        # quick | standard | paper\nseed = 0\nresults_dir = "results"\nfigures_dir = "figures"\nn_seeds = 3\nC = 10.0                 # the paper picks C from {10, 100, 1000}; fixed here (no selection on the test labels)',
        cells=[
            ('md', "# Seed 004 — Latent Maximum Margin Clustering (Zhou et al., NIPS 2013), Table 1 shape\n\nLMMC, MMC, SC, KM and NC on **DetScore** input (cross-validated per-tag linear SVM detection\nscores, z-scored per tag; `hmlkit.baselines.detection_scores`) of the synthetic `trecvid` profile\n(15 groups, 114 tags), averaged over data seeds. Measures as in the paper: purity (PUR), NMI,\nRand index (RI), pair-counting F-measure (FM). The paper's TRECVID MED 11 numbers are shown beside ours\n(different data: the shape, not the values, is what can be compared). Question: does LMMC beat MMC?"),
            ('code', 'from hmlkit import studies as study\nfrom hmlkit.studies import seed_lmmc as S\n\ncfg = S.setup(profile, seed, results_dir, figures_dir, n_seeds=n_seeds, C=C)\ncfg'),
            ('md', 'The conventional baselines as the paper sets them up (Sec. 5): SC on a 5-nearest-neighbour graph\nwith Gaussian width the mean 5-NN distance; NC (Shi & Malik) on the full Gaussian similarity\n(all samples neighbours; width: the median pairwise distance, our choice); KM = k-means.'),
            ('code', 'ds = S.run(cfg)'),
            ('code', 'S.table(ds)'),
            ('code', 'fig = S.plot(ds)'),
        ],
    ),
    'seed_ghfart': dict(
        params='profile = "quick"        # quick | standard | paper\nseed = 0\nresults_dir = "results"\nfigures_dir = "figures"\nn_seeds = 3              # presentation orders / data seeds\nvigilance = 0.1',
        cells=[
            ('md', '# Seed 001 — GHF-ART (Meng, Tan, Xu, TKDE 2014): adaptive weights, incremental subsets, speed\n\nGHF-ART on the synthetic `nuswide` profile (visual channel: 4096-d features, min-max normalised and\ncomplement coded; tag channel: 1000 binary tags learnt as occurrence probabilities).\n\n1. adaptive (robustness) contribution weights γ vs equal weights (the paper\'s Table 4, GHF-ART_aw vs _ew)\n   and the semi-supervised GHF-ART(SS) with 3 labelled samples per group (Table 1), and a sweep of\n   fixed tag-channel weights against the adaptive one (Fig. 3a: "comparable with the best settings");\n2. clustering the whole set in one pass vs four sequential subsets with `partial_fit` (Table 3);\n3. the γ trace along the presentation (Fig. 3b);\n4. wall time on the full profile (the paper: < 10 s for 20,000 images).\n\nParameters as in the paper: α = 0.01, β = 0.6, ρ₀ = 0.1. Scores on the ART clusters themselves\n(ART picks its number of clusters; purity/NMI/RI/F as in `hmlkit.metrics`).'),
            ('code', 'from hmlkit import studies as study\nfrom hmlkit.studies import seed_ghfart as S\n\ncfg = S.setup(profile, seed, results_dir, figures_dir, n_seeds=n_seeds, vigilance=vigilance)\ncfg'),
            ('code', 'ds, traces = S.run(cfg)\nS.summary(ds)'),
            ('code', 'S.differences(ds)'),
            ('md', 'Speed (Sec. 6.1.2, Fig. 4): one pass over the full `nuswide` profile (17,523 samples, 4096-d + 1000 tags)\nin `standard` / `paper` profiles; in `quick` the same timing on the reduced data. The numba kernel is\ncompiled before timing.'),
            ('code', 'ds = S.timing(ds, cfg)'),
            ('code', 'fig = S.plot(ds, traces)'),
        ],
    ),
    'seed_sfss': dict(
        params='profile = "quick"        # quick | standard | paper\nseed = 0\nresults_dir = "results"\nfigures_dir = "figures"\ndatasets = ["nuswide", "corel16k"]',
        cells=[
            ('md', "# SFSS (Ma et al., ACM MM 2011): MAP against the share of labelled training images\n\nReproduces the protocol of the SFSS paper's Tables 2-4 and Fig. 2: a random training set (part of it labelled,\nthe rest unlabelled and seen only by the semi-supervised SFSS), the remaining images for testing; annotation MAP\non the test set for 1/2 %, 5 %, 10 %, 25 %, 50 %, 100 % labelled; SFSS against F-score + RLS and FSNM + RLS, each\nwith its best parameter setting over the profile's grid (as the paper does).\n\nData: the synthetic `nuswide` profile (81 most frequent of its complete tags as the concepts, PCA of the CNN-like\nfeatures) and the real Corel16k sample (mulan, 500 blob-token features, 153 keywords; Corel-5K protocol shares).\nThe paper's claim to check: **SFSS wins when 10 % or less of the training images are labelled.**"),
            ('code', 'from hmlkit import studies as study\nfrom hmlkit.studies import seed_sfss as S\n\ncfg = S.setup(profile, seed, results_dir, figures_dir, datasets=datasets)\ncfg'),
            ('code', 'splits = S.splits(cfg)\nS.describe(splits)'),
            ('code', 'results, ds = S.run(splits, cfg)\nS.map_table(ds)'),
            ('code', 'fig = S.plot(results)'),
        ],
    ),
    'seed_mhcrf': dict(
        params='profile = "quick"     # quick | standard | paper\nseed = 0\nresults_dir = "results"\nfigures_dir = "figures"\nn_samples = None      # None: the profile\'s (quick 600, else the full 2379)\nn_concepts = None     # None: the profile\'s (quick 3, else every group)\nn_rounds = None       # random train/test draws per concept\nn_pca = None          # visual dims after PCA\nhidden_grid = None    # Table 3 grid (None: the profile\'s)',
        cells=[
            ('md', "# Seed 003 — M-HCRF (Jiang et al., Pattern Recognition Letters 2015): Tables 1 and 3 on our data\n\nThe protocol of the paper's Table 1 (F1 of M-HCRF vs SVM, CRF, CCA+SVM, CCA+CRF and the uni-modal model on\nvisual+tag data) and Table 3\n(F1 of M-HCRF against the number of hidden variables), on the synthetic `trecvid` profile of `hmlkit.data`:\n\n* one binary concept at a time: a ground-truth group of the data, one-vs-rest;\n* training set: `n_pos` positives and `n_neg` negatives drawn at random (the paper's Wikipedia protocol, 150/250;\n  at most ¾ of a concept's positives so that some remain for testing), every other sample is tested;\n  F1 of the positive class, mean over concepts × rounds (the paper: 5 rounds);\n* visual view: `X` reduced by PCA to `n_pca` dims (unsupervised; keeps the observation-hidden weights of M-HCRF\n  few and the same input for every method — the paper feeds its 500-d BoVW directly); tag view: the observed tags `Y`;\n* M-HCRF: binary hidden variables shared by both views, ergodic hidden graph, exact inference (enumeration),\n  L-BFGS with random restarts; SVM: linear SVM on `[x, z]`; CRF: the same features, the category as the only random\n  variable (= logistic regression); CCA+SVM / CCA+CRF: 10 CCA components appended to the original features (the\n  framework of the paper's Ref. [16]); the CCA is unsupervised and, like the PCA, is fitted once on every sample's\n  views (no label is ever used); uni-modal model: one CRF per view, probabilities multiplied.\n* `C` of every method (M-HCRF's `δ²`, the SVMs' `C`) is chosen from {0.01, 0.1, 1, 10, 100} (quick: {0.1, 1, 10}) by 3-fold F1 on the training\n  set of each run; the Table 3 grid reuses the `C` chosen for the Table 1 M-HCRF. The paper states no tuning.\n\nLibrary code: `hmlkit/baselines/mhcrf.py` (model), `hmlkit/baselines/mhcrf_baselines.py` (baselines); the protocol is `hmlkit/studies/seed_mhcrf.py`."),
            ('code', 'from hmlkit import studies as study\nfrom hmlkit.studies import seed_mhcrf as S\n\ncfg = S.setup(profile, seed, results_dir, figures_dir, n_samples=n_samples, n_concepts=n_concepts,\n              n_rounds=n_rounds, n_pca=n_pca, hidden_grid=hidden_grid)\ncfg'),
            ('code', 'data, concepts = S.load(cfg)'),
            ('code', 'ds = S.run(data, concepts, cfg)'),
            ('md', "## Table 1: F1 per method, ours beside the paper's four data sets\n\n(the paper's numbers are on other data, Pascal07 / MIR / Wiki / NUS-WIDE: compare the ranking of methods, not the values)"),
            ('code', 'table, wins = S.mhcrf_study_summary(ds)\ntable.round(4)'),
            ('code', 'S.print_wins(table, wins)'),
            ('code', 'ds["f1"].mean("round").to_pandas().T.round(3)  # per concept'),
            ('code', 'ds["C_selected"].median("round").to_pandas().T  # C chosen on the training set (median over rounds)'),
            ('md', '## Table 3: F1 of M-HCRF against the number of hidden variables'),
            ('code', 'S.hidden_table(ds)'),
            ('code', 'fig = S.plot_mhcrf_study(ds)'),
        ],
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


def build_seed(name, spec):
    """A seed-paper notebook: its cells, then ``study.save`` and the claims, as a paper notebook."""
    nb = nbf.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cells = [nbf.v4.new_markdown_cell(spec["cells"][0][1])]
    p = nbf.v4.new_code_cell(spec["params"])
    p.metadata["tags"] = ["parameters"]
    cells.append(p)
    for kind, src in spec["cells"][1:]:
        cells.append(nbf.v4.new_markdown_cell(src) if kind == "md" else nbf.v4.new_code_cell(src))
    cells.append(nbf.v4.new_code_cell("study.save(ds, fig, cfg)"))
    cells.append(nbf.v4.new_markdown_cell("## The seed paper's claims, judged on this run"))
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
    for name, spec in SEED_NB.items():
        write(build_seed(name, spec), HERE / f"{name}.ipynb")
    write(build_explore(), HERE / "explore.ipynb")
    write(build_bench(), HERE / "bench_speed.ipynb")


def build_bench():
    """The speed benchmark (``make bench``) as a notebook: stores its figures."""
    nb = nbf.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    p = nbf.v4.new_code_cell(
        'parts = "trecvid,sklearn,nuswide,peers,scale"   # any of trecvid, sklearn, nuswide, peers, scale\n'
        "trees = 1000             # tau of the HMLForest fits (targets are set for 1000; fewer are scaled)\n"
        "sklearn_trees = 1000     # tau of the scikit-learn comparison\n"
        "nuswide_samples = None   # None: the full profile (17523); fewer: no verdict on its targets\n"
        "peer_sets = None         # peers: None = trecvid, nuswide_5000, nuswide (17523), corel5k\n"
        "peer_trees = None        # peers: None = each data set's own (100 trecvid / Corel5k, 30 nuswide)\n"
        "peer_samples = None      # peers: None = all samples; fewer: no verdict\n"
        "peer_repeats = 3         # peers: interleaved repeats, medians stored\n"
        'scale_ns = "10000,30000,100000"  # scale: sample counts (from 300000 on: 512-d features)\n'
        "scale_trees = 100        # scale: tau\n"
        'scale_tags = ""          # scale: vocabulary sizes to sweep, e.g. "100,1000,10000" ("" = none)\n'
        "scale_tags_n = 30000     # scale: samples of the vocabulary sweep\n"
        "scale_dask = 0           # scale: also on a Dask LocalCluster of this many workers (0 = not)\n"
        "scale_features = None    # scale: one feature dimension at every size (None: 4096, 512 from 300000)\n"
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
            "run (target on nuswide: at most 1.0x scikit-learn); and the scaling benchmark (issue 20): every "
            "stage of the pipeline at growing n (and numbers of tags) with peak memory and growth exponents. "
            "Each part runs in a fresh process; run it on an "
            "idle machine. Writes `results/bench_speed.nc` and `figures/bench_speed.png`."),
        p,
        nbf.v4.new_code_cell(
            "from hmlkit import bench\nfrom hmlkit.studies import save_result\n\n"
            'results = bench.run(parts.split(","), trees=trees, sklearn_trees=sklearn_trees, '
            "nuswide_samples=nuswide_samples, peer_sets=peer_sets, peer_trees=peer_trees, "
            "peer_samples=peer_samples, peer_repeats=peer_repeats,\n"
            "                     scale_ns=scale_ns, scale_trees=scale_trees, scale_tags=scale_tags, "
            "scale_tags_n=scale_tags_n, scale_dask=scale_dask, scale_features=scale_features)"),
        nbf.v4.new_code_cell('ds = bench.to_dataset(results)\n'
                             'ds[["part", "value", "at_tau1000", "op", "target", "verdict"]].to_dataframe()'),
        nbf.v4.new_code_cell('# the peer comparison: fit time (s), ratio to scikit-learn, leaves per tree\n'
                             '(ds[["peer_fit_s", "peer_ratio", "peer_leaves", "peer_status"]].to_dataframe()\n'
                             ' if "dataset" in ds.dims else "peers not run")'),
        nbf.v4.new_code_cell('# scaling (issue 20): seconds per stage and n, growth exponents between consecutive n\n'
                             'from hmlkit import bench_scale\n\n'
                             'print("\\n".join(bench_scale.format_table(ds, prefix="scale_")) if "stage" in ds.dims '
                             'else "scale not run")'),
        nbf.v4.new_code_cell("fig = bench.plot(ds)"),
        nbf.v4.new_code_cell('save_result(ds, fig, "bench_speed", results_dir, figures_dir)'),
    ]
    return nb


def build_explore():
    nb = nbf.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    p = nbf.v4.new_code_cell(
        'profile = "quick"\nseed = 0\nn_samples = None\nn_jobs = 1\n'
        "# the sweep panel's first settings; sweep_run = True runs that sweep here, headless, and saves it\n"
        'sweep_dataset = "trecvid"     # trecvid | nuswide (synthetic profiles) | corel5k | a data path with groups\n'
        'sweep_method = "hmlrf"        # hmlrf | hmlrf_paper | a registered clustering method\n'
        'sweep_mode = "hml"            # its input mode (hml for HML-RF; vifeat, bitag, blm...)\n'
        'sweep_param = "tau"           # tau, phi, sparseness, n_layers, or a parameter of the method\n'
        'sweep_values = "4, 8, 16"     # a list, or "start:stop:count" (e.g. "10:500:8")\n'
        "sweep_seeds = 1               # seeds seed, seed+1, ... per value\n"
        'sweep_metric = "nmi"          # plotted (every metric is stored)\n'
        'sweep_fixed = ""              # the other settings, e.g. "tau=50, sparseness=0.3"\n'
        'sweep_name = "sweep"          # Save / batch: results_dir/<name>.nc, figures_dir/<name>.png\n'
        "sweep_run = False\n"
        'results_dir = "results"\nfigures_dir = "figures"\n')
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
        nbf.v4.new_markdown_cell(
            "## Parameter sweeps\n\nPick a data set, a method, one parameter and its values, the seeds and the "
            "metric, then **Start**: the sweep runs in a thread, each point is drawn when its seeds are done, "
            "**Cancel** stops it and keeps the points done, **Save** writes `results_dir/<name>.nc` and "
            "`figures_dir/<name>.png`. The command under the plot reruns the same sweep in batch."),
        nbf.v4.new_code_cell(
            "from hmlkit.sweep_panel import SweepPanel\n\n"
            "sweep = SweepPanel(profile=profile, seed=seed, n_samples=n_samples, n_jobs=n_jobs, dataset=sweep_dataset,\n"
            "                   method=sweep_method, mode=sweep_mode, param=sweep_param, values=sweep_values,\n"
            "                   n_seeds=sweep_seeds, metric=sweep_metric, fixed=sweep_fixed, name=sweep_name,\n"
            "                   results_dir=results_dir, figures_dir=figures_dir, run=sweep_run)\nsweep"),
        nbf.v4.new_code_cell("# the sweep's result so far: score(<parameter>, metric, seed), settings in attrs\n"
                             "sweep.result"),
    ]
    return nb


if __name__ == "__main__":
    main()
