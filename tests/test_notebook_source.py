"""One source for the notebooks: the .ipynb files in studies/ are the
source, edited in JupyterLab and kept in the canonical form studies/_normalize.py writes
(`make notebooks`). The two sides are a notebook as saved and its canonical form: a
notebook that drifts from it fails here, and normalising restores it without undoing an edit."""
import importlib.util
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from hmlkit.studies.profiles import STUDIES

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "studies").glob("*.ipynb"))
_spec = importlib.util.spec_from_file_location("studies_normalize", ROOT / "studies" / "_normalize.py")
norm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(norm)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_in_canonical_form(path):
    text = path.read_text(encoding="utf-8")
    out, changes, errors = norm.canonical(text, path.name)
    assert not errors, errors
    assert out == text, "not canonical, run `make notebooks`: " + "; ".join(changes)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_papermill_reads_every_parameter(path):
    """papermill skips a parameter line it cannot parse (an equals sign in its comment did it to
    explore's sweep_fixed: ``-p sweep_fixed ...`` then had no default to replace, and it warned)."""
    import ast

    from papermill.translators import PythonTranslator

    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assigned = {t.id for n in ast.parse(cell.source).body if isinstance(n, ast.Assign)
                for t in n.targets if isinstance(t, ast.Name)}
    assert {p.name for p in PythonTranslator.inspect(cell)} == assigned


def test_the_notebooks_are_the_only_source():
    """No generator holds the cells a second time, and every study has its notebook."""
    assert not (ROOT / "studies" / "_build_notebooks.py").exists()
    assert {p.stem for p in NOTEBOOKS} == set(STUDIES) | {"explore", "bench_speed"}


# ------------------------------------------------------------ drift on a temp copy is caught

def _copy(tmp_path, name="real_corel"):
    path = tmp_path / f"{name}.ipynb"
    shutil.copyfile(ROOT / "studies" / f"{name}.ipynb", path)
    return path, path.read_text(encoding="utf-8")


def _edit(path, change):
    nb = json.loads(path.read_text(encoding="utf-8"))
    change(nb)
    path.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def _code(nb, k):
    return [c for c in nb["cells"] if c["cell_type"] == "code"][k]


OUTPUT = {"output_type": "stream", "name": "stdout", "text": ["0.61\n"]}
DRIFTS = {
    "output left": (lambda nb: _code(nb, 2)["outputs"].append(OUTPUT), "outputs cleared"),
    "execution_count": (lambda nb: _code(nb, 1).update(execution_count=3), "execution_count cleared"),
    "language_info": (lambda nb: nb["metadata"].update(language_info={"name": "python", "version": "3.12"}),
                      "only the python3 kernelspec"),
    "other kernel": (lambda nb: nb["metadata"]["kernelspec"].update(name="hmlkit", display_name="hmlkit"),
                     "only the python3 kernelspec"),
    "cell metadata": (lambda nb: _code(nb, 0)["metadata"].update(scrolled=True, execution={"iopub": "x"}),
                      "metadata ['execution', 'scrolled'] removed"),
    "empty cell": (lambda nb: nb["cells"].append(nbformat.v4.new_code_cell("\n")), "empty code cells"),
    "id missing": (lambda nb: nb["cells"][0].pop("id"), "id added"),
    "layout": (lambda nb: None, "JSON layout"),  # indented by 2 below, content unchanged
}


@pytest.mark.parametrize("drift", DRIFTS)
def test_drift_fails_the_check_and_normalising_restores_the_notebook(tmp_path, capsys, drift):
    path, original = _copy(tmp_path)
    change, message = DRIFTS[drift]
    _edit(path, change)
    if drift == "layout":
        path.write_text(path.read_text().replace('\n "', '\n  "'), encoding="utf-8")
    if drift == "id missing":  # a stable id is derived from the cell (the same on every run)
        first = nbformat.reads(original, 4).cells[0]
        original = original.replace(first.id, norm._new_id(0, first.source, set()))
    assert path.read_text(encoding="utf-8") != original

    assert norm.main(["--check", str(path)]) == 1
    printed = capsys.readouterr().out
    assert f"not canonical: {path.name}: " in printed and message in printed and "make notebooks" in printed
    assert norm.main([str(path)]) == 0
    assert path.read_text(encoding="utf-8") == original
    assert norm.main(["--check", str(path)]) == 0


def test_an_edit_of_the_code_is_kept(tmp_path):
    """Normalising strips what running and saving add, never what the researcher wrote:
    the builder overwrote the hand fix of real_corel; this keeps it."""
    path, original = _copy(tmp_path)
    fix = 'comp = study.load_datasets(cfg["completion_datasets"], cfg, random_state=seed, n_samples=cfg["n_samples"])'
    assert fix in nbformat.reads(original, 4).cells[6].source
    _edit(path, lambda nb: (_code(nb, 0)["source"].append("n_jobs = 2\n"), _code(nb, 4).update(outputs=[OUTPUT])))
    assert norm.main([str(path)]) == 0
    nb = nbformat.read(str(path), 4)
    assert nb.cells[1].source.endswith("fold)\nn_jobs = 2\n") and fix in nb.cells[6].source
    assert all(c.outputs == [] for c in nb.cells if c.cell_type == "code")


@pytest.mark.parametrize("drift, message", [
    (lambda nb: _code(nb, 0)["metadata"].pop("tags"), "exactly one code cell tagged 'parameters', has 0"),
    (lambda nb: _code(nb, 1)["metadata"].update(tags=["parameters"]), "has 2"),
    (lambda nb: nb["cells"].insert(1, nbformat.v4.new_code_cell("import numpy")), "must be the first code cell"),
    (lambda nb: nb["cells"].pop(0), "markdown title"),
], ids=["no parameters tag", "two parameters cells", "parameters not first", "no title"])
def test_structure_normalising_cannot_fix_fails_even_after_normalising(tmp_path, capsys, drift, message):
    path, _ = _copy(tmp_path)
    _edit(path, drift)
    assert norm.main([str(path)]) == 1
    assert f"fix by hand: {path.name}: " in capsys.readouterr().out
    assert any(message in e for e in norm.canonical(path.read_text(), path.name)[2])


def test_a_save_from_jupyterlab_is_normalised_back(tmp_path, monkeypatch):
    """JupyterLab saves through jupyter_server's contents manager: run outputs, counts and
    language_info land in the file; normalising takes the file back to the committed one."""
    fm = pytest.importorskip("jupyter_server.services.contents.filemanager")
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))  # the notary's signature db
    path, original = _copy(tmp_path)
    cm = fm.FileContentsManager(root_dir=str(tmp_path))
    model = cm.get(path.name)
    nb = model["content"]
    nb.metadata["language_info"] = {"name": "python", "version": "3.12.3", "file_extension": ".py"}
    for n, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        cell.execution_count = n + 1
        cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "cfg"}, execution_count=n + 1)]
        cell.metadata["execution"] = {"iopub.status.idle": "2025-01-01T00:00:00Z"}
    cm.save(model, path.name)
    assert norm.main(["--check", str(path)]) == 1
    assert norm.main([str(path)]) == 0
    assert path.read_text(encoding="utf-8") == original


def test_bad_input_is_a_clear_error(tmp_path):
    bad = tmp_path / "broken.ipynb"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="broken.ipynb: not a readable notebook"):
        norm.normalize(bad)
    assert norm.main(["--check", str(bad)]) == 1
    with pytest.raises(SystemExit):
        norm.main([str(tmp_path / "notes.txt")])
