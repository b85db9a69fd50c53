"""Query classifier: single-hop, multi-hop, temporal or open-domain (search picks the speaker penalty by it).

Pure regex rules over the query text (plus what the caller already knows: whether the query
names a time, and how many known entities it names), so it is instant and deterministic.

>>> classify("When did we migrate to Postgres?", has_time=False, when_question=True)
'temporal'
>>> classify("Why did the billing worker crash after the Redis upgrade?", entity_count=1)
'multi-hop'
>>> classify("Would Caroline enjoy a hiking trip?")
'open-domain'
>>> classify("Which cache do we use?")
'single-hop'
"""

from __future__ import annotations

import re

QUERY_TYPES = ("single-hop", "multi-hop", "temporal", "open-domain")

_TEMPORAL = re.compile(
    r"\b(when|how long|how often|first time|last time|before|after|since|until|during|earlier|later|"
    r"recently|lately|ago|yesterday|today|tonight|tomorrow|last (?:week|month|year|night)|this (?:week|month|year))\b",
    re.IGNORECASE)
_MULTI = re.compile(
    r"\b(why|because|cause[sd]?|led to|lead to|result(?:ed)? in|relationship|related|connection|between|compare[sd]?|"
    r"both|and also|as well as|in common|same .* as|what happened after|what happened before|how did .* affect|"
    r"which .* that)\b",
    re.IGNORECASE)
_OPEN = re.compile(
    r"\b(would|might|could|likely|probably|think|opinion|suggest|recommend|advice|should (?:we|i|they)|"
    r"what kind of|what sort of|do you think|is it possible|interested in|enjoy|prefer)\b",
    re.IGNORECASE)


def classify(query: str, *, has_time: bool = False, when_question: bool = False, entity_count: int = 0) -> str:
    """One of ``QUERY_TYPES``. ``has_time``: the query names a date or period; ``when_question``: it
    asks for one; ``entity_count``: known entities it names (two or more suggest a multi-hop question)."""
    text = query if isinstance(query, str) else ""
    if has_time or when_question:
        return "temporal"
    if _OPEN.search(text) and not _MULTI.search(text):
        return "open-domain"
    if _MULTI.search(text) or entity_count >= 2:
        return "multi-hop"
    if _TEMPORAL.search(text):
        return "temporal"
    return "single-hop"

