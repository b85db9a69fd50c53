"""Text normalization, content hashing and FTS5 query building: one place for each rule."""

from __future__ import annotations

import hashlib
import re
import unicodedata

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
