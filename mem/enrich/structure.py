"""Structure type of a memory (the seed's four): what shape of knowledge it holds, so search can lay
hits out by it (``mem search --organize``).

* ``ledger``: values of settings or things: numbers with a unit, ``key = value``, ports, versions,
  prices, limits ("The payments timeout is 45 seconds", "MAX_RETRIES = 5");
* ``timeline``: something that happened at a time: a date or time it names, or an event date
  intake parsed ("On 3 May we rolled back the release");
* ``taxonomy``: what something is or consists of: kinds, parts, members ("Harborline has three
  services: ingest, gateway and web", "Redis is a key-value store");
* ``narrative``: everything else: reasons, stories, procedures told in prose.

The order above is the precedence: a dated value change is a ledger entry first (the table of
values is what a question about a setting wants). Stdlib only and pure.

>>> structure_of("The payments timeout was raised from 30 to 45 seconds.")
'ledger'
>>> structure_of("On 3 May we rolled back the release after the checkout outage.")
'timeline'
>>> structure_of("The monorepo consists of api/, worker/ and web/.")
'taxonomy'
>>> structure_of("We chose EMQX because it clusters and Mosquitto would need a bridge.")
'narrative'
"""

from __future__ import annotations

import re

from mem.enrich.classify import ODD_CASES

STRUCTURES = ("timeline", "ledger", "taxonomy", "narrative")

_UNIT = (r"ms|milliseconds?|s|secs?|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?|"
         r"kb|mb|gb|tb|k|%|percent|requests?|rps|qps|req/s|connections|workers|replicas|retries|attempts|"
         r"cores?|vcpus?|nodes|brokers|items|rows|pings|chars|characters|lines|px|m|km|km/h|usd|eur|gbp")
# The ledger's shapes, searched one by one: one alternation of them all costs about twice their sum
# (sre tries every alternative at every word boundary), and a shape that needs a character the text
# lacks ("=", ":", a digit) is not searched at all. A text is a ledger entry when any shape matches.
_KEY_VALUE = re.compile(r"\b[A-Za-z_][\w.-]*\s*(?:=|:=)\s*\S", re.IGNORECASE)  # KEY = value (needs "=")
_HOST_PORT = re.compile(r"\b(?:localhost|[\w-]+(?:\.[\w-]+)+):\d{2,5}\b", re.IGNORECASE)  # localhost:5173 (":")
_DIGIT = re.compile(r"\d")  # every shape below needs one (as each spells it: \d, any script's digits)
# A shape that starts with a digit after a word boundary is written ``\d(?<!\w\d)``: the same
# texts match (the boundary before a digit is a non-word character or the text's start before it),
# but a pattern that opens with a character class lets sre jump from digit to digit instead of
# trying the whole pattern at every position (~3x less work for these searches).
_NUMERIC = tuple(re.compile(shape, re.IGNORECASE) for shape in (
    rf"\d(?<!\w\d)\d*(?:[.,]\d+)?\s*(?:{_UNIT})\b(?!-)",  # 45 seconds, 12 MB, 600 requests: \b\d+(?:[.,]\d+)?...
    r"[$€£]\s?\d",                                      # prices
    r"\bport\s*(?:is\s+|:|=)?\s*\d{2,5}\b",             # port 8080
    r"\d(?<!\w\d)\d*\.\d+(?:\.\d+)?\b",                 # versions 3.11 and (below) v2.4.1: \bv?\d+\.\d+(?:\.\d+)?\b
))
# v2.4.1: only v and V match v ignoring case, so without the flag sre can jump from v to v
_NUMERIC += (re.compile(r"[vV](?<!\w[vV])\d+\.\d+(?:\.\d+)?\b"),)
_PORT = _NUMERIC[2]
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
# A date or time the text names, in two searches (each alternative wrapped in the same ``\b...\b``,
# so a text matches one of them exactly when it matches the one alternation they were): the shapes
# that need a digit, searched only when the text holds one, and those spelled in words, only when the
# text holds a word each of them needs (``_TIMELINE_NEEDS``).
# The shapes with a digit: those led by one (written as in _NUMERIC), and those led by a word, each
# with what it needs in lower case (a month's first three letters; "at " and a ":"; "in 19" or "in 20").
_TIMELINE_DIGITS = re.compile(rf"\d(?<!\w\d)(?:\d{{3}}-\d{{2}}-\d{{2}}|\d?\s+{_MONTH}\b)\b", re.IGNORECASE)
_TIMELINE_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+\d{{1,2}}\b", re.IGNORECASE)
_TIMELINE_AT_IN = re.compile(r"\b(?:at \d{1,2}:\d{2}|in (?:19|20)\d{2})\b", re.IGNORECASE)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_TIMELINE_WORDS = re.compile(
    r"\b(?:(?:on|last|this|next)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|month|night)|"
    rf"yesterday|today|tonight|this morning|(?:in|of|until|since|by|early|late|mid)[- ]{_MONTH})\b",
    re.IGNORECASE)
# What something is or consists of, in two searches (one alternation they were): the phrases, and the
# counted parts before a ":" ("has three services:").
_TAXONOMY = re.compile(
    r"\b(?:consists? of|is made (?:up )?of|comprises?|is composed of|is divided into|are (?:split|grouped) into|"
    r"(?:kinds?|types?|sorts?|categories|classes|families) of|is an? (?:kind|type|sort|form|subclass|member) of|"
    r"belongs? to|falls? under|includes? (?:the )?(?:following|three|four|five|two))\b",
    re.IGNORECASE)
_TAXONOMY_PARTS = re.compile(
    r"\b(?:has|have|contains?) (?:two|three|four|five|six|\d+) (?:\w+ ){0,2}(?:services|parts|modules|components|"
    r"packages|layers|tiers|teams|kinds|types):",
    re.IGNORECASE)
# "Redis is a key-value store": the whole text (matched at its start, not searched for at every position)
_IS_A = re.compile(r"[\w .-]{2,40}\s+(?:is|are)\s+an?\s+[\w -]{2,40}$", re.IGNORECASE)
# Words (in lower case) one of which every match holds, for ``_TIMELINE_WORDS`` (the weekdays end in
# "day") and ``_TAXONOMY``. Exact as ``classify._CUE_WORDS`` is: under re.IGNORECASE an ASCII letter
# matches only its two cases and the four ``classify.ODD_CASES``, and a text holding one of those is
# searched as before.
_TIMELINE_NEEDS = ("day", "week", "month", "night", "morning", *_MONTHS)
_TAXONOMY_NEEDS = ("consist", "made", "compris", "composed", "divided", "split", "grouped", "kind", "type", "sort",
                   "categories", "classes", "families", "form", "subclass", "member", "belong", "fall", "includ")


def structure_of(text: str, *, dated: bool = False) -> str:
    """The structure type of ``text``; ``dated``: intake parsed an event date from it."""
    sample = text[:2000]
    if _is_ledger(sample):
        return "ledger"
    lowered = sample.lower() if sample.isascii() or ODD_CASES.isdisjoint(sample) else None
    if dated or _is_timeline(sample, lowered):
        return "timeline"
    trimmed = sample.strip().rstrip(".")
    if _is_taxonomy(trimmed, lowered) or _IS_A.match(trimmed):
        return "taxonomy"
    return "narrative"


def _is_timeline(sample: str, lowered: str | None) -> bool:
    """Whether ``sample`` names a date or time; ``lowered``: it in lower case, None to search regardless."""
    if _DIGIT.search(sample):
        if _TIMELINE_DIGITS.search(sample):
            return True
        if (lowered is None or any(month in lowered for month in _MONTHS)) and _TIMELINE_MONTH_DAY.search(sample):
            return True
        if (lowered is None or ("at " in lowered and ":" in sample) or "in 19" in lowered or "in 20" in lowered) \
                and _TIMELINE_AT_IN.search(sample):
            return True
    return (lowered is None or any(word in lowered for word in _TIMELINE_NEEDS)) and bool(_TIMELINE_WORDS.search(sample))


def _is_taxonomy(trimmed: str, lowered: str | None) -> bool:
    """Whether ``trimmed`` has one of ``_TAXONOMY``'s shapes (``lowered``: the untrimmed text in lower case,
    which holds the same words, or None)."""
    if (lowered is None or any(word in lowered for word in _TAXONOMY_NEEDS)) and _TAXONOMY.search(trimmed):
        return True
    return ":" in trimmed and (lowered is None or "ha" in lowered or "contain" in lowered) and \
        bool(_TAXONOMY_PARTS.search(trimmed))


def _is_ledger(sample: str) -> bool:
    if "=" in sample and _KEY_VALUE.search(sample):
        return True
    if not _DIGIT.search(sample):
        return False
    # "port" in lower case: no other character matches its letters ignoring case (only i, s and k have more)
    return any(shape.search(sample) for shape in _NUMERIC if shape is not _PORT or "port" in sample.lower()) or \
        (":" in sample and bool(_HOST_PORT.search(sample)))


_QUANTITY = re.compile(rf"((?:[\w.-]+\s+){{0,3}}?)(?:is|are|=|of|to|at)?\s*(\d+(?:[.,]\d+)?\s*(?:{_UNIT}))\b", re.IGNORECASE)
_FILLER = frozenset({"the", "a", "an", "is", "are", "was", "were", "to", "at", "of", "from", "now", "set", "by"})


def quantities(text: str) -> list[tuple[str, str]]:
    """``(what, value)`` for each number with a unit, ``what`` being the words just before it.

    >>> quantities("Loki keeps logs for 30 days")
    [('keeps logs for', '30 days')]
    """
    out = []
    for match in _QUANTITY.finditer(text[:2000]):
        words = [w for w in match.group(1).lower().split() if w not in _FILLER]
        out.append((" ".join(words), " ".join(match.group(2).split())))
    return out
