"""A statement that opens with the case it holds for: "In storm mode the crew app pings GPS every 15
seconds", "On the eu-central-1 stack audit events stay hot for two years", "For the September roster only,
Pairwise's time limit is lifted to three hours".

Such a statement is a row beside the general one ("The crew app sends a GPS ping every 60 seconds"), as a
fact about staging is beside production's (``mem.score.environment``): it does not replace it, nor does a
later general statement replace it. The opening phrase is read from its structure, not its words: a
preposition of scope first, then the words up to the first one the other text shares (where the common
subject begins) or a comma; a case it names in words the other text lacks is another case. Pure functions.

>>> narrowed("In storm mode the crew app pings GPS every 15 seconds.", "The crew app sends a GPS ping every 60 seconds.")
True
>>> narrowed("In Grafana the peak dashboard is called 'Registration Live'.", "The Grafana dashboard for the peak is 'Reg Week'.")
False
"""

from __future__ import annotations

import re

from mem.text import STOPWORDS

# A preposition that opens a statement with the case it holds for ("In storm mode", "On Saturdays", "For
# wall-time benchmarks,", "During the August sale"); "From now on" / "As of Monday" say when, not which case.
_OPENING = re.compile(r"^\s*(?:for|in|on|during|while|until|outside|within|except)\s+", re.IGNORECASE)
_WORD = re.compile(r"\w[\w.-]*|,")
PHRASE_WORDS = 8  # words read after the preposition, at most


def narrowed(text: str, other: str) -> bool:
    """Whether ``text`` opens with a case ``other`` does not name: a preposition of scope, then content words
    ``other`` lacks before the first it shares or a comma ("In *storm mode* the crew app ...", "For the
    *September roster* only, ...").

    >>> narrowed("For wall-time benchmarks, the perf bot threshold stays at 3%.", "Perf bot threshold is 0.5%.")
    True
    >>> narrowed("In the apps the idle timeout is 5 minutes.", "Idle lock in the app is 3 minutes now.")
    False
    """
    opening = _OPENING.match(text)
    if not opening:
        return False
    theirs = {_folded(w) for w in _WORD.findall(other)}
    for word in _WORD.findall(text[opening.end():])[:PHRASE_WORDS]:
        if word == ",":
            return False
        if word.lower() in STOPWORDS:
            continue
        return _folded(word) not in theirs  # the phrase's first content word: the other's subject, or a case of its own
    return False


def _folded(word: str) -> str:
    """Lowercased, a plural's "s" off ("apps" is "app"), so a case named again in the plural is the same."""
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
