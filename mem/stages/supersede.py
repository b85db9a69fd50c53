"""Contradiction check at intake: a newer assertion supersedes an older one.

The memory base as a sheaf
--------------------------
Think of the memory base as a sheaf of claims over a space of *contexts*. A context is a scope
(a project) times a validity interval ``[created_at, valid_until)`` (open-ended when
``valid_until`` is unset). Each memory contributes local sections: the assertions
``(subject, attribute, value, polarity)`` that ``mem.enrich.assertions`` extracts from its text.
Sections glue when they agree wherever their contexts overlap; a non-trivial H^1 class, a
*conflict*, is the same subject and attribute with incompatible values on an overlap.

We decided what overlaps:

* **Scopes**: only the same scope. ``global`` does not overlap a project scope: a project saying
  "we use spaces" next to a global "I prefer tabs" is a local override, not a contradiction.
* **Sessions do not partition.** Sessions (``meta.session``) are a temporal cover of one
  project, not separate worlds: a fact stated in session 3 and revised in session 9 is exactly
  the knowledge update we must catch, so two sessions of one scope always overlap. Keeping
  sessions apart would hide every cross-session update.
* **Time**: a memory whose ``valid_until`` passed before the other was observed has expired: its
  section no longer covers that instant, so it cannot conflict (it is history, not a rival).

Resolving a conflict (the class is killed by restricting the older section):

* The newer memory (``created_at``; ties: the one stored later) supersedes the older: a
  ``supersedes`` edge (layer ``lifecycle``) newer -> older and the older's ``superseded_by``. Its
  ``verification`` is left alone: "superseded" is its own state, kept for history, hidden from
  default search and shown with ``--include-superseded``; ``contradicted`` is reserved for the
  conflicts nobody resolved (below). A ``correction`` supersedes whatever it talks about (the
  assertions module widens the test for ``new_kind="correction"``).
* If the incoming memory is OLDER than the stored one (an import of old data), the incoming one
  is superseded and intake reports status ``superseded``.
* A newer section bounded in time (``valid_until``, read from "until Jan 6" by ``mem.enrich.bounds``)
  over an open-ended older one restricts it only until its end: a ``suspends`` edge newer -> older,
  both left live (``BOUNDED``; search reads the edge against the query's now: ``mem.score.validity``).
* Governance: a pinned memory is never superseded automatically (whatever its layer; an
  unpinned constitutional memory such as "I work at X" does get updated: people change jobs).
  The conflict stays *open*: a
  ``contradicts`` edge newer -> older, the newer marked ``verification = "contradicted"``, and
  ``mem verify`` lists it until a person resolves it.

The assertions are stored (``assertions`` table) keyed by (scope, attribute group, canonical
subject), (scope, attribute group, slot) and (scope, value), so finding rivals is an indexed lookup
(the value key catches negations and "moved from X" across attributes); the final decision is
always ``mem.enrich.assertions.supersedes`` on the two texts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mem.records import Memory
    from mem.stages.context import Context
    from mem.store.lifecycle import RivalRows

CANDIDATES = 50
SHARERS = 30  # memories sharing most of a correction's entities looked up beside its neighbours
NEIGHBOUR_MIN = 0.5  # cosine at which a candidate counts as a semantic neighbour (one piece of evidence)
ALIGNED = True  # a close neighbour restating the older's claim with one value replaced or denied supersedes it
COUNTERPARTS = True  # ... with words told otherwise matched by their token states (``mem.score.counterparts``)
JUDGE = True  # what the rules leave, judged by a model of the pair's structure (``mem.score.replaces``)
# ... also for a memory arriving after newer ones (an import of old data): they judge it (``_judged_back``)
JUDGE_BACK = True
# cosine for an open contradicts edge when a correction on a related slot does not clearly replace it;
# a semantic neighbour is close enough when the correction says what holds now ("Hana has the notifier
# now" after "Olu owns the notifier service", .62): the edge only orders the two in search, newer first
CONTRADICTS_MIN = 0.65
# ... and for a correction that says what holds now ("any more", "now", ...) on the older's slot, down to the
# cosine intake looks neighbours up to for the judge (``replaces.FLOOR``): worded apart, it is still the
# news of the older ("The Banner push doesn't run from cron any more: Ethos change notifications trigger
# it" after "Enrollment changes are pushed to Banner every quarter of an hour", .48). 22 studied coding sets
# (eighteenth session): rank-1 2,522 -> 2,522 of 2,970, above 124 -> 116, R@5 2,888 -> 2,890 (.42, before its
# neighbours were candidates too: 2,522 / 121; .5 before; the
# other readings' CONTRADICTS_MIN at .5 as well: 2,508 / 116).
MARKED_CONTRADICTS_MIN = 0.35
# A correction that replaced what it corrects opens no contradicts edge to the other memories it relates to:
# those edges were mostly wrong ("Correction: Bates numbers get 8 digits of zero padding" had superseded the
# padding it corrects, and its edge to the how-to for a matter's Bates prefix put it over that how-to). On
# the 22 studied coding sets (nineteenth session), of the open edges from a correction that had replaced
# something, 193 joined pairs nobody labelled and 47 labelled ones; with the edges honoured by the page
# model (``mem.score.page_order.DECIDED``) rank-1 2,538 -> 2,551 of 2,970, above 99 -> 99. False: off.
ONE_TARGET = True
LOOKUP = 10  # earlier memories a correction looks up by the old values and slot words it names
LOOKUP_TERMS = 16  # words of an older memory, arriving after newer ones, it looks its correction up by
# Facts about two deployment environments are rows of one table ("RDS automated backups for prod are kept 7
# days" / "Staging RDS keeps automated backups for 1 day"): neither supersedes nor contradicts the other
# (``mem.score.environment.apart``). Of the supersessions intake made on the 22 studied coding sets, those
# across environments were 22 nobody labelled and 4 labelled (eighteenth session); rank-1 2,487 -> 2,496 of
# 2,970. False: off.
ENVIRONMENTS = True
# ... nor do two statements for different cases, one opening with a case the other does not name ("In storm mode
# the crew app pings GPS every 15 seconds" beside "... every 60 seconds while a crew is on shift";
# ``mem.enrich.conditions``). Of the 629 supersessions intake made on the 22 studied coding sets (twentieth session),
# it leaves 8, every one unlabelled and wrong (a general statement hiding the storm-mode rate, the Saturday
# deadline, one stack's retention, one roster's time limit, the wall-time threshold); rank-1 2,551 -> 2,552 of
# 2,970, above 99 -> 100; held-out 799 -> 800 of 978, above 56 -> 56. False: off.
CONDITIONS = True
# A statement that names its own end ("back to 2 on Dec 2", "until Jan 6": ``valid_until``) replaces no
# open-ended statement: after its end the older holds again (the sheaf's sections overlap only until then),
# so where intake would supersede, it records a ``suspends`` edge (``mem.score.validity``). False: off.
BOUNDED = True
# A newer that says the older's value comes back ("revert to 30 when the audit closes", with no day named) holds for
# a while: an open contradiction (search ranks it first, ``mem verify`` lists it), never a supersession; one that says
# every value of the older stays ("the default TTL stays 1 hour") adds to it: nothing at all. False: off.
COMES_BACK = True
# A rival assertion told in a statement whose end was over when it was written ("until 2020") is history. False: off.
PAST = True
# Episodes record what was said in a conversation ("Caroline: I'm off to the gym"), not what is
# true of the project: two turns never supersede each other, or a chat log would hide itself.
NOT_ASSERTED = frozenset({"episode"})


def assertions_of(memory: "Memory") -> list[Any]:
    """The assertions ``check`` weighs for ``memory`` (none for kinds that assert nothing); pure, so
    intake runs it before its write transaction."""
    from mem.enrich.assertions import extract_assertions

    return [] if memory.kind in NOT_ASSERTED else extract_assertions(memory.text)


def index(ctx: "Context", rowid: int, memory: "Memory", found: list[Any] | None = None,
          kept: "RivalRows | None" = None) -> list[Any]:
    """Store ``memory``'s assertions (extracted here unless given) inside a write transaction; returns them.
    ``kept``: the transaction's ``RivalRows``, told of them."""
    from mem.enrich.assertions import extract_assertions, slot_key
    from mem.store import lifecycle as sql

    if found is None:
        found = extract_assertions(memory.text)
    rows = []
    for assertion in found:
        group, subject, slot = slot_key(assertion)
        rows.append((group, subject, slot, assertion.value, assertion.polarity))
    sql.index_assertions(ctx.store, rowid, memory.scope, rows)
    if kept is not None:
        kept.indexed(rowid, memory.scope, rows)
    return found


def _protected(older: "Memory", newer: "Memory") -> bool:
    return older.pinned


def apart(a: str, b: str) -> bool:
    """Whether two texts hold for different deployment environments (``ENVIRONMENTS``)."""
    from mem.score import environment

    return ENVIRONMENTS and environment.apart(a, b)


def rows_apart(a: str, b: str) -> bool:
    """Whether two texts are rows of one table rather than one fact told twice: about two deployment
    environments (``apart``), or two cases, one opening with a case the other does not name (``CONDITIONS``)."""
    from mem.enrich.conditions import narrowed

    return apart(a, b) or CONDITIONS and (narrowed(a, b) or narrowed(b, a))


def suspended_by(ctx: "Context", memory: "Memory") -> list[str]:
    """The ids of the memories ``memory`` suspends until its end (its ``suspends`` edges, ``BOUNDED``), sorted."""
    from mem.store import lifecycle as sql

    if memory.valid_until is None:
        return []  # only a memory with an end suspends: no query for the others
    return sorted(sql.replaced_by(ctx.store, [memory.id], type="suspends").get(memory.id, ()))


def rebound(ctx: "Context", memory: "Memory", end_before: str | None) -> None:
    """After an update gave ``memory`` an end or took its end back (``end_before``: the one it had), inside the
    update's write: what it superseded for good it now suspends until its end (the older is live again, a
    ``suspends`` edge in place of the ``supersedes`` one); what it suspended it now supersedes, as intake would
    have (a pinned older gets an open ``contradicts`` edge instead)."""
    from mem.store import lifecycle as sql
    from mem.store.graph import delete_edge

    if not BOUNDED or (end_before is None) == (memory.valid_until is None):
        return
    at = ctx.now_iso()
    if memory.valid_until is not None:  # for a while now
        for older_id in sorted(sql.replaced_by(ctx.store, [memory.id]).get(memory.id, ())):
            older = ctx.store.get(older_id)
            if older.superseded_by == memory.id and older.valid_until is None:
                delete_edge(ctx.store, memory.id, older_id, "supersedes")
                ctx.store.update_memory(older_id, {"superseded_by": None}, at=at, op="unsupersede")
                sql.add_edge(ctx.store, memory.id, older_id, layer="lifecycle", type="suspends", at=at)
        return
    for older_id in sorted(sql.replaced_by(ctx.store, [memory.id], type="suspends").get(memory.id, ())):  # for good
        older = ctx.store.get(older_id)
        delete_edge(ctx.store, memory.id, older_id, "suspends")
        if older.superseded_by is None and older.status != "archived":
            _resolve(ctx, memory, older, [], reason=f"its end ({end_before[:10]}) was taken back")


def _cases_apart(newer: Any, older: Any, reading: Any = None) -> bool:
    """Whether the two hold for different cases (``CONDITIONS``, ``mem.enrich.conditions``): the newer opens with
    a case the older does not name ("In storm mode the crew app pings GPS every 15 seconds" after "... every 60
    seconds"), or the older does and the newer, a general statement, names no value the older states as the
    one it replaces ("GPS pings from the crew app: every 20 seconds" leaves the storm-mode rate; "Queue-it is
    gone" replaces "During registration week Queue-it sits in front of /register"). ``reading``: the
    newer's ``corrections.read``, when known."""
    from mem.enrich import corrections
    from mem.enrich.conditions import narrowed

    if not CONDITIONS:
        return False
    if narrowed(newer.text, older.text):
        return True
    if not narrowed(older.text, newer.text):
        return False
    reading = reading if reading is not None else corrections.read(newer.text, newer.kind)
    return reading is None or corrections.names_old(reading, older.text) is None


def _overlap(a: "Memory", b: "Memory") -> bool:
    """Time overlap of the two sections: neither expired before the other was observed."""
    return ((a.valid_until is None or a.valid_until > b.created_at)
            and (b.valid_until is None or b.valid_until > a.created_at))


def floor(ctx: "Context") -> float:
    """The cosine down to which intake looks a new memory's neighbours up for this check: the judge reads
    further than the rules (a correction is most often its memory's nearest older neighbour even when the
    two are worded apart: "V1 trips at 12 auths an hour." after "Fraud rule V1 declines a card after 8
    authorizations within one hour.", .37); with no judge (the hash embedder has no token states) the rules'.
    Asked inside the chunk's write transaction, so it reads the embedder only if already resolved: a chunk
    whose every record the gate refused has embedded nothing, and resolving here would bind the database."""
    from mem.score import replaces

    embedder = ctx.embedder_in_use
    return min(NEIGHBOUR_MIN, replaces.FLOOR) if JUDGE and hasattr(embedder, "offsets") else NEIGHBOUR_MIN


def check(ctx: "Context", rowid: int, memory: "Memory", found: list[Any] | None = None, *,
          neighbours: "Sequence[tuple[int, float]] | None" = None, later: bool | None = None,
          after: bool | None = None, tokens: "Mapping[int, tuple[str, bytes]] | None" = None,
          kept: "RivalRows | None" = None, pending: "Sequence[tuple[int, str, Any]]" = ()) -> list[str]:
    """Called inside the intake write transaction after insert (and after its entities are linked);
    returns the ids superseded.

    ``found``: the memory's assertions when already extracted (``assertions_of``); ``neighbours``:
    its nearest stored memories (rowid, cosine) when intake looked them up; ``later``: whether a memory
    of its scope stored before it was created after it, when the caller knows (``sql.Arrivals``); ``after``:
    whether a memory stored above it can be one of its candidates, when the caller knows (with ``later``);
    ``tokens``: compact token states (``mem.store.token_states``) by rowid of memories not stored yet
    (it and the earlier memories of its intake chunk);
    ``kept``: the write transaction's ``sql.RivalRows`` (eager intake's chunk), which answers the
    candidate lookups from rows read once and knows the memory's arrival (it was ``stored`` there);
    ``pending``: that chunk's ``(rowid, scope, vector)`` not written yet (``_judged_back`` reads them).

    Two passes: rival assertions on the same slot (``conflict_candidates``), then corrections read
    from structure (``_corrections``). The list contains ``memory.id`` itself when the incoming
    memory is the older side of a conflict (intake then reports status ``superseded``).
    """
    from mem.enrich.assertions import supersedes
    from mem.store import lifecycle as sql

    if memory.kind in NOT_ASSERTED:
        index(ctx, rowid, memory, [], kept)  # marked indexed with no assertions, so replay never comes back to it
        return []
    found = index(ctx, rowid, memory, found, kept)
    if memory.superseded_by:
        return []
    superseded: list[str] = []
    if found:
        scope, keys, values = rival_lookups(memory, found)
        lookup = kept.conflicts if kept is not None else partial(sql.conflict_candidates, ctx.store)
        rivals = lookup(scope=scope, keys=keys, values=values, exclude=rowid, limit=CANDIDATES)
        for other_rowid, other in rivals:
            newer, older = _ordered(rowid, memory, other_rowid, other)
            pairs = _overlap(memory, other) and not apart(newer.text, older.text) \
                and not _cases_apart(newer, older) \
                and _not_history(newer, supersedes(newer.text, older.text, newer.kind))
            if pairs and _resolve(ctx, newer, older, superseded, kept, _asserted(pairs[0])) and older is memory:
                return superseded  # the incoming memory is history now; it supersedes nothing
    return _corrections(ctx, rowid, memory, neighbours or [], superseded, later, tokens, kept, after, pending)


def _not_history(newer: "Memory", pairs: list[Any]) -> list[Any]:
    """The rival assertion ``pairs`` whose newer value is not told in a statement of ``newer`` that ended before it
    was written ("... were kept on an NFS share until 2020": ``mem.enrich.bounds.past``). ``PAST``: off."""
    from mem.enrich.bounds import past
    from mem.enrich.timestamps import parse_datetime

    told = [s.lower() for s in past(newer.text, parse_datetime(newer.created_at))] if PAST and pairs else []
    return [pair for pair in pairs if not any(str(pair[0].value).lower() in statement for statement in told)]


def _asserted(pair: tuple[Any, Any]) -> str:
    """A rival assertion in words: "database of api: postgres -> mysql"."""
    new, old = pair
    values = f"{'' if old.polarity else 'not '}{old.value} -> {'' if new.polarity else 'not '}{new.value}"
    return f"the same claim with another value ({old.attribute} of {old.subject}: {values})"


def _close(neighbours: "Sequence[tuple[int, float]]") -> "list[tuple[int, float]]":
    """The neighbours the rules read: those at ``NEIGHBOUR_MIN`` (intake may look further for the judge)."""
    return [(other, sim) for other, sim in neighbours if sim >= NEIGHBOUR_MIN]


def rival_lookups(memory: "Memory", found: Sequence[Any]) -> tuple[str, list[tuple[str, str, str]], list[str]]:
    """``(scope, slot keys, values)`` the rivals of ``memory``'s assertions ``found`` are looked up by."""
    from mem.enrich.assertions import slot_key

    return memory.scope, [slot_key(a) for a in found], [a.value for a in found]


def _ordered(rowid: int, memory: "Memory", other_rowid: int, other: Any) -> tuple[Any, Any]:
    """(newer, older) by ``created_at``; ties: the one stored later is newer."""
    if (memory.created_at, rowid) > (other.created_at, other_rowid):
        return memory, other
    return other, memory


def _resolve(ctx: "Context", newer: Any, older: Any, superseded: list[str], kept: "RivalRows | None" = None,
             reason: str = "") -> bool:
    """``newer`` supersedes ``older`` (appended to ``superseded``), or, when ``older`` is pinned, an
    open ``contradicts`` edge; returns whether it was superseded. ``kept``: see ``check``; ``reason``: why,
    in words, kept in the changelog for ``mem get --explain``."""
    from mem.store import lifecycle as sql

    at = ctx.now_iso()
    if BOUNDED and newer.valid_until is not None and older.valid_until is None:
        # the newer holds until a day of its own, then the older again: it suspends the older for a while
        sql.add_edge(ctx.store, newer.id, older.id, layer="lifecycle", type="suspends", at=at)
        return False
    if _protected(older, newer):
        if sql.add_edge(ctx.store, newer.id, older.id, layer="lifecycle", type="contradicts", at=at):
            ctx.store.update_memory(newer.id, {"verification": "contradicted"}, at=at, op="contradict")
        return False
    sql.add_edge(ctx.store, newer.id, older.id, layer="lifecycle", type="supersedes", at=at)
    ctx.store.update_memory(older.id, {"superseded_by": newer.id}, at=at, op="supersede", reason=reason or None)
    if kept is not None:
        kept.superseded(older.id)
    superseded.append(older.id)
    return True


def _corrections(ctx: "Context", rowid: int, memory: "Memory", neighbours: "Sequence[tuple[int, float]]",
                 superseded: list[str], later: bool | None = None,
                 tokens: "Mapping[int, tuple[str, bytes]] | None" = None,
                 kept: "RivalRows | None" = None, after: bool | None = None,
                 pending: "Sequence[tuple[int, str, Any]]" = ()) -> list[str]:
    """Corrections read from structure (``mem.enrich.corrections``): among the memory's nearest
    neighbours and the memories sharing its entities, the newer of each pair, when it reads as a
    correction, supersedes the older if the older states the old value it names (or holds the same
    slot with another number); a close neighbour on the same slot that it does not clearly replace
    gets an open ``contradicts`` edge instead, which search and ``mem verify`` show."""
    from mem.enrich import aligned, corrections
    from mem.store import lifecycle as sql
    from mem.text import content_terms

    judged, neighbours = neighbours, _close(neighbours)
    cosine = dict(judged)  # every neighbour intake looked up (the rules' close ones, and down to the judge's floor)
    candidates = [other for other, _ in neighbours]
    incoming = corrections.read(memory.text, memory.kind)
    out_of_order, stored_after = kept.arrival(rowid) if kept is not None else \
        sql.arrival(ctx.store, rowid, memory.scope, memory.created_at, later=later, after=after)
    sharers = SHARERS
    if incoming is None and not out_of_order and not stored_after:
        # every candidate is older than this memory, which reads as no correction: only a close neighbour
        # it restates with a value swapped or denied can be corrected (``aligned``); with none there is
        # nothing to decide (live intake's memory is the newest: no candidates looked up)
        candidates = [other for other, sim in neighbours if sim >= NEIGHBOUR_MIN] if ALIGNED else []
        if not candidates:
            _judged(ctx, rowid, memory, judged, superseded, incoming, tokens, kept)
            return superseded
        sharers = 0
    # what a correction corrects may be no semantic neighbour ("the dev API now listens on port 8080,
    # not 8000" and a how-to that starts uvicorn on port 8000: cosine .30): look up the memories stored
    # before it (so bulk intake's finishing pass, with later memories stored already, decides as eager
    # intake did) by the old values it names and its settings' slot words; and when this memory is
    # older than some of them (an import of old data: its correction may be stored already), by its
    # own words, so supersession holds in both orders
    lookups = [corrections.lookup_terms(incoming)] if incoming is not None else []
    if out_of_order:
        lookups.append(content_terms(memory.text)[:LOOKUP_TERMS])
    for terms in lookups:
        if terms:
            # from RAM in a process that looked up a few times (a stream, an import's finishing pass):
            # a word common in the store costs FTS5 ~15 ms at 100k
            candidates += [r for r, _ in ctx.store.bm25_any(terms, LOOKUP, memory.scope) if r < rowid]
    if incoming is not None and incoming.marked:
        # what a correction saying what holds now may contradict, worded apart: its neighbours down to the
        # judge's floor, named, so eager and bulk intake (whose entity sharers differ) read the same ones
        candidates += [r for r in cosine if r not in candidates]
    lookup = kept.corrections if kept is not None else partial(sql.correction_candidates, ctx.store)
    doubted: list[tuple[str, str, float]] = []  # (newer id, older id, cosine): open contradicts edges (``ONE_TARGET``)
    for other_rowid, other in lookup(rowid, memory.scope, candidates, limit=sharers):
        if other.kind in NOT_ASSERTED or other.id in superseded or not _overlap(memory, other):
            continue
        newer, older = _ordered(rowid, memory, other_rowid, other)
        reading = incoming if newer is memory else corrections.read(newer.text, newer.kind)
        # rows of two environments, unless the newer says the thing is gone with nothing in its place: that
        # holds wherever it ran ("The integration suite no longer runs against Stripe" after "... runs
        # against a live Stripe sandbox")
        if apart(memory.text, other.text) and not (reading is not None and reading.old and not reading.new
                                                    and not reading.settings):
            continue
        if _cases_apart(newer, older, reading):  # rows of two cases ("In storm mode ...")
            continue
        sim = cosine.get(other_rowid, 0.0)
        corrected = reading is not None and corrections.corrects(reading, older.text, neighbour=sim >= NEIGHBOUR_MIN)
        # else a close neighbour restating the older's claim with a value replaced, or denying it (``aligned``)
        restated = not corrected and ALIGNED and sim >= NEIGHBOUR_MIN and aligned.replaced(
            newer.text, older.text, _counterparts(ctx, (rowid, memory, tokens), (other_rowid, other), newer is memory))
        if (corrected or restated) and COMES_BACK:
            if corrections.keeps_all(reading, older.text):
                continue  # the older's values said to stay ("the default TTL stays 1 hour"): it adds, replaces nothing
            if corrections.comes_back(newer.text, older.text):
                # a while, after which the older holds again ("revert to 30 when the audit closes"): unsure, left open
                doubted.append((newer.id, older.id, sim))
                continue
        if corrected or restated:
            reason = f"a correction: {corrected}" if corrected else f"restated: {restated}"
            if _resolve(ctx, newer, older, superseded, kept, reason) and older is memory:
                break
        elif reading is not None and sim >= (MARKED_CONTRADICTS_MIN if reading.marked else CONTRADICTS_MIN) \
                and corrections.related(reading, older.text):
            doubted.append((newer.id, older.id, sim))
    if memory.id not in superseded:
        _judged(ctx, rowid, memory, judged, superseded, incoming, tokens, kept)
    if JUDGE_BACK and out_of_order and memory.id not in superseded:
        _judged_back(ctx, rowid, memory, judged, superseded, tokens, kept, pending)
    replaced = any(other != memory.id for other in superseded)  # by the rival assertions' pass too
    for newer_id, older_id, sim in doubted:
        if not (ONE_TARGET and replaced and newer_id == memory.id):
            sql.add_edge(ctx.store, newer_id, older_id, layer="lifecycle", type="contradicts",
                         at=ctx.now_iso(), weight=round(sim, 4))
    return superseded


def _counterparts(ctx: "Context", mine: tuple[int, "Memory", "Mapping[int, tuple[str, bytes]] | None"],
                  theirs: tuple[int, Any], newer_is_mine: bool) -> Any:
    """``aligned``'s test of two words by their token states (``mem.score.counterparts``), reading the
    states only when asked: None without token states (the hash embedder) or with ``COUNTERPARTS`` off."""
    embedder = ctx.embedder
    if not COUNTERPARTS or not hasattr(embedder, "offsets"):
        return None
    from mem.score.counterparts import Counterparts

    def rows() -> tuple[Any, Any]:
        (rowid, memory, pending), (other_rowid, other) = mine, theirs
        found = _token_rows(ctx, [(rowid, memory.text), (other_rowid, other.text)], pending)
        my_rows, their_rows = found[rowid], found[other_rowid]
        return (their_rows, my_rows) if newer_is_mine else (my_rows, their_rows)

    newer, older = (mine[1], theirs[1]) if newer_is_mine else (theirs[1], mine[1])
    return Counterparts(older.text, newer.text, rows, embedder.offsets)


def _token_rows(ctx: "Context", texts: "Sequence[tuple[int, str]]",
                pending: "Mapping[int, tuple[str, bytes]] | None") -> dict[int, Any]:
    """Compact token rows (``mem.score.tokens``) of each ``(rowid, text)``: from ``pending`` (the intake
    chunk's, not written yet), else stored, else (another embedder stored it, or no states) computed now."""
    from mem.score import tokens as states
    from mem.store import token_states

    form = states.token_form()
    stored = {r: blob[1] for r, _ in texts if (blob := (pending or {}).get(r)) and blob[0] == form}
    unread = [r for r, _ in texts if r not in stored]
    if unread:
        stored |= token_states.get(ctx.store, unread, form)
    return {r: states.expand(stored[r]) if r in stored else states.projected(ctx.embedder.token_states([text])[0])
            for r, text in texts}


def _judged(ctx: "Context", rowid: int, memory: "Memory", neighbours: "Sequence[tuple[int, float]]",
            superseded: list[str], reading: Any, tokens: "Mapping[int, tuple[str, bytes]] | None",
            kept: "RivalRows | None", only: int | None = None) -> None:
    """The learned judgement (``mem.score.replaces``) of what the rules left: each of the memory's older
    close neighbours it may replace, superseded at ``replaces.supersede_at()``, an open ``contradicts`` edge at
    ``replaces.CONTRADICTS``; with ``only``, just the pair with that older rowid (``_judged_back``), the
    others still placing it among the memory's neighbours."""
    from mem.score import replaces
    from mem.store import lifecycle as sql

    near = [(r, sim) for r, sim in neighbours if sim >= replaces.FLOOR and r != rowid]
    if not JUDGE or not near or not hasattr(ctx.embedder, "offsets"):
        return
    lookup = kept.corrections if kept is not None else partial(sql.correction_candidates, ctx.store)
    live = dict(lookup(rowid, memory.scope, [r for r, _ in near], limit=0))
    olders = [(r, sim, live[r]) for r, sim in near if r in live and live[r].kind not in NOT_ASSERTED
              and live[r].created_at < memory.created_at and _overlap(memory, live[r])][:replaces.NEAREST]
    if not olders:
        return

    def words(needed: list[int]) -> tuple[Any, list[Any]]:
        """The judged words of the memory and of the olders at ``needed``: kept, else read from their token states."""
        texts = {rowid: memory.text, **{olders[i][0]: olders[i][2].text for i in needed}}
        found = {r: replaces.known(text) for r, text in texts.items()}  # all read now: keeping one may drop another
        unread = [(r, texts[r]) for r, known in found.items() if known is None]
        if unread:
            rows = _token_rows(ctx, unread, tokens)
            found |= {r: replaces.words_of(text, ctx.embedder.offsets(text), rows[r]) for r, text in unread}
        return found[rowid], [found[olders[i][0]] for i in needed]

    # a memory about another deployment environment is a row beside this one, never what it replaces
    judged = [i for i, (r, _, other) in enumerate(olders)
              if other.id not in superseded and only in (None, r) and not apart(memory.text, other.text)
              and not _cases_apart(memory, other, reading)]
    around = replaces.around([(other.created_at, sim) for _, sim, other in olders])
    pairs = [(replaces.Side(other.text, other.kind, other.created_at, None), sim, i + 1, best_other, around[i])
             for i, best_other in zip(judged, _best_others(olders, judged, replaces.FLOOR)) for _, sim, other in [olders[i]]]
    # the pairs no verdict can act on are left once their cheap features say so, unless the bench reads them all
    acts = None if replaces.observed is not None else min(replaces.supersede_at(), replaces.CONTRADICTS)
    verdicts = replaces.judge(replaces.Side(memory.text, memory.kind, memory.created_at, None), pairs, reading,
                              lambda needed: words([judged[k] for k in needed]), acts)
    for i, verdict in zip(judged, verdicts):
        if verdict is None:
            continue
        (_, sim, other), (found, p) = olders[i], verdict
        if replaces.observed is not None:
            replaces.observed.append((memory.id, other.id, found, p))
        if p >= replaces.supersede_at():
            _resolve(ctx, newer=memory, older=other, superseded=superseded, kept=kept,
                     reason=f"judged a replacement by the pair model (p {p:.2f})")
        elif p >= replaces.CONTRADICTS:
            sql.add_edge(ctx.store, memory.id, other.id, layer="lifecycle", type="contradicts",
                         at=ctx.now_iso(), weight=round(sim, 4))


def _judged_back(ctx: "Context", rowid: int, memory: "Memory", neighbours: "Sequence[tuple[int, float]]",
                 superseded: list[str], tokens: "Mapping[int, tuple[str, bytes]] | None",
                 kept: "RivalRows | None", pending: "Sequence[tuple[int, str, Any]]" = ()) -> None:
    """The judgement of a memory that arrived after newer ones (an import of old data): each of its
    neighbours created after it judges it as if it had been there when that neighbour arrived, among
    that neighbour's neighbours stored up to this memory (the same bound in eager and bulk intake), so
    the judge, like the rules, holds in both orders."""
    from types import SimpleNamespace

    from mem.enrich import corrections
    from mem.score import replaces
    from mem.stages import neighbours as nearest
    from mem.store import lifecycle as sql

    near = [(r, sim) for r, sim in neighbours if sim >= replaces.FLOOR and r != rowid]
    if not JUDGE or not near or not hasattr(ctx.embedder, "offsets"):
        return
    lookup = kept.corrections if kept is not None else partial(sql.correction_candidates, ctx.store)
    live = dict(lookup(rowid, memory.scope, [r for r, _ in near], limit=0))
    newers = [r for r, _ in near if r in live and live[r].kind not in NOT_ASSERTED
              and live[r].created_at > memory.created_at and _overlap(memory, live[r])][:replaces.NEAREST]
    # a newer whose verdict on this memory cannot act wherever it stands among its neighbours is left before
    # they are looked up (one search over the store each), unless the bench reads every pair
    acts = min(replaces.supersede_at(), replaces.CONTRADICTS)
    cosine, older = dict(near), replaces.Side(memory.text, memory.kind, memory.created_at, None)
    readings = {r: corrections.read(live[r].text, live[r].kind) for r in newers}
    newers = [r for r in newers if replaces.observed is not None or replaces.may_act(
        replaces.Side(live[r].text, live[r].kind, live[r].created_at, None), older, cosine[r], readings[r], acts)]
    if not newers:
        return
    vectors = {r: vector for r, _, vector in pending if r in newers}
    found, matrix = ctx.store.vectors_for([r for r in newers if r not in vectors])
    vectors |= dict(zip(found, matrix))
    for newer_rowid in sorted(vectors):
        if memory.id in superseded:
            return
        their_neighbours = nearest.nearest_with(ctx.vectors, vectors[newer_rowid], memory.scope, nearest.NEIGHBOURS,
                                                replaces.FLOOR, rowid + 1, pending)
        rival = live[newer_rowid]
        newer = SimpleNamespace(**rival._asdict(), scope=memory.scope)  # a Rival read as the memory judging
        _judged(ctx, newer_rowid, newer, their_neighbours, superseded, readings[newer_rowid], tokens, kept, only=rowid)


def _best_others(olders: "Sequence[tuple[int, float, Any]]", judged: list[int], alone: float) -> list[float]:
    """For each of ``olders`` at ``judged``, the best cosine among the others (``alone`` when there are none):
    the best of all, or for the best one itself the second best (each rowid once; else one by one)."""
    sims = [sim for _, sim, _ in olders]
    if not judged:
        return []
    if len({r for r, _, _ in olders}) < len(olders):
        return [max((s for o, s, _ in olders if o != olders[i][0]), default=alone) for i in judged]
    top = max(range(len(sims)), key=sims.__getitem__)
    second = max((s for j, s in enumerate(sims) if j != top), default=alone)
    return [second if i == top else sims[top] for i in judged]


def changes(memory: "Memory", other: Any) -> bool:
    """Whether the newer of two near duplicates corrects the older ("the free plan now allows 5 hours"
    after "... 2 hours"), or the two state other values at all ("Coursebridge runs on Django 5.2 LTS." after
    "... 4.2 LTS.", cosine .989; "FULL compatibility" after "... is BACKWARD"): then it is an update for
    supersession to decide, not a duplicate to drop; nor is the same said of two deployment environments
    ("... user context in staging." / "... in production.", .952) or of two cases ("In storm mode ...")."""
    from mem.enrich import corrections

    if VALUES_APART and stated_values(memory.text) != stated_values(other.text) or rows_apart(memory.text, other.text):
        return True  # another value, or the same said of another deployment environment or case: a row of its own
    newer, older = (memory, other) if memory.created_at >= other.created_at else (other, memory)
    reading = corrections.read(newer.text, newer.kind)
    return reading is not None and corrections.corrects(reading, older.text, neighbour=True) is not None


# A near duplicate that states another value is kept (``changes``). Of the labelled corrections of the 22
# studied coding sets, 4 were dropped as near duplicates of what they correct (cosine .97-.99: "hm_lambdarank_v9"
# after "hm_lambdarank_v7", "retained 35 days" after "kept for 14 days"); 3 of the held-out sets' (eighteenth
# session). False: only a correction read as one is kept.
VALUES_APART = True
_VALUE_TOKEN = re.compile(r"`[^`]+`|[^\W_]*\d[\w.:/-]*|\b[A-Z][A-Z0-9_]+\b")


def stated_values(text: str) -> frozenset[str]:
    """What ``text`` states as values: numbers and names with a digit (numbers spelled out as digits
    first: "ten minutes" is "10 minutes"), words in capitals, code spans.

    >>> sorted(stated_values("Coursebridge runs on Django 5.2 LTS.")), sorted(stated_values("CDC subjects use FULL compatibility"))
    (['5.2', 'LTS'], ['CDC', 'FULL'])
    """
    from mem.enrich.settings import _numerals

    return frozenset(m.rstrip(".:/-") for m in _VALUE_TOKEN.findall(_numerals(text)))


def resolve_status(superseded: Sequence[str], memory_id: str) -> tuple[str, list[str]]:
    """``("superseded", others)`` when the incoming memory was the older side, else ``("added", all)``."""
    if memory_id in superseded:
        return "superseded", [s for s in superseded if s != memory_id]
    return "added", list(superseded)
