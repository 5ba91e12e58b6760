"""The package's shape: imports go one way, and the loop stays readable."""

import ast
import functools
from pathlib import Path

import networkx as nx

import swarm

PACKAGE = Path(swarm.__file__).parent


def module_names() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["swarm", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _lazy_declarations(tree: ast.Module) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:`` at a package face's top level."""
    inside: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside |= {id(child) for statement in node.body for child in ast.walk(statement)}
    return inside


def import_graph(sources: dict[str, str] | None = None) -> nx.DiGraph:
    """Every import of every module, wherever it is written (module level, function
    bodies, ``TYPE_CHECKING`` blocks). Importing ``a.b.c`` also runs the packages ``a.b``
    (their ``__init__``), so it is an edge to each of them too, except to ``swarm``
    itself, the public facade that re-exports everything.

    One exception: a package face's ``if TYPE_CHECKING:`` block. It only tells type
    checkers what the face's lazy names are; they are imported when first asked for, not
    when a module of the package is, and the modules that define them are checked in
    their own right. ``sources`` replaces the text of some modules (to plant an import)."""
    modules = module_names()
    names = frozenset(modules)
    graph = nx.DiGraph()
    for name, path in modules.items():
        source = (sources or {}).get(name) or path.read_text()
        graph.add_node(name)
        face = path.name == "__init__.py"
        imports = _imports_of(name, face, source, str(path), names)
        graph.add_edges_from((name, target) for target in imports)
    return graph


@functools.cache  # each test builds the graph: its modules are parsed once per process
def _imports_of(
    name: str, face: bool, source: str, filename: str, modules: frozenset[str]
) -> tuple[str, ...]:
    """The modules of ``modules`` that module ``name`` (``face``: a package's
    ``__init__``) imports, read from its ``source`` (``filename``: its file)."""
    package = name if face else name.rpartition(".")[0]
    tree = ast.parse(source, filename)
    skipped = _lazy_declarations(tree) if face else set()
    found: dict[str, None] = {}
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(kept + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                targets.append(full if full in modules else base)
        for target in targets:
            while target and target != "swarm":
                if target in modules and target != name and not name.startswith(target + "."):
                    found[target] = None
                target = target.rpartition(".")[0]
    return tuple(found)


LAYERS: list[tuple[str, ...]] = [
    ("swarm.cli", "swarm.__main__"),
    ("swarm.scenario", "swarm.batch", "swarm.report"),
    ("swarm.record", "swarm.approvals"),
    # the scenario file format and its scripted model: what a run's record is made of
    ("swarm.scenario.spec", "swarm.scenario.output_checks", "swarm.scenario.script"),
    ("swarm.team",),
    ("swarm.loop",),
    (
        "swarm.guards",
        "swarm.toolbox",
        "swarm.context",
        "swarm.transports",
        "swarm.models",
        "swarm.audit",
        "swarm.mcp",
        "swarm.undo",
        "swarm.local",
        "swarm.otel",
        "swarm.event_codec",
        "swarm.testing",
    ),
    (
        "swarm.scope",
        "swarm.budget",
        "swarm.tools",
        "swarm.events",
        "swarm.messages",
        "swarm.control",
        "swarm.background",
        "swarm.contracts",
        "swarm.spend",
        "swarm.config",
        "swarm.models.registry",
        # the sandbox imports nothing of swarm but its logger: a run scope carries its
        # settings for the tools that start processes
        "swarm.sandbox",
        "swarm._suspends",
        "swarm._log",
        "swarm._visible",
    ),
    ("swarm.types", "swarm.errors", "swarm._text", "swarm._lazy", "swarm._dist"),
]
"""The layers of the house, highest first: a module imports only from its own layer or
lower ones. A module belongs to the longest prefix listed (``swarm.models.registry`` is
low, the rest of ``swarm.models`` is not)."""


def layer_of(module: str) -> int | None:
    """The index in ``LAYERS`` of the longest prefix of ``module``; None if none fits."""
    best: tuple[int, int] | None = None
    for depth, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (
                best is None or len(prefix) > best[0]
            ):
                best = (len(prefix), depth)
    return None if best is None else best[1]


def upward_imports(graph: nx.DiGraph) -> list[str]:
    """Each import from a lower layer into a higher one, as ``importer -> imported``.

    Importing ``swarm.scenario.spec`` runs the package face ``swarm.scenario`` too, which
    sits higher: that is fine as long as what the face imports when it runs is not."""
    faces = {name for name, path in module_names().items() if path.name == "__init__.py"}
    found = []
    for importer, imported in graph.edges:
        mine = layer_of(importer)
        reached = [imported]
        if imported in faces and importer.startswith(imported + ".") is False:
            reached = [imported] if _at_or_below(imported, mine) else [*graph[imported]]
            reached = [m for m in reached if m != importer]
        found += [f"{importer} -> {m}" for m in reached if not _at_or_below(m, mine)]
    return sorted(set(found))


def _at_or_below(module: str, layer: int | None) -> bool:
    theirs = layer_of(module)
    return layer is None or theirs is None or theirs >= layer


def test_the_graph_sees_imports_in_function_bodies() -> None:
    graph = import_graph()
    assert graph.has_edge("swarm.loop.agent", "swarm.loop.loop")
    assert graph.has_edge("swarm.loop.loop", "swarm.loop.calls")
    assert graph.number_of_nodes() > 50


def test_the_local_model_provider_is_an_import_the_graph_sees() -> None:
    # `local` specs import swarm.local in a function body: no module loaded by its name
    assert import_graph().has_edge("swarm.models.spec", "swarm.local")


def test_no_import_cycle_in_the_package() -> None:
    cycles = sorted(nx.simple_cycles(import_graph()), key=len)
    assert cycles == [], " -> ".join([*cycles[0], cycles[0][0]])


def test_every_module_has_its_place_in_the_layers() -> None:
    unplaced = sorted(m for m in module_names() if m != "swarm" and layer_of(m) is None)
    assert unplaced == []


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    assert upward_imports(import_graph()) == []


def test_an_import_from_a_layer_above_is_caught_even_inside_a_function() -> None:
    budget = (PACKAGE / "budget.py").read_text()
    planted = budget + "\n\ndef _planted() -> None:\n    from swarm.team.graph import Team\n"
    found = upward_imports(import_graph({"swarm.budget": planted}))
    assert found == ["swarm.budget -> swarm.team.graph"]


def test_a_lower_layer_reaching_a_face_that_imports_upward_is_caught() -> None:
    face = (PACKAGE / "models" / "__init__.py").read_text()
    planted = face + "\nfrom swarm.models.spec import transport_from_spec\n"
    found = upward_imports(import_graph({"swarm.models": planted}))
    # the budget reads the registry, which runs the face, which now loads the transports
    assert "swarm.budget -> swarm.models.spec" in found


def test_the_core_imports_go_one_way() -> None:
    graph = import_graph()
    layers = [
        ["swarm.types", "swarm.errors"],
        ["swarm.messages"],
        ["swarm.events"],
        ["swarm.control", "swarm.tools", "swarm.budget"],
        ["swarm.scope", "swarm.loop.turn", "swarm.transports.base", "swarm.context.base"],
        ["swarm.loop.calls"],
        ["swarm.loop.loop"],
        ["swarm.loop.agent"],
    ]
    for depth, layer in enumerate(layers):
        later = {m for upper in layers[depth + 1 :] for m in upper}
        for module in layer:
            reached = nx.descendants(graph, module)
            assert not reached & later, f"{module} imports {sorted(reached & later)}"


def test_every_function_of_the_loop_is_under_100_lines() -> None:
    source = (PACKAGE / "loop" / "loop.py").read_text()
    lengths = {
        node.name: (node.end_lineno or node.lineno) - node.lineno + 1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    assert max(lengths.values()) < 100, lengths
