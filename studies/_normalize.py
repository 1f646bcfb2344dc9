"""The study notebooks are their own source: edit them in JupyterLab, then put them in
canonical form before committing:

    make notebooks                                  # python studies/_normalize.py
    python studies/_normalize.py --check [NOTEBOOK ...]   # list what is not canonical, exit 1

Canonical form (what tests/test_notebook_source.py checks on every studies/*.ipynb):
outputs cleared and execution counts None; notebook metadata the python3 kernelspec only
(JupyterLab adds language_info); cell metadata the tags only (it adds collapsed, scrolled,
execution timings); no empty code cell; every cell keeps its id (a diff shows only real
edits); the JSON as nbformat writes it. Normalising cannot fix the structure, which is
reported for a hand fix: a markdown title first, and exactly one ``parameters``-tagged
cell, the first code cell (papermill injects a run's parameters after it, before the
validation cell).
"""
import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def canonical(text, name="notebook"):
    """(canonical text, changes, errors) of the notebook ``text``: the changes normalising
    makes, and the structural errors it cannot fix, each a message naming ``name``."""
    changes = []
    try:
        raw = json.loads(text)
        # ids first: nbformat would fill a missing one at random, different on every run
        ids = {c["id"] for c in raw.get("cells", []) if c.get("id")}
        for i, cell in enumerate(raw.get("cells", [])):
            if not cell.get("id"):
                cell["id"] = _new_id(i, "".join(cell.get("source", "")), ids)
                ids.add(cell["id"])
                changes.append(f"cell {i}: id added")
        nb = nbformat.reads(json.dumps(raw), as_version=4)
    except Exception as e:  # json, nbformat's NotJSONError, ValidationError, ...
        raise ValueError(f"{name}: not a readable notebook ({e})") from e
    if nb.metadata != {"kernelspec": KERNELSPEC}:
        changes.append(f"notebook metadata {sorted(nb.metadata)}: only the python3 kernelspec is kept")
    nb.metadata = nbformat.from_dict({"kernelspec": dict(KERNELSPEC)})
    empty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and not c.source.strip()]
    if empty:
        changes.append(f"empty code cells {empty} removed")
    nb.cells = [c for i, c in enumerate(nb.cells) if i not in empty]
    seen = set()
    for i, cell in enumerate(nb.cells):
        keep = {"tags": list(cell.metadata["tags"])} if cell.metadata.get("tags") else {}
        if cell.metadata != keep:
            changes.append(f"cell {i}: metadata {sorted(set(cell.metadata) - {'tags'}) or ['tags: []']} removed")
        cell.metadata = nbformat.from_dict(keep)
        if cell.cell_type == "code":
            if cell.outputs:
                changes.append(f"cell {i}: outputs cleared")
            if cell.execution_count is not None:
                changes.append(f"cell {i}: execution_count cleared")
            cell.outputs, cell.execution_count = [], None
        if cell.id in seen:
            cell.id = _new_id(i, cell.source, ids)
            ids.add(cell.id)
            changes.append(f"cell {i}: duplicate id replaced")
        seen.add(cell.id)
    nb.nbformat_minor = nbformat.v4.nbformat_minor  # cell ids need 4.5
    out = nbformat.writes(nb)
    out += "" if out.endswith("\n") else "\n"
    if out != text and not changes:
        changes.append("JSON layout rewritten as nbformat writes it")
    return out, [f"{name}: {c}" for c in changes], [f"{name}: {e}" for e in _structure(nb)]


def _new_id(i, source, taken):
    """A stable id for a cell that has none (derived from its place and source)."""
    k = 0
    while (cid := hashlib.sha1(f"{i}:{k}:{source}".encode()).hexdigest()[:8]) in taken:
        k += 1
    return cid


def _structure(nb):
    errors = []
    if not nb.cells or nb.cells[0].cell_type != "markdown" or not nb.cells[0].source.startswith("# "):
        errors.append("the first cell must be a markdown title ('# ...')")
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    tagged = [i for i in code if "parameters" in nb.cells[i].metadata.get("tags", [])]
    if len(tagged) != 1:
        errors.append(f"needs exactly one code cell tagged 'parameters', has {len(tagged)} ({tagged})")
    elif tagged[0] != code[0]:
        errors.append(f"the 'parameters' cell ({tagged[0]}) must be the first code cell ({code[0]})")
    return errors


def normalize(path, write=True):
    """(changes, errors) of notebook ``path``; with ``write``, rewrite it in canonical form
    when it is not (atomically: an interrupted write leaves the old file)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    out, changes, errors = canonical(text, path.name)
    if write and out != text:
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(out, encoding="utf-8")
        os.replace(tmp, path)
    return changes, errors


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks", nargs="*", type=Path, help="default: every studies/*.ipynb")
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if any is not canonical")
    args = ap.parse_args(argv)
    paths = args.notebooks or sorted(HERE.glob("*.ipynb"))
    bad = False
    for path in paths:
        if path.suffix != ".ipynb" or not path.is_file():
            ap.error(f"notebooks: {path} is not an .ipynb file")
        try:
            changes, errors = normalize(path, write=not args.check)
        except ValueError as e:
            changes, errors = [], [str(e)]
        for msg in changes:
            print(("not canonical: " if args.check else "normalised: ") + msg)
        for msg in errors:
            print("fix by hand: " + msg)
        bad |= bool(errors) or (args.check and bool(changes))
    if bad and args.check:
        print("run `make notebooks` (python studies/_normalize.py) to normalise")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
