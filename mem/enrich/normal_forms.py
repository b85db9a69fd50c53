"""Normal forms of a claim's subject and value, so that claims compare across phrasings: determiners,
possessives and environments folded into the subject ("the log level in production" -> "production
log level"), synonyms and generic words dropped (:func:`canon_subject`), values cut at clause words,
units converted, versions split off, and a value's tool category looked up (:mod:`mem.enrich.lexicon`).

>>> normalize_subject("the batch size for the embedder"), canon_subject("main database server")
(('embedder batch size', True), 'database')
>>> normalize_value("a 30 minutes timeout because of load"), base_value("postgres 16"), category("postgres 16")
(('30 minutes timeout', 'a'), ('postgres', '16'), 'database')
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional

from mem.enrich.clauses import EDGE_PUNCT, strip_trailing
from mem.enrich.lazy_regex import LazyRe
from mem.enrich.lexicon import (
    ADJECTIVES as _ADJECTIVES, ADVERBS as _ADVERBS, GENERIC_HEADS as _GENERIC_HEADS, GENERIC_MODS as _GENERIC_MODS,
    GENERIC_SUBJECTS as _GENERIC_SUBJECTS, NOT_SUBJECT_STARTS as _SUBJECT_BAD_START, NOT_SUBJECTS as _BAD_SUBJECT_TOKENS,
    PRONOUNS as _PRONOUNS, SETTING_WORDS as _SETTING_WORDS, SLOT_SUBJECTS as _SLOT_SUBJECTS, STATUS as _STATUS,
    SUBJECT_SYNONYMS as _SUBJECT_SYNONYMS, TOKEN_SYNONYMS as _TOKEN_SYNONYMS, TOOLS as _TOOLS, VALUE_ALIASES as _VALUE_ALIASES,
)

_MAX_SUBJECT_TOKENS = 6

_ADJ_SUFFIX = LazyRe(r"(?:able|ible|ful|less|ous|ive|ish|ic|ed|-safe|-only|-threaded|-based|"
                     r"-friendly|-heavy|-bound|-free|-ready|-aware|-specific|-sensitive)$")

_DETERMINERS = ("the", "a", "an", "our", "my", "your", "their", "its", "his", "her", "this", "that", "these", "those",
                "every", "each", "whole", "entire", "all", "both")
_DETERMINER = LazyRe(rf"^(?:{'|'.join(_DETERMINERS)})\s+")
_DETERMINER_WORDS = frozenset(_DETERMINERS)
_POSSESSIVE = LazyRe(r"(?<=\w)'s\b|(?<=s)'(?=\s|$)")
ENV_WORDS = {"production": "production", "prod": "production", "staging": "staging",
              "stage": "staging", "dev": "development", "development": "development",
              "local": "local", "local dev": "local", "local development": "local",
              "locally": "local", "test": "test", "tests": "test", "testing": "test", "ci": "ci",
              "qa": "qa", "sandbox": "sandbox"}
_ENV_RE = "|".join(sorted((re.escape(k) for k in ENV_WORDS), key=len, reverse=True))
_SUBJ_QUALIFIER = LazyRe(rf"^(?P<x>.+?)\s+(?:in|on|for)\s+(?:the\s+)?(?P<env>{_ENV_RE})$")
VALUE_QUALIFIER = LazyRe(rf"^(?P<x>.+?)\s+(?:in|on|for)\s+(?:the\s+)?(?P<env>{_ENV_RE})"
                          rf"(?:\s+environment)?$")
_OF_PHRASE = LazyRe(r"^(?P<a>[\w-]+(?: [\w-]+){0,2}) (?:for|of) (?:the |our |a |an |all )?"
                    r"(?P<b>[\w./-]+(?: [\w./-]+){0,2})$")
# Words naming an attribute in a subject: the whole subject ("the port", "my employer"), its end
# ("django version", "api deploy target") or, for one-word ones but "maintainers", its head ("owner of X").
_ATTR_WORDS = {"version": "version", "port": "port", "port number": "port", "owner": "owner",
               "owners": "owner", "ownership": "owner", "maintainer": "owner",
               "maintainers": "owner", "language": "language", "status": "status",
               "location": "location", "path": "location", "host": "host", "hosting": "host",
               "deploy target": "host", "deployment target": "host", "hosting provider": "host",
               "employer": "works_at", "company": "works_at", "workplace": "works_at"}
_SUFFIX_ATTRS = [w for w, attribute in _ATTR_WORDS.items() if attribute != "works_at"]
_ATTR_SUFFIX = LazyRe(rf"^(?P<s>.+?)\s+(?P<a>{'|'.join(_SUFFIX_ATTRS)})$")
_ATTR_SUFFIX_WORDS = frozenset(w.rsplit(" ", 1)[-1] for w in _SUFFIX_ATTRS)
_ATTR_PREFIX = LazyRe(rf"^(?:the\s+)?(?P<a>{'|'.join(w for w in _SUFFIX_ATTRS if ' ' not in w and w != 'maintainers')})"
                      r"\s+(?:of|for)\s+(?P<s>.+)$")
_NUMERIC = LazyRe(r"^[<>~=]*\$?\d[\d,]*(?:\.\d+)?%?(?:\s*[a-z%/]+)?(?:\s+(?:per|an?|/)\s*\w+)*$"
                  r"|^\d[\d,]*(?:\.\d+)?\s+[a-z]+(?:\s+per\s+\w+)?$")
TIME = LazyRe(r"^(?:at\s+)?\d{1,2}(?::\d{2}\s*(?:am|pm)?|\s*(?:am|pm))(?:\s+[a-z]{2,4})?$")
WEEKDAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?s?"
_WHEN = LazyRe(rf"^(?:on |at |every )?(?P<when>{WEEKDAY}|weekdays|"
               r"weekends|\d{1,2}(?::\d{2}\s*(?:am|pm)?|\s*(?:am|pm))(?:\s+[a-z]{2,4})?)$")
VERSION = LazyRe(r"^v?\d+(?:\.\d+)+[a-z0-9.+-]*\+?$|^v\d+[a-z0-9.+-]*$")
_VERSIONED_NAME = LazyRe(r"^(?P<n>[a-z][\w.+#-]*?(?:\s[a-z][\w+#-]*)?)\s+v?(?P<v>\d+(?:\.\d+)*"
                         r"(?:[a-z][a-z0-9.+-]*)?\+?)$")
_UNIT = LazyRe(r"^(?P<n>\d+(?:\.\d+)?)\s*(?P<u>milliseconds?|msecs?|ms|seconds?|secs?|s|"
               r"minutes?|mins?|m|hours?|hrs?|h|days?|d)$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
# Where a value ends and the clause goes on: "Redis because ...", "pytest on every push", "ruff to lint".
_VALUE_ENDS = (
    "because", "since", "so that", "so", "which", "who", "that", "where", "when", "while", "until", "unless", "after",
    "before", "due to", "thanks to", "in order to", "like we", "as we", "but", "except", "whereas", "although",
    "though", r"on (?:every|each|all|push|merge|pull|prs?|commits?)\b", "with (?:no|a few|some|minimal)",
    "to (?:avoid|keep|make|get|speed|reduce|handle|store|manage|support|allow|enable|ensure|improve|bundle|install|"
    "build|run|deploy|test|lint|format|cache|serve|host|check|track|send|process|power|compile|package|generate|talk|"
    "connect|replace|fix)",
    r"for (?:now|the time being|performance|speed|simplicity|reasons|better \w+|consistency|compatibility|"
    r"everything|all \w+)", f"on {WEEKDAY}")
_VALUE_CUT = LazyRe(r"\s+(?:" + "|".join(_VALUE_ENDS) + r")\b.*$")
_VALUE_CUT_WORDS = frozenset(w.split(" ", 1)[0] for w in _VALUE_ENDS)  # the regex runs only when one is present
USES_CUT = LazyRe(r"\s+(?:with|via|using|through|behind|alongside|inside|on top of|under)\s+.*$")
PARENS = LazyRe(r"\s*\([^)]*\)")
_ARTICLES = ("a", "an", "the", "our", "my", "their", "your", "its", "some")
ARTICLE = LazyRe(rf"^(?P<a>{'|'.join(_ARTICLES)})\s+")
_ARTICLE_WORDS = frozenset(_ARTICLES)
_WHEN_PREFIXES = frozenset({"on", "at", "ev", "mo", "tu", "we", "th", "fr", "sa", "su"})


_SUBJECT_WORD_SPLIT = LazyRe(r"[\s_.-]+")
_OWNER_AFFIX = LazyRe(r"^team\s+|\s+(?:team|squad|group|org)$")


def clean(s: str) -> str:
    if "(" in s:
        s = PARENS.sub("", s)
    if "`" in s or "*" in s:
        s = s.replace("`", "").replace("*", "")
    return " ".join(s.split()).strip(EDGE_PUNCT)


@lru_cache(maxsize=4096)
def normalize_subject(raw: str) -> tuple[str, bool]:
    """Lowercased subject without determiners/possessives; second item: it had a determiner."""
    s = clean(raw)
    definite = False
    while s[:s.find(" ") + 1 or len(s)].rstrip() in _DETERMINER_WORDS:
        m = _DETERMINER.match(s)
        if not m:
            break
        s, definite = s[m.end():], True
    if "'" in s:
        t = _POSSESSIVE.sub("", s)
        if t != s:
            s, definite = t, True
    m = _SUBJ_QUALIFIER.match(s) if s[s.rfind(" ") + 1:] in ENV_WORDS else None
    if m:  # "the log level in production" -> "production log level"
        s = f"{ENV_WORDS[m['env']]} {m['x']}"
        m2 = _DETERMINER.match(m["x"])
        if m2:
            s, definite = f"{ENV_WORDS[m['env']]} {m['x'][m2.end():]}", True
    if " for " in s or " of " in s:
        m = _OF_PHRASE.match(s)
        if m:  # "batch size for the embedder" -> "embedder batch size"; "owner of X" -> "X owner"
            s = f"{m['b']} {m['a']}"
    s = s.strip(EDGE_PUNCT)
    return _GENERIC_SUBJECTS.get(s, s), definite


def valid_subject(s: str) -> bool:
    if not s or s in _PRONOUNS:
        return False
    toks = s.split()
    if toks[0] in _SUBJECT_BAD_START:  # "via github actions" is a fragment, not a subject
        return False
    return s == "i" or (len(toks) <= _MAX_SUBJECT_TOKENS and _BAD_SUBJECT_TOKENS.isdisjoint(toks))


def split_attr(subject: str) -> tuple[str, Optional[str]]:
    """Pull an attribute word out of a subject: "django version" -> ("django", "version")."""
    a = _ATTR_WORDS.get(subject)
    if a:  # "the port is 8080", "my employer is X"
        return ("i" if a == "works_at" else "project"), a
    toks = subject.split()
    m = None
    if toks[-1] in _ATTR_SUFFIX_WORDS:
        m = _ATTR_SUFFIX.match(subject)
    elif toks[0] in _ATTR_WORDS or toks[0] == "the":
        m = _ATTR_PREFIX.match(subject)
    if m:
        return _GENERIC_SUBJECTS.get(m["s"], m["s"]), _ATTR_WORDS[m["a"]]
    return subject, None


@lru_cache(maxsize=4096)
def canon_subject(s: str) -> str:
    """Comparable form of a subject (see :func:`_canon_one`); "a: b" keeps its purpose part."""
    if ": " in s:
        head, _, purpose = s.partition(": ")
        return f"{_canon_one(head)}: {_canon_one(purpose)}"
    return _canon_one(s)


def _canon_one(s: str) -> str:
    """Comparable form of a normalized subject: synonyms folded, generic modifiers/heads dropped.

    >>> _canon_one("main database server"), _canon_one("caching"), _canon_one("staging db")
    ('database', 'cache', 'staging database')
    """
    s = _SUBJECT_SYNONYMS.get(s, s)
    toks = s.split()
    while len(toks) > 1 and toks[0] in _GENERIC_MODS:
        toks.pop(0)
    while len(toks) > 1 and toks[-1] in _GENERIC_HEADS:
        toks.pop()
    if len(toks) > 1:  # "staging db" -> "staging database"
        last = _SUBJECT_SYNONYMS.get(toks[-1])
        if last and " " not in last:
            toks[-1] = last
        toks = [_TOKEN_SYNONYMS.get(t, t) for t in toks]  # "db connection pool" too
    s = " ".join(toks)
    s = _SUBJECT_SYNONYMS.get(s, s)
    if s not in _SLOT_SUBJECTS and "s" in s:  # "jwt tokens" ~ "jwt token", "backups" ~ "backup"
        t = " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith(_NO_PLURAL) else w
                     for w in s.split())
        if t != s:
            s = _SUBJECT_SYNONYMS.get(t, t)
    return _GENERIC_SUBJECTS.get(s, s)


_NO_PLURAL = ("ss", "us", "is", "ics", "ous")


def is_slot(canon: str) -> bool:
    if ": " in canon:  # "api: cache" is the API's cache slot
        canon = canon.partition(": ")[2]
    if canon in _SLOT_SUBJECTS:
        return True
    for sep in (" for ", " of "):  # "tech lead for search": the head is "tech lead"
        if sep in canon:
            canon = canon.split(sep, 1)[0]
            if canon in _SLOT_SUBJECTS:
                return True
    toks = canon.split()
    return len(toks) > 1 and (toks[-1] in _SLOT_SUBJECTS or " ".join(toks[-2:]) in _SLOT_SUBJECTS)


def numeric(v: str) -> bool:
    """A number, maybe with a unit ("30s", "100 requests per minute", ">= 3")."""
    return bool(v) and (v[0].isdigit() or v[0] in "<>~=$") and bool(_NUMERIC.match(v))


def when_named(v: str) -> Optional[str]:
    """The time or weekday a value names ("on fridays" -> "fridays", "at 9:30" -> "9:30")."""
    if not v or not (v[0].isdigit() or v[:2] in _WHEN_PREFIXES):
        return None
    m = _WHEN.match(v)
    return m["when"] if m else None


def strip_article(v: str) -> tuple[str, str]:
    if v[:v.find(" ") + 1 or len(v)].rstrip() not in _ARTICLE_WORDS:
        return v, ""
    m = ARTICLE.match(v)
    return (v[m.end():], m["a"]) if m else (v, "")


def alias(v: str) -> str:
    return _VALUE_ALIASES.get(v, v)


def base_value(v: str) -> tuple[str, str]:
    """Split a versioned name: "postgres 16" -> ("postgres", "16"); else (v, "")."""
    m = _VERSIONED_NAME.match(v) if v[-1:].isdigit() or v[-1:] in "+abcdefghijklmnopqrstuvwxyz" \
        and " " in v else None
    if m and not numeric(m["n"]) and m["n"] not in ("port", "version", "v"):
        return alias(m["n"]), m["v"]
    return v, ""


@lru_cache(maxsize=4096)
def category(v: str) -> str:
    """Known tool category of a value ("" if unknown): "postgres 16" -> "database"."""
    v = alias(v)
    c = _TOOLS.get(v)
    if c:
        return c
    base, ver = base_value(v)
    if ver:
        return _TOOLS.get(base, "")
    return ""  # no first-word fallback: "react query" is not React


def _normalize_unit(v: str) -> str:
    m = _UNIT.match(v) if v[:1].isdigit() else None
    if not m:
        return v
    unit = m["u"]
    key = "ms" if unit.startswith(("ms", "msec", "milli")) else unit[0]
    seconds = float(m["n"]) * _UNIT_SECONDS[key]
    return (f"{seconds:g}s" if seconds >= 1 or seconds == 0 else f"{seconds * 1000:g}ms")


def cut_value(raw: str) -> str:
    """``raw`` cleaned and cut where the clause goes on ("Redis because it is fast", "pnpm now")."""
    v = clean(raw)
    if not _VALUE_CUT_WORDS.isdisjoint(v.split()):
        v = _VALUE_CUT.sub("", v)
    return strip_trailing(v, quick=True)


@lru_cache(maxsize=4096)
def normalize_value(raw: str) -> tuple[str, str]:
    """Lowercased value, truncated at clause words; second item: its leading article, if any."""
    v, article = strip_article(cut_value(raw))
    v = v.strip(EDGE_PUNCT)
    if v.startswith("@"):
        v = v[1:]
    return _normalize_unit(alias(v)), article


def is_adjectival(v: str) -> bool:
    toks = v.split()
    if not toks:
        return False
    first = toks[0]
    if first in _ADVERBS or first in _ADJECTIVES:
        return True
    if len(first) > 4 and first.endswith("ed") and first not in _STATUS:
        return True  # a participle: "versioned under /v2", "rotated monthly"
    return len(toks) <= 2 and len(first) >= 7 and bool(_ADJ_SUFFIX.search(first)) \
        and not category(v) and first not in _TOOLS


def numeric_attr(subject: str, value: str) -> str:
    """"version" for tool/package numbers (Django 5.0, numpy==1.26), else "value"."""
    toks = set(_SUBJECT_WORD_SPLIT.split(subject))
    if toks & _SETTING_WORDS:
        return "value"
    known = subject in _TOOLS or alias(subject) in _TOOLS
    if VERSION.match(value) and ("." in value or known):  # "v2" alone may be any label
        return "version"
    if value.isdigit() and (subject in _TOOLS or alias(subject) in _TOOLS):
        return "version"
    return "value"


def owner_value(v: str) -> str:
    v = _OWNER_AFFIX.sub("", v.lstrip("@"))
    return v
