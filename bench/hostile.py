"""Hostile inputs through every front door: ``add -``, ``add TEXT``, ``import``, ``update``, ``search``,
``verify``, ``forget --purge`` and MCP tools (the real MCP SDK client over stdio).

Usage::

    python bench/hostile.py [--sample N] [--timeout S] [--class NAME ...] [--list]

Each case runs against a fresh copy of a seeded database (scopes ``shop`` and ``other``), the
real ``python -m mem`` in a subprocess with a timeout, ``MEM_EMBEDDER=hash``. Per class it prints:

* ``exit``: the exit codes seen (MCP: ``ok`` / ``err`` for a tool error);
* ``internal``: internal errors (exit 1, "internal error", a traceback, or an MCP error that is
  not a tool error): goal 0;
* ``hangs``: calls that did not finish within the timeout: goal 0;
* ``changed``: database changes where the input should have been refused (memories, tags, meta,
  scope, text, changelog rows): goal 0;
* ``leaks``: what the class checks beyond that (a raw escape character on a terminal table, a
  secret or a file's line in ``verify`` output, purged text left in the database file or WAL, a
  memory of another scope reached over MCP): goal 0.

The figures are printed whatever they are; nothing here is tuned to pass.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import ROOT  # noqa: E402

MEM = [sys.executable, "-m", "mem"]
SEED_TEXTS = ["We chose Redis for the session cache", "The deploy runs at 9am from the ci box",
              "Payments go through the Stripe adapter", "Logs ship to Loki via promtail"]

# Fake secrets built at run time: this file holds no literal token.
STRIPE = "sk" + "_live_" + "51HqLyQ2eZvKYlo2C8xxYbWzqT"
GITHUB = "ghp" + "_" + "1234567890abcdefghijklmnopqrstuvwxyzAB"
AWS = "AKIA" + "Q3EGUMJ5ZT7R2KXW"
AWS_SECRET = "wJalrXUtnFEMI" + "/K7MDENG/bPxRfiCYzQ8x7Kq2Lm"
SHOPIFY = "shp" + "at_" + "4f9a0c2b7d1e8f3a6b5c4d2e1f0a9b8c"
DO = "dop" + "_v1_" + "9a50f8a8e9bb8bdb5eba456bf92d5d9806e7d3c1b2a4f5e6d7c8b9a0f1e2d3c4"
TELEGRAM = "123456789" + ":AA" + "Fq9bu8tF7sjEbhQN9CpscYi0zaEIJrp7E"


@dataclass
class Case:
    cls: str
    kind: str  # add- | add | import | update | search | cli | mcp | purge | verify | table
    payload: Any
    mutates: bool = False  # True: a change is what should happen (only hangs and internal errors count)
    check: Callable[["Outcome", "Env"], str | None] | None = None  # a leak, described, or None


@dataclass
class Outcome:
    code: Any = None
    stdout: str = ""
    stderr: str = ""
    hung: bool = False
    internal: bool = False
    seconds: float = 0.0


@dataclass
class Env:
    folder: Path
    db: Path
    ids: dict[str, str] = field(default_factory=dict)  # text -> id of the seeded memories
    other_id: str = ""  # a memory of scope "other"

    def env(self) -> dict[str, str]:
        home = self.folder / "home"
        return {**os.environ, "MEM_DB": str(self.db), "MEM_EMBEDDER": "hash", "MEM_SCOPE": "shop",
                "HOME": str(home), "XDG_DATA_HOME": str(home / ".local/share"),
                "XDG_CONFIG_HOME": str(home / ".config"), "PYTHONPATH": str(ROOT), "MEM_DEBUG": ""}


# --------------------------------------------------------------------------- the database


def fingerprint(db: Path) -> str:
    """What a refused input must leave unchanged: every stored memory's content and the changelog."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT id, text, kind, scope, tags, meta, source, source_line, author, layer, pinned,"
                            " confidence, status, superseded_by FROM memories ORDER BY id").fetchall()
        log = conn.execute("SELECT count(*) FROM changelog WHERE op NOT IN ('access')").fetchone()
    finally:
        conn.close()
    return hashlib.sha256(repr((rows, log)).encode()).hexdigest()


def run(args: list[str], env: Env, *, stdin: bytes | None = None, timeout: float) -> Outcome:
    started = time.perf_counter()
    try:
        proc = subprocess.run([*MEM, *args], input=stdin, capture_output=True, env=env.env(), timeout=timeout,
                              cwd=env.folder)
    except subprocess.TimeoutExpired:
        return Outcome(code="hang", hung=True, seconds=timeout)
    stderr = proc.stderr.decode("utf-8", "replace")
    return Outcome(code=proc.returncode, stdout=proc.stdout.decode("utf-8", "replace"), stderr=stderr,
                   internal=proc.returncode == 1 or "internal error" in stderr or "Traceback" in stderr,
                   seconds=time.perf_counter() - started)


def seed(folder: Path, timeout: float) -> Env:
    env = Env(folder=folder, db=folder / "seed" / "mem.db")
    (folder / "home").mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps({"text": t, "scope": "shop"}) + "\n" for t in SEED_TEXTS)
    lines += json.dumps({"text": "The other team keeps its VPN notes here", "scope": "other"}) + "\n"
    out = run(["add", "-", "--keep-near"], env, stdin=lines.encode(), timeout=timeout * 3)
    if out.code != 0:
        raise SystemExit(f"seeding failed: {out.stderr}")
    records = [json.loads(line) for line in out.stdout.splitlines()]
    env.ids = {text: r["id"] for text, r in zip(SEED_TEXTS, records)}
    env.other_id = records[-1]["id"]
    return env


def fresh(seeded: Env, index: int) -> Env:
    folder = seeded.folder / f"case{index}"
    (folder / "home").mkdir(parents=True)
    shutil.copytree(seeded.db.parent, folder / "db")
    return Env(folder=folder, db=folder / "db" / seeded.db.name, ids=seeded.ids, other_id=seeded.other_id)


# --------------------------------------------------------------------------- the corpus


def jl(*records: Any) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records).encode()


def no_raw_escapes(out: Outcome, env: Env) -> str | None:
    raw = [c for c in ("\x1b", "\x9b", "\x07", "\x08", "\r") if c in out.stdout]
    return f"raw control characters on a table: {raw!r}" if raw else None


def nothing_of(*needles: str) -> Callable[[Outcome, Env], str | None]:
    def check(out: Outcome, env: Env) -> str | None:
        seen = [n for n in needles if n in out.stdout or n in out.stderr]
        return f"output shows {seen[0][:24]!r}" if seen else None
    return check


def corpus() -> list[Case]:
    cases: list[Case] = []
    add = lambda cls, *records, **kw: cases.append(Case(cls, "add-", jl(*records), **kw))  # noqa: E731

    # 1. secrets in any field (refused: nothing may change)
    for rec in [{"text": "deploy notes", "meta": {"api_key": STRIPE}},
                {"text": "deploy notes", "meta": {"a": {"b": {"c": [{"token": GITHUB}]}}}},
                {"text": "deploy notes", "meta": {"password": "hunter22x"}},
                {"text": "deploy notes", "meta": {AWS: "a key as a key"}},
                {"text": "deploy notes", "tags": ["ops", GITHUB]},
                {"text": "deploy notes", "tags": f"ops,{AWS}"},
                {"text": "deploy notes", "author": STRIPE},
                {"text": "deploy notes", "source": "https://ci:" + "Xq7pW2mZ9rT4" + "@git.example.com/r"},
                {"text": "deploy notes", "api_token": GITHUB},
                {"text": "deploy notes", "config": {"aws_secret_access_key": AWS_SECRET}},
                {"text": "deploy notes", "meta": {"list": [STRIPE, "fine"]}},
                {"text": "deploy notes", "meta": {"db": {"pin": 48213379, "password": 99812734}}},
                {"text": f"shopify {SHOPIFY}"}, {"text": f"digitalocean {DO}"}, {"text": f"bot {TELEGRAM}"},
                {"text": f"SECRET_KEY_BASE={'ab12' * 32}"},
                {"text": "The database password is correctHorseBatteryStaple"},
                {"text": "deploy notes", "scope": f"proj-{GITHUB}"}]:
        add("secret in a field", rec)
    # 2. evasions of the scanner
    for variant in [AWS[:2] + "\u200b" + AWS[2:], GITHUB[:3] + "\u00ad" + GITHUB[3:], "\u0410\u041a" + AWS[2:],
                    "".join(chr(ord(c) + 0xFEE0) for c in AWS[:4]) + AWS[4:], STRIPE[:5] + "\u200d" + STRIPE[5:],
                    GITHUB[:4] + "\u2060" + GITHUB[4:], AWS[:4] + "\ufeff" + AWS[4:], "\u202e" + GITHUB,
                    STRIPE.replace("_", "\u200c_", 1), AWS[:1] + "\u034f" + AWS[1:]]:
        add("scanner evasion", {"text": f"creds {variant} for ci"})
        add("scanner evasion", {"text": "notes", "meta": {"k": variant}})
    # 3. numbers and types (the batch must stop whole)
    good = [{"text": f"valid filler record number {i}"} for i in range(5)]
    for bad in [{"source_line": 2**63}, {"source_line": -1}, {"source_line": 0}, {"source_line": True},
                {"layer": True}, {"layer": 0}, {"layer": 5}, {"layer": 2.5}, {"layer": "2"}, {"confidence": 1.5},
                {"confidence": -0.1}, {"confidence": "high"}, {"pinned": "yes"}, {"pinned": 1},
                {"source_line": 2**64 - 1}, {"meta": [1, 2]}, {"meta": "text"}, {"tags": [1, 2]}, {"tags": {"a": 1}},
                {"kind": "nonsense"}, {"created_at": "yesterday-ish"}, {"created_at": 12}, {"text": 42},
                {"text": ["a", "b"]}, {"text": None}]:
        add("numbers and types", *good, {"text": "the bad record here", **bad})
    cases.append(Case("numbers and types", "add-", jl(*good, '{"text": "big float", "confidence": 1e309}')))
    cases.append(Case("numbers and types", "add-", jl(*good, '{"text": "deep", "meta": ' + "[" * 300 + "]" * 300 + "}")))
    for bad in [{"access_count": 2**63}, {"access_count": -5}, {"importance": float("inf")}, {"importance": 3},
                {"surprise": "x"}, {"status": "deleted"}, {"id": "not-an-id"}, {"id": 7}]:
        cases.append(Case("numbers and types", "import", jl(*good, {"text": "imported bad", **bad})))
    # 4. malformed JSON Lines
    for raw in [b'{"text": "unterminated', b"[1, 2, 3]\n", b'"just a string"\n', b"\xff\xfe\x00\x01\n",
                b'{"text": "nul \x00 inside"}\n', b"\xef\xbb\xbf" + jl({"text": "bom first line"}),
                jl(*good) + b"{not json}\n", b'{"text": "' + b"a" * 9_000_000 + b'"}\n', b"\n\n\n",
                b'{"text": "dup key", "text": 5}\n']:
        cases.append(Case("malformed JSON Lines", "add-", raw, mutates=raw.startswith(b"\xef\xbb\xbf")))
    # 5. text limits on add and update
    for text in ["x" * 40_000, "\x01\x02\x03\x04\x05\x06\x07", "  ", "ab", "\x1b" * 50]:
        add("text limits", {"text": text})
        cases.append(Case("text limits", "update", ["--text", text]))
    for args in [["--text", f"now {GITHUB}"], ["--meta", json.dumps({"api_key": STRIPE})], ["--tag", AWS],
                 ["--meta", "[1]"], ["--meta", "{bad"], ["--layer", "9"], ["--kind", "nope"],
                 ["--meta", json.dumps({"db": {"password": "hunter22x"}})]]:
        cases.append(Case("update gate", "update", args))
    # 6. arguments
    for args in [["add", "into every scope", "--scope", "*"], ["add", b"caf\xff bytes here"],
                 ["search", b"\xff\xfe"], ["add", "ok text here", "--tag", b"\xfe"], ["get", "zzzz"],
                 ["get", "'; DROP TABLE memories; --"], ["search", "x", "--limit", "-1"],
                 ["search", "x", "--limit", "99999999999999999999"], ["list", "--since", "the dawn of time"],
                 ["update", "ffffffff", "--text", "nothing to update"], ["forget", "%"], ["add", "--nope", "x"]]:
        cases.append(Case("arguments", "cli", args))
    # 7. search queries (nothing may change but access counts)
    for query in ['"unbalanced', "NEAR(a b", "a OR OR b", "*", "memories; DROP TABLE x", "\x01\x02\x03", "x" * 20_000,
                  "🙂" * 100, "\u202e\u200b", "-- comment", "col:value", "a AND NOT b", "'" * 50, "^$.*+?()[]{}|\\",
                  "SELECT * FROM memories", "%_%"]:
        cases.append(Case("search queries", "search", [query]))
    for query in [{"query": "nul \u0000 inside"}, {"query": 5}, {"query": "x", "k": 10**30}, {"query": "x", "k": True},
                  {"query": "x", "since": "never"}, {"query": "\ud800 lone surrogate"}]:
        cases.append(Case("search queries", "search-", jl(query)))
    # 8. import references
    cases.append(Case("import references", "import-ref", "dangling", mutates=True,
                      check=lambda out, env: None if "nope" in out.stderr or "nope" in out.stdout
                      else "dangling superseded_by not reported"))
    cases.append(Case("import references", "import-ref", "conflict", mutates=True,
                      check=lambda out, env: None if '"conflict"' in out.stdout else "id conflict not reported"))
    cases.append(Case("import references", "import", jl({"text": "links to nowhere", "links": [{"to": 5}]})))
    cases.append(Case("import references", "import", jl({"text": "links bad", "id": "0" * 36, "links": "x"})))
    # 9. terminal escapes: stored (a change is fine), but a table must not replay them
    for text in ["clear \x1b[2J\x1b[H screen here", "title \x1b]0;pwned\x07 set", "clip \x1b]52;c;ZWNobyBoaQ==\x07 x",
                 "link \x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ here", "csi \x9b31m red text",
                 "bell \x07\x07 and backspace \x08\x08 text", "carriage\rreturn overwrite text",
                 "bidi \u202egnp.exe trick text"]:
        cases.append(Case("terminal escapes", "table", text, mutates=True, check=no_raw_escapes))
    # 10. purge leftovers
    for marker in ["purge-marker-alpha-7731", "purge-marker-beta-8842 with more words", "purge-marker-gamma-9953"]:
        cases.append(Case("purge leftovers", "purge", marker, mutates=True))
    # 11. verify of odd sources
    for source in ["/dev/zero", "fifo", "outside-secret", "/etc/passwd", "folder", "/proc/self/environ"]:
        cases.append(Case("verify odd sources", "verify", source, mutates=True,
                          check=nothing_of(AWS_SECRET, "root:x:0:0", "MEM_DB=")))
    # 12. MCP: types, secrets, scope
    for args in [{"layer": True}, {"pinned": "yes"}, {"layer": "2"}, {"text": 5}, {"meta": [1]},
                 {"tags": "a,b"}, {"meta": {"n": 2**70}}, {"text": "y" * 100_000}, {"text": "\x01\x02\x03\x04"},
                 {"kind": "nope"}, {"id": 12345}, {"confidence": 2}]:
        cases.append(Case("MCP types", "mcp", ("update", args)))
    for args in [{"text": "notes", "meta": {"cfg": {"api_key": STRIPE}}}, {"text": f"key {AWS[:2]}\u200b{AWS[2:]}"},
                 {"text": "notes", "tags": [GITHUB]}, {"text": "notes", "author": STRIPE},
                 {"memories": [{"text": "notes", "meta": {"k": STRIPE}}, {"text": "notes", "x_token": GITHUB}]}]:
        cases.append(Case("MCP secrets", "mcp", ("add", args)))
    cases.append(Case("MCP secrets", "mcp", ("update", {"text": f"now {GITHUB}"})))
    cases.append(Case("MCP secrets", "mcp", ("update", {"meta": {"password": "hunter22x"}})))
    for name, args in [("get", {"ids": "OTHER"}), ("update", {"id": "OTHER", "text": "rewritten by shop"}),
                       ("forget", {"ids": "OTHER", "purge": True}), ("add", {"text": "planted", "scope": "other"}),
                       ("search", {"query": "VPN notes", "scope": "*"}), ("search", {"query": "VPN notes", "scope": "other"}),
                       ("recent", {"scope": "*"}), ("stats", {})]:
        cases.append(Case("MCP scope", "mcp-scope", (name, args)))
    return cases


# --------------------------------------------------------------------------- running cases


def run_cli_case(case: Case, env: Env, timeout: float) -> Outcome:
    some_id = next(iter(env.ids.values()))
    if case.kind == "add-":
        return run(["add", "-"], env, stdin=case.payload, timeout=timeout)
    if case.kind == "import":
        path = env.folder / "in.jsonl"
        path.write_bytes(case.payload)
        return run(["import", str(path)], env, timeout=timeout)
    if case.kind == "update":
        return run(["update", some_id, *case.payload], env, timeout=timeout)
    if case.kind == "search":
        return run(["search", *case.payload, "--json"], env, timeout=timeout)
    if case.kind == "search-":
        return run(["search", "-", "--json"], env, stdin=case.payload, timeout=timeout)
    if case.kind == "cli":
        args = [a.decode("utf-8", "surrogateescape") if isinstance(a, bytes) else a for a in case.payload]
        return run(args, env, timeout=timeout)
    if case.kind == "import-ref":
        exported = run(["export"], env, timeout=timeout)
        first = json.loads(exported.stdout.splitlines()[0])
        if case.payload == "dangling":
            record = {**first, "id": first["id"][:-4] + "beef", "text": "points at nothing", "superseded_by": "nope"}
        else:
            record = {**first, "text": "the same id with another text"}
        path = env.folder / "in.jsonl"
        path.write_bytes(jl(record))
        return run(["import", str(path)], env, timeout=timeout)
    if case.kind == "table":
        added = run(["add", case.payload, "--keep-near"], env, timeout=timeout)
        if added.code != 0:
            return added
        listed = run(["list", "--format", "table"], env, timeout=timeout)
        got = run(["get", json.loads(added.stdout)["id"], "--format", "table"], env, timeout=timeout)
        return Outcome(code=listed.code, stdout=listed.stdout + got.stdout, stderr=listed.stderr + got.stderr,
                       hung=listed.hung or got.hung, internal=listed.internal or got.internal)
    if case.kind == "purge":
        return run_purge(case, env, timeout)
    if case.kind == "verify":
        return run_verify(case, env, timeout)
    raise ValueError(case.kind)


def run_purge(case: Case, env: Env, timeout: float) -> Outcome:
    added = run(["add", f"{case.payload} stored then purged", "--keep-near"], env, timeout=timeout)
    if added.code != 0:
        return added
    memory_id = json.loads(added.stdout)["id"]
    out = run(["forget", memory_id, "--purge"], env, timeout=timeout)
    left = [p.name for p in env.db.parent.iterdir() if p.is_file() and case.payload.encode() in p.read_bytes()]
    if left:
        out.stderr += f"\nLEAK: purged text still in {', '.join(left)}"
    return out


def run_verify(case: Case, env: Env, timeout: float) -> Outcome:
    source = case.payload
    if source == "fifo":
        source = str(env.folder / "pipe")
        os.mkfifo(source)
    elif source == "outside-secret":
        secret_file = env.folder / "home" / ".bash_history"
        secret_file.write_text(f"echo hi\nexport AWS_SECRET_ACCESS_KEY={AWS_SECRET}\n")
        source = str(secret_file)
    elif source == "folder":
        source = str(env.folder)
    added = run(["add", f"memory sourced from {case.payload}", "--source", source, "--source-line", "2",
                 "--keep-near"], env, timeout=timeout)
    if added.hung:
        return added
    if source == str(env.folder / "home" / ".bash_history"):
        secret_file.write_text(f"echo bye\nexport AWS_SECRET_ACCESS_KEY={AWS_SECRET}\n")  # now it is stale
    out = run(["verify", "--scope", "*"], env, timeout=timeout)
    out.code = f"add {added.code}/verify {out.code}"
    out.internal = out.internal or added.internal
    return out


async def run_mcp_cases(cases: list[tuple[int, Case]], seeded: Env, timeout: float,
                        report: Callable[[int, Case, Outcome, bool], None]) -> None:
    """One server per case group (``--scope shop``), each call against a fresh database copy."""
    import anyio
    from mcp import Client, StdioServerParameters

    for index, case in cases:
        env = fresh(seeded, index)
        before = fingerprint(env.db)
        name, args = case.payload
        args = {k: (env.other_id if v == "OTHER" else v) for k, v in args.items()}
        if name == "update" and "id" not in args:
            args["id"] = next(iter(env.ids.values()))
        params = StdioServerParameters(command=MEM[0], args=[*MEM[1:], "serve-mcp", "--scope", "shop"],
                                       env=env.env(), cwd=str(env.folder))
        out = Outcome()
        started = time.perf_counter()
        try:
            with anyio.fail_after(timeout * 2):
                async with Client(params) as client:
                    result = await client.call_tool(name, args)
                    body = "\n".join(getattr(b, "text", "") or "" for b in result.content)
                    out.code = "err" if result.is_error else "ok"
                    out.stdout = body + json.dumps(result.structured_content or {})
                    out.internal = "internal error" in body or "Traceback" in body
        except TimeoutError:
            out.code, out.hung = "hang", True
        except Exception as exc:  # a protocol-level failure is not a tool error: count it as internal
            out.code, out.internal, out.stderr = "crash", True, f"{type(exc).__name__}: {exc}"
        out.seconds = time.perf_counter() - started
        if case.kind == "mcp-scope":
            leak = scope_leak(name, out, env)
            if leak:
                out.stderr += f"\nLEAK: {leak}"
        report(index, case, out, before != fingerprint(env.db))


def scope_leak(name: str, out: Outcome, env: Env) -> str | None:
    """A client started with --scope shop must not read, change or learn about scope ``other``."""
    if name in ("get", "update", "forget") and out.code == "ok":
        return f"{name} reached a memory of another scope"
    if name in ("search", "recent") and "VPN notes" in out.stdout:
        return f"{name} returned a memory of another scope"
    if name == "add" and out.code == "ok":
        return "add wrote into another scope"
    if name == "stats" and ('"other"' in out.stdout or str(env.db) in out.stdout):
        return "stats shows other scopes or the database path"
    return None


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=0, help="run this many cases, drawn evenly across classes")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds before a call counts as a hang")
    ap.add_argument("--class", dest="classes", action="append", default=[], help="only this class (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the classes and case counts, run nothing")
    ap.add_argument("--json", action="store_true", help="one JSON object per class instead of the table")
    args = ap.parse_args(argv)

    cases = [c for c in corpus() if not args.classes or c.cls in args.classes]
    if args.list:
        for cls, n in Counter(c.cls for c in cases).items():
            print(f"{n:4} {cls}")
        print(f"{len(cases):4} in all")
        return 0
    if args.sample:
        by_class: dict[str, list[Case]] = defaultdict(list)
        for c in cases:
            by_class[c.cls].append(c)
        rng = random.Random(13)
        picked: list[Case] = []
        while len(picked) < min(args.sample, len(cases)):
            for group in by_class.values():
                if group and len(picked) < args.sample:
                    picked.append(group.pop(rng.randrange(len(group))))
        cases = picked

    stats: dict[str, dict[str, Any]] = defaultdict(lambda: {"n": 0, "exit": Counter(), "internal": 0, "hangs": 0,
                                                            "changed": 0, "leaks": 0, "notes": []})
    started = time.perf_counter()

    def report(index: int, case: Case, out: Outcome, changed: bool) -> None:
        row = stats[case.cls]
        row["n"] += 1
        row["exit"][str(out.code)] += 1
        row["internal"] += out.internal
        row["hangs"] += out.hung
        if changed and not case.mutates:
            row["changed"] += 1
            row["notes"].append(f"case {index}: changed the database")
        leak = (case.check(out, env_of[index]) if case.check and not out.hung else None) \
            or next((line[6:] for line in out.stderr.splitlines() if line.startswith("LEAK: ")), None)
        if leak:
            row["leaks"] += 1
            row["notes"].append(f"case {index}: {leak}")
        if out.internal:
            row["notes"].append(f"case {index}: internal: {(out.stderr or out.stdout).strip()[-160:]}")

    env_of: dict[int, Env] = {}
    with tempfile.TemporaryDirectory(prefix="mem-hostile-") as tmp:
        seeded = seed(Path(tmp), args.timeout)
        mcp_cases = []
        for index, case in enumerate(cases):
            if case.kind.startswith("mcp"):
                mcp_cases.append((index, case))
                continue
            env = env_of[index] = fresh(seeded, index)
            before = fingerprint(env.db)
            out = run_cli_case(case, env, args.timeout)
            report(index, case, out, fingerprint(env.db) != before)
        if mcp_cases:
            import anyio

            for index, _ in mcp_cases:
                env_of[index] = seeded
            anyio.run(run_mcp_cases, mcp_cases, seeded, args.timeout, report)

    total = {k: sum(row[k] for row in stats.values()) for k in ("n", "internal", "hangs", "changed", "leaks")}
    if args.json:
        for cls, row in stats.items():
            print(json.dumps({"class": cls, **{k: v for k, v in row.items() if k != "exit"}, "exit": dict(row["exit"])}))
        print(json.dumps({"class": "total", **total}))
        return 0
    print(f"{total['n']} hostile inputs in {time.perf_counter() - started:.0f} s (timeout {args.timeout:.0f} s per call)\n")
    print(f"{'class':<22} {'n':>4} {'internal':>8} {'hangs':>5} {'changed':>7} {'leaks':>5}  exit codes")
    for cls, row in stats.items():
        codes = ", ".join(f"{code}x{n}" for code, n in sorted(row["exit"].items()))
        print(f"{cls:<22} {row['n']:>4} {row['internal']:>8} {row['hangs']:>5} {row['changed']:>7} {row['leaks']:>5}  {codes}")
    print(f"{'total':<22} {total['n']:>4} {total['internal']:>8} {total['hangs']:>5} {total['changed']:>7} {total['leaks']:>5}")
    notes = [f"  {cls}: {note}" for cls, row in stats.items() for note in row["notes"]]
    if notes:
        print("\nfindings:")
        print("\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
