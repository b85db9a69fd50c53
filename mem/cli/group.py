"""The root command's Click group: Click's own errors follow the error contract, help keeps examples.

Imported by ``build_app`` only (Typer loads on first use of the app: see ``mem.cli``).
"""

from __future__ import annotations

import sys
from typing import Any

import typer
import typer.core

from mem.errors import Exit


class MemGroup(typer.core.TyperGroup):
    """Click's errors reported like every other (``report``: one JSON line when stderr is not a
    terminal). A bad value for a flag is bad input (exit 4), like a bad value in JSON Lines or an MCP
    argument; a malformed command line is usage (exit 2)."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        prog_name = prog_name or "mem"  # not "python -m mem" in usage lines and error hints
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        from typer._click import exceptions as click  # Typer's vendored Click: its errors are these classes

        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.NoArgsIsHelpError as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            sys.exit(report_click_error(exc))
        except typer.Abort:  # end of input at a prompt, or Ctrl-C outside a command
            sys.stderr.write("\n")
            sys.exit(int(Exit.INTERRUPTED))
        sys.exit(code if isinstance(code, int) else 0)


def report_click_error(exc: Any) -> int:
    """One stderr line for a Click error; its exit code (2 usage, 4 a bad value)."""
    from typer._click import exceptions as click

    from mem.cli.common import report
    from mem.errors import BadInput, Usage

    message = exc.format_message().replace("\n", " ")
    command = exc.ctx.command_path if getattr(exc, "ctx", None) is not None else "mem"
    if isinstance(exc, click.BadParameter) and not isinstance(exc, click.MissingParameter):
        error: Any = BadInput(message, command=command)
    elif isinstance(exc, click.UsageError):
        error = Usage(f"{message.rstrip('.')} (see '{command} --help')", command=command)
    else:
        error = BadInput(message)
    report(error)
    return int(error.exit)


def keep_example_lines(app: typer.Typer) -> None:
    """Mark each help paragraph of example commands with Click's no-rewrap marker (a lone \\b line), so
    ``mem archive --help`` shows one example per line instead of reflowing them into one."""
    import inspect

    for info in app.registered_commands:
        doc = info.help or (inspect.getdoc(info.callback) if info.callback else None)
        if doc:
            info.help = _mark_examples(doc)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            keep_example_lines(group.typer_instance)


def _mark_examples(doc: str) -> str:
    paragraphs = doc.split("\n\n")
    return "\n\n".join("\b\n" + p if p.lstrip().startswith("mem ") and not p.startswith("\b") else p
                       for p in paragraphs)
