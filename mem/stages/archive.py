"""Archive and restore: move memories out of search and back, intact (text, vector, edges, history).

Archiving only changes ``status``; nothing is deleted (``forget --purge`` is the one hard delete).
By policy it is the lifecycle step (``mem.stages.lifecycle.prune``); by id it is explicit, except
that a pinned memory is never archived (unpin it first).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from mem.errors import BadInput

if TYPE_CHECKING:
    from mem.records import Memory
    from mem.stages.context import Context


def ids_from_records(records: Iterable[tuple[int, dict[str, Any]]]) -> list[str]:
    """Memory ids from piped records (``mem search X --json | mem archive -``); summaries are skipped.

    >>> ids_from_records([(1, {"record": "hit", "id": "abcd"}), (2, {"record": "summary"})])
    ['abcd']
    """
    out: list[str] = []
    for line, record in records:
        if record.get("record") == "summary" or "id" not in record:
            continue
        value = record["id"]
        if not isinstance(value, str) or not value:
            raise BadInput(f"line {line}: 'id' must be a memory id string", line=line)
        out.append(value)
    return list(dict.fromkeys(out))


def archive(ctx: "Context", prefixes: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Archive these memories now; one outcome each (archived | unchanged | skipped)."""
    ids = [ctx.store.resolve_id(p) for p in prefixes]
    at = ctx.now_iso()
    out = []
    with ctx.store.write():
        for memory_id in ids:
            memory = ctx.store.get(memory_id)
            if memory.status == "archived":
                out.append(_outcome(memory, "unchanged", "already archived"))
            elif memory.pinned:
                out.append(_outcome(memory, "skipped", "pinned (unpin it first)"))
            else:
                ctx.store.update_memory(memory_id, {"status": "archived", "updated_at": at}, at=at, op="archive")
                out.append(_outcome(memory, "archived"))
    yield from out


def restore(ctx: "Context", prefixes: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Bring archived (or cold) memories back to active, at the entry radius of the ball."""
    from mem.stages.lifecycle import policy_of
    from mem.store import lifecycle as sql

    policy = policy_of(ctx)
    ids = [ctx.store.resolve_id(p) for p in prefixes]
    at = ctx.now_iso()
    out = []
    with ctx.store.write():
        for memory_id in ids:
            memory = ctx.store.get(memory_id)
            if memory.status == "active":
                out.append(_outcome(memory, "unchanged", "already active"))
                continue
            ctx.store.update_memory(memory_id, {"status": "active", "updated_at": at}, at=at, op="restore")
            sql.reset_lifecycle(ctx.store, memory_id, policy.start_radius, at)
            out.append(_outcome(memory, "restored"))
    yield from out


def by_policy(ctx: "Context", *, scope: str | None, dry_run: bool = False,
              limit: int | None = None) -> Iterator[dict[str, Any]]:
    """Apply the lifecycle rules now (the prune step); yields its actions."""
    from mem.stages.lifecycle import prune

    yield from prune(ctx, scope=scope, dry_run=dry_run, limit=limit)


def archived(ctx: "Context", *, scope: str | None, limit: int | None) -> Iterator["Memory"]:
    for _, memory in ctx.store.select(scope=ctx.scope_filter(scope), statuses=("archived",), limit=limit):
        yield memory


def _outcome(memory: "Memory", status: str, reason: str | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"record": "outcome", "id": memory.id, "status": status}
    if reason:
        record["reason"] = reason
    return record
