"""Merging near-duplicate memories: extractive by default, with a survival check for LLM merges.

Extractive: every distinct sentence of every original, in order (originals oldest first), each
once; sentences that differ only in case, spacing or final punctuation count as the same. No fact
is lost because no sentence is rewritten.

>>> merge_extractive(["Deploys run at 9am. The runner is on box A.", "deploys run at 9am!  Alerts go to Slack."])
'Deploys run at 9am. The runner is on box A. Alerts go to Slack.'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_SPACES = re.compile(r"\s+")
# Names (any word with a capital letter that is not a stopword: over-strict at sentence starts,
# which only makes the check refuse more merges) and numbers (anything with a digit).
_NUMBER = re.compile(r"\b[\w.:/-]*\d[\w.:/-]*\b")
_NAME = re.compile(r"\b\w*[A-Z][\w.-]*\w|\b[A-Z]\b")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _key(sentence: str) -> str:
    return _SPACES.sub(" ", sentence.lower()).strip().rstrip(".!?;:, ")


def merge_extractive(texts: Sequence[str]) -> str:
    seen: set[str] = set()
    kept: list[str] = []
    for text in texts:
        for sentence in sentences(text):
            key = _key(sentence)
            if not key or key in seen:
                continue
            seen.add(key)
            kept.append(sentence if sentence[-1] in ".!?" else sentence + ".")
    return " ".join(kept)


def facts(text: str) -> set[str]:
    """Names and numbers in ``text`` (lowercased), the things a merge must keep.

    >>> sorted(facts("We moved CI to GitHub Actions on 2026-03-01; port 8080."))
    ['2026-03-01', '8080', 'actions', 'ci', 'github']
    """
    found = {m.group(0).lower().rstrip(".") for m in _NUMBER.finditer(text)}
    from mem.text import STOPWORDS

    found |= {m.group(0).lower().rstrip(".") for m in _NAME.finditer(text) if m.group(0).lower() not in STOPWORDS}
    return {f for f in found if f}


def missing_facts(originals: Sequence[str], merged: str) -> list[str]:
    """Names and numbers of the originals that ``merged`` lost (empty: the merge is safe).

    >>> missing_facts(["Alice set the timeout to 30s."], "The timeout is 30s.")
    ['alice']
    """
    lowered = merged.lower()
    wanted = set().union(*(facts(t) for t in originals)) if originals else set()
    return sorted(f for f in wanted if f not in lowered)
