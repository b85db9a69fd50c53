"""The ``mem`` command: a Typer app whose commands are thin wrappers over the stages."""

from __future__ import annotations

import typer

from mem import __version__


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mem {__version__}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    """Assemble the app from each command module (explicitly: no registration at import time)."""
    from mem.cli import core, serve

    app = typer.Typer(
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
    return app


app = build_app()


def main() -> None:
    from mem.runtime import limit_blas_threads

    limit_blas_threads()
    # "mem" however it was started: `python -m mem` would otherwise name itself "python -m mem" in
    # usage lines and in the completion variable (_MEM_COMPLETE), and a caller's __main__ would leak in.
    app(prog_name="mem")
