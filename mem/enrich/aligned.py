"""A claim told again with its value swapped or denied: a correction read by alignment, not by phrase.

``corrections`` reads a change from its shape ("raised from A to B", "A was replaced by B"). Most
corrections people write have no such shape: they restate the claim with the new value ("Loki holds 30
days of logs" after "Loki keeps two weeks of logs"), or deny it ("the PDF export is gone"). What
makes them corrections is structure:

* **a value swapped**: the two texts hold values of one type (a duration, a size, a count of the same
  thing, a version or plain number, a time of day, a weekday, a frequency, an identifier, a name),
  each absent from the other text, in clauses about the same thing: the newer names enough of the
  older's words (spelled alike, or, given ``alike``, alike by their token states: "keeps" and "holds"),
  and neither puts a word of its own before the words they share (a qualifier: "the *avatar* upload
  limit", "*staging* redis", "the *eu* cluster": another thing, not this one), unless the newer owns
  up to correcting ("actually", "I misremembered"): then it may leave the older's qualifiers out;
* **the claim denied**: a clause of the newer negates the older's words ("not", "no longer", "was
  removed", "switched off") and names little else.

Neither counts when the newer is a plan, a question or an exception ("might", "next year", "for this
weekend only"). Stdlib only, pure, cached (the spelling alone).

>>> replaced("The web app now runs on Node 22.", "Node version for the web app is 18.")
'18 -> 22'
>>> replaced("Loki holds 30 days of logs since the audit.", "Loki keeps two weeks of logs.")
'two weeks -> 30 days'
>>> replaced("Avatar uploads are limited to 2 MB.", "The upload limit is 10 MB.") is None
True
>>> replaced("The API does not support XML responses anymore.", "The API supports XML responses.")
'denied'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import NamedTuple

from mem.enrich.settings import quantity, typed
from mem.enrich.lexicon import (ARTICLES, CHANGE_MARKERS, CHANGE_VERBS, EVERY, FREQUENCIES, FUNCTION_WORDS,
                                NUMBER_WORDS, TOOLS, UNITS, UNREALISED, VALUE_ALIASES, words)
from mem.text import stem

# Negators: a word the newer adds to the older's claim ("n't" is read as "not", "switched off" as "disabled").
NEGATORS = words("not no never none nothing nobody longer anymore without stopped disabled removed dropped gone "
                 "retired deprecated decommissioned discontinued killed pulled deleted scrapped ditched axed rid "
                 "sunset sunsetted")
# What keeps a text from telling what holds now: plans, proposals, questions, exceptions, history ("until
# 2023", "used to"), and additions to the claim rather than changes of it ("also", "too", "as well").
NOT_NOW = UNREALISED | words("will would could should may might maybe perhaps plan plans planned planning propose "
                             "proposal proposed idea thinking tomorrow next temporarily temporary exception except "
                             "unless if whether trial experiment only roadmap rfc until formerly previously "
                             "originally initially also too additionally")
_NOT_NOW_PHRASES = re.compile(r"\b(?:used to|back in|as well|at first)\b", re.IGNORECASE)
# A newer text that says it corrects what was said ("actually", "I misremembered"): it refers back to the
# older claim, so it may leave out the older's qualifiers and name only one of its words
OWNED_UP = re.compile(r"\b(?:actually|in fact|turns out|correction|misremembered|misread|my mistake|was wrong|"
                      r"had (?:that|it) wrong|to be precise|confused)\b|^\W*(?:nope|oops|sorry)\b", re.IGNORECASE)
# Words naming the setting rather than the thing set: a restatement may leave them out ("Node version for
# the web app is 18" -> "the web app now runs on Node 22").
GENERIC = frozenset(stem(w) for w in words("version value setting number default current"))
PREFACE = True
PERIODS = True  # "every hour", "once per second", "weekly": a period, a rival of "every 10 minutes", "interval: 60 s"
# the value shapes of ``settings.typed`` as this module types them: a command and an address are no rivals
_KINDS = {"`": "ident:command", "url": "ident:url", "clock": "clock", "day": "weekday"}
SIBLINGS = True  # the same said of two siblings ("Hospital A" / "Hospital B") is no correction: ``_siblings``
CASED_TOOLS = True  # a name and a tool are rival values only when both are written as names (capitalised)
AGES = words("old previous former legacy existing")  # they tell two things apart, unlike the articles they sit among
_CHANGE_WORDS = words("now bumped bump raised moved switched changed updated upgraded replaced set since as of "
                      "today currently new") | CHANGE_MARKERS
_TOLD_CHANGED = _CHANGE_WORDS - words("new set since as of today currently")  # "now", "moved", "renamed", ...
_IGNORED = (FUNCTION_WORDS | ARTICLES | words("we i you they he she it our us team still please note fyi btw so "
                                              "just really everything anything something half re ve ll")) - AGES
_SPELLED = {**{w: d for w, d in NUMBER_WORDS.items() if " " not in w}, "one": "1", "eleven": "11", "a": "1", "an": "1"}
_TOKEN = re.compile(r"`[^`]+`|\$?[A-Za-z0-9][\w./:@#+%$&-]*[\w%+#]|\$?[A-Za-z0-9]")
_NUMBER = re.compile(r"\$?(\d+(?:\.\d+)*)(k)?$")
_GLUED = re.compile(r"(\$?\d+(?:\.\d+)?)([a-z%]+)$")
_IDENT = re.compile(r"[_./:@]")  # a path, host, env var, dotted name ("month-end" is a word)
_DIGIT, _DOTTED = re.compile(r"\d"), re.compile(r"[a-z]\.[a-z]", re.IGNORECASE)
_VARIABLE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_DECIMAL, _LETTERS = re.compile(r"\d+(?:\.\d+)?"), re.compile(r"[a-z]+")
_CLAUSE = re.compile(r"[.;!?]\s+|[.;!?]$|\s[-—–]+\s|[()]|,\s")
_CONTRASTS = words("not never no")  # a clause led by one of these says what the clause before is not
# Two plain names (no tool, version or number) swap only where no other value follows either in its clause,
# where a claim's value stands ("feature flags come from LaunchDarkly" / "Feature flags: Unleash"; "Log level
# is INFO in production"): a name with a value after it is what its clause is about ("Mirth's JVM heap on
# prod is 4 GiB" / "Mirth prod VMs have 4 vCPU", "Marcus Bell owns hold-service" / "Marcus still reviews PRs
# that change retention logic in hold-service"). False: any place.
NAMES_AT_ENDS = True
# A swapped name right before a plain word of its clause qualifies that word ("the Workday crew feed" / "a
# separate SFTP drop"), so it is no value swapped. False: off.
NAME_MODIFIERS = True
# Two names made of parts ("order-service", "inventory-service") are told alike only as spelled: token states find
# them alike, but they name two services. False: by token states too.
NAMES_SPELLED = True
_JOINED = re.compile(r"\w[-_./]\w")
_OFF = re.compile(r"\b(?:switch|turn|shut)(?:ed|s)?\s+(?:it\s+|them\s+)?off\b", re.IGNORECASE)
_CHANGE_STEMS = frozenset(stem(f) for verb in CHANGE_VERBS for f in (verb.split()[0], verb.split()[0] + "ed"))


class Word(NamedTuple):
    key: str  # the stem of a plain word; a value's canonical form
    surface: str
    type: str | None  # None for a plain word, else the value's type
    parts: frozenset[str] = frozenset()  # the words of a name of several ("stripe billing": stripe, billing)
    at: int = 0  # where in its clause it starts, in tokens (function words counted)


# whether a plain word of the older (first) and one of the newer say the same thing there, beyond spelling
# ("keeps" and "holds" before a duration): ``mem.score.counterparts``, from the two texts' token states
Alike = Callable[[str, str], bool]


def replaced(newer: str, older: str, alike: Alike | None = None) -> str | None:
    """Why ``newer`` corrects ``older`` by alignment ("two weeks -> 30 days", "denied"), or None; with
    ``alike``, a word the other text says in words of its own counts as told (asked only of the plain
    words of clauses with a value swapped, and only when the spelling alone decided nothing)."""
    return _replaced(newer, older, None) or (
        _replaced.__wrapped__(newer, older, alike) if alike and (not PREFILTER or _loosened(newer, older)) else None)


# Whether ``replaced`` skips its word test (``alike``) where ``_loosened`` shows it cannot decide: the same
# decisions either way (tests/test_prefilter_identity.py runs both over the bench data)
PREFILTER = True


@lru_cache(maxsize=8192)
def _replaced(newer: str, older: str, alike: Alike | None) -> str | None:
    if _blocked(newer) or _blocked(older):
        return None
    if _denies(newer, older):  # a rule told twice ("never X", "no X") denies nothing
        old_all = _text(older).all
        clauses, owned_up = _claim(newer, older).clauses, _owned_up(newer)
        return "denied" if any(_denied(clause, old_all) and (owned_up or not _elsewhere_contrast(clauses, k, old_all))
                               for k, clause in enumerate(clauses)) else None
    owned_up = _owned_up(newer)
    for new, old, found in _placed_swaps(newer, older):  # the clause pairs whose words may hold a swap
        if _shares(*found, alike, owned_up, newer):
            return _told(found[2], newer, new, old)
    return None


_Side = tuple[tuple[Word, ...], tuple[tuple[Word, ...], ...], list[Word]]  # a clause, its text's clauses and words
_Found = tuple["_Words", "_Words", tuple[Word, Word]]  # ``_candidate``'s: the words left each side, the swap


@lru_cache(maxsize=256)  # both passes of ``replaced`` and ``_loosened`` ask it of one pair in turn
def _placed_swaps(newer: str, older: str) -> tuple[tuple[_Side, _Side, _Found], ...]:
    """``(newer's side, older's side, the swap found)`` of each clause pair, in order, that holds a swap
    candidate (``_candidate``) standing where ``_placed`` wants it; every other clause pair's swap is None
    whatever tells the words. A switch read here (``CASED_TOOLS``, ``PREFACE``, ``SIBLINGS``) flipped in
    process wants ``mem.runtime.clear_reader_caches`` first, as every cached reading here does."""
    new, old = _claim(newer, older), _text(older)
    free = _free(new, old)
    if not all(free):
        return ()  # no value of one side is left unnamed by the other: no clause pair holds a swap
    keys = old.keys, new.keys
    owned_up = _owned_up(newer)
    return tuple(((n, new.clauses, new.all), (o, old.clauses, old.all), found)
                 for n, new_left in zip(new.clauses, new.new_lefts) for o, old_left in zip(old.clauses, old.old_lefts)
                 if (found := _candidate(new_left, old_left, free, keys)) is not None and _placed(*found, owned_up))


def _claim(newer: str, older: str) -> "_Text":
    """The newer's words that may hold its claim: after a preface before a colon that names none of the
    older's words ("Small fix to what I said: ..."), only the part after it (``PREFACE``)."""
    preface, _, rest = newer.partition(": ")
    if PREFACE and rest:
        old_all = _text(older).all
        if not any(_matched(w, old_all) for c in _clauses(preface) for w in c):
            return _text(rest)
    return _text(newer)


def _elsewhere_contrast(clauses: tuple[tuple[Word, ...], ...], k: int, old: list[Word]) -> bool:
    """Whether clause ``k`` is a contrast ("..., not Stripe") added to clauses about something the older
    does not name: "Gift cards are issued by Loomhouse itself, not Stripe" says what gift cards are not and
    denies nothing of "Sales tax at checkout comes from Stripe Tax"; "the offline cache is Realm, not
    SQLite" denies "the app uses SQLite ... for the offline cache". (A newer that owns up to correcting,
    "Correction: use pnpm, not yarn", denies whatever it names.)"""
    return k > 0 and clauses[k][0].surface.lower() in _CONTRASTS \
        and not any(_matched(w, old) for clause in clauses[:k] for w in clause)


class _Words(list):  # type: ignore[type-arg]
    """A word list kept with its ``_lookup`` (``_matched`` reads it rather than hashing the words again): a
    text's, or a clause's without its change or generic words, made once a text (``_text``), not once a pair."""

    __slots__ = ("look",)

    def __init__(self, words: "Iterable[Word]") -> None:
        super().__init__(words)
        self.look = _lookup(tuple(self))


class _Text(NamedTuple):
    """What alignment reads of one text, whichever side of a pair it is on: its clauses and words, their
    keys, the values a swap may have at each end (``_free``), and each clause's words a swap is looked for
    among as the newer (``new_lefts``: without the change words) and as the older (``old_lefts``: without
    the generic ones), in ``_candidate``."""

    clauses: tuple[tuple[Word, ...], ...]
    all: _Words
    keys: frozenset[str]
    new_values: tuple[Word, ...]
    old_values: tuple[Word, ...]
    new_lefts: tuple[_Words, ...]
    old_lefts: tuple[_Words, ...]


def _changes(word: Word) -> bool:
    return word.surface.lower() in _CHANGE_WORDS or word.key in _CHANGE_STEMS


@lru_cache(maxsize=8192)
def _text(text: str) -> _Text:
    clauses = _clauses(text)
    words = _Words(w for c in clauses for w in c)
    return _Text(clauses, words, frozenset(w.key for w in words),
                 tuple(w for w in words if w.type and not _changes(w)),
                 tuple(w for w in words if w.type and w.key not in GENERIC),
                 tuple(_Words(w for w in c if not _changes(w)) for c in clauses),
                 tuple(_Words(w for w in c if w.key not in GENERIC) for c in clauses))


@lru_cache(maxsize=8192)
def _owned_up(text: str) -> bool:
    """Whether ``text`` says it corrects what was said (``OWNED_UP``): read once a text, not once a pair."""
    return bool(OWNED_UP.search(text))


@lru_cache(maxsize=8192)
def _blocked(text: str) -> bool:
    """A plan, a question or an exception (``NOT_NOW``): it tells nothing of what holds now, either side."""
    return "?" in text or bool(NOT_NOW & _said(text)) or bool(_NOT_NOW_PHRASES.search(text))


def _denies(newer: str, older: str) -> bool:
    """Whether ``newer`` is read for a denial of ``older`` (a negator only it says), not for a swapped value.
    A negated comparison is a bound, no denial: "a duty can't run longer than half a day" says at most 12 hours."""
    return bool(NEGATORS & _said(newer)) and not NEGATORS & _said(older) \
        and not _BOUND.search(_negations_spelled(newer))


# a negator and, a word or two on, a comparison: "not longer than", "no more than", "can't exceed"
_BOUND = re.compile(r"\b(?:not|no|never)\s+(?:[\w-]+\s+){0,2}?(?:(?:more|longer|less|fewer|later|earlier|higher|lower|"
                    r"bigger|larger|smaller|shorter|faster|slower|sooner)\s+than|exceed)", re.IGNORECASE)


def _told(swap: tuple[Word, Word], newer: str, new: _Side, old: _Side) -> str | None:
    """What the first clause pair with a value swapped (``new`` and ``old``: each side's clause, clauses and
    words) makes of the two texts: the swap, or None when the rest of them tells otherwise."""
    (n, new_clauses, new_all), (o, old_clauses, old_all) = new, old
    if _elsewhere(n, new_clauses, old_all) and _elsewhere(o, old_clauses, new_all):
        return None  # the other clauses differ on both sides: "never deploy *search* on Fridays; ..."
    if swap[0].type.startswith(("ident:path", "ident:command")) and not _TOLD_CHANGED & _said(newer):
        return None  # a file or a command is what a claim is about more often than its value
    if NAMES_AT_ENDS and swap[0].type == swap[1].type == "name" and (_valued_after(o, swap[0]) or _valued_after(n, swap[1])):
        return None  # a name with a value after it is what the clause is about ("the *JVM* heap ... is 4 GiB")
    if NAME_MODIFIERS and (_modifies(o, swap[0]) or _modifies(n, swap[1])):
        return None  # a name right before a word of its clause qualifies it: "the *Workday* crew feed"
    return f"{swap[0].surface} -> {swap[1].surface}"


def _modifies(clause: tuple[Word, ...], word: Word) -> bool:
    """Whether ``word``, a name, stands right before a plain word of ``clause`` (no word between): it names
    what kind of thing that word is ("the *Workday* crew feed", "a *Large-size* warehouse", "*SFTP* drop"),
    not the value the clause states."""
    if not _named(word) or word not in clause:
        return False
    after = clause[clause.index(word) + 1:]
    return bool(after) and after[0].type is None and after[0].at - _end(word) == 1


def _valued_after(clause: tuple[Word, ...], word: Word) -> bool:
    """Whether a word holding a value follows ``word`` in ``clause``."""
    return any(w.type for w in clause[clause.index(word) + 1:]) if word in clause else False


def _loosened(newer: str, older: str) -> bool:
    """Whether ``alike`` can make ``_replaced`` decide what the spelling alone did not: it is asked only
    after ``_placed`` (``_shares``), so some clause pair must hold a placed swap that ``_told`` turns into
    a decision (else every clause pair's verdict is the spelling's, None)."""
    if _blocked(newer) or _blocked(older) or _denies(newer, older):
        return False  # the denial is read by spelling alone: what the first pass decided
    return any(_told(found[2], newer, new, old) is not None
               for new, old, found in _placed_swaps(newer, older))


def _elsewhere(clause: tuple[Word, ...], clauses: tuple[tuple[Word, ...], ...], other: list[Word]) -> bool:
    """Whether a clause of the text other than ``clause``, one about what the other text says (sharing a
    word with it), names a word the other text does not."""
    return any(any(_matched(w, other) for w in c) and not all(_matched(w, other) for w in c)
               for c in clauses if c is not clause)


def _negations_spelled(text: str) -> str:
    """``text`` with its negations as words of their own: "doesn't" -> "does not", "switched off" -> "disabled"."""
    return _OFF.sub(" disabled ", text.replace("n't", " not"))


@lru_cache(maxsize=8192)
def _said(text: str) -> frozenset[str]:
    """The text's words as written, lowercased (plans and negations are told by the words themselves)."""
    return frozenset(_LETTERS.findall(_negations_spelled(text).lower()))


@lru_cache(maxsize=8192)
def _clauses(text: str) -> tuple[tuple[Word, ...], ...]:
    """The text's clauses (split at sentence ends, dashes, brackets and commas), each as its content words."""
    return tuple(clause for part in _CLAUSE.split(_negations_spelled(text)) if (clause := _words(part)))


def _words(part: str) -> tuple[Word, ...]:
    tokens = [p for t in _TOKEN.findall(part) for p in _unglued(t)]
    out: list[Word] = []
    i = 0
    while i < len(tokens):
        token, lower = tokens[i], tokens[i].lower()
        if PERIODS and lower in EVERY and i + 1 < len(tokens) and (period := _period(tokens, i + 1)):
            out.append(period._replace(at=i))
            i += len(period.surface.split())
            continue
        if (number := _number_at(tokens, i)) is not None:
            word = number[0]._replace(at=i)
            i = number[1]
            if out and _named(out[-1]) and word.type == "number":
                word = word._replace(type="version:" + out[-1].key)  # "Node 20", "pnpm 9": that tool's version
            out.append(word)
            continue
        word = _typed(token, lower, at_start=not out and i == 0)._replace(at=i)
        if _named(word) and out and _named(out[-1]) and i and tokens[i - 1] == out[-1].surface.split()[-1]:
            first = out.pop()  # "Stripe Billing", "React Query": one name
            word = _name(f"{first.surface} {token}")._replace(at=first.at)
        out.append(word)
        i += 1
    return tuple(w for w in out if w.type or w.surface.lower() not in _IGNORED or w.surface.lower() in NEGATORS)


def _unglued(token: str) -> tuple[str, ...]:
    """"30s", "25MB", "80%": a number and its unit."""
    if not (token[0] == "$" or token[0].isdigit()):
        return (token,)  # neither a digit nor "$" first: no number (``isdigit`` holds for every ``\d``)
    glued = _GLUED.match(token.lower())
    return (glued[1], glued[2]) if glued and glued[2] in UNITS else (token,)


_WHEN = frozenset(("in", "since", "until", "till", "before", "after", "by", "during"))
_YEAR = re.compile(r"(?:19|20)\d\d")


def _number_at(tokens: list[str], i: int) -> tuple[Word, int] | None:
    """The number at ``tokens[i]`` (digits or spelled out, with its unit or the noun it counts) and
    where the next word starts; None when there is no number there."""
    token, lower = tokens[i], tokens[i].lower()
    if lower in ("a", "an"):
        unit_at = _unit_at(tokens, i + 1)
        if unit_at is None or unit_at > i + 1 and _number_at(tokens, i + 1):
            return None  # "a 200 ms ping": the number is 200
        half = i > 0 and tokens[i - 1].lower() == "half"
        return _amount("0.5" if half else "1", tokens, i, unit_at), unit_at + 1
    plain = lower.replace(",", "")
    number = _SPELLED.get(lower) or (plain if (plain[0] == "$" or plain[0].isdigit()) and _NUMBER.match(plain) else None)
    if number is None:
        return None
    unit_at = _unit_at(tokens, i + 1)
    if unit_at is not None:
        return _amount(number, tokens, i, unit_at), unit_at + 1
    noun = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
    if noun.isalpha() and noun not in _IGNORED and len(noun) > 2:
        per = _per(tokens, i + 2)  # "50 requests per second" is a rate, no count of requests
        # "30 steps a second" holds no amount "a second" of its own
        after = i + 4 if per and tokens[i + 2].lower() in ("a", "an") else i + 2
        return Word(_number(number), f"{token} {tokens[i + 1]}", "count:" + stem(noun) + per), after
    if i and tokens[i - 1].lower() in _WHEN and _YEAR.fullmatch(plain):
        return Word(plain, token, "year"), i + 1  # "migrated in 2021" dates a change: no value of a setting
    return Word(_number(number), token, "number"), i + 1


def _period(tokens: list[str], i: int) -> Word | None:
    """The period after "every", "each" or "once" at ``tokens[i]``: a duration ("every two weeks", "once a
    day") or a unit of time alone ("every hour", "once per second"), else None."""
    start, i = i - 1, i + (tokens[i].lower() == "per" and i + 1 < len(tokens))
    after = tokens[i + 1] if i + 1 < len(tokens) else ""
    if _unit_at(tokens, i) == i and not (after and (after[0].isupper() or _unit_at(tokens, i + 1)
                                                    or _typed(after, after.lower(), False).type)):
        amount = _amount("1", tokens, i, i)  # "every second *Tuesday*", "every second week": an ordinal
    else:
        amount = number[0] if (number := _number_at(tokens, i)) else None
    return amount._replace(surface=" ".join(tokens[start:i] + [amount.surface])) \
        if amount and amount.type == "quantity:duration" else None


def _per(tokens: list[str], i: int) -> str:
    """"/s" when ``tokens[i:]`` say what a count is per ("per second", "a minute", "each day"), else ""."""
    if i + 1 < len(tokens) and tokens[i].lower() in ("per", "a", "an", "each", "every"):
        unit = tokens[i + 1].lower()
        return "/" + UNITS.get(unit, stem(unit))
    return ""


def _named(word: Word) -> bool:
    return bool(word.type) and word.type.startswith(("name", "tool"))


def _unit_at(tokens: list[str], i: int) -> int | None:
    """Where the unit of a number before ``i`` is: next, or after one word ("30 idle minutes")."""
    for j in (i, i + 1):
        if j < len(tokens) and tokens[j].lower() in UNITS and not (tokens[j].isupper() and len(tokens[j]) == 1):
            return j
    return None


@lru_cache(maxsize=1 << 14)  # a store's words recur
def _typed(token: str, lower: str, at_start: bool) -> Word:
    if shaped := typed(token):  # a command, an address, a time of day, a weekday: as ``settings`` reads them
        return Word(shaped[0], token, _KINDS.get(shaped[1], "ident:other"))
    if lower in FREQUENCIES:
        return Word(FREQUENCIES[lower], token, "quantity:duration" if PERIODS else "frequency")
    if VALUE_ALIASES.get(lower, lower) in TOOLS:
        return _name(token)
    if _DIGIT.search(token) or _IDENT.search(token) and len(token) > 3:
        return Word(lower, token, "ident:" + _shape(token))
    if token[0].isupper() and not at_start and (lower not in _IGNORED or SIBLINGS and len(token) == 1) \
            or len(token) > 1 and token.isupper():  # a capital letter inside a clause labels a thing: "Hospital A"
        return _name(token)
    return Word(stem(lower), token, None)


def _shape(token: str) -> str:
    """What an identifier is, by its shape: a host and a path are no rivals."""
    if token.startswith(("/", "~")) or "/" in token:
        return "path"
    if _VARIABLE.fullmatch(token):
        return "variable"
    if _DOTTED.search(token):
        return "host"
    return "other"


def _name(surface: str) -> Word:
    """A name (a known tool typed by its category: two tools of different kinds are no rivals)."""
    lower = surface.lower()
    key = VALUE_ALIASES.get(lower, lower)
    kind = "tool:" + TOOLS[key] if key in TOOLS else "name"
    return Word(key, surface, kind, frozenset(lower.split()))


def _amount(number: str, tokens: list[str], at: int, unit_at: int) -> Word:
    """The amount ``number`` of the unit at ``tokens[unit_at]``, keyed by its value in its quantity's
    smallest unit (``settings.quantity``: "2 min" and "120 s" are one key) and typed by its quantity."""
    measure, value = quantity((_number(number), UNITS[tokens[unit_at].lower()]))
    key = f"{value:g}" if isinstance(value, float) else value
    return Word(key, " ".join(tokens[at:unit_at + 1]), "quantity:" + measure)


def _number(text: str) -> str:
    """A number as digits: "$40k" is "40000" (its caller has dropped thousands separators already)."""
    match = _NUMBER.match(text)
    if not match:
        return text
    digits = match[1]
    return f"{float(digits) * 1000:g}" if match[2] and _DECIMAL.fullmatch(digits) else digits


def _same(a: Word, b: Word) -> bool:
    """Two amounts of one quantity within 5 % ("1 MB" and "1024 KB"; ``_matched`` compares keys and names)."""
    x, y = float(a.key), float(b.key)
    return a.type == b.type and abs(x - y) <= 0.05 * max(abs(x), abs(y))


def _comparable(a: Word, b: Word, old_keys: set[str], new_keys: set[str]) -> bool:
    """Two values one setting may take: the same type; a count of a thing both name and a plain number; a
    version and a plain number; a name and a tool; two counts of one noun (a typo aside)."""
    ta, tb = a.type or "", b.type or ""
    if ta == tb:
        return True
    kinds = {ta.split(":")[0], tb.split(":")[0]}
    if kinds == {"name", "tool"}:  # a tool spelled in lower case beside a name is a word ("releases *go* out")
        return not CASED_TOOLS or all(w.surface[:1].isupper() or not w.surface.isalpha() for w in (a, b))
    if kinds <= {"count", "number", "version"} and "number" in kinds:
        typed = ta if ta != "number" else tb
        noun = typed.split(":", 1)[1]
        return any(_akin(noun, k) for k in old_keys) and any(_akin(noun, k) for k in new_keys)
    if ta.startswith("count:") and tb.startswith("count:"):
        (noun_a, _, per_a), (noun_b, _, per_b) = ta[6:].partition("/"), tb[6:].partition("/")
        return per_a == per_b and _akin(noun_a, noun_b)
    return False


def _akin(a: str, b: str) -> bool:
    """One word, by stem or a long common start ("partitions", "partitons"; "minsdk", "minsdkversion")."""
    return a == b or len(a) >= 5 and len(b) >= 5 and a[:5] == b[:5]


class _Lookup(NamedTuple):
    """A word list as sets, so that matching a word is a few set lookups (intake asks it of every
    close neighbour): ``_akin`` is a key or its 5-letter start, ``_same`` a key, a part, or an amount."""

    keys: frozenset[str]
    starts: frozenset[str]
    parts: frozenset[str]
    amounts: tuple[Word, ...]


@lru_cache(maxsize=4096)
def _lookup(words: tuple[Word, ...]) -> _Lookup:
    keys = frozenset(w.key for w in words)
    starts = frozenset(w.key[:5] for w in words if not w.type and len(w.key) >= 5)  # a value is itself or nothing
    return _Lookup(keys, starts, frozenset(p for w in words for p in w.parts),
                   tuple(w for w in words if w.type and w.type.startswith("quantity")))


def _matched(word: Word, others: "list[Word] | tuple[Word, ...]") -> bool:
    """Whether ``others`` name ``word``: ``_akin`` or ``_same`` to one of them."""
    look = others.look if type(others) is _Words else _lookup(tuple(others))
    key = word.key
    if key in look.keys or not word.type and len(key) >= 5 and key[:5] in look.starts or key in look.parts \
            or word.parts & look.keys:
        return True
    return any(_same(word, o) for o in look.amounts) if word.type and word.type.startswith("quantity") else False


def _shares(new_left: list[Word], old_left: list[Word], swap: tuple[Word, Word], alike: Alike | None,
            owned_up: bool, newer: str) -> bool:
    """Whether two clauses holding ``swap`` (a value of the older's swapped for another of its type, placed
    as ``_placed`` wants: ``_placed_swaps``) are about one thing: the newer names a third of the older's
    words or more; apart from the words around the two values (the predicate told otherwise: "keeps" and
    "holds"), not both have words of their own (a qualifier, "the *orders* table" and "the *users*
    table"), nor does the older name a value the newer leaves out (``owned_up``: the newer may name one of
    its words), nor do they say one thing of two siblings (``_siblings``). A swapped version's tool counts
    twice."""

    def told(w: Word, other: list[Word], older_side: bool) -> bool:
        """The other side names ``w``, or says what it says in a word of its own (each other's best match)."""
        return _matched(w, other) or alike is not None and not w.type and any(
            not o.type and not _two_names(w, o)
            and (alike(w.surface, o.surface) if older_side else alike(o.surface, w.surface)) for o in other)

    # the tool whose version is swapped is what the claim is about: "Node 18" and "node 20 now"
    tool = {t.split(":", 1)[1] for t in (swap[0].type, swap[1].type) if t.startswith("version:")}
    shared = sum(1 + (w.key in tool) for w in old_left if (not w.type or w.key in tool) and told(w, new_left, True))
    plain = sum(1 + (w.key in tool) for w in old_left if not w.type or w.key in tool)
    if shared < min(1 if owned_up else 2, plain) or 3 * shared < plain:
        return False
    old_own = _own(old_left, swap[0], lambda w: told(w, new_left, True))
    new_own = _own(new_left, swap[1], lambda w: told(w, old_left, False))
    if old_own and new_own or any(w.type for w in old_own) and not owned_up:
        return False
    return not (SIBLINGS and not owned_up and _siblings(swap, old_left, new_left, new_own, newer))


def _two_names(a: Word, b: Word) -> bool:
    """Whether ``a`` and ``b`` are both names of parts, which only their spelling tells alike (``NAMES_SPELLED``)."""
    return NAMES_SPELLED and bool(_JOINED.search(a.surface)) and bool(_JOINED.search(b.surface))


def _free(new: _Text, old: _Text) -> tuple[set[int], set[int]]:
    """The values (by ``id``) each text names that the other does not: the ends a swap may have, the newer's
    without its change words ("now", "bumped") and the older's without the generic ones ("version")."""
    new_free = {id(w) for w in new.new_values if not _matched(w, old.all)}
    old_free = {id(w) for w in old.old_values if not _matched(w, new.all)}
    return new_free, old_free


def _candidate(new_left: _Words, old_left: _Words, free: tuple[set[int], set[int]],
               keys: tuple[frozenset[str], frozenset[str]]) -> _Found | None:
    """``(new words left, old words left, (old value, new value))``: the first value of the older clause's
    words left (``old_left``: without the generic words) the newer does not name with one of the newer
    clause's (``new_left``: without the change words), of a type one setting may take, that the older does
    not name (``free``: ``_free``; ``keys``: the older's and the newer's word keys). None without such a pair."""
    (new_free, old_free), (old_keys, new_keys) = free, keys
    swap = next(((o, n) for o in old_left if id(o) in old_free
                 for n in new_left if id(n) in new_free and _comparable(o, n, old_keys, new_keys)), None)
    return None if swap is None else (new_left, old_left, swap)


def _placed(new_left: list[Word], old_left: list[Word], swap: tuple[Word, Word], owned_up: bool) -> bool:
    """Where the words stand, whatever tells them: neither side puts a word of its own before all they
    share (but a swapped name), and no swapped value labels the subject right after its first word."""
    # a qualifier before all they share is spelled out: its counterpart by meaning is often a sibling
    # ("*frontend* runs on port 3000" / "*backend* runs on port 8000", token states .76)
    for side, other in ((new_left, old_left),) if owned_up else ((new_left, old_left), (old_left, new_left)):
        for w in side:
            if _matched(w, other):
                break
            if w not in (swap[0], swap[1]) or not _named(w):
                return False  # a number or identifier before all they share is the subject
    for side, value in ((old_left, swap[0]), (new_left, swap[1])):
        at = side.index(value)
        if at == 1 and not _named(value) and side[1].at - _end(side[0]) == 1:
            return False  # a number right after the first word labels what the claim is about: "writer *0* wrote"
    return True


def _siblings(swap: tuple[Word, Word], old: list[Word], new: list[Word], new_own: list[Word], newer: str) -> bool:
    """Whether the two say one thing of two siblings: a second value swapped, neither a version (the subject
    changed with the value: "Customer *Initech* has a 99.95% SLA" / "Customer *Umbrella* ... 99.9%"; a tool
    and its version change together); a name of several words the older names in part ("the Android *TV*
    app"); a word of the newer's own written between two the older says side by side ("the payments
    *sandbox* API"); past the word right after the values, a word on each side the other does not spell ("8
    workers in *production*" / "2 workers in *staging*": token states find them alike, as they do a
    qualifier before all both share)."""
    keys = {w.key for w in old}, {w.key for w in new}
    parts = keys[0] | {p for w in old for p in w.parts}
    text = " ".join(newer.lower().split())

    def after(side: list[Word], value: Word, other: list[Word]) -> bool:
        return any(not _matched(w, other) and w.at - _end(value) > 1 for w in side[side.index(value) + 1:])

    return not any(w.type.startswith("version:") for w in swap) and any(
        o.type and n.type and not o.type.startswith("version:") and not n.type.startswith("version:")
        and o.key not in keys[1] and n.key not in keys[0] and _comparable(o, n, *keys)
        for o in old if o is not swap[0] for n in new if n is not swap[1]) \
        or any(len(w.parts) > 1 and w.key not in parts and w.parts & parts for w in new) \
        or any(w in new_own and w.key not in GENERIC and len(w.key) > 1 and a not in new_own and b not in new_own
               and f"{a.surface} {w.surface} {b.surface}".lower() in text
               and any(_matched(a, (x,)) and _matched(b, (y,)) for x, y in zip(old, old[1:]))
               for a, w, b in zip(new, new[1:], new[2:])) \
        or after(old, swap[0], new) and after(new, swap[1], old)


def _own(side: list[Word], value: Word, told: Callable[[Word], bool]) -> list[Word]:
    """Words of ``side`` the other does not name, beyond the predicate before ``value`` (a verb precedes
    its object, a preposition or two between: "*keeps* two weeks", "*expire* after 30 minutes", "are
    *good* for 2 hours") and a word right after it; not "RabbitMQ for the *auth* service", whose own
    word after the value names another thing."""
    unmatched = [not told(w) for w in side]
    at = side.index(value)
    lo = hi = at
    while lo > 0 and unmatched[lo - 1] and side[lo].at - _end(side[lo - 1]) <= 3:
        lo -= 1
    while hi + 1 < len(side) and unmatched[hi + 1] and side[hi + 1].at - _end(side[hi]) <= 1:
        hi += 1
    return [w for i, w in enumerate(side) if unmatched[i] and not lo <= i <= hi]


def _end(word: Word) -> int:
    return word.at + len(word.surface.split()) - 1


def _denied(clause: tuple[Word, ...], old: list[Word]) -> bool:
    """The clause negates the older's claim: it says a negator, names two of the older's words (or one value)
    and little else, and no word of the older is swapped for another, i.e. the two do not both have words of
    their own on one side of what they share ("*production* has no debug logging" denies no "*staging* has
    debug logging", nor "Redis is not used for *sessions*" "Redis is used for *caching*"; "bank transfer is
    no longer offered at checkout" does deny "customers can pay by bank transfer")."""
    if NEGATORS.isdisjoint(w.surface.lower() for w in clause):
        return False
    rest = [w for w in clause if w.surface.lower() not in NEGATORS and w.surface.lower() not in _CHANGE_WORDS]
    shared = [w for w in rest if _matched(w, old)]
    if len(shared) < 2 and not any(w.type for w in shared) or 2 * len(shared) < len(rest):
        return False
    return not (_sides(rest, old) & _sides(old, rest))


def _sides(side: "list[Word] | tuple[Word, ...]", other: "list[Word] | tuple[Word, ...]") -> set[str]:
    """Where ``side``'s own words sit against the words it shares with ``other``: before, inside, after."""
    shared = [i for i, w in enumerate(side) if _matched(w, other)]
    if not shared:
        return set()
    return {"before" if i < shared[0] else "after" if i > shared[-1] else "inside"
            for i, w in enumerate(side) if i not in shared}
