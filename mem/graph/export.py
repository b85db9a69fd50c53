"""Serialize a graph view for people and tools: GraphML, Graphviz DOT, JSON (node-link), Mermaid.

Each function returns the whole document as bytes, so the caller can write it atomically.

>>> import networkx as nx
>>> g = nx.MultiDiGraph(); g.add_node("a", label='say "hi"'); g.add_node("b", label="b"); _ = g.add_edge("a", "b", type="see_also")
>>> to_mermaid(g).decode().splitlines()[:2]
['flowchart LR', '  n0["say #quot;hi#quot;"]']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import networkx as nx

from mem.vocab import GRAPH_FORMATS as FORMATS  # noqa: E402
EXTENSIONS = {".graphml": "graphml", ".xml": "graphml", ".dot": "dot", ".gv": "dot", ".json": "json",
              ".mmd": "mermaid", ".mermaid": "mermaid", ".md": "mermaid"}
_COLORS = {"semantic": "gray50", "temporal": "steelblue", "causal": "firebrick", "manual": "darkgreen",
           "lifecycle": "purple", "entity": "goldenrod"}


def render(graph: "nx.MultiDiGraph", fmt: str) -> bytes:
    return {"graphml": to_graphml, "dot": to_dot, "json": to_json, "mermaid": to_mermaid}[fmt](graph)


def to_graphml(graph: "nx.MultiDiGraph") -> bytes:
    import networkx as nx

    return ("\n".join(nx.generate_graphml(graph, encoding="utf-8", prettyprint=True)) + "\n").encode("utf-8")


def to_json(graph: "nx.MultiDiGraph") -> bytes:
    import networkx as nx
    import orjson

    data = nx.node_link_data(graph, edges="edges")
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def _dot_quote(value: Any) -> str:
    text = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ").replace("\r", " ")
    return f'"{text}"'


def to_dot(graph: "nx.MultiDiGraph") -> bytes:
    lines = ["digraph mem {", "  rankdir=LR;", '  node [shape=box, style="rounded", fontsize=10];',
             "  edge [fontsize=8];"]
    for node, data in graph.nodes(data=True):
        shape = ', shape=ellipse, style=filled, fillcolor="lightyellow"' if data.get("type") == "entity" else ""
        tooltip = data.get("text", "")
        lines.append(f"  {_dot_quote(node)} [label={_dot_quote(data.get('label', node))}, "
                     f"tooltip={_dot_quote(tooltip)}{shape}];")
    for src, dst, data in graph.edges(data=True):
        layer = data.get("layer", "")
        style = ", style=dashed" if layer in ("semantic", "entity") else ""
        lines.append(f"  {_dot_quote(src)} -> {_dot_quote(dst)} [label={_dot_quote(data.get('type', ''))}, "
                     f"color={_dot_quote(_COLORS.get(layer, 'black'))}{style}];")
    lines.append("}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def _mermaid_text(value: Any) -> str:
    # Mermaid labels live in double quotes; entity codes keep quotes and brackets from ending them.
    text = " ".join(str(value).split())
    for raw, code in (("&", "#amp;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("|", "#124;")):
        text = text.replace(raw, code)
    return text


def to_mermaid(graph: "nx.MultiDiGraph") -> bytes:
    lines = ["flowchart LR"]
    names: dict[Any, str] = {}
    for i, (node, data) in enumerate(graph.nodes(data=True)):
        names[node] = f"n{i}"
        label = _mermaid_text(data.get("label", node))
        lines.append(f'  n{i}(["{label}"])' if data.get("type") == "entity" else f'  n{i}["{label}"]')
    for src, dst, data in graph.edges(data=True):
        arrow = "-.->" if data.get("layer") in ("semantic", "entity") else "-->"
        lines.append(f"  {names[src]} {arrow}|{_mermaid_text(data.get('type', ''))}| {names[dst]}")
    return ("\n".join(lines) + "\n").encode("utf-8")
