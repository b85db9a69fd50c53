"""mem hook: decisions captured from commits, idempotent on amend and rebase; install keeps other hooks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from mem.stages.githook import Commit, capture
from tests.conftest import run_mem


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": "2026-03-01T10:00:00Z", "GIT_COMMITTER_DATE": "2026-03-01T10:00:00Z"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "shop"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Ada")
    git(path, "config", "user.email", "ada@example.com")
    git(path, "config", "commit.gpgsign", "false")
    git(path, "config", "mem.scope", "shop")  # the repository's scope (mem.scope), so memories() finds them
    (path / "README.md").write_text("shop\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "Initial commit")
    return path


def commit(repo: Path, name: str, content: str, message: str) -> str:
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / name).write_text(content)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def memories(scope: str = "shop") -> list[dict]:
    return run_mem("list", "--scope", scope, "--limit", "100").records


DECISION = "Cache sessions in Redis\n\nWe compared Redis and memcached.\n\nDecision: Redis for the session cache\nWhy: it persists across restarts\n"


def test_capture_rules():
    def c(message: str, **kw):
        return capture(Commit("f" * 40, [], "A", "a@x", "2026-01-01T00:00:00Z", message), **kw)

    assert c("Fix typo") is None
    assert c("Fix typo", all_commits=True) is None  # --all captures stated decisions, not every subject
    assert c("initial", all_commits=True) is None
    assert c("Switch the cache to Redis", all_commits=True) == ("Switch the cache to Redis", ["commit"])
    text, cats = c(DECISION)
    assert cats == ["decision"]
    assert "Decision: Redis for the session cache" in text and "Why: it persists across restarts" in text
    text, cats = c("feat(api)!: drop the v1 endpoints")
    assert cats == ["breaking"] and "Breaking change: drop the v1 endpoints" in text
    text, cats = c("Move config\n\nBREAKING CHANGE: config moved to TOML\n")
    assert cats == ["breaking"] and "config moved to TOML" in text
    text, cats = c('Revert "Cache sessions in Redis"\n\nThis reverts commit abcdef1234567.\n\nRedis was down too often.')
    assert cats == ["revert"] and "Reverted: Cache sessions in Redis" in text and "down too often" in text
    assert "abcdef1234567" not in text
    text, _ = c("Use tabs instead of spaces\n\nSigned-off-by: A <a@x>", all_commits=True)
    assert "Signed-off-by" not in text


def test_backfill_captures_decisions_with_provenance_and_is_idempotent(repo: Path):
    sha = commit(repo, "src/cache.py", "redis = True\n", DECISION)
    commit(repo, "docs/notes.md", "notes\n", "Update notes")
    first = run_mem("hook", "run", "--repo", str(repo))
    assert first.code == 0, first.stderr
    assert [r["status"] for r in first.records] == ["added"]
    [memory] = memories()
    assert memory["kind"] == "decision"
    assert memory["scope"] == "shop"
    assert memory["source"] == str(repo.resolve())
    assert memory["meta"]["commit"] == sha
    assert memory["meta"]["files"] == ["src/cache.py"]
    assert "src/cache.py" in memory["tags"] and "decision" in memory["tags"]
    assert memory["author"] == "Ada"
    assert memory["created_at"] == "2026-03-01T10:00:00.000Z"
    again = run_mem("hook", "run", "--repo", str(repo))
    assert again.code == 0 and [r["status"] for r in again.records] == ["duplicate"]
    assert len(memories()) == 1


def test_all_and_since(repo: Path):
    base = git(repo, "rev-parse", "HEAD").strip()
    commit(repo, "a.txt", "a\n", "initial")
    commit(repo, "b.txt", "b\n", "Fix typo in README")
    commit(repo, "c.txt", "c\n", "Move sessions from memcached to Redis")
    commit(repo, "d.txt", "d\n", "Pin the linter because the new release flags every file")
    result = run_mem("hook", "run", "--repo", str(repo), "--all", "--since", base)
    assert [r["status"] for r in result.records] == ["added", "added"]
    assert sorted(m["text"] for m in memories()) == ["Move sessions from memcached to Redis",
                                                     "Pin the linter because the new release flags every file"]
    assert {m["kind"] for m in memories()} == {"decision"}
    assert run_mem("hook", "run", "--repo", str(repo), "--since", "no-such-rev").code == 4


def test_amend_and_rebase_make_no_duplicates(repo: Path):
    commit(repo, "src/cache.py", "redis = True\n", DECISION)
    assert run_mem("hook", "run", "--repo", str(repo), "--head").records[0]["status"] == "added"
    # amend without changing the message: a new SHA, same text -> duplicate, pointed at the new SHA
    git(repo, "commit", "-q", "--amend", "--no-edit", "--date", "2026-03-02T10:00:00Z")
    amended = git(repo, "rev-parse", "HEAD").strip()
    out = run_mem("hook", "run", "--repo", str(repo), "--head").records
    assert out[0]["status"] == "duplicate"
    assert memories()[0]["meta"]["commit"] == amended
    # amend that rewords the decision: same patch -> the memory is updated, not doubled
    git(repo, "commit", "-q", "--amend", "-m", DECISION.replace("persists across restarts", "survives restarts"))
    out = run_mem("hook", "run", "--repo", str(repo), "--head").records
    assert out[0]["status"] == "updated"
    [memory] = memories()
    assert "survives restarts" in memory["text"]
    # rebase onto a new base: every SHA changes, the message does not
    git(repo, "checkout", "-q", "-b", "side", "HEAD~1")
    commit(repo, "other.txt", "x\n", "Unrelated change")
    git(repo, "checkout", "-q", "main")
    git(repo, "rebase", "-q", "side")
    rebased = run_mem("hook", "run", "--repo", str(repo))
    assert rebased.code == 0, rebased.stderr
    assert {r["status"] for r in rebased.records} <= {"duplicate"}
    assert len(memories()) == 1


def test_install_runs_on_commit_and_uninstall_keeps_other_hooks(repo: Path):
    hook = repo / ".git" / "hooks" / "post-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho existing-hook > \"$(git rev-parse --git-dir)/ran\"\n")
    hook.chmod(0o755)
    installed = run_mem("hook", "install", "--repo", str(repo))
    assert installed.code == 0, installed.stderr
    assert installed.records[0]["action"] == "installed"
    assert run_mem("hook", "install", "--repo", str(repo)).records[0]["action"] == "updated"
    text = hook.read_text()
    assert text.count("# >>> mem hook >>>") == 1 and "existing-hook" in text
    assert os.access(hook, os.X_OK)
    commit(repo, "src/api.py", "v2\n", "feat!: remove the v1 API")
    assert (repo / ".git" / "ran").exists()
    [memory] = memories()
    assert memory["meta"]["capture"] == ["breaking"]
    removed = run_mem("hook", "uninstall", "--repo", str(repo)).records[0]
    assert removed["action"] == "removed" and removed["file_deleted"] is False
    assert hook.read_text() == "#!/bin/sh\necho existing-hook > \"$(git rev-parse --git-dir)/ran\"\n"
    assert run_mem("hook", "uninstall", "--repo", str(repo)).records[0]["action"] == "absent"


def test_install_alone_then_uninstall_deletes_the_file(repo: Path):
    hook = repo / ".git" / "hooks" / "post-commit"
    hook.unlink(missing_ok=True)
    assert run_mem("hook", "install", "--repo", str(repo), "--all").code == 0
    assert "--all" in hook.read_text()
    assert run_mem("hook", "uninstall", "--repo", str(repo)).records[0]["file_deleted"] is True
    assert not hook.exists()


def test_not_a_repository_is_bad_input(tmp_path: Path):
    result = run_mem("hook", "run", "--repo", str(tmp_path))
    assert result.code == 4 and "not inside a git repository" in result.error["message"]


def test_user_text_never_reaches_a_shell(repo: Path, tmp_path: Path):
    marker = tmp_path / "pwned"
    evil = f"Decision: use $(touch {marker}) and `touch {marker}`\nWhy: ; touch {marker}"
    commit(repo, "x.txt", "x\n", f"Evil message\n\n{evil}")
    result = run_mem("hook", "run", "--repo", str(repo))
    assert result.code == 0
    assert not marker.exists()
    assert "$(touch" in memories()[0]["text"]
