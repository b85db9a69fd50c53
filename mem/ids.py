"""UUIDv7 identifiers: time-sortable, globally unique, so export/import never collide.

People type *handles*: the shortest prefix (at least ``HANDLE_MIN`` characters) of an id's last
group, its 12 random hex digits, that names one memory in the database. The head of a UUIDv7 is
its timestamp, shared by every memory added in the same stretch, so a head prefix needs ~19
characters; the random tail needs 4 in a database of hundreds and 5-6 in one of a million. A
handle is a function of the id and the database's other ids, so it survives export/import, and it
grows by one character only when a new memory shares its prefix (the old, shorter form then
reports ambiguity listing both, never picks one). Whole-id prefixes still work, like git's.
"""

from __future__ import annotations

import os
import threading
import time

_lock = threading.Lock()
_last = [0, 0]  # (unix ms, counter) so ids made in the same millisecond still sort in order


def uuid7(unix_ms: int | None = None) -> str:
    """A new UUIDv7 string, e.g. ``0193a1c4-7b2e-7c3d-9f00-1a2b3c4d5e6f``.

    Within one process the ids are strictly increasing, even inside one millisecond.
    """
    with _lock:
        ms = int(time.time() * 1000) if unix_ms is None else unix_ms
        if ms <= _last[0]:
            ms = _last[0]
            _last[1] += 1
        else:
            _last[1] = int.from_bytes(os.urandom(2), "big") & 0x3FF
        _last[0] = ms
        counter = _last[1] & 0xFFF
    rand = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | counter << 64 | 0b10 << 62 | rand
    digits = f"{value:032x}"  # what str(uuid.UUID(int=value)) gives, without building the object
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


HANDLE_MIN = 4
TAIL_LENGTH = 12
_HEX = frozenset("0123456789abcdef")


def could_be_handle(text: str) -> bool:
    """True when ``text`` could be a handle: 1-12 hex digits (no dash: the tail has none)."""
    return 0 < len(text) <= TAIL_LENGTH and set(text.lower()) <= _HEX


def common_prefix(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def looks_like_prefix(text: str) -> bool:
    """True when ``text`` could be (a prefix of) a memory id: 4+ hex digits and dashes."""
    return len(text) >= 4 and all(c in "0123456789abcdef-" for c in text.lower())
