"""Group commit for the MCP server's writes: concurrent ``add`` calls share one intake run.

The seed's asynchronous priority write queue, made safe. Calls that arrive while a write is under
way wait in a queue ordered by their ``priority`` (1 first, 5 last; 3 by default) and then by
arrival; the next group takes the queue's head and as many calls behind it as fit in one intake
chunk (one embedding batch, one write transaction). Each call is validated alone, so a call with a
bad record fails alone and is never merged into the others' transaction; each call is answered
only after the transaction holding its memories committed, so an acknowledged write is never lost.
A call larger than a chunk runs on its own. Searches and other tools keep their place on the
engine's one worker thread between groups.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mem.records import Outcome
    from mem.stages.add import AddOptions

DEFAULT_PRIORITY = 3


@dataclass(eq=False)
class _Call:
    records: list[tuple[int | None, dict[str, Any]]]
    options: "AddOptions"
    priority: int
    seq: int
    done: Any = None  # anyio.Event, set on the event loop once the group is over
    outcomes: "list[Outcome] | None" = None
    error: BaseException | None = None
    drafts: list[Any] = field(default_factory=list)

    def key(self) -> tuple[Any, ...]:
        """Calls can share an intake run when they store with the same switches (defaults are per draft)."""
        o = self.options
        return o.redact, o.keep_near, o.near_threshold, o.extract


class GroupCommit:
    """One per server. ``await queue.add(records, options, priority)`` -> that call's outcomes."""

    def __init__(self, engine: Any) -> None:  # mem.mcp.engine.Engine (which imports this module)
        from mem.stages.add import CHUNK

        self.engine = engine
        self.limit = CHUNK
        self.waiting: list[_Call] = []
        self.draining = False
        self.groups = 0  # how many write groups ran (for tests and stats)
        self._seq = itertools.count()

    async def add(self, records: list[tuple[int | None, dict[str, Any]]], options: "AddOptions",
                  priority: int = DEFAULT_PRIORITY) -> "list[Outcome]":
        import anyio

        call = _Call(records, options, priority, next(self._seq), anyio.Event())
        self.waiting.append(call)
        if not self.draining:
            self.draining = True
            try:
                await anyio.sleep(0)  # calls that arrived in the same instant join this group
                while self.waiting:
                    group = self._take()
                    try:
                        await self.engine.run(_store_group, self.engine.ctx, group)
                        self.groups += 1
                    except BaseException as exc:  # noqa: BLE001 - the store or the embedder failed: every call of the group
                        for member in group:
                            if member.error is None and member.outcomes is None:
                                member.error = exc
                    finally:
                        for member in group:
                            member.done.set()
            finally:
                self.draining = False
        await call.done.wait()
        if call.error is not None:
            raise call.error
        assert call.outcomes is not None
        return call.outcomes

    def _take(self) -> list[_Call]:
        """The queue's most urgent call, and those behind it that fit in one chunk with the same switches."""
        self.waiting.sort(key=lambda c: (c.priority, c.seq))
        first = self.waiting[0]
        group, size = [first], len(first.records)
        for call in self.waiting[1:]:
            if call.key() == first.key() and size + len(call.records) <= self.limit:
                group.append(call)
                size += len(call.records)
        taken = set(map(id, group))
        self.waiting = [c for c in self.waiting if id(c) not in taken]
        return group


def _store_group(ctx: Any, group: list[_Call]) -> None:
    """On the worker thread: validate each call alone, then store the valid ones' drafts together."""
    from mem.errors import MemError
    from mem.stages import add

    for call in group:
        try:
            call.drafts = [add.validate(raw, line, ctx, call.options) for line, raw in call.records]
        except MemError as error:  # this call's input: it fails alone
            call.error = error
    valid = [call for call in group if call.error is None]
    if not valid:
        return
    drafts = [draft for call in valid for draft in call.drafts]
    outcomes = list(add.store_drafts(ctx, drafts, valid[0].options))
    start = 0
    for call in valid:
        call.outcomes = outcomes[start : start + len(call.drafts)]
        start += len(call.drafts)
