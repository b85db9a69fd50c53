"""``token_states``: each memory's compact token states (``mem.score.tokens.compact``, m011), written
with its vector and read by the MaxSim and Fisher-Rao rescoring of the best candidates.

A row holds its ``form`` (which projection, how many dimensions: ``mem.score.tokens.token_form``)
and that many int8 bytes per content token (64: about 1.5 KB for a 20-word memory), so a search reads what it rescores instead of running the model over every candidate. Only
embedders with token states (MiniLM) write rows; a memory without one is computed at search time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from mem.store import batches

if TYPE_CHECKING:
    from mem.store import Store


def put(store: "Store", rows: Sequence[tuple[int, str, bytes]]) -> None:
    """Inside a write transaction: ``(rowid, form, states)`` rows, replacing what a memory had."""
    if rows:
        store.conn.executemany("INSERT OR REPLACE INTO token_states(rowid, form, states) VALUES (?, ?, ?)", rows)


def drop(store: "Store", rowids: Iterable[int] | None = None) -> None:
    """Inside a write transaction: forget these memories' states (a new text, a purge), or every row."""
    if rowids is None:
        store.conn.execute("DELETE FROM token_states")
    else:
        store.conn.executemany("DELETE FROM token_states WHERE rowid = ?", [(r,) for r in rowids])


def get(store: "Store", rowids: Sequence[int], form: str) -> dict[int, bytes]:
    """The stored states of ``rowids`` in ``form`` (rows of another form are left out: computed anew)."""
    out: dict[int, bytes] = {}
    ids = list(rowids)
    for chunk, marks in batches.in_lists(ids):
        for rowid, blob in store.conn.execute(
                f"SELECT rowid, states FROM token_states WHERE form = ? AND rowid IN ({marks})", [form, *chunk]):
            out[int(rowid)] = bytes(blob)
    return out
