"""The package's shape: imports go one way, and the loop stays readable."""

import ast
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


def import_graph() -> nx.DiGraph:
    """Every import of every module, wherever it is written (module level, function
    bodies, ``TYPE_CHECKING`` blocks). Importing ``a.b.c`` also runs the packages ``a.b``
    (their ``__init__``), so it is an edge to each of them too, except to ``swarm``
    itself, the public facade that re-exports everything."""
    modules = module_names()
    graph = nx.DiGraph()
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
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
                        graph.add_edge(name, target)
                    target = target.rpartition(".")[0]
    return graph


def test_the_graph_sees_imports_in_function_bodies() -> None:
    graph = import_graph()
    assert graph.has_edge("swarm.loop.agent", "swarm.loop.loop")
    assert graph.has_edge("swarm.loop.loop", "swarm.loop.calls")
    assert graph.number_of_nodes() > 50


def test_no_import_cycle_in_the_package() -> None:
    cycles = sorted(nx.simple_cycles(import_graph()), key=len)
    assert cycles == [], " -> ".join([*cycles[0], cycles[0][0]])


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
