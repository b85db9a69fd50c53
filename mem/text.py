"""Text normalization, content hashing and FTS5 query building: one place for each rule."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

_SPACE = re.compile(r"\s+")
# Word tokens for BM25 queries: letters/digits runs, keeping inner dots, dashes and underscores
# ("pkg.module", "snake_case", "v1.2") so identifiers survive as one token.
_TOKEN = re.compile(r"[^\W_]+(?:[._\-'][^\W_]+)*|_+[^\W_]+(?:_[^\W_]+)*", re.UNICODE)

STOPWORDS = frozenset(
    """a an and are as at be been being but by can could did do does doing for from had has have
    having he her hers him his how i if in into is it its itself me my myself no nor not of off on
    once only or our ours ourselves out over own she should so than that the their theirs them
    themselves then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours yourself yourselves
    about after again against all any because before below between both down during each few
    further here just more most other same some such s t don now ever also did didn doesn isn
    wasn weren hasn haven hadn won wouldn shouldn couldn let us get got""".split()
)


@lru_cache(maxsize=1 << 16)  # a store's words recur: intake stems every candidate's words for each new memory
def stem(word: str, shortest: int = 3) -> str:
    """Crude suffix folding, enough for "caching"/"cache"/"cached" to share a feature; the stem keeps at
    least ``shortest`` characters.

    >>> stem("timeouts"), stem("raised"), stem("uses"), stem("uses", 4)
    ('timeout', 'rais', 'use', 'uses')
    >>> stem("dependencies"), stem("dependency"), stem("retries"), stem("retried"), stem("retrying"), stem("dies")
    ('dependency', 'dependency', 'retry', 'retry', 'retry', 'die')
    """
    if len(word) - 3 >= shortest and word.endswith(("ies", "ied")):  # "dependencies" is "dependency", not "dependenci"
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) - len(suffix) >= shortest and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def clean(text: str) -> str:
    """Canonical stored form: NFC, NUL removed, runs of blanks inside lines kept, ends stripped.

    >>> clean("  We chose Redis\\x00  ")
    'We chose Redis'
    """
    return unicodedata.normalize("NFC", text.replace("\x00", "")).strip()


def normalize_for_hash(text: str) -> str:
    """Case-, width- and whitespace-insensitive form used for exact-duplicate detection."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def content_hash(text: str) -> str:
    """sha256 hex of the normalized text: two memories that differ only in case or spacing match."""
    return hashlib.sha256(normalize_for_hash(text).encode("utf-8")).hexdigest()


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens, identifiers kept whole: ``tokens("Use pkg.mod_x!") == ['use', 'pkg.mod_x']``."""
    return [t.lower() for t in _TOKEN.findall(text.replace("\x00", " "))]


def content_terms(text: str) -> list[str]:
    """Tokens without stopwords, in order, deduplicated; falls back to all tokens if every one is a stopword."""
    all_tokens = tokens(text)
    seen: dict[str, None] = {}
    for token in all_tokens:
        if token not in STOPWORDS:
            seen.setdefault(token, None)
    if not seen:
        for token in all_tokens:
            seen.setdefault(token, None)
    return list(seen)


def fts_quote(term: str) -> str:
    """Quote one term as an FTS5 string literal, so no input can be read as query syntax."""
    return '"' + term.replace("\x00", "").replace('"', '""') + '"'


MAX_QUERY_TERMS = 32  # content terms of a query that full-text search matches


def fts_any(terms: list[str]) -> str:
    """An FTS5 MATCH expression OR-ing ``terms``, each quoted.

    >>> fts_any(["cache", "e-mail"])
    '"cache" OR "e-mail"'
    """
    return " OR ".join(fts_quote(t) for t in terms)


def fts_query(text: str, max_terms: int = MAX_QUERY_TERMS) -> str | None:
    """An FTS5 MATCH expression OR-ing every content term of ``text``, each quoted; None if empty.

    >>> fts_query('what "cache" did we pick? NEAR(')
    '"cache" OR "pick" OR "near"'
    """
    terms = content_terms(text)[:max_terms]
    return fts_any(terms) if terms else None


# Characters a terminal acts on or hides: C0 and C1 controls and DEL (ESC starts CSI, OSC 0/8/52
# sequences; CR overwrites a line), Unicode format characters (bidi overrides and isolates,
# zero-width spaces, soft hyphen, BOM, tags), and the line/paragraph separators. ZWNJ and ZWJ stay:
# scripts and emoji need them and they move no text. The Cf list is Unicode 15's (a test holds
# it to unicodedata).
_UNSAFE = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f]"
)
_UNSAFE_LINE = re.compile(_UNSAFE.pattern[:-1] + "\n]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str, *, newlines: bool = True) -> str:
    """``text`` for a terminal: every control, escape and invisible format character shown as a
    ``repr``-style escape, so text from a memory can never move the cursor, retitle the window,
    write the clipboard or hide a link. Newlines stay unless ``newlines=False`` (one-line messages).
    Only for display: JSON output keeps the exact text.

    >>> visible("ok\\x1b]0;pwned\\x07 \\u202egnp.exe")
    'ok\\\\x1b]0;pwned\\\\x07 \\\\u202egnp.exe'
    """
    return (_UNSAFE if newlines else _UNSAFE_LINE).sub(_escape, text)
