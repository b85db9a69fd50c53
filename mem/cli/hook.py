"""``mem hook install|uninstall|run``: capture decisions from git commits."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from mem.cli.common import DbOption, FormatOption, JsonOption, NowOption, QuietOption, emit, open_context, reports_errors, use_table

RepoOption = Annotated[Path, typer.Option("--repo", "-C", help="Repository (any folder inside it)", file_okay=False)]
AllOption = Annotated[bool, typer.Option("--all", help="Also capture commits whose message states a decision in words (a switch, a replacement, a reason), not only trailers, breaking changes and reverts")]

hook_app = typer.Typer(name="hook", help="Capture decisions from git commits (post-commit hook and backfill).",
                       no_args_is_help=True)


@hook_app.command()
@reports_errors
def install(
    repo: RepoOption = Path("."), all_commits: AllOption = False,
    db: Annotated[Optional[Path], typer.Option("--db", help="Database the hook writes to [default: MEM_DB, else the default]", show_default=False)] = None,
    json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Add a post-commit hook that captures each new commit's decisions; other hook content is kept.

    mem hook install
    mem hook install --repo ~/src/app --all
    """
    from mem.stages import githook

    emit([githook.install(repo, all_commits=all_commits, db=db)], table=use_table(fmt, json))


@hook_app.command()
@reports_errors
def uninstall(repo: RepoOption = Path("."), json: JsonOption = False, fmt: FormatOption = None) -> None:
    """Remove only what 'mem hook install' added to the post-commit hook."""
    from mem.stages import githook

    emit([githook.uninstall(repo)], table=use_table(fmt, json))


@hook_app.command()
@reports_errors
def run(
    repo: RepoOption = Path("."),
    since: Annotated[Optional[str], typer.Option("--since", help="Only commits after this revision (REV..HEAD) [default: the whole history]", show_default=False)] = None,
    head: Annotated[bool, typer.Option("--head", help="Only the HEAD commit (what the installed hook runs)")] = False,
    all_commits: AllOption = False,
    db: DbOption = None, now: NowOption = None, quiet: QuietOption = False,
    json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Capture commits from 'git log' as decision memories (backfill); safe to run again.

    mem hook run
    mem hook run --since v1.0 --all
    """
    import sys
    from collections import Counter

    from mem.stages import githook

    outcomes = []
    bar = _Bar(quiet)
    with open_context(db, now=now, create=True) as ctx, bar:
        for outcome in githook.run(ctx, repo, since=since, head_only=head, all_commits=all_commits,
                                   on_total=bar.start, advance=bar.advance):
            outcomes.append(outcome)
        emit(outcomes, table=use_table(fmt, json), ctx=ctx)
    if not quiet:
        counts = Counter(o.status for o in outcomes)
        summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "nothing to capture"
        sys.stderr.write(f"hook: {summary}\n")


class _Bar:
    """A progress bar whose total is known only once git log has answered."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self._cm = None
        self._advance = None

    def start(self, total: int) -> None:
        from mem.cli.progress import progress

        self._cm = progress("hook backfill", total, quiet=self.quiet or total < 2)
        self._advance = self._cm.__enter__()

    def advance(self, n: int = 1) -> None:
        if self._advance is not None:
            self._advance(n)

    def __enter__(self) -> "_Bar":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._cm is not None:
            self._cm.__exit__(*exc)


def register(app: typer.Typer) -> None:
    app.add_typer(hook_app, name="hook")
