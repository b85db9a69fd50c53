"""Reading a correction: which old value it names, which new one, and what slot it talks about.

``assertions`` matches whole claims ("X uses Y"); a correction is often prose around one change:
"Raised the MQTT keepalive from 60 to 120 seconds: trucks in tunnels kept reconnecting". What makes
it a correction is structure, not the exact phrase:

* a **change**: a verb of change (switch, move, raise, shorten, hand over, rename, replace, drop,
  ...) with ``from A (to B)``, ``A with/by/to B`` or an object, its passive (``A was replaced by
  B``, ``A is gone``), or a contrast (``instead of A``, ``rather than A``, ``no longer A``,
  ``, not A``); a present form after its subject says what something does, not what changed ("it
  deletes their zones after 30 days"), so it counts only opening a clause ("Moves X to Y");
* the **old value** A it names, and the new value B when there is one; in a handover told as a departure
  ("Rhys looks after the metering service; Nadia is moving to the data team", "Tariq takes over CI from
  Aiko"), the person who moved on, where the older names them as a person and the correction a successor;
* the **slot**: the memory's other content words ("mqtt", "keepalive");
* its **settings**: typed values with the words their sentence names them by: numbers with a unit,
  commands in backticks, addresses. A text with no change word at all ("MQTT keepalive settled at 90
  seconds") is a *bare* reading: it can only replace another value of the same type on the same slot.

:func:`corrects` decides, for one older memory, whether the correction replaces it: the older text
states the old value (numbers compared by value: "60 seconds" ~ "60 s"), shares the slot, and does
not already state the new value; or it holds another setting of the same type on the same slot
(another number of the unit, a command of another program, another address). Stdlib only, pure,
cached: intake calls it on every neighbour, and on the memories :func:`lookup_terms` finds by word.

>>> r = read("The payments timeout was raised from 30 to 45 seconds.")
>>> [v.text for v in r.old], [v.text for v in r.new]
(['30'], ['45 seconds'])
>>> corrects(r, "The payments timeout is 30 seconds.")
'old value 30'
>>> corrects(r, "Payouts are retried 30 times.") is None
True
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache

from mem.enrich.lexicon import ARTICLES, CHANGE_HEADS, CHANGE_MARKERS, CHANGE_VERBS, FUNCTION_WORDS, UNITS, UNREALISED
# the settings a text states and the words they are read in (``settings``): what a correction's values and slot are made of
from mem.enrich.settings import (_CHANGE_STEMS, _NUM_UNIT, _PARTS, _RUNS, _SENTENCE_END, PLAIN, QUANTITY_WINDOW, Setting,
                                 _CASED_WORD, _content, _fold, _inflections, _number, _numerals, _parts_of, _phrase,
                                 _placed, _rival, _sentence_of, _sentences, _settings, _show, _slot, quantity, spellings,
                                 typed, words)

__all__ = ["Reading", "Value", "corrects", "lookup_terms", "quantity", "read", "related", "typed"]


def _verbs(*roles: str) -> str:
    """The verbs of change (``lexicon.CHANGE_VERBS``) playing ``roles``, any inflection, as one regex.

    A present form with a subject before it says what something does, not what changed ("it revokes
    their keys and deletes their zones after 30 days", "the cron job moves files to the archive"), so
    outside the transfer role ("X hands Y over to Z", whose subject is the giver) "-s" forms count
    only opening a clause, as a commit message does ("Moves the config to env vars")."""
    def alternation(forms: list[str]) -> str:
        return "|".join(sorted(map(re.escape, forms), key=len, reverse=True))

    forms = [(" ".join([form, *rest]), role != "transfer" and form in (first + "s", first + "es"))
             for verb, role in CHANGE_VERBS.items() if role in roles
             for first, *rest in [verb.split()] for form in _inflections(first)]
    behaviour = [form for form, present in forms if present]
    any_place = alternation([form for form, present in forms if not present])
    if not behaviour:
        return f"(?:{any_place})"
    return rf"(?:{any_place}|(?:^|(?<=[,;:.!?(\n])|(?<=[,;:.!?(\n]\s))(?:{alternation(behaviour)}))"


def _verb_words(*roles: str) -> frozenset[str]:
    """The first words of the verbs of change playing ``roles`` (``_verbs``), in every inflection: wherever one
    of those verbs matches, its first word is a whole word of the text (a word boundary or a space on each side)."""
    return frozenset(form for verb, role in CHANGE_VERBS.items() if role in roles for form in _inflections(verb.split()[0]))


# the roles of the verbs of change each shape of ``_SHAPES`` is built around
_MOVE, _REPLACE, _TRANSFER, _REMOVE = ("change", "replace", "transfer", "undo"), ("replace",), ("transfer",), ("remove", "undo")
_MOVE_RE, _REPLACE_RE, _TRANSFER_RE, _REMOVE_RE = (_verbs(*roles) for roles in (_MOVE, _REPLACE, _TRANSFER, _REMOVE))
# A word of a value: it never ends in a full stop ("instead of Pinecone. Costs should drop" names Pinecone)
_VALUE_WORD = r"""[\w./*@#+%'`"=-]*[\w/*@#+%'`"=-]"""
_SPAN = rf"(?!(?:by|with|to|from)\b)(?P<{{}}>{_VALUE_WORD}(?: {_VALUE_WORD}){{{{0,4}}}}?)"  # 1-5 words, lazily
_STOP = r"(?=\s*(?:$|[,;:.()!?\n])|\s+(?:for|in|on|at|as|from|to|because|since|after|before|until|so|and|but|when|while|which|who|than)\b)"
_END = r"(?=\s*(?:$|[,;:.()!?\n])|\s+(?:because|since|after|before|until|so|but|when|while|which|who)\b)"
_IDENT = r"[\w-]*[_./][\w./-]*\w"  # a name with a separator: an env var, a path, a host, a dotted name
_NAME_LIKE = re.compile(r"(?=[\w./-]*[a-z])(?=[\w./-]*[\d_./-])[\w./-]+$")  # "europe-west1", "osm-loader", "v2.api"
_CLAUSE = r"(?:^|[,;:.]\s*|\b(?:the|our|with)\s+)"
# Each shape of change around a verb of the table (groups old, new, new2, thing), with the whole words it needs
# one of: a text with none of a shape's words is not searched for it (``read``)
_SHAPES = {name: (frozenset(needed), re.compile(shape)) for name, needed, shape in [
    # switched / moved / raised / took over ... from|off A (to|onto B)
    ("moved_from", _verb_words(*_MOVE),
     rf"\b{_MOVE_RE}\b[^,;:.()\n]{{0,60}}?\b(?:from|off)\s+{_SPAN.format('old')}"
     rf"(?:\s+(?:to|into|onto|over to)\s+{_SPAN.format('new')})?{_STOP}"),
    # replaced / renamed / swapped A with|by|to|for B
    ("replaced_with", _verb_words(*_REPLACE),
     rf"\b{_REPLACE_RE}\s+{_SPAN.format('old')}\s+(?:with|by|to|for|in favou?r of)\s+{_SPAN.format('new')}{_STOP}"),
    # A was replaced by B / A was renamed to B / A was dropped / A is gone / with A gone
    ("was_replaced", _verb_words(*_REPLACE, *_REMOVE) | {"gone"},
     rf"{_CLAUSE}{_SPAN.format('old')}\s+(?:(?:was|were|has been|have been|got|is|are|is being)\s+(?:now\s+)?"
     rf"(?:{_REPLACE_RE}|{_REMOVE_RE})|gone)(?:\s+(?:with|by|to|for|in favou?r of)\s+{_SPAN.format('new')})?{_STOP}"),
    # A renamed (to) B, A replaced by B: a note's passive with no "was" ("wo-bridge repo renamed to
    # gustline/sap-pm-sync"), and "renamed" with its new name right after ("#gust-alarms has been renamed
    # #ops-alarms"); an active "we renamed the repo" has no target after its verb, so it is not read here
    ("telegraphic", _verb_words(*_REPLACE),
     rf"{_CLAUSE}{_SPAN.format('old')}\s+(?:(?:was|were|has been|have been|got|is|are)\s+)?(?:{_REPLACE_RE}\s+"
     rf"(?:with|by|to|in favou?r of)|renamed(?=\s+[#\w./-]*[#\d_./-]))\s+{_SPAN.format('new')}{_STOP}"),
    # B replaces / superseded A: the object of an active "replace" with no "with" is what stopped holding, whether
    # the subject is the new value ("FASTLY_API_TOKEN replaces PRESSROOM_FASTLY_KEY") or who replaced it
    ("replaces", {"replaces", "replaced", "supersedes", "superseded"},
     rf"\b(?:replac|supersed)(?:es|ed)\s+{_SPAN.format('old')}(?:{_STOP}|(?=\s+(?:with|by|in favou?r of)\b))"),
    # dropping / removed / retired / reverted A, unless an amount follows in its clause
    # ("dropping the homepage TTL to 5 s", "Dropped the ranker's LR to 1e-4" lower an amount: what they name is a
    # slot, not a value removed)
    ("removing", _verb_words(*_REMOVE),
     rf"\b{_REMOVE_RE}\s+(?!(?:[^,;:.()\n]|\.(?=\d))*?\s(?:to|from|by)\s+[\d.$£€]){_SPAN.format('old')}{_STOP}"),
    # X handed / passed (over) Y (over) to Z: the giver is the old value, the receiver the new
    ("handed", _verb_words(*_TRANSFER),
     rf"(?:^|[,;:.]\s*){_SPAN.format('old')}\s+{_TRANSFER_RE}\s+(?:over\s+)?"
     rf"(?P<thing>[^,;:.\n]{{0,60}}?)\bto\s+{_SPAN.format('new')}{_STOP}"),
    # instead of A / rather than A / , not A / no longer A (after "no longer" a lone word ending the
    # clause is a predicate, "no longer needed", not a value)
    ("instead_of", {"instead", "rather", "not", "never", "no"},
     rf"(?:\binstead of|\brather than|[,;]\s*(?:and\s+|but\s+)?(?:not|never)|\bno longer(?!\s+[\w-]+{_END}))"
     rf"\s+{_SPAN.format('old')}{_END}"),
    # an identifier that is now / became another: "STRIPE_KEY is now STRIPE_SECRET_KEY"
    ("ident_now", {"now", "became", "becomes", "turned"},
     rf"(?P<old>{_IDENT})\s+(?:is now|are now|became|becomes|turned into|is now called)\s+(?P<new>{_IDENT})"),
    # a name that holds now: "the clinic-sync worker is called roster-sync now", "X is now named Y"
    ("called_now", {"called", "named"},
     rf"{_CLAUSE}{_SPAN.format('old')}\s+(?:is|are)\s+(?:now\s+(?:called|named)\s+{_SPAN.format('new')}{_STOP}"
     rf"|(?:called|named)\s+(?P<new2>[\w./-]+(?: [\w./-]+){{0,2}}?)\s+now\b)"),
    # a one-word name that is called / named another: "grader is named assessment-engine in the manifests",
    # "#sf-alerts is called #skyforge-ops-alerts" (a description, "the job that archives it is called X", is no name)
    ("called", {"called", "named"},
     rf"(?:^|[,;:.]\s*)(?P<old>[#\w][\w./#-]*)\s+(?:is|are)\s+(?:now\s+)?(?:called|named)\s+"
     rf"{_SPAN.format('new')}{_STOP}"),
    # A -> B, a note's change ("menu-api -> catalog-svc", "Joel -> Fatima for the support inbox"); one arrow only,
    # as a flow of several ("nginx -> gunicorn -> django") changes nothing
    ("arrow", {"->", "→"},
     rf"(?:^|[,;:.(]\s*){_SPAN.format('old')}\s*(?:->|→)\s*{_SPAN.format('new')}{_STOP}(?![^\n]*(?:->|→))"),
    # A is no longer <predicate>: the subject is what stopped holding ("the solo pool trick is no longer needed")
    ("no_longer", {"longer"},
     rf"(?:^|[,;:.]\s*|\b(?:the|our)\s+){_SPAN.format('old')}\s+(?:is|are|was|were)\s+no longer\s+[\w-]+{_END}"),
]}
_TELEGRAPHIC = _SHAPES["telegraphic"][1]  # "wo-bridge repo renamed to gustline/sap-pm-sync": read with ``TELEGRAPHIC``
# "dropped A": its object is the old value, unless a modal governs the verb (``_modal_scope``)
_REMOVING = _SHAPES["removing"][1]
# A note's passive without its "was" and "renamed" without "to" are read as changes. False: only the full forms.
TELEGRAPHIC = True
# A note's named speaker is who its "I" is ("From Marek: I've handed ..."). False: "I" names no one.
SPEAKER_I = True
# What the older says only in a question ("Open question for Aisha: should curtail-api retry?") states nothing a
# correction replaces. False: every word of the older counts.
OLDER_ASKED = True
# An update without a named old value: a verb of change (not "settled at") or a marker word (``_NOW_RE``).
_NOW = "|".join(sorted(CHANGE_MARKERS, key=len, reverse=True))
_CHANGE_VERB_WORDS = _verb_words("change", "replace", "transfer", "remove", "undo")
_CHANGED = re.compile(rf"\b(?:{_verbs('change', 'replace', 'transfer', 'remove', 'undo')})\b")
# A marker says what holds from now on in place of what held ("Hana has the notifier now"); a verb of
# change alone may report an event ("last week we migrated the billing worker to the new queue"). "For now" says
# the opposite: what held still holds, for a while ("staying on MSK for now", "production stays on 4.9 for now").
# A point from which it holds, named as "from now on" is ("from here on", "from this release on", "starting this
# rotation", "as of this sprint", "from next week", "going forward"): a deictic "this" / "next" / "here", so "from
# the page on" or "starting from scratch" name no such point.
_FROM_ON = (r"from (?:here|then|this [\w-]+) on|from (?:the )?next [\w-]+(?: on)?"
            r"|starting (?:with )?(?:this|next|the next) [\w-]+|as of (?:this|today|tonight)|going forward")
_NOW_RE = re.compile(rf"\b(?:{_NOW}|{_FROM_ON})\b(?<!\bfor now)")


@dataclass(frozen=True)
class Value:
    """One value a correction names: its text, content words and numbers."""

    text: str
    terms: frozenset[str]
    numbers: tuple[float, ...]

    @classmethod
    def of(cls, raw: str) -> "Value | None":
        tokens = words(raw)
        while tokens and tokens[0] in ARTICLES:
            tokens = tokens[1:]
        tokens = tokens[:6]
        if not tokens:
            return None
        numbers = tuple(float(n) for n, _ in _NUM_UNIT.findall(" ".join(tokens)))
        terms = _content([p for t in tokens for p in t.split("/") if p and p not in CHANGE_HEADS])  # "a/b": two values
        if not terms and not numbers:
            return None
        return cls(" ".join(tokens), terms, numbers)

    def stated_in(self, text_terms: frozenset[str], text_numbers: frozenset[float], phrase: str = "") -> bool:
        """Whether a text states this value: its numbers, and (most of) its content words; a value of
        one content word among function words ("per organization") as that phrase, when ``phrase``
        (the text's words, space-joined) is given."""
        if self.numbers and not set(self.numbers) <= text_numbers:
            return False
        if not self.terms:
            return bool(self.numbers)
        missing = len(self.terms - text_terms)
        tokens = [t for t in self.text.split() if t not in CHANGE_HEADS]
        if phrase and len(self.terms) == 1 and len(tokens) > 1 and f" {' '.join(tokens)} " not in f" {phrase} ":
            return False
        return missing == 0 or (missing == 1 and len(self.terms) >= 4)


@dataclass(frozen=True)
class Reading:
    """What a correction says: the old and new values it names and its slot words."""

    old: tuple[Value, ...]
    new: tuple[Value, ...]
    slot: frozenset[str]
    kind: str = "fact"
    settings: "dict[Setting, tuple[str, ...]]" = field(default_factory=dict)  # each setting -> the words before it
    # no change word and no correction kind: it only states settings ("keepalive settled at 90 seconds"),
    # so it can replace nothing but another value of the same type on the same slot
    bare: bool = False
    words: frozenset[str] = frozenset()  # the text's content words, with the parts of compound ones
    text: str = ""  # what was read (the people it names are looked up only when a decision needs them)
    handed: tuple[tuple[Value, Value], ...] = ()  # (giver, what the giver handed over) of each handover
    marked: bool = False  # a marker of what holds now ("now", "from now on", "no longer", "after all", ...)
    left: tuple[Value, ...] = ()  # people it says moved on (``_LEFT``): an old value only as ``_succeeded`` allows


@lru_cache(maxsize=4096)  # read of each older text by corrects, related and _rivals alike
def _facts(text: str) -> tuple[frozenset[str], frozenset[float], frozenset[str]]:
    """Content words, numbers, and content words with the parts of compound ones ("per-organization",
    "celery/rabbitmq", "brightbill.dev") that an old value may name on its own."""
    tokens = words(_numerals(text))
    terms = _content(tokens)
    parts = _content(_parts_of(tokens))
    return terms, frozenset(float(n) for n, _ in _NUM_UNIT.findall(" ".join(tokens))), terms | parts


_PLANNED = re.compile(r"\b(?:than|as) planned\b", re.IGNORECASE)


# What a note says of the one who wrote it opens on "I" ("I've handed ...") or on a verb ("handing ...", "moved ...")
_SAID_AS_I = r"(?:(?P<i>I(?:'m|'ve| am| have)?)\s+(?=[a-z])|(?=[a-z]+(?:ing|ed)\s))"
# "From Marek: I've handed ...", "Kenji here - I've taken over ...": a note whose speaker says "I"
# "Mateus: handing the fleet pager to Hannah", "Tomasz here: handing ...": a note that opens on a verb says it of
# its speaker. The name is capitalised word by word ("Tomasz here:" names Tomasz).
_SPEAKER_SAYS_I = re.compile(r"^(?:from\s+)?(?P<name>(?-i:[A-Z][a-z]+(?: [A-Z][a-z]+)?))"
                             rf"(?::|\s+here\b[\s,:.\u2013\u2014-]*)\s*{_SAID_AS_I}", re.IGNORECASE)


def _spoken(text: str) -> str:
    """``text`` with the "I" of a note's named speaker read as the speaker (``SPEAKER_I``): "From Marek: I've
    handed rules-engine to Hana" hands it over from Marek, the old owner a handover names.

    >>> _spoken("Aisha: I'm handing curtail-api to Jonas Brandt."), _spoken("Kenji here - I've taken over the router.")
    ('Aisha handing curtail-api to Jonas Brandt.', 'Kenji taken over the router.')
    >>> _spoken("Mateus: handing the fleet pager to Hannah Becker for May.")
    'Mateus handing the fleet pager to Hannah Becker for May.'
    >>> _spoken("Note: I moved the pager to Bo.")  # a heading label is nobody
    'Note: I moved the pager to Bo.'
    """
    from mem.enrich.classify import LABELS, label_kind

    found = _SPEAKER_SAYS_I.match(text) if SPEAKER_I else None
    if found is None or not found["name"][0].isupper() or found["name"].lower() == "from" \
            or found["name"].lower() in LABELS or label_kind(found["name"]) is not None:
        return _signed(text)
    return f"{found['name']}{text[found.end('i'):]}" if found["i"] else f"{found['name']} {text[found.end():]}"


# A note signed at its end ("I've handed the on-call rotation to Marcus. - Priya"): its "I", or the verb it opens
# on ("Handing the connectors to Ines from Monday. - Tomasz"), is the signer's
_SIGNATURE = re.compile(r"\s[-\u2013\u2014]{1,2}\s*(?P<name>[A-Z][a-z]+(?: [A-Z][a-z]+)?)\.?\s*$")
_OPENS_ON = re.compile(f"^{_SAID_AS_I}", re.IGNORECASE)


def _signed(text: str) -> str:
    """``text`` read as its signer's, when it is signed at its end and opens on "I" or on a verb.

    >>> _signed("I've handed the checkout-api on-call rotation to Marcus. - Priya")
    'Priya handed the checkout-api on-call rotation to Marcus.'
    >>> _signed("Handing the Fivetran connectors to Ines from Monday. - Tomasz")
    'Tomasz handing the Fivetran connectors to Ines from Monday.'
    """
    signed = _SIGNATURE.search(text) if SPEAKER_I else None
    opens = _OPENS_ON.match(text) if signed else None
    if opens is None:
        return text
    body = text[:signed.start()]
    if opens["i"]:
        return f"{signed['name']}{body[opens.end('i'):]}"
    return f"{signed['name']} {body[0].lower()}{body[1:]}"


def _unasked(text: str) -> str:
    """``text`` without its questions (``OLDER_ASKED``): what an older memory only asks states no value.

    >>> _unasked("Open question for Aisha: should it retry? Nothing decided yet.")
    ' Nothing decided yet. '
    """
    if not OLDER_ASKED or "?" not in text:
        return text
    return "".join(" " + sentence.strip() if not sentence.rstrip().endswith("?") else "" for sentence in _sentences(text))


# A verb of change in the scope of a modal says what may or must be done, not what was ("nobody can shorten
# retention or delete a locked object", "you should drop the cache")
_MODAL = re.compile(r"\b(?:can|cannot|can't|could|may|must|should|would|shall)\b")
_CLAUSE_START = re.compile(r"[,;:.!?()\n]")


def _modal_scope(lowered: str, at: int) -> bool:
    """Whether the clause of ``lowered`` before ``at`` holds a modal ("nobody can shorten X or delete Y")."""
    starts = [m.end() for m in _CLAUSE_START.finditer(lowered, 0, at)]
    return bool(_MODAL.search(lowered, starts[-1] if starts else 0, at))


def _realised(text: str) -> str:
    """``text`` with its unrealised sentences blanked (``lexicon.UNREALISED``: a plan, a proposal, what was
    weighed and not done; a question): what they name did not change, so they name no old value, no new
    one and no setting. In a list of news (``LISTED`` clauses or more between commas: a digest) a word of
    plan holds only in its own clause, unless it is in the lead before the list's colon.

    >>> _realised("Plan: run it at 04:00. Done: moved it to EKS.").strip()
    'Done: moved it to EKS.'
    >>> _realised("Notes: the spike is postponed, Joel shipped dark mode, and logs now stay 30 days.")
    'Notes:                         Joel shipped dark mode, and logs now stay 30 days.'
    """
    out = []
    for sentence in _sentences(text):
        clauses = _LISTED.split(sentence) if LISTED else [sentence]
        if len(clauses) < LISTED or sentence.rstrip().endswith("?"):
            clauses = [sentence]
        if len(clauses) > 1 and clauses[0].rstrip().endswith(":") and _unrealised(clauses[0]):
            clauses = [sentence]  # a lead that is a plan ("Plan for next quarter: ...") holds over its list
        out += [" " * len(clause) if _unrealised(clause) else clause for clause in clauses]
    return "".join(out)


def _unrealised(clause: str) -> bool:
    tokens = words(_PLANNED.sub("", clause))  # a comparison, no plan
    # a question changes nothing either, nor what a clause tells as the past ("Historically the batch window was
    # 22:00-06:00"), unless it says what holds now beside it ("Originally on Heroku, now on AWS")
    return bool(UNREALISED & set(tokens)) or tokens[:1] in (["plan"], ["plans"]) or clause.rstrip().endswith("?") \
        or PAST_OPENERS and bool(_PAST_OPENER.match(clause)) and not _NOW_RE.search(clause.lower())


PAST_OPENERS = True  # a clause opening on "historically", "originally", "back in 2019" ... tells the past
_PAST_OPENER = re.compile(r"\s*(?:historically|originally|formerly|previously|back\s+in\s+(?:19|20)\d\d|"
                          r"in\s+the\s+early\s+days|at\s+first)\b", re.IGNORECASE)


# Clauses between commas (and a lead before a colon) that make a sentence a list of news, each its own
# (set j's "Week notes: the Typesense spike is postponed, ..., and Datadog now keeps our logs for 30 days");
# 0: a plan word blanks its whole sentence.
LISTED = 3
_LISTED = re.compile(r"(?<=[,:])(?=\s)")


@lru_cache(maxsize=4096)
def read(text: str, kind: str = "fact") -> Reading | None:
    """The correction ``text`` makes, or None when it reads as no update at all.

    >>> r = read("Dana handed the Kafka cluster over to Pavel Novak; Pavel is now the contact.")
    >>> [v.text for v in r.old], sorted(r.slot)
    (['dana'], ['cluster', 'contact', 'kafka'])
    >>> read("The API uses FastAPI.") is None
    True
    """
    text = _numerals(_realised(_spoken(text)))
    lowered = _named_verbs(text).lower()
    old: list[Value] = []
    new: list[Value] = []
    handed: list[tuple[Value, Value]] = []
    runs = frozenset(_RUNS.findall(lowered)).union(arrow for arrow in ("->", "→") if arrow in lowered)
    for needed, shape in _SHAPES.values():
        if PREFILTER and needed.isdisjoint(runs) or shape is _TELEGRAPHIC and not TELEGRAPHIC:
            continue
        for match in shape.finditer(lowered):
            if shape is _REMOVING and _modal_scope(lowered, match.start()):
                continue
            found = {name: Value.of(raw) for name, raw in match.groupdict().items() if raw}
            for name, into in (("old", old), ("new", new), ("new2", new)):
                if (value := found.get(name)) is not None and value not in into:
                    into.append(value)
            giver, thing = found.get("old"), found.get("thing")
            if giver is not None and thing is not None and thing.terms:
                handed.append((giver, thing))
    marked = bool(_NOW_RE.search(lowered))
    left = [v for m in _LEFT.finditer(text) if (v := Value.of(m["who"] or m["giver"] or m["gone"])) is not None]
    bare = not old and not new and not left and kind != "correction" and not marked \
        and (PREFILTER and _CHANGE_VERB_WORDS.isdisjoint(runs) or not _CHANGED.search(lowered))
    settings = _settings(text, plain=not bare)
    if bare and not settings:
        return None
    # a value is no slot word, in parts or whole ("pub/sub" is its "pub" and "sub" and itself)
    named = set().union(*(v.terms | _content([t for t in words(v.text) if "/" in t]) for v in (*old, *new)))
    slot = _facts(text)[0] - named - _CHANGE_STEMS
    return Reading(tuple(old), tuple(new), frozenset(slot), kind, settings, bare, _facts(text)[2], text, tuple(handed),
                   marked, tuple(left))


# A person who moves on ("Nadia is moving to the data team", "Marta moves to the spec work in August") or whom
# someone takes over from ("Tariq Aziz takes over CI infra from Aiko"): what the older says they hold is someone
# else's now. A capitalised subject may as well be a system ("Billing moves to the new cluster"), so a departure is
# an old value only where ``_succeeded`` finds the person named in the older and a successor in the correction.
_PERSON = r"[A-Z][a-z'-]+(?: [A-Z][a-z'-]+)?"
_OPENING = r"(?:^|[,;:.]\s+|\b(?:and|while)\s+)"  # where a clause, and the person it is about, begins
_LEFT = re.compile(
    rf"(?:{_OPENING}|\b(?={_PERSON},\s+who\b))(?P<who>{_PERSON})(?:,\s+who)?\s+"
    r"(?:is\s+|'s\s+|has\s+|was\s+)?(?:now\s+)?"
    r"(?:mov(?:ing|ed|es)|leav(?:ing|es)|left|go(?:ing|es)|went|rotat(?:ing|ed|es))\s+(?:over\s+|back\s+|off\s+)?"
    r"(?:to|for|onto)\b"
    rf"|\b(?:tak(?:es|ing|e)|took)\s+over\b[^,;:.()\n]{{0,60}}?\bfrom\s+(?P<giver>{_PERSON})"
    # ... or who joined / left something else, stepped down or rolled off ("Ama joined the ML team", "Lars left
    # Skyforge last week", "Kenji rolled off the Pipettex project")
    rf"|{_OPENING}(?P<gone>{_PERSON})\s+(?:has\s+|'s\s+)?"
    r"(?:joined|left|stepped\s+down|rolled\s+off)\b")


def _succeeded(person: Value, reading: "Reading", older_text: str) -> bool:
    """Whether ``older_text`` names ``person`` (who moved on) as a person, and the correction names someone the
    older does not: who holds it now ("Rhys Pritchard looks after the metering service; Nadia is moving to the data
    team" after "Nadia Farouk owns the metering service")."""
    # names as their words fold, as a value's terms are ("Lars" is "lar", "Jonas" "jona")
    theirs = [{_fold(w) for w in name.split()} for name in _names(older_text)]
    if not any(person.terms <= name for name in theirs):
        return False
    known = set(person.terms).union(*theirs)
    return any(known.isdisjoint(_fold(w) for w in name.split()) for name in _names(reading.text))


SENTENCE_QUALIFIERS = True  # ``_relation`` reads qualifiers in the values' sentences, each head nearest its value
DEFAULT_IS_GENERAL = True  # a newer setting of "the default X" is no change of a specific X's (``_relation``)
QUALIFIER_PARTS = True  # a compound qualifier is told only by all its parts (``_qualifies``)
VALUE_SLOTS = True  # an old value named about a sibling of the older's subject is none of its values (``_about_apart``)
IDENT_SLOT = True  # what a person who moved on held, named with a separator, counts as two slot words (``corrects``)
NAMED_VERBS = True  # a capitalised word inside a sentence is a name, even one spelled as a verb ("the *Switch* build")
SIBLINGS = True  # settings each side qualifies after its value by a word of its own are two siblings' (``_rivals``)
_INSIDE_CAPITALISED = re.compile(r"(?<=[\w,] )[A-Z][a-z]+\b")


def _named_verbs(text: str) -> str:
    return _INSIDE_CAPITALISED.sub(lambda m: "_" * len(m[0]) if NAMED_VERBS and m[0].lower() in _VERB_FORMS else m[0], text)


# Every verb of change, as the stems its inflections fold to: they name the change, never the slot.
_VERB_FORMS = _verb_words(*set(CHANGE_VERBS.values()))
# Evidence a correction needs against one older memory: shared slot words, plus the content words of
# the old value it states, plus one when the older memory is a semantic neighbour.
EVIDENCE = 3


def lookup_terms(reading: Reading) -> list[str]:
    """Words to look the memory a correction corrects up by (full-text) when it is no semantic
    neighbour: the old values it names, then the slot words of the settings it states.

    >>> lookup_terms(read("The dev API now listens on port 8080, not 8000."))
    ['8000', 'api', 'dev', 'development', 'listen', 'port']
    """
    named = {t for v in (*reading.old, *reading.left) for t in (*v.terms, *(f"{n:g}" for n in v.numbers))}
    slots = {spelled for before in reading.settings.values() for w in _slot(before) for spelled in spellings(w)}
    return sorted(named) + sorted(slots - named)


def related(reading: Reading, older_text: str) -> bool:
    """Whether the older text is about what the correction changes, without the proof ``corrects``
    needs: a setting of the same type on the same or a narrower slot, or (no such settings) two shared
    slot words or an old value it names. Settings on other slots ("API worker timeout" and "API
    request timeout") are not related, whatever else they share."""
    relations = [relation for _, _, relation in _rivals(reading, older_text)]
    if reading.bare or relations:
        return any(relation != OTHER for relation in relations)
    terms, numbers, parts = _facts(_unasked(older_text))
    return len(reading.slot & terms) >= 2 or any(v.stated_in(parts, numbers) for v in reading.old)


SAME, NARROWER, OTHER = "same", "narrower", "other"


def _present(word: str, text_words: frozenset[str]) -> bool:
    """``word`` is in the text, or every part of a compound one is ("booking-api" in "the booking API")."""
    if word in text_words:
        return True
    parts = _compound(word)
    return bool(parts) and parts <= text_words


def _qualified_apart(mine: tuple[str, ...], theirs: tuple[str, ...], my_near: frozenset[str],
                     their_near: frozenset[str]) -> bool:
    """Whether a word of both slot phrases (``mine``, ``theirs``: ``_phrase``'s words before a value) is qualified
    right before it, where it stands last, by a word on each side that the other's words (``my_near``,
    ``their_near``) do not tell: "API *worker* timeout" / "API *request* timeout", "the *K-12* tenant" / "the
    *university* tenant"."""
    for head in _slot(mine) & _slot(theirs):
        a, b = _place(mine, head), _place(theirs, head)
        if a and b and mine[a - 1] and theirs[b - 1] and mine[a - 1] != theirs[b - 1] \
                and not _qualifies(mine[a - 1], their_near) and not _qualifies(theirs[b - 1], my_near):
            return True
    return False


def _about_apart(value: Value, newer_text: str, older_text: str) -> bool:
    """Whether the phrases before ``value`` in the two texts (its slot, read as a setting's is) are qualified
    apart on a word both name (``_qualified_apart``); False where either text does not spell the value."""
    phrases = [_before(value, text) for text in (newer_text, older_text)]
    if any(phrase is None for phrase in phrases):
        return False
    (mine, my_near), (theirs, their_near) = phrases
    return _qualified_apart(mine, theirs, my_near, their_near)


@lru_cache(maxsize=4096)  # the newer's side is the same for each older it is weighed against
def _before(value: Value, text: str) -> tuple[tuple[str, ...], frozenset[str]] | None:
    """The content words of ``value``'s sentence in ``text`` before it (``_phrase``), and the text's words (a
    qualifier the other names anywhere in the text tells it: "BigQuery exports" / "BigQuery ...; the daily export")."""
    found = re.search(r"(?<![\w-])" + r"\W+".join(map(re.escape, value.text.split())) + r"(?![\w-])", text.lower())
    if found is None:
        return None
    return _phrase(_CASED_WORD.findall(text[_sentence_of(text, found.start()):found.start()])), _facts(text)[2]



def _place(side: tuple[str, ...], head: str) -> int:
    """Where ``head`` stands in a slot phrase: last, nearest its value (``SENTENCE_QUALIFIERS``), else first."""
    return len(side) - 1 - side[::-1].index(head) if SENTENCE_QUALIFIERS else side.index(head)


def _qualifies(word: str, text_words: frozenset[str]) -> bool:
    """``_present`` for a qualifier: a compound one counts as told only by every part, function words too
    ("US-region" is not told by "EU-region": its "us" is no pronoun there). ``QUALIFIER_PARTS``: off."""
    if QUALIFIER_PARTS and not FUNCTION_WORDS.isdisjoint(_PARTS.split(word)):
        return word in text_words  # a function word is never among a text's words: only the whole compound tells it
    return _present(word, text_words)


@lru_cache(maxsize=1 << 14)  # a store's words recur
def _compound(word: str) -> frozenset[str]:
    """The content words a compound word is made of ("booking-api": booking, api), none for a plain word."""
    return _content(_PARTS.split(word)) if _PARTS.search(word) else frozenset()


def _akin(a: str, b: str) -> bool:
    """One word, or two forms of one stem the stemmer left apart ("expiry" and "expire"): all but the
    last letter of the shorter in common, and four letters at least."""
    common = len(os.path.commonprefix([a, b]))
    return a == b or common >= max(4, min(len(a), len(b)) - 1)


def _named(word: str, text_words: frozenset[str]) -> bool:
    # two words akin share four letters first: only those are compared (search asks this of every hit)
    return _present(word, text_words) or any(_akin(word, w) for w in text_words if w[:4] == word[:4])


# A word of letters and digits ("fp-3", "eu-west1", "v2") in a newer slot and not in the older text names
# another member of a series, not a narrower slot of the older's (``_relation``).
_MEMBER = re.compile(r"(?=\S*[a-z])(?=\S*\d)\S+")


def _relation(mine: tuple[str, ...], theirs: tuple[str, ...], my_words: frozenset[str],
              their_words: frozenset[str], bare: bool = False,
              sentences: tuple[frozenset[str], frozenset[str]] | None = None) -> str:
    """How a newer setting's slot (the phrase before it, ``mine``) stands to an older one's: ``OTHER``
    when a word both name is qualified on each side, right before it, by a word the other text lacks
    ("API *worker* timeout" / "API *request* timeout") or on the older's side only while the newer's is
    "the default" one (``DEFAULT_IS_GENERAL``), or when the words right before the two values
    differ and neither text names the other's ("rate *limit*" / "a *burst* of"); ``SAME`` when the
    older text names all the newer slot's words (or all but one of four: a correction refers back to
    what it changes); else ``NARROWER`` (the newer says more: "session cache TTL" after "cache TTL").
    A statement with no change word whose one missing word opens its sentence on its own (a verb or a
    function word after it: a subject, not a modifier) is ``OTHER``: that subject says whose setting
    it is ("Staging runs the API with a database pool of 5" beside "API database pool, 25"); so is a
    slot the newer narrows by an identifier the older does not name whole ("*FP-3* prototypes raise their
    low-battery alert at 3.4 V" beside "battery_low alert threshold: 3200 mV" or "... on the FP-2"): one
    of a series is another thing."""
    slot = _slot(mine)
    # the qualifiers are looked for in the values' own sentences when given ("Reads are quick" after "refunds-api
    # write timeout is 15 seconds" names no read timeout), and each head where it stands last, nearest its value
    my_near, their_near = sentences if SENTENCE_QUALIFIERS and sentences else (my_words, their_words)
    if _qualified_apart(mine, theirs, my_near, their_near):
        return OTHER
    for head in slot & _slot(theirs):
        a, b = _place(mine, head), _place(theirs, head)
        # "the *default* Celery workers" beside "the *image-processing* Celery worker": the default is what holds
        # where nothing more specific is set, so a change to it leaves the specific one alone (without "default" a
        # dropped qualifier is how corrections refer back: 24 studied detections lost when any older qualifier counted)
        if DEFAULT_IS_GENERAL and b and theirs[b - 1] and not (a and mine[a - 1]) and "default" in my_words \
                and "default" not in their_words and not _present(theirs[b - 1], my_words):
            return OTHER
    # the words right before the two values name what each sets; when they differ and neither text
    # names the other's, the values set two things of one subject ("rate limit: 120 requests" and "a
    # burst of 200 requests", "binds port 8443" and "traces_sample_rate 1.0" of one server)
    heads = [next((w for w in reversed(side) if w), "") for side in (mine, theirs)]
    if all(heads) and not _akin(*heads) and not _named(heads[0], their_words) and not _named(heads[1], my_words):
        return OTHER
    missing = [w for w in slot if not _present(w, their_words)]
    if bare and missing == list(mine[:1]) and mine[1:2] == ("",) \
            or any(_MEMBER.fullmatch(w) and w not in their_words for w in slot):
        return OTHER
    return SAME if not missing or (len(missing) == 1 and len(slot) >= QUANTITY_WINDOW) else NARROWER


def _rivals(reading: Reading, older_text: str) -> list[tuple[Setting, Setting, str]]:
    """``(older setting, newer setting, relation)`` for settings of one type (unit, both commands of
    other programs, both versions of one tool, ...) with other values and slot words in common (two,
    or all of a one-word slot; a number with no unit, or a statement with no change word, always two:
    "incident 116" and "incident 177" are two incidents, "service 3 talks" and "service 7 talks" two
    services)."""
    theirs, stated = _their_settings(older_text)
    their_words = _facts(older_text)[2]
    out = []
    for mine, before in reading.settings.items():
        slot = _slot(before)
        need = 2 if mine[1] == PLAIN or reading.bare else min(2, len(slot))
        if quantity(mine) in stated or not need:  # "60 s" is stated by "1 minute"
            continue
        for other, their_before, their_slot in theirs:
            if not _rival(other, mine, elided=not reading.bare) or sum(1 for w in slot if _present(w, their_slot)) < need:
                continue
            # the same said but for the values and, after them, a word each of its own ("6 pods in *prod*" / "2 pods
            # in *staging*"): two rows of one table
            out.append((other, mine, OTHER if SIBLINGS and _own_after(reading.text, mine, not reading.bare, older_text)
                        and _own_after(older_text, other, True, reading.text) else
                        _relation(before, their_before, reading.words, their_words, reading.bare,
                                  (_sentence_words(reading.text, mine, not reading.bare),
                                   _sentence_words(older_text, other, True)))))
    return out


@lru_cache(maxsize=4096)
def _sentence_words(text: str, setting: Setting, plain: bool) -> frozenset[str]:
    """The words (compounds with their parts) of the sentence ``setting`` stands in."""
    start = _placed(text, plain)[setting][1]
    spelled = _numerals(text)  # where ``_placed`` counts its offsets
    end = _SENTENCE_END.search(spelled, start)
    return _facts(spelled[_sentence_of(spelled, start):end.end() if end else None])[2]


@lru_cache(maxsize=4096)  # an older text meets every correction it is a candidate of
def _their_settings(older_text: str) -> tuple[tuple[tuple[Setting, tuple[str, ...], frozenset[str]], ...], frozenset[Setting]]:
    """What ``_rivals`` weighs of an older text: each setting (numbers without a unit too) with the words
    before it and its slot's words with their parts ("per-organization": per, organization), and the
    values it states, each in its quantity's smallest unit."""
    theirs = _settings(older_text, plain=True)
    placed = tuple((other, before, slot | _content(_parts_of(slot)))
                   for other, before in theirs.items() for slot in [frozenset(_slot(before))])
    return placed, frozenset(quantity(s) for s in theirs)


_CLAUSE_END = re.compile(r"[,;:!?()\n]|\.(?!\d)")


def _own_after(text: str, setting: Setting, plain: bool, other_text: str) -> bool:
    """Whether ``text`` has words ``other_text`` lacks and all of them follow ``setting``'s value in its clause."""
    head, tail = (own - _facts(other_text)[2] for own in _around(text, setting, plain))
    return bool(tail) and not head


@lru_cache(maxsize=4096)
def _around(text: str, setting: Setting, plain: bool) -> tuple[frozenset[str], frozenset[str]]:
    """The content words (compounds in parts, units and the setting's own kind left out) of ``text`` before
    ``setting``'s value, and of its clause after it (``_own_after``, against any other text)."""
    start = _placed(text, plain)[setting][1]
    lowered = _numerals(text).lower()
    end = _CLAUSE_END.search(lowered, start + 1)
    head, tail = (_content([p for p in _parts_of(span) if p not in UNITS and _fold(p) != _fold(setting[1])])
                  for span in (words(lowered[:start]), words(lowered[start:end.start() if end else None])[1:]))
    return head, tail


@lru_cache(maxsize=1024)
def _names(text: str) -> frozenset[str]:
    """The people ``text`` names (entity keys): those the entity reader knows as people, and names of two
    words or more ("Anneke Visser", "Jonas Berg": most full names are not in its list of first names)."""
    from mem.enrich.entities import extract_entities

    return frozenset(e.key for e in extract_entities(text) if e.type == "person" or e.type == "name" and " " in e.key)


# Whether ``corrects`` returns at once where none of its ways can decide (the same decisions either way:
# tests/test_prefilter_identity.py runs both over the bench data)
PREFILTER = True


def corrects(reading: Reading, older_text: str, *, neighbour: bool = False) -> str | None:
    """Why the correction replaces ``older_text`` ("old value X", "same slot, 7 d -> 3 d"), or None.

    The older text must not already state every new value (then it is the new state, or the same
    change told again) nor reject the old value itself; then either it states an old value the
    correction names, or it holds a setting of the same type with another value on the slot, with
    ``EVIDENCE`` in shared words.
    """
    terms, numbers, parts = _facts(_unasked(older_text))
    # people who moved on, named in the older as people, with a successor in the correction: old values, no slot words
    departed = [v for v in reading.left if v.stated_in(parts, numbers) and _succeeded(v, reading, older_text)]
    # what a person who moved on held, named by a name with a separator ("took over hs-ingest from Priya"), is as
    # specific as two words (``_NAME_LIKE``); elsewhere such a name is the subject many facts share
    slot = sum(2 if IDENT_SLOT and departed and _NAME_LIKE.match(w) and not w.isalnum() else 1
               for w in reading.slot & terms - {t for v in departed for t in v.terms})
    shared = slot + (1 if neighbour else 0) + (1 if reading.kind == "correction" else 0)
    if PREFILTER and shared + 1 < EVIDENCE and not reading.old and not departed and not (neighbour and slot >= 2):
        return None  # each way below needs two slot words and a close neighbour, an old value named, or the evidence
    if neighbour and slot >= 2 and (back := _refers_back(reading, older_text)):
        return back
    if neighbour and reading.marked and not reading.old:
        # "Daniel owns the gateway from now on" after "Priya owns the gateway": what holds now names
        # someone else on the same subject; slot words counted without the people
        theirs, mine = ({w for name in _names(t) for w in name.split()} for t in (older_text, reading.text))
        if theirs and mine - theirs and len(reading.slot & terms - theirs - mine) >= 2:
            return f"now {' '.join(sorted(mine - theirs))}, was {' '.join(sorted(theirs))}"
    if reading.bare:  # a statement with no change word replaces only a value on the very same slot, itself evidence
        return _same_slot(reading, older_text, (SAME,)) if shared + 1 >= EVIDENCE else None
    # the older text already states every new value: it is the new state, or the same change told
    # again (a new name inside the old one, "vehicle_positions" -> "positions", does not count, nor a
    # value the older text itself gave up: a hand-back, "Hanna handed it back to Mateus" after "Mateus
    # handed it over to Hanna")
    own = read(older_text)
    rejected = [v for v in own.old] if own else []
    old_parts = set(_parts_of(t for v in reading.old for t in v.terms))
    if reading.new and all(v.stated_in(parts, numbers) and not v.terms <= old_parts
                           and not any(v.terms and v.terms <= r.terms for r in rejected) for v in reading.new):
        return None
    phrase = _spelled_out(older_text)
    # a giver is an old value only where the older text names half or more of what was handed over:
    # "Noor passed the courier partner relationship to Sven" replaces whom the courier partner questions
    # go to, not "Noor emails the partners a week ahead" nor "Noor wants the onboarding doc updated"
    stated = [v for v in reading.old if v.stated_in(parts, numbers, phrase) and not any(
        v.terms <= r.terms and set(v.numbers) <= set(r.numbers) for r in rejected)  # rejected too: the two agree
              and not any(giver == v and 2 * len(thing.terms & parts) < len(thing.terms)
                          for giver, thing in reading.handed)]
    stated += [v for v in departed if v not in stated]
    # an old value named about one thing and stated about its sibling is no value of the older's ("LearnLoop's
    # university tenant replaced Google SSO" / "LearnLoop's K-12 tenant uses Google SSO")
    stated = [v for v in stated if not (VALUE_SLOTS and _about_apart(v, reading.text, older_text))]
    # each old value stated is evidence by its content words; one shared word and a one-word value is
    # too little on its own ("Dana applies it" is not "Dana owns it"), whatever the cosine: the slot,
    # the values or the kind must say more
    # a name with a digit or a separator that a change replaces by another ("moved from europe-west1 to
    # europe-west4", "osm-loader was renamed to planet-sync") is as specific as two words: no common word
    named = sum(2 if reading.new and _NAME_LIKE.match(v.text) else max(1, len(v.terms)) for v in stated)
    # a kind `correction` may rest on one old value, unless that value is a person or a lone number:
    # people recur in facts a handover does not correct ("moved from Priya to Marcus" is no correction
    # of "Reminder from Priya in review: amounts are integer cents"), and so do numbers ("3 times, not
    # 5" corrects no "5 hours of uploads"); a tool or an identifier names the thing itself
    if stated and shared + named >= EVIDENCE and (slot >= 2 or named >= 2 or reading.kind == "correction" and any(
            v.terms and v.text not in _names(reading.text) for v in stated)):
        return "old value " + ", ".join(v.text for v in stated)
    # another value on the very same slot is itself evidence; on a slot the correction qualifies further,
    # the words must say enough
    return _same_slot(reading, older_text, (SAME,) if shared + 1 >= EVIDENCE > shared else (SAME, NARROWER)) \
        if shared + 1 >= EVIDENCE else None


def _spelled_out(text: str) -> str:
    """``text``'s words with compound ones in parts, space-joined: where ``Value.stated_in`` looks for a phrase."""
    return " ".join(_parts_of(words(text)))


# A clause telling that a state comes back: "revert to 30 when the audit closes", "the 4-hour target applies again
# from Monday", "goes back to 2 after the sale"
_RETURN = re.compile(r"\b(?:revert(?:s|ed|ing)?\s+to|(?:go(?:es|ing)?|com(?:es|ing))\s+back\s+to|return(?:s|ing)?\s+to"
                     r"|(?:appl(?:y|ies)|holds?|is|are)\s+again)\b", re.IGNORECASE)
# A number said to stay: "the default TTL stays 1 hour", "line length stays at 100", "still 6 at the bottom"
_STAYS = re.compile(r"\b(?:stays?|remains?|still)\s+(?:at\s+|on\s+)?(?P<n>\d+(?:\.\d+)?)(?![\w.-])", re.IGNORECASE)


def keeps_all(reading: "Reading | None", older_text: str) -> bool:
    """Whether the newer names no old value and says every number of the older stays ("Vaultkeeper tokens can
    be renewed up to 24 hours; the default TTL stays 1 hour" after "tokens have a 1-hour TTL"): it adds to the
    older and replaces nothing. A number of the older that does change ("tops out at 30 now; still 6 at the
    bottom" after "6 replicas, up to 20") leaves the change a change."""
    if reading is None or reading.old:
        return False
    theirs = _facts(_unasked(older_text))[1]
    return bool(theirs) and theirs <= {float(m["n"]) for m in _STAYS.finditer(_numerals(reading.text))}


def comes_back(newer_text: str, older_text: str) -> str | None:
    """A number the older states that the newer says comes back ("Revert to 30 when the audit closes" after
    "keeps 30 days"): the newer holds for a while, and the older holds again after it, so it replaces nothing.

    >>> comes_back("Hot retention stretched to 45 days; revert to 30 when the audit closes.", "Hot data: 30 days.")
    '30'
    >>> comes_back("Retention went back to 30 days.", "Retention is 45 days.") is None
    True
    """
    spelled = _numerals(newer_text)
    theirs = _facts(_unasked(older_text))[1]
    for match in _RETURN.finditer(spelled):
        start = max((m.end() for m in _CLAUSE_END.finditer(spelled, 0, match.start())), default=0)
        end = _CLAUSE_END.search(spelled, match.end())
        named = _facts(spelled[start:end.start() if end else None])[1] & theirs
        if named:
            return f"{min(named):g}"
    return None


def names_old(reading: Reading, older_text: str) -> str | None:
    """The first old value the correction names that ``older_text`` states ("Disqus is gone" and "comments
    run on Disqus"), on no further evidence (``corrects`` asks for more before superseding).

    >>> names_old(read("Disqus is gone from the site."), "Reader comments run on Disqus.")
    'disqus'
    """
    _, numbers, parts = _facts(older_text)
    phrase = _spelled_out(older_text)
    return next((v.text for v in reading.old if v.stated_in(parts, numbers, phrase)), None)


def _refers_back(reading: Reading, older_text: str) -> str | None:
    """A neighbour's value named again beside a new value of its type: "cycleways are 20 km/h in the
    bike profile; 22 overestimated the cargo bikes" after "the bike profile assumes 22 km/h on separated
    cycleways", "needs iOS 16; iOS 15 was under 2%" after "the minimum is iOS 15". The correction
    points at what it replaces, whatever its wording (``corrects`` asks for a close neighbour and two
    slot words first)."""
    theirs = _settings(older_text, plain=True)
    mine = _settings(reading.text, plain=True)
    my_numbers = _facts(reading.text)[1]
    their_numbers = _facts(older_text)[1]
    for old in theirs:
        # stated whole beside another value ("Python 3.11 and 3.12 are supported"), it still holds
        if old in mine or _number(old[0]) not in my_numbers:
            continue
        for new in mine:
            value = _number(new[0])
            if value is not None and value not in their_numbers and old[1] == new[1]:
                return f"old value {_show(old)} named, {_show(new)} now"
    return None


def _same_slot(reading: Reading, older_text: str, relations: tuple[str, ...]) -> str | None:
    rivals = [(old, new) for old, new, relation in _rivals(reading, older_text) if relation in relations]
    return f"same slot, {_show(rivals[0][0])} -> {_show(rivals[0][1])}" if rivals else None


def other_value(newer_text: str, older_text: str, asked: str, *, near: bool = False) -> str | None:
    """A value the newer text states, in a sentence that names the question ``asked``, where the older
    one states another of its type, on a slot that is not another one ("40 ms -> 30 ms"; for a question
    asking who, "Anneke Visser -> Grace Liu"): search's evidence that, for a question both answer, the
    newer says what holds now. No change word and no two shared slot words needed: the question both
    match says what they are about. ``near``: the two are each other's close neighbours, which says so
    instead; every realised sentence counts, and a number with no unit rivals one of another unit only
    when the newer reads as a change ("Servers run at 60 now" after "a 30 Hz tick rate")."""
    asked_words = _facts(asked)[2]
    mine, theirs = (_realised(t) if near else _answering(t, asked_words) for t in (newer_text, older_text))
    my_words, their_words = _facts(newer_text)[2], _facts(older_text)[2]
    reading = read(newer_text)
    bare = reading is None or reading.bare
    their_settings = _settings(theirs, plain=True)
    stated = {quantity(s) for s in their_settings}
    my_settings = _settings(mine, plain=True)
    for elided in (False, True) if not (near and bare) else (False,):  # a value of its own type first
        # a neighbour naming the older value again beside the new one speaks of that very setting
        # ("#sky-incidents is archived; incident chatter goes to #inc-skyreach"), whatever words stand
        # before each
        found = [(old, new) for new, before in my_settings.items() for old, their_before in their_settings.items()
                 if quantity(new) not in stated and _rival(old, new, elided)
                 and (near and old in my_settings or _relation(before, their_before, my_words, their_words, bare) != OTHER)]
        # a neighbour's value that rivals two of the older's says no one of them changed; one in the older's
        # very words with every value other is another row of a table ("Service number 19 listens on port
        # 8019" beside number 17 on 8017), not a change of it
        found = [(old, new) for old, new in found if not near or [n for _, n in found].count(new) == 1]
        if found and not (near and len(found) > 1 and my_words == their_words):
            return f"{_show(found[0][0])} -> {_show(found[0][1])}"
    if not {"who", "whom", "whose"} & set(words(asked)):
        return None
    # someone who "also" does it joins whoever did ("Rafael also reviews anti-cheat PRs")
    mine = " ".join(sentence for sentence in _SENTENCE_END.split(mine) if not re.search(r"\b(?:also|as well)\b", sentence))
    people = [{p for p in _names(t) if not _content(p.split()) & asked_words} for t in (mine, theirs)]
    named = {w for p in people[1] for w in p.split()}
    arrived = sorted(p for p in people[0] if not set(p.split()) & named)
    if arrived and people[1]:
        return f"{' '.join(sorted(people[1]))} -> {' '.join(arrived)}"
    return None


def _answering(text: str, asked_words: frozenset[str]) -> str:
    """The realised sentences of ``text`` that name one of ``asked_words`` (a plan names no value)."""
    return " ".join(sentence for sentence in _sentences(_realised(text))
                    if any(_named(w, _facts(sentence)[2]) for w in asked_words))


def words_named(asked: str, text: str) -> frozenset[str]:
    """The content words of ``asked`` that ``text`` names (any form of their stem, or the parts of a compound)."""
    text_words = _facts(text)[2]
    return frozenset(w for w in _facts(asked)[2] if _named(w, text_words))
