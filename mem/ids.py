"""UUIDv7 identifiers: time-sortable, globally unique, so export/import never collide."""

from __future__ import annotations

import os
import threading
import time
import uuid

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
    return str(uuid.UUID(int=value))


def looks_like_prefix(text: str) -> bool:
    """True when ``text`` could be (a prefix of) a memory id: 4+ hex digits and dashes."""
    return len(text) >= 4 and all(c in "0123456789abcdef-" for c in text.lower())
