"""``mem search --organize``: hits laid out by the structure type of their memories.

Groups come in the order of their best hit (the group holding rank 1 first). Inside a group:

* ``timeline``: by ``event_at`` (else ``created_at``), oldest first, so it reads as a story;
* ``ledger``: by rank, each hit with ``values``: the ``{what, value}`` pairs its text states
  (assertions, else numbers with their unit), for a table of values;
* ``taxonomy`` and ``narrative``: by rank.

Each output record is the hit record plus ``group`` (``{"structure", "position"}``): plain hits
still, so ``mem search X --organize --json | mem archive -`` composes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from mem.enrich.structure import STRUCTURES
from mem.records import Hit


def values_of(text: str) -> list[dict[str, str]]:
    """What a ledger entry states: ``{what, value}`` per assertion (or per number with a unit).

    >>> values_of("The payments timeout is 45 seconds.")
    [{'what': 'payments timeout', 'value': '45s'}]
    """
    from mem.enrich.assertions import extract_assertions

    found = [{"what": a.subject, "value": a.value if a.polarity else f"not {a.value}"}
             for a in extract_assertions(text) if a.attribute not in ("property", "is_a")]
    if found:
        return found
    from mem.enrich.structure import quantities

    return [{"what": before, "value": value} for before, value in quantities(text)]


def organize(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    """Hit records grouped by structure (see the module docstring)."""
    groups: dict[str, list[Hit]] = {}
    for hit in hits:
        structure = hit.memory.structure if hit.memory.structure in STRUCTURES else "narrative"
        groups.setdefault(structure, []).append(hit)
    out: list[dict[str, Any]] = []
    for structure, members in groups.items():  # dicts keep insertion order: best-ranked group first
        if structure == "timeline":
            members = sorted(members, key=lambda h: (h.memory.event_at or h.memory.created_at, h.rank))
        for position, hit in enumerate(members, start=1):
            record = hit.to_record()
            record["group"] = {"structure": structure, "position": position}
            if structure == "ledger":
                record["values"] = values_of(hit.memory.text)
            out.append(record)
    return out


def table_groups(records: Iterable[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]], tuple[str, ...]]]:
    """``(structure, rows, columns)`` per group for people: a timeline shows when, a ledger one row per value."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        grouped.setdefault(record["group"]["structure"], []).append(record)
    out = []
    for structure, rows in grouped.items():
        if structure == "ledger":
            flat = [{**r, "what": v["what"], "value": v["value"]} for r in rows for v in (r.get("values") or [{}])]
            out.append((structure, flat, ("id", "what", "value", "text")))
        elif structure == "timeline":
            out.append((structure, [{**r, "when": r.get("event_at") or r.get("created_at")} for r in rows],
                        ("id", "when", "text")))
        else:
            out.append((structure, rows, ("rank", "id", "kind", "text")))
    return out
