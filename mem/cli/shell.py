"""Shell ecosystem: ``mem completions SHELL`` and the generators behind completions/ and man/.

Both are generated from the assembled Typer app at the moment they run, so commands added by
any module (graph, lifecycle, MCP, hook, doctor) show up without a hand-written list.
Regenerate the committed files with ``python scripts/generate_shell_files.py``.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from mem.cli.common import reports_errors
from mem.errors import BadInput

SHELLS = ("bash", "zsh", "fish")
# File names a package manager or a user drops into the shell's completion folder.
COMPLETION_FILES = {"bash": "mem.bash", "zsh": "_mem", "fish": "mem.fish"}
PROG = "mem"
COMPLETE_VAR = "_MEM_COMPLETE"


def completion_script(shell: str) -> str:
    """The completion script for ``shell``; it calls back into ``mem`` for dynamic values.

    >>> completion_script("bash").rstrip().endswith("complete -o default -F _mem_completion mem")
    True
    """
    if shell not in SHELLS:
        raise BadInput(f"unknown shell {shell!r}: one of {', '.join(SHELLS)}", shell=shell)
    from typer._completion_shared import get_completion_script

    script = get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell)
    return script.strip() + "\n"


def _walk(command: Any, path: tuple[str, ...]) -> Any:
    """(command path, click command) for the root and every visible subcommand, depth first."""
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        if not getattr(sub, "hidden", False):
            yield from _walk(sub, (*path, name))


def command_tree(app: typer.Typer) -> list[tuple[tuple[str, ...], Any]]:
    """Every visible command of ``app`` as ``(("mem", "hook", "install"), click_command)``."""
    return list(_walk(typer.main.get_command(app), (PROG,)))


def _param_doc(param: Any, ctx: Any) -> tuple[str, str] | None:
    """``(switches, help)`` for an option or an argument (click-man alone lists options only)."""
    if getattr(param, "hidden", False):
        return None
    record = param.get_help_record(ctx)
    if not record:
        return None
    # One token, so click-man sets every switch in bold, not only the first.
    return record[0].replace(", ", ","), _roff(record[1] or "")


def _roff(text: str) -> str:
    """Escape text for roff: backslashes, and lines that would read as requests (``.``/``'``)."""
    lines = text.replace("\\", "\\e").split("\n")
    return "\n".join("\\&" + line if line[:1] in (".", "'") else line for line in lines)


def _description(text: str) -> str:
    """The help text as roff; paragraphs of example command lines keep their line breaks."""
    out = []
    for paragraph in text.split("\n\n"):
        paragraph = paragraph.removeprefix("\b\n")  # Click's keep-lines marker (``keep_example_lines``)
        lines = paragraph.split("\n")
        if lines and all(line.startswith(f"{PROG} ") for line in lines):
            out.append(".nf\n" + _roff(paragraph) + "\n.fi")
        else:
            out.append(_roff(paragraph))
    return "\n\n".join(out)


def man_pages(app: typer.Typer, *, version: str) -> dict[str, str]:
    """``{"mem.1": roff, "mem-add.1": roff, ...}`` rendered with click-man's ManPage.

    The date is left empty so the pages only change when the app does (the test compares them).
    """
    from inspect import cleandoc

    from click_man.man import ManPage
    from typer import _click

    pages: dict[str, str] = {}
    contexts: dict[tuple[str, ...], Any] = {}
    for path, command in command_tree(app):
        parent = contexts.get(path[:-1])
        ctx = _click.Context(command, info_name=path[-1], parent=parent)
        contexts[path] = ctx
        page = ManPage(" ".join(path))
        page.version = version
        page.date = ""
        help_text = cleandoc(command.help or "")
        page.short_help = _roff(command.short_help or (help_text.splitlines()[0] if help_text else ""))
        page.description = _description(help_text)
        page.synopsis = " ".join(command.collect_usage_pieces(ctx))
        docs = [_param_doc(p, ctx) for p in command.get_params(ctx)]
        page.options = [d for d in docs if d is not None]
        subs = getattr(command, "commands", None)
        if subs:
            page.commands = [(name, _roff(sub.short_help or cleandoc(sub.help or "").split("\n")[0]))
                             for name, sub in sorted(subs.items()) if not getattr(sub, "hidden", False)]
        pages["-".join(path) + ".1"] = str(page)
    return pages


@reports_errors
def completions(
    shell: Annotated[str, typer.Argument(help="bash | zsh | fish", autocompletion=lambda: list(SHELLS))],
) -> None:
    """Print the shell completion script (completes commands, options, memory ids, scopes, kinds and tags).

    mem completions bash > ~/.local/share/bash-completion/completions/mem
    mem completions zsh > "${fpath[1]}/_mem"
    mem completions fish > ~/.config/fish/completions/mem.fish
    """
    import sys

    sys.stdout.write(completion_script(shell))


def register(app: typer.Typer) -> None:
    app.command()(completions)
