"""The scope boundary of one MCP session: which scopes its calls may read and write.

A server started with ``--scope S`` (or MEM_SCOPE, or the config file's scope), or whose client
names a project through its roots, is bounded: its calls read and write S, read ``global``, and
reach other scopes only when ``--allow-scope PATTERN`` (shell-style, repeatable) names them (read
and write). A memory outside the boundary does not exist for the session: its id is "not
found", it never appears in a result, and ``stats`` neither counts nor names it. A server with
neither (or ``--allow-scope '*'``) is unbounded: any scope by name, ``'*'`` for all of them.

Every tool of every profile asks this module, through ``Engine.boundary``; nothing else decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from mem.errors import Ambiguous, BadInput, NotFound

if TYPE_CHECKING:
    from mem.store import Store

GLOBAL = "global"
EVERY = "*"


class OutOfScope(BadInput):
    """A scope the session may not use (the message names only what it may use)."""


@dataclass(frozen=True)
class Boundary:
    """``home`` is the scope calls work in by default; ``bounded`` False means every scope is reachable.

    >>> b = Boundary("shop", bounded=True, allow=("shop-*",))
    >>> b.can_read("global"), b.can_write("global"), b.can_write("shop-eu"), b.can_read("billing")
    (True, False, True, False)
    """

    home: str
    bounded: bool
    allow: tuple[str, ...] = ()

    @classmethod
    def of(cls, home: str, *, bounded: bool, allow: Sequence[str] = ()) -> "Boundary":
        patterns = tuple(p.strip() for p in allow if p.strip())
        return cls(home, bounded=bounded and EVERY not in patterns, allow=patterns)

    # ------------------------------------------------------------------ scopes
    def can_write(self, scope: str) -> bool:
        return not self.bounded or scope == self.home or any(fnmatchcase(scope, p) for p in self.allow)

    def can_read(self, scope: str) -> bool:
        return scope == GLOBAL or self.can_write(scope)

    def describe(self) -> str:
        extra = f", {', '.join(self.allow)}" if self.allow else ""
        return f"this server is limited to scope {self.home!r}{extra} (and reads {GLOBAL!r})"

    def read_scope(self, requested: str | None) -> str:
        """The scope a read works in: the one asked for ('*' = every scope, unbounded only), else home."""
        scope = self._named(requested)
        if scope == EVERY:
            return self._every()
        if not self.can_read(scope):
            raise OutOfScope(f"scope {scope!r} is out of reach: {self.describe()}")
        return scope

    def write_scope(self, requested: str | None) -> str:
        """The scope a write goes to: one scope (never '*'), writable by this session."""
        scope = self._named(requested)
        if scope == EVERY:
            raise OutOfScope("a memory needs one scope; '*' only reads")
        if not self.can_write(scope):
            raise OutOfScope(f"cannot write to scope {scope!r}: {self.describe()}")
        return scope

    def sweep_scope(self, requested: str | None) -> str:
        """A job over many memories that writes (consolidate, verify, archive by policy): '*' only unbounded."""
        scope = self._named(requested)
        return self._every() if scope == EVERY else self.write_scope(scope)

    def _every(self) -> str:
        if self.bounded:
            raise OutOfScope(f"scope '*' reaches past the boundary: {self.describe()}")
        return EVERY

    def _named(self, requested: str | None) -> str:
        if requested is None:
            return self.home
        scope = requested.strip()
        if not scope:
            raise OutOfScope("scope must be a non-empty string, or '*' for every scope")
        return scope

    # ------------------------------------------------------------------ ids
    def resolve(self, store: "Store", typed: str, *, write: bool = False) -> str:
        """The full id for a handle or id prefix, when this session may read (or write) the memory;
        any other memory is "not found", and an ambiguous one names only candidates inside the boundary."""
        if not self.bounded:
            return store.resolve_id(typed)
        from mem.store.scoped import scopes_of

        try:
            candidates = [store.resolve_id(typed)]
        except Ambiguous as exc:
            candidates = list(exc.fields.get("candidates") or [])
        scopes = scopes_of(store, candidates)
        allowed = self.can_write if write else self.can_read
        inside = [c for c in candidates if allowed(scopes.get(c, ""))]
        wanted = typed.strip().lower()
        if len(inside) == 1:
            return inside[0]
        if inside:
            shown = store.handles(inside)
            raise Ambiguous(f"id {wanted} is ambiguous: {', '.join(shown[c] for c in inside)}", id=wanted,
                            candidates=inside)
        if write and any(self.can_read(scopes.get(c, "")) for c in candidates):
            raise OutOfScope(f"memory {wanted} is read-only here: {self.describe()}")
        raise NotFound(f"no memory {wanted}", id=wanted)

    def resolve_all(self, store: "Store", prefixes: Iterable[str], *, write: bool = False) -> list[str]:
        return [self.resolve(store, p, write=write) for p in prefixes]

    # ------------------------------------------------------------------ results
    def visible(self, store: "Store", rows: Sequence[dict[str, Any]],
                keys: Sequence[str] = ("id", "other")) -> list[dict[str, Any]]:
        """The rows whose memories (under ``keys``) this session may read; rows naming no memory stay."""
        if not self.bounded:
            return list(rows)
        from mem.store.scoped import scopes_of

        named = [str(r[k]) for r in rows for k in keys if isinstance(r, dict) and r.get(k)]
        scopes = scopes_of(store, named)
        return [r for r in rows if all(self.can_read(scopes.get(str(r[k]), "")) for k in keys if r.get(k))]

    def keep_hits(self, hits: Sequence[Any]) -> list[Any]:
        """Search hits inside the boundary (expansion by links or session may reach neighbours outside it)."""
        return [h for h in hits if self.can_read(h.memory.scope)]

    def readable_scopes(self, store: "Store") -> list[str] | None:
        """Every scope with memories this session may read; None when unbounded."""
        if not self.bounded:
            return None
        from mem.store.scoped import scope_names

        return [s for s in scope_names(store) if self.can_read(s)]
