"""Heuristic kind and governance layer for memories that arrive without them."""

from __future__ import annotations

import re

# First match wins; ordered from the most specific cue to the most general.
_KIND_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("correction", re.compile(r"\b(actually|correction|that was wrong|was wrong|no longer|not anymore|instead of|mistaken|turns out|we were wrong|fixed the claim)\b", re.I)),
    ("decision", re.compile(r"\b(we (?:have )?(?:decided|chose|picked|agreed|settled on|went with|are going with|will use|switched)|decision:|decided to|chose to|opted (?:for|to)|going forward we)\b", re.I)),
    ("commitment", re.compile(r"\b(i will|i'll|we will|we'll|promise[sd]?|by (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|next week|eod|end of)|deadline|todo:)\b", re.I)),
    ("preference", re.compile(r"\b(i prefer|we prefer|prefers?|i like|i don't like|i dislike|always use|never use|please (?:always|never)|favou?rite)\b", re.I)),
    ("procedure", re.compile(r"(\bto \w+[^.]{0,60}, run\b|\brun `|\bsteps?:|\bhow to\b|\bfirst,? .{0,80}then\b|^\s*\$ )", re.I)),
    ("identity", re.compile(r"\b(my name is|i am an?|i'm an?|i work (?:at|as|for)|our team is|this project is)\b", re.I)),
)
_SPEAKER_TURN = re.compile(r"^[A-Z][\w .'-]{0,40}:\s")

TAG_LAYERS = {"identity": 1, "constitutional": 1, "decision": 2, "correction": 2, "commitment": 2,
              "legislative": 2, "episode": 4, "conversation": 4, "ephemeral": 4}
KIND_LAYERS = {"identity": 1, "decision": 2, "correction": 2, "commitment": 2, "episode": 4}


def guess_kind(text: str) -> str:
    """Kind from cue phrases; a dialogue turn ("Alice: ...") is an episode; else a fact.

    >>> guess_kind("We decided to use Redis for the cache")
    'decision'
    """
    for kind, pattern in _KIND_CUES:
        if pattern.search(text):
            return kind
    if _SPEAKER_TURN.match(text):
        return "episode"
    return "fact"


def layer_for(kind: str, tags: list[str]) -> int:
    """Governance layer: identity 1; decision, correction, commitment 2; episode/conversation 4; else 3.

    Tags win over kind, so ``--tag constitutional`` lifts any memory to layer 1.
    """
    tag_layers = [TAG_LAYERS[t.lower()] for t in tags if t.lower() in TAG_LAYERS]
    if tag_layers:
        return min(tag_layers)
    return KIND_LAYERS.get(kind, 3)
