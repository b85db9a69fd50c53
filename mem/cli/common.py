"""What every command shares: option types, opening the store, output, and error reporting."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, BinaryIO, TypeVar

import typer

from mem.cli.complete import complete_embedders, complete_formats, complete_scopes
from mem.errors import BadInput, Exit, MemError

DbOption = Annotated[str | None, typer.Option("--db", envvar="MEM_DB", help="Database file or postgresql:// URL [default: $XDG_DATA_HOME/mem/mem.db]", show_default=False)]
ScopeOption = Annotated[str | None, typer.Option("--scope", "-s", help="Scope (project); '*' for every scope [default: git repo name, else 'global']", show_default=False, autocompletion=complete_scopes)]
EmbedderOption = Annotated[str | None, typer.Option("--embedder", help="minilm | hash | ollama:MODEL [default: the database's, else minilm]", show_default=False, autocompletion=complete_embedders)]
NowOption = Annotated[str | None, typer.Option("--now", help="Pretend the time is this ISO-8601 instant (env MEM_NOW)", show_default=False)]
JsonOption = Annotated[bool, typer.Option("--json", help="JSON Lines even on a terminal")]
FormatOption = Annotated[str | None, typer.Option("--format", "-f", help="table | jsonl [default: table on a terminal, else jsonl]", show_default=False, autocompletion=complete_formats)]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress or summary on stderr")]

F = TypeVar("F", bound=Callable[..., Any])


def _stderr_is_tty() -> bool:
    return sys.stderr.isatty()


def report(error: MemError) -> None:
    """One line on stderr: readable on a terminal, a JSON object otherwise."""
    if _stderr_is_tty():
        from mem.text import visible  # a message may quote a memory, an id or a path: no raw escapes

        sys.stderr.write(f"mem: error: {visible(error.message, newlines=False)}\n")
    else:
        from mem.jsonl import dumps

        sys.stderr.write(dumps(error.to_record()).decode("utf-8") + "\n")
    sys.stderr.flush()


def reports_errors(func: F) -> F:
    """Turn MemError into its exit code with one stderr line; hide tracebacks unless MEM_DEBUG=1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            _check_arguments(kwargs)
            return func(*args, **kwargs)
        except MemError as error:
            if os.environ.get("MEM_DEBUG") == "1":
                raise
            report(error)
            raise typer.Exit(int(error.exit)) from None
        except BrokenPipeError:
            _silence_stdout()
            raise typer.Exit(0) from None
        except KeyboardInterrupt:
            raise typer.Exit(int(Exit.INTERRUPTED)) from None
        except typer.Exit:
            raise
        except Exception as exc:  # a bug: say so in one line, keep the traceback for MEM_DEBUG
            if os.environ.get("MEM_DEBUG") == "1":
                raise
            report(MemError(f"internal error: {type(exc).__name__}: {exc} (rerun with MEM_DEBUG=1 for a traceback)"))
            raise typer.Exit(int(Exit.ERROR)) from None

    return wrapper  # type: ignore[return-value]


def _check_arguments(arguments: dict[str, Any]) -> None:
    """Refuse an argument that is not valid UTF-8 (Python hands its bytes over as lone surrogates)."""
    for name, value in arguments.items():
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, (str, Path)) and not str(item).isascii():
                try:
                    str(item).encode("utf-8")
                except UnicodeEncodeError as exc:
                    name = name.rstrip("_")
                    raise BadInput(f"argument {name!r} is not valid UTF-8 (at character {exc.start + 1})",
                                   argument=name) from None


def _silence_stdout() -> None:
    # The reader went away (`mem search x | head -1`): point stdout at /dev/null so the
    # interpreter's final flush does not raise a second BrokenPipeError.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


@contextmanager
def open_context(db: str | Path | None, *, scope: str | None = None, embedder: str | None = None,
                 now: str | None = None, create: bool = False) -> Iterator[Any]:
    """Settings resolved once, the store opened, both closed on the way out.

    Only commands that store memories (``create``) make a new database: anything else on a missing
    file is an error (exit 5), so a typo in ``--db`` never reads as "no results"."""
    from mem.config import resolve_settings
    from mem.stages.context import Context
    from mem.store import Store

    settings = resolve_settings(db=db, scope=scope, embedder=embedder, now=now)
    with Store.open(settings.db_path, create=create) as store:
        context = Context(store=store, settings=settings)
        if settings.repo is not None:
            _adopt_scope(context)
        yield context


def _adopt_scope(context: Any) -> None:
    """Note the repository this command runs in; move its pre-0.2 folder-name memories to its scope."""
    from mem.errors import StoreError
    from mem.stages.scopes import adopt

    repo = context.settings.repo
    try:
        moved = adopt(context.store, repo, context.now_iso())
    except StoreError:  # locked for long, read-only: the next command tries again; this one still runs
        return
    if moved and _stderr_is_tty():
        sys.stderr.write(f"mem: moved {moved} memories from scope {repo.legacy!r} (the folder's name) to "
                         f"{repo.name!r}, this repository's scope; `mem scope` shows how it is derived\n")


def use_table(fmt: str | None, json_flag: bool) -> bool:
    if json_flag:
        return False
    if fmt is None:
        return sys.stdout.isatty()
    from mem import vocab

    return vocab.check("format", fmt) == "table"


def emit(records: Iterable[Any], *, table: bool, columns: tuple[str, ...] = (), ctx: Any = None) -> int:
    """Write records to stdout: JSON Lines, or a Rich table for people on a terminal.

    With the open ``ctx``, a table shows each id as its handle and times relative to ``ctx``'s clock.
    """
    if not table:
        from mem.jsonl import write_records

        return write_records(records, sys.stdout.buffer)
    rows = [r.to_record() if hasattr(r, "to_record") else r for r in records]
    from mem.cli.tables import render

    render(rows, columns, **_table_context(ctx))
    return len(rows)


def emit_one(record: dict[str, Any], *, table: bool, ctx: Any = None) -> None:
    """One summary record (stats, an entity): tables of its fields for people, one JSON line otherwise."""
    if not table:
        emit([record], table=False)
        return
    from mem.cli.tables import render_report

    render_report(record, **_table_context(ctx))


def _table_context(ctx: Any) -> dict[str, Any]:
    if ctx is None:
        return {}
    return {"handles": ctx.store.handles, "now": ctx.settings.now()}


def collect_batch(outcomes: Iterable[Any], advance: Callable[[int], Any] | None = None) -> tuple[list[Any], bool]:
    """Every outcome a batch yields, and whether Ctrl-C stopped it. Intake yields a chunk's outcomes
    only once the chunk is committed, so what comes back is exactly what is stored."""
    done: list[Any] = []
    try:
        for outcome in outcomes:
            done.append(outcome)
            if advance is not None:
                advance(1)
    except KeyboardInterrupt:
        return done, True
    return done, False


def interrupted(done: list[Any], total: int, rerun: str) -> MemError:
    """The one line a batch stopped by Ctrl-C ends with: where it stopped and how to go on."""
    from mem.errors import Interrupted

    last = next((o.line for o in reversed(done) if getattr(o, "line", None) is not None), None)
    where = f" (input line {last})" if last is not None else ""
    return Interrupted(f"interrupted: {len(done)} of {total} records committed{where}, the rest not stored; "
                       f"{rerun} again to finish (what is stored comes back as 'duplicate')",
                       committed=len(done), total=total, last_line=last)


def input_stream(path: str) -> BinaryIO:
    """``-`` is stdin (only when asked: never read stdin implicitly); anything else a file."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise BadInput(f"no such file: {path}", path=path) from None
    except IsADirectoryError:
        raise BadInput(f"{path} is a folder, not a JSON Lines file", path=path) from None
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror}", path=path) from None


def time_option(value: str | None, name: str, ctx: Any = None) -> str | None:
    """A --since/--until value (ISO-8601, 7d, yesterday, last week) as the stored UTC form, read against
    ``ctx``'s clock (``--now``); BadInput names the flag."""
    from mem.stages.add import parse_time_option

    now = ctx.settings.now() if ctx is not None else None
    return parse_time_option(value, f"--{name}", now, upper=name == "until")


def split_csv(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or []:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out
