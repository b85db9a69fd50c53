"""Settings resolved once per command: flag > environment > config file > default."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from mem.errors import BadInput

if TYPE_CHECKING:
    from mem.scope import RepoScope

DEFAULT_EMBEDDER = "minilm"
DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"


def _xdg(env: Mapping[str, str], name: str, fallback: str) -> Path:
    # Empty or relative XDG values count as unset (XDG Base Directory spec).
    value = env.get(name, "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path(env.get("HOME") or Path.home()) / fallback


DB_URL_SCHEMES = ("postgresql://", "postgres://")


def is_db_url(value: object) -> bool:
    """True for a PostgreSQL connection URL, which ``MEM_DB``/``--db``/``db =`` may hold instead of a path.

    >>> is_db_url("postgresql://me@db.example/mem"), is_db_url("/home/me/mem.db")
    (True, False)
    """
    return isinstance(value, str) and value.startswith(DB_URL_SCHEMES)


def default_db_path(env: Mapping[str, str]) -> Path:
    return _xdg(env, "XDG_DATA_HOME", ".local/share") / "mem" / "mem.db"


def config_path(env: Mapping[str, str]) -> Path:
    return _xdg(env, "XDG_CONFIG_HOME", ".config") / "mem" / "config.toml"


def parse_now(value: str) -> datetime:
    from mem.enrich.timestamps import parse_datetime

    try:
        return parse_datetime(value)
    except ValueError as exc:
        raise BadInput(f"cannot read time {value!r}: {exc}", field="now") from None


@dataclass(frozen=True)
class Settings:
    db_path: Path | str  # a file, or a postgresql:// URL (is_db_url)
    embedder: str | None = None  # None: whatever the database is bound to, else DEFAULT_EMBEDDER
    scope: str = "global"
    scope_how: str = "default"  # "--scope", "MEM_SCOPE", "config file", or how the repository named it
    repo: "RepoScope | None" = None  # the repository the scope was derived from, if it was
    ollama_host: str = DEFAULT_OLLAMA_HOST
    llm: str = "qwen2.5:3b"
    now_override: datetime | None = None
    config: Mapping[str, Any] = field(default_factory=dict)

    def now(self) -> datetime:
        """The clock every stage uses; ``--now``/``MEM_NOW`` pin it so tests can travel in time."""
        return self.now_override or datetime.now(timezone.utc)

    def section(self, name: str) -> Mapping[str, Any]:
        value = self.config.get(name, {})
        return value if isinstance(value, Mapping) else {}


def load_config_file(env: Mapping[str, str]) -> dict[str, Any]:
    path = config_path(env)
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, OSError) as exc:
        raise BadInput(f"cannot read config file {path}: {exc}", path=str(path)) from None


def resolve_settings(
    *,
    db: str | os.PathLike[str] | None = None,
    embedder: str | None = None,
    scope: str | None = None,
    now: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Settings:
    """Build Settings from flags, then ``MEM_*`` variables, then config.toml, then defaults."""
    env = os.environ if env is None else env
    cfg = load_config_file(env)
    db_value = db or env.get("MEM_DB") or cfg.get("db")
    if is_db_url(str(db_value or "")):
        db_path: Path | str = str(db_value)
    else:
        db_path = Path(db_value).expanduser() if db_value else default_db_path(env)
    scope_value, scope_how, repo = _resolve_scope(scope, env, cfg, cwd)
    now_value = now or env.get("MEM_NOW")
    return Settings(
        db_path=db_path,
        embedder=embedder or env.get("MEM_EMBEDDER") or cfg.get("embedder") or None,
        scope=scope_value,
        scope_how=scope_how,
        repo=repo,
        ollama_host=env.get("OLLAMA_HOST") or cfg.get("ollama_host") or DEFAULT_OLLAMA_HOST,
        llm=env.get("MEM_LLM") or cfg.get("llm") or "qwen2.5:3b",
        now_override=parse_now(now_value) if now_value else None,
        config=cfg,
    )


def _resolve_scope(flag: str | None, env: Mapping[str, str], cfg: Mapping[str, Any],
                   cwd: Path | None) -> tuple[str, str, "RepoScope | None"]:
    for value, how in ((flag, "--scope"), (env.get("MEM_SCOPE"), "MEM_SCOPE"), (cfg.get("scope"), "config file")):
        if value:
            return str(value), how, None
    from mem.scope import repo_scope

    try:
        folder = cwd or Path.cwd()
    except OSError:  # the working directory was deleted under us
        return "global", "default (no working directory)", None
    repo = repo_scope(folder)
    if repo is None:
        return "global", "default (not in a git repository)", None
    return repo.name, repo.how, repo
