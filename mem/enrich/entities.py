"""Zero-LLM entity extraction: people, names, code identifiers, paths, packages, URLs, versions.

Entities link memories that talk about the same thing, so every entity carries a normalized
``key`` ("PostgreSQL", "postgres" and "pg" all key to ``postgres``) and the same normalization,
``canonical`` (:mod:`mem.enrich.entity_keys`), is applied to query words. One regex pass, the
scanner, names each token's kind; a reader per kind decides what the token is, on the evidence of
the word lists of :mod:`mem.enrich.entity_words`. Stdlib only.

>>> [(e.key, e.type) for e in extract_entities("Caroline moved the cache to PostgreSQL in src/db.py")]
[('caroline', 'person'), ('cache', 'concept'), ('postgres', 'tool'), ('src/db.py', 'path')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mem.enrich import entity_keys
from mem.enrich.entity_keys import canonical, plurals
from mem.enrich.entity_words import (ABBREVIATIONS, AMBIGUOUS, CONNECTORS, DIRS, FILE_EXTS, FILE_NAMES, FIRST_NAMES,
                                     PERSON_BEFORE, PERSON_VERBS, PERSONISH, SPEAKER_STOP, STARTERS, STOP, TLDS,
                                     VERSION_BEFORE)
from mem.enrich.lazy_regex import trie

# Bound by assignment, not imported by name: CPython 3.11 compiles ``KNOWN.get(...)`` on an imported
# name as an attribute load that makes a bound method at every call (+0.9% of extraction's instructions).
KNOWN, ALIASES = entity_keys.KNOWN, entity_keys.ALIASES
VERSION, ACRONYM_PLURAL = entity_keys.VERSION, entity_keys.ACRONYM_PLURAL

__all__ = ["Entity", "extract_entities"]


@dataclass(frozen=True)
class Entity:
    """One thing a text mentions: ``key`` is the normalized identity, ``surface`` the text as written."""

    key: str
    surface: str
    type: str  # person|name|identifier|path|package|tool|url|version|quoted|concept


# After a number, a unit makes it an amount ("3.5 hours"), not a version.
_UNIT_AFTER = re.compile(
    r"\s*(?:%|percent|ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?"
    r"|kg|km|mi|miles?|lbs?|gb|mb|kb|tb|x|times|k|m|million|billion|stars?|points?|pts|dollars?"
    r"|usd|eur|degrees?|inch(?:es)?|ft|feet|cm|mm|out)\b", re.IGNORECASE)

_SPEAKER = re.compile(  # "Caroline: ..." opening a line of a transcript
    r"^[ \t>*_-]*([A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2})[*_]*[ \t]*:(?!//)", re.MULTILINE)
_PREV_WORD = re.compile(r"([A-Za-z]+)\.?[\s,]*$")
_NEXT_WORD = re.compile(r"[\s,]*([A-Za-z]+)")
_SPACES_OR_DASHES = re.compile(r"[\s-]+")
_SURNAME_PREFIX = re.compile(r"(?:Mc|Mac|De|Di|Da|La|Le|Van|Von|O)[A-Z][a-z]+")
_CONNECTOR_WORDS = CONNECTORS | {"the"}  # "Bank of the West"
_CLOSING = ".,;:!?)]}'\""  # after a URL or a path: the sentence's punctuation, not the token's
# Kinds whose type the scanner's match alone decides; the key is the token in lower case.
_AS_WRITTEN = {"scoped": "package", "sha": "identifier", "flag": "identifier"}
_CODE_SHAPED = frozenset({"dotted", "call", "snake", "kebab"})


# The scanner: one regex pass, alternatives tried in order at each word start; the name of the group
# that matched (``m.lastgroup``) is the token's kind, which picks its reader in ``_dispatch``.

_CAP = r"[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+(?![\w(]|[./@:]\w|-[A-Z])"
_CONNECTOR = "(?:" + "|".join(sorted(CONNECTORS)) + ")"
_SPACED = r"[\s-]+"  # a space inside a known name: "pre commit" matches "pre-commit" too


def _build_scanner() -> re.Pattern:
    lower_words: set[str] = set()
    for word, kind in list(KNOWN.items()) + [(a, KNOWN.get(t, "concept")) for a, t in ALIASES.items()]:
        if word in AMBIGUOUS or not word or word != word.lower():
            continue
        lower_words.add(word)
        if kind == "concept":
            lower_words.update(plurals(word))
    single = sorted(w for w in lower_words if " " not in w)
    multi = sorted(w for w in lower_words if " " in w)
    # Every alternative starts at a token start (the shared look-behind): mid-word positions are
    # rejected in one step, which is most of what keeps a scan of 200 characters near 20 us.
    alternatives = [
        r"(?<![\w/.@~*+-])(?:"
        + "|".join([
            r"(?P<url>(?:https?|ftp|file|ssh|git)://[^\s<>\"'`]+|www\.[^\s<>\"'`]+)",
            r"(?P<tick>`(?P<tick_in>[^`\n]{1,200})`)",
            # Only the opening quote is consumed, so the words inside are still scanned.
            r"(?P<dq>[\"“](?=(?P<dq_in>[^\"“”\n]{1,60})[\"”]))",
            rf"(?P<multi>(?i:{trie(multi, _SPACED)})(?![\w-]))" if multi else r"(?P<multi>(?!))",
            rf"(?P<known>{trie(single, _SPACED)}(?![\w-]|\.\w))",
            r"(?P<flag>--[A-Za-z][\w-]*)",
            # Everything below needs a capital, digit, inner dot or one of /_()@~*\ in the token:
            # one cheap look-ahead rules it out for the plain lower-case words that make up most text.
            r"(?=[\w@*+~:\\-]*(?:[A-Z0-9À-Þ/_(@~*\\#]|\.[\w/.]))(?:" + "|".join([
                # Names first (most capitalised tokens are), guarded so "Node.js", "Foo()",
                # "Jean-Luc" and "Src/x" fall through to the code-shaped alternatives below.
                rf"(?P<cap>{_CAP}(?:[ ](?:{_CONNECTOR}[ ](?:the[ ])?)?{_CAP})*)",
                r"(?P<mixed>[a-z]+[A-Z]\w*|[A-Z]+[a-z0-9]*[A-Z]\w*|[A-Za-z]+\d\w*)(?![\w(]|[./@:]\w)",
                r"(?P<win>[A-Za-z]:\\[^\s\"'<>|]+)",
                r"(?P<scoped>@[\w.-]+/[\w.-]+)",
                r"(?P<path>(?:~|\.{1,2})?/[\w.@+*~-][\w.@+*~/-]*|[\w.@*+~-]+/[\w.@+*~/-]*"
                r"|\*{1,2}\.\w+|\*\*/[\w.*/-]+)",
                r"(?P<cpp>[Cc](?:\+\+|#)(?![\w+#])|[Ff]#(?!\w))",
                r"(?P<ver>v\d+(?:\.\d+)*(?:[-+.]?(?:rc|alpha|beta|dev|post|pre)\.?\d*)?(?![\w]|\.\d)"
                r"|\d+\.\d+(?:\.\d+)*(?:-?(?:rc|alpha|beta|dev|post|pre)\.?\d*)?(?![\w]|\.\d))",
                r"(?P<sha>(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w]))",
                r"(?P<dotfile>\.[A-Za-z][\w.-]*)",
                r"(?P<dotted>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?)",
                r"(?P<call>[A-Za-z_]\w*\(\))",
                r"(?P<snake>[A-Za-z_]\w*_\w*)",
                r"(?P<hyph>[A-Z][a-z]*(?:-[A-Z][A-Za-z]*)+)(?![\w])",
                # Hyphenated names with capitals or digits: "all-MiniLM-L6-v2", "gpt-4", "utf-8".
                r"(?P<kebab>[A-Za-z][\w]*(?:-[\w]+)+)(?![\w])",
            ]) + ")",
        ])
        + ")",
    ]
    return re.compile("|".join(alternatives))


_scanner_cache: dict[tuple[int, int], re.Pattern] = {}


def _scanner() -> re.Pattern:
    """The compiled scanner, rebuilt only when KNOWN or ALIASES grew (they are public, extensible)."""
    version = (len(KNOWN), len(ALIASES))
    pattern = _scanner_cache.get(version)
    if pattern is None:
        _scanner_cache.clear()
        pattern = _scanner_cache[version] = _build_scanner()
    return pattern


class _Collector:
    """Entities in order of first appearance. A name only seen opening a sentence stays tentative
    until it also shows up mid-sentence (then "Deploying" at a sentence start is never a name)."""

    __slots__ = ("items", "confirmed")

    def __init__(self) -> None:
        self.items: list[tuple[Entity, bool]] = []
        self.confirmed: set[str] = set()

    def add(self, key: str, surface: str, kind: str, sure: bool = True) -> None:
        if not key:
            return
        self.items.append((Entity(key, surface, kind), sure))
        if sure:
            self.confirmed.add(key)

    def result(self) -> list[Entity]:
        seen: dict[str, Entity] = {}
        for entity, sure in self.items:
            if entity.key not in seen and (sure or entity.key in self.confirmed):
                seen[entity.key] = entity
        return list(seen.values())


def _sentence_initial(text: str, pos: int) -> bool:
    """Whether ``pos`` opens a sentence, a line or a list item (so capitals there prove little)."""
    i = pos - 1
    while i >= 0 and text[i] in " \t\"'“‘(*[->#•_":
        i -= 1
    if i < 0 or text[i] in "\n\r.!?:;…":
        if i >= 0 and text[i] == ".":  # "Dr. Smith": a title's dot does not end a sentence
            prev = _PREV_WORD.search(text, max(0, i - 8), i + 1)
            if prev and prev.group(1).lower() in PERSON_BEFORE:
                return False
        return True
    return False


def _known_type(word: str, key: str, initial: bool) -> str | None:
    """Type for a known tool/package/brand spelled ``word``, or None when it is not one here."""
    kind = KNOWN.get(key)
    if kind is None:
        return None
    lower = word.lower()
    if lower in PERSONISH and word[:1].isupper():
        return None  # "Ruby said..." is a person before it is a language
    if lower in AMBIGUOUS and (initial or word.islower()):
        return None  # "Make sure...", "we go there"
    return kind


def _person_context(text: str, start: int, end: int, speakers: set[str], first: str, key: str) -> bool:
    """Evidence that a name is a person: a known first name, a speaker, "Dr."/"my friend" before
    it, or "said"/"asked" after it."""
    if first.lower() in FIRST_NAMES or first.lower() in speakers or key in speakers:
        return True
    prev = _PREV_WORD.search(text, max(0, start - 16), start)
    if prev and prev.group(1).lower() in PERSON_BEFORE:
        return True
    nxt = _NEXT_WORD.match(text, end)
    return bool(nxt and nxt.group(1).lower() in PERSON_VERBS)


def _starter_like(word: str) -> bool:
    lower = word.lower()
    return lower in STARTERS or lower.endswith(("ly", "ing", "ed")) and lower not in FIRST_NAMES


def _cap_run(out: _Collector, text: str, words: list[tuple[int, str]], initial: bool,
             speakers: set[str]) -> None:
    """One run of capitalised words that survived splitting: a person or a proper name."""
    while words[-1][1] in _CONNECTOR_WORDS:  # "Bank of" -> "Bank" (a run never opens with "of")
        words = words[:-1]
    start, end = words[0][0], words[-1][0] + len(words[-1][1])
    surface = text[start:end]
    possessive = text.startswith(("'s", "’s"), end)
    key = canonical(surface)
    person = _person_context(text, start, end, speakers, words[0][1], key)
    # Mid-sentence capitals are names; at a sentence start we need some further evidence.
    sure = not initial or person or possessive or len(words) > 1
    out.add(key, surface, "person" if person else "name", sure)


def _cap_sequence(out: _Collector, text: str, m: re.Match, speakers: set[str]) -> None:
    """Split "Yesterday Caroline and Melanie Smith" style runs into names, dropping stop words."""
    initial = _sentence_initial(text, m.start())
    run: list[tuple[int, str]] = []  # (offset, word) of the name being built
    run_initial = False

    def flush() -> None:
        nonlocal run
        if run:
            _cap_run(out, text, run, run_initial, speakers)
        run = []

    pos = m.start()
    for index, word in enumerate(m.group().split(" ")):
        lower = word.lower()
        opens_sentence = initial and index == 0
        key = ALIASES.get(lower, lower)
        kind = _known_type(word, key, opens_sentence)
        if lower in _CONNECTOR_WORDS:
            if run:  # "Bank of America"; a trailing "of" is trimmed by _cap_run
                run.append((pos, word))
        elif lower in FILE_NAMES:  # "Makefile", "Dockerfile"
            flush()
            out.add(lower, word, "path")
        elif kind is not None:  # "Redis" inside "Deploying Redis Cluster"
            flush()
            out.add(key, word, kind)
        elif lower in STOP or (opens_sentence and _starter_like(word) and lower not in speakers):
            flush()
        else:
            if not run:
                run_initial = opens_sentence
            run.append((pos, word))
        pos += len(word) + 1
    flush()


def _path_ok(p: str) -> bool:
    """Rejects slashed words that are not paths: "and/or", "client/server", "24/7", dates."""
    if not any(c.isalpha() for c in p):
        return False
    if p.startswith(("/", "./", "../", "~/", "*")):
        return len(p) > 1
    parts = [s for s in p.split("/") if s]
    last = parts[-1] if parts else ""
    has_ext = "." in last and last.rsplit(".", 1)[1].lower() in FILE_EXTS
    if len(parts) >= 3 or has_ext or last.lower() in FILE_NAMES:
        return True
    if len(parts) == 2:
        return p.endswith("/") or parts[0].lower() in DIRS or parts[0].startswith(".")
    return p.endswith("/") and len(parts[0]) > 2


def _code_word(out: _Collector, word: str) -> None:
    """A token shaped like code (dots, underscores, inner capitals, digits): such spellings are
    never everyday words, so known names count here even if ambiguous ("GitHub", "Node.js")."""
    lower = word.lower()
    bare = lower[:-2] if lower.endswith("()") else lower
    key = canonical(word)
    kind = KNOWN.get(key)
    if kind is not None and kind != "concept":
        out.add(key, word, kind)
        return
    if "." in bare and not lower.endswith("()"):
        parts = bare.split(".")
        if bare in ABBREVIATIONS or all(len(p) == 1 for p in parts):
            return
        if parts[-1] in FILE_EXTS or parts[-1] in TLDS and word.islower() and len(parts) <= 3:
            out.add(key, word, "path" if parts[-1] in FILE_EXTS else "url")
            return
    if word.isupper() and "_" not in word and "." not in word:
        _acronym(out, word)
    else:
        out.add(key, word, "path" if bare in FILE_NAMES else "concept" if key in KNOWN else "identifier")


def _acronym(out: _Collector, word: str) -> None:
    """All-capital words ("API", "LGBTQ"): concepts when known, else names; noise ("OK") dropped."""
    key = canonical(word)
    if key not in STOP and len(key) >= 2:
        out.add(key, word, KNOWN.get(key) or "name")


def _mixed(out: _Collector, word: str) -> None:
    """Inner capitals or digits: "parseArgs", "GitHub", "API", "k8s", "McKenzie"."""
    if "_" not in word and (word.isupper() or ACRONYM_PLURAL.fullmatch(word)):  # "API", "APIs"
        _acronym(out, word)
    elif _SURNAME_PREFIX.fullmatch(word) and canonical(word) not in KNOWN:
        out.add(canonical(word), word, "name")  # "McKenzie", "DeShawn"
    else:
        _code_word(out, word)


def _version(out: _Collector, text: str, m: re.Match, last: tuple[int, Entity | None]) -> None:
    """Versions: always "v1.2" and "1.2.3"; a bare "3.11" only after a tool or a word like "to"."""
    surface = m.group()
    start = m.start()
    prev_end, prev = last
    after_tool = prev is not None and prev.type in ("tool", "package") and prev_end == start - 1
    if after_tool:
        surface = text[start - 1 - len(prev.surface):m.end()]  # "Python 3.12"
    elif not surface.startswith("v") and surface.count(".") == 1:
        if (start > 0 and text[start - 1] in "$€£¥#") or _UNIT_AFTER.match(text, m.end()):
            return  # "$2.50", "3.5 hours": amounts, not versions
        prev_word = _PREV_WORD.search(text, max(0, start - 16), start)
        if not prev_word or prev_word.group(1).lower() not in VERSION_BEFORE:
            return
    out.add(canonical(surface), surface, "version")


def _speakers(text: str) -> set[str]:
    """Names opening a line as "Caroline: ..." (chat transcripts): those are people."""
    if ":" not in text:
        return set()
    names = {m.group(1).rstrip(".").lower() for m in _SPEAKER.finditer(text)}
    return {n for n in names if n not in SPEAKER_STOP and n not in STOP and n not in KNOWN}


def extract_entities(text: str) -> list[Entity]:
    """Entities in ``text``, deduplicated by key, in order of first appearance.

    >>> [(e.key, e.surface, e.type) for e in extract_entities(
    ...     "Melanie: We pinned Python 3.12 and `numpy` per https://numpy.org/doc")]
    [('melanie', 'Melanie', 'person'), ('python', 'Python', 'tool'), ('python 3.12', 'Python 3.12', 'version'), ('numpy', 'numpy', 'package'), ('numpy.org/doc', 'https://numpy.org/doc', 'url')]
    """
    if not isinstance(text, str) or not text:
        return []
    out = _Collector()
    speakers = _speakers(text)  # typed as people when their names come up in the scan below
    quote_close = -1  # index of the closing quote of the last quoted span
    last: tuple[int, Entity | None] = (-1, None)  # end index and entity of the previous token
    for m in _scanner().finditer(text):
        kind = m.lastgroup
        before = len(out.items)
        if kind == "dq":
            if m.start() == quote_close:
                continue  # that was the closing quote of the previous span
            inner = m.group("dq_in")
            quote_close = m.end() + len(inner)
            if inner.strip() and len(inner.split()) <= 8:
                out.add(canonical(inner), inner.strip(), "quoted")
        else:
            _dispatch(out, text, m, kind, speakers, last)
        if len(out.items) > before:
            last = (m.end(), out.items[-1][0])
    return out.result()


def _dispatch(out: _Collector, text: str, m: re.Match, kind: str, speakers: set[str],
              last: tuple[int, Entity | None]) -> None:
    word = m.group()
    if kind == "cap":
        if " " in word or word.lower() not in STOP:  # fast path: a lone "The", "We", "May"
            _cap_sequence(out, text, m, speakers)
    elif kind == "known" or kind == "multi":
        # "unit-test" and "unit test" are one concept; the word list stores the spaced form.
        key = canonical(_SPACES_OR_DASHES.sub(" ", word) if kind == "multi" else word)
        out.add(key, word, KNOWN.get(key, "concept"))
    elif kind == "hyph":
        _hyphenated_name(out, text, m)
    elif kind in _CODE_SHAPED:
        _code_word(out, word)
    elif kind == "mixed":
        _mixed(out, word)
    elif kind == "ver":
        _version(out, text, m, last)
    elif kind == "url":
        url = word.rstrip(_CLOSING)
        out.add(canonical(url), url, "url")
    elif kind in ("path", "win", "dotfile"):
        path = word.rstrip(_CLOSING)
        if kind == "win" or (kind == "dotfile" and len(path) > 2) or (kind == "path" and _path_ok(path)):
            out.add(canonical(path), path, "path")
    elif kind == "tick":
        _backticked(out, m.group("tick_in").strip())
    elif kind == "cpp":
        out.add(canonical(word), word, "tool")
    elif kind in _AS_WRITTEN:
        out.add(word.lower(), word, _AS_WRITTEN[kind])


def _hyphenated_name(out: _Collector, text: str, m: re.Match) -> None:
    """"Jean-Luc", "Coca-Cola", "Scikit-Learn": a known name, a person, or some other name."""
    word = m.group()
    key = canonical(word)
    if key in KNOWN:
        out.add(key, word, KNOWN[key])
        return
    person = word.split("-")[0].lower() in FIRST_NAMES
    out.add(key, word, "person" if person else "name", person or not _sentence_initial(text, m.start()))


def _backticked(out: _Collector, inner: str) -> None:
    """`code`: one token is typed as it would be bare (path, url, version...), else it is an
    identifier; several words make a quoted term."""
    if not inner:
        return
    key = canonical(inner)
    if " " in inner:
        kind = "quoted"
    elif key in KNOWN:  # backticks lift the lower-case ambiguity: `make`, `black`
        kind = KNOWN[key]
    elif VERSION.fullmatch(inner.lower()):  # `3.11`: in code quotes a bare number is a version
        kind = "version"
    else:
        kind = "identifier"
        m = _scanner().match(inner)
        if m is not None and m.end() == len(inner) and m.lastgroup not in ("cap", "dq", "tick"):
            sub = _Collector()
            _dispatch(sub, inner, m, m.lastgroup, set(), (-1, None))
            found = sub.result()
            if found:
                key, kind = found[0].key, found[0].type
    out.add(key, inner, kind)
