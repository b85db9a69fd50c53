"""JSON Lines in and out. Input is validated whole before anything is written."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import IO, Any

import orjson

from mem.errors import BadInput

MAX_LINE_BYTES = 8 * 1024 * 1024  # a line larger than this is refused by name, never read into a record


def dumps(record: Any) -> bytes:
    return orjson.dumps(record, option=orjson.OPT_NON_STR_KEYS)


def write_records(records: Iterable[Any], out: IO[bytes]) -> int:
    """Write each record (a dict or anything with ``to_record()``) as one line; returns the count."""
    count = 0
    for record in records:
        if hasattr(record, "to_record"):
            record = record.to_record()
        out.write(dumps(record) + b"\n")
        count += 1
    out.flush()
    return count


def read_records(stream: IO[bytes], *, source: str = "<stdin>") -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; raise BadInput naming the line.

    >>> import io
    >>> list(read_records(io.BytesIO(b'{"text": "a"}\\n\\n{"text": "b"}\\n')))
    [(1, {'text': 'a'}), (3, {'text': 'b'})]
    """
    for number, raw in enumerate(_lines(stream, source), start=1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadInput(f"{source} line {number}: not valid UTF-8 (byte {exc.start})", line=number) from None
        if "\x00" in text:
            raise BadInput(f"{source} line {number}: contains a NUL byte", line=number)
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise BadInput(f"{source} line {number}: invalid JSON: {exc}", line=number) from None
        if not isinstance(value, dict):
            raise BadInput(
                f"{source} line {number}: expected a JSON object, got {type(value).__name__}", line=number
            )
        yield number, value


def _lines(stream: IO[bytes], source: str) -> Iterator[bytes]:
    number = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise BadInput(
                f"{source} line {number}: longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB", line=number
            )
        yield raw
