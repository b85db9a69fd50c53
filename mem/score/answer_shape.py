"""What kind of thing a question asks for, and whether a memory holds one.

"How do I rebuild the search index?" is answered by a procedure (a command, or steps), not by the
memory that says what the index is; "which Flink version do the jobs run?" by a memory stating a
version, not by the one about Flink's checkpoints; likewise "how long" by a duration, "how often" by a
cadence, "how many" by a number. When the fusion puts a memory that cannot answer the question's form
above one on the same topic that can, search lifts the one that can just above it, the way a causal
question's explanation is lifted (``mem.score.causal.answers_first``). The form is read from the
question's structure (its question word and verb), never from its topic. Pure functions.

>>> wanted_shape("how do I rebuild the search index from scratch"), wanted_shape("command to run the API tests")
('procedure', 'procedure')
>>> wanted_shape("how does the matchmaker get told about tickets"), wanted_shape("how should I name a feature flag")
(None, None)

Tried and dropped: "who" questions wanting a memory that names a person (coding sets: three gained, three
lost: "Leila also reviews ...", "Marta covers ...", "the live-ops duty lead" answer who with a one-word
name or a role, which the entity reader does not see as a person).
"""

from __future__ import annotations

import re
from collections.abc import Container, Mapping, Sequence

SHAPE_TOP = 5  # best fused candidates compared (the causal step's window)
# The values a question's form asks for. Coding R@1 e .905 -> .916 (the compiler version), g .888 -> .897
# (the Flink version); a-d, f, h unchanged, after the readers learned "180 d", "40k" and "a single
# replica" (without them a and h each lost one). False: the ablation (procedures only).
VALUE_SHAPES = True

# An instruction asked for: "how do/can I/we <verb>", "how to <verb>", "what's the command/steps to",
# "command to". "How does X work" / "how are X hosted" ask for a description, "how should I name X" for a
# convention (coding set a and f: "named exports only", "flag keys are kebab-case"), not steps.
_HOW_TO = re.compile(r"\bhow\s+(?:do|can)\s+(?:i|we|you)\b|\bhow\s+to\b"
                     r"|\bwhat(?:'s|\s+is|\s+are)\s+the\s+(?:command|commands|steps)\b|^\s*(?:command|steps)\s+(?:to|for)\b",
                     re.IGNORECASE)
# A command or a path to type (backticks), or an instruction that opens with its goal ("To add a
# regional fleet: copy ...", "To promote a model open a PR ...").
_PROCEDURE = re.compile(r"`[^`\n]+`|^\s*to\s+[a-z]+\b", re.IGNORECASE)


# A value asked for by the question's form, and the value that answers it.
_ASKED_VALUE = (("duration", re.compile(r"\bhow\s+long\b(?!\s+ago)", re.IGNORECASE)),
                ("frequency", re.compile(r"\bhow\s+often\b", re.IGNORECASE)),
                ("count", re.compile(r"\bhow\s+many\b", re.IGNORECASE)),
                ("version", re.compile(r"\b(?:which|what)\s+(?:\w+\s+){0,2}version\b", re.IGNORECASE)))
_UNIT = r"(?:ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?|months?|y|years?)"
_VALUES = {
    "duration": re.compile(rf"\b\d+(?:\.\d+)?(?:\s*|-){_UNIT}\b|\b(?:an?|one)\s+(?:hour|day|week|month|year|minute)\b",
                           re.IGNORECASE),
    "frequency": re.compile(rf"\bevery\b|\bper\s+(?:\d+\s*)?{_UNIT}\b|\b(?:hourly|daily|nightly|weekly|monthly)\b"
                            r"|\bcron\b|\btimes\s+(?:a|an|per)\b", re.IGNORECASE),
    "count": re.compile(r"\b\d+(?:[.,]\d+)?k?\b|\b(?:single|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
                        r"|dozen|hundred|thousand)\b",
                        re.IGNORECASE),
    "version": re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)?(?![\w.])", re.IGNORECASE),
}


def wanted_shape(question: str) -> str | None:
    """``"procedure"`` for a question asking how to do something, else the value its form asks for
    (``"duration"``, ``"frequency"``, ``"count"``, ``"version"``; with ``VALUE_SHAPES``), else None.

    >>> wanted_shape("how long are snapshots kept"), wanted_shape("which Flink version do the jobs run")
    ('duration', 'version')
    """
    if not isinstance(question, str):
        return None
    if _HOW_TO.search(question):
        return "procedure"
    if VALUE_SHAPES:
        for shape, asked in _ASKED_VALUE:
            if asked.search(question):
                return shape
    return None


def holds(shape: str, text: str, kind: str = "fact") -> bool:
    """Whether a memory of ``kind`` saying ``text`` holds an answer of ``shape``.

    >>> holds("procedure", "Meilisearch can be rebuilt with `mix reindex`."), holds("procedure", "Search runs on Meilisearch.")
    (True, False)
    >>> holds("procedure", "Ask in #help.", kind="procedure")
    True
    """
    if shape == "procedure":
        return kind == "procedure" or bool(_PROCEDURE.search(text))
    return shape in _VALUES and bool(_VALUES[shape].search(text))


def shape_lifts(order: Sequence[int], holding: Container[int], on_topic: Container[int] | None = None) -> list[tuple[int, int]]:
    """``(answer, candidate)`` pairs for ``answers_first``: each of the best candidates (``order``, best
    first) that holds the wanted shape goes above each one ranked above it that does not. ``on_topic``:
    the candidates the question's meaning ranks among its best (the dense channel's first few); only
    those are lifted, so a memory that merely has the shape (any command) is not.

    >>> shape_lifts([1, 2, 3], {3}), shape_lifts([1, 2, 3], {3}, on_topic={1, 2}), shape_lifts([1, 2], {1})
    ([(3, 1), (3, 2)], [], [])
    """
    out: list[tuple[int, int]] = []
    for i, rowid in enumerate(order):
        if rowid in holding and (on_topic is None or rowid in on_topic):
            out += [(rowid, above) for above in order[:i] if above not in holding]
    return out


def holding(shape: str, memories: Mapping[int, object]) -> set[int]:
    """The rowids of ``memories`` (rowid -> ``mem.records.Memory``) that hold ``shape``."""
    return {r for r, m in memories.items() if holds(shape, getattr(m, "text", ""), getattr(m, "kind", "fact") or "fact")}
