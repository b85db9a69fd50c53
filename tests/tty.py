"""Run ``mem`` under a pseudo-terminal, as a person at a terminal would: stdout and stderr are a TTY."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from dataclasses import dataclass


@dataclass
class TtyResult:
    code: int
    output: str  # stdout and stderr as the terminal showed them


def run_tty(*args: str, columns: int = 80, env: dict[str, str] | None = None, timeout: float = 60) -> TtyResult:
    master, slave = pty.openpty()
    os.set_blocking(master, True)
    environment = {**os.environ, "COLUMNS": str(columns), "LINES": "50", "TERM": "xterm", **(env or {})}
    environment.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "mem", *args], stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, env=environment, close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    code = proc.wait(timeout=timeout)
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    import re

    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)  # colour and cursor codes
    return TtyResult(code, text)
