"""Completions and man pages: generated from the app, committed current, and they actually work."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_mem

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))


def _generator():
    import generate_shell_files

    return generate_shell_files


def test_committed_completions_and_man_pages_are_current():
    gen = _generator()
    problems = gen.stale(gen.expected())
    assert not problems, f"regenerate with 'python scripts/generate_shell_files.py': {problems}"


def test_every_command_and_option_is_in_its_man_page():
    from mem.cli import build_app
    from mem.cli.shell import command_tree

    for path, command in command_tree(build_app()):
        page = (ROOT / "man" / ("-".join(path) + ".1")).read_text()
        assert page.startswith(f'.TH "{" ".join(path).upper()}"')
        for param in command.params:
            if getattr(param, "hidden", False):
                continue
            names = [*param.opts, *param.secondary_opts] if param.param_type_name == "option" else [param.metavar or param.name]
            for name in names:
                if name.startswith("-"):
                    assert name.replace("-", r"\-") in page, f"{name} missing from {'-'.join(path)}.1"
                else:
                    assert name in page, f"argument {name} missing from {'-'.join(path)}.1"
        for sub in getattr(command, "commands", {}):
            assert rf"\fB{sub}\fP" in page
            assert (ROOT / "man" / ("-".join((*path, sub)) + ".1")).is_file()


def test_man_page_renders_with_man_when_available():
    man = shutil.which("man")
    if man is None:
        pytest.skip("man is not installed")
    proc = subprocess.run([man, "-l", str(ROOT / "man" / "mem-search.1")], capture_output=True,
                          env={**os.environ, "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "100"})
    assert proc.returncode == 0
    assert b"--limit" in proc.stdout.replace(b"\xe2\x80\x90", b"-")


def test_completions_command_prints_the_committed_scripts():
    for shell, name in (("bash", "mem.bash"), ("zsh", "_mem"), ("fish", "mem.fish")):
        result = run_mem("completions", shell)
        assert result.code == 0
        assert result.stdout == (ROOT / "completions" / name).read_text()
    bad = run_mem("completions", "tcsh")
    assert bad.code == 4 and "tcsh" in bad.error["message"]


def _bash_complete(words: list[str], cword: int, env: dict[str, str] | None = None) -> list[str]:
    """Load completions/mem.bash into a real bash, set COMP_WORDS and call the completion function."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    bindir = Path(os.environ["HOME"]) / "bin"
    bindir.mkdir(exist_ok=True)
    shim = bindir / "mem"  # the script calls `mem`: point it at this interpreter and checkout
    # argv[0] must be "mem": the completion variable's name (_MEM_COMPLETE) comes from the program name.
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'import sys; sys.argv[0] = \"mem\"; "
                    f"from mem.cli import main; main()' \"$@\"\n")
    shim.chmod(0o755)
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    script = (f"source {ROOT / 'completions' / 'mem.bash'}\n"
              f"COMP_WORDS=({quoted}); COMP_CWORD={cword}\n"
              "_mem_completion mem\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    proc = subprocess.run([bash, "--norc", "--noprofile", "-c", script], capture_output=True, text=True,
                          env={**os.environ, **(env or {}), "PATH": f"{bindir}:{os.environ['PATH']}",
                               "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return [line for line in proc.stdout.splitlines() if line]


@pytest.mark.slow  # a bash and an interpreter per completion
def test_bash_completes_a_subcommand_and_an_option():
    assert "search" in _bash_complete(["mem", "sea"], 1)
    assert "serve-mcp" not in _bash_complete(["mem", "sea"], 1)
    assert "--limit" in _bash_complete(["mem", "search", "redis", "--li"], 3)
    hook = _bash_complete(["mem", "hook", ""], 2)
    assert {"install", "uninstall", "run"} <= set(hook)


@pytest.mark.slow  # a bash and an interpreter per completion
def test_dynamic_completion_of_ids_scopes_kinds_and_tags():
    added = run_mem("add", "--tag", "cache,redis", "We chose Redis for the cache layer").records[0]
    run_mem("add", "--scope", "otherproj", "--tag", "rust", "The parser is written in Rust")
    ids = _bash_complete(["mem", "get", added["id"][:10]], 2)
    assert added["id"] in ids
    assert _bash_complete(["mem", "list", "--scope", "oth"], 3) == ["otherproj"]
    assert _bash_complete(["mem", "list", "--scope", ""], 3) == ["otherproj", "test"]
    assert _bash_complete(["mem", "list", "--kind", "fact,dec"], 3) == ["fact,decision"]
    assert _bash_complete(["mem", "list", "--tag", "re"], 3) == ["redis"]
    assert _bash_complete(["mem", "update", "x", "--untag", "ca"], 4) == ["cache"]


def test_completion_never_raises_and_never_creates_a_database(tmp_path: Path):
    missing = tmp_path / "nowhere" / "mem.db"
    assert _bash_complete(["mem", "get", "01"], 2, env={"MEM_DB": str(missing)}) == []
    assert not missing.parent.exists()
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    assert _bash_complete(["mem", "list", "--tag", ""], 3, env={"MEM_DB": str(garbage)}) == []
    assert garbage.read_bytes() == b"not a database at all" * 100


def test_progress_is_silent_off_a_terminal(capsys: pytest.CaptureFixture[str]):
    from mem.cli.progress import enabled, progress

    assert enabled(quiet=True) is False
    with progress("import", 3) as advance:
        for _ in range(3):
            advance(1)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_no_shell_is_ever_started_with_user_text():
    for path in (ROOT / "mem").rglob("*.py"):
        text = path.read_text()
        assert "shell=True" not in text and "os.system(" not in text and "os.popen(" not in text, path
