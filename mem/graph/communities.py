"""Community detection: Leiden when ``leidenalg`` and ``igraph`` are installed, else networkx Louvain.

Deterministic: a fixed seed, and nodes fed in sorted order.

>>> import networkx as nx
>>> g = nx.Graph([("a", "b"), ("b", "c"), ("a", "c"), ("x", "y")])
>>> sorted(sorted(c) for c in detect(g)[1])
[['a', 'b', 'c'], ['x', 'y']]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx

SEED = 42


def detect(graph: "nx.Graph", resolution: float = 1.0) -> tuple[str, list[set[str]]]:
    """``(method, communities)``: each community a set of node ids, largest first (ties by smallest id)."""
    if graph.number_of_edges() == 0:
        return "none", []
    try:
        groups = _leiden(graph, resolution)
        method = "leiden"
    except ImportError:
        import networkx as nx

        ordered = nx.Graph()
        ordered.add_nodes_from(sorted(graph.nodes))
        ordered.add_weighted_edges_from(sorted((a, b, d.get("weight", 1.0)) for a, b, d in graph.edges(data=True)))
        groups = [set(c) for c in nx.community.louvain_communities(ordered, weight="weight", resolution=resolution,
                                                                    seed=SEED)]
        method = "louvain"
    groups.sort(key=lambda c: (-len(c), min(c)))
    return method, groups


def _leiden(graph: "nx.Graph", resolution: float) -> list[set[str]]:
    import igraph  # noqa: F401  (ImportError -> Louvain)
    import leidenalg

    nodes = sorted(graph.nodes)
    index = {n: i for i, n in enumerate(nodes)}
    g = igraph.Graph(n=len(nodes), edges=[(index[a], index[b]) for a, b in graph.edges])
    g.es["weight"] = [d.get("weight", 1.0) for _, _, d in graph.edges(data=True)]
    partition = leidenalg.find_partition(g, leidenalg.RBConfigurationVertexPartition, weights="weight",
                                         resolution_parameter=resolution, seed=SEED)
    return [{nodes[i] for i in part} for part in partition]
