"""The delegation graph's own functions give what networkx gives on the same graph, so a
team validated without networkx reports the same cycles, chains and orders."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from swarm.team.digraph import Delegations


def random_graphs(count: int, *, acyclic: bool) -> list[tuple[list[str], list[tuple[str, str]]]]:
    rng = random.Random(32)
    graphs = []
    for _ in range(count):
        names = [f"r{i}" for i in rng.sample(range(40), rng.randint(1, 9))]
        edges = []
        for a_index, a in enumerate(names):
            for b_index, b in enumerate(names):
                if acyclic and b_index <= a_index:
                    continue
                if rng.random() < 0.3:
                    edges.append((a, b))
        rng.shuffle(edges)
        graphs.append((names, edges))
    return graphs


def both(names: list[str], edges: list[tuple[str, str]]) -> tuple[Delegations, nx.DiGraph[str]]:
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(names)
    graph.add_edges_from(edges)
    return Delegations(names, edges), graph


@pytest.mark.parametrize(("names", "edges"), random_graphs(60, acyclic=False))
def test_cycles_components_and_descendants_match_networkx(
    names: list[str], edges: list[tuple[str, str]]
) -> None:
    ours, theirs = both(names, edges)
    assert sorted(map(sorted, ours.components())) == sorted(
        map(sorted, nx.strongly_connected_components(theirs))
    )
    for name in names:
        assert ours.descendants(name) == nx.descendants(theirs, name)
        try:
            expected = [u for u, _ in nx.find_cycle(theirs, source=name)]
        except nx.NetworkXNoCycle:
            expected = []
        assert ours.find_cycle(name) == expected


@pytest.mark.parametrize(("names", "edges"), random_graphs(60, acyclic=True))
def test_orders_and_longest_paths_match_networkx(
    names: list[str], edges: list[tuple[str, str]]
) -> None:
    ours, theirs = both(names, edges)
    assert ours.topological_order() == list(nx.topological_sort(theirs))
    assert ours.longest_path() == nx.dag_longest_path(theirs)
    for name in names:
        # networkx walks a small subgraph view in the order of a set (its ties then
        # depend on the hash seed); ours keeps the declared order, so compare lengths.
        below = ours.descendants(name) | {name}
        assert len(ours.subgraph(below).longest_path()) == nx.dag_longest_path_length(
            theirs.subgraph(below)
        ) + bool(below)


def test_a_graph_with_a_cycle_has_no_topological_order() -> None:
    with pytest.raises(ValueError, match="cycle"):
        Delegations(["a", "b"], [("a", "b"), ("b", "a")]).topological_order()


def test_validating_a_team_directory_loads_neither_networkx_nor_scenario_models(
    tmp_path: Path,
) -> None:
    roles = Path(__file__).resolve().parents[2] / "roles"
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from swarm.cli.checks import validate\n"
        f"problems, _ = validate(Path({str(roles)!r}))\n"
        "assert not problems, problems\n"
        "print('networkx' in sys.modules, 'swarm.scenario.spec' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert out.stdout.strip() == "False False"
