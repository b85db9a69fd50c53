"""Current truth in a ranking: a correction answers what the memory it superseded answered, and the
newer memory of an open ``contradicts`` pair comes first.

Superseded memories are hidden from default search, but they still say what a query was about:
"who owns billing?" matches "Priya owns the billing service" better than "Billing ownership moved from
Priya to Marcus". :func:`inherit` gives the memory that superseded a candidate (followed to the live
end of the chain) at least the candidate's fused relevance, so the correction ranks where its
predecessor would have, even when no channel found the correction itself.

Intake records a ``contradicts`` edge (newer -> older) when a correction looks like it replaces an
older memory but not clearly enough to supersede it. Until someone resolves it, a query that finds
both should answer with the newer: this moves the newer hit to just above the older one (scores stay
in rank order; the hits between shift down by one) and says so in ``why["contradicts"]``. What one step put
first no later step undoes: a hit moved up takes along the hits that must stay above it.

Where intake saw no change at all ("Sofia Marquez takes model serving questions in the meantime" after
"Femi Balogun owns model serving": no change word, cosine .30), the question itself says what two hits
are about: :func:`current_pairs` moves the newer of two that answer it with two values of one type the
same way, noted in ``why["current"]``; so do two hits that are close neighbours, whatever words each
shares with the question ("Servers run at 60 now" and "a 30 Hz tick rate").
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mem.records import Hit

if TYPE_CHECKING:
    import numpy as np

    from mem.records import Memory


def inherit(fused: dict[int, float], successor: dict[int, int]) -> dict[int, float]:
    """``fused`` (rowid -> relevance) where each superseded rowid's successor has at least its relevance.

    >>> inherit({1: 0.9, 2: 0.4}, {1: 2}), inherit({1: 0.3, 2: 0.4}, {1: 2}), inherit({1: 0.5}, {1: 7})
    ({1: 0.9, 2: 0.9}, {1: 0.3, 2: 0.4}, {1: 0.5, 7: 0.5})
    """
    if not successor:
        return fused
    out = dict(fused)
    for old, new in successor.items():
        if old in fused and fused[old] > out.get(new, float("-inf")):
            out[new] = fused[old]
    return out


def newer_first(hits: Sequence[Hit], pairs: Iterable[tuple[str, ...]], *, key: str = "contradicts") -> list[Hit]:
    """``hits`` reordered so that each ``(newer id, older id[, reason])`` pair present in both ranks newer
    first, noted in ``why[key]``.

    >>> from mem.records import Memory
    >>> def hit(i, rank): return Hit(memory=Memory(id=i, text=i), rank=rank, score=1.0 / rank, why={})
    >>> out = newer_first([hit("old", 1), hit("x", 2), hit("new", 3)], [("new", "old")])
    >>> [(h.memory.id, h.rank, round(h.score, 2)) for h in out]
    [('new', 1, 1.0), ('old', 2, 0.5), ('x', 3, 0.33)]
    >>> out[0].why["contradicts"]
    {'over': 'old', 'reason': 'newer memory contradicts an older one; the older ranks below it'}

    A newer over several olders names the first in ``over`` and the rest in ``others``:

    >>> out = newer_first([hit("a", 1), hit("b", 2), hit("new", 3)], [("new", "b"), ("new", "a")])
    >>> [h.memory.id for h in out], out[0].why["contradicts"]["over"], out[0].why["contradicts"]["others"]
    (['new', 'a', 'b'], 'b', ['a'])

    What an earlier call put first (its notes, ``NOTED``) a later one never undoes: moving a newer above its
    older takes along every hit that must stay above it, and a pair against an earlier one is left out.

    >>> out = newer_first([hit("b", 1), hit("x", 2), hit("c", 3), hit("a", 4)], [("c", "b")])
    >>> [h.memory.id for h in out]
    ['c', 'b', 'x', 'a']
    >>> [h.memory.id for h in newer_first(out, [("b", "c"), ("a", "b")], key="current")]
    ['c', 'a', 'b', 'x']
    """
    order = [h.memory.id for h in hits]
    by_id = {h.memory.id: h for h in hits}
    # id -> the ids that must rank above it, in the order they were told (of two newers over one older, the one told
    # first ranks first, as when each pair in turn moved its newer to just above its older)
    before: dict[str, dict[str, None]] = {i: {} for i in order}
    for h in hits:
        for noted in NOTED:
            if note := h.why.get(noted):
                for older in (note["over"], *note.get("others", ())):
                    if older in before:
                        before[older][h.memory.id] = None
    notes: dict[str, dict[str, Any]] = {}
    for newer, older, *told in pairs:
        if newer not in by_id or older not in by_id or newer == older or _above(older, newer, before):
            continue  # not on the page, or against what is decided already: the older stays above
        before[older][newer] = None
        if newer not in notes:
            reason = told[0] if told else "newer memory contradicts an older one; the older ranks below it"
            notes[newer] = {"over": older, "reason": reason}
        elif older != notes[newer]["over"] and older not in notes[newer].setdefault("others", []):
            notes[newer]["others"].append(older)
    if not notes:
        return list(hits)
    placed: list[str] = []

    def place(i: str) -> None:  # what must rank above a hit goes in first; then the hit
        if i not in placed:
            for first in before[i]:
                place(first)
            placed.append(i)

    for i in order:
        place(i)
    scores = [h.score for h in hits]
    return [dataclasses.replace(by_id[i], rank=rank, score=scores[rank - 1],
                                why={**by_id[i].why, **({key: notes[i]} if i in notes else {})})
            for rank, i in enumerate(placed, start=1)]


# The ``why`` notes of the ordering steps (``newer_first``'s keys): each one's pairs bind the later steps.
NOTED = ("contradicts", "current")


def _above(a: str, b: str, before: Mapping[str, Mapping[str, None]]) -> bool:
    """Whether ``a`` must rank above ``b`` under ``before`` (id -> the ids that must rank above it), through any
    chain of them."""
    seen, todo = set(), [b]
    while todo:
        for first in before[todo.pop()].keys() - seen:
            if first == a:
                return True
            seen.add(first)
            todo.append(first)
    return False


# Hits compared for current truth: the page a user reads (a correction ranked 11th helps nobody).
CURRENT_WINDOW = 10
# Cosine at which two hits are about one thing whatever words the question shares with each ("Servers
# run at 60 now" and "a 30 Hz tick rate", .56, for "what tick rate do production servers use"). Chosen
# on sets a-g (their pairs that reorder are .59-.82; .54 put "at 50 one partner's requests" over a rate
# limit); None: the question's words only.
NEAR = 0.55
# Two close neighbours are compared as such also when the question names both: its words pick the
# sentences compared and can miss the value ("battery_low alert threshold: 3200 mV" for "what voltage
# triggers the low battery warning", after "below 3.3 V"). False: the question's words only, then.
ALSO_NEAR = True
# Two close neighbours of which the newer tells a change of the older (``_tells_change``: a change that
# names a value the older states, or a marker of what holds now) rank newer first even when no reader
# types the value each states ("imgproxy replaced Thumbor for crops" after "... served by Thumbor";
# "parties can now hold up to six people" after "capped at 4 players", six before no unit). A change
# verb alone is not enough: a neighbour telling another change of the subject ("only the product teams
# drop to 150", "scale it by hand", "`flctl probe replace`") cost sets a, g, h, i five rank-1s. Coding
# R@1 h .781 -> .797, j .670 -> .691, above h 10 -> 8, j 22 -> 17; a-g and i unchanged. False: typed
# values only.
NEAR_CHANGE = True
# Two close neighbours of which the newer names every word of the question the older names, and more,
# rank newer first: the question says which of two versions or siblings it asks about ("how often do
# node-exporter targets get scraped": "node-exporter targets are scraped once a minute" over "Prometheus
# scrapes the game server pods every 30 s"; "is the rest rule going to 12 hours": the proposal). Over the
# 22 studied coding sets (``bench/README.md``, fifteenth session): rank-1 +8 of 2,970, above -5 (i -2, j +2,
# m +1, o +2, p +1, q +1, v +3; R@5 unchanged); LoCoMo never compares (episodes). False: off.
NAMES_MORE = True
# A newer hit that superseded another memory is that memory's successor: an older close neighbour still
# live beside it is a sibling ("We upgraded production Postgres to 16", which replaced "Production Postgres
# is version 14", is not the news of "The staging database runs PostgreSQL 15"), and the close-neighbour
# rules above leave the pair alone; a question naming both still compares them. Over the 22 studied coding
# sets (``bench/README.md``, seventeenth session): rank-1 +4 of 2,970 (q +1, v +1, x +2), above and R@5
# unchanged; LoCoMo never compares (episodes). False: off.
REPLACED_ELSEWHERE = True


# An open contradicts edge ranks its newer memory first unless the question names a number the older
# states and the newer does not (and the newer names no question word the older leaves out): then it asks
# about the older's row of a table, not about what changed ("port 8017" after "Service 17 listens on
# port 8017" and "Service 19 listens on port 8019"; the mirror of ``NAMES_MORE``). False: every open
# edge reorders.
OLDER_VALUE_ASKED = True
_TOKEN = re.compile(r"\w(?:[\w.:/-]*\w)?")
# a number: a name with a digit ("us-east-1", "T1") names what the question is about on both sides
_VALUE = re.compile(r"\d+(?:[.,:]\d+)*")


def numbers_asked(asked: str) -> frozenset[str]:
    """The numbers a question names ("port 8017": ``{"8017"}``; a name with a digit, "us-east-1", is none).

    >>> sorted(numbers_asked("is port 8017 open in us-east-1?")), sorted(numbers_held("Port 8017, not 8019", {"8017"}))
    (['8017'], ['8017'])
    """
    return frozenset(t.lower() for t in _TOKEN.findall(asked) if _VALUE.fullmatch(t))


def numbers_held(text: str, numbers: frozenset[str] | set[str]) -> set[str]:
    """Which of ``numbers`` (``numbers_asked``) ``text`` states."""
    return {t.lower() for t in _TOKEN.findall(text)} & numbers if numbers else set()


def open_pairs(hits: Sequence[Hit], pairs: Iterable[tuple[str, str]], asked: str) -> list[tuple[str, str]]:
    """The ``(newer, older)`` open contradictions among ``hits`` that the question ``asked`` leaves to be
    ordered newer first (``OLDER_VALUE_ASKED``)."""
    pairs = list(pairs)
    values = numbers_asked(asked)
    if not OLDER_VALUE_ASKED or not pairs or not values:
        return pairs
    from mem.enrich.corrections import words_named

    text = {h.memory.id: h.memory.text for h in hits}

    def asks_the_older(newer: str, older: str) -> bool:
        held_new, held_old = (numbers_held(text[i], values) for i in (newer, older))
        return bool(held_old - held_new) and held_new <= held_old \
            and words_named(asked, text[newer]) <= words_named(asked, text[older])

    return [(newer, older) for newer, older in pairs
            if newer not in text or older not in text or not asks_the_older(newer, older)]


def current_pairs(hits: Sequence[Hit], asked: str,
                  vectors: "Mapping[str, np.ndarray] | None" = None,
                  replaced: "Mapping[str, set[str]] | None" = None) -> list[tuple[str, str, str]]:
    """``(newer id, older id, reason)`` for hits that answer the question ``asked`` with two values of one
    type on one slot (``corrections.other_value``): the newer says what holds now. The question says
    what both are about: the older names two or more of its words and the newer every one of those
    ("the email queue: 10 jobs" does not answer what "the transcription queue: 4 jobs" answers about
    the transcription queue); or (also, with ``ALSO_NEAR``), with the hits' unit ``vectors``, the two
    are close neighbours (cosine ``NEAR``), which says it whatever words each shares with the question, unless
    the newer superseded another memory (``replaced``: newer id -> the ids it superseded;
    ``REPLACED_ELSEWHERE``). Conversation turns (episodes) say what was said, not what holds, and are never
    compared."""
    from mem.enrich.corrections import other_value, words_named
    from mem.score.environment import apart, environments

    page = [h for h in hits[:CURRENT_WINDOW] if h.memory.kind not in ("episode",)]
    asked_for = environments(asked)
    named = {h.memory.id: words_named(asked, h.memory.text) for h in page}
    vectors, replaced = vectors or {}, replaced or {}
    out = []
    for i, older in enumerate(page):
        theirs = named[older.memory.id]
        for newer in page[i + 1:]:
            if newer.memory.created_at <= older.memory.created_at or newer.memory.scope != older.memory.scope:
                continue
            if apart(newer.memory.text, older.memory.text) and not environments(newer.memory.text) & asked_for:
                continue  # rows of two environments: the newer is no news of the older, unless asked for by name
            asks_both = len(theirs) >= 2 and theirs <= named[newer.memory.id]
            # a newer that replaced another memory is that one's successor: a live close neighbour is its sibling
            theirs_replaced = replaced.get(newer.memory.id)
            elsewhere = REPLACED_ELSEWHERE and theirs_replaced is not None and older.memory.id not in theirs_replaced
            near = not elsewhere and (ALSO_NEAR or not asks_both) and NEAR is not None and older.memory.id in vectors \
                and newer.memory.id in vectors and float(vectors[older.memory.id] @ vectors[newer.memory.id]) >= NEAR
            asked_change = asks_both and other_value(newer.memory.text, older.memory.text, asked)
            change = asked_change or near and other_value(newer.memory.text, older.memory.text, asked, near=True)
            if not change and near and NEAR_CHANGE and (change := _told_change(newer.memory, older.memory)):
                why = "is a close neighbour telling a change"
            elif not change and near and NAMES_MORE and theirs < named[newer.memory.id]:
                change = ", ".join(sorted(named[newer.memory.id] - theirs))
                why = "is a close neighbour naming more of the question's words"
            elif change:
                why = "states another value for what both answer" if asked_change else "is a close neighbour stating another value"
            if change:
                out.append((newer.memory.id, older.memory.id, f"newer memory {why} ({change}); the older ranks below it"))
    return out


def _told_change(newer: "Memory", older: "Memory") -> str | None:
    """How ``newer`` tells a change of what ``older`` says, or None: it reads as a change
    (``corrections.read``) that names an old value the older states ("Disqus is gone" after "comments run
    on Disqus"), or says what holds now ("now", "no longer", ...)."""
    from mem.enrich.corrections import names_old, read

    reading = read(newer.text, newer.kind)
    if reading is None or reading.bare:
        return None
    named = names_old(reading, older.text)
    return f"was {named}" if named else "what holds now" if reading.marked else None
