"""Imports run one way: studies -> baselines -> estimators -> kernels -> primitives.

The graph is read from the sources with ``ast`` (every ``import`` of the kit's own modules,
at module level or inside a function, since both run), not by importing anything. An import
``from a.b import c`` counts as an edge to the module ``a.b.c`` when there is one, else to
``a.b``. The package ``__init__`` Python runs before a module of the package is not an edge
unless the module imports it by name (``from . import x``)."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("hmlkit", "benchmarks")  # the kit, and the benchmarks beside it (not installed with it)

# the kit's core: what a user of the estimators imports; it never reaches the studies,
# the baselines of the comparison tables, the benchmarks or the widgets
CORE = ("hmlkit.forest", "hmlkit.affinity", "hmlkit.complete", "hmlkit.cluster", "hmlkit.tags", "hmlkit.metrics",
        "hmlkit.features", "hmlkit.data", "hmlkit.primitives", "hmlkit.executors", "hmlkit.dask_backend")
ABOVE_CORE = ("hmlkit.studies", "hmlkit.baselines", "benchmarks", "hmlkit.explore")
# the panels of studies/explore.ipynb: the top of the kit, which nothing else imports
EXPLORE = "hmlkit.explore"


def _modules():
    mods = {}
    for p in (path for pkg in PACKAGES for path in (ROOT / pkg).rglob("*.py")):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    return mods


def _targets(mods, name, node):
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] in PACKAGES]
    if node.level:
        base = name.split(".") if mods[name].name == "__init__.py" else name.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        mod = ".".join(base + ([node.module] if node.module else []))
    else:
        mod = node.module or ""
    if mod.split(".")[0] not in PACKAGES:
        return []
    return [f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod for a in node.names]


def import_graph():
    """{module: set of the kit's modules it imports}."""
    mods = _modules()
    graph = {}
    for name, path in mods.items():
        out = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for t in _targets(mods, name, node):
                    while t not in mods:  # hmlkit.x.name of a function: the module hmlkit.x
                        t = t.rsplit(".", 1)[0]
                    if t != name:
                        out.add(t)
        graph[name] = out
    return graph


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _within(name, prefixes):
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _reach(graph, start):
    seen, todo = set(), [start]
    while todo:
        for w in graph.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def test_the_graph_sees_the_imports():
    g = import_graph()
    assert "hmlkit.forest._grow" in g["hmlkit.forest.estimator"]
    assert "hmlkit.primitives.rng" in g["hmlkit.forest._grow"]
    assert "hmlkit.affinity.leaf" in g["hmlkit.affinity"]
    assert {"benchmarks.common", "benchmarks.peers", "benchmarks.scale", "hmlkit.data"} <= g["benchmarks.speed"]


def test_no_import_cycles():
    found = [sorted(c) for c in cycles(import_graph())]
    assert not found, f"import cycles: {found}"


def _subpackage(name):
    return ".".join(name.split(".")[:2])


def test_no_cycles_between_subpackages():
    """forest, affinity and dask_backend imported each other (each module alone was no cycle)."""
    g = {}
    for m, targets in import_graph().items():
        g.setdefault(_subpackage(m), set()).update(_subpackage(t) for t in targets if _subpackage(t) != _subpackage(m))
    found = [sorted(c) for c in cycles(g)]
    assert not found, f"cycles between subpackages: {found}"


def test_the_cycle_finder_finds_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


def test_the_core_never_reaches_studies_baselines_benchmarks_or_widgets():
    g = import_graph()
    bad = {m: sorted(t for t in _reach(g, m) if _within(t, ABOVE_CORE)) for m in g if _within(m, CORE)}
    bad = {m: t for m, t in bad.items() if t}
    assert not bad, f"core modules reaching above the core: {bad}"


def test_the_kit_never_imports_the_benchmarks():
    """The benchmarks left the package: nothing in it may need them (they are not installed)."""
    g = import_graph()
    bad = {m: sorted(t for t in targets if _within(t, ("benchmarks",))) for m, targets in g.items()
           if _within(m, ("hmlkit",))}
    assert not {m: t for m, t in bad.items() if t}, bad


def test_primitives_and_executors_know_nothing_of_the_estimators():
    """The lowest layers: the numba primitives import only each other; the executors (local
    threads, Dask) are handed the function to run and import no forest, affinity or completer."""
    g = import_graph()
    for m, targets in g.items():
        if _within(m, ("hmlkit.primitives",)):
            assert all(_within(t, ("hmlkit.primitives",)) for t in targets), (m, targets)
        if _within(m, ("hmlkit.executors", "hmlkit.dask_backend")):
            assert not any(_within(t, ("hmlkit.forest", "hmlkit.affinity", "hmlkit.complete", "hmlkit.cluster"))
                           for t in targets), (m, targets)


def test_nothing_below_the_explore_panels_imports_them():
    """The sweep engine and the two panels (hmlkit.explore) sit above the studies: no study,
    baseline, estimator or benchmark imports them."""
    g = import_graph()
    bad = {m: sorted(t for t in targets if _within(t, (EXPLORE,))) for m, targets in g.items()
           if not _within(m, (EXPLORE,))}
    assert not {m: t for m, t in bad.items() if t}, bad
    assert {"hmlkit.explore.engine", "hmlkit.explore.widgets"} <= g["hmlkit.explore.panel"]


def test_the_sweep_engine_runs_without_widgets():
    """The engine runs headless (papermill, scripts): it imports neither panel nor ipywidgets,
    and the package's __init__ imports nothing, so importing the engine loads no widget."""
    g = import_graph()
    assert not g["hmlkit.explore.engine"] & {"hmlkit.explore.panel", "hmlkit.explore.widgets"}
    assert not g["hmlkit.explore"]
    tree = ast.parse((ROOT / "hmlkit" / "explore" / "engine.py").read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not any(n.split(".")[0] == "ipywidgets" for n in names)


def test_the_explore_modules_import_no_private_name_of_each_other():
    """The sweep panel took the method list through widgets._method_options: each module of the
    package offers the others public names only."""
    mods = _modules()
    bad = []
    for name, path in mods.items():
        if not _within(name, (EXPLORE,)):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and any(
                    t.startswith(EXPLORE) for t in _targets(mods, name, node)):
                bad += [(name, a.name) for a in node.names if a.name.startswith("_")]
    assert not bad, f"private names imported across hmlkit.explore: {bad}"


# ------------------------------------------------------------------ one home for each name
def _defined(path):
    """The names a module defines at its top level (functions, classes, assignments)."""
    out = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def imported_names():
    """``(importer, source module, name)`` of every ``from <kit module> import name``."""
    mods = _modules()
    out = []
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                for alias, target in zip(node.names, _targets(mods, name, node)):
                    if target in mods:
                        out.append((name, target, alias.name))
    return out


def _through(source, home):
    """Imports of a name defined in ``home`` made through ``source`` instead (by any kit module
    but ``source`` itself, which re-exports them for users)."""
    names = _defined(_modules()[home])
    return sorted(f"{m} imports {n} from {s}" for m, s, n in imported_names()
                  if s == source and m != source and n in names)


def test_spectral_functions_are_imported_from_hmlkit_spectral():
    """``hmlkit.cluster`` re-exports the graph functions for users; the kit imports them from
    their home."""
    bad = _through("hmlkit.cluster", "hmlkit.spectral")
    assert not bad, bad


def test_tag_rules_are_imported_from_hmlkit_tag_scores():
    """``hmlkit.complete`` re-exports the shared tag rules for users; the kit imports them from
    their home (a baseline that loaded them from ``complete`` loaded HML-RF and its forest)."""
    bad = _through("hmlkit.complete", "hmlkit.tag_scores")
    assert not bad, bad


# the comparison methods that grow a forest of the kit's own (CC-Forest grows HMLForest trees);
# the registries and run name HML-RF's own rows, so they reach the forest too
FOREST_BASELINES = ("hmlkit.baselines.ccforest",)
REGISTRY = ("hmlkit.baselines", "hmlkit.baselines.registry", "hmlkit.baselines._clustering_registry",
            "hmlkit.baselines._completion_registry", "hmlkit.baselines.run")


def test_no_baseline_but_those_growing_forests_loads_the_forest():
    g = import_graph()
    loads = {m for m in g if _within(m, ("hmlkit.baselines",)) and m not in REGISTRY
             and any(_within(t, ("hmlkit.forest",)) for t in _reach(g, m))}
    assert loads == set(FOREST_BASELINES), f"baselines loading hmlkit.forest: {sorted(loads)}"


def test_shared_lives_with_the_executors_and_the_dask_mechanics_know_no_kit_module():
    mods = _modules()
    assert "Shared" in _defined(mods["hmlkit.executors"]) and "DaskExecutor" in _defined(mods["hmlkit.executors"])
    assert not _defined(mods["hmlkit.dask_backend"]) & {"Shared", "DaskExecutor"}
    assert import_graph()["hmlkit.dask_backend"] == set()
    assert not [f for f in imported_names() if f[1] == "hmlkit.dask_backend" and f[2] == "Shared"]


def test_the_name_checks_see_a_reexport():
    found = [f for f in imported_names() if f[0] == "hmlkit.complete" and f[2] == "rank_observed_last"]
    assert found == [("hmlkit.complete", "hmlkit.tag_scores", "rank_observed_last")]
    assert "spectral_from_graph" in _defined(_modules()["hmlkit.spectral"])
