"""Text from memories reaches a terminal with its control, escape and bidi characters made visible;
JSON Lines keep it exact. The tables are checked under a real pseudo-terminal."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
import unicodedata
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from mem.text import visible

# Clear screen, retitle the window (OSC 0), write the clipboard (OSC 52), a hidden hyperlink (OSC 8),
# a C1 CSI, a carriage return that overwrites, and a right-to-left override.
HOSTILE = ("Deploy \x1b[2J\x1b]0;pwned\x07 then \x1b]52;c;cm0gLXJmIH4=\x07 see "
           "\x1b]8;;http://evil.example\x1b\\docs\x1b]8;;\x1b\\ \x9b31m fake\rOK \u202egnp.exe")
RAW = [b"\x1b[2J", b"\x1b]0;", b"\x1b]52;", b"\x1b]8;", "\x9b".encode(), "\u202e".encode(), b"\rOK"]


def _hostile_memory(mem, memory_text: str = HOSTILE) -> str:
    """A memory holding escape sequences, whatever the intake gate lets in: written as an older
    version or another writer could have left it."""
    from mem.store import Store

    memory_id = mem("add", "Deploy notes placeholder for the terminal test").records[0]["id"]
    with Store.open(Path(os.environ["MEM_DB"])) as store, store.write():
        store.conn.execute("UPDATE memories SET text = ?, tags = ? WHERE id = ?",
                           (memory_text, json.dumps(["\x1b]0;tag\x07"]), memory_id))
    return memory_id


def _on_pty(*args: str) -> bytes:
    """Run ``mem ARGS`` with stdout and stderr on a pseudo-terminal 200 columns wide; all it wrote."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    env = {**os.environ, "COLUMNS": "200", "TERM": "xterm-256color"}
    proc = subprocess.Popen([sys.executable, "-m", "mem", *args], stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, env=env)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed its side
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    proc.wait(timeout=10)
    os.close(master)
    return out


def test_tables_and_errors_on_a_terminal_show_escapes_not_act_on_them(mem) -> None:
    memory_id = _hostile_memory(mem)
    for args in (["list"], ["get", memory_id], ["search", "deploy docs fake"]):
        out = _on_pty(*args)
        assert b"Deploy" in out, (args, out)
        for raw in RAW:
            assert raw not in out, (args, raw, out)
        assert b"\\x1b]52;" in out and b"\\u202e" in out and b"\\x9b" in out, (args, out)
    error = _on_pty("get", "\x1b]0;pwned\x07abcd")
    assert b"mem: error:" in error and b"\x1b]0;" not in error and b"\\x1b]0;" in error


def test_json_lines_keep_the_exact_text(mem) -> None:
    memory_id = _hostile_memory(mem)
    got = mem("get", memory_id).records[0]
    assert got["text"] == HOSTILE and got["tags"] == ["\x1b]0;tag\x07"]
    assert [r["text"] for r in mem("list", "--json").records] == [HOSTILE]


def test_a_table_cell_is_escaped_in_process(mem) -> None:
    from mem.cli.tables import Cells

    from datetime import datetime, timezone

    cell = Cells({}, now=datetime.now(timezone.utc))
    row = {"text": HOSTILE, "created_at": "\x1b]0;not a time\x07", "meta": {"k": "\x1b[2J"}, "id": "\x1b" * 36}
    for column in ("text", "created_at", "meta", "id"):
        shown = cell(row, column)
        assert "\x1b" not in shown and ("\\x1b" in shown or "\\u001b" in shown), (column, shown)


@given(st.text())
def test_visible_leaves_no_control_or_format_character(text: str) -> None:
    shown = visible(text)
    assert "\n" not in visible(text, newlines=False)
    assert all(c == "\n" or c in "\u200c\u200d" or unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp")
               for c in shown)
    if all(c.isprintable() or c == "\n" for c in text) and not any(unicodedata.category(c) == "Cf" for c in text):
        assert shown == text  # ordinary text is untouched


def test_visible_covers_every_control_and_format_character_of_this_python() -> None:
    missed = [hex(c) for c in range(sys.maxunicode + 1)
              if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp") and c not in (0x0A, 0x200C, 0x200D)
              and visible(chr(c)) == chr(c)]
    assert missed == []
