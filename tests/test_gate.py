"""The intake gate (``mem.gate``): every field and every write path, through the CLI and the MCP SDK client.

Fake secret values are assembled at runtime so this file holds no literal token.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mem import gate
from mem.errors import BadInput
from tests.conftest import jsonl

STRIPE = "sk" + "_live_" + "51HqLyQ2eZvKYlo2C8xxYbWzqT"
GITHUB = "ghp" + "_" + "1234567890abcdefghijklmnopqrstuvwxyzAB"
AWS = "AKIA" + "Q3EGUMJ5ZT7R2KXW"


def _stored(mem) -> list[dict]:
    return mem("list", "--status", "all", "--json").records


# --------------------------------------------------------------------------- every field


def test_secrets_in_any_field_are_refused_and_nothing_is_stored(mem) -> None:
    records = [
        {"text": "deploy notes", "meta": {"api_key": STRIPE}},
        {"text": "nested notes", "meta": {"deploy": {"env": [{"password": "hunter22x"}]}}},
        {"text": "tagged notes", "tags": ["infra", GITHUB]},
        {"text": "authored notes", "author": AWS},
        {"text": "sourced notes", "source": "https://deploy:" + "Xq7pW2mZ9rT4" + "@git.example.com/repo"},
        {"text": "unknown key notes", "token_of_ci": GITHUB},
        {"text": "key is the secret", "meta": {AWS: "the key"}},
        {"text": "The database password is " + "correctHorseBatteryStaple"},
    ]
    result = mem("add", "-", input=jsonl(*records))
    assert result.code == 0, result.stderr
    outcomes = result.records
    assert [o["status"] for o in outcomes] == ["rejected"] * len(records), outcomes
    assert "meta.api_key" in outcomes[0]["reason"] and "stripe_key" in outcomes[0]["reason"]
    assert "meta.deploy.env[0].password" in outcomes[1]["reason"]
    assert "tags" in outcomes[2]["reason"] and "author" in outcomes[3]["reason"]
    assert "source" in outcomes[4]["reason"] and "meta.token_of_ci" in outcomes[5]["reason"]
    assert _stored(mem) == []


def test_redact_masks_every_field_and_the_raw_values_are_nowhere(mem, tmp_path: Path) -> None:
    record = {"text": "deploy notes", "tags": [GITHUB], "author": AWS, "extra": STRIPE,
              "meta": {"db": {"password": "hunter22x"}}}
    result = mem("add", "-", "--redact", input=jsonl(record))
    assert result.records[0]["status"] == "added"
    assert set(result.records[0]["redacted"]) >= {"github_token", "aws_access_key", "stripe_key"}
    stored = _stored(mem)[0]
    dumped = json.dumps(stored)
    for raw in (STRIPE, GITHUB, AWS, "hunter22x"):
        assert raw not in dumped
    assert stored["meta"]["db"]["password"] == "[REDACTED:password_assignment]"
    assert stored["author"] == "[REDACTED:aws_access_key]"


def test_zero_width_soft_hyphen_and_lookalike_evasions_are_caught(mem) -> None:
    evasions = [AWS[:2] + "\u200b" + AWS[2:], GITHUB[:3] + "\u00ad" + GITHUB[3:],
                "\u0410\u041a" + AWS[2:],  # Cyrillic A and K
                "".join(chr(ord(c) + 0xFEE0) for c in AWS[:4]) + AWS[4:]]  # full-width AKIA
    result = mem("add", "-", input=jsonl(*({"text": f"key {v} for ci"} for v in evasions)))
    assert [o["status"] for o in result.records] == ["rejected"] * 4, result.records
    masked = mem("add", "-", "--redact", input=jsonl({"text": f"key {evasions[0]} for ci"}))
    text = _stored(mem)[0]["text"]
    assert masked.records[0]["status"] == "added" and text == "key [REDACTED:aws_access_key] for ci"


@pytest.mark.parametrize("evade", [
    lambda v: v[:2] + "\u200b" + v[2:], lambda v: v[:2] + "\u00ad" + v[2:], lambda v: v[:1] + "\u034f" + v[1:],
    lambda v: v[:3] + "\u2060" + v[3:], lambda v: "\u202e" + v, lambda v: v[:4] + "\ufeff" + v[4:],
    lambda v: v.replace("A", "\u0391"),  # Greek capital alpha
    lambda v: "".join(chr(ord(c) + 0xFEE0) for c in v[:6]) + v[6:],  # full-width
])
@pytest.mark.parametrize("secret", [AWS, GITHUB, STRIPE])
def test_invisible_and_lookalike_characters_do_not_hide_a_secret(evade, secret: str) -> None:
    hidden = f"creds {evade(secret)} for ci"
    admitted = gate.admit({"text": hidden})
    assert admitted.rejected and "secret" in admitted.rejected, hidden
    masked = gate.admit({"text": hidden}, redact=True).fields["text"]
    assert "[REDACTED:" in masked and secret[-8:] not in masked and masked.endswith("] for ci"), masked


def test_update_passes_the_same_gate(mem) -> None:
    memory_id = mem("add", "a memory to change").records[0]["id"]
    for args, message in [
        (["--text", "x" * 100_000], "too long"),
        (["--text", "\x01\x02\x03\x04\x05\x06"], "control characters"),
        (["--text", f"now with {GITHUB}"], "github_token"),
        (["--meta", json.dumps({"api_key": STRIPE})], "meta.api_key"),
        (["--tag", AWS], "tags"),
    ]:
        result = mem("update", memory_id, *args)
        assert result.code == 4, (args, result.stderr)
        assert message in result.error["message"], (args, result.error)
    assert _stored(mem)[0]["text"] == "a memory to change"
    masked = mem("update", memory_id, "--text", f"now with {GITHUB}", "--redact", "--json")
    assert masked.code == 0 and masked.records[0]["text"] == "now with [REDACTED:github_token]"


# --------------------------------------------------------------------------- numbers, whole batch


@pytest.mark.parametrize("command,field", [("add", "source_line"), ("import", "access_count")])
def test_a_number_out_of_range_stops_the_whole_batch(mem, tmp_path: Path, command: str, field: str) -> None:
    rows = [{"text": f"valid record {i} about topic {i * 7}"} for i in range(600)]
    rows.append({"text": "the bad one", field: 2**63})
    path = tmp_path / "batch.jsonl"
    path.write_text(jsonl(*rows))
    result = mem(command, str(path))
    assert result.code == 4, result.stderr
    assert result.error["line"] == 601 and field in result.error["message"]
    assert _stored(mem) == []


@pytest.mark.parametrize("fields,message", [
    ({"layer": True}, "layer"), ({"layer": 5}, "layer"), ({"confidence": float("nan")}, "confidence"),
    ({"confidence": 1.5}, "confidence"), ({"pinned": "yes"}, "pinned"), ({"source_line": 0}, "source_line"),
    ({"access_count": -1}, "access_count"), ({"importance": 7}, "importance"), ({"meta": {"n": 2**64}}, "meta.n"),
    ({"meta": {"x": float("inf")}}, "meta.x"), ({"scope": "*"}, "scope"), ({"tags": [1]}, "tags"),
    ({"text": "bad \udcff byte"}, "Unicode"), ({"meta": json.loads("[" * 40 + "]" * 40)}, "meta"),
])
def test_type_and_range_confusions_are_bad_input(fields: dict, message: str) -> None:
    with pytest.raises(BadInput, match=message):
        gate.admit({"text": "a valid text", **fields}, line=3)


def test_deep_meta_is_refused_not_a_recursion_error() -> None:
    deep: dict = {}
    for _ in range(1000):
        deep = {"d": deep}
    with pytest.raises(BadInput, match="nested deeper"):
        gate.admit({"text": "a valid text", "meta": deep})


@settings(max_examples=150, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20))
def test_any_meta_is_admitted_or_bad_input_and_admitted_meta_stores_as_json(meta) -> None:
    from mem.jsonl import dumps

    try:
        admitted = gate.admit({"text": "a valid text", "meta": {"m": meta}}, redact=True)
    except BadInput:
        return
    dumps(admitted.fields["meta"])  # what the store writes: must not raise


# --------------------------------------------------------------------------- item 10


def test_non_utf8_arguments_exit_4_with_a_message(tmp_path: Path) -> None:
    for args in ([b"add", b"caf\xff text here"], [b"search", b"caf\xff"], [b"add", b"ok text", b"--tag", b"\xfe"]):
        proc = subprocess.run([sys.executable.encode(), b"-m", b"mem", *args], capture_output=True, env=os.environ)
        assert proc.returncode == 4, (args, proc.stderr)
        assert b"not valid UTF-8" in proc.stderr


def test_add_into_every_scope_is_refused(mem) -> None:
    result = mem("add", "which scope is this", "--scope", "*")
    assert result.code == 4 and "one scope" in result.error["message"]
    assert _stored(mem) == []


def test_import_reports_dangling_references_and_id_conflicts(mem, tmp_path: Path) -> None:
    first = mem("add", "the original text of it").records[0]["id"]
    exported = mem("export").records[0]
    other = {**exported, "id": first[:-4] + "beef", "text": "points at nothing", "superseded_by": "nope"}
    changed = {**exported, "text": "the same id, another text"}
    path = tmp_path / "in.jsonl"
    path.write_text(jsonl(changed, other))
    result = mem("import", str(path))
    assert result.code == 0, result.stderr
    conflict, dangling = result.records
    assert conflict["status"] == "conflict" and conflict["id"] == first
    assert dangling["status"] == "added" and "nope" in dangling["warnings"][0]
    assert "conflict" in result.stderr and "nope" in result.stderr
    hits = mem("search", "points at nothing", "--json").records
    assert hits and hits[0]["id"] == dangling["id"]  # visible, not hidden for good
    assert _stored(mem)[-1]["text"] == "the original text of it"


def test_new_database_folders_are_private_whatever_the_umask(tmp_path: Path) -> None:
    from mem.store import Store

    old = os.umask(0)
    try:
        with Store.open(tmp_path / "a" / "b" / "mem.db"):
            pass
    finally:
        os.umask(old)
    for folder in (tmp_path / "a", tmp_path / "a" / "b"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


# --------------------------------------------------------------------------- MCP


def test_mcp_add_and_update_pass_the_gate() -> None:
    import anyio

    from tests.test_mcp import mcp_client, text

    async def main() -> None:
        async with mcp_client() as client:
            refused = await client.call_tool("add", {"text": "deploy notes", "meta": {"cfg": {"api_key": STRIPE}}})
            assert refused.is_error and "meta.cfg.api_key" in text(refused)
            added = await client.call_tool("add", {"text": "a memory over mcp"})
            memory_id = added.structured_content["outcomes"][0]["id"]
            for args, message in [({"layer": True}, "layer"), ({"pinned": "yes"}, "pinned"),
                                  ({"text": "y" * 100_000}, "too long"), ({"text": "\x01\x02\x03\x04"}, "control"),
                                  ({"meta": {"password": "hunter22x"}}, "secret"), ({"layer": 9}, "layer")]:
                result = await client.call_tool("update", {"id": memory_id, **args})
                assert result.is_error, args
                assert message in text(result), (args, text(result))
            got = await client.call_tool("get", {"ids": memory_id})
            memory = got.structured_content["memories"][0]
            assert memory["text"] == "a memory over mcp" and memory["layer"] != 1 and memory["meta"] == {}
            ok = await client.call_tool("update", {"id": memory_id, "layer": 2, "tags": ["fine"]})
            assert not ok.is_error, text(ok)

    anyio.run(main)


# --------------------------------------------------------------------------- bench/hostile.py


@pytest.mark.slow  # a real process (or several): full suite and CI only
def test_hostile_bench_runs_a_sample_and_counts_what_it_sees(capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "bench" / "hostile.py"
    spec = importlib.util.spec_from_file_location("bench_hostile", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    classes = {c.cls for c in module.corpus()}
    assert len(module.corpus()) >= 150 and len(classes) >= 12
    argv = ["--sample", "3", "--json", "--timeout", "60"]
    for cls in ("secret in a field", "numbers and types", "update gate"):
        argv += ["--class", cls]
    assert module.main(argv) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    total = rows[-1]
    assert total["class"] == "total" and total["n"] == 3
    assert total["internal"] == 0 and total["hangs"] == 0 and total["changed"] == 0 and total["leaks"] == 0
    exits = {row["class"]: row["exit"] for row in rows[:-1]}
    assert exits["secret in a field"] == {"0": 1} and exits["numbers and types"] == {"4": 1}
    assert exits["update gate"] == {"4": 1}


def test_a_consolidation_merge_passes_the_gate(mem, monkeypatch: pytest.MonkeyPatch) -> None:
    """In process (run_mem calls mem.cli.main here), so the gate can be bypassed for the setup only."""
    # Memories stored before the gate scanned tags: a merge would carry the tag into a new memory.
    with monkeypatch.context() as patched:
        patched.setattr(gate, "_screen", lambda admitted, redact: None)
        for ending in ("", " today", " again"):
            added = mem("add", f"The nightly deploy runs at 9am from the ci box{ending}", "--tag", AWS, "--keep-near")
            assert added.code == 0, added.stderr
    result = mem("consolidate", "--phase", "compress", "--json")
    assert result.code == 0, result.stderr
    merges = [r for r in result.records if r.get("phase") == "compress" and r.get("action") in ("merge", "skip")]
    assert merges and all(r["action"] == "skip" and "secret" in r["reason"] for r in merges), merges
    assert len(_stored(mem)) == 3
