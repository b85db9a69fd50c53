"""Graph building at intake: entities, semantic, temporal and causal links, from the memory alone.

``after_insert`` runs inside the intake write transaction right after each insert, so it stays
cheap (a handful of indexed statements and one coarse KNN; no networkx, no LLM):

- entity: zero-LLM entities upserted by key, one ``memory_entities`` row per mention;
- semantic: ``see_also`` both ways to the most similar earlier memories of the scope;
- temporal: ``precedes`` from the previous memory of the same session (``meta.session``, else
  ``source``; ordered by ``created_at``, the session's own clock) and ``same_session`` to a few
  more before it; a memory arriving out of order is spliced into the chain;
- causal: a causal shape ("fixed X by Y", "to fix X we Y", "X broke because Y", "the root cause of
  X was Y", "after X, we Y", "... so that ...") names a *focus* X; this memory links to the recent
  memory of the scope that names X (most of its word stems, then shared entities), and what that
  memory says itself (a plain report, an explanation, a fix) decides the link (``link_causal``).

>>> causal_reading("The deploy failed because the token expired")
('caused', 'explains', 'The deploy failed', 'the token expired')
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from mem.store import graph as sql

if TYPE_CHECKING:
    import numpy as np

    from mem.enrich.entities import Entity
    from mem.records import Memory
    from mem.stages.context import Context

SEE_ALSO_MIN = 0.5  # cosine for a see_also link
SEE_ALSO_MAX = 5  # links per new memory
SESSION_WINDOW = 3  # same_session links to this many earlier session members beyond the previous one
CAUSAL_PER_ENTITY = 20  # recent mentioners looked at per shared entity
CAUSAL_MIN_SCORE = 0.25  # at least one shared entity with a fan of ~50 or less
CAUSAL_WINDOW_DAYS = 180
CAUSAL_RECENT = 20  # memories just before this one in its scope, looked at besides the entity sharers
FOCUS_WEIGHT = 0.5  # score per focus word a candidate contains (a shared entity with a fan of ~7 is ~0.5)
MAX_ENTITIES = 24  # per memory: a pasted log must not flood the entity table

# Causal shapes, by the role the memory plays towards an earlier one. Each pattern captures the
# *focus*: the phrase naming what the earlier memory is about (the problem fixed, the effect
# explained, the event followed up, or the stated cause).
_FIX = r"(?:fix|resolv|solv|mitigat|repair|patch|unblock)(?:e|es|ed|d|ing|s|ted)?|work(?:ed|ing)? around|got rid of"
_CAUSE = (r"because(?: of)?|due to|caused by|as a result of|thanks to|stemm(?:ed|ing|s) from|came from|"
          r"triggered by|traced (?:it |this |that )?(?:back )?to|turned out to be|led to|broke because")
_FOCUS = r"(?P<focus>(?:[^,;:.!?\n]|[.:](?=\S)){3,120}?)"  # "payments.order_id" and "a:b" stay whole
_CAUSAL_SHAPES: tuple[tuple[re.Pattern[str], str, str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), kind, role) for p, kind, role in (
        # "the root cause of X was Y", "the cause of X is Y", "the reason for X was Y": X is the effect
        (rf"\b(?:root[- ])?(?:cause|reason)s?\s+(?:of|for|behind)\s+{_FOCUS}\s+(?:was|were|is|are|turned out)\b",
         "caused", "explains"),
        # "fixed X by Y", "to fix X we Y", "X was fixed by Y", "resolved X with Y": X is the problem
        # (not "X was fixed by Y": there "by Y" is the remedy, and the next shape reads X)
        (rf"\b(?:{_FIX})\s+(?!(?:by|with|through|via|using)\b){_FOCUS}(?=\s+(?:by|with|through|via|using|we|i|the team)\b|[,;:.]|$)",
         "resolved", "resolves"),
        (rf"^{_FOCUS}\s+(?:was|were|is|got|has been|have been)\s+(?:{_FIX})\b", "resolved", "resolves"),
        # "X broke because Y", "X failed due to Y": X is the effect, Y the cause
        (rf"^{_FOCUS}\s+(?:{_CAUSE})\b(?P<cause>.*)", "caused", "explains"),
        # "after X, we Y", "following X, the team Y": X came first and prompted this
        (rf"^(?:after|following|once|since)\s+{_FOCUS},", "motivated", "follows"),
        # "... so that X", "... in order to X": the purpose; the earlier memory motivated this one
        (r"\b(?:so that|in order to)\b(?P<focus>)", "motivated", "follows"),
    ))
# What each of ``_CAUSAL_SHAPES`` holds, lowercased, in its order (a word of its, or how the text opens):
# an ASCII text with none of a shape's marks is not searched for it (the shapes ignore case)
_CAUSAL_MARKS: tuple[tuple[str, ...], ...] = (
    ("cause", "reason"),
    ("fix", "resolv", "solv", "mitigat", "repair", "patch", "unblock", "around", "got rid of"),
    ("fix", "resolv", "solv", "mitigat", "repair", "patch", "unblock", "around", "got rid of"),
    ("because", "due to", "caused by", "as a result of", "thanks to", "stemm", "came from", "triggered by", "traced",
     "turned out to be", "led to"),
    (),  # opens with "after", "following", "once" or "since": ``_opens``
    ("so that", "in order to"),
)
_OPENERS = ("after", "following", "once", "since")
# Whether ``causal_reading`` skips the shapes whose marks a text lacks (the same readings either way:
# tests/test_prefilter_identity.py reads the bench texts with and without it)
PREFILTER = True
# Problem words: among the memories that name what a fix fixed, one that reads as a problem comes first.
PROBLEM = re.compile(r"\b(bug|error|errors|crash\w*|fail\w*|broke\w*|broken|issue|regression|outage|slow\w*|"
                     r"timeout\w*|leak\w*|flaky|exception|traceback|lock(?:ed|s|ing)?|deadlock\w*|hang\w*|lost|losing|missing|"
                     r"disappear\w*|corrupt\w*|stuck|froze|frozen)\b",
                     re.IGNORECASE)
# "We chose X because Y", "the team picked X because Y": a focus whose subject is the one deciding
# is a decision, and the memory naming its reason led to it (earlier -> this), where "X failed
# because Y" (or "we lost X because Y": a problem, whoever the subject) explains the earlier report
# of X (this -> report).
_DECIDER = re.compile(r"^\s*(?:we|i|they|our team|the team|the \w+ team)\b", re.IGNORECASE)
STEM_PREFIX = 4  # two stems match when equal, or one starts the other and is this long ("froze", "frozen")

LAYER_OF_TYPE = {
    "see_also": "semantic", "similar_to": "semantic",
    "precedes": "temporal", "same_session": "temporal",
    "caused": "causal", "resolved": "causal", "motivated": "causal",
    "mentions": "entity",
    "supersedes": "lifecycle", "suspends": "lifecycle", "derived_from": "lifecycle",
}


def entities_of(memory: "Memory") -> "list[Entity]":
    """The zero-LLM entities ``after_insert`` records for ``memory`` (pure: intake runs it before its write lock)."""
    from mem.enrich.entities import extract_entities

    return extract_entities(memory.text)


def after_insert(ctx: "Context", rowid: int, memory: "Memory", vector: "np.ndarray | None",
                 *, entities: "list[Entity] | None" = None,
                 neighbours: "list[tuple[int, float]] | None" = None,
                 neighbour_ids: dict[int, str] | None = None,
                 entity_rows: dict[str, list[Any]] | None = None) -> None:
    """Called inside the intake write transaction right after a memory is stored.

    ``entities`` (from a model, or ``entities_of`` run before the transaction) spare the
    extraction here; ``neighbours`` (rowid, cosine), looked up by intake before the insert, spare
    a second nearest-neighbour search, and ``neighbour_ids`` (rowid -> id) the lookup of their ids.
    ``entity_rows``: the entity rows this write transaction upserted (``graph.upsert_entity``'s
    ``known``), kept by the caller for the transaction.
    """
    at = ctx.now_iso()
    entity_ids = link_entities(ctx, rowid, memory, entities, entity_rows)
    if vector is not None:
        link_semantic(ctx, rowid, memory, vector, at, neighbours, neighbour_ids)
    link_temporal(ctx, rowid, memory, at)
    link_causal(ctx, rowid, memory, entity_ids, at)


def link_entities(ctx: "Context", rowid: int, memory: "Memory", entities: "list[Entity] | None",
                  entity_rows: dict[str, list[Any]] | None = None) -> list[int]:
    """Upsert the memory's entities (extracted here unless given) and record its mentions; returns entity ids.
    ``entity_rows``: see ``after_insert``."""
    found = entities_of(memory) if entities is None else entities
    ids: list[int] = []
    for entity in found[:MAX_ENTITIES]:
        if not entity.key or len(entity.key) > 200:
            continue
        ids.append(sql.upsert_entity(ctx.store, entity.key, entity.surface[:200], entity.type, memory.created_at,
                                     entity_rows))
    ids = list(dict.fromkeys(ids))  # two surfaces of one entity ("Postgres", "PostgreSQL") are one mention
    sql.add_mentions(ctx.store, rowid, ids)
    return ids


def link_semantic(ctx: "Context", rowid: int, memory: "Memory", vector: "np.ndarray", at: str,
                  neighbours: "list[tuple[int, float]] | None" = None,
                  neighbour_ids: dict[int, str] | None = None) -> int:
    """``see_also`` both ways to the most similar earlier memories of the same scope; returns links made."""
    import numpy as np

    store = ctx.store
    # ctx.vectors: coarse int8 KNN rescored in float32 when cold, the in-RAM matrix when warm (batches).
    found = neighbours if neighbours is not None else ctx.vectors.nearest(
        np.asarray(vector, dtype=np.float32), SEE_ALSO_MAX + 1, memory.scope)
    picked = [(sim, other) for other, sim in found if other != rowid and sim >= SEE_ALSO_MIN][:SEE_ALSO_MAX]
    if not picked:
        return 0
    known = neighbour_ids or {}
    missing = [r for _, r in picked if r not in known]
    ids = {**known, **sql.ids_of(store, missing)} if missing else known
    edges = []
    for sim, other in picked:
        if other in ids:
            edges.append((memory.id, ids[other], "semantic", "see_also", round(sim, 4)))
            edges.append((ids[other], memory.id, "semantic", "see_also", round(sim, 4)))
    return sql.add_edges(store, edges, at) // 2


def session_key(memory: "Memory") -> Any:
    """The memory's session: ``meta.session``, else its ``source`` (what ``graph.SESSION_KEY`` computes in SQL)."""
    session = memory.meta.get("session") if isinstance(memory.meta, dict) else None
    if isinstance(session, bool):  # json_extract gives SQLite's 1/0 for JSON true/false
        return int(session)
    if isinstance(session, (str, int, float)):
        return session
    if session is not None:  # an object or array: json_extract yields its JSON text
        import orjson

        return orjson.dumps(session).decode()
    return memory.source


def link_temporal(ctx: "Context", rowid: int, memory: "Memory", at: str) -> None:
    """``precedes`` chain and ``same_session`` window within the memory's session."""
    store = ctx.store
    key = session_key(memory)
    if key is None:
        return
    before = sql.session_members(store, memory.scope, key, memory.created_at, rowid, SESSION_WINDOW + 1, before=True)
    after = sql.session_members(store, memory.scope, key, memory.created_at, rowid, 1, before=False)
    edges = []
    if before:
        edges.append((before[0][1], memory.id, "temporal", "precedes", 1.0))
    if after:
        edges.append((memory.id, after[0][1], "temporal", "precedes", 1.0))
        if before:  # spliced in between two memories: they are no longer adjacent
            sql.delete_edge(store, before[0][1], after[0][1], "precedes")
    for distance, (_, other_id) in enumerate(before[1:], start=2):
        edges.append((other_id, memory.id, "temporal", "same_session", round(1.0 / distance, 4)))
    sql.add_edges(store, edges, at)


@lru_cache(maxsize=4096)  # read once when a memory arrives, again each time it is a causal candidate
def causal_reading(text: str) -> tuple[str, str, str, str] | None:
    """``(edge type, role, focus, stated cause)`` of the first causal shape in ``text``, or None.

    >>> causal_reading("Fixed the nightly build by pruning old Docker images")
    ('resolved', 'resolves', 'the nightly build', '')
    >>> causal_reading("Root cause of the slow checkout was a missing index")
    ('caused', 'explains', 'the slow checkout', '')
    """
    lowered = text.lower() if text.isascii() else None  # another script may match a mark without its case
    for (pattern, kind, role), marks in zip(_CAUSAL_SHAPES, _CAUSAL_MARKS):
        if PREFILTER and lowered is not None \
                and not (any(mark in lowered for mark in marks) if marks else lowered.startswith(_OPENERS)):
            continue
        for found in pattern.finditer(text):
            focus = found.group("focus").strip()
            if role == "resolves" and (_NOT_AN_OBJECT.match(focus) or _ROUTINE_END.search(focus)
                                       or _ROUTINE_NEXT.match(text, found.end())):
                continue  # "security fixes are applied", "we patch the kernel monthly", "is patched per update"
            return kind, role, focus, (found.groupdict().get("cause") or "").strip()
    return None


# A fix is an event with an object. A fix word whose object opens with a verb or a preposition was a
# noun ("security fixes are applied", "the fix was an index"); one said of a routine (a frequency right
# after it, or closing its object) repairs nothing earlier ("patched per update", "the kernel monthly").
_ROUTINE = r"(?:per|every|each|daily|weekly|monthly|nightly|hourly|regularly|routinely|automatically)"
_NOT_AN_OBJECT = re.compile(rf"(?:is|are|was|were|be|been|has|have|had|will|would|should|can|must|in|on|at|of|"
                            rf"to|from|for|into|per|every|each)\b", re.IGNORECASE)  # not "nightly builds": an adjective
_ROUTINE_END = re.compile(rf"\b{_ROUTINE}$", re.IGNORECASE)
_ROUTINE_NEXT = re.compile(rf"\s+(?:on\s+|once\s+)?{_ROUTINE}\b", re.IGNORECASE)


def link_causal(ctx: "Context", rowid: int, memory: "Memory", entity_ids: list[int], at: str) -> int:
    """Causal shapes link this memory to the earlier memory its focus names; returns links made.

    Candidates are recent memories of the scope that share an entity with this one or sit just
    before it. A candidate *names* the focus when it holds a third of its word stems (at least
    one); the one holding most of them is meant, then one that reads as a problem, then the one
    with more shared entities (damped by their fan).
    What the candidate itself says decides the link, not a cue list:

    - a fix ("fixed X by Y", "to fix X we Y") resolves the report of X (a candidate that makes no
      causal claim) and the explanation of X (one that explains X), this -> each;
    - an explanation ("X broke because Y", "the root cause of X was Y") caused the report of X
      (this -> report); when X is a decision ("we chose X because Y") or nothing earlier names X,
      the earlier memory naming the stated cause Y (for a decision, else the one naming X) caused
      this one (earlier -> this);
    - a follow-up ("after X, we Y") resolves X when X was a problem (an explanation, a report
      something explains, or one that reads as a problem), else X motivated it (earlier -> this).
    """
    reading = causal_reading(memory.text)
    if reading is None:
        return 0
    kind, role, focus, cause = reading
    pool = _causal_pool(ctx, rowid, memory, entity_ids)
    named = _naming(pool, focus)
    links: list[tuple[str, str, str, float]] = []  # (src, dst, type, entity score)
    if role == "resolves":
        reports = [c for c in named if c.role is None]
        explanations = [c for c in named if c.role == "explains"]
        links += [(memory.id, c.id, "resolved", c.shared) for c in (reports[:1] + explanations[:1])]
    elif role == "explains":
        decision = bool(_DECIDER.match(focus)) and not PROBLEM.search(focus)  # "we lost X because Y" explains X
        reports = [c for c in named if c.role is None] if not decision else []
        if reports:
            links += [(memory.id, c.id, "caused", c.shared) for c in reports[:1]]
        else:  # what led to it: the memory naming its reason (or, for a decision, what it decides on)
            led = _naming(pool, cause) or (named if decision else [])
            links += [(c.id, memory.id, "caused", c.shared) for c in led[:1]]
    else:  # follows: "after X, we Y", "... so that ..."
        for c in (named if focus else _by_entities(pool))[:1]:
            if focus and (c.problem or c.role == "explains" or sql.causal_sources(ctx.store, [c.rowid], ("caused",))):
                links.append((memory.id, c.id, "resolved", c.shared))
            else:
                links.append((c.id, memory.id, kind, c.shared))
    made = 0
    for src, dst, link_type, shared in links:
        weight = round(min(1.0, max(shared, CAUSAL_MIN_SCORE)), 4)  # the entity evidence, as a link weight
        made += sql.add_edge(ctx.store, src, dst, "causal", link_type, weight, at)
    return made


@dataclass(frozen=True)
class _Candidate:
    hits: int  # stems of the phrase it holds
    score: float  # shared entities plus FOCUS_WEIGHT per focus stem held
    rowid: int
    id: str
    shared: float  # the shared-entity score alone
    role: str | None  # the candidate's own causal role (explains, resolves, follows), None for a plain report
    problem: bool  # reads as a problem (PROBLEM)


def _stems(text: str) -> set[str]:
    from mem.text import content_terms, stem

    return {stem(t, STEM_PREFIX) for t in content_terms(text) if len(t) > 1}  # "sizes" -> "size", not "siz"


@lru_cache(maxsize=4096)
def _stem_index(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """A candidate's stems, and every prefix of them at least ``STEM_PREFIX`` long (cached: intake asks
    about the same recent memories for every new one)."""
    stems = frozenset(_stems(text))
    return stems, frozenset(s[:k] for s in stems for k in range(STEM_PREFIX, len(s) + 1))


def _probes(wanted: set[str]) -> list[tuple[str, frozenset[str] | None]]:
    """Each wanted stem with its own shorter prefixes of ``STEM_PREFIX``+ letters (None when it is
    shorter than that: it only matches equal), built once per phrase rather than once per candidate."""
    return [(w, frozenset(w[:k] for k in range(STEM_PREFIX, len(w))) if len(w) >= STEM_PREFIX else None)
            for w in wanted]


def _held(wanted: set[str], text: str, probes: list[tuple[str, frozenset[str] | None]] | None = None) -> int:
    """How many of ``wanted`` appear among the stems of ``text`` (equal, or one a prefix of the other,
    4+ letters): ``w`` starts a stem when it is among their prefixes, a stem starts ``w`` when one of
    ``w``'s own prefixes is a stem. ``probes``: ``_probes(wanted)``, when the caller has it."""
    stems, prefixes = _stem_index(text)
    return sum(1 for w, own in (probes or _probes(wanted))
               if w in stems or own is not None and (w in prefixes or not stems.isdisjoint(own)))


def _naming(pool: list[tuple[float, int, str, str]], phrase: str) -> "list[_Candidate]":
    """The pool's memories that name ``phrase`` (a third of its stems, at least one), best first."""
    wanted = _stems(phrase) if phrase else set()
    if not wanted:
        return []
    need = (len(wanted) + 2) // 3
    probes = _probes(wanted)
    out = []
    for shared, other, other_id, text in pool:
        hits = _held(wanted, text, probes)
        if hits >= need:
            reading = causal_reading(text)
            out.append(_Candidate(hits, shared + FOCUS_WEIGHT * hits, other, other_id, shared,
                                  reading[1] if reading else None, _problem(text)))
    # most of the phrase first; among equals, a problem, then the entity evidence, then the latest
    return sorted(out, key=lambda c: (-c.hits, not c.problem, -c.score, -c.rowid))


@lru_cache(maxsize=4096)  # a recent memory is a candidate of every new one that names it
def _problem(text: str) -> bool:
    """Whether ``text`` reads as a problem (``PROBLEM``)."""
    return bool(PROBLEM.search(text))


def _by_entities(pool: list[tuple[float, int, str, str]]) -> "list[_Candidate]":
    """The pool's memories sharing enough entity evidence (``CAUSAL_MIN_SCORE``), strongest first."""
    out = [_Candidate(0, shared, other, other_id, shared, None, False)
           for shared, other, other_id, _ in pool if shared >= CAUSAL_MIN_SCORE]
    return sorted(out, key=lambda c: (-c.score, -c.rowid))


def _causal_pool(ctx: "Context", rowid: int, memory: "Memory", entity_ids: list[int]) -> list[tuple[float, int, str, str]]:
    """``(entity score, rowid, id, text)`` of the recent memories of the scope a causal link may reach."""
    from mem.enrich.timestamps import parse_datetime

    store = ctx.store
    fans = sql.entity_fans(store, entity_ids) if entity_ids else {}
    scores: dict[int, float] = {}
    for entity_id in entity_ids:
        damp = 1.0 / math.log(1.0 + fans.get(entity_id, 1))
        for other in sql.recent_mentioners(store, entity_id, rowid, CAUSAL_PER_ENTITY):
            scores[other] = scores.get(other, 0.0) + damp
    for other in sql.recent_in_scope(store, memory.scope, memory.created_at, rowid, CAUSAL_RECENT):
        scores.setdefault(other, 0.0)
    try:
        mine = parse_datetime(memory.created_at)
    except ValueError:
        return []
    pool = []
    for other, (other_id, scope, created, text) in sql.brief(store, list(scores)).items():
        try:
            age = (mine - parse_datetime(created)).total_seconds() / 86400.0
        except ValueError:
            continue
        if scope == memory.scope and abs(age) <= CAUSAL_WINDOW_DAYS:
            pool.append((scores[other], other, other_id, text))
    return pool
