"""A memory's text cut into clauses, and each clause read for its frame: lower-cased, contractions
expanded, labels ("Note:") and time frames ("as of May", "... now") stripped, negation cues and
contrast tails ("use pnpm, not npm") taken off and turned into a polarity and denied values.

Questions, conditionals, plans and hedges are left out here, so the pattern table
(:mod:`mem.enrich.claim_patterns`) only sees clauses that state something.

>>> [c.strip() for c in clauses("We use Redis, but the worker uses Celery. Should we use Kafka?")]
['We use Redis', 'the worker uses Celery.']
>>> read_clause("Previously, we didn't use pnpm now.")[:4]
('we use pnpm', ['we', 'use', 'pnpm'], False, True)
"""

from __future__ import annotations

import re
from typing import Optional

from mem.enrich.lazy_regex import LazyRe, trie
from mem.enrich.timestamps import MONTHS

_MAX_TEXT = 20_000      # bound the work on pathological inputs; memories are short
_MAX_CLAUSE = 300       # a "clause" longer than this is prose, not a simple assertion

# Words that mark a clause as a plan, hedge or hypothetical rather than a fact.
_HYPOTHETICAL = LazyRe(
    r"\b(?:if|unless|whether|suppose|supposing|assuming|would|could|might|maybe|perhaps|possibly|"
    r"probably|consider|considering|considered|evaluate|evaluating|evaluated|exploring|explore|"
    r"think|thinking|thought|wonder|wondering|propose|proposed|proposal|plan|plans|planning|"
    r"planned|"
    r"want to|wants to|hope|hoping|eventually|someday|in the future|later|soon|roadmap|todo|tbd|"
    r"try|trying|tried|experiment|experimenting|prototype|prototyping|guess|believe|not sure|"
    r"unclear|possible|ideally|hypothetically|imagine|pretend|can we|let's see|may (?:be|use|want|"
    r"need|have|switch|move|not|also)|next (?:week|month|quarter|year|sprint|release|version))\b")
# First words of _HYPOTHETICAL's phrases; the regex only runs when one is present.
_HYPOTHETICAL_GATE = frozenset(re.findall(r"[a-z']+", _HYPOTHETICAL.pattern.replace("?:", ""))) - {
    "b", "be", "use", "have", "need", "not", "also", "the", "to", "in", "week", "month", "quarter",
    "year", "sprint", "release", "version", "move", "switch", "we", "see"}
# A question starts with an auxiliary and a subject, or with a question word.
_QUESTION_VERBS = ("should", "could", "would", "can", "do", "does", "did", "is", "are", "was", "were", "shall",
                   "will", "has", "have", "had")
_QUESTION_WORDS = ("what", "why", "how", "which", "who", "whom", "whose", "any idea", "anyone know")
_QUESTION_START = LazyRe(
    rf"^(?:{'|'.join(_QUESTION_VERBS)})\s+"
    r"(?:we|i|you|they|it|the|our|this|that|there|he|she|anyone|anybody|someone|your|my)\b|"
    rf"^(?:{'|'.join(_QUESTION_WORDS)})\b")
_CONDITIONS = ("if", "unless", "when", "whenever", "suppose", "assuming", "in case", "once")
_CONDITIONAL_START = LazyRe(rf"^(?:{'|'.join(_CONDITIONS)})\b")
# First words of the phrases above: the regex behind each only runs for a clause starting with one.
_QUESTION_GATE = frozenset(w.split(" ", 1)[0] for w in _QUESTION_VERBS + _QUESTION_WORDS)
_CONDITIONAL_WORDS = frozenset(w.split(" ", 1)[0] for w in _CONDITIONS)

_SENT_CHARS = LazyRe(r"[.!?;\n\u2014\u2013-]")
_CLAUSE_SPLIT = LazyRe(
    r",?\s+(?:but|whereas|although|though|however)\s+|,\s*while\s+|"
    r",\s+and\s+(?=(?:we|i|the|our|it|they|its|this|that|my)\b)|"
    r"\s+and\s+(?=(?:we|i|it|they)\s)|,\s+so\s+", re.IGNORECASE)
# Cheap substring gates: the regex behind each runs only when its cue can be present.
_CLAUSE_HINT = LazyRe(r" (?:but|whereas|although|though|however|while|and|so) ")
_NEGATION_WORDS = frozenset({"not", "never", "no", "used", "stopped", "stop", "quit", "ceased",
                             "cannot"})
_CONTRAST_WORDS = frozenset({"not", "instead", "rather", "place", "over"})
_CONTRACTIONS = LazyRe(r"\b(won|can|ca|shan)'t\b|n't\b|'(re|m|ve|ll|d)\b|"
                       r"\b(it|that|what|there|here|who|everything|nothing|he|she)'s\b")
_NEGATED_MODALS = {"won": "will not", "can": "cannot", "ca": "cannot", "shan": "shall not"}
_CONTRACTION_WORDS = {"re": " are", "m": " am", "ve": " have", "ll": " will", "d": " would"}
_LABEL = (
    r"(?:note|notes|fyi|update|updated|decision|decided|correction|corrected|important|reminder|"
    r"heads[- ]up|tl;?dr|context|fact|edit|edited|ps|nb|btw|summary|info|rule|policy|convention|"
    r"preference|learned|lesson|memory|remember|confirmed)\s*[:\-\u2013\u2014]\s*")
_LEAD_COMMA = (
    r"(?:actually|also|so|ok|okay|now|currently|today|recently|anyway|however|additionally|"
    r"furthermore|moreover|finally|then|and|but|plus|oh|well|yes|no|nope|yeah|right|going forward|"
    r"from now on|for now|these days|nowadays|as of [^,]{1,40}|since [^,]{1,30}|"
    r"starting [^,]{1,30}|"
    r"effective [^,]{1,30}|after [^,]{1,40}|in [^,]{1,25}|on [^,]{1,25}|last \w+|this \w+|"
    r"yesterday|earlier|for the record|to be clear|to clarify|just to clarify|for context|"
    r"in practice|turns out|it turns out|apparently|previously|originally|initially|"
    r"at first|formerly|in the past|back then|before that|before)\s*,\s*")
_LEAD_WORD = (
    r"(?:actually|also|so|now|currently|recently|anyway|additionally|finally|then|and|but|plus|"
    r"well|nowadays|again|please|(?:it )?turns out(?: that)?|(?:we|i) (?:have )?(?:decided|agreed|"
    r"confirmed|found|noticed|learned|realized|verified|determined) that|note that|"
    r"previously|originally|initially|formerly)\s+")
# One anchored alternation: labels ("Note:"), comma frames ("As of May,") and lead words ("Also").
_LEAD = LazyRe(f"^(?:{_LABEL}|{_LEAD_COMMA}|{_LEAD_WORD})")
# First words of everything _LEAD can strip; the regex only runs for these.
_LEAD_FIRST_WORDS = frozenset("""
note notes fyi update updated decision decided correction corrected important reminder heads
heads-up tl tl;dr context fact edit edited ps nb btw summary info rule policy convention preference
learned lesson memory remember confirmed actually also so ok okay now currently today recently
anyway however additionally furthermore moreover finally then and but plus oh well yes no nope
yeah right going from for these nowadays as since starting effective after in on last this
yesterday earlier to just turns it apparently previously originally initially at formerly back
before please we i again
""".split())
# Frames that put the clause in the past: "Previously, the database was MySQL" denies it now.
_PAST_LEAD = ("previously", "originally", "initially", "at first", "formerly", "in the past",
              "back then", "before")
# Temporal frames that can close a clause, each matched whole against the clause's last few words.
_FRAMES = (
    "now", "instead", "anymore", "any more", "these days", "nowadays", "going forward", "from now on", "for now",
    "again", "too", "as well", "also", "currently", "already", "today", "at the moment", "at this point",
    "by default", r"as of [\w .,/-]+", r"since [\w .,/-]+", r"effective [\w .,/-]+", r"starting [\w .,/-]+",
    "after the (?:upgrade|migration|move|switch|change|refactor|rewrite|outage|incident)", r"as part of [\w .-]+",
    "last (?:week|month|quarter|year|sprint|night|morning|time)",
    "this (?:week|month|quarter|year|sprint|night|morning|time)", "yesterday", "recently", "earlier today", "tonight",
    rf"in (?:q[1-4]|\d{{4}}|{trie(MONTHS)})(?: \d{{4}})?")
_TRAILING = LazyRe("(?:" + "|".join(_FRAMES) + ")")
# Only word-suffixes starting with a frame's first word are tried; and a value only needs the check
# at all when its last word can end a frame (the last word, or the words of a closing "(?:a|b)").
_FRAME_START = frozenset(f.split(" ", 1)[0] for f in _FRAMES)
_TRAIL_LAST = frozenset(w for f in _FRAMES
                        for w in f.rsplit(" ", 1)[-1].removeprefix("(?:").removesuffix(")").split("|") if w.isalpha())
EDGE_PUNCT = " \t\"'`*.,:;!?()[]{}<>"

# Negation: each rule removes its cue so the positive pattern table can match; polarity flips.
_NEGATIONS: tuple[tuple[LazyRe, str], ...] = (
    (LazyRe(r"\bused to\s+(?=(?:use|be|run|work|live|own|maintain|deploy|host|listen|have|"
            r"rely|depend|prefer|go|require|need)\b)"), ""),
    (LazyRe(r"\b(?:stopped|stop|quit|ceased)\s+using\b"), "use"),
    (LazyRe(r"\b(?:stopped|stop|quit|ceased)\s+(?=\w+ing\b)"), ""),
    (LazyRe(r"\b(?:do|does|did|will|would|should|must|can|could)\s+(?:not|never)\s+"), ""),
    (LazyRe(r"\bcannot\s+"), ""),
    (LazyRe(r"\b(?:no longer|never|not|no more)\s+"), ""),
)
_CONTRAST_TAIL = LazyRe(
    r"^(?P<head>.+?)(?:,\s*(?:and\s+|but\s+)?not\s+|\s+(?:instead of|rather than|in place of)\s+)"
    r"(?P<neg>[^,]+?)(?P<tail>\s+(?:for|as)\s+[^,]+)?$")
_CONTRAST_LEAD = LazyRe(r"^(?:instead of|rather than)\s+(?P<neg>[^,]+),\s*(?P<head>.+)$")
_CONTRAST_OVER = LazyRe(
    r"^(?P<head>.*\b(?:chose|choose|picked|pick|prefer|prefers|preferred|selected|select|went with|"
    r"go with|opted for|favou?r|favou?rs)\b.+?)\s+over\s+(?P<neg>[^,]+?)"
    r"(?P<tail>\s+(?:for|as|when|in)\s+[^,]+)?$")


def _expand_contractions(s: str) -> str:
    def repl(m: re.Match[str]) -> str:
        if m.group(1):
            return _NEGATED_MODALS[m.group(1)]
        if m.group(2):
            return _CONTRACTION_WORDS[m.group(2)]
        if m.group(3):
            return m.group(3) + " is"
        return " not"
    return _CONTRACTIONS.sub(repl, s)


def strip_trailing(s: str, quick: bool = False) -> str:
    """Drop trailing temporal frames ("... now", "... as of March 2024").

    Rather than searching the tail with one big alternation at every position, try the last few
    word-suffixes that start with a frame word, each as an anchored full match: far cheaper.
    ``quick`` only looks when the last word can end a frame (the clause was fully stripped once).

    >>> strip_trailing("we use pnpm now"), strip_trailing("ci moved to github actions in march")
    ('we use pnpm', 'ci moved to github actions')
    """
    while True:
        if quick and s[s.rfind(" ") + 1:] not in _TRAIL_LAST:
            return s
        words = s.rsplit(" ", 7)
        if _FRAME_START.isdisjoint(words) and not s.endswith(","):
            return s
        cut = 0
        for k in range(1, len(words)):  # k < len(words): something must remain
            if words[-k].strip(",") in _FRAME_START \
                    and _TRAILING.fullmatch(" ".join(words[-k:]).strip(",")):
                cut = k  # keep looking: "as of march 2024" beats "2024"
        if not cut:
            return s
        t = " ".join(words[:-cut]).rstrip(EDGE_PUNCT)
        if not t:
            return s
        s = t



def _prepare(clause: str) -> tuple[str, bool]:
    """Lowercase, expand contractions, strip labels and time frames; flag a "previously" frame."""
    c = clause.lower()
    if "\u2019" in c or "\u2018" in c:
        c = c.replace("\u2019", "'").replace("\u2018", "'")
    if "`" in c or "*" in c:  # markdown emphasis and inline code carry no meaning here
        c = c.replace("`", "").replace("**", "").replace("__", "")
    if "'" in c:
        c = _expand_contractions(c)
    c = " ".join(c.split()).strip(EDGE_PUNCT)
    past = False
    for _ in range(3):
        if c[:c.find(" ") + 1 or len(c)].rstrip(" ,:-*") not in _LEAD_FIRST_WORDS:
            break
        m = _LEAD.match(c)
        if not m:
            break
        if c.startswith(_PAST_LEAD):
            past = True
        c = c[m.end():].strip(EDGE_PUNCT)  # "**Decision:** use uv" leaves "** use uv"
    return strip_trailing(c), past


_TOKEN_SPLIT = LazyRe(r"[\s,;:()]+")


def read_clause(surface: str) -> Optional[tuple[str, list[str], bool, bool, list[str]]]:
    """The clause as the pattern table reads it, None for a question, a plan or a hedge; else
    ``(text, tokens, polarity, past, denied)``: the text lower-cased with its frames and negation cues
    stripped, its words (for the table's triggers), False when an odd number of negation cues was
    taken off, True after a "previously" frame (what it says held before, not now), and the
    alternatives a contrast tail rejects ("not npm"). A plain tuple: a named one costs two Python
    calls more for every clause intake reads."""
    c, past = _prepare(surface)
    if not c or len(c) > _MAX_CLAUSE:
        return None
    tokens = _TOKEN_SPLIT.split(c)
    token_set = frozenset(tokens)
    if not token_set.isdisjoint(_HYPOTHETICAL_GATE) and _HYPOTHETICAL.search(c):
        return None
    if tokens[0] in _QUESTION_GATE and _QUESTION_START.match(c):
        return None
    # Contrast tails name a denied alternative: "use pnpm, not npm", "Z instead of Y for X".
    negs: list[str] = []
    for rx in ((_CONTRAST_LEAD, _CONTRAST_TAIL, _CONTRAST_OVER)
               if not token_set.isdisjoint(_CONTRAST_WORDS) else ()):
        m = rx.match(c)
        if m:
            negs.append(m["neg"])
            c = m["head"] + (m.groupdict().get("tail") or "")
            break
    pol = True
    if negs or not token_set.isdisjoint(_NEGATION_WORDS):
        for rx, repl in _NEGATIONS:
            c, n = rx.subn(repl, c)
            if n % 2:
                pol = not pol
        c = c.strip(EDGE_PUNCT)
        tokens = _TOKEN_SPLIT.split(c)
    return c, tokens, pol, past, negs


def _sentences(text: str) -> list[str]:
    """Split at sentence ends (keeping ``?`` so questions can be recognised), ``;``, newlines and
    spaced dashes. A char-class scan plus a loop is ~4x faster than a lookbehind split."""
    out: list[str] = []
    start = 0
    n = len(text)
    for m in _SENT_CHARS.finditer(text):
        i = m.start()
        ch = text[i]
        if ch in ".!?":
            if i + 1 < n and not text[i + 1].isspace():
                continue  # "fly.io", "3.12", "e.g.x"
            out.append(text[start:i + 1])
        elif ch in ";\n":
            out.append(text[start:i])
        else:  # a dash counts only when spaced: "Postgres - not MySQL", "X -- Y", "X — Y"
            if i == 0 or not text[i - 1].isspace():
                continue
            j = i + 1
            while j < n and text[j] in "-—–":
                j += 1
            if j < n and not text[j].isspace():
                continue
            out.append(text[start:i])
            start = j
            continue
        start = i + 1
    out.append(text[start:])
    return [part for sentence in out for part in _after_lead(sentence)]


# The plans and hedges of ``_HYPOTHETICAL`` that can lead a statement after a colon; not what was tried
# or evaluated ("Tried Bun for a week: we stay on Node" states what holds).
_PLANNED_LEAD = LazyRe(
    r"\b(?:plan|plans|planning|planned|proposal|proposed|propose|todo|tbd|roadmap|maybe|perhaps|might|could|"
    r"would|want to|wants to|hope|hoping|eventually|someday|in the future|next (?:week|month|quarter|year|"
    r"sprint|release|version))\b")
_LEAD_COLON = LazyRe(r"^\s*(?P<lead>[^:]{1,60}?):\s+(?P<rest>\S.*)$", re.DOTALL)


def _after_lead(sentence: str) -> list[str]:
    """"Reverted the pnpm switch: web/ is back on npm." -> the lead and the statement after it, as
    two clauses (a short lead of at most six words; "https:" and "a:b" have no space after the colon)."""
    if ": " not in sentence:
        return [sentence]
    m = _LEAD_COLON.match(sentence)
    if not m or len(m["lead"].split()) > 6 or len(m["rest"].split()) < 3:
        return [sentence]
    if _LEAD.match(sentence.lstrip().lower()):
        return [sentence]  # a label the clause parser strips itself ("Note: ..."), surface kept whole
    if _PLANNED_LEAD.search(m["lead"].lower()):
        # a lead that is a plan or a hedge governs what it introduces: "Plan: upgrade prod Postgres to
        # 16" states no version of prod Postgres, any more than "We plan to upgrade ..." does
        return [m["lead"]]
    return [m["lead"], m["rest"]]


def clauses(text: str) -> list[str]:
    """The clauses of ``text`` that can state something: sentences cut at their conjunctions
    ("..., but ...", "... and we ..."); questions and conditionals ("If ...") are left out."""
    out: list[str] = []
    for sentence in _sentences(text[:_MAX_TEXT]):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue
        lowered = sentence.lstrip(EDGE_PUNCT).lower()
        if lowered[:lowered.find(" ") + 1 or len(lowered)].rstrip(" ,") in _CONDITIONAL_WORDS \
                and _CONDITIONAL_START.match(lowered):
            continue
        parts = _CLAUSE_SPLIT.split(sentence) if "," in lowered or _CLAUSE_HINT.search(lowered) \
            else (sentence,)
        for clause in parts:
            if clause and clause.strip():
                out.append(clause)
    return out
