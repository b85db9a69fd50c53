"""The enrichment's fast forms give what their plain forms give: each reference below is the one
regular expression the function used before it was split for speed (bench/README.md, "Bulk import"),
checked on the bench's texts and on generated ones built from the pieces the patterns look for."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from hypothesis import given, settings, strategies as st

from mem.enrich import classify, structure

ROOT = Path(__file__).resolve().parent.parent

_LEDGER = re.compile(
    rf"\b\d+(?:[.,]\d+)?\s*(?:{structure._UNIT})\b(?!-)"
    r"|[$€£]\s?\d"
    r"|\b[A-Za-z_][\w.-]*\s*(?:=|:=)\s*\S"
    r"|\bport\s*(?:is\s+|:|=)?\s*\d{2,5}\b|\b(?:localhost|[\w-]+(?:\.[\w-]+)+):\d{2,5}\b"
    r"|\bv?\d+\.\d+(?:\.\d+)?\b",
    re.IGNORECASE)

# the one alternation the timeline was (structure._TIMELINE_DIGITS and _TIMELINE_WORDS now, behind word checks)
_TIMELINE = re.compile(
    rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}\s+{structure._MONTH}\b|{structure._MONTH}\s+\d{{1,2}}\b|(?:on|last|this|next)\s+"
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|month|night)|yesterday|today|tonight|"
    rf"this morning|at \d{{1,2}}:\d{{2}}|in (?:19|20)\d{{2}}|(?:in|of|until|since|by|early|late|mid)[- ]{structure._MONTH})\b",
    re.IGNORECASE)

# the one alternation the taxonomy was: its shapes with the whole-text one as a ``^`` alternative
_TAXONOMY = re.compile(
    r"\b(?:consists? of|is made (?:up )?of|comprises?|is composed of|is divided into|are (?:split|grouped) into|"
    r"(?:kinds?|types?|sorts?|categories|classes|families) of|is an? (?:kind|type|sort|form|subclass|member) of|"
    r"belongs? to|falls? under|includes? (?:the )?(?:following|three|four|five|two))\b"
    r"|\b(?:has|have|contains?) (?:two|three|four|five|six|\d+) (?:\w+ ){0,2}(?:services|parts|modules|components|"
    rf"packages|layers|tiers|teams|kinds|types):|^{structure._IS_A.pattern}",
    re.IGNORECASE)


def _lowered(text: str) -> str | None:
    return text.lower() if text.isascii() or classify.ODD_CASES.isdisjoint(text) else None


def _taxonomy(text: str) -> bool:
    trimmed = text.strip().rstrip(".")
    return bool(structure._is_taxonomy(trimmed, _lowered(text)) or structure._IS_A.match(trimmed))


def _timeline(text: str) -> bool:
    return structure._is_timeline(text, _lowered(text))


def _by_cues(text: str) -> str | None:
    """``classify._by_cues`` without its word checks: every pattern searched, in order."""
    return next((kind for kind, pattern in classify._KIND_CUES if pattern.search(text)), None)


def _bench_texts() -> list[str]:
    sys.path.insert(0, str(ROOT / "bench"))
    from synth import memory_texts

    texts = list(memory_texts(3000))
    for path in sorted((ROOT / "bench").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line) if line.strip() else {}
            for key in ("text", "query", "a", "b"):
                if isinstance(record.get(key), str):
                    texts.append(record[key])
    return texts


# Pieces the patterns turn on: digits of two scripts, units, separators, ports, prices, the letters
# that case-fold oddly (Kelvin sign, long s, dotted and dotless i).
_PIECES = st.sampled_from(["on Monday", "TODAY", "toNight", "this morning", "in-May", "mid Sept", "3 mar", "Dec 12",
                           "2026-05-01", "at 9:30", "in 1999", "made of", "consists of", "a kind of", "Kind",
                           "ſort", "is a form of", "has three services:", "HAS 12 core Modules:", "at 10:30", "In 2019", "v1.2",
                           "V3.4.5", "x2.1", "12 Dec", "Port 80", "pORT:443", "4", "45", "3.11", "v2.4.1", "٣", "12,5", " ", "  ", "\n", "-", ".", ",", ":", "=", ":=",
                           "$", "€", "£", "ms", "MB", "seconds", "km/h", "%", "port", "PORT", "localhost",
                           "db.internal", "_", "KEY", "K", "ſ", "ı", "İ", "is", "a", "x", "the", "timeout"])
_TEXTS = st.lists(_PIECES, max_size=14).map("".join) | st.text(max_size=60)
# The cue phrases themselves, cut and recased, beside the characters that case-fold onto i, s and k.
_CUE_PIECES = st.sampled_from(sorted({w for words in classify._CUE_WORDS.values() for w in words}
                                     | {"I", "We", "WE ", "ſtep", "\u0130 will", "\u0131 am a", "\u212aey", "  ", " ", ".",
                                        ",", "`", "$", "then", "to", "run", "decided", "going forward", "always",
                                        "never", "is", "are", "an", "Redis", "kind of", "consists of", "\n", "x"}))
_CUE_TEXTS = st.lists(_CUE_PIECES, max_size=10).map("".join).flatmap(
    lambda t: st.sampled_from([t, t.upper(), t.title(), t.swapcase()]))
# Texts holding a match of each pattern (hypothesis writes them from the pattern: every alternative, any case)
_MATCHING = st.one_of(*[st.from_regex(pattern) for _, pattern in classify._KIND_CUES],
                      st.from_regex(_TAXONOMY), st.from_regex(_LEDGER), st.from_regex(_TIMELINE))


def test_ledger_shapes_match_the_one_alternation_on_the_bench_texts() -> None:
    texts = _bench_texts()
    assert len(texts) > 3000
    assert [structure._is_ledger(t[:2000]) for t in texts] == [bool(_LEDGER.search(t[:2000])) for t in texts]


@settings(max_examples=800, deadline=None)
@given(_TEXTS | _MATCHING)
def test_ledger_shapes_match_the_one_alternation(text: str) -> None:
    assert structure._is_ledger(text) == bool(_LEDGER.search(text))


def test_kind_cues_and_taxonomy_match_their_plain_forms_on_the_bench_texts() -> None:
    texts = _bench_texts()
    assert [classify._by_cues(t) for t in texts] == [_by_cues(t) for t in texts]
    assert [_taxonomy(t[:2000]) for t in texts] == [bool(_TAXONOMY.search(t[:2000].strip().rstrip("."))) for t in texts]
    assert [_timeline(t[:2000]) for t in texts] == [bool(_TIMELINE.search(t[:2000])) for t in texts]


@settings(max_examples=1000, deadline=None)
@given(_CUE_TEXTS | _TEXTS | _MATCHING)
def test_kind_cues_and_taxonomy_match_their_plain_forms(text: str) -> None:
    assert classify._by_cues(text) == _by_cues(text)
    assert _taxonomy(text) == bool(_TAXONOMY.search(text.strip().rstrip(".")))
    assert _timeline(text) == bool(_TIMELINE.search(text))
