"""The CLI a person lives with (issue 15): missing databases, one list per enumerated value, one error
contract, tables at 80 and 200 columns, time phrases, interrupts and empty-scope hints."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import jsonl, run_mem
from tests.tty import run_tty

ROOT = Path(__file__).resolve().parents[1]

# --------------------------------------------------------------------------- a missing database

READERS = [("search", "x"), ("get", "abcd"), ("list",), ("stats",), ("export",), ("graph", "stats"),
           ("graph", "entities"), ("verify",), ("archive", "--list"), ("consolidate",), ("update", "abcd", "--pin"),
           ("forget", "abcd"), ("reindex",)]


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a))
def test_a_read_command_on_a_missing_database_is_exit_5_and_creates_nothing(mem, tmp_path: Path, args) -> None:
    db = tmp_path / "typo" / "x.db"
    result = mem(*args, "--db", str(db))
    assert result.code == 5, (result.stdout, result.stderr)
    assert result.error["message"] == f"no database at {db}; `mem add` creates one"
    assert result.stdout == ""
    assert not db.parent.exists()


def test_add_still_creates_the_database(mem, tmp_path: Path) -> None:
    db = tmp_path / "new" / "x.db"
    assert mem("add", "a first memory about deploys", "--db", str(db)).code == 0
    assert db.exists()


# --------------------------------------------------------------------------- enumerated values


@pytest.mark.parametrize("args, field", [
    (("search", "foo", "--kind", "nosuch"), "kind"),
    (("list", "--kind", "fact,nosuch"), "kind"),
    (("list", "--status", "weird"), "status"),
    (("search", "foo", "--channel", "psychic"), "channel"),
    (("list", "--format", "xml"), "format"),
    (("consolidate", "--phase", "nap"), "phase"),
    (("graph", "export", "--layer", "astral"), "graph_layer"),
    (("graph", "export", "--format", "pdf"), "graph_format"),
    (("update", "abcd", "--kind", "bogus"), "kind"),
])
def test_an_unknown_value_is_exit_4_naming_the_known_ones(mem, args, field) -> None:
    mem("add", "a memory so the database exists")
    result = mem(*args)
    assert result.code == 4, result.stderr
    assert result.error["field"] == field and "one of" in result.error["message"]


def test_link_type_add_kind_and_query_lines_share_the_lists(mem) -> None:
    a, b = (r["id"] for r in mem("add", "-", input=jsonl({"text": "the cache layer uses redis"},
                                                       {"text": "deploys happen on fridays"})).records)
    bad_link = mem("graph", "link", a, b, "--type", "nonsense")
    assert bad_link.code == 4 and bad_link.error["field"] == "link_type" and "see_also" in bad_link.error["message"]
    assert mem("graph", "link", a, b, "--type", "caused", "--json").code == 0
    bad_kind = mem("add", "-", input=jsonl({"text": "fine memory here"}, {"text": "another memory", "kind": "gossip"}))
    assert bad_kind.code == 4 and bad_kind.error["line"] == 2 and bad_kind.error["field"] == "kind"
    bad_query = mem("search", "-", input=jsonl({"query": "cache"}, {"query": "cache", "kinds": ["nosuch"]}))
    assert bad_query.code == 4 and "line 2" in bad_query.error["message"] and bad_query.stdout == ""
    # channels are all signed (changes to the defaults) or none: a mixed list names the signed one
    mixed = mem("search", "cache", "--channel", "+maxsim", "--channel", "entity")
    assert mixed.code == 4 and "+maxsim" in mixed.error["message"] and mixed.stdout == ""


def test_mcp_checks_the_same_lists_and_refuses_unknown_arguments(mem) -> None:
    import anyio

    from tests.test_mcp import stdio_client, text

    mem("add", "the cache layer uses redis for sessions")

    async def main() -> None:
        async with stdio_client() as client:
            listed = await client.list_tools()
            assert all(t.input_schema.get("additionalProperties") is False for t in listed.tools)
            bad_kind = await client.call_tool("search", {"query": "cache", "kinds": ["nosuch"]})
            assert bad_kind.is_error and "unknown kind 'nosuch'" in text(bad_kind)
            unknown = await client.call_tool("search", {"query": "cache", "kind": "fact"})
            assert unknown.is_error and "kind" in text(unknown)
            bad_status = await client.call_tool("recent", {"status": "weird"})
            assert bad_status.is_error and "unknown status" in text(bad_status)
            bad_layer = await client.call_tool("update", {"id": "abcd", "layer": 9})
            assert bad_layer.is_error
            one = await client.call_tool("search", {"query": "cache redis", "limit": 1})
            assert not one.is_error and one.structured_content["count"] == 1
            old_name = await client.call_tool("search", {"query": "cache redis", "k": 1})
            assert not old_name.is_error and old_name.structured_content["count"] == 1

    anyio.run(main)


# --------------------------------------------------------------------------- one error contract


@pytest.mark.parametrize("args, code", [
    (("search", "x", "--bogus"), 2),
    (("get",), 2),
    (("nosuchcommand",), 2),
    (("add", "--layer", "9", "hello there"), 4),
    (("search", "x", "-k", "0"), 4),
    (("list", "--limit", "many"), 4),
])
def test_click_errors_are_one_json_line_off_a_terminal(mem, args, code) -> None:
    result = mem(*args)
    assert result.code == code
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    error = json.loads(lines[0])["error"]
    assert error["code"] == ("usage" if code == 2 else "bad_input") and error["message"]


def test_on_a_terminal_an_error_is_one_readable_line() -> None:
    shown = run_tty("search", "x", "--bogus")
    assert shown.code == 2
    assert shown.output.strip() == "mem: error: No such option: --bogus (see 'mem search --help')"


# --------------------------------------------------------------------------- tables

LONG = ("The billing service retries failed card charges three times with exponential backoff before it "
        "marks the invoice as past due and emails the account owner")


def test_tables_fit_80_and_200_columns_with_handles_relative_times_and_status(mem) -> None:
    old = mem("add", "--now", "2026-11-20T10:00:00Z", "The API server listens on port 8080.").records[0]["id"]
    mem("add", "--now", "2026-11-27T10:00:00Z", "The API gateway was moved; the API server now listens on port 9090.")
    mem("add", "--now", "2026-11-30T10:00:00Z", LONG)
    narrow = run_tty("list", "--status", "all", "--now", "2026-12-01T10:00:00Z", columns=80)
    lines = narrow.output.rstrip("\n").splitlines()
    assert all(len(line) <= 80 for line in lines), narrow.output
    assert "yesterday" in narrow.output and "4 days ago" in narrow.output and "11 days ago" in narrow.output
    assert "2026-11" not in narrow.output  # relative times on a terminal ...
    row = next(line for line in lines if "billing" in line)
    assert len(re.search(r"The billing.*?\s{2}", row + "  ").group(0)) >= 40  # the text has the room
    assert "superseded" in narrow.output
    assert old[24:28] in narrow.output and old[:8] not in narrow.output  # handles, not timestamps
    wide = run_tty("list", "--now", "2026-12-01T10:00:00Z", columns=200)
    wide_row = next(line for line in wide.output.splitlines() if "billing" in line)
    assert len(re.search(r"The billing.*?\s{2}", wide_row + "  ").group(0)) >= 100
    assert max(map(len, wide.output.splitlines())) <= 200
    assert "layer" in wide.output and "layer" not in lines[0]  # narrow: the layer column makes way
    piped = mem("list", "--status", "all", "--now", "2026-12-01T10:00:00Z").records
    assert {r["created_at"][:10] for r in piped} == {"2026-11-20", "2026-11-27", "2026-11-30"}  # ... JSON is absolute
    assert any(r["superseded_by"] for r in piped)


def test_search_on_a_terminal_shows_a_compact_why(mem) -> None:
    mem("add", "the cache layer uses redis for sessions")
    shown = run_tty("search", "redis cache", columns=100)
    assert re.search(r"\bsem1\b", shown.output) and "why" in shown.output


def test_the_compact_why_names_the_step_that_moved_a_hit_up() -> None:
    from mem.cli.tables import compact_why

    assert compact_why({"semantic": {"rank": 2}, "bm25": {"rank": 1}, "fused": 0.4}) == "sem2 bm1"
    assert compact_why({"semantic": {"rank": 3}, "current": {"over": "x", "reason": "..."}}) == "sem3 newer"
    assert compact_why({"bm25": {"rank": 4}, "contradicts": {"over": "x"}, "order": {"over": ["y"]}}) == "bm4 newer page"


def test_stats_graph_stats_and_verify_are_tables_without_dict_reprs_or_empty_rows(mem, tmp_path: Path) -> None:
    source = tmp_path / "notes.md"
    source.write_text("deploys happen on fridays\n")
    mem("add", "deploys happen on fridays after the standup", "--source", str(source))
    for args in (("stats",), ("graph", "stats")):
        shown = run_tty(*args)
        assert shown.code == 0 and "{" not in shown.output and "'" not in shown.output, shown.output
    assert re.search(r"by kind\s+fact\s+1", run_tty("stats").output)
    source.write_text("changed\n")
    verify = run_tty("verify")
    table_rows = [line for line in verify.output.splitlines() if line.strip() and not line.startswith("verify:")]
    assert table_rows and all(re.search(r"\w", line.replace("─", "")) for line in table_rows if set(line) != {"─"})
    assert "stale" in verify.output


def test_get_explain_on_a_terminal_shows_the_explanation(mem) -> None:
    memory = mem("add", "the cache layer uses redis for sessions").records[0]["id"]
    shown = run_tty("get", memory, "--explain")
    assert "importance.value" in shown.output and "lifecycle.policy.name" in shown.output
    assert memory in shown.output  # the card shows the full id beside the handle


def test_a_rejected_add_prints_just_the_error_on_a_terminal() -> None:
    shown = run_tty("add", "token ghp_1234567890abcdefghijklmnopqrstuvwxyzAB")
    assert shown.code == 4
    assert shown.output.strip().startswith("mem: error: not stored:") and len(shown.output.strip().splitlines()) == 1


def test_help_keeps_example_lines_and_add_tag_says_it_adds(mem) -> None:
    archive = mem("archive", "--help").stdout
    assert re.search(r"^\s+mem archive --list\s*$", archive, flags=re.M)
    assert re.search(r"^\s+mem archive --restore 3f9a\s*$", archive, flags=re.M)
    add = mem("add", "--help").stdout
    assert re.search(r"-t, --tag.*Add this tag", add)


# --------------------------------------------------------------------------- time filters


def test_since_and_until_take_what_intake_parses(mem) -> None:
    for day in ("2026-11-20", "2026-11-27", "2026-11-30"):
        mem("add", f"a note written on {day} about the release train", "--created-at", f"{day}T10:00:00Z")
    now = "2026-12-01T12:00:00Z"

    def days(*args: str) -> list[str]:
        result = mem("list", *args, "--now", now)
        assert result.code == 0, result.stderr
        return sorted(r["created_at"][:10] for r in result.records)

    mem("add", "the outage happened long ago, written up late", "--created-at", "2026-11-30T11:00:00Z",
        "--event-at", "2026-10-01T00:00:00Z")
    assert days("--since", "7d") == ["2026-11-27", "2026-11-30"]  # the write-up: by event_at, not created_at
    assert days("--until", "2026-10-02") == ["2026-11-30"]
    assert days("--since", "yesterday") == ["2026-11-30"]
    assert days("--since", "last week", "--until", "last week") == ["2026-11-27"]
    assert days("--until", "2026-11-21") == ["2026-11-20", "2026-11-30"]  # the write-up happened on 2026-10-01
    assert mem("search", "release train", "--since", "2d", "--now", now).records[0]["created_at"][:10] == "2026-11-30"
    bad = mem("list", "--since", "whenever")
    assert bad.code == 4 and "7d" in bad.error["message"]
    assert "event_at" in mem("list", "--help").stdout


# --------------------------------------------------------------------------- cron, systemd, doctor


def _readme_block_line(marker: str) -> str:
    readme = (ROOT / "README.md").read_text()
    return next(line for line in readme.splitlines() if marker in line)


def test_the_readme_cron_line_works_from_a_minimal_environment(mem, tmp_path: Path) -> None:
    mem("add", "a memory for the nightly run")
    installer = _readme_block_line("| crontab -")
    echo = re.search(r'echo ("(?:[^"\\]|\\.)*")', installer).group(1)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    line = subprocess.run(["sh", "-c", f"printf '%s\\n' {echo}"], capture_output=True, text=True, env=env).stdout
    assert line.startswith("30 3 * * *") and "$HOME" in line
    command = line.split(None, 5)[5].strip()
    assert re.search(r" /\S*mem consolidate", command)  # an absolute path: cron's PATH does not have mem
    home = Path(os.environ["HOME"])
    cron_env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh", "MEM_DB": os.environ["MEM_DB"],
                "MEM_EMBEDDER": "hash", "PYTHONPATH": str(ROOT)}
    ran = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, env=cron_env, timeout=120)
    assert ran.returncode == 0, ran.stderr
    log = home / ".local/state/mem/consolidate.log"
    assert log.exists() and "consolidate:" in log.read_text()


def test_the_systemd_unit_gets_an_absolute_path(tmp_path: Path) -> None:
    installer = _readme_block_line("sed \"s|@MEM@|")
    home = tmp_path / "unit-home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    subprocess.run(["sh", "-c", installer], check=True, cwd=ROOT, env=env)
    unit = (home / ".config/systemd/user/mem-consolidate.service").read_text()
    exec_start = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    binary = exec_start.split("=", 1)[1].split()[0]
    assert os.path.isabs(binary) and os.access(binary, os.X_OK), exec_start
    assert (home / ".config/systemd/user/mem-consolidate.timer").exists()


def test_doctor_warns_about_what_others_can_do_not_about_a_readable_folder(mem, tmp_path: Path) -> None:
    folder = tmp_path / "chosen"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    db = folder / "mem.db"
    mem("add", "a memory to check", "--db", str(db))

    def database_check() -> dict:
        return next(r for r in mem("doctor", "--db", str(db)).records if r["check"] == "database")

    assert database_check()["status"] == "ok"
    db.chmod(0o644)
    assert database_check()["status"] == "warn" and "read" in database_check()["detail"]
    db.chmod(0o600)
    folder.chmod(0o777)
    try:
        assert database_check()["status"] == "warn" and "replace" in database_check()["detail"]
    finally:
        folder.chmod(0o755)


# --------------------------------------------------------------------------- Ctrl-C during a batch


@pytest.mark.slow  # a real process (or several): full suite and CI only
@pytest.mark.parametrize("command", ["import", "add"])
def test_ctrl_c_during_a_batch_reports_what_committed_and_how_to_resume(tmp_path: Path, command: str) -> None:
    import sqlite3

    source = tmp_path / "big.jsonl"
    source.write_text(jsonl(*({"text": f"imported note {i}: service {i % 97} deploys on day {i}"} for i in range(2000))))
    db = Path(os.environ["MEM_DB"])
    args = ["import", str(source), "-q"] if command == "import" else ["add", "-"]
    from bench.crash import mem_command

    # a bulk import commits 2,048 records a transaction: a smaller chunk gives the interrupt several to land between
    proc = subprocess.Popen(mem_command(*args, chunk=256), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=source.open("rb"))
    deadline = time.monotonic() + 90
    stored = 0
    while time.monotonic() < deadline and proc.poll() is None and not stored:
        try:
            stored = sqlite3.connect(db).execute("SELECT count(*) FROM memories").fetchone()[0]
        except sqlite3.Error:
            pass
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=90)
    if proc.returncode == 0:
        pytest.skip("the import finished before the interrupt arrived")
    assert proc.returncode == 130
    outcomes = [json.loads(line) for line in out.decode().splitlines()]
    committed = sqlite3.connect(db).execute("SELECT count(*) FROM memories").fetchone()[0]
    assert 0 < len(outcomes) == committed < 2000
    error = json.loads(err.decode().strip().splitlines()[-1])["error"]
    assert error["code"] == "interrupted" and error["committed"] == committed
    rerun = f"mem import {source}" if command == "import" else "the same 'mem add'"
    assert f"line {outcomes[-1]['line']}" in error["message"] and rerun in error["message"]
    again = run_mem("import", str(source), "-q") if command == "import" else run_mem("add", "-", input=source.read_bytes())
    assert again.code == 0
    statuses = [r["status"] for r in again.records]
    assert statuses.count("duplicate") == committed and statuses.count("added") == 2000 - committed


# --------------------------------------------------------------------------- empty-scope hints


def test_an_empty_search_names_the_scopes_that_have_hits(mem) -> None:
    mem("add", "the cache layer uses redis for sessions", "--scope", "alpha")
    result = mem("search", "redis cache", "--scope", "beta")
    assert result.code == 0 and result.records == []
    assert "no hits in scope 'beta'" in result.stderr and "alpha 1" in result.stderr and "--scope '*'" in result.stderr
    everywhere = mem("search", "redis cache", "--scope", "*")
    assert everywhere.records and everywhere.stderr == ""


def test_mcp_empty_search_says_where_the_hits_are(mem) -> None:
    import anyio

    from tests.test_mcp import stdio_client, text

    mem("add", "the cache layer uses redis for sessions", "--scope", "alpha")
    mem("add", "the cache layer uses redis for sessions too", "--scope", "gamma")  # past the boundary

    async def main() -> None:
        async with stdio_client("--scope", "beta", "--allow-scope", "alpha") as client:
            found = await client.call_tool("search", {"query": "redis cache"})
            assert not found.is_error and found.structured_content["elsewhere"] == {"alpha": 1}
            assert "gamma" not in text(found)
            assert "scope='*' searches every scope" in text(found) and "alpha" in text(found)

    anyio.run(main)


@pytest.mark.parametrize("command", ["import", "add"])
def test_an_interrupt_during_a_commit_still_reports_that_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               command: str) -> None:
    """Ctrl-C landing in a chunk's COMMIT (the likeliest moment: it waits on the disk) stops the batch
    after that chunk is reported, never between its commit and its outcomes."""
    import contextlib
    import sqlite3

    from mem.store import Store

    source = tmp_path / "notes.jsonl"
    source.write_text(jsonl(*({"text": f"note {i}: service {i % 31} deploys on day {i}"} for i in range(700))))
    from mem.stages import add

    original = Store.write
    monkeypatch.setattr(add, "BULK_CHUNK", 256)
    # rows committed once the second chunk is: an import's chunks ramp (add.chunk_bounds), add -'s are 256 each
    second = add.chunk_bounds(700, add.BULK_CHUNK)[1][1] if command == "import" else 2 * add.CHUNK

    @contextlib.contextmanager
    def write_then_interrupt(self: Store):  # the signal arrives as the second chunk's COMMIT returns
        with original(self):
            yield
        if self.conn.execute("SELECT count(*) FROM memories").fetchone()[0] == second:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(Store, "write", write_then_interrupt)
    args = ["import", str(source), "-q"] if command == "import" else ["add", "-"]
    result = run_mem(*args, input=None if command == "import" else source.read_bytes())
    assert result.code == 130
    committed = sqlite3.connect(os.environ["MEM_DB"]).execute("SELECT count(*) FROM memories").fetchone()[0]
    assert (len(result.records), committed) == (second, second), result.stderr
