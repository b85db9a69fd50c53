"""Scopes name repositories, not folders: two checkouts called ``api`` never share memories."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mem.scope import normalize_remote, read_git_config, repo_scope
from tests.conftest import jsonl

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
DERIVED = {"MEM_SCOPE": ""}  # the suite pins MEM_SCOPE; these tests let mem derive the scope


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def repo(path: Path, remote: str | None = None) -> Path:
    path.mkdir(parents=True)
    git("init", "-q", cwd=path)
    if remote:
        git("remote", "add", "origin", remote, cwd=path)
    return path


def texts(result: Any) -> list[str]:
    assert result.code == 0, result.stderr
    return [r["text"] for r in result.records]


# ----------------------------------------------------------------- identity
@pytest.mark.parametrize("url", [
    "git@github.com:Acme/api.git", "https://github.com/acme/api", "https://bob:tok3n@github.com/acme/api.git/",
    "ssh://git@github.com:22/acme/api.git", "git://github.com/acme/api",
])
def test_the_forms_of_one_remote_are_one_scope(url: str) -> None:
    assert normalize_remote(url) == "github.com/acme/api"


@settings(max_examples=200, deadline=None)
@given(user=st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True),
       secret=st.from_regex(r"[A-Za-z0-9_]{6,20}", fullmatch=True),
       host=st.from_regex(r"[a-z]{1,10}\.(com|org|io)", fullmatch=True),
       path=st.lists(st.from_regex(r"[A-Za-z0-9_-]{1,12}", fullmatch=True), min_size=1, max_size=3))
def test_https_and_ssh_agree_and_credentials_never_reach_the_scope(user: str, secret: str, host: str,
                                                                   path: list[str]) -> None:
    joined = "/".join(path)
    https = normalize_remote(f"https://{user}:{secret}@{host}/{joined}.git")
    scp = normalize_remote(f"{user}@{host}:{joined}.git")
    assert https == scp == f"{host}/{joined}"
    assert secret not in (https or "") or secret in joined or secret in host


@given(st.text(max_size=60))
def test_any_remote_text_normalises_or_is_refused_without_raising(url: str) -> None:
    result = normalize_remote(url)
    assert result is None or (result and not result.startswith("/") and "\n" not in result)


def test_git_config_reader_handles_subsections_quotes_and_comments(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text('[core]\n\tbare = false\n# a comment\n[remote "origin"]\n\turl = "git@h.io:a/b.git" ; note\n'
                      '[mem]\n\tscope = team-api\n')
    values = read_git_config(config)
    assert values["remote.origin.url"] == "git@h.io:a/b.git"
    assert values["mem.scope"] == "team-api"


# ----------------------------------------------------------------- the collision
def test_two_repositories_named_api_never_share_memories(tmp_path: Path, mem: Any) -> None:
    work = repo(tmp_path / "work/api", "git@github.com:work-co/api.git")
    oss = repo(tmp_path / "oss/api", "https://github.com/oss-org/api")
    plain_a = repo(tmp_path / "a/api")
    plain_b = repo(tmp_path / "b/api")
    assert mem("add", "Work api: the payroll export runs on Fridays", cwd=work, env=DERIVED).code == 0
    assert mem("add", "Plain api A: invoices are rendered nightly", cwd=plain_a, env=DERIVED).code == 0
    assert texts(mem("search", "when does the payroll export run", "--json", cwd=oss, env=DERIVED)) == []
    assert texts(mem("search", "when are invoices rendered", "--json", cwd=plain_b, env=DERIVED)) == []
    (work / "src").mkdir()
    assert texts(mem("search", "payroll export", "--json", cwd=work / "src", env=DERIVED)) == [
        "Work api: the payroll export runs on Fridays"]
    shown = mem("scope", "--json", cwd=work, env=DERIVED).records[0]
    assert shown["scope"] == "github.com/work-co/api" and shown["how"] == "remote origin"
    assert shown["display"] == "work-co/api" and shown["memories"] == 1
    # Explicit choices still win over the repository.
    assert mem("scope", "--json", "--scope", "mine", cwd=work, env=DERIVED).records[0]["scope"] == "mine"
    assert mem("scope", "--json", cwd=work, env={"MEM_SCOPE": "pinned"}).records[0]["how"] == "MEM_SCOPE"


def test_a_repository_without_remote_keeps_its_scope_when_moved_and_when_it_gains_one(tmp_path: Path, mem: Any) -> None:
    first = repo(tmp_path / "api")
    assert mem("add", "Builds are cached in S3", cwd=first, env=DERIVED).code == 0
    name = mem("scope", "--json", cwd=first, env=DERIVED).records[0]["scope"]
    assert name.startswith("api-")
    moved = tmp_path / "elsewhere" / "api"
    moved.parent.mkdir()
    first.rename(moved)
    git("remote", "add", "origin", "git@github.com:x/api.git", cwd=moved)
    assert mem("scope", "--json", cwd=moved, env=DERIVED).records[0]["scope"] == name
    assert texts(mem("search", "build cache", "--json", cwd=moved, env=DERIVED)) == ["Builds are cached in S3"]


def test_worktrees_see_their_repositorys_memories(tmp_path: Path, mem: Any) -> None:
    main = repo(tmp_path / "api", "git@github.com:acme/api.git")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "start", cwd=main)
    git("worktree", "add", "-q", str(tmp_path / "api-hotfix"), cwd=main)
    assert mem("add", "Releases are tagged vX.Y.Z", cwd=main, env=DERIVED).code == 0
    assert texts(mem("search", "release tags", "--json", cwd=tmp_path / "api-hotfix", env=DERIVED)) == [
        "Releases are tagged vX.Y.Z"]


def test_a_submodule_is_the_repository_it_checks_out(tmp_path: Path) -> None:
    outer = repo(tmp_path / "app", "git@github.com:acme/app.git")
    inner_git = outer / ".git" / "modules" / "lib"
    inner_git.mkdir(parents=True)
    (inner_git / "config").write_text('[remote "origin"]\n\turl = https://github.com/acme/lib.git\n')
    (outer / "vendor/lib").mkdir(parents=True)
    (outer / "vendor/lib/.git").write_text("gitdir: ../../.git/modules/lib\n")
    assert repo_scope(outer / "vendor/lib").name == "github.com/acme/lib"
    assert repo_scope(outer).name == "github.com/acme/app"


# ----------------------------------------------------------------- old databases
def test_a_database_from_before_keeps_finding_its_memories_from_the_same_folder(tmp_path: Path, mem: Any) -> None:
    work = repo(tmp_path / "work/api", "git@github.com:work-co/api.git")
    other = repo(tmp_path / "oss/api", "git@github.com:oss-org/api.git")
    # What mem wrote before scopes named repositories: the folder's name.
    assert mem("add", "-", input=jsonl({"text": "Payroll export runs on Fridays", "scope": "api"},
                                       {"text": "Deploys go through Argo CD", "scope": "api"})).code == 0
    found = mem("search", "payroll export", "--json", cwd=work, env=DERIVED)
    assert texts(found)[0] == "Payroll export runs on Fridays"
    assert {r["scope"] for r in found.records} == {"github.com/work-co/api"}
    shown = mem("scope", "--json", cwd=work, env=DERIVED).records[0]
    assert shown["adopted"]["from"] == "api" and shown["memories"] == 2
    # Recorded: one changelog row per memory that moved, and the mapping itself.
    with sqlite3.connect(tmp_path / "mem.db") as conn:
        moves = conn.execute("SELECT COUNT(*) FROM changelog WHERE op = 'update' AND payload LIKE '%from_scope%'").fetchone()
        assert moves[0] == 2
    # Adopted once: the other folder called api does not take them back, and doctor says what happened.
    assert texts(mem("search", "payroll export", "--json", cwd=other, env=DERIVED)) == []
    checks = [c for c in mem("doctor", "--json", cwd=other, env=DERIVED).records if c.get("check") == "scopes"]
    assert checks and checks[0]["status"] == "warn" and "mem scope move" in checks[0]["fix"]
    # Export carries the new name.
    exported = mem("export", "--scope", "*").records
    assert {r["scope"] for r in exported} == {"github.com/work-co/api"}


# ----------------------------------------------------------------- list, rename, merge, move
def _edges(tmp_path: Path) -> int:
    with sqlite3.connect(tmp_path / "mem.db") as conn:
        return conn.execute("SELECT COUNT(*) FROM edges").fetchone()[0]


def test_rename_and_merge_keep_every_memory_and_edge(tmp_path: Path, mem: Any) -> None:
    records = [{"text": f"The {name} service is written in Go and deployed with Helm", "scope": "old"}
               for name in ("billing", "search", "ledger")] + [{"text": "The ledger service owns invoices", "scope": "b"}]
    assert mem("add", "-", input=jsonl(*records)).code == 0
    ids = [r["id"] for r in mem("list", "--scope", "old").records]
    assert mem("graph", "link", ids[0], ids[1], "--type", "caused").code == 0
    edges = _edges(tmp_path)
    renamed = mem("scope", "rename", "old", "services", "--json")
    assert renamed.code == 0 and renamed.records[0]["memories"] == 3
    assert sorted(r["id"] for r in mem("list", "--scope", "services").records) == sorted(ids)
    assert mem("list", "--scope", "old").records == []
    assert _edges(tmp_path) == edges
    hits = mem("search", "Go services deployed with Helm", "--scope", "services", "--json").records
    assert {h["id"] for h in hits} >= set(ids)
    assert mem("scope", "rename", "services", "b").code == 4  # b holds memories: that is a merge
    assert mem("scope", "merge", "services", "nowhere").code == 3
    assert mem("scope", "merge", "services", "b", "--dry-run", "--json").records[0]["memories"] == 3
    assert len(mem("list", "--scope", "services").records) == 3
    assert mem("scope", "merge", "services", "b").code == 0
    assert len(mem("list", "--scope", "b").records) == 4 and _edges(tmp_path) == edges
    listed = {r["scope"]: r for r in mem("scope", "list", "--json").records}
    assert listed["b"]["memories"] == 4 and set(listed["b"]["aliases"]) == {"services"}
    assert "old" not in listed and "services" not in listed  # empty and never a folder's scope
    assert mem("scope", "merge", "b", "fresh", "--create").code == 0
    assert len(mem("list", "--scope", "fresh").records) == 4


def test_move_splits_a_scope_through_a_pipe(tmp_path: Path, mem: Any) -> None:
    assert mem("add", "-", input=jsonl({"text": "Alpha uses Kafka for events", "scope": "shared"},
                                       {"text": "Beta uses RabbitMQ for events", "scope": "shared"})).code == 0
    beta = mem("search", "RabbitMQ", "--scope", "shared", "--json", "-k", "1").stdout
    moved = mem("scope", "move", "beta", "-", input=beta)
    assert moved.code == 0, moved.stderr
    assert texts(mem("list", "--scope", "beta")) == ["Beta uses RabbitMQ for events"]
    assert texts(mem("list", "--scope", "shared")) == ["Alpha uses Kafka for events"]
    assert mem("scope", "move", "x", "nonexistent-id").code == 3
    assert mem("scope", "move", "*", "-", input=beta).code == 4


def test_doctor_warns_when_two_repositories_resolve_to_one_scope(tmp_path: Path, mem: Any) -> None:
    a = repo(tmp_path / "a/api", "git@github.com:a/api.git")
    b = repo(tmp_path / "b/api")
    git("config", "mem.scope", "github.com/a/api", cwd=b)  # a copy-pasted config
    for folder in (a, b):  # any command registers its repository; a read would need the database to exist
        assert mem("add", f"a note made in {folder}", cwd=folder, env=DERIVED).code == 0
    checks = [c for c in mem("doctor", "--json", cwd=a, env=DERIVED).records if c.get("check") == "scopes"]
    assert [c["status"] for c in checks] == ["warn"]
    assert str(a) in checks[0]["detail"] and str(b) in checks[0]["detail"]
    assert "git -C" in checks[0]["fix"] and "config mem.scope" in checks[0]["fix"]


# ----------------------------------------------------------------- MCP
@pytest.mark.slow  # two real servers in two git repositories
def test_mcp_clients_in_two_repositories_named_api_never_see_each_other(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp.types import ListRootsResult, Root

    from tests.test_mcp import stdio_client

    work = repo(tmp_path / "work/api", "git@github.com:work-co/api.git")
    oss = repo(tmp_path / "oss/api", "git@github.com:oss-org/api.git")

    def roots_of(folder: Path) -> Any:
        async def roots(_context: Any) -> ListRootsResult:
            return ListRootsResult(roots=[Root(uri=f"file://{folder}", name="api")])
        return roots

    async def main() -> None:
        async with stdio_client(cwd=tmp_path, env=DERIVED, list_roots_callback=roots_of(work), mode="legacy") as client:
            added = await client.call_tool("add", {"text": "The payroll export runs on Fridays"})
            assert not added.is_error
        async with stdio_client(cwd=tmp_path, env=DERIVED, list_roots_callback=roots_of(oss), mode="legacy") as client:
            found = await client.call_tool("search", {"query": "when does the payroll export run"})
            assert not found.is_error
            assert json.dumps(found.structured_content).count("payroll") == 0
        async with stdio_client(cwd=tmp_path, env=DERIVED, list_roots_callback=roots_of(work), mode="legacy") as client:
            found = await client.call_tool("search", {"query": "when does the payroll export run"})
            assert "payroll" in json.dumps(found.structured_content)

    anyio.run(main)
