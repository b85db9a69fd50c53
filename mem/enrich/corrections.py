"""Reading a correction: which old value it names, which new one, and what slot it talks about.

``assertions`` matches whole claims ("X uses Y"); a correction is often prose around one change:
"Raised the MQTT keepalive from 60 to 120 seconds: trucks in tunnels kept reconnecting". What makes
it a correction is structure, not the exact phrase:

* a **change**: a verb of change (switch, move, raise, shorten, hand over, rename, replace, drop,
  ...) with ``from A (to B)``, ``A with/by/to B`` or an object, its passive (``A was replaced by
  B``, ``A is gone``), or a contrast (``instead of A``, ``rather than A``, ``no longer A``,
  ``, not A``);
* the **old value** A it names, and the new value B when there is one;
* the **slot**: the memory's other content words ("mqtt", "keepalive").

:func:`corrects` decides, for one older memory, whether the correction replaces it: the older text
states the old value (numbers compared by value: "60 seconds" ~ "60 s"), shares the slot, and does
not already state the new value. Stdlib only, pure, cached: intake calls it on every neighbour.

>>> r = read("The payments timeout was raised from 30 to 45 seconds.")
>>> [v.text for v in r.old], [v.text for v in r.new]
(['30'], ['45 seconds'])
>>> corrects(r, "The payments timeout is 30 seconds.")
'old value 30'
>>> corrects(r, "Payouts are retried 30 times.") is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["Reading", "Value", "corrects", "read", "related"]

_WORD = re.compile(r"[a-z0-9][a-z0-9_./*+#@-]*[a-z0-9+#*]|[a-z0-9]")
_NUMBER = re.compile(r"^\d+(?:[.,]\d+)?$")
_NUM_UNIT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([a-z%]+(?:/[a-z]+)?)?")
# Verbs of change, as stems (any inflection): what turns "from A to B" into a correction.
# Verbs of change, as stems (any inflection): what turns "from A to B" into a correction.
_CHANGE = ("switch", "mov", "migrat", "chang", "rais", "lower", "shorten", "lengthen", "extend", "bump",
           "increas", "decreas", "reduc", "upgrad", "downgrad", "renam", "replac", "swap", "hand", "transfer",
           "reassign", "revert", "convert", "cut")
_INFLECT = r"(?:e|es|ed|d|ing|s|ped|ping|ted|ting)?"
_CHANGE_RE = r"(?:(?:" + "|".join(_CHANGE) + r")" + _INFLECT + r"|took|taken|went)"
# Verbs of removal: their object is the old value ("from" after them names a place, not a value).
_REMOVE_RE = r"(?:(?:drop|remov|retir|deprecat|decommission|delet|ditch|kill|revert|undo|sunset)" + _INFLECT + \
    r"|undid|rolled back)"
_SPAN = r"""(?!(?:by|with|to|from)\b)(?P<{}>[\w./*@#+%'`"-]+(?: [\w./*@#+%'`"-]+){{0,4}}?)"""  # 1-5 words, lazily
_STOP = r"(?=\s*(?:$|[,;:.()!?\n])|\s+(?:for|in|on|at|as|from|to|because|since|after|so|and|but|when|while|which|who|than)\b)"
_END = r"(?=\s*(?:$|[,;:.()!?\n])|\s+(?:because|since|after|so|but|when|while|which|who)\b)"
# (pattern, which groups hold old/new) -- each is one shape of change, not one phrasing
_SHAPES = [
    # switched / moved / raised / took over ... from A (to B)
    re.compile(rf"\b{_CHANGE_RE}\b[^,;:.()\n]{{0,60}}?\bfrom\s+{_SPAN.format('old')}"
               rf"(?:\s+(?:to|into|onto|over to)\s+{_SPAN.format('new')})?{_STOP}"),
    # replaced / renamed / swapped A with|by|to|for B
    re.compile(rf"\b(?:replac|renam|swapp?|exchang)[a-z]*\s+{_SPAN.format('old')}\s+(?:with|by|to|for|in favou?r of)\s+"
               rf"{_SPAN.format('new')}{_STOP}"),
    # A was replaced by B / A was renamed to B / A was dropped / A is gone / with A gone
    re.compile(rf"(?:^|[,;:.]\s*|\b(?:the|our|with)\s+){_SPAN.format('old')}\s+(?:(?:was|were|has been|have been|got|is|are|"
               r"is being)\s+(?:now\s+)?(?:replaced|renamed|swapped|dropped|removed|retired|deprecated|decommissioned|"
               r"deleted|gone|sunset|killed|switched off|shut down|turned off|reverted)|gone)"
               rf"(?:\s+(?:with|by|to|for|in favou?r of)\s+{_SPAN.format('new')})?{_STOP}"),
    # dropping / removed / retired / reverted A
    re.compile(rf"\b{_REMOVE_RE}\s+{_SPAN.format('old')}{_STOP}"),
    # X handed (over) Y (over) to Z: the giver is the old value, the receiver the new
    re.compile(rf"(?:^|[,;:.]\s*){_SPAN.format('old')}\s+hand(?:ed|s)?\s+(?:over\s+)?[^,;:.\n]{{0,60}}?\bto\s+"
               rf"{_SPAN.format('new')}{_STOP}"),
    # instead of A / rather than A / no longer A / , not A
    re.compile(rf"(?:\binstead of|\brather than|\bno longer|[,;]\s*(?:and\s+|but\s+)?(?:not|never))\s+{_SPAN.format('old')}{_END}"),
]
# Words that mark an update without naming what it replaces ("the limit is now 1200").
_MARKERS = re.compile(r"\b(?:now|no longer|anymore|any more|instead|actually|correction|nowadays|these days|"
                      r"from now on|took over|handed over|switched|migrated|moved|replaced|renamed|dropped|"
                      r"is gone|are gone|raised|lowered|bumped|increased|decreased|shortened|extended|reduced)\b")
_ARTICLES = frozenset({"the", "a", "an", "our", "my", "their", "its", "his", "her", "this", "that", "these", "those",
                       "some", "all", "old", "previous", "former", "legacy", "existing", "current"})
_FUNCTION = frozenset("""a an the and or but of to in on at for from by with as is are was were be been being it its
this that these those we i you they he she our my their his her your them us me who which what when where how than
then so if not no now also only just still again all any some each every there here do does did done has have had
will would can could should may might must shall into onto over under about after before because since while until
per via out up down off more most less very too own same other such new old one two instead longer anymore actually
correction use used uses using run runs running ran get got set""".split())


# Heads that name a change rather than a value ("the pnpm switch", "the LaunchDarkly decision").
_GENERIC = frozenset({"switch", "decision", "move", "change", "migration", "plan", "setup", "approach", "idea",
                      "trick", "support"})


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def words(text: str) -> list[str]:
    """Lowercase word tokens (paths, dotted names and hyphenated words kept whole)."""
    return _WORD.findall(text.lower())


def _content(tokens: list[str]) -> frozenset[str]:
    return frozenset(_stem(t) for t in tokens if t not in _FUNCTION and not _NUMBER.match(t) and len(t) > 1)


@dataclass(frozen=True)
class Value:
    """One value a correction names: its text, content words and numbers."""

    text: str
    terms: frozenset[str]
    numbers: tuple[float, ...]

    @classmethod
    def of(cls, raw: str) -> "Value | None":
        tokens = words(raw)
        while tokens and tokens[0] in _ARTICLES:
            tokens = tokens[1:]
        tokens = tokens[:6]
        if not tokens:
            return None
        numbers = tuple(float(n) for n, _ in _NUM_UNIT.findall(" ".join(tokens)))
        terms = _content([p for t in tokens for p in t.split("/") if p and p not in _GENERIC])  # "a/b": two values
        if not terms and not numbers:
            return None
        return cls(" ".join(tokens), terms, numbers)

    def stated_in(self, text_terms: frozenset[str], text_numbers: frozenset[float]) -> bool:
        """Whether a text states this value: its numbers, and (most of) its content words."""
        if self.numbers and not set(self.numbers) <= text_numbers:
            return False
        if not self.terms:
            return bool(self.numbers)
        missing = len(self.terms - text_terms)
        return missing == 0 or (missing == 1 and len(self.terms) >= 4)


@dataclass(frozen=True)
class Reading:
    """What a correction says: the old and new values it names and its slot words."""

    old: tuple[Value, ...]
    new: tuple[Value, ...]
    slot: frozenset[str]
    explicit: bool  # a change shape matched (else only a marker word or the kind)
    kind: str = "fact"
    quantities: dict[tuple[float, str], frozenset[str]] = field(default_factory=dict)  # (number, unit) -> words before it


_UNITS = {"s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s", "ms": "ms", "millisecond": "ms",
          "milliseconds": "ms", "min": "min", "mins": "min", "minute": "min", "minutes": "min", "h": "h", "hr": "h",
          "hrs": "h", "hour": "h", "hours": "h", "d": "d", "day": "d", "days": "d", "week": "wk", "weeks": "wk",
          "kb": "kb", "mb": "mb", "gb": "gb", "tb": "tb", "%": "%", "percent": "%", "m": "m", "km": "km"}


QUANTITY_WINDOW = 4  # words before a number that name what it measures ("the rate limit is 600 ...")


@lru_cache(maxsize=4096)
def _quantities(text: str) -> dict[tuple[float, str], frozenset[str]]:
    """``(number, unit)`` -> the content words just before it: "30 seconds", "30s" and "30 sec" are
    ``(30.0, "s")``; other unit words by stem."""
    lowered = text.lower()
    out: dict[tuple[float, str], frozenset[str]] = {}
    for match in _NUM_UNIT.finditer(lowered):
        number, unit = match.groups()
        if unit:
            before = _content(words(lowered[max(0, match.start() - 60):match.start()])[-QUANTITY_WINDOW:])
            key = (float(number), _UNITS.get(unit, _stem(unit)))
            out[key] = out.get(key, frozenset()) | before
    return out


_PARTS = re.compile(r"[-./_]+")


@lru_cache(maxsize=4096)
def _facts(text: str) -> tuple[frozenset[str], frozenset[float], frozenset[str]]:
    """Content words, numbers, and content words with the parts of compound ones ("per-organization",
    "celery/rabbitmq", "brightbill.dev") that an old value may name on its own."""
    tokens = words(text)
    terms = _content(tokens)
    parts = _content([p for t in tokens for p in _PARTS.split(t) if p])
    return terms, frozenset(float(n) for n, _ in _NUM_UNIT.findall(" ".join(tokens))), terms | parts


@lru_cache(maxsize=4096)
def read(text: str, kind: str = "fact") -> Reading | None:
    """The correction ``text`` makes, or None when it reads as no update at all.

    >>> r = read("Dana handed the Kafka cluster over to Pavel Novak; Pavel is now the contact.")
    >>> [v.text for v in r.old], sorted(r.slot)
    (['dana'], ['cluster', 'contact', 'kafka'])
    >>> read("The API uses FastAPI.") is None
    True
    """
    lowered = text.lower()
    old: list[Value] = []
    new: list[Value] = []
    for shape in _SHAPES:
        for match in shape.finditer(lowered):
            for name, into in (("old", old), ("new", new)):
                raw = match.groupdict().get(name)
                value = Value.of(raw) if raw else None
                if value is not None and value not in into:
                    into.append(value)
    if not old and not new and kind != "correction" and not _MARKERS.search(lowered):
        return None
    named = set().union(*(v.terms for v in (*old, *new))) if old or new else set()
    slot = _facts(text)[0] - named - {_stem(w) for w in _CHANGE_WORDS}
    return Reading(tuple(old), tuple(new), frozenset(slot), bool(old), kind, _quantities(text))


_CHANGE_WORDS = frozenset("""switched moved migrated changed raised lowered shortened extended bumped increased
decreased reduced upgraded downgraded renamed replaced swapped handed took over transferred reassigned reverted
dropped removed retired deprecated decommissioned deleted gone settled""".split())
# Evidence a correction needs against one older memory: shared slot words, plus the content words of
# the old value it states, plus one when the older memory is a semantic neighbour.
EVIDENCE = 3


def related(reading: Reading, older_text: str) -> bool:
    """Whether the older text is about what the correction changes, without the proof ``corrects``
    needs: two shared slot words, or an old value it names."""
    terms, numbers, parts = _facts(older_text)
    return len(reading.slot & terms) >= 2 or any(v.stated_in(parts, numbers) for v in reading.old)


def corrects(reading: Reading, older_text: str, *, neighbour: bool = False) -> str | None:
    """Why the correction replaces ``older_text`` ("old value X", "same slot, 7 d -> 3 d"), or None.

    The older text must not already state every new value (then it is the new state, or the same
    change told again) nor reject the old value itself; then either it states an old value the
    correction names, or it holds a quantity of the same unit with another number, with
    ``EVIDENCE`` in shared words.
    """
    terms, numbers, parts = _facts(older_text)
    slot = len(reading.slot & terms)
    shared = slot + (1 if neighbour else 0) + (1 if reading.kind == "correction" else 0)
    if reading.new and all(v.stated_in(parts, numbers) for v in reading.new):
        return None
    own = read(older_text)
    rejected = [v for v in own.old] if own else []
    for value in reading.old:
        if any(value.terms <= r.terms and set(value.numbers) <= set(r.numbers) for r in rejected):
            continue  # the older text rejects it too ("never floats"): the two agree
        named = max(1, len(value.terms))
        # one shared word and a one-word value is too little on its own ("Dana applies it" is not
        # "Dana owns it"), whatever the cosine: the slot, the value or the kind must say more
        if value.stated_in(parts, numbers) and shared + named >= EVIDENCE and (
                slot >= 2 or named >= 2 or reading.kind == "correction"):
            return f"old value {value.text}"
    if shared >= EVIDENCE and reading.quantities:
        theirs = _quantities(older_text)
        for (number, unit), before in reading.quantities.items():
            if (number, unit) in theirs:
                continue
            # the same slot: another number of the same unit, attached to a word this one is attached to
            need = min(2, len(before))
            rivals = sorted(n for (n, u), their_before in theirs.items()
                            if u == unit and need and len(before & their_before) >= need)
            if rivals:
                return f"same slot, {rivals[0]:g} {unit} -> {number:g} {unit}"
    return None
