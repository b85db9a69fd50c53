"""Speaker-aware matching: a query that names a person favours what that person said.

Chat logs, meeting notes and transcripts store turns as ``"<Name>: <text>"``. When a query names
one of the speakers ("What does Melanie do to relax?"), that speaker's own turns are the likelier
answer than the other speakers' turns that merely share the words. Pure functions, no I/O: the
search stage reads the candidates' texts and applies :func:`speaker_factors` to the fused scores.

The prefix must look like a name (one to three capitalized words, each with a lowercase letter),
and the query must contain it with the same capitalization, so labels such as ``"API rate limit:"``
or ``"Local dev:"`` are never taken for speakers.

>>> speaker_of("Melanie: I ran a charity race last weekend.")
'Melanie'
>>> speaker_of("Env var rename: STRIPE_KEY is now STRIPE_SECRET_KEY") is None
True
>>> speaker_factors("What did Melanie paint?", {1: "Melanie: a sunset", 2: "Caroline: nice!", 3: "no prefix"}, 0.2)
{2: 0.8}
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_SPEAKER = re.compile(r"^([A-Z][a-z][\w'.-]*(?: [A-Z][a-z][\w'.-]*){0,2}):\s")


def speaker_of(text: str) -> str | None:
    """The name-like ``"<Name>: "`` prefix of a memory's text, else None."""
    m = _SPEAKER.match(text or "")
    return m.group(1) if m else None


def named(query: str, speaker: str) -> bool:
    """Whether ``query`` names ``speaker`` as a whole word, same capitalization ("Melanie's" counts)."""
    return re.search(rf"(?<![\w-]){re.escape(speaker)}(?![\w-])", query) is not None


def wanted_speakers(query: str, texts: Mapping[int, str]) -> set[str]:
    """The speakers of ``texts`` that ``query`` names; empty when it names none or every one of them."""
    present = {s for s in map(speaker_of, texts.values()) if s}
    wanted = {s for s in present if named(query, s)}
    return set() if wanted == present else wanted


_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'd|we'll|us|our|ours)\b",
                           re.IGNORECASE)


def self_referring(text: str) -> bool:
    """Whether a turn's words (after its ``"<Name>: "`` prefix) speak in the first person.

    >>> self_referring("Melanie: I love camping with my kids."), self_referring("Melanie: Wow, that's great!")
    (True, False)
    """
    speaker = speaker_of(text)
    body = text[len(speaker) + 1:] if speaker else text
    return _FIRST_PERSON.search(body or "") is not None


def speaker_factors(query: str, texts: Mapping[int, str], penalty: float,
                    wanted: set[str] | None = None, self_penalty: float = 0.0) -> dict[int, float]:
    """``rowid -> factor`` for candidates spoken by someone else when the query names a speaker.

    ``wanted``: the named speakers (default: :func:`wanted_speakers` over ``texts``); when the
    query names none of the speakers present, or every one of them, nothing changes. Memories
    without a speaker prefix are never touched. ``self_penalty``: what a turn with no first-person
    word loses on top (:func:`self_referring`), whoever speaks it.
    """
    if wanted is None:
        wanted = wanted_speakers(query, texts)
    if not wanted:
        return {}
    factors = {}
    for rowid, text in texts.items():
        speaker = speaker_of(text)
        if not speaker:
            continue
        factor = 1.0 - penalty if speaker not in wanted else 1.0
        if self_penalty and not self_referring(text):
            factor *= 1.0 - self_penalty
        if factor != 1.0:
            factors[rowid] = round(factor, 6)
    return factors
