"""``results/REPORT.md``: for every study (the HML-RF paper's and the seed papers'), the paper's
claims and whether our run reproduces them."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

from .claims import FAILS, HOLDS, UNCHECKED, evaluate
from .config import HUB_RATIO
from .profiles import STUDIES
from .sanity import CHANCE_ARI, flagged
from .saving import given_settings, key_id, write_text_atomic

_MARK = {HOLDS: "holds", FAILS: "**does not hold**", UNCHECKED: "not checked"}


def _mark(result):
    return "holds (trivially)" if result.verdict == HOLDS and result.trivial else _MARK[result.verdict]


def _open(path):
    import xarray as xr

    with xr.open_dataset(path) as ds:
        return ds.load()


def _not_implemented(ds):
    """(label, reason) of rows that were not measured."""
    if "status" not in ds.variables:
        return []
    st = ds["status"]
    out = []
    labels = ds["label"] if "label" in ds.coords else None
    for idx in np.ndindex(st.shape):
        s = str(st.values[idx])
        if s == "measured":
            continue
        sel = {d: i for d, i in zip(st.dims, idx)}
        name = " / ".join(str(st[d].values[i]) for d, i in sel.items())
        if labels is not None and "row" in sel:
            name = f"{name} ({labels.values[sel['row']]})"
        why = str(ds["reason"].values[idx]) if "reason" in ds.variables else ""
        out.append((name, s, why))
    return out


class UnreadableResult(ValueError):
    """A results file that exists but cannot be read (corrupt or truncated)."""


def _shown(path):
    """``path`` as REPORT.md names it: relative to the repository when inside it (the
    report is committed and read on other machines)."""
    from .._paths import REPO_ROOT

    p = Path(os.path.realpath(path))
    return os.path.relpath(p, REPO_ROOT) if p.is_relative_to(REPO_ROOT) else str(path)


def _first(name, folder, staged):
    """``folder/name``, or its new version in the staging folder ``staged`` if there is one."""
    if staged is not None and (Path(staged) / name).exists():
        return Path(staged) / name
    return Path(folder) / name


def _data_of(attrs):
    """The data sets a result was made on, from its parameters: names as they are, files by
    their name (so a study run on your own data says so, and no machine path is shown)."""
    try:
        p = json.loads(attrs.get("parameters", "{}"))
    except (TypeError, ValueError):
        return ""
    names = []
    for key in ("datasets", "dataset", "completion_datasets"):
        v = p.get(key)
        for d in (v if isinstance(v, list) else [v] if v else []):
            shown = f"`{Path(str(d)).name}`"
            if shown not in names:
                names.append(shown)
    return ", ".join(names)


def _settings_line(attrs):
    """The settings a run was given beyond its profile (the runner's ``--set``, from its key),
    so that a table made with fewer trees or methods is not read as the profile's; for a
    result made outside the runner, which stores no key, a line saying so."""
    given = given_settings(attrs.get("run_key"))
    if given is None:
        return ["Run outside the study runner: the settings it was given beyond its profile are not "
                "recorded apart (its `parameters` attribute holds all of them)."]
    return [f"Settings other than the profile's: {', '.join(f'`{s}`' for s in given)}."] if given else []


def study_section(name, results_dir, figures_dir=None, staged=(None, None, None)):
    """Markdown for one study, and its claim results. ``staged``: the staging folders
    (results, figures and, optionally, ``results_dir/executed``) of a run about to be
    committed (``hmlkit.studies.runner``), whose files stand for those of ``results_dir`` /
    ``figures_dir`` / its executed notebooks. A results file that cannot be read raises
    :class:`UnreadableResult` naming it."""
    staged = tuple(staged) + (None,) * (3 - len(staged))
    path = _first(f"{name}.nc", results_dir, staged[0])
    lines = [f"## {name}", ""]
    if not path.exists():
        lines += [f"No result: `{_shown(Path(results_dir) / f'{name}.nc')}` missing (study not run or failed).", ""]
        return lines, []
    try:
        ds = _open(path)
    except Exception as exc:  # whatever the netCDF backend raises on a corrupt file
        raise UnreadableResult(f"{_shown(Path(results_dir) / path.name)} cannot be read "
                               f"({type(exc).__name__}: {str(exc).strip() or 'no detail'})") from exc
    attrs = ds.attrs
    data = _data_of(attrs)
    lines.append(f"Profile `{attrs.get('profile', '?')}`, " + (f"data {data}, " if data else "")
                 + f"seed {attrs.get('seed', '?')}, "
                 f"{attrs.get('duration_s', '?')} s, commit `{attrs.get('git_commit', '?')}`, "
                 f"key `{key_id(attrs.get('run_key'))}`.")
    lines += _settings_line(attrs)
    lines.append("")
    results = evaluate(name, ds)
    lines += ["| claim (paper) | verdict | our numbers | diagnosis |", "|---|---|---|---|"]
    for r in results:
        why = r.diagnosis or (f"holds trivially: {r.trivial}" if r.trivial else "")
        lines.append(f"| {r.text} | {_mark(r)} | {r.detail.replace('|', '/')} | {why.replace('|', '/')} |")
    lines.append("")
    bad = flagged(ds)
    if bad:
        lines.append(f"**Flagged results** ({len(bad)}; not clean measurements: a number of clusters other "
                     f"than asked, a catch-all cluster over {HUB_RATIO:g}x the largest true group, or a "
                     f"chance-level partition, ARI < {CHANCE_ARI:g}):")
        lines.append("")
        lines += [f"- {where}: {problems}" for where, problems in bad]
        lines.append("")
    ni = _not_implemented(ds)
    if ni:
        lines.append(f"Rows not measured ({len(ni)}):")
        lines.append("")
        for what, status, why in ni:
            lines.append(f"- {what}: {status}" + (f" ({why})" if why else ""))
        lines.append("")
    fig = Path(figures_dir) / f"{name}.png" if figures_dir else Path(attrs.get("figure", ""))
    if fig and _first(fig.name, fig.parent, staged[1]).exists():
        rel = os.path.relpath(Path(fig).resolve(), Path(results_dir).resolve())
        lines += [f"![{name}]({rel})", ""]
    # the executed notebook beside the result: its page on the documentation site, on GitHub its render
    if _first(f"{name}.ipynb", Path(results_dir) / "executed", staged[2]).exists():
        lines += [f"The executed notebook: [executed/{name}.ipynb](executed/{name}.ipynb).", ""]
    return lines, results


def _warn(msg):
    print(f"warning: {msg}", file=sys.stderr)


def render_report(results_dir="results", figures_dir="figures", names=None, staged=(None, None, None), log=_warn):
    """The text of ``REPORT.md`` from the ``.nc`` files found (and those of ``staged``, as
    :func:`study_section`) for studies ``names`` (default all), and the claim results. A
    results file that cannot be read is named at the top, in its section and by ``log``;
    the other studies are reported."""
    body, allres, unreadable = [], [], []
    for name in STUDIES if names is None else names:
        try:
            lines, res = study_section(name, results_dir, figures_dir, staged)
        except UnreadableResult as exc:
            log(f"{exc}: study {name} is left out of the report")
            unreadable.append(str(exc))
            lines, res = [f"## {name}", "", f"**Unreadable result**: {exc}. Run the study again.", ""], []
        body += lines
        allres += res
    counts = {v: sum(r.verdict == v for r in allres) for v in (HOLDS, FAILS, UNCHECKED)}
    n_trivial = sum(bool(r.trivial) for r in allres if r.verdict == HOLDS)
    head = ["# HML-RF paper studies: our numbers beside the paper's", "",
            "Each claim below is one the HML-RF paper makes in Section 4 or, for the `seed_*` studies, one "
            "of a seed paper's (its published numbers beside ours); the verdict is judged on our run "
            "(`hmlkit.studies.claims`). A claim that does not hold on our data is reported as such. "
            "Data are the kit's synthetic `trecvid` / `nuswide` profiles unless a study says otherwise.", "",
            f"Claims: {counts[HOLDS]} hold ({n_trivial} of them trivially: the study could not have shown "
            f"otherwise), {counts[FAILS]} do not hold, {counts[UNCHECKED]} not checked (methods not implemented "
            "or not run). Each claim that does not hold has a diagnosis: the likely reason, from checks run "
            "on the study's result (`hmlkit.studies.claims.diagnose`).", ""]
    if allres:
        head += ["| study | claim | verdict |", "|---|---|---|"]
        head += [f"| {r.study} | {r.text} | {_mark(r)} |" for r in allres]
        head.append("")
    if unreadable:
        head += [f"**Unreadable results** ({len(unreadable)}, left out above):", ""]
        head += [f"- {u}" for u in unreadable] + [""]
    return "\n".join(head + body) + "\n", allres


def write_report(results_dir="results", figures_dir="figures", names=None, path=None, log=_warn):
    """Write ``results_dir/REPORT.md`` from the ``.nc`` files found (:func:`render_report`);
    returns (path, claim results)."""

    text, allres = render_report(results_dir, figures_dir, names, log=log)
    out = Path(path) if path else Path(results_dir) / "REPORT.md"
    write_text_atomic(text, out)
    return out, allres


def claims_json(results):
    return json.dumps([r.__dict__ for r in results], indent=1)
