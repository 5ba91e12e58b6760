"""The delegation graph as plain dictionaries: the checks a team needs on a few dozen roles.

``Team`` (``swarm.team.graph``) validates with these functions; networkx is imported only
when a user asks for ``Team.graph`` (a ``networkx.DiGraph``, for drawing or analysis), so
``swarm validate`` and a run never load it. Each function visits nodes and edges in the
order networkx would (nodes in insertion order, a node's edges in declared order), so
cycles, chains and orders come out the same as networkx's ``find_cycle``,
``dag_longest_path`` and ``topological_sort``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

__all__ = ["Delegations", "delegations"]


class Delegations:
    """A directed graph of names: ``succ[a]`` are the names ``a`` has an edge to, in the
    order they were added, ``pred[b]`` the names with an edge to ``b``."""

    __slots__ = ("pred", "succ")

    def __init__(self, nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> None:
        self.succ: dict[str, dict[str, None]] = {name: {} for name in nodes}
        self.pred: dict[str, dict[str, None]] = {name: {} for name in self.succ}
        for a, b in edges:
            self.succ[a][b] = None
            self.pred[b][a] = None

    def __iter__(self) -> Iterator[str]:
        return iter(self.succ)

    def __contains__(self, name: object) -> bool:
        return name in self.succ

    def has_edge(self, a: str, b: str) -> bool:
        """Whether ``a`` has an edge to ``b``."""
        return b in self.succ.get(a, ())

    def subgraph(self, names: Iterable[str]) -> Delegations:
        """The graph on ``names`` only (in this graph's node order)."""
        keep = set(names)
        nodes = [n for n in self.succ if n in keep]
        return Delegations(nodes, ((a, b) for a in nodes for b in self.succ[a] if b in keep))

    def descendants(self, start: str) -> set[str]:
        """Every name reachable from ``start`` by one edge or more, ``start`` itself never."""
        seen: set[str] = set()
        todo = list(self.succ[start])
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(self.succ[name])
        seen.discard(start)
        return seen

    def components(self) -> list[set[str]]:
        """The strongly connected components (Tarjan's algorithm, without recursion)."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        found: list[set[str]] = []
        for root in self.succ:
            if root in index:
                continue
            work: list[tuple[str, Iterator[str]]] = [(root, iter(self.succ[root]))]
            index[root] = low[root] = len(index)
            stack.append(root)
            on_stack.add(root)
            while work:
                node, children = work[-1]
                for child in children:
                    if child not in index:
                        index[child] = low[child] = len(index)
                        stack.append(child)
                        on_stack.add(child)
                        work.append((child, iter(self.succ[child])))
                        break
                    if child in on_stack:
                        low[node] = min(low[node], index[child])
                else:
                    work.pop()
                    if work:
                        parent = work[-1][0]
                        low[parent] = min(low[parent], low[node])
                    if low[node] == index[node]:
                        component: set[str] = set()
                        while True:
                            member = stack.pop()
                            on_stack.discard(member)
                            component.add(member)
                            if member == node:
                                break
                        found.append(component)
        return found

    def find_cycle(self, source: str) -> list[str]:
        """The first cycle a depth-first walk from ``source`` meets, as its names in edge
        order (``[a, b]`` for ``a -> b -> a``); ``[]`` when no cycle is reachable."""
        path: list[str] = [source]
        on_path = {source}
        done: set[str] = set()
        work: list[Iterator[str]] = [iter(self.succ[source])]
        while work:
            for child in work[-1]:
                if child in on_path:
                    return path[path.index(child) :]
                if child not in done:
                    path.append(child)
                    on_path.add(child)
                    work.append(iter(self.succ[child]))
                    break
            else:
                work.pop()
                done.add(path[-1])
                on_path.discard(path.pop())
        return []

    def topological_order(self) -> list[str]:
        """The names, each before the names it has an edge to, generation by generation
        (Kahn's algorithm). Raises ``ValueError`` when the graph has a cycle."""
        waiting = {name: len(callers) for name, callers in self.pred.items() if callers}
        generation = [name for name, callers in self.pred.items() if not callers]
        order: list[str] = []
        while generation:
            order += generation
            following = []
            for name in generation:
                for child in self.succ[name]:
                    waiting[child] -= 1
                    if waiting[child] == 0:
                        following.append(child)
                        del waiting[child]
            generation = following
        if waiting:
            raise ValueError("the graph has a cycle")
        return order

    def longest_path(self) -> list[str]:
        """The longest path of a graph without cycles (ties broken as networkx's
        ``dag_longest_path`` breaks them)."""
        if not self.succ:
            return []
        dist: dict[str, tuple[int, str]] = {}
        for name in self.topological_order():
            best = (0, name)
            for caller in self.pred[name]:
                if dist[caller][0] + 1 > best[0]:  # the first of equals, as max() keeps
                    best = (dist[caller][0] + 1, caller)
            dist[name] = best
        end = max(dist, key=lambda n: dist[n][0])
        path: list[str] = []
        previous = None
        while previous != end:
            path.append(end)
            previous, end = end, dist[end][1]
        return path[::-1]


def delegations(specs: Mapping[str, Iterable[str]]) -> Delegations:
    """The graph of ``{role: its delegates}``, keeping only delegates that are roles."""
    return Delegations(specs, ((a, b) for a, ds in specs.items() for b in ds if b in specs))
