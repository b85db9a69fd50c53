"""Settings a text states: typed values (``Setting``, below) with the words that say what each sets.

``_settings`` finds each setting of a text with the content words of its sentence before it (the last
``QUANTITY_WINDOW`` are its slot); :func:`quantity` makes two of them one type and one value ("1 min" and
"60 s"). Above them, the words both readers of a change build on (``corrections``: a change's values, slot
and settings; ``aligned``: a word typed as a value): lowercase words, folded forms, numbers spelled out
read as digits. Stdlib only, pure, cached.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from decimal import Decimal
from functools import lru_cache

from mem.enrich.lexicon import (CHANGE_VERBS, FUNCTION_WORDS, IRREGULAR_PAST, NUMBER_WORDS, QUANTITY_HEADS, QUANTITY_OF,
                                TOKEN_SYNONYMS, TOOLS, UNITS)
from mem.text import stem as _stem

__all__ = ["Setting", "quantity", "typed", "words"]

# Whether ``_numerals`` looks for a number spelled out only in a text holding a number word (the same
# text either way: tests/test_prefilter_identity.py runs both over the bench data)
PREFILTER = True

_WORD = re.compile(r"[a-z0-9][a-z0-9_./*+#@-]*[a-z0-9+#*]|[a-z0-9]")
_NUMBER = re.compile(r"^\d+(?:[.,]\d+)?$")
# "30 seconds", "30s", "a 30-minute window"; a unit ends its word ("6 m6i.xlarge nodes" are 6 of something, not 6 m)
_NUM_UNIT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:-(?=[a-z])|\s*)([a-z%]+(?:/[a-z]+)?(?!\w))?")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_SCIENTIFIC = re.compile(r"(?<![\w.])\d+(?:\.\d+)?[eE][-+]?\d{1,3}(?![\w.])")  # "3e-4", "2.5e3"
# a unit's count in words: "ten minutes", "one week each", "half an hour"
_COUNT_WORDS = {**NUMBER_WORDS, "one": "1", "half a": "0.5", "half an": "0.5"}
_SPELLED = re.compile(rf"\b({'|'.join(_COUNT_WORDS)})(?=[\s-]+(?:{'|'.join(sorted(UNITS, key=len, reverse=True))})\b)",
                      re.IGNORECASE)
# durations spelled as a phrase, read as a count of a unit ("a fortnight" is 2 weeks)
_PHRASED = {"a fortnight": "2 weeks", "one fortnight": "2 weeks", "two fortnights": "4 weeks",
            "a quarter of an hour": "15 minutes", "quarter of an hour": "15 minutes",
            "three quarters of an hour": "45 minutes", "an hour and a half": "90 minutes"}
_PHRASE = re.compile(rf"\b({'|'.join(sorted(_PHRASED, key=len, reverse=True))})\b", re.IGNORECASE)
# what ``_SPELLED`` and ``_PHRASE`` start at, a whole word
_COUNT_FIRST = frozenset(re.match(r"\w+", w)[0] for w in (*_COUNT_WORDS, *_PHRASED))
_DEGREES = re.compile(r"\s*°\s*C\b")  # "2 °C" is 2 degc, one unit as "2 V" is
_RUNS = re.compile(r"\w+")  # a text's whole words, as the change shapes' word boundaries see them


@lru_cache(maxsize=8192)  # each text's, by every reader of it (its settings, facts, reading; a pair's own words)
def _numerals(text: str) -> str:
    """Numbers as digits: thousands separators dropped ("£2,500" is 2500, not 2 and 500) and a number
    spelled out before a unit read as one ("ten minutes" is 10 minutes, "half an hour" 0.5 hour).

    >>> _numerals("limit £2,500 a day, tokens last ten minutes, one topic each, half an hour at 2 °C")
    'limit £2500 a day, tokens last 10 minutes, one topic each, 0.5 hour at 2 degc'
    >>> _numerals("keeps a fortnight of events; the token is good for a quarter of an hour")
    'keeps 2 weeks of events; the token is good for 15 minutes'
    >>> _numerals("lr = 3e-4, then 1E-5; 2.5e3 rows")
    'lr = 0.0003, then 0.00001; 2500 rows'
    """
    text = _DEGREES.sub(" degc", _THOUSANDS.sub("", text))
    text = _SCIENTIFIC.sub(lambda m: format(Decimal(m[0]), "f"), text)  # "3e-4" is a number: 0.0003
    if PREFILTER and text.isascii() and _COUNT_FIRST.isdisjoint(_RUNS.findall(text.lower())):
        return text  # no number word at all (a word of another script may match one without its case)
    text = _PHRASE.sub(lambda m: _PHRASED[" ".join(m[1].lower().split())], text)
    return _SPELLED.sub(lambda m: _COUNT_WORDS[" ".join(m[1].lower().split())], text)


def _inflections(verb: str) -> set[str]:
    """``verb``'s forms: "move" -> moves, moved, moving; "drop" -> dropped, dropping; "cut" -> cutting."""
    root = verb[:-1] if verb.endswith("e") else verb
    return {verb, verb + "s", verb + "es", verb + "d", root + "ed", root + "ing", verb + verb[-1] + "ed",
            verb + verb[-1] + "ing"}


def words(text: str) -> list[str]:
    """Lowercase word tokens (paths, dotted names and hyphenated words kept whole)."""
    return _WORD.findall(text.lower())


ABBREVIATIONS = True


def spellings(word: str) -> set[str]:
    """``word`` (as ``_fold`` leaves it) and the abbreviations that fold to it, the ways a text may write it
    ("production": "prod"): what a full-text lookup by the word must ask for."""
    return {word, *(short for short, full in TOKEN_SYNONYMS.items() if ABBREVIATIONS and _fold(full) == word)}


@lru_cache(maxsize=1 << 16)  # a store's words recur
def _fold(token: str) -> str:
    """``token`` stemmed, irregular past forms and abbreviations folded ("prod" is "production", "repo" is
    "repository": ``lexicon.TOKEN_SYNONYMS``, ``ABBREVIATIONS``), and the consonant an inflection doubled undone:
    "capped" and "cap", "planning" and "plan" are one word ("ll", "ss", "zz" stay: "installed")."""
    word = _stem(IRREGULAR_PAST.get(token, TOKEN_SYNONYMS.get(token, token) if ABBREVIATIONS else token))
    if word != token and len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeioulsz":
        return word[:-1]
    return word


def _content_words(tokens: list[str]) -> list[str]:
    return [_fold(t) for t in tokens if t not in FUNCTION_WORDS and not _NUMBER.match(t) and len(t) > 1]


def _content(tokens: list[str]) -> frozenset[str]:
    return frozenset(_content_words(tokens))


# Every verb of change, as the stems its inflections fold to: they name the change, never the slot.
_CHANGE_STEMS = frozenset(_fold(form) for verb in CHANGE_VERBS for form in _inflections(verb.split()[0]))


def _number(value: "float | str") -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


QUANTITY_WINDOW = 4  # content words of its sentence before a value that name what it sets ("the rate limit is 600")
# A setting is a typed value: ``(number, unit)`` ("30 seconds", "30s" and "30 sec" are ``(30.0, "s")``),
# ``(command, "`")`` for a command in backticks (what a how-to says to run), ``(address, "url")``, a time
# of day ``("03:00", "clock")``, a day of the week or a run of days ``("monday-thursday", "day")`` (a rota or a
# cadence: "Kwame Monday to Wednesday" -> "Kwame Monday to Thursday") and, in a text that reads as a change, a version of a named tool
# ``("1.9", "v kotlin")`` (several versions are often all true: "3.12 is supported as well") and
# ``(number, "#")`` for a number with no unit ("line length is now 120").
Setting = tuple["float | str", str]
COMMAND, URL, PLAIN, CLOCK, DAY, CHANNEL, NAME = "`", "url", "#", "clock", "day", "channel", "name"
INSTANCE = "instance"
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
# What a value of each type looks like (matched on lowercased text), and how one is written down.
_VALUE_SHAPES = {
    COMMAND: (r"`([^`\n]{1,80})`", lambda v: " ".join(v.split())),
    # an address of any scheme: a web page, a bucket ("s3://verdant-lake/features"), a database
    URL: (r"\b([a-z][a-z0-9+.-]*://[^\s<>()`'\"]+[\w/])", lambda v: v.rstrip("/")),
    CHANNEL: (r"(?<![\w&#/])(#[a-z][\w-]*[a-z0-9])", str),  # a chat channel: "#cobalt-help"
    CLOCK: (r"(?<![\w:.])((?:[01]?\d|2[0-3]):[0-5]\d)(?![\w:])", lambda v: f"{int(v.split(':')[0]):02d}:{v.split(':')[1]}"),
    DAY: (rf"\b((?i:{_WEEKDAY}(?:s?\s*(?:-|to|through)\s*{_WEEKDAY})?))s?\b", lambda v: "-".join(re.findall(_WEEKDAY, v))),
    # a hyphenated name whose last word ends in a number ("europe-west4", "us-central1"): one of a series,
    # whose other members share its letters (the type is the name with its numbers blanked:
    # "europe-west#"); a number on its own after a hyphen counts items ("BB-231", "dunning-2", "SHA-256")
    NAME: (r"(?<![\w./-])([a-z][a-z0-9]*(?:-[a-z0-9]+)*-[a-z]+\d+)(?![\w/-])", str),
    # a machine size: a family with its generation, then a size ("m5.large", "db.r6g.2xlarge", "cache.r7g.xlarge");
    # one of a series, whose type is what it is a size of (the service before the family: "db", "cache")
    INSTANCE: (r"(?<![\w./-])((?:[a-z]+\.)?[a-z]{1,3}\d+[a-z]*\.\d*(?:nano|micro|small|medium|large|xlarge|metal))"
               r"(?![\w/-])", str),
}
_TYPED = re.compile("|".join(f"(?P<{'code' if kind == COMMAND else kind}>{shape})" for kind, (shape, _) in _VALUE_SHAPES.items()))
# each shape of ``_TYPED`` on its own, in its order, with what every match of it holds (in the lowercased
# text): ``_typed_in`` scans with them, and not at all for a shape whose mark the text lacks
_MARKS = {COMMAND: "`", URL: "://", CHANNEL: "#", CLOCK: ":", DAY: "day", NAME: "-", INSTANCE: "."}
_TYPED_EACH = tuple((re.compile(f"(?P<{'code' if kind == COMMAND else kind}>{shape})"), _MARKS[kind])
                    for kind, (shape, _) in _VALUE_SHAPES.items())


def _typed_in(text: str) -> list[re.Match[str]]:
    """The matches ``_TYPED.finditer(text)`` gives, found shape by shape: at each position the alternation
    takes its first shape that matches there, and each shape's own search finds the first position it
    matches at, so the leftmost of the shapes' next matches (the earlier shape on a tie) is the
    alternation's next one. A third of the time of the alternation's scan, which tries every shape at
    every position (no shape matches an empty string, so a scan goes on at a match's end)."""
    lowered = text.lower()
    shapes = [shape for shape, mark in _TYPED_EACH if mark in lowered]
    found = [shape.search(text) for shape in shapes]
    out: list[re.Match[str]] = []
    at = 0
    while True:
        best = None
        for i, match in enumerate(found):
            if match is not None and match.start() < at:
                match = found[i] = shapes[i].search(text, at)
            if match is not None and (best is None or match.start() < best.start()):
                best = match
        if best is None:
            return out
        out.append(best)
        at = best.end()


def _blanked(text: str, matches: list[re.Match[str]]) -> str:
    """``text`` with each of ``matches`` (in order, not overlapping) blanked: ``_TYPED.sub`` by spaces."""
    if not matches:
        return text
    parts, at = [], 0
    for match in matches:
        parts += [text[at:match.start()], " " * (match.end() - match.start())]
        at = match.end()
    parts.append(text[at:])
    return "".join(parts)


def _shaped(match: re.Match[str]) -> Setting:
    """A value ``_TYPED`` matched, written down, and its kind."""
    kind = COMMAND if match.lastgroup == "code" else match.lastgroup
    return _VALUE_SHAPES[kind][1](match[match.lastindex + 1]), kind


def typed(token: str) -> Setting | None:
    """``(value, kind)`` when the whole token is a value of one of ``_VALUE_SHAPES`` (what ``aligned`` types
    a word by too), else None.

    >>> typed("9:30"), typed("Mondays"), typed("`make  test`"), typed("port")
    (('09:30', 'clock'), ('monday', 'day'), ('make test', '`'), None)
    """
    match = _TYPED.fullmatch(token.lower())
    return _shaped(match) if match else None
# The word right before a number with no unit: a version when it names a tool ("Kotlin 2.0", "Node 20")
# or is capitalised inside a sentence ("on Spring Boot 3.2").
_NAME_BEFORE = re.compile(r"([a-z][\w+#-]*)\s+$")
# A number with no unit of its own that opens a range ("from 60 to 120 seconds"): the unit and the
# words before it are the range's.
_RANGE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s*(?:-|to|or|and)\s*(?=\d+(?:\.\d+)?\s*[a-z%]+(?:/[a-z]+)?(?!\w))")
_NAMED_NUMBER = re.compile(r"[a-z]-$")  # what ends right before a number that closes a name
_MULTIPLES = {"k": 1e3, "bn": 1e9}  # a count's multiple glued to it ("50k"; "5m" is 5 m, a length)
_COUNTED_AFTER = re.compile(r"\s+([a-z]+(?:/[a-z]+)?)(?!\w)")
_SIGNED = re.compile(r"(?:^|[\s(])[-−]$")  # a minus sign right before a number
_SENTENCE_END = re.compile(r"[.;!?](?:\s|$)|\n")
# A bound and the plural noun it counts ("max connections", "maximum number of retries"): not "count" or
# "default", whose next word may be a verb ("the retry count defaults to 3").
# A year told as when ("in 2026", "since 2024"), not a setting.
_YEAR = re.compile(r"\b(?:in|since|until|during|before|after|of)\s+(?:19|20)\d\d$")
_COUNTED = re.compile(r"\b(?:max|maximum|min|minimum)\s+(?:number\s+of\s+)?(?P<noun>[a-z]{3,}s)\b")


@lru_cache(maxsize=4096)
def _settings(text: str, plain: bool = False) -> dict[Setting, tuple[str, ...]]:
    return {setting: before for setting, (before, _) in _placed(text, plain).items()}


@lru_cache(maxsize=4096)
def _placed(text: str, plain: bool = False) -> dict[Setting, tuple[tuple[str, ...], int]]:
    """Each setting the text states -> the content words of its sentence before it, in order (the
    last ``QUANTITY_WINDOW`` are its slot); words of change and of quantity ("size", "maximum") left
    out. Both ends of "from 60 to 120 seconds" are seconds, with the words before the range.
    ``plain``: numbers without a unit too.

    >>> _placed("Raised the MQTT keepalive from 60 to 120 seconds.")[(60.0, 's')]
    (('mqtt', 'keepalive', ''), 31)
    >>> _settings("Done. API tests are now `just test`; the export runs at 3:00 on Kotlin 2.0.", plain=True)
    {('just test', '`'): ('api', 'test', ''), ('03:00', 'clock'): ('export', ''), ('2.0', 'v kotlin'): ('export', '', 'kotlin')}
    """
    text = _numerals(text)
    lowered = text.lower()
    values = _typed_in(lowered)
    blanked = _blanked(lowered, values)  # numbers inside code or addresses are not settings
    out: dict[Setting, tuple[tuple[str, ...], int]] = {}

    def put(key: Setting, start: int) -> None:
        sentence = _item_of(blanked, _sentence_of(blanked, start), start)
        before = text[sentence:start]
        out.setdefault(key, (_phrase(_CASED_WORD.findall(_blanked(before, _typed_in(before)))), start))

    for match in values:
        value, kind = _shaped(match)
        put((value, _series(value, kind)), match.start())
    opened: list[tuple[float, int]] = []  # range starts waiting for the unit of the range's last number
    for match in _NUM_UNIT.finditer(blanked):
        number, unit = match.groups()
        signed = bool(_SIGNED.search(blanked, 0, match.start()))
        if _NAMED_NUMBER.search(blanked, 0, match.start()) or signed and unit not in UNITS:
            continue  # a number closing a name ("FP-3 prototypes", "SHA-256 digests") is part of the name; a
            # signed one is an amount below zero ("-70 °C"), never a count ("the -80 freezers" is a label)
        number = f"-{number}" if signed else number
        if unit in _MULTIPLES and blanked[match.end(1):match.end(1) + 1].isalpha():  # "50k msgs/s", "9.5k credits"
            number, unit = f"{float(number) * _MULTIPLES[unit]:g}", _COUNTED_AFTER.match(blanked, match.end())
            unit = unit[1] if unit else None
        if unit not in UNITS and blanked[match.end(1):match.end(1) + 1] == "-":
            unit = None  # "a 30-minute window" is 30 min, "1234-abcd" no count of abcds
        if not unit or unit in FUNCTION_WORDS:
            # a bare number counts what its sentence's quantity head names: "max waypoints ... bumped to 50"
            # is 50 waypoints, as "accepts at most 25 waypoints" is 25
            counted = _COUNTED.search(blanked, _sentence_of(blanked, match.start()), match.start())
            unit = counted["noun"] if counted else unit
        if not unit or unit in FUNCTION_WORDS or unit not in UNITS and not (len(unit) > 3 and unit.endswith("s")):
            # a unit is a known one or a counted plural ("40 connections"); "tenant 3 expire" has none
            name = _NAME_BEFORE.search(blanked, max(0, match.start() - 40), match.start())
            if plain and name and (name[1] in TOOLS or "." in number and text[name.start(1)].isupper()
                                   and not _sentence_start(blanked, name.start(1))):
                put((number, f"v {name[1]}"), match.start())
            elif _RANGE.match(blanked, match.start()):
                opened.append((float(number), match.start()))
            elif plain and blanked[match.start() - 1:match.start()] not in ("#", ":", "-") \
                    and not _YEAR.search(blanked, 0, match.end(1)):  # "in 2026 we ran X" dates what it tells
                put((float(number), PLAIN), match.start())
            continue
        for value in (*(n for n, _ in opened), float(number)):
            put((value, UNITS.get(unit, _stem(unit))), opened[0][1] if opened else match.start())
        opened = []
    return out


_CASED_WORD = re.compile(_WORD.pattern, re.IGNORECASE)


def _phrase(tokens: list[str]) -> tuple[str, ...]:
    """Content words, in order, with "" where a function word, a number or a verb of change breaks the
    phrase; words of quantity ("maximum", "size") left out: "the API's maximum pool size is" ->
    ("api", "pool", "")."""
    out: list[str] = []
    for cased in tokens:
        token = cased.lower()
        word = [token] if len(cased) > 1 and cased.isupper() else _content_words([token])  # "US", "EU": names
        if word and word[0] not in QUANTITY_HEADS and word[0] not in _CHANGE_STEMS:
            out.append(word[0])
        elif (not word and (token in FUNCTION_WORDS or _NUMBER.match(token)) or word and word[0] in _CHANGE_STEMS) \
                and out and out[-1]:
            out.append("")
    return tuple(out)


def _slot(before: tuple[str, ...]) -> set[str]:
    """The last ``QUANTITY_WINDOW`` content words before a setting: what it sets."""
    return set([w for w in before if w][-QUANTITY_WINDOW:])


def _sentences(text: str) -> Iterator[str]:
    """``text`` cut after each sentence end, the ends kept: the pieces join back into ``text``."""
    start = 0
    for match in _SENTENCE_END.finditer(text):
        yield text[start:match.end()]
        start = match.end()
    yield text[start:]


def _sentence_of(text: str, at: int) -> int:
    """Where the sentence holding position ``at`` of ``text`` begins."""
    return max((m.end() for m in _SENTENCE_END.finditer(text, 0, at)), default=0)


# A sentence listing news ("Sync notes: A, B, C, and D") tells each item on its own: a value's slot is read in
# its item, not in the items before it. A list is ``LIST_ITEMS`` clauses or more between commas; 0: never.
LIST_ITEMS = 3
_ITEM_BREAK = re.compile(r",\s+(?:and\s+)?")


def _series(value: str, kind: str) -> str:
    """A typed value's type: one of a series is typed by what its members share ("europe-west4": "name
    europe-west#"; "db.r6g.2xlarge": "instance db", the service it sizes); any other by its kind."""
    if kind == NAME:
        return "name " + re.sub(r"\d+", "#", value)
    if kind == INSTANCE:
        return " ".join((INSTANCE, *value.split(".")[:-2]))
    return kind


def _item_of(text: str, sentence: int, at: int) -> int:
    """Where the item of a list holding position ``at`` begins (``LIST_ITEMS``), else ``sentence``, where its
    sentence begins."""
    if not LIST_ITEMS:
        return sentence
    end = _SENTENCE_END.search(text, at)
    stop = end.start() if end else len(text)
    cuts = list(_ITEM_BREAK.finditer(text, sentence, stop))
    starts, ends = [sentence, *(m.end() for m in cuts)], [*(m.start() for m in cuts), stop]
    # each piece a clause of its own, three words at least: "weekly, every Tuesday, now that ..." is no list
    if len(starts) < LIST_ITEMS or any(len(text[a:b].split()) < 3 for a, b in zip(starts, ends)):
        return sentence
    return max(b for b in starts if b <= at)


def _sentence_start(text: str, at: int) -> bool:
    return not text[:at].strip() or text[:at].rstrip()[-1] in ".;:!?\n"


def _rival(a: Setting, b: Setting, elided: bool) -> bool:
    """Another value of one type: one kind, or numbers of one quantity ("400 days" and "13 months" are both
    durations); with ``elided`` (a change), a number with no unit is also one of any unit, the unit left
    out as people do once it is known ("the core banking timeout got bumped to 12" after "... is 8
    seconds", "sampling is 0.05 now" after "keeps 20%"). Two commands of one program are two of its uses
    (`just test`, `just e2e local`), not a change."""
    (kind_a, value_a), (kind_b, value_b) = quantity(a), quantity(b)
    if value_a == value_b or a[1] == b[1] == COMMAND and str(a[0]).split()[0] == str(b[0]).split()[0]:
        return False
    # a version is a number too ("to 1.19" after "Flink 1.18"); a command of digits is not
    return kind_a == kind_b or elided and PLAIN in (a[1], b[1]) and all(
        isinstance(v, float) or k.startswith("v ") for v, k in (a, b))


@lru_cache(maxsize=4096)
def quantity(setting: Setting) -> Setting:
    """``(quantity, value in its smallest unit)`` for a number of a known unit ("1 min" is ``("duration",
    60.0)``, as "60 s" is), else ``(kind, value)``: what makes two settings one type, and one value."""
    value, kind = setting
    quantity, size = QUANTITY_OF.get(kind, (kind, 1.0))
    number = _number(value)
    return (quantity, value if number is None else round(number * size, 6))


def _show(setting: Setting) -> str:
    value, kind = setting
    if kind == COMMAND:
        return f"`{value}`"
    if kind.startswith("v "):  # a version of a named tool
        return f"{kind[2:]} {value}"
    if isinstance(value, str):  # an address, a channel, a time, a day
        return value
    return f"{value:g}" if kind == PLAIN else f"{value:g} {kind}"


_PARTS = re.compile(r"[-./_]+")


def _parts_of(tokens: Iterable[str]) -> list[str]:
    """Each token's parts, in order ("per-organization", "celery/rabbitmq": the words a compound is made of)."""
    return [p for t in tokens for p in _PARTS.split(t) if p]
