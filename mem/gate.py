"""The intake gate: what every write passes, whichever way it comes (add, import, update, MCP, merges).

:func:`admit` checks the fields a write sets, all of them, before anything is stored:

* types and ranges: strings that are valid Unicode, integers in SQLite's signed 64-bit range
  (``source_line`` >= 1, ``access_count`` >= 0), ``layer`` an integer 1-4 (``true`` is not a
  layer), ``confidence`` and the other fractions in [0, 1], ``pinned`` a boolean, ``meta`` a JSON
  object that stores as JSON (integers orjson can write, at most ``MAX_DEPTH`` levels);
* the text's limits: ``MIN_CHARS`` to ``MAX_CHARS`` characters, not mostly control characters;
* secrets in every string of the record: the text, tags, author, source, scope, and ``meta``
  keys and values at any depth (a value is also scanned after its key, so
  ``{"password": "hunter22"}`` reads as the assignment it is). Refused, or masked with
  ``redact``.

A wrong type or range raises BadInput (the batch stops, naming the line and the field); a text
that breaks a limit or holds a secret comes back as ``rejected`` with the reason, so one bad
memory in a batch is reported without stopping the rest.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from mem.errors import BadInput
from mem.records import STATUSES, VERIFICATIONS
from mem.text import clean

MIN_CHARS = 3
MAX_CHARS = 32_000
MAX_DEPTH = 32  # nesting levels of meta: deeper JSON is a payload, not metadata
INT64_MAX = 2**63 - 1  # SQLite's INTEGER
_JSON_INT = (-(2**63), 2**64 - 1)  # what orjson writes (meta is stored as JSON)
_MAX_KEY_CONTEXT = 512  # a value is scanned after its key only when the pair is this short


@dataclass
class Admitted:
    """The checked fields (text cleaned, tags listed, secrets masked when asked) and the verdict."""

    fields: dict[str, Any]
    rejected: str | None = None
    redacted: list[str] = field(default_factory=list)  # kinds masked, one per value


def _fail(line: int | None, message: str) -> BadInput:
    return BadInput(f"line {line}: {message}", line=line) if line is not None else BadInput(message)


def _unicode(value: str, name: str, line: int | None) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: from a non-UTF-8 argument or a "\ud800" escape
        raise _fail(line, f"{name} is not valid Unicode (a lone surrogate at character {exc.start})") from None
    return value


def _text(value: Any, name: str, line: int | None) -> str:
    if not isinstance(value, str):
        raise _fail(line, f"'{name}' must be a string, got {type(value).__name__}")
    return clean(_unicode(value, name, line))


def _name(value: Any, name: str, line: int | None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(line, f"{name} must be a non-empty string")
    return _unicode(value, name, line)


def _scope(value: Any, name: str, line: int | None) -> str:
    value = _name(value, name, line)
    if value == "*":
        raise _fail(line, "scope '*' means every scope; a memory needs one scope")
    return value


def _kind(value: Any, name: str, line: int | None) -> str:
    from mem import vocab  # the one list of kinds, and the one message for an unknown one

    return vocab.check("kind", value, **({"where": f"line {line}: ", "line": line} if line is not None else {}))


def _tags(value: Any, name: str, line: int | None) -> list[str]:
    if isinstance(value, str):
        value = [t for t in (p.strip() for p in value.split(",")) if t]
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise _fail(line, "tags must be a list of strings")
    return list(dict.fromkeys(_unicode(t.strip(), "a tag", line) for t in value if t.strip()))


def _integer(low: int, high: int, what: str) -> Callable[[Any, str, int | None], int]:
    def check(value: Any, name: str, line: int | None) -> int:
        # bool is an int subclass: ``true`` is not a layer or a line number.
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise _fail(line, f"{name} must be {what}, got {value!r}")
        return value
    return check


def _fraction(value: Any, name: str, line: int | None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise _fail(line, f"{name} must be a number in [0, 1], got {value!r}")  # NaN fails the range too
    return float(value)


def _pinned(value: Any, name: str, line: int | None) -> bool:
    if not isinstance(value, bool):
        raise _fail(line, f"pinned must be true or false, got {value!r}")
    return value


def _choice(choices: tuple[str, ...]) -> Callable[[Any, str, int | None], str]:
    def check(value: Any, name: str, line: int | None) -> str:
        if value not in choices:
            raise _fail(line, f"{name} {value!r} is not one of {', '.join(choices)}")
        return value
    return check


def _string(value: Any, name: str, line: int | None) -> str:
    if not isinstance(value, str):
        raise _fail(line, f"{name} must be a string")
    return _unicode(value, name, line)


def _meta(value: Any, name: str, line: int | None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(line, "meta must be a JSON object")
    _check_json(value, "meta", line, 0)
    return value


def _check_json(value: Any, path: str, line: int | None, depth: int) -> None:
    """``value`` stores as JSON: string keys, finite numbers in orjson's range, bounded nesting."""
    if depth > MAX_DEPTH:
        raise _fail(line, f"{path} is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise _fail(line, f"{path} has a key that is not a string: {key!r}")
            _unicode(key, f"a key of {path}", line)
            _check_json(item, f"{path}.{key}", line, depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_json(item, f"{path}[{index}]", line, depth + 1)
    elif isinstance(value, str):
        _unicode(value, path, line)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if not _JSON_INT[0] <= value <= _JSON_INT[1]:
            raise _fail(line, f"{path} is an integer out of the 64-bit range")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise _fail(line, f"{path} must be a finite number, got {value!r}")
    else:
        raise _fail(line, f"{path} holds a {type(value).__name__}, not a JSON value")


# Field name -> check. Every column a write can set; ``admit`` refuses names it has no check for,
# so a new column cannot slip past the gate unchecked.
CHECKS: dict[str, Callable[[Any, str, int | None], Any]] = {
    "text": _text,
    "kind": _kind,
    "scope": _scope,
    "tags": _tags,
    "source": _name,
    "author": _name,
    "source_line": _integer(1, INT64_MAX, "a positive integer below 2**63"),
    "layer": _integer(1, 4, "an integer 1-4"),
    "confidence": _fraction,
    "pinned": _pinned,
    "meta": _meta,
    # what an export carries back in (import)
    "access_count": _integer(0, INT64_MAX, "a non-negative integer below 2**63"),
    "importance": _fraction,
    "surprise": _fraction,
    "status": _choice(STATUSES),
    "verification": _choice(VERIFICATIONS),
    "superseded_by": _string,
    "source_hash": _string,
}
# Fields whose strings can carry a secret: scanned (and masked) by ``admit``.
_SCANNED = ("text", "tags", "source", "author", "scope", "meta")


def text_problem(text: str) -> str | None:
    """Why ``text`` (cleaned) cannot be a memory, or None."""
    if len(text) < MIN_CHARS:
        return "empty" if not text else f"too short ({len(text)} characters; at least {MIN_CHARS})"
    if len(text) > MAX_CHARS:
        return f"too long ({len(text)} characters; at most {MAX_CHARS})"
    if text.isprintable():  # the common case, without a Python step per character
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\t\r")
    if printable < 0.9 * len(text):
        return "not text (mostly control characters)"
    return None


def admit(fields: dict[str, Any], *, line: int | None = None, redact: bool = False) -> Admitted:
    """Check every field of one write (None values are left out), then its text and its secrets.

    Raises BadInput for a wrong type or range; returns ``rejected`` for a text over a limit or a
    secret (unless ``redact``, which masks each secret value as ``[REDACTED:kind]``).
    """
    checked: dict[str, Any] = {}
    for name, value in fields.items():
        if value is None:
            continue
        check = CHECKS.get(name)
        if check is None:
            raise _fail(line, f"unknown field {name!r}")
        checked[name] = check(value, name, line)
    admitted = Admitted(checked)
    if "text" in checked:
        admitted.rejected = text_problem(checked["text"])
        if admitted.rejected:
            return admitted
    _screen(admitted, redact)
    return admitted


# ------------------------------------------------------------------------- secrets


def _strings(fields: dict[str, Any]) -> Iterator[tuple[str, str | None, str]]:
    """Every string a secret can hide in: (where, the key it is the value of, the string)."""
    for name in _SCANNED:
        value = fields.get(name)
        if isinstance(value, str):
            yield name, None, value
        elif name == "tags" and value:
            for tag in value:
                yield "tags", None, tag
        elif name == "meta" and value:
            yield from _json_strings(value, "meta", None)


def _json_strings(value: Any, path: str, key: str | None) -> Iterator[tuple[str, str | None, str]]:
    if isinstance(value, dict):
        for k, item in value.items():
            yield f"{path}.{k}", None, k  # a key can be the secret itself
            yield from _json_strings(item, f"{path}.{k}", k)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _json_strings(item, f"{path}[{index}]", key)  # list items keep their key's context
    elif isinstance(value, str):
        yield path, key, value
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and key is not None:
        yield path, key, str(value)  # {"pin": 48213379}: a number can be a password too


def findings(value: str, key: str | None = None) -> list[Any]:
    """The secrets in ``value``, alone or as the value of ``key`` (offsets in ``value``)."""
    if len(value) + (len(key) if key else 0) <= _CACHED_CHARS:
        return list(_short_findings(value, key))
    return _findings(value, key)


# A batch repeats its short strings (scope, tags, meta keys and values) on every record: their scans
# are remembered. Longer strings (the texts) are scanned each time.
_CACHED_CHARS = 128


@lru_cache(maxsize=4096)
def _short_findings(value: str, key: str | None) -> tuple[Any, ...]:
    return tuple(_findings(value, key))


def _findings(value: str, key: str | None) -> list[Any]:
    from mem import secrets  # per string: a module of the package is the cheap import (see add.as_time)

    scan = secrets.scan
    found = {(f.start, f.end): f for f in scan(value)}
    if key is not None and 0 < len(key) + len(value) <= _MAX_KEY_CONTEXT and "\n" not in value:
        quote = '"' if '"' not in value else "'" if "'" not in value else ""
        probe = f"{key}={quote}{value}{quote}"
        offset = len(key) + 1 + len(quote)
        for f in scan(probe):
            start, end = max(f.start - offset, 0), min(f.end - offset, len(value))
            if end > start and not any(s < end and start < e for s, e in found):
                found[(start, end)] = secrets.SecretFinding(f.kind, start, end)
    return sorted(found.values(), key=lambda f: f.start)


def _mask(value: str, key: str | None) -> tuple[str, list[str]]:
    """``value`` with each secret masked; repeated until a re-scan is clean (as ``secrets.redact``)."""
    kinds: list[str] = []
    for _ in range(8):
        found = findings(value, key)
        if not found:
            break
        parts, pos = [], 0
        for f in found:
            parts += [value[pos : f.start], f"[REDACTED:{f.kind}]"]
            pos = f.end
        value = "".join(parts) + value[pos:]
        kinds += [f.kind for f in found]
    return value, kinds


def _screen(admitted: Admitted, redact: bool) -> None:
    fields = admitted.fields
    hits = [(where, sorted({f.kind for f in found})) for where, key, value in _strings(fields)
            if (found := findings(value, key))]
    if not hits:
        return
    if not redact:
        kinds = sorted({k for _, ks in hits for k in ks})
        places = [where for where, _ in hits if where != "text"]
        at = f" in {', '.join(dict.fromkeys(places))}" if places else ""
        admitted.rejected = f"secret: looks like {', '.join(kinds)}{at} (use --redact to store it masked)"
        return
    for name in _SCANNED:
        value = fields.get(name)
        if isinstance(value, str):
            fields[name], kinds = _mask(value, None)
            admitted.redacted += kinds
        elif name == "tags" and value:
            masked = [_mask(tag, None) for tag in value]
            fields[name] = list(dict.fromkeys(tag for tag, _ in masked))
            admitted.redacted += [k for _, kinds in masked for k in kinds]
        elif name == "meta" and value:
            fields[name] = _mask_json(value, None, admitted.redacted)


def _mask_json(value: Any, key: str | None, kinds: list[str]) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, item in value.items():
            masked_key, found = _mask(k, None)
            kinds += found
            out[masked_key] = _mask_json(item, k, kinds)
        return out
    if isinstance(value, list):
        return [_mask_json(item, key, kinds) for item in value]
    if isinstance(value, str):
        masked, found = _mask(value, key)
        kinds += found
        return masked
    if isinstance(value, (int, float)) and not isinstance(value, bool) and key is not None:
        masked, found = _mask(str(value), key)
        if found:
            kinds += found
            return masked
    return value
