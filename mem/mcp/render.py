"""Tool results: structured content (validated against the tool's TypedDict) plus short readable text.

The SDK's default text for a dict is the JSON again, indented; a model reads a few lines of
``id [kind] text`` far more cheaply, so every tool builds its own text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NotRequired, TypedDict


class Hits(TypedDict):
    count: int
    hits: list[dict[str, Any]]
    elsewhere: NotRequired[dict[str, int]]  # after an empty search: hits per other scope


class Memories(TypedDict):
    count: int
    memories: list[dict[str, Any]]


class Outcomes(TypedDict):
    count: int
    outcomes: list[dict[str, Any]]


def result(structured: dict[str, Any], text: str) -> Any:
    """A CallToolResult carrying both forms; the SDK validates ``structured`` against the tool's return type."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def plain(record: Any) -> dict[str, Any]:
    """A stage record (dataclass with to_record, or dict) as a JSON-ready dict without the 'record' tag."""
    value = record.to_record() if hasattr(record, "to_record") else dict(record)
    value.pop("record", None)
    return value


def memory_line(m: dict[str, Any]) -> str:
    flags = [m.get("kind", "?"), m.get("scope", "?")]
    if m.get("status") not in (None, "active"):
        flags.append(str(m["status"]))
    if m.get("superseded_by"):
        reason = ((m.get("explain") or {}).get("superseded") or {}).get("reason")
        flags.append(f"superseded by {m['superseded_by']}" + (f": {reason}" if reason else ""))
    if m.get("pinned"):
        flags.append("pinned")
    tags = f" #{' #'.join(m['tags'])}" if m.get("tags") else ""
    return f"{m['id']} [{', '.join(flags)}] {m.get('text', '')}{tags}"


def memories_result(records: Iterable[Any], empty: str = "No memories.") -> Any:
    items = [plain(r) for r in records]
    text = "\n".join(memory_line(m) for m in items) if items else empty
    return result({"count": len(items), "memories": items}, text)


def hits_result(hits: Iterable[Any], *, why: bool, elsewhere: str | None = None,
                elsewhere_counts: dict[str, int] | None = None) -> Any:
    items = []
    for hit in hits:
        record = plain(hit)
        if not why:
            record.pop("why", None)
        items.append(record)
    if not items:
        if elsewhere:  # an empty scope, but other scopes match: say so and how to reach them
            return result({"count": 0, "hits": [], "elsewhere": elsewhere_counts or {}}, f"No matches: {elsewhere}.")
        return result({"count": 0, "hits": []}, "No matches.")
    text = "\n".join(f"{h['rank']}. ({h['score']:.3f}) {memory_line(h)}" for h in items)
    return result({"count": len(items), "hits": items}, text)


def outcomes_result(outcomes: Iterable[Any]) -> Any:
    items = [plain(o) for o in outcomes]
    lines = []
    for o in items:
        line = f"{o.get('status')} {o.get('id') or ''}".rstrip()
        if o.get("reason"):
            line += f" ({o['reason']})"
        if o.get("supersedes"):
            line += f"; supersedes {', '.join(map(str, o['supersedes']))}"
        if o.get("suspends"):
            line += f"; suspends {', '.join(map(str, o['suspends']))} until {o.get('until')}"
        lines.append(line)
    return result({"count": len(items), "outcomes": items}, "\n".join(lines) or "Nothing to do.")


def report_result(report: dict[str, Any], title: str | None = None) -> Any:
    """A free-form report (stats, graph answers, lifecycle runs): the dict, and compact JSON as text."""
    import orjson

    body = orjson.dumps(report, default=str).decode("utf-8")
    return result(report, f"{title}\n{body}" if title else body)
