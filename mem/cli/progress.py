"""Progress bars for long jobs: Rich, on stderr, only on a terminal, silenced by ``--quiet``.

stdout is the data pipe, so nothing here ever touches it; piped or in cron, these are no-ops.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Advance = Callable[[int], None]


def enabled(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


@contextmanager
def progress(label: str, total: int | None, *, quiet: bool = False) -> Iterator[Advance]:
    """Yield ``advance(n)``; a bar (or a spinner when ``total`` is None) while the block runs.

    with progress("import", len(records), quiet=quiet) as advance:
        for outcome in outcomes:
            advance(1)
    """
    if not enabled(quiet):
        yield lambda n=1: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = [SpinnerColumn(), TextColumn("{task.description}")]
    if total is not None:
        columns += [BarColumn(), MofNCompleteColumn()]
    columns.append(TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n=1: bar.advance(task, n)
