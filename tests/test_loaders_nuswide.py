"""NUS-WIDE loader on small fixtures written in the official layout by the tests."""
import re

import numpy as np
import pytest

from hmlkit.data.nuswide import FEATURE_TYPES, GHFART_9, load_nuswide, select_images

N = 40
TAGS = [f"t{j}" for j in range(12)]


def _write_matrix(path, M, fmt):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        for row in M:
            fh.write(" ".join(fmt(v) for v in row) + "\n")


def make_layout(root, concepts, labels, seed=0, sep="\t"):
    """Write an official-layout NUS-WIDE of N images; return the arrays written."""
    rng = np.random.default_rng(seed)
    (root / "ImageList").mkdir(parents=True)
    (root / "ImageList" / "Imagelist.txt").write_text(
        "".join(f"C:\\ImageData\\Flickr\\c{i % 5}\\{i:04d}_{1000 + i}.jpg\n" for i in range(N))
    )
    feats = {}
    for t, d in FEATURE_TYPES.items():
        F = rng.random((N, d)).astype(np.float32)
        name = "BoW_int.dat" if t == "BoW_int" else f"Normalized_{t}.dat"
        _write_matrix(root / "Low_Level_Features" / name, F, lambda v: repr(float(v)))
        feats[t] = F
    Y = (rng.random((N, len(TAGS))) < 0.2).astype(np.uint8)
    Y[3] = 0  # an untagged image
    (root / "NUS_WID_Tags").mkdir()
    (root / "NUS_WID_Tags" / "TagList1k.txt").write_text("\n".join(TAGS) + "\n")
    with open(root / "NUS_WID_Tags" / "AllTags1k.txt", "w") as fh:
        for row in Y:
            fh.write(sep.join(str(v) for v in row) + sep + "\n")  # trailing separator as in the release
    lab_dir = root / "Groundtruth" / "AllLabels"
    lab_dir.mkdir(parents=True)
    for k, c in enumerate(concepts):
        (lab_dir / f"Labels_{c}.txt").write_text("".join(f"{int(v)}\n" for v in labels[:, k]))
    return feats, Y


def _labels(n_concepts, seed=1):
    rng = np.random.default_rng(seed)
    L = np.zeros((N, n_concepts), dtype=bool)
    L[np.arange(N), rng.integers(0, n_concepts, N)] = True
    L[rng.random(N) < 0.25, 0] = True  # some multi-concept images
    return L


@pytest.fixture
def layout(tmp_path):
    concepts = ["animal", "beach", "clouds", "sky"]
    labels = _labels(4)
    feats, Y = make_layout(tmp_path / "NUS-WIDE", concepts, labels)
    return tmp_path / "NUS-WIDE", concepts, labels, feats, Y


def test_all_images_exact_arrays(layout):
    root, _, _, feats, Y = layout
    d = load_nuswide(root, features=["CH", "EDH"], recipe=None)
    assert d.n_samples == N and d.tag_names == TAGS and d.groups is None
    np.testing.assert_array_equal(d.X, np.hstack([feats["CH"], feats["EDH"]]))
    np.testing.assert_array_equal(d.Y.toarray(), Y)
    assert d.meta["image_index"] == list(range(N))
    all6 = load_nuswide(root, recipe=None)
    assert all6.n_features == sum(FEATURE_TYPES.values()) == 1134


def test_hmlrf_recipe_groups_are_single_concept_images(layout):
    root, concepts, labels, feats, Y = layout
    d = load_nuswide(root, features="WT", recipe="hmlrf", n_groups=2, min_group_size=3, random_state=4)
    single = labels.sum(1) == 1
    chosen = [concepts.index(c) for c in d.meta["group_names"]]
    assert len(chosen) == 2
    expect_rows = np.flatnonzero(single & labels[:, chosen].any(1))
    np.testing.assert_array_equal(d.meta["image_index"], expect_rows)
    np.testing.assert_array_equal(d.groups, labels[expect_rows][:, chosen].argmax(1))
    np.testing.assert_array_equal(d.X, feats["WT"][expect_rows])
    np.testing.assert_array_equal(d.Y.toarray(), Y[expect_rows])
    again = load_nuswide(root, features="WT", recipe="hmlrf", n_groups=2, min_group_size=3, random_state=4)
    assert again.meta["group_names"] == d.meta["group_names"]
    capped = load_nuswide(root, features="WT", recipe="hmlrf", n_groups=2, min_group_size=3,
                          max_per_group=2, random_state=4)
    assert np.bincount(capped.groups).max() <= 2
    with pytest.raises(ValueError, match="only .* qualify"):
        load_nuswide(root, features="WT", recipe="hmlrf", n_groups=30)


def test_ghfart_recipes(tmp_path):
    concepts = list(GHFART_9) + ["tree"]
    labels = _labels(len(concepts), seed=2)
    feats, Y = make_layout(tmp_path / "nw", concepts, labels)
    d = load_nuswide(tmp_path / "nw", recipe="ghfart9", random_state=0)
    assert d.n_features == 225 + 73 + 128  # CM55 + EDH + WT, GHF-ART's 426-D
    sub = labels[:, :9]
    expect = np.flatnonzero(sub.sum(1) == 1)
    np.testing.assert_array_equal(d.meta["image_index"], expect)
    np.testing.assert_array_equal(d.X, np.hstack([feats[t][expect] for t in ("CM55", "EDH", "WT")]))
    assert d.meta["group_names"] == list(GHFART_9)
    with pytest.raises(ValueError, match="ghfart18.*needs concepts"):
        load_nuswide(tmp_path / "nw", recipe="ghfart18")


def test_precomputed_features(layout, tmp_path):
    root, *_ = layout
    cnn = np.random.default_rng(0).random((N, 16)).astype(np.float32)
    np.save(tmp_path / "cnn.npy", cnn)
    d = load_nuswide(root, features=tmp_path / "cnn.npy", recipe=None)
    np.testing.assert_array_equal(d.X, cnn)
    np.save(tmp_path / "short.npy", cnn[:-1])
    with pytest.raises(ValueError, match=r"short\.npy.*one row per line"):
        load_nuswide(root, features=tmp_path / "short.npy", recipe=None)


def _rewrite_line(path, line_no, new):
    lines = path.read_text().splitlines(keepends=True)
    lines[line_no - 1] = new
    path.write_text("".join(lines))


def test_malformed_files_name_file_and_line(layout):
    root, *_ = layout
    tags = root / "NUS_WID_Tags" / "AllTags1k.txt"
    _rewrite_line(tags, 7, "0\t1\t0\n")
    with pytest.raises(ValueError, match=r"AllTags1k\.txt, line 7: has 3 values, TagList1k\.txt names 12"):
        load_nuswide(root, features="CH", recipe=None)
    _rewrite_line(tags, 7, "\t".join(["0"] * 11 + ["2"]) + "\n")
    with pytest.raises(ValueError, match=r"AllTags1k\.txt, line 7: column 12: expected 0 or 1, got '2'"):
        load_nuswide(root, features="CH", recipe=None)


def test_truncated_dat_files(layout):
    root, *_ = layout
    dat = root / "Low_Level_Features" / "Normalized_EDH.dat"
    text = dat.read_text()
    dat.write_text(text[: len(text) // 2])  # cut mid-line: fewer rows and a short last row
    with pytest.raises(ValueError, match=r"Normalized_EDH\.dat: has 20 rows but .*40 images \(truncated file\?\)"):
        load_nuswide(root, features="EDH", recipe=None)
    lines = text.splitlines(keepends=True)
    dat.write_text("".join(lines[:-1]) + " ".join(lines[-1].split()[:50]) + "\n")
    with pytest.raises(ValueError, match=r"Normalized_EDH\.dat, line 40: has 50 values; EDH features are 73-D"):
        load_nuswide(root, features="EDH", recipe=None)
    bad = lines[:]
    bad[4] = bad[4].replace(bad[4].split()[3], "abc", 1)
    dat.write_text("".join(bad))
    with pytest.raises(ValueError, match=r"Normalized_EDH\.dat, line 5: not a number: 'abc'"):
        load_nuswide(root, features="EDH", recipe=None)


def test_bad_labels_tags_and_names(layout):
    root, *_ = layout
    lab = root / "Groundtruth" / "AllLabels" / "Labels_sky.txt"
    lab.write_text("".join(lab.read_text().splitlines(keepends=True)[:-3]))
    with pytest.raises(ValueError, match=r"Labels_sky\.txt: has 37 rows but ImageList/Imagelist\.txt lists 40"):
        load_nuswide(root, features="CH", recipe="hmlrf", n_groups=1, min_group_size=1)
    with pytest.raises(FileNotFoundError, match=r"unknown NUS-WIDE concept 'skyy': .*Labels_skyy\.txt"):
        load_nuswide(root, features="CH", concepts=["animal", "skyy"], n_groups=1, min_group_size=1)
    lab.write_text("0\n" * 10 + "yes\n" + "0\n" * 29)
    with pytest.raises(ValueError, match=r"Labels_sky\.txt, line 11: expected 0 or 1, got 'yes'"):
        load_nuswide(root, features="CH", recipe="hmlrf", n_groups=1, min_group_size=1)
    with pytest.raises(ValueError, match="unknown NUS-WIDE feature type 'HOG'"):
        load_nuswide(root, features=["CH", "HOG"], recipe=None)
    with pytest.raises(ValueError, match="unknown recipe"):
        load_nuswide(root, features="CH", recipe="nine")
    taglist = root / "NUS_WID_Tags" / "TagList1k.txt"
    taglist.write_text("\n".join(TAGS[:-1] + ["t0"]) + "\n")
    with pytest.raises(ValueError, match=re.escape("TagList1k.txt, line 12: tag 't0' repeats line 1")):
        load_nuswide(root, features="CH", recipe=None)
    with pytest.raises(FileNotFoundError, match="root folder not found"):
        load_nuswide(root / "nope")


def test_select_images_recipe_logic():
    L = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0]], dtype=bool)
    rows, groups, names = select_images(L, ["a", "b", "c"], "hmlrf", n_groups=2, min_group_size=1, random_state=0)
    assert names == ["a", "b"]  # only a and b have > 1 single-concept image
    np.testing.assert_array_equal(rows, [0, 2, 4, 5])
    np.testing.assert_array_equal(groups, [0, 1, 1, 0])


def test_select_images_exclusive_over_chosen():
    # a is positive on rows 0,1,5 ; b on 1,2,4 ; c on 3 and 1
    L = np.array([[1, 0, 0], [1, 1, 1], [0, 1, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0]], dtype=bool)
    rows, groups, names = select_images(L, ["a", "b", "c"], "hmlrf", n_groups=2, min_group_size=2,
                                        exclusive="chosen", random_state=0)
    assert names == ["a", "b"]  # c has only 2 positive images
    np.testing.assert_array_equal(rows, [0, 2, 4, 5])  # row 1 is positive for both a and b
    with pytest.raises(ValueError, match="exclusive must be"):
        select_images(L, ["a", "b", "c"], "hmlrf", exclusive="all")


def test_a_feature_type_mistake_names_the_types(layout):
    root = layout[0]
    with pytest.raises(FileNotFoundError, match="NUS-WIDE feature types: CH, CM55"):  # a typo of a type name
        load_nuswide(root, features="XYZ", recipe=None)
    with pytest.raises(ValueError, match="features lists no feature type"):  # was numpy's hstack error
        load_nuswide(root, features=[], recipe=None)
