"""``mem scope``: which scope a folder works in, every scope with its roots, rename, merge and move.

Scopes name repositories (``mem.scope``). Databases written before that filed a repository's
memories under its folder name; the first command run in such a repository moves them to the
repository's scope (``adopt``), records the mapping in ``scope_aliases`` and a changelog row per
memory, so nothing is lost or hidden and export, import and sync carry the new name.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from mem.errors import BadInput, NotFound
from mem.store import scopes as sql

if TYPE_CHECKING:
    from mem.scope import RepoScope
    from mem.stages.context import Context
    from mem.store import Store

BATCH = 500  # memories moved per write transaction: short locks, and a killed move resumes
MAX_NAME = 200
REVIEWED = " (reviewed)"


def check_name(name: str, *, what: str = "scope") -> str:
    """A scope a memory can live in: not empty, not '*', no control characters, at most 200 characters."""
    name = name.strip() if isinstance(name, str) else name
    if not isinstance(name, str) or not name:
        raise BadInput(f"{what} must be a non-empty name")
    if name == "*":
        raise BadInput(f"{what} '*' means every scope; give one scope's name")
    if len(name) > MAX_NAME:
        raise BadInput(f"{what} is {len(name)} characters long; at most {MAX_NAME}")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in name):
        raise BadInput(f"{what} {name!r} holds a control or format character")
    return name


# ------------------------------------------------------------------ on every command
def adopt(store: "Store", repo: "RepoScope", at: str) -> int:
    """Record that ``repo.root`` works in ``repo.name``; move its folder-name memories there once.

    Returns how many memories moved (0 almost always: two indexed look-ups and no write once the
    folder is known). A move interrupted half-way is finished by the next command.
    """
    if getattr(store, "read_only", False):
        return 0
    root = str(repo.root)
    known = sql.root_record(store, root)
    legacy = repo.legacy
    moved = 0
    if legacy and legacy not in (repo.name, "global", "*"):
        alias = sql.alias_of(store, legacy)
        ours = alias is None or alias.new == repo.name
        if ours and sql.has_memories(store, legacy):
            if alias is None:
                with store.write():
                    sql.record_alias(store, sql.ScopeAlias(legacy, repo.name, at,
                                                           f"folder-name scope adopted by the repository at {root}"))
            moved = _move_all(store, legacy, repo.name, at, keep_communities=not sql.has_memories(store, repo.name))
    if known is None or known.scope != repo.name or known.last_seen[:10] != at[:10] or known.identity != repo.identity:
        with store.write():
            sql.record_root(store, sql.ScopeRoot(repo.name, root, repo.identity, repo.how, legacy,
                                                 known.first_seen if known else at, at))
    return moved


def _move_all(store: "Store", old: str, new: str, at: str, *, keep_communities: bool) -> int:
    moved = 0
    while True:
        with store.write():
            rowids = sql.rowids_in(store, old, limit=BATCH)
            if not rowids:
                sql.move_communities(store, old, new, keep=keep_communities)
                return moved
            moved += sql.move_memories(store, rowids, new, at=at)


# ------------------------------------------------------------------ mem scope
def current(ctx: "Context") -> dict[str, Any]:
    """The scope this folder works in and how it was found."""
    settings = ctx.settings
    record: dict[str, Any] = {"record": "scope", "scope": settings.scope, "how": settings.scope_how}
    repo = settings.repo
    if repo is not None:
        record.update(display=repo.display, root=str(repo.root), identity=repo.identity, folder_scope=repo.legacy)
        alias = sql.alias_of(ctx.store, repo.legacy)
        if alias is not None and alias.new == settings.scope:
            record["adopted"] = {"from": alias.old, "at": alias.at}
        known = sql.root_record(ctx.store, str(repo.root))
        if known is not None and known.scope != settings.scope:
            record["previous_scope"] = known.scope
    record.update(sql.scope_stats(ctx.store, settings.scope))
    return record


def list_scopes(ctx: "Context") -> list[dict[str, Any]]:
    """Every scope that holds memories or was seen from a folder, with counts, roots and old names."""
    roots: dict[str, list[str]] = defaultdict(list)
    for row in sql.roots(ctx.store):
        roots[row.scope].append(row.root)
    renamed: dict[str, list[str]] = defaultdict(list)
    for alias in sql.aliases(ctx.store):
        renamed[alias.new].append(alias.old)
    counted = {scope: (total, active) for scope, total, active in sql.counts(ctx.store)}
    out = []
    for scope in sorted(set(counted) | set(roots)):
        total, active = counted.get(scope, (0, 0))
        out.append({"record": "scope", "scope": scope, "memories": total, "active": active,
                    "roots": roots.get(scope, []), "aliases": renamed.get(scope, []),
                    "current": scope == ctx.settings.scope})
    return out


def _known(store: "Store", scope: str) -> bool:
    return sql.has_memories(store, scope) or any(r.scope == scope for r in sql.roots(store))


def rename(ctx: "Context", old: str, new: str, *, dry_run: bool = False) -> dict[str, Any]:
    """Rename scope ``old`` to ``new``, which must not hold memories yet (that is a merge)."""
    old, new = check_name(old, what="old scope"), check_name(new, what="new scope")
    if not sql.has_memories(ctx.store, old):
        raise NotFound(f"scope {old!r} holds no memories (`mem scope list` shows the scopes)", scope=old)
    if old == new:
        raise BadInput(f"scope {old!r} already has that name")
    if sql.has_memories(ctx.store, new):
        raise BadInput(f"scope {new!r} already holds memories; `mem scope merge {old} {new}` moves {old!r} into it")
    return _move(ctx, old, new, "renamed", dry_run=dry_run)


def merge(ctx: "Context", source: str, target: str, *, create: bool = False, dry_run: bool = False) -> dict[str, Any]:
    """Move every memory of ``source`` into ``target`` (which must exist, unless ``create``)."""
    source, target = check_name(source, what="scope to merge"), check_name(target, what="target scope")
    if source == target:
        raise BadInput("a scope cannot be merged into itself")
    if not sql.has_memories(ctx.store, source):
        raise NotFound(f"scope {source!r} holds no memories (`mem scope list` shows the scopes)", scope=source)
    if not create and not _known(ctx.store, target):
        raise NotFound(f"scope {target!r} does not exist; pass --create to make it, or `mem scope rename`", scope=target)
    return _move(ctx, source, target, "merged", dry_run=dry_run)


def _move(ctx: "Context", old: str, new: str, verb: str, *, dry_run: bool) -> dict[str, Any]:
    store, at = ctx.store, ctx.now_iso()
    count = sql.scope_stats(store, old)["memories"]
    record = {"record": "scope", "op": verb, "from": old, "to": new, "memories": count, "dry_run": dry_run}
    if dry_run:
        return record
    keep = not sql.has_memories(store, new)
    with store.write():
        sql.record_alias(store, sql.ScopeAlias(old, new, at, verb))
    record["memories"] = _move_all(store, old, new, at, keep_communities=keep)
    return record


def move(ctx: "Context", ids: Iterable[str], new: str, *, dry_run: bool = False) -> dict[str, Any]:
    """Move chosen memories (ids or unique prefixes) to scope ``new``: how one scope is split in two."""
    new = check_name(new, what="target scope")
    store, at = ctx.store, ctx.now_iso()
    rowids: list[int] = []
    for given in ids:
        rowids.append(store.rowid_of(store.resolve_id(given)))
    rowids = sorted(set(rowids))
    record = {"record": "scope", "op": "moved", "to": new, "memories": len(rowids), "dry_run": dry_run}
    if dry_run or not rowids:
        return record
    moved = 0
    sources = sql.scopes_of(store, rowids)
    for start in range(0, len(rowids), BATCH):
        with store.write():
            moved += sql.move_memories(store, rowids[start:start + BATCH], new, at=at)
    with store.write():  # the user has sorted the adopted folder-name memories: doctor stops asking
        sql.mark_reviewed(store, sources, REVIEWED)
    record["memories"] = moved
    return record


# ------------------------------------------------------------------ mem doctor
def collisions(store: "Store") -> list[tuple[str, str]]:
    """``(problem, fix)`` per scope that two different repositories resolve to.

    Repositories that chose the same ``mem.scope`` in their git config share on purpose and are
    not reported; nor are clones and worktrees of one repository (same identity).
    """
    by_scope: dict[str, list[sql.ScopeRoot]] = defaultdict(list)
    for row in sql.roots(store):
        by_scope[row.scope].append(row)
    problems: list[tuple[str, str]] = []
    for scope, rows in sorted(by_scope.items()):
        identities = {r.identity for r in rows}
        if len(identities) < 2 or all(r.how == "git config mem.scope" for r in rows):
            continue
        where = ", ".join(f"{r.root} ({r.identity})" for r in rows)
        first = rows[-1].root
        problems.append((f"scope {scope!r} is shared by different repositories: {where}",
                         f"give one its own scope with `git -C {first} config mem.scope NEW-NAME`, then move its "
                         f"memories with `mem list --scope {scope} --json | mem scope move NEW-NAME -`"))
    adopted = {a.old: a for a in sql.aliases(store)
               if a.reason.startswith("folder-name scope adopted") and not a.reason.endswith(REVIEWED)}
    for row in sql.roots(store):
        alias = adopted.get(row.legacy)
        if alias is not None and alias.new != row.scope:
            problems.append((f"before scopes named repositories, {row.root} shared the scope {row.legacy!r} with "
                             f"other folders of that name; those memories now live in {alias.new!r} "
                             f"({alias.reason.removeprefix('folder-name scope adopted by ')})",
                             f"move any that belong to {row.root} with "
                             f"`mem list --scope {alias.new} --json | mem scope move {row.scope} -`"))
    return problems
