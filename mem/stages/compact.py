"""Extractive text compaction that never loses a name or a number.

Sentences are only dropped, never rewritten (beyond trimming filler words such as a leading
"Basically,"): exact repeats, near-duplicates whose facts another kept sentence already carries,
filler sentences ("Hope this helps!"), and, when the text is still over ``max_chars``, the
sentences that add the fewest new facts. Every name and number of the original (the facts of
``mem.lifecycle.merge``, plus the entities it names) is then checked to be in the result; a
budget that would cost a fact is not met (the result says so), and a result that lost one is
never returned.

>>> compact("Deploys run at 9am. Basically, deploys run at 9am! Hope this helps.")["text"]
'Deploys run at 9am.'
"""

from __future__ import annotations

import re
from typing import Any

from mem.errors import BadInput

NEAR = 0.8  # Jaccard of content words above which two sentences say the same thing
MAX_TEXT = 200_000

# Whole sentences that carry nothing: acknowledgements, sign-offs, meta-talk about the text.
_FILLER_SENTENCE = re.compile(
    r"^(?:(?:ok(?:ay)?|sure|thanks?(?: you)?(?: (?:so|very) much)?|great|cool|nice|got it|sounds good|perfect|"
    r"awesome|yeah|yep|right|hi|hello|hey|cheers|no problem|np|lol|good question|"
    r"(?:i )?hope (?:this|that|it) helps|let me know if (?:you have )?(?:any )?(?:other |more |further )?"
    r"(?:questions|anything else)|as (?:i )?(?:mentioned|said|noted) (?:above|before|earlier)|"
    r"let me (?:explain|summari[sz]e)|here(?:'s| is) (?:the|a) summary|in summary|to summari[sz]e|"
    r"that's (?:it|all)|anyway|anyways)[\s,!.:;-]*)+$", re.I)
# Filler words inside a sentence: dropping them keeps the meaning.
_FILLER_WORDS = re.compile(
    r"(?:^|(?<=[\s,(]))(?:basically|essentially|literally|obviously|honestly|as you know|needless to say|"
    r"as (?:i )?(?:mentioned|said|noted) (?:above|before|earlier)|of course)\b,?\s*", re.I)
_LEADING = re.compile(r"^(?:so|well|um+|uh+|ok(?:ay)?|anyway|now)\s*,\s*", re.I)
_WORDY = ((re.compile(r"\bin order to\b", re.I), "to"), (re.compile(r"\bdue to the fact that\b", re.I), "because"),
          (re.compile(r"\bat this point in time\b", re.I), "now"))
_WORD = re.compile(r"[\w'-]+")


def _split(text: str) -> list[tuple[int, str]]:
    """(line number, sentence) for every sentence, so line breaks (lists, paragraphs) survive."""
    from mem.lifecycle.merge import sentences

    out: list[tuple[int, str]] = []
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n")):
        out.extend((number, s) for s in sentences(line))
    return out


def _trim(sentence: str, removed: set[str]) -> str:
    """Drop filler words; the words dropped are recorded (they are the only 'facts' allowed to go)."""
    trimmed = sentence
    for pattern in (_LEADING, _FILLER_WORDS):
        for m in pattern.finditer(trimmed):
            removed.update(w.lower() for w in _WORD.findall(m.group(0)))
        trimmed = pattern.sub("", trimmed)
    for pattern, short in _WORDY:
        for m in pattern.finditer(trimmed):
            removed.update(w.lower() for w in _WORD.findall(m.group(0)))
        trimmed = pattern.sub(short, trimmed)
    trimmed = trimmed.strip()
    if not trimmed or not any(c.isalnum() for c in trimmed):
        return sentence
    return trimmed[0].upper() + trimmed[1:] if trimmed[0].islower() and sentence[:1].isupper() else trimmed


def _terms(sentence: str) -> frozenset[str]:
    from mem.text import content_terms

    return frozenset(content_terms(sentence))


def _facts(sentence: str) -> set[str]:
    """Names and numbers (merge's facts) plus the entities named, lowercased as written."""
    from mem.enrich.entities import extract_entities
    from mem.lifecycle.merge import facts

    return facts(sentence) | {e.surface.lower() for e in extract_entities(sentence) if e.type != "concept"}


def _near(a: frozenset[str], b: frozenset[str]) -> bool:
    if not a or not b:
        return False
    if a <= b or b <= a:
        return min(len(a), len(b)) >= 3  # "Use Redis." inside a longer sentence is not a repeat of it
    return len(a & b) / len(a | b) >= NEAR


def lost_facts(original: str, compacted: str, removed: set[str]) -> tuple[list[str], list[str]]:
    """(facts checked, facts missing from ``compacted``); filler words removed on purpose are exempt."""
    from mem.lifecycle.merge import missing_facts

    wanted = sorted(f for f in _facts(original) if f not in removed)
    lowered = compacted.lower()
    missing = [f for f in missing_facts([original], compacted) if f not in removed]
    missing += [f for f in wanted if f not in lowered and f not in missing]
    return wanted, sorted(missing)


def compact(text: str, max_chars: int | None = None) -> dict[str, Any]:
    """Compacted text, sizes, the facts checked to survive, and what was removed.

    >>> r = compact("We moved CI to GitHub Actions. Thanks! We moved CI to GitHub Actions on 2026-03-01.")
    >>> r["text"], r["facts"]
    ('We moved CI to GitHub Actions on 2026-03-01.', ['2026-03-01', 'actions', 'ci', 'github', 'github actions'])
    """
    from mem.text import tokens

    if not isinstance(text, str):
        raise BadInput("text must be a string")
    if len(text) > MAX_TEXT:
        raise BadInput(f"text too long ({len(text)} characters; at most {MAX_TEXT})")
    if max_chars is not None and (isinstance(max_chars, bool) or max_chars < 1):
        raise BadInput(f"max_chars must be a positive integer, got {max_chars!r}")
    removed_words: set[str] = set()
    counts = {"duplicates": 0, "near_duplicates": 0, "filler": 0, "over_budget": 0}

    # 1. exact repeats (case, spacing, punctuation aside) and filler sentences
    kept: list[tuple[int, str]] = []
    seen: set[tuple[str, ...]] = set()
    for line, sentence in _split(text):
        if _FILLER_SENTENCE.match(sentence):
            counts["filler"] += 1
            removed_words.update(w.lower() for w in _WORD.findall(sentence))
            continue
        sentence = _trim(sentence, removed_words)
        key = tuple(tokens(sentence))
        if not key or key in seen:
            counts["duplicates"] += bool(key)
            continue
        seen.add(key)
        kept.append((line, sentence))

    # 2. near duplicates: keep one of each group, the one carrying more facts, at the first one's place
    facts_of = [_facts(s) for _, s in kept]
    terms_of = [_terms(s) for _, s in kept]
    alive = [True] * len(kept)
    for j in range(len(kept)):
        for i in range(j):
            if not alive[i] or not _near(terms_of[i], terms_of[j]):
                continue
            if facts_of[j] <= facts_of[i]:
                alive[j] = False
            elif facts_of[i] <= facts_of[j]:  # the later one says more: it takes the earlier one's place
                kept[i], facts_of[i], terms_of[i] = (kept[i][0], kept[j][1]), facts_of[j], terms_of[j]
                alive[j] = False
            else:
                continue
            counts["near_duplicates"] += 1
            break
    sentences = [(line, s, f) for (line, s), f, ok in zip(kept, facts_of, alive) if ok]
    safe = _join([(line, s) for line, s, _ in sentences])
    note = None

    # 3. over budget: greedily keep the sentences adding the most facts not yet covered
    result = safe
    if max_chars is not None and len(safe) > max_chars:
        chosen: set[int] = set()
        covered: set[str] = set()
        size = 0
        while True:
            best = max((i for i in range(len(sentences)) if i not in chosen
                        and size + len(sentences[i][1]) + 1 <= max_chars + 1),
                       key=lambda i: (len(sentences[i][2] - covered), -len(sentences[i][1]), -i), default=None)
            if best is None:
                break
            chosen.add(best)
            covered |= sentences[best][2]
            size += len(sentences[best][1]) + 1
        budget = _join([(sentences[i][0], sentences[i][1]) for i in sorted(chosen)])
        _, missing = lost_facts(text, budget, removed_words)
        if missing:
            note = (f"max_chars {max_chars} not reached: it would lose {', '.join(missing[:10])}"
                    f"{' ...' if len(missing) > 10 else ''}; kept every fact instead")
        else:
            counts["over_budget"] = len(sentences) - len(chosen)
            result = budget

    checked, missing = lost_facts(text, result, removed_words)
    if missing:  # cannot happen by construction; the check is the guarantee, so it decides
        note = f"compaction would lose {', '.join(missing[:10])}: returning the original"
        result = text
        counts = dict.fromkeys(counts, 0)
    report: dict[str, Any] = {"text": result, "before": len(text), "after": len(result),
                              "facts": checked, "removed": counts}
    if note:
        report["note"] = note
    return report


def _join(sentences: list[tuple[int, str]]) -> str:
    """Sentences of one line joined by a space, lines by a newline (blank lines collapse)."""
    lines: list[list[str]] = []
    last = None
    for line, sentence in sentences:
        if line != last:
            lines.append([])
            last = line
        lines[-1].append(sentence)
    return "\n".join(" ".join(parts) for parts in lines)
