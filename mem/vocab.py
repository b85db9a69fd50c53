"""Every enumerated value a user or a client can give, and the one check they all pass.

Flags, JSON Lines fields and MCP arguments call ``check``/``check_all`` with the same name, so an
unknown value is the same ``BadInput`` (exit 4, a tool error over MCP) naming the known ones,
whichever front end it came through. Lists that belong to a registry elsewhere (search channels,
link types, consolidation phases) are read from it, so there is still one list each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from mem.errors import BadInput

KINDS = ("fact", "decision", "correction", "preference", "procedure", "episode", "identity", "commitment", "note")
STATUSES = ("active", "cold", "archived")
STATUS_FILTERS = (*STATUSES, "all")
VERIFICATIONS = ("unverified", "verified", "stale", "missing", "contradicted")
LAYERS = (1, 2, 3, 4)
OUTPUT_FORMATS = ("table", "jsonl")
GRAPH_LAYERS = ("semantic", "temporal", "causal", "entity", "manual", "lifecycle")
GRAPH_FORMATS = ("graphml", "dot", "json", "mermaid")
PROFILES = ("default", "memory-v3")
MANUAL_LINK = "related"  # the type of a hand-made link that names no relation


def _channels() -> tuple[str, ...]:
    from mem.stages.search import PARTS

    return tuple(PARTS)


def _fusions() -> tuple[str, ...]:
    from mem.stages.search import FUSIONS

    return tuple(FUSIONS)


def _link_types() -> tuple[str, ...]:
    from mem.stages.link import LAYER_OF_TYPE

    return (*(t for t, layer in LAYER_OF_TYPE.items() if layer != "entity"), MANUAL_LINK)


def _phases() -> tuple[str, ...]:
    from mem.stages.consolidate import PHASES

    return tuple(PHASES)


_LISTS: dict[str, Sequence[Any] | Callable[[], Sequence[Any]]] = {
    "kind": KINDS, "status": STATUS_FILTERS, "verification": VERIFICATIONS, "layer": LAYERS,
    "format": OUTPUT_FORMATS, "graph layer": GRAPH_LAYERS, "graph format": GRAPH_FORMATS, "profile": PROFILES,
    "fusion": _fusions, "channel": _channels, "link type": _link_types, "phase": _phases,
}


def known(name: str) -> tuple[Any, ...]:
    """The accepted values of ``name`` ('kind', 'status', 'channel', ...)."""
    values = _LISTS[name]
    return tuple(values() if callable(values) else values)


def check(name: str, value: Any, *, where: str = "", **fields: Any) -> Any:
    """``value`` when it is one of ``name``'s values; else BadInput naming them (``where``: 'line 3: ')."""
    values = known(name)
    if value in values and not isinstance(value, bool):
        return value
    if name == "layer" and isinstance(value, str) and value.isdigit() and int(value) in values:
        return int(value)
    listed = ", ".join(str(v) for v in values)
    raise BadInput(f"{where}unknown {name} {value!r}; one of {listed}", field=name.replace(" ", "_"), value=value,
                   **fields)


def check_all(name: str, values: Iterable[Any] | None, *, where: str = "", **fields: Any) -> list[Any]:
    """Each of ``values`` checked (None or empty: an empty list), duplicates dropped, order kept."""
    if values is None:
        return []
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise BadInput(f"{where}{name} must be a list", field=name.replace(" ", "_"), **fields)
    return list(dict.fromkeys(check(name, v, where=where, **fields) for v in values))
