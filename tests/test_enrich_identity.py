"""The enrichment's fast forms give what their plain forms give: each reference below is the one
regular expression the function used before it was split for speed (bench/README.md, "Bulk import"),
checked on the bench's texts and on generated ones built from the pieces the patterns look for."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from hypothesis import given, settings, strategies as st

from mem.enrich import structure

ROOT = Path(__file__).resolve().parent.parent

_LEDGER = re.compile(
    rf"\b\d+(?:[.,]\d+)?\s*(?:{structure._UNIT})\b(?!-)"
    r"|[$€£]\s?\d"
    r"|\b[A-Za-z_][\w.-]*\s*(?:=|:=)\s*\S"
    r"|\bport\s*(?:is\s+|:|=)?\s*\d{2,5}\b|\b(?:localhost|[\w-]+(?:\.[\w-]+)+):\d{2,5}\b"
    r"|\bv?\d+\.\d+(?:\.\d+)?\b",
    re.IGNORECASE)


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
_PIECES = st.sampled_from(["4", "45", "3.11", "v2.4.1", "٣", "12,5", " ", "  ", "\n", "-", ".", ",", ":", "=", ":=",
                           "$", "€", "£", "ms", "MB", "seconds", "km/h", "%", "port", "PORT", "localhost",
                           "db.internal", "_", "KEY", "K", "ſ", "ı", "İ", "is", "a", "x", "the", "timeout"])
_TEXTS = st.lists(_PIECES, max_size=14).map("".join) | st.text(max_size=60)


def test_ledger_shapes_match_the_one_alternation_on_the_bench_texts() -> None:
    texts = _bench_texts()
    assert len(texts) > 3000
    assert [structure._is_ledger(t[:2000]) for t in texts] == [bool(_LEDGER.search(t[:2000])) for t in texts]


@settings(max_examples=2000, deadline=None)
@given(_TEXTS)
def test_ledger_shapes_match_the_one_alternation(text: str) -> None:
    assert structure._is_ledger(text) == bool(_LEDGER.search(text))
