"""The published numbers of the HML-RF paper (Wang, Zhu, Gong), Section 4, typed from the paper,
and, at the end, those of the four seed papers (the ``seed_*`` studies).

Every value here is a paper's, never ours. Each row says where it comes from:

``status``
    ``"measured"``: the paper ran the method itself;
    ``"quoted"``: the paper only copies the number from another paper (the DetScore rows
    of Table 1 and S-MMC / F-MMC, from Vahdat et al. [4]; footnote 1 of the paper);
    ``"derived"``: not printed in the paper, computed here from printed numbers (Fig 5
    points = Table 1 NMI x (1 - Table 3 drop)).

Notes on the text of the tables
-------------------------------
* Tables 6, 7, 8: each row of the extracted text carries 11 numbers under a 10-column
  header (AP@1..5, AR@1..5, resp. Coverage@1..5 for each data set). The 11th is a repeat
  of the 10th in every row but LSR of Table 6 (0.40 then 0.48); the bold marks (e.g.
  HML-RF(LN)'s best AR@1 = 0.19, which the text names) confirm that the first ten are
  the columns. We keep the first ten. Coverage@1 equals AP@1 in Table 7 for every row,
  as it must, which confirms the order.
* "SpClust-blnc" of Tables 6-8 is the SpClust-blm of Table 1 (balanced affinity mix).
* Metric ``-`` in the paper (ARI of the DetScore rows) is NaN here.
"""
from __future__ import annotations

import math

NaN = math.nan
CLUSTER_METRICS = ("purity", "nmi", "ri", "f1", "ari")

# (mode, method key, paper label, status, (purity, nmi, ri, f1, ari))
# method keys are the registry's names (see hmlkit.studies.methods.ALIASES).
TABLE1 = [
    ("vifeat", "kmeans", "K-means", "measured", (0.26, 0.19, 0.88, 0.14, 0.08)),
    ("vifeat", "spclust", "SpClust", "measured", (0.25, 0.20, 0.88, 0.15, 0.07)),
    ("vifeat", "clustrf", "ClustRF", "measured", (0.23, 0.17, 0.87, 0.14, 0.08)),
    ("vifeat", "affprop", "AffProp", "measured", (0.23, 0.16, 0.87, 0.14, 0.07)),
    ("vifeat", "mmc", "MMC", "measured", (0.25, 0.19, 0.88, 0.14, 0.09)),
    ("bitag", "kmeans", "K-means", "measured", (0.51, 0.52, 0.86, 0.30, 0.23)),
    ("bitag", "spclust", "SpClust", "measured", (0.71, 0.73, 0.93, 0.56, 0.60)),
    ("bitag", "clustrf", "ClustRF", "measured", (0.77, 0.81, 0.94, 0.64, 0.60)),
    ("bitag", "affprop", "AffProp", "measured", (0.50, 0.44, 0.87, 0.28, 0.21)),
    ("bitag", "mmc", "MMC", "measured", (0.76, 0.72, 0.95, 0.64, 0.60)),
    ("detscore", "kmeans", "K-means", "quoted", (0.63, 0.60, 0.93, 0.50, NaN)),
    ("detscore", "spclust", "SpClust", "quoted", (0.82, 0.76, 0.96, 0.69, NaN)),
    ("detscore", "mmc", "MMC", "quoted", (0.83, 0.78, 0.96, 0.73, NaN)),
    ("detscore", "lmmc", "L-MMC", "quoted", (0.86, 0.82, 0.97, 0.79, NaN)),
    ("cmb", "kmeans", "K-means", "measured", (0.51, 0.49, 0.90, 0.34, 0.24)),
    ("cmb", "spclust", "SpClust-cmb", "measured", (0.76, 0.74, 0.94, 0.62, 0.66)),
    ("cmb", "clustrf", "ClustRF", "measured", (0.23, 0.17, 0.87, 0.15, 0.08)),
    ("cmb", "affprop", "AffProp", "measured", (0.51, 0.46, 0.86, 0.29, 0.21)),
    ("blm", "spclust", "SpClust-blm", "measured", (0.75, 0.72, 0.95, 0.62, 0.59)),
    ("blm", "cca", "CCA+SpClust", "measured", (0.85, 0.81, 0.97, 0.77, 0.75)),
    ("blm", "3vcca", "3VCCA+SpClust", "measured", (0.86, 0.86, 0.97, 0.78, 0.77)),
    ("blm", "ccforest", "CC-Forest", "measured", (0.41, 0.33, 0.89, 0.41, 0.19)),
    ("blm", "aasc", "AASC", "measured", (0.30, 0.15, 0.87, 0.13, 0.06)),
    ("blm", "mmc", "MMC", "measured", (0.79, 0.72, 0.95, 0.66, 0.66)),
    ("blm", "dcca", "DCCA", "measured", (0.84, 0.80, 0.96, 0.74, 0.72)),
    ("blm", "dccae", "DCCAE", "measured", (0.84, 0.80, 0.97, 0.75, 0.73)),
    ("blm", "smmc", "S-MMC", "quoted", (0.87, 0.84, 0.97, 0.79, NaN)),
    ("blm", "fmmc", "F-MMC", "quoted", (0.90, 0.88, 0.98, 0.84, NaN)),
    ("hml", "hmlrf", "HML-RF", "measured", (0.94, 0.90, 0.98, 0.88, 0.87)),
    # the paper's model with its own settings; "HML-RF" above runs the kit's defaults
    ("hml", "hmlrf_paper", "HML-RF, paper's settings", "measured", (0.94, 0.90, 0.98, 0.88, 0.87)),
]

TABLE2 = [
    ("vifeat", "kmeans", "K-means", "measured", (0.28, 0.26, 0.94, 0.13, 0.11)),
    ("vifeat", "spclust", "SpClust", "measured", (0.27, 0.24, 0.94, 0.14, 0.11)),
    ("vifeat", "clustrf", "ClustRF", "measured", (0.27, 0.24, 0.94, 0.14, 0.11)),
    ("vifeat", "affprop", "AffProp", "measured", (0.25, 0.22, 0.91, 0.13, 0.09)),
    ("vifeat", "mmc", "MMC", "measured", (0.24, 0.20, 0.94, 0.12, 0.09)),
    ("bitag", "kmeans", "K-means", "measured", (0.46, 0.64, 0.77, 0.20, 0.15)),
    ("bitag", "spclust", "SpClust", "measured", (0.51, 0.59, 0.72, 0.12, 0.06)),
    ("bitag", "clustrf", "ClustRF", "measured", (0.57, 0.60, 0.90, 0.15, 0.33)),
    ("bitag", "affprop", "AffProp", "measured", (0.50, 0.59, 0.76, 0.15, 0.16)),
    ("bitag", "mmc", "MMC", "measured", (0.54, 0.61, 0.94, 0.24, 0.40)),
    ("detscore", "kmeans", "K-means", "measured", (0.51, 0.65, 0.79, 0.22, 0.17)),
    ("detscore", "spclust", "SpClust", "measured", (0.55, 0.61, 0.75, 0.16, 0.09)),
    ("detscore", "clustrf", "ClustRF", "measured", (0.60, 0.62, 0.92, 0.17, 0.35)),
    ("detscore", "affprop", "AffProp", "measured", (0.54, 0.60, 0.78, 0.17, 0.18)),
    ("detscore", "mmc", "MMC", "measured", (0.59, 0.64, 0.95, 0.25, 0.41)),
    ("cmb", "kmeans", "K-means", "measured", (0.29, 0.26, 0.94, 0.14, 0.11)),
    ("cmb", "spclust", "SpClust-cmb", "measured", (0.28, 0.24, 0.94, 0.14, 0.11)),
    ("cmb", "clustrf", "ClustRF", "measured", (0.28, 0.24, 0.93, 0.13, 0.09)),
    ("cmb", "affprop", "AffProp", "measured", (0.26, 0.22, 0.91, 0.13, 0.10)),
    ("blm", "spclust", "SpClust-blm", "measured", (0.58, 0.56, 0.87, 0.19, 0.14)),
    ("blm", "cca", "CCA+SpClust", "measured", (0.48, 0.41, 0.95, 0.24, 0.28)),
    ("blm", "3vcca", "3VCCA+SpClust", "measured", (0.52, 0.45, 0.96, 0.25, 0.32)),
    ("blm", "ccforest", "CC-Forest", "measured", (0.26, 0.23, 0.91, 0.12, 0.07)),
    ("blm", "aasc", "AASC", "measured", (0.28, 0.24, 0.94, 0.13, 0.10)),
    ("blm", "mmc", "MMC", "measured", (0.24, 0.20, 0.94, 0.12, 0.09)),
    ("blm", "dcca", "DCCA", "measured", (0.61, 0.62, 0.89, 0.30, 0.27)),
    ("blm", "dccae", "DCCAE", "measured", (0.62, 0.63, 0.89, 0.30, 0.27)),
    ("hml", "hmlrf", "HML-RF", "measured", (0.67, 0.67, 0.96, 0.32, 0.45)),
    # the paper's model with its own settings; "HML-RF" above runs the kit's defaults
    ("hml", "hmlrf_paper", "HML-RF, paper's settings", "measured", (0.67, 0.67, 0.96, 0.32, 0.45)),
]

# Every clustering row of Tables 1 and 2 once (Table 1's, then those only Table 2 has:
# DetScore ClustRF and AffProp), for a study on other data (real_corel)
TABLE1_2 = TABLE1 + [r for r in TABLE2 if (r[0], r[1]) not in {(t[0], t[1]) for t in TABLE1}]

# Table 3: relative drop in NMI, (NMI(0) - NMI(s)) / NMI(0), TRECVID, ViFeat&BiTag input.
SPARSENESS = (0.1, 0.2, 0.3, 0.4, 0.5)
TABLE3 = [
    ("cmb", "spclust", "SpClust-cmb", (0.11, 0.24, 0.34, 0.43, 0.57)),
    ("blm", "mmc", "MMC", (0.12, 0.24, 0.38, 0.52, 0.60)),
    ("blm", "cca", "CCA+SpClust", (0.14, 0.22, 0.32, 0.41, 0.51)),
    ("blm", "3vcca", "3VCCA+SpClust", (0.08, 0.19, 0.27, 0.37, 0.45)),
    ("blm", "dcca", "DCCA", (0.09, 0.20, 0.26, 0.38, 0.46)),
    ("blm", "dccae", "DCCAE", (0.09, 0.19, 0.26, 0.37, 0.45)),
    ("hml", "hmlrf", "HML-RF", (0.07, 0.16, 0.25, 0.36, 0.45)),
    ("hml", "hmlrf_paper", "HML-RF, paper's settings", (0.07, 0.16, 0.25, 0.36, 0.45)),
]

# Fig 6 (TRECVID, NMI): the points the text states (Sec 4.2.3). sparseness -> NMI.
# "boosting NMI from 0.71 to 0.84" (FlatTags -> NoCorr, full tags);
# "from 0.31 to 0.49 in the most sparse case" (NoCorr -> HML-RF, 50% removed);
# HML-RF with full tags = Table 1 (0.90).
FIG6_POINTS = {
    "flattags": {0.0: 0.71},
    "nocorr": {0.0: 0.84, 0.5: 0.31},
    "hmlrf": {0.0: 0.90, 0.5: 0.49},
}

# Fig 8 (TRECVID, NMI): the text gives only the default point (tau=1000, phi=3 is the
# Table 1 setting, NMI 0.90), "increases monotonically and starts to converge from
# tau = 1000", "phi = 1 gives weaker results", "insensitive" for small phi > 1.
FIG8_POINTS = {"tau": {1000: 0.90}, "phi": {3: 0.90}}
# Fig 9: the share of samples whose top-3 completion recovers a hidden tag (Coverage@3)
FIG9_COVERAGE3 = {"trecvid": 0.58, "nuswide": 0.45}

# Table 4 (NUS-WIDE, HML-RF, estimated hierarchy): layers -> metrics.
TABLE4 = {
    2: (0.67, 0.67, 0.96, 0.32, 0.45),
    3: (0.68, 0.68, 0.96, 0.34, 0.47),
    4: (0.70, 0.69, 0.96, 0.35, 0.48),
    5: (0.71, 0.70, 0.96, 0.35, 0.48),
    6: (0.71, 0.70, 0.96, 0.35, 0.48),
    7: (0.71, 0.70, 0.96, 0.35, 0.48),
}

# Table 5: dataset -> structure -> metrics.
TABLE5 = {
    "trecvid": {"specific": (0.39, 0.33, 0.88, 0.24, 0.18), "hierarchy": (0.94, 0.90, 0.98, 0.88, 0.87)},
    "nuswide": {"specific": (0.25, 0.24, 0.92, 0.11, 0.07), "hierarchy": (0.67, 0.67, 0.96, 0.32, 0.45)},
}

# Tables 6-8: completion. method key -> paper label.
PAPER_COMPLETION_ROWS = [
    ("lsr", "LSR"),
    ("tcmr", "TCMR"),
    ("aasc_gc", "AASC(GC)"),
    ("spclust_blm_gc", "SpClust-blnc(GC)"),
    ("ccforest_gc", "CC-Forest(GC)"),
    ("cca_gc", "CCA+SpClust(GC)"),
    ("3vcca_gc", "3VCCA+SpClust(GC)"),
    ("mmc_gc", "MMC(GC)"),
    ("dcca_gc", "DCCA(GC)"),
    ("dccae_gc", "DCCAE(GC)"),
    ("hmlrf_gc", "HML-RF(GC)"),
    ("hmlrf_ln", "HML-RF(LN)"),
    ("hmlrf_am", "HML-RF(AM)"),
]
# Rows beyond the paper's tables: the seed systems usable as tag predictors.
# They have no paper values and take no part in the paper's "best" claims.
EXTRA_COMPLETION_ROWS = [
    ("sfss", "SFSS [seed, not in paper]"),
    ("hmlrf_am_paper", "HML-RF(AM), paper's settings"),
]
COMPLETION_ROWS = PAPER_COMPLETION_ROWS + EXTRA_COMPLETION_ROWS
_T6 = [  # TRECVID AP@1..5, AR@1..5
    (0.31, 0.25, 0.22, 0.20, 0.17, 0.15, 0.24, 0.32, 0.38, 0.40),
    (0.35, 0.27, 0.24, 0.22, 0.20, 0.17, 0.26, 0.35, 0.43, 0.48),
    (0.23, 0.17, 0.14, 0.13, 0.11, 0.12, 0.18, 0.21, 0.25, 0.27),
    (0.31, 0.27, 0.25, 0.23, 0.21, 0.15, 0.25, 0.36, 0.44, 0.48),
    (0.28, 0.24, 0.18, 0.15, 0.14, 0.15, 0.23, 0.26, 0.27, 0.31),
    (0.34, 0.29, 0.26, 0.26, 0.23, 0.16, 0.26, 0.34, 0.47, 0.52),
    (0.35, 0.29, 0.26, 0.26, 0.23, 0.17, 0.27, 0.34, 0.47, 0.52),
    (0.32, 0.25, 0.23, 0.24, 0.21, 0.15, 0.24, 0.36, 0.45, 0.49),
    (0.35, 0.29, 0.26, 0.26, 0.23, 0.17, 0.27, 0.34, 0.47, 0.52),
    (0.36, 0.29, 0.27, 0.26, 0.24, 0.17, 0.27, 0.35, 0.47, 0.53),
    (0.36, 0.31, 0.27, 0.27, 0.25, 0.17, 0.29, 0.37, 0.49, 0.56),
    (0.37, 0.29, 0.25, 0.23, 0.20, 0.19, 0.28, 0.34, 0.44, 0.49),
    (0.38, 0.30, 0.26, 0.24, 0.22, 0.18, 0.27, 0.36, 0.44, 0.50),
]
_T7 = [  # Coverage@1..5 TRECVID, then NUS-WIDE
    (0.31, 0.43, 0.52, 0.59, 0.61, 0.30, 0.35, 0.38, 0.40, 0.42),
    (0.35, 0.46, 0.57, 0.66, 0.71, 0.25, 0.33, 0.39, 0.43, 0.46),
    (0.23, 0.33, 0.38, 0.43, 0.46, 0.09, 0.14, 0.17, 0.22, 0.22),
    (0.31, 0.44, 0.55, 0.63, 0.65, 0.15, 0.21, 0.25, 0.29, 0.33),
    (0.28, 0.43, 0.47, 0.48, 0.52, 0.08, 0.13, 0.17, 0.21, 0.21),
    (0.34, 0.45, 0.56, 0.65, 0.70, 0.15, 0.22, 0.27, 0.32, 0.36),
    (0.35, 0.46, 0.56, 0.65, 0.70, 0.16, 0.23, 0.28, 0.32, 0.36),
    (0.32, 0.42, 0.55, 0.66, 0.70, 0.10, 0.15, 0.18, 0.24, 0.23),
    (0.35, 0.46, 0.56, 0.66, 0.70, 0.18, 0.21, 0.27, 0.29, 0.33),
    (0.36, 0.47, 0.57, 0.66, 0.71, 0.18, 0.23, 0.27, 0.29, 0.33),
    (0.36, 0.49, 0.59, 0.68, 0.75, 0.20, 0.26, 0.30, 0.32, 0.35),
    (0.37, 0.49, 0.56, 0.65, 0.68, 0.29, 0.35, 0.39, 0.41, 0.42),
    (0.38, 0.47, 0.58, 0.65, 0.70, 0.34, 0.41, 0.45, 0.48, 0.50),
]
_T8 = [  # NUS-WIDE AP@1..5, AR@1..5
    (0.30, 0.22, 0.18, 0.15, 0.13, 0.15, 0.21, 0.24, 0.27, 0.28),
    (0.25, 0.19, 0.16, 0.15, 0.13, 0.13, 0.19, 0.23, 0.26, 0.29),
    (0.09, 0.09, 0.09, 0.07, 0.07, 0.05, 0.07, 0.10, 0.12, 0.15),
    (0.15, 0.12, 0.10, 0.08, 0.09, 0.09, 0.13, 0.15, 0.20, 0.20),
    (0.08, 0.09, 0.09, 0.07, 0.07, 0.04, 0.07, 0.09, 0.12, 0.15),
    (0.15, 0.13, 0.12, 0.11, 0.09, 0.09, 0.13, 0.16, 0.20, 0.21),
    (0.16, 0.14, 0.13, 0.11, 0.09, 0.09, 0.14, 0.17, 0.20, 0.23),
    (0.10, 0.09, 0.09, 0.07, 0.07, 0.06, 0.07, 0.11, 0.12, 0.17),
    (0.18, 0.12, 0.11, 0.09, 0.09, 0.10, 0.13, 0.15, 0.18, 0.19),
    (0.18, 0.13, 0.11, 0.09, 0.09, 0.10, 0.13, 0.15, 0.18, 0.19),
    (0.20, 0.15, 0.13, 0.10, 0.09, 0.11, 0.14, 0.16, 0.18, 0.19),
    (0.29, 0.20, 0.17, 0.14, 0.11, 0.15, 0.20, 0.23, 0.25, 0.26),
    (0.34, 0.24, 0.20, 0.17, 0.15, 0.18, 0.24, 0.28, 0.30, 0.32),
]
COMPLETION_MEASURES = ("AP", "AR", "Coverage")
COMPLETION_N = (1, 2, 3, 4, 5)


def completion_table():
    """{dataset: {method key: {measure: (v@1..v@5)}}} from Tables 6, 7, 8."""
    out = {"trecvid": {}, "nuswide": {}}
    for (key, _label), t6, t7, t8 in zip(PAPER_COMPLETION_ROWS, _T6, _T7, _T8, strict=True):
        out["trecvid"][key] = {"AP": t6[:5], "AR": t6[5:], "Coverage": t7[:5]}
        out["nuswide"][key] = {"AP": t8[:5], "AR": t8[5:], "Coverage": t7[5:]}
    return out


def fig5_points():
    """Fig 5 (NMI vs sparseness, TRECVID): NMI(0) from Table 1 and NMI(s) = NMI(0)(1 - drop(s))
    from Table 3 (``derived``: the paper draws these points but does not print them)."""
    t1 = {(mode, key): vals[1] for mode, key, _l, _s, vals in TABLE1}
    out = {}
    for mode, key, label, drops in TABLE3:
        nmi0 = t1[(mode, key)]
        pts = {0.0: nmi0}
        for s, d in zip(SPARSENESS, drops):
            pts[s] = round(nmi0 * (1.0 - d), 4)
        out[(mode, key)] = pts
    return out


# ---------------------------------------------------------------------------------------------
# The four seed papers (the studies ``seed_*``): their published numbers, typed from the papers.
# Their data are not ours (our studies run on the synthetic profiles and Corel16k): the claims
# compare the shape (which method wins), the numbers stand beside ours for reference.
# ---------------------------------------------------------------------------------------------

# Latent Maximum Margin Clustering (Zhou, Lan, Vahdat, Mori, NIPS 2013), Table 1, TRECVID MED 11,
# in %: PUR, NMI, RI, FM. (The extracted text interleaves the PUR and NMI columns; the order is
# fixed by the text, "LMMC improves the MMC baseline by 3% ... in terms of PUR", and by NC's 5.7
# being below any purity of 15 classes.)
LMMC_METRICS = ("PUR", "NMI", "RI", "FM")
LMMC_TABLE1 = {
    "LMMC": (39.0, 28.7, 89.5, 22.1), "MMC": (36.0, 26.6, 89.3, 20.3), "SC": (28.6, 23.6, 87.1, 20.3),
    "KM": (27.0, 23.8, 85.9, 20.4), "NC": (12.9, 5.7, 31.6, 12.7)}

# GHF-ART (Meng, Tan, Xu, TKDE 2014), NUS-WIDE, 9 classes.
# Table 4, overall average precision: adaptive against equal channel weights.
GHFART_TABLE4_AP = {"aw": 0.8971, "ew": 0.8629}
# Table 2(a), means: purity and Rand index of GHF-ART and its semi-supervised version.
GHFART_TABLE2 = {"GHF-ART": {"purity": 0.8863, "ri": 0.7961}, "GHF-ART(SS)": {"purity": 0.9085, "ri": 0.8216}}
# Table 3: average precision per class and number of clusters, whole set vs four subsets.
GHFART_TABLE3 = {
    "whole": {"ap": (0.9339, 0.8814, 0.9685, 0.9231, 0.9368, 0.8755, 0.7782, 0.7829, 0.9932),
              "n_clusters": (3, 2, 3, 4, 2, 3, 3, 1, 1)},
    "subsets": {"ap": (0.9273, 0.9036, 0.9512, 0.9039, 0.9368, 0.8622, 0.7694, 0.8315, 0.9967),
                "n_clusters": (2, 2, 3, 3, 2, 2, 3, 2, 1)},
}
# Sec. 6.1.1 (Fig. 3): the self-adapted tag weight stabilises in [0.7, 0.8]; one pass takes 9.832 s
# (9.610 s with fixed weights); Sec. 6.1.2: "for over 20,000 images, GHF-ART needs less than 10 s".
GHFART_TAG_GAMMA = (0.7, 0.8)
GHFART_SECONDS = {"n_samples": 20000, "seconds": 10.0}

# SFSS (Ma, Yang, Nie, Uijlings, Sebe, ACM MM 2011), Tables 2-4: MAP at 2 % (Corel-5K) or 1 %
# (NUS-WIDE), 5 % and 10 % of the training images labelled. "F-score" is F-score + RLS.
SFSS_SHARES = {"Corel-5K": (0.02, 0.05, 0.10), "NUS-WIDE": (0.01, 0.05, 0.10)}
SFSS_MAP = {
    "Corel-5K": {"sfss": (0.090, 0.112, 0.147), "fscore_rls": (0.069, 0.083, 0.113), "fsnm": (0.078, 0.101, 0.133)},
    "NUS-WIDE": {"sfss": (0.065, 0.087, 0.097), "fscore_rls": (0.058, 0.078, 0.086), "fsnm": (0.059, 0.082, 0.093)},
}
# our data set -> the paper's data set its numbers stand beside
SFSS_PAPER_DATASET = {"nuswide": "NUS-WIDE", "corel16k": "Corel-5K"}

# M-HCRF (Jiang, Wu, Zhang, Tang, Lu, Zhuang, Pattern Recognit. Lett. 2015): Table 1, F1 of every
# method on four data sets; Table 3, F1 of M-HCRF against the number of hidden variables.
MHCRF_TABLE1 = {
    "Pascal07": {"mhcrf": 0.4943, "svm": 0.4706, "crf": 0.4398, "ccasvm": 0.4720, "ccacrf": 0.4584, "unimodal": 0.3134},
    "MIR": {"mhcrf": 0.5110, "svm": 0.4873, "crf": 0.4697, "ccasvm": 0.4944, "ccacrf": 0.4744, "unimodal": 0.3635},
    "Wiki": {"mhcrf": 0.9118, "svm": 0.8408, "crf": 0.7951, "ccasvm": 0.8856, "ccacrf": 0.8473, "unimodal": 0.7810},
    "NUS": {"mhcrf": 0.2386, "svm": 0.2270, "crf": 0.2146, "ccasvm": 0.2282, "ccacrf": 0.2073, "unimodal": 0.1965},
}
MHCRF_TABLE3 = {
    "n_hidden": (1, 2, 3, 5, 10),
    "NUS": (0.2222, 0.2239, 0.2386, 0.2131, 0.1979),
    "Wiki": (0.9118, 0.8646, 0.8448, 0.8226, 0.7723),
}
