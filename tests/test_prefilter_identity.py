"""Intake's supersession check decides the same with its prefilters as without them.

Each prefilter skips work that a rule's precondition shows cannot decide anything (next to the rule it
guards, behind that module's ``PREFILTER`` switch). A rule changed later so that the precondition no
longer holds fails here: the check runs with and without the prefilters over the bench's texts (the
coding sets, the contradiction pair files, the synthetic texts) and must decide alike.
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

WINDOW = 6  # a coding set's memories paired with this many after them (a set tells one project's story in order)


def _read(path: Path) -> list[dict[str, Any]]:
    import json

    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _texts_pairs() -> Iterator[tuple[str, str]]:
    """(newer, older) text pairs: every contradiction pair in both orders, neighbouring memories of each
    coding set in both orders, and the synthetic texts of one template."""
    sys.path.insert(0, str(ROOT / "bench"))
    from benchlib import HELD_OUT  # blind data is measured, never replayed

    for path in sorted((ROOT / "bench").glob("contradictions*.jsonl")):
        if path.name in HELD_OUT:
            continue
        for pair in _read(path):
            yield pair["new"], pair["old"]
            yield pair["old"], pair["new"]
    for path in sorted((ROOT / "bench").glob("coding_memory*.jsonl")):
        if path.stem.endswith("_queries") or path.name in HELD_OUT:
            continue
        texts = [row["text"] for row in _read(path)]
        for i, older in enumerate(texts):
            for newer in texts[i + 1 : i + 1 + WINDOW]:
                yield newer, older
                yield older, newer
    from synth import memory_texts

    by_start: dict[str, list[str]] = {}
    for text in memory_texts(600):
        by_start.setdefault(" ".join(text.split()[:2]), []).append(text)
    for texts in by_start.values():
        for older, newer in zip(texts, texts[1:]):
            yield newer, older


PAIRS = list(_texts_pairs())

# ``aligned``'s word test stands in for the token states: every word alike, none, or a fixed scatter
ALIKE: dict[str, Callable[[str, str], bool]] = {
    "all": lambda a, b: True,
    "none": lambda a, b: False,
    "scatter": lambda a, b: zlib.crc32(f"{a.lower()}|{b.lower()}".encode()) % 3 == 0,
}


@pytest.mark.parametrize("alike", sorted(ALIKE))
def test_alignment_decides_alike_with_and_without_its_prefilter(monkeypatch: pytest.MonkeyPatch, alike: str) -> None:
    from mem.enrich import aligned

    word_test = ALIKE[alike]
    with_prefilter = [aligned.replaced(newer, older, word_test) for newer, older in PAIRS]
    monkeypatch.setattr(aligned, "PREFILTER", False)
    without = [aligned.replaced(newer, older, word_test) for newer, older in PAIRS]
    assert with_prefilter == without
    if alike == "all":  # the word test decides some of these pairs: what the prefilter must not lose
        spelled = [aligned.replaced(newer, older) for newer, older in PAIRS]
        assert sum(a != b for a, b in zip(without, spelled)) >= 10


def test_corrections_decide_alike_with_and_without_their_prefilter(monkeypatch: pytest.MonkeyPatch) -> None:
    from mem.enrich import corrections

    readings = [(reading, older) for newer, older in PAIRS for kind in ("fact", "correction")
                if (reading := corrections.read(newer, kind)) is not None]

    def decisions() -> list[str | None]:
        return [corrections.corrects(reading, older, neighbour=near)
                for reading, older in readings for near in (True, False)]

    with_prefilter = decisions()
    monkeypatch.setattr(corrections, "PREFILTER", False)
    assert with_prefilter == decisions()
    assert sum(found is not None for found in with_prefilter) >= 100  # decisions both ways, not only None


TEXTS = sorted({text for pair in PAIRS for text in pair})


def test_corrections_read_alike_with_and_without_their_word_prefilters(monkeypatch: pytest.MonkeyPatch) -> None:
    """``read`` searches a change shape only in a text holding one of its words, and ``_numerals`` looks for
    a number spelled out only in a text holding one of the number words: the same readings either way."""
    from mem.enrich import corrections, settings
    from mem.runtime import clear_reader_caches

    def readings() -> list[Any]:
        clear_reader_caches()
        return [(corrections.read(text, kind), corrections._numerals(text))
                for text in TEXTS for kind in ("fact", "correction")]

    with_prefilter = readings()
    monkeypatch.setattr(corrections, "PREFILTER", False)
    monkeypatch.setattr(settings, "PREFILTER", False)
    try:
        assert with_prefilter == readings()
    finally:
        clear_reader_caches()
    assert sum(reading is not None and bool(reading.old) for reading, _ in with_prefilter) >= 50


def test_typed_values_are_found_shape_by_shape_as_the_alternation_finds_them() -> None:
    """``settings._typed_in`` (each value shape searched on its own) gives what ``_TYPED.finditer`` gives,
    on every text whole, lowercased and cut short (lookarounds at the ends)."""
    from mem.enrich import settings

    def spans(matches: Any) -> list[tuple[int, int, str | None, str]]:
        return [(m.start(), m.end(), m.lastgroup, m[m.lastindex + 1]) for m in matches]

    found = 0
    for text in TEXTS + ["`make  test` at 9:30, Mondays to Fridays; see https://x.io/a#b in #ops-help, europe-west4"]:
        for variant in (text, text.lower()):
            for cut in (len(variant), len(variant) // 2, len(variant) // 3):
                part = variant[:cut]
                expected = spans(settings._TYPED.finditer(part))
                assert spans(settings._typed_in(part)) == expected, part
                found += len(expected)
    assert found >= 500


def test_causal_readings_alike_with_and_without_the_shapes_marks(monkeypatch: pytest.MonkeyPatch) -> None:
    """``link.causal_reading`` searches a causal shape only in a text holding one of its marks: the same readings."""
    from mem.stages import link

    texts = TEXTS + ["AFTER the outage, we added alerts.", "The ROOT CAUSE of the slow page was an index.",
                     "Fixed the nightly build by pruning old Docker images."]

    def readings() -> list[Any]:
        link.causal_reading.cache_clear()
        return [link.causal_reading(text) for text in texts]

    with_prefilter = readings()
    monkeypatch.setattr(link, "PREFILTER", False)
    try:
        assert with_prefilter == readings()
    finally:
        link.causal_reading.cache_clear()
    assert sum(reading is not None for reading in with_prefilter) >= 50
