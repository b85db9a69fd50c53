"""The ``mem`` command: a Typer app whose commands are thin wrappers over the stages."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from mem import __version__

if TYPE_CHECKING:
    import typer

# typer (and the command modules) load on first use of ``app``: a command handed to the warm helper
# (mem.cli.warm) never needs them.


def _version(value: bool) -> None:
    import typer

    if value:
        typer.echo(f"mem {__version__}")
        raise typer.Exit()


def build_app() -> "typer.Typer":
    """Assemble the app from each command module (explicitly: no registration at import time)."""
    import typer

    from mem.cli import core, serve

    from mem.cli.group import MemGroup

    app = typer.Typer(
        cls=MemGroup,
        name="mem",
        help="Persistent memory for AI coding assistants: JSON Lines stages over one SQLite file.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,  # plain Click help: Rich's help renderer alone costs ~100 ms of imports
        add_completion=True,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def root(
        version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version"),
    ) -> None:
        """Persistent memory for AI coding assistants: JSON Lines stages over one SQLite file."""

    core.register(app)
    from mem.cli import lifecycle  # lifecycle (issue #4)
    lifecycle.register(app)
    from mem.cli import graph  # knowledge graph (issue #3)
    graph.register(app)
    serve.register(app)
    from mem.cli import doctor, hook, shell  # shell ecosystem (issue #7)
    shell.register(app)
    hook.register(app)
    doctor.register(app)
    from mem.cli import scope  # scopes that name repositories (issue #18)
    scope.register(app)
    from mem.cli import sync  # mem sync OTHER (issue 17)
    sync.register(app)
    from mem.cli.group import keep_example_lines

    keep_example_lines(app)
    return app


def __getattr__(name: str) -> Any:
    if name == "app":  # built once, on first use (main calls this directly, so look first)
        built = globals().get("app")
        if built is None:
            globals()["app"] = built = build_app()
        return built
    raise AttributeError(f"module 'mem.cli' has no attribute {name!r}")


def main() -> None:
    from mem.cli import warm

    argv = sys.argv[1:]
    handed_over = warm.wanted(argv)
    if handed_over:
        try:
            code = warm.forward(argv)
        except KeyboardInterrupt:
            sys.exit(130)
        if code is not None:
            sys.exit(code)
    from mem.runtime import limit_blas_threads

    limit_blas_threads()
    try:
        # "mem" however it was started: `python -m mem` would otherwise name itself "python -m mem" in
        # usage lines and in the completion variable (_MEM_COMPLETE), and a caller's __main__ would leak in.
        __getattr__("app")(prog_name="mem")
    finally:
        if handed_over and "onnxruntime" in sys.modules:  # this run paid for the model: keep one warm
            warm.start_in_background("minilm")


def main_in_process(argv: list[str]) -> int:
    """Run ``mem ARGV`` in this process (the warm helper's requests); the exit code."""
    try:
        __getattr__("app")(args=argv, prog_name="mem")
    except SystemExit as done:
        code = done.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0
