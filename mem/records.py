"""Records that stages yield and front ends print: plain dataclasses with a stable key order."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from mem.vocab import KINDS, STATUSES, VERIFICATIONS  # noqa: F401  (re-exported: records' vocabularies)


@dataclass
class Memory:
    """One stored memory: every public column of ``memories`` (never vectors)."""

    id: str
    text: str
    kind: str = "fact"
    scope: str = "global"
    tags: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    source: str | None = None
    source_hash: str | None = None
    source_line: int | None = None
    author: str | None = None
    created_at: str = ""
    event_at: str | None = None
    valid_until: str | None = None
    updated_at: str = ""
    last_accessed_at: str | None = None
    access_count: int = 0
    layer: int = 3
    pinned: bool = False
    confidence: float = 1.0
    verification: str = "unverified"
    importance: float = 0.5
    surprise: float = 0.5
    status: str = "active"
    superseded_by: str | None = None
    content_hash: str = ""
    structure: str = "narrative"  # timeline | ledger | taxonomy | narrative (mem.enrich.structure), set at intake

    def to_record(self) -> dict[str, Any]:
        return {"record": "memory", **asdict(self)}


MEMORY_FIELDS = tuple(f.name for f in fields(Memory))


@dataclass
class Hit:
    """A search result: the memory plus its rank, fused score and the reasons behind it."""

    memory: Memory
    rank: int
    score: float
    why: dict[str, Any]
    query_line: int | None = None

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"record": "hit", "rank": self.rank, "score": round(self.score, 6)}
        if self.query_line is not None:
            record["query_line"] = self.query_line
        record.update(asdict(self.memory))
        record["why"] = self.why
        return record


@dataclass
class Outcome:
    """What intake did with one input record: ``added`` | ``duplicate`` | ``rejected`` | ``superseded``
    | ``conflict`` (import: the id is stored with another text)."""

    status: str
    id: str | None = None
    line: int | None = None
    reason: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"record": "outcome", "id": self.id, "status": self.status}
        if self.line is not None:
            record["line"] = self.line
        if self.reason is not None:
            record["reason"] = self.reason
        record.update(self.detail)
        return record
