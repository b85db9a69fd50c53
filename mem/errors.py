"""Errors raised by library code, each carrying the exit code the CLI turns it into."""

from __future__ import annotations

from enum import IntEnum
from typing import Any


class Exit(IntEnum):
    OK = 0
    ERROR = 1  # a bug; traceback only with MEM_DEBUG=1
    USAGE = 2  # Typer's own code for bad flags
    NOT_FOUND = 3
    BAD_INPUT = 4
    STORE = 5  # locked, schema too new, sqlite-vec missing, embedder mismatch
    EMBEDDER = 6  # Ollama down, model missing
    CHECK_FAILED = 7  # verify found problems
    INTERRUPTED = 130


class MemError(Exception):
    """Base class: a message for people plus a machine-readable code and extra fields."""

    exit = Exit.ERROR
    code = "error"

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields

    def to_record(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.fields}}


class Usage(MemError):
    """The command line itself is wrong: an unknown option, a missing argument (Click's exit 2)."""

    exit = Exit.USAGE
    code = "usage"


class NotFound(MemError):
    exit = Exit.NOT_FOUND
    code = "not_found"


class Ambiguous(MemError):
    exit = Exit.NOT_FOUND
    code = "ambiguous"


class BadInput(MemError):
    exit = Exit.BAD_INPUT
    code = "bad_input"


class StoreError(MemError):
    exit = Exit.STORE
    code = "store"


class EmbedderError(MemError):
    exit = Exit.EMBEDDER
    code = "embedder"


class Interrupted(MemError):
    exit = Exit.INTERRUPTED
    code = "interrupted"


class CheckFailed(MemError):
    exit = Exit.CHECK_FAILED
    code = "check_failed"
