"""Regenerate completions/ and man/ from the assembled app (run after adding or changing a command).

    python scripts/generate_shell_files.py          # write the files
    python scripts/generate_shell_files.py --check  # exit 1 if any committed file is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def expected() -> dict[Path, str]:
    """Every generated file (path relative to the repo root) and its content."""
    from mem import __version__
    from mem.cli import build_app
    from mem.cli.shell import COMPLETION_FILES, completion_script, man_pages

    files = {Path("completions") / name: completion_script(shell) for shell, name in COMPLETION_FILES.items()}
    for name, text in man_pages(build_app(), version=__version__).items():
        files[Path("man") / name] = text
    return files


def stale(files: dict[Path, str]) -> list[str]:
    """Files that are missing or differ, plus generated-looking files no command produces any more."""
    problems = [str(p) for p, text in files.items() if not (ROOT / p).is_file() or (ROOT / p).read_text() != text]
    for folder, pattern in (("man", "*.1"), ("completions", "*")):
        for path in sorted((ROOT / folder).glob(pattern)):
            if path.relative_to(ROOT) not in files:
                problems.append(f"{path.relative_to(ROOT)} (no such command any more)")
    return problems


def main(argv: list[str]) -> int:
    files = expected()
    if "--check" in argv:
        problems = stale(files)
        for problem in problems:
            sys.stderr.write(f"stale: {problem}\n")
        return 1 if problems else 0
    for folder in ("man", "completions"):
        (ROOT / folder).mkdir(exist_ok=True)
        for path in (ROOT / folder).iterdir():
            if path.relative_to(ROOT) not in files and path.is_file():
                path.unlink()
    for path, text in files.items():
        (ROOT / path).write_text(text)
    sys.stderr.write(f"wrote {len(files)} files\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main(sys.argv[1:]))
