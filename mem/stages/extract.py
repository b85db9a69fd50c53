"""Zero-LLM extraction of durable memories from a conversation transcript.

turns ("Speaker: text" lines, else blank-line paragraphs) -> sentences -> keep the ones that carry
something worth remembering, by cue: a kind cue (decision, correction, preference, procedure,
commitment, identity), a checkable assertion ("the API runs on port 8443"), or a date together
with an entity ("Carol joined on 2026-03-02"). Questions, greetings and short chit-chat are
dropped. The chosen sentences go through the real intake (``mem.stages.add``), so secrets are
rejected and duplicates are caught there, exactly as for ``mem add``.

>>> [(c.author, c.kind) for c in candidates("Alice: Hi! We decided to use Redis for the session cache.")]
[('Alice', 'decision')]
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mem.enrich.classify import is_speaker
from mem.errors import BadInput

if TYPE_CHECKING:
    from mem.stages.context import Context

MAX_CONVERSATION = 500_000  # characters; a transcript bigger than this is a file to import, not a tool call
MIN_TERMS = 2  # content words a kept sentence needs (after a leading "ok," / "thanks," is dropped)
TAG = "extracted"

# "Alice: ...", "User: ...", "**Bob:** ...": a speaker label opens a turn. Labels that are really
# headings ("Note:", "Decision:"; ``mem.enrich.classify.LABELS``) stay part of the text: some of
# them are the very cue we look for.
_SPEAKER = re.compile(r"^\s*(?:\*\*|__)?(?P<name>[A-Za-z][\w .'@-]{0,40}?)(?:\*\*|__)?\s*:(?:\*\*|__)?\s+(?P<text>.*)$")
_COMMAND = re.compile(r"^\s*\$\s+(?P<cmd>\S.*)$")
_FENCE = re.compile(r"^\s*```")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'`(\[]?[A-Z0-9])")
# A leading interjection says nothing; what follows it may ("Thanks, we'll ship it Friday").
_INTERJECTION = re.compile(
    r"^(?:(?:hi|hey|hello|thanks|thank you|ok|okay|sure|great|cool|nice|yeah|yep|yes|no|nope|well|so|"
    r"alright|right|perfect|awesome|got it|sounds good|good morning|good afternoon|morning|cheers|lol|haha|"
    r"oh|ah|hmm|um|uh)\b[\s,!.:;-]*)+", re.I)
_SMALL_TALK = re.compile(
    r"\b(how are you|how's it going|how was your|weekend|weather|have a (?:good|nice|great)|see you|"
    r"talk (?:to you )?later|good night|lunch|coffee|haha|lol)\b", re.I)
_NO_ENTITY_TYPES = frozenset({"concept"})  # "the cache" is not enough to anchor a date


@dataclass
class Candidate:
    """One sentence worth remembering, with where it came from and why it was kept."""

    turn: int
    author: str | None
    text: str
    kind: str
    cues: list[str] = field(default_factory=list)

    def to_record(self) -> dict[str, Any]:
        return {"record": "candidate", **asdict(self)}


def split_turns(conversation: str) -> list[tuple[str | None, str]]:
    """(speaker, text) per turn: "Name: ..." lines open turns; without any, blank-line paragraphs.

    Lines without a label continue the current turn. Lines of a code fence, and ``$ cmd`` lines,
    are kept as commands (wrapped in backticks) so they travel with the sentence before them.

    >>> split_turns("Alice: We use Redis.\\nIt runs on box A.\\nBob: ok")
    [('Alice', 'We use Redis.\\nIt runs on box A.'), ('Bob', 'ok')]
    """
    lines = conversation.replace("\r\n", "\n").split("\n")
    labelled = [m for m in map(_SPEAKER.match, lines) if m and is_speaker(m.group("name"))]
    turns: list[tuple[str | None, list[str]]] = []
    in_fence = False
    for line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            if line.strip():
                _append(turns, f"$ {line.strip()}")
            continue
        match = _SPEAKER.match(line) if labelled else None
        if match and is_speaker(match.group("name")):
            turns.append((match.group("name").strip(), [match.group("text")]))
        elif not line.strip():
            if not labelled:
                turns.append((None, []))  # paragraph break: the next lines are a new turn
        else:
            _append(turns, line)
    return [(who, "\n".join(body).strip()) for who, body in turns if "\n".join(body).strip()]


def _append(turns: list[tuple[str | None, list[str]]], line: str) -> None:
    if not turns:
        turns.append((None, []))
    turns[-1][1].append(line)


def split_sentences(turn: str) -> list[str]:
    """Sentences of one turn; a command line joins the sentence before it as `cmd`.

    >>> split_sentences("To deploy, run:\\n$ make deploy\\nDone. It took 5 minutes.")
    ['To deploy, run: `make deploy`', 'Done.', 'It took 5 minutes.']
    """
    out: list[str] = []
    for line in turn.split("\n"):
        command = _COMMAND.match(line)
        if command:
            cmd = f"`{command.group('cmd').strip().strip('`')}`"
            if out:
                out[-1] = f"{out[-1]} {cmd}"
            else:
                out.append(cmd)
            continue
        out.extend(s.strip() for s in _SENTENCE_END.split(line.strip()) if s.strip())
    return out


def cues_of(sentence: str, anchor: datetime) -> tuple[str, list[str]]:
    """(kind, cues) of one sentence; no cues means nothing durable was found.

    >>> from datetime import datetime, timezone
    >>> cues_of("The API gateway runs on port 8443.", datetime(2026, 3, 10, tzinfo=timezone.utc))
    ('fact', ['assertion'])
    """
    from mem.enrich.assertions import extract_assertions
    from mem.enrich.classify import guess_kind
    from mem.enrich.dates import resolve_dates
    from mem.enrich.entities import extract_entities

    cues: list[str] = []
    kind = guess_kind(sentence)
    if kind in ("fact", "episode"):
        kind = "fact"
    else:
        cues.append(kind)
    if extract_assertions(sentence):
        cues.append("assertion")
    if resolve_dates(sentence, anchor) and any(e.type not in _NO_ENTITY_TYPES for e in extract_entities(sentence)):
        cues.append("date")
    return kind, cues


def is_chatter(sentence: str) -> bool:
    """Questions, greetings, thanks and short remarks: never durable on their own.

    >>> [is_chatter(s) for s in ("Thanks!", "How was your weekend?", "I prefer pytest over unittest.")]
    [True, True, False]
    """
    from mem.text import STOPWORDS, tokens

    text = sentence.strip()
    if text.endswith("?"):
        return True
    rest = _INTERJECTION.sub("", text)
    terms = [t for t in tokens(rest) if t not in STOPWORDS and "'" not in t and len(t) > 1]
    return len(terms) < MIN_TERMS


def candidates(conversation: str, anchor: datetime | None = None) -> list[Candidate]:
    """The sentences of ``conversation`` worth remembering, in order, each once (pure: no store)."""
    from mem.text import content_hash

    if anchor is None:
        from datetime import timezone

        anchor = datetime.now(timezone.utc)
    found: list[Candidate] = []
    seen: set[str] = set()
    for number, (speaker, body) in enumerate(split_turns(conversation), 1):
        for sentence in split_sentences(body):
            if is_chatter(sentence):
                continue
            kind, cues = cues_of(sentence, anchor)
            if not cues:
                continue
            # Small talk that happens to parse as a claim ("the weather is great today") stays out;
            # a kind cue (decision, correction, ...) is strong enough to keep it anyway.
            if cues in (["assertion"], ["date"], ["assertion", "date"]) and _SMALL_TALK.search(sentence):
                continue
            key = content_hash(sentence)
            if key in seen:
                continue
            seen.add(key)
            found.append(Candidate(turn=number, author=speaker, text=sentence, kind=kind, cues=cues))
    return found


def run(ctx: "Context", conversation: str, *, source: str | None = None, author: str | None = None,
        dry_run: bool = False, scope: str | None = None) -> dict[str, Any]:
    """Extract candidates and (unless ``dry_run``) store them through intake; one report dict.

    Each candidate carries the intake's outcome (``status``, ``id``, ``reason``). A speaker label
    becomes the memory's author; ``author`` is used for turns without one.

    >>> report = run(ctx, "Bob: We decided to use Postgres 16.", dry_run=True)  # doctest: +SKIP
    >>> report["candidates"][0]["kind"]  # doctest: +SKIP
    'decision'
    """
    from mem.secrets import redact, scan
    from mem.stages import add

    if not isinstance(conversation, str) or not conversation.strip():
        raise BadInput("conversation is empty")
    if len(conversation) > MAX_CONVERSATION:
        raise BadInput(f"conversation too long ({len(conversation)} characters; at most {MAX_CONVERSATION})")
    turns = split_turns(conversation)
    found = candidates(conversation, ctx.now())
    rows = [c.to_record() for c in found]
    for row in rows:
        row.pop("record")
        row["author"] = row["author"] or author
    if dry_run:
        for row in rows:
            row["status"] = "candidate"
            if scan(row["text"]):  # intake would reject it: say so, and do not echo the value back
                row["status"], row["reason"] = "rejected", "secret"
                row["text"] = redact(row["text"])[0]
    elif rows:
        records = []
        for number, row in enumerate(rows, 1):
            record = {"text": row["text"], "kind": row["kind"], "author": row["author"], "source": source,
                      "scope": scope, "tags": [TAG], "meta": {"extracted": {"turn": row["turn"], "cues": row["cues"]}}}
            records.append((number, {k: v for k, v in record.items() if v is not None}))
        for row, outcome in zip(rows, add.run(ctx, records, add.AddOptions()), strict=True):
            row["status"], row["id"] = outcome.status, outcome.id
            if outcome.reason:
                row["reason"] = outcome.reason
            if outcome.status == "rejected" and (outcome.reason or "").startswith("secret"):
                row["text"] = redact(row["text"])[0]
    statuses = [row["status"] for row in rows]
    summary = {"turns": len(turns), "candidates": len(rows), "dry_run": dry_run,
               **{s: statuses.count(s) for s in dict.fromkeys(statuses)}}
    return {"summary": summary, "candidates": rows}
