"""Capture decisions from git commits: the post-commit hook and the ``git log`` backfill.

A commit becomes one memory of kind ``decision`` when its message carries a ``Decision:``/``Why:``
trailer or paragraph, a breaking change (``BREAKING CHANGE:``, ``feat!:``), or is a revert; with
``all_commits`` also when its message states a decision in words (a switch, a replacement, a
reason: :func:`states_decision`), never a bare subject such as "initial" or "Fix typo". The text is built from the message only (never the SHA), so
a rebased or amended commit with the same message is an exact duplicate for the intake gate; the
patch-id catches an amend that only rewords the message (the memory is updated, not doubled).

git always runs as an argument list (``subprocess.run(["git", "-C", repo, ...])``), never
through a shell; the hook script holds no user text but a quoted interpreter path and --db.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mem.errors import BadInput
from mem.records import Outcome

if TYPE_CHECKING:
    from mem.stages.context import Context

BEGIN = "# >>> mem hook >>>"
END = "# <<< mem hook <<<"
MAX_FILE_TAGS = 20
MAX_META_FILES = 200
_SEP_RECORD, _SEP_FIELD = "\x1e", "\x1f"

_KEYED = re.compile(r"^(decision|why|because|rationale)\s*:\s*(.*)$", re.IGNORECASE)
_ANY_TRAILER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*(?: [A-Z]+)?\s*:\s")
_BREAKING = re.compile(r"^BREAKING[ -]CHANGE\s*:\s*(.*)$")
_BANG = re.compile(r"^[A-Za-z]+(?:\([^)]*\))?!:\s*(.+)$")
_REVERT_SUBJECT = re.compile(r'^Revert "(.+)"\s*$')
_REVERTS = re.compile(r"^This reverts commit ([0-9a-f]{7,64})\.?\s*$", re.IGNORECASE)
# What makes a commit without a trailer state a decision (``--all``): a choice between options or a
# reason for one. "initial", "Fix typo in README", "Add a" state none and are not captured.
_DECISION_CUE = re.compile(
    r"\b(switch(?:ed|es|ing)?\b.{0,60}?\bto|migrat\w*\b.{0,60}?\bto|mov(?:e|ed|es|ing)\b.{0,60}?\bfrom\b.{0,60}?\bto|"
    r"replac\w*\b.{0,60}?\bwith|in favou?r of|instead of|rather than|because|so that|in order to|to avoid|"
    r"deprecat\w*|adopt\w*|drop(?:s|ped|ping)? (?:support|the)|standardi[sz]\w* on|prefer\w*|decid\w*|chose|chosen|"
    r"go(?:ing)? with|settle[ds]? on)\b", re.IGNORECASE)
_NOISE = re.compile(r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|change-id|cc)\s*:", re.IGNORECASE)


# ------------------------------------------------------------------------ git
def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    """Run ``git -C repo ARGS`` (an argument list, no shell) and return stdout; BadInput on failure.

    git(Path("."), "rev-parse", "HEAD")
    """
    try:
        proc = subprocess.run(["git", "-C", str(repo), *args], input=input, capture_output=True, check=False,
                              env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    except FileNotFoundError:
        raise BadInput("git is not installed (or not on PATH)") from None
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BadInput(f"git {args[0]} failed in {repo}: {message[-1] if message else proc.returncode}",
                       repo=str(repo))
    return proc.stdout.decode("utf-8", "replace")


def toplevel(path: Path) -> Path:
    """The work tree root containing ``path``; BadInput when it is not in a git repository."""
    if not Path(path).is_dir():
        raise BadInput(f"{path} is not a folder", repo=str(path))
    try:
        return Path(git(path, "rev-parse", "--show-toplevel").strip()).resolve()
    except BadInput:
        raise BadInput(f"{path} is not inside a git repository", repo=str(path)) from None


def hooks_dir(repo: Path) -> Path:
    """Where git looks for hooks (honours ``core.hooksPath`` and worktrees)."""
    found = Path(git(repo, "rev-parse", "--git-path", "hooks").strip())
    return found if found.is_absolute() else (repo / found).resolve()


# ---------------------------------------------------------------- install
def hook_command(*, all_commits: bool = False, db: Path | None = None, python: str | None = None) -> str:
    """The one shell line the hook runs: this interpreter, ``-m mem hook run --head``, quoted.

    >>> hook_command(python="/usr/bin/python3")
    '/usr/bin/python3 -m mem hook run --head --quiet </dev/null >/dev/null || true'
    """
    args = [python or sys.executable, "-m", "mem", "hook", "run", "--head", "--quiet"]
    if all_commits:
        args.append("--all")
    if db is not None:
        args += ["--db", str(Path(db).expanduser().resolve())]
    return " ".join(shlex.quote(a) for a in args) + " </dev/null >/dev/null || true"


def _block(command: str) -> str:
    return f"{BEGIN}\n# Added by 'mem hook install'; 'mem hook uninstall' removes only this block.\n{command}\n{END}\n"


def _without_block(text: str) -> tuple[str, bool]:
    """``text`` with every mem block removed, and whether there was one."""
    pattern = re.compile(rf"\n?{re.escape(BEGIN)}\n.*?{re.escape(END)}\n?", re.DOTALL)
    stripped, count = pattern.subn("\n", text)
    return (stripped.strip("\n") + "\n" if stripped.strip() else ""), count > 0


def install(repo: Path, *, all_commits: bool = False, db: Path | None = None,
            python: str | None = None) -> dict[str, Any]:
    """Add (or refresh) the mem block in the repository's post-commit hook, keeping whatever else is there."""
    top = toplevel(repo)
    folder = hooks_dir(top)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "post-commit"
    existing = path.read_text() if path.exists() else ""
    rest, had_block = _without_block(existing)
    if not rest.strip():
        rest = "#!/bin/sh\n"
    text = rest.rstrip("\n") + "\n\n" + _block(hook_command(all_commits=all_commits, db=db, python=python))
    tmp = path.with_name(f".{path.name}.mem-tmp")
    tmp.write_text(text)
    mode = (path.stat().st_mode & 0o777) if path.exists() else 0o755
    os.chmod(tmp, mode | 0o111)  # git skips hooks that are not executable
    os.replace(tmp, path)
    return {"record": "hook", "action": "updated" if had_block else "installed", "repo": str(top),
            "path": str(path), "all": all_commits, "other_hooks_kept": bool(existing and _without_block(existing)[0]
                                                                         .strip() not in ("", "#!/bin/sh"))}


def uninstall(repo: Path) -> dict[str, Any]:
    """Remove only the mem block; delete the file when nothing but a shebang would be left."""
    top = toplevel(repo)
    path = hooks_dir(top) / "post-commit"
    if not path.exists():
        return {"record": "hook", "action": "absent", "repo": str(top), "path": str(path)}
    rest, had_block = _without_block(path.read_text())
    if not had_block:
        return {"record": "hook", "action": "absent", "repo": str(top), "path": str(path)}
    if rest.strip() in ("", "#!/bin/sh", "#!/usr/bin/env sh", "#!/bin/bash", "#!/usr/bin/env bash"):
        path.unlink()
        return {"record": "hook", "action": "removed", "repo": str(top), "path": str(path), "file_deleted": True}
    tmp = path.with_name(f".{path.name}.mem-tmp")
    tmp.write_text(rest)
    os.chmod(tmp, path.stat().st_mode & 0o777)
    os.replace(tmp, path)
    return {"record": "hook", "action": "removed", "repo": str(top), "path": str(path), "file_deleted": False}


# ---------------------------------------------------------------- capture
@dataclass
class Commit:
    sha: str
    parents: list[str]
    author: str
    email: str
    date: str
    message: str
    files: list[str] = field(default_factory=list)

    @property
    def subject(self) -> str:
        return self.message.strip().split("\n", 1)[0].strip()


def log(repo: Path, *, since: str | None = None, head_only: bool = False) -> list[Commit]:
    """Commits oldest first: HEAD only, ``since..HEAD``, or the whole history of HEAD."""
    fmt = f"{_SEP_RECORD}%H{_SEP_FIELD}%P{_SEP_FIELD}%an{_SEP_FIELD}%ae{_SEP_FIELD}%aI{_SEP_FIELD}%B"
    args = ["log", f"--format={fmt}", "--no-color"]
    if head_only:
        args += ["-1", "HEAD"]
    else:
        if since is not None and since.startswith("-"):
            raise BadInput(f"--since {since!r} is not a revision")
        args += ["--reverse", f"{since}..HEAD" if since else "HEAD"]
    try:
        out = git(repo, *args, "--")
    except BadInput as exc:
        if "does not have any commits" in exc.message or "unknown revision" in exc.message and since is None:
            return []
        raise
    commits = []
    for chunk in out.split(_SEP_RECORD)[1:]:
        parts = chunk.split(_SEP_FIELD, 5)
        if len(parts) != 6:
            continue
        sha, parents, author, email, date, message = parts
        commits.append(Commit(sha=sha, parents=parents.split(), author=author, email=email, date=date,
                              message=message.strip("\n")))
    return commits


def changed_files(repo: Path, commit: Commit) -> list[str]:
    """Paths the commit touched (against its first parent; everything for a root commit)."""
    if commit.parents:
        out = git(repo, "diff-tree", "-r", "--name-only", "--no-commit-id", "-z", commit.parents[0], commit.sha)
    else:
        out = git(repo, "diff-tree", "-r", "--root", "--name-only", "--no-commit-id", "-z", commit.sha)
    return [p for p in out.split("\x00") if p]


def patch_id(repo: Path, commit: Commit) -> str | None:
    """``git patch-id --stable`` of the commit's diff: unchanged by amending the message or rebasing."""
    base = commit.parents[0] if commit.parents else None
    args = ["diff-tree", "-p", "--no-color", "--full-index", *([base, commit.sha] if base else ["--root", commit.sha])]
    diff = git(repo, *args)
    if not diff.strip():
        return None
    out = git(repo, "patch-id", "--stable", input=diff.encode("utf-8")).split()
    return out[0] if out else None


def _paragraphs(message: str) -> list[list[str]]:
    paragraphs: list[list[str]] = [[]]
    for line in message.splitlines():
        if line.strip():
            paragraphs[-1].append(line.rstrip())
        elif paragraphs[-1]:
            paragraphs.append([])
    return [p for p in paragraphs if p]


def _keyed_values(lines: Sequence[str]) -> dict[str, str]:
    """``Decision:``/``Why:`` values; continuation lines (until a blank or another key) join the value."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        match = _KEYED.match(line.strip())
        if match:
            key = "decision" if match.group(1).lower() == "decision" else "why"
            current = found.setdefault(key, [])
            if match.group(2).strip():
                current.append(match.group(2).strip())
        elif not line.strip() or _ANY_TRAILER.match(line.strip()):
            current = None
        elif current is not None:
            current.append(line.strip())
    return {k: " ".join(v) for k, v in found.items() if v}


def capture(commit: Commit, *, all_commits: bool = False) -> tuple[str, list[str]] | None:
    """``(memory text, categories)`` for a commit worth remembering, else None.

    >>> capture(Commit("a" * 40, [], "A", "a@x", "2026-01-01T00:00:00Z", "Use Redis\\n\\nDecision: Redis for the cache\\nWhy: latency"))
    ('Use Redis\\nDecision: Redis for the cache\\nWhy: latency', ['decision'])
    """
    subject = commit.subject
    body_lines = commit.message.strip().splitlines()[1:]
    categories: list[str] = []
    lines = [subject]
    keyed = _keyed_values(body_lines)
    if "decision" in keyed or "why" in keyed:
        categories.append("decision")
        if "decision" in keyed:
            lines.append(f"Decision: {keyed['decision']}")
        if "why" in keyed:
            lines.append(f"Why: {keyed['why']}")
    breaking = [m.group(1).strip() for m in (_BREAKING.match(line.strip()) for line in body_lines) if m]
    bang = _BANG.match(subject)
    if breaking or bang:
        categories.append("breaking")
        lines.append(f"Breaking change: {breaking[0] if breaking and breaking[0] else bang.group(1) if bang else subject}")
    revert = _REVERT_SUBJECT.match(subject)
    reverted = [m.group(1) for m in (_REVERTS.match(line.strip()) for line in body_lines) if m]
    if revert or reverted:
        categories.append("revert")
        if revert:
            lines.append(f"Reverted: {revert.group(1)}")
        reasons = [" ".join(p) for p in _paragraphs("\n".join(body_lines))
                   if not any(_REVERTS.match(x.strip()) or _NOISE.match(x.strip()) for x in p)]
        lines.extend(reasons[:3])
    if not categories:
        kept = [line for line in commit.message.strip().splitlines() if not _NOISE.match(line.strip())]
        text = "\n".join(kept).strip()
        if not all_commits or not states_decision(text):
            return None
        categories.append("commit")
        return text, categories
    return "\n".join(dict.fromkeys(lines)), categories


def states_decision(message: str) -> bool:
    """Does a commit message (without a trailer) state a decision: a choice, a switch, a reason?

    >>> [states_decision(m) for m in ("initial", "Fix typo in README", "Switch the cache to Redis",
    ...                               "Use gRPC instead of REST for the ledger")]
    [False, False, True, True]
    """
    from mem.enrich.classify import guess_kind

    return bool(_DECISION_CUE.search(message)) or guess_kind(message) in ("decision", "correction")


# -------------------------------------------------------------------- run
Progress = Callable[[int], None]


def run(ctx: "Context", repo: Path, *, since: str | None = None, head_only: bool = False,
        all_commits: bool = False, on_total: Callable[[int], None] | None = None,
        advance: Progress | None = None) -> Iterator[Outcome]:
    """Capture commits of ``repo`` as decision memories; one Outcome per captured commit.

    Idempotent: a commit already captured (same SHA, same patch, or same text) is a duplicate;
    an amended commit whose message changed updates its memory in place (status ``updated``).
    """
    from mem.stages import add, memories
    from mem.store.githook import find_by_meta

    from mem.scope import repo_scope

    top = toplevel(repo)
    found = repo_scope(top)
    scope = found.name if found else top.name  # the repository's scope, wherever the hook runs from
    commits = log(top, since=since, head_only=head_only)
    if on_total:
        on_total(len(commits))
    pending: list[tuple[Commit, str | None, dict[str, Any]]] = []
    for commit in commits:
        if advance:
            advance(1)
        captured = capture(commit, all_commits=all_commits)
        if captured is None:
            continue
        text, categories = captured
        existing = find_by_meta(ctx.store, scope, "commit", commit.sha)
        if existing is not None:
            yield Outcome("duplicate", id=existing[0], reason="commit already captured", detail={"commit": commit.sha})
            continue
        commit.files = changed_files(top, commit)
        pid = patch_id(top, commit)
        meta = {"commit": commit.sha, "patch_id": pid, "repo": str(top), "capture": categories,
                "files": commit.files[:MAX_META_FILES], "email": commit.email}
        same_patch = find_by_meta(ctx.store, scope, "patch_id", pid) if pid else None
        if same_patch is not None:
            memory_id, old_text, old_meta = same_patch
            if old_text == text:
                # Amended or rebased without rewording: keep one memory, pointed at the newest commit.
                memories.update(ctx, memory_id, meta={"commit": commit.sha, "previous_commit": old_meta.get("commit")})
                yield Outcome("duplicate", id=memory_id, reason="same patch", detail={"commit": commit.sha})
                continue
            # An amend that reworded the message: the memory follows the newest wording.
            memories.update(ctx, memory_id, text=text, meta={**meta, "previous_commit": old_meta.get("commit")})
            yield Outcome("updated", id=memory_id, reason="amended commit", detail={"commit": commit.sha})
            continue
        record = {"text": text, "kind": "decision", "scope": scope, "source": str(top), "author": commit.author,
                  "created_at": commit.date, "tags": ["git", *categories, *commit.files[:MAX_FILE_TAGS]],
                  "meta": meta}
        pending.append((commit, pid, record))
    if not pending:
        return
    outcomes = list(add.run(ctx, [(i, record) for i, (_, _, record) in enumerate(pending, start=1)], add.AddOptions()))
    for outcome in outcomes:
        commit, pid, _ = pending[(outcome.line or 1) - 1]
        if outcome.status == "duplicate" and outcome.id and outcome.reason == "same text":
            # Same message on a new SHA (rebase, cherry-pick): point the captured memory at the newest commit.
            if "commit" in ctx.store.get(outcome.id).meta:
                memories.update(ctx, outcome.id, meta={"commit": commit.sha, "patch_id": pid})
        yield Outcome(outcome.status, id=outcome.id, reason=outcome.reason,
                      detail={**outcome.detail, "commit": commit.sha})
