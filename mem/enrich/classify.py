"""Heuristic kind and governance layer for memories that arrive without them."""

from __future__ import annotations

import re
from functools import lru_cache

from mem.enrich.entity_words import NOTE_LABELS as LABELS  # the one list of heading labels (no speakers)

# First match wins; ordered from the most specific cue to the most general.
_KIND_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("correction", re.compile(r"\b(actually|correction|that was wrong|was wrong|no longer|not anymore|instead of|mistaken|turns out|we were wrong|fixed the claim)\b", re.I)),
    ("decision", re.compile(r"\b(we (?:have )?(?:decided|chose|picked|agreed|settled on|went with|are going with|will use|switched)|decision:|decided to|chose to|opted (?:for|to)|going forward we)\b", re.I)),
    ("commitment", re.compile(r"\b(i will|i'll|we will|we'll|promise[sd]?|by (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|next week|eod|end of)|deadline|todo:)\b", re.I)),
    ("preference", re.compile(r"\b(i prefer|we prefer|prefers?|i like|i don't like|i dislike|always use|never use|please (?:always|never)|favou?rite)\b", re.I)),
    ("procedure", re.compile(r"(\bto \w+[^.]{0,60}, run\b|\brun `|\bsteps?:|\bhow to\b|\bfirst,? .{0,80}then\b|^\s*\$ )", re.I)),
    ("identity", re.compile(r"\b(my name is|i am an?|i'm an?|i work (?:at|as|for)|our team is|this project is)\b", re.I)),
)
# "Name: text" opens a dialogue turn when Name is a speaker; a heading label ("Note:", "Decision:")
# is not a speaker, and what follows it is classified by what it says (``LABELS``, which the entity reader and
# ``mem.stages.extract``'s transcript splitting read too).
_LEADING_LABEL = re.compile(r"^\s*(?:\*\*|__)?(?P<name>[A-Za-z][\w .'@-]{0,40}?)(?:\*\*|__)?\s*:(?:\*\*|__)?\s+(?P<text>\S.*)$",
                            re.S)
# Labels that name the kind themselves; any other label leaves the kind to the text after it.
_LABEL_KINDS = {"decision": "decision", "decisions": "decision", "decided": "decision", "adr": "decision",
                "correction": "correction", "todo": "commitment", "to do": "commitment", "action item": "commitment",
                "episode": "episode"}
_NAME_WORD = re.compile(r"^[A-Z][^\W\d_]*(?:['.-][^\W\d_]*)*$")  # "Caroline", "O'Brien", "Dr.": no digits ("T-42")


def is_speaker(name: str) -> bool:
    """A dialogue speaker label: one to three words, not a heading label.

    >>> is_speaker("Caroline"), is_speaker("Dr. Lee"), is_speaker("Note"), is_speaker("FYI")
    (True, True, False, False)
    """
    name = name.strip()
    return bool(name) and len(name.split()) <= 3 and " ".join(name.lower().split()) not in LABELS \
        and not _names_a_thing(name)


@lru_cache(maxsize=1024)  # a transcript's labels recur line after line (``mem.stages.extract`` asks for each)
def _names_a_thing(label: str) -> bool:
    """Whether a label names a thing, not a person: an acronym ("Ingest SLO:", "SOX:") or what the entity reader
    knows as a tool, a concept or an identifier ("ClickHouse:", "Leaderboard Redis:", "BorrowBox:"). Such a label
    heads a note about it; a name it does not know stays a speaker ("Mateus:", "O'Brien:").

    >>> _names_a_thing("Ingest SLO"), _names_a_thing("ClickHouse"), _names_a_thing("Caroline"), _names_a_thing("Dr. Lee")
    (True, True, False, False)
    """
    from mem.enrich.entities import extract_entities

    if any(len(word) > 1 and word.isupper() and word.isalpha() for word in label.split()):
        return True
    return any(e.type not in ("person", "name") for e in extract_entities(f"{label} said so."))


TAG_LAYERS = {"identity": 1, "constitutional": 1, "decision": 2, "correction": 2, "commitment": 2,
              "legislative": 2, "exact_value": 2, "episode": 4, "conversation": 4, "ephemeral": 4}
KIND_LAYERS = {"identity": 1, "decision": 2, "correction": 2, "commitment": 2, "episode": 4}
# A tag that names a kind sets the kind of a memory given none (first in this order wins).
_TAG_KINDS = ("correction", "decision", "commitment", "identity", "preference", "procedure", "episode")


# For each cue pattern, words one of which every match holds (in lower case): a text that holds none
# of them is not searched (most texts match no cue, and six searches cost ~19 us where these
# substring checks cost ~2). Exact: under re.IGNORECASE an ASCII letter matches only its two cases
# and four other characters (below), and a text holding one of those is searched as before.
_CUE_WORDS = {
    "correction": ("actually", "correction", "was wrong", "were wrong", "no longer", "not anymore", "instead of",
                   "mistaken", "turns out", "fixed the claim"),
    "decision": ("we ", "decision:", "decided to", "chose to", "opted ", "going forward we"),
    "commitment": ("i will", "i'll", "we will", "we'll", "promise", "by ", "deadline", "todo:"),
    "preference": ("prefer", "i like", "i don't like", "i dislike", "always use", "never use", "please ", "favo"),
    "procedure": (", run", "run `", "step", "how to", "first", "$ "),
    "identity": ("my name is", "i am a", "i'm a", "i work ", "our team is", "this project is"),
}
ODD_CASES = frozenset("\u0130\u0131\u017f\u212a")  # İ ı ſ K: match i, s, k under re.IGNORECASE


def _by_cues(text: str) -> str | None:
    lowered = text.lower() if text.isascii() or ODD_CASES.isdisjoint(text) else None
    for kind, pattern in _KIND_CUES:
        if lowered is not None and not any(word in lowered for word in _CUE_WORDS[kind]):
            continue
        if pattern.search(text):
            return kind
    return None


def label_kind(label: str) -> str | None:
    """The kind a heading label names ("Decision", "ADR", "Correction"), else None."""
    return _LABEL_KINDS.get(" ".join(label.lower().split()))


def guess_kind(text: str, tags: list[str] | None = None) -> str:
    """Kind from the text's structure and cue phrases, else a fact.

    A tag naming a kind wins; a leading label that names a kind ("Decision: ...") gives it; a
    dialogue turn ("Caroline: ...") is an episode whatever it says; other labelled notes ("Note:",
    "FYI:", "Important:", and a message relayed "From Marta:") are classified by the text after the label.

    >>> guess_kind("We decided to use Redis for the cache")
    'decision'
    >>> [guess_kind(t) for t in ("Decision: use gRPC", "Note: the VPN is required", "Caroline: I will go")]
    ['decision', 'fact', 'episode']
    >>> guess_kind("Redis is the cache", ["Decision"])
    'decision'
    >>> guess_kind("Ticket T-42: the deploy broke"), guess_kind("O'Brien: we'll see")
    ('fact', 'episode')
    >>> guess_kind("From Marta: I've handed billing-export over to Tom Reyes.")
    'fact'
    """
    lowered = {t.lower() for t in tags or ()}
    for kind in _TAG_KINDS:
        if kind in lowered:
            return kind
    label = _LEADING_LABEL.match(text)
    if label:
        name = " ".join(label.group("name").lower().split())
        if (kind := label_kind(name)) is not None:
            return kind
        if name in LABELS or name.startswith("from "):  # "From Marta: ..." relays a message: a note, no turn
            return _by_cues(label.group("text")) or "fact"
        if all(_NAME_WORD.match(word) for word in label.group("name").split()) and is_speaker(label.group("name")):
            return "episode"
    return _by_cues(text) or "fact"


def layer_for(kind: str, tags: list[str], *, pinned: bool = False) -> int:
    """Governance layer: identity 1; decision, correction, commitment 2; episode/conversation 4; else 3.

    Tags win over kind, so ``--tag constitutional`` lifts any memory to layer 1; a pinned memory, or
    one with a protected tag or kind (``mem.lifecycle.policy.PROTECTED_TAGS``), is at least layer 2.

    >>> layer_for("fact", ["exact_value"]), layer_for("episode", [], pinned=True), layer_for("fact", ["person:bo"])
    (2, 2, 2)
    """
    from mem.lifecycle import policy  # per memory: a module of the package is the cheap import (see add.as_time)

    tag_layers = [TAG_LAYERS[t.lower()] for t in tags if t.lower() in TAG_LAYERS]
    layer = min(tag_layers) if tag_layers else KIND_LAYERS.get(kind, 3)
    if pinned or policy.is_protected(tags, kind):
        layer = min(layer, 2)
    return layer
