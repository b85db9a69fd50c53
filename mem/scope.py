"""Which project a folder belongs to: the scope mem files its memories under by default.

A folder name is not an identity (``work/api`` and ``oss/api`` are two projects), so the default
scope names the *repository*:

1. ``git config mem.scope NAME`` in the repository, when set (by you, or by mem for 3.);
2. else its normalised ``origin`` remote (the only remote when there is no origin):
   ``git@github.com:Acme/api.git`` and ``https://user:token@github.com/acme/api`` are both
   ``github.com/acme/api`` (credentials, ports and ``.git`` dropped, never stored);
3. else a name made once for the repository, ``<folder>-<8 hex>`` from the path of its git
   directory, and written to its git config as ``mem.scope`` so it survives moving the folder
   and later gaining a remote.

Worktrees read the config of the repository they belong to (``commondir``), so every worktree of
one repository has that repository's scope; a submodule has its own git directory and config, so
it is the repository it checks out, wherever that is. The git files are read directly (no ``git``
process): this runs on every command.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

# Hosts whose repository paths are case-insensitive: one project however a clone spelled it.
_CASELESS_HOSTS = frozenset({"github.com", "gitlab.com", "bitbucket.org", "codeberg.org"})
_SCP_LIKE = re.compile(r"^(?:[^@/\s]+@)?(?P<host>[^:/\s]+):(?!//)(?P<path>.+)$")
_URL = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?:[^@/]*@)?(?P<host>\[[^\]]*\]|[^/:?#]*)(?::\d*)?(?P<path>[^?#]*)",
                  re.IGNORECASE)


@dataclass(frozen=True)
class RepoScope:
    """The scope of one repository, and how it was found."""

    name: str  # stored on memories
    display: str  # short and readable: "acme/api", "api"
    how: str  # "git config mem.scope", "remote origin", "repository id (new)"
    root: Path  # the working tree's top folder
    identity: str  # which repository this is: its normalised remote, else "path:<git dir>"
    legacy: str  # the scope mem used before scopes named repositories: the top folder's name


def normalize_remote(url: str) -> str | None:
    """A remote URL as ``host/path``, lower-case host, no credentials, port or ``.git``; None if unreadable.

    >>> normalize_remote("git@github.com:Acme/API.git")
    'github.com/acme/api'
    >>> normalize_remote("https://bob:s3cret@git.example.org:8443/team/Api.git/")
    'git.example.org/team/Api'
    """
    url = url.strip()
    if not url or any(c.isspace() for c in url):
        return None
    match = _URL.match(url)
    if match:
        scheme = match["scheme"].lower()
        host, path = match["host"].lower().strip("[]"), match["path"]
        if scheme == "file":
            host, path = "", path
    elif url.startswith(("/", ".", "~")):
        host, path = "", url
    else:
        scp = _SCP_LIKE.match(url)
        if not scp:
            return None
        host, path = scp["host"].lower(), scp["path"]
    path = re.sub(r"/+", "/", path).strip("/")
    path = path.removesuffix(".git").rstrip("/")
    if host in _CASELESS_HOSTS:
        path = path.lower()
    if not path:
        return None
    return f"{host}/{path}" if host else path


def read_git_config(path: Path) -> dict[str, str]:
    """The ``section[.subsection].key`` -> value pairs of a git config file (last one wins).

    Enough of git's format for what mem needs: sections with quoted subsections, comments, quoted
    values and backslash escapes; ``include`` directives are not followed.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    values: dict[str, str] = {}
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        header = re.match(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]', line)
        if header:
            name, sub = header[1].lower(), header[2]
            section = name if sub is None else name + "." + re.sub(r"\\(.)", r"\1", sub)
            continue
        key, sep, value = line.partition("=")
        key = key.strip().lower()
        if not section or not re.fullmatch(r"[a-z][a-z0-9-]*", key):
            continue
        values[f"{section}.{key}"] = _config_value(value) if sep else "true"
    return values


def _config_value(raw: str) -> str:
    out, quoted, i = [], False, 0
    raw = raw.strip()
    while i < len(raw):
        char = raw[i]
        if char == "\\" and i + 1 < len(raw):
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(raw[i + 1], raw[i + 1]))
            i += 2
            continue
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        i += 1
    return "".join(out).strip()


def find_repository(start: Path) -> tuple[Path, Path, Path] | None:
    """``(top folder, git dir, common git dir)`` of the repository holding ``start``, or None."""
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder, dot_git, _common_dir(dot_git)
        if dot_git.is_file():  # a worktree or a submodule: "gitdir: <path>"
            try:
                first = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                continue
            if not first.startswith("gitdir:"):
                continue
            git_dir = Path(first[len("gitdir:"):].strip())
            git_dir = git_dir if git_dir.is_absolute() else (folder / git_dir)
            return folder, git_dir, _common_dir(git_dir)
    return None


def _common_dir(git_dir: Path) -> Path:
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    path = Path(common)
    return path if path.is_absolute() else (git_dir / path)


def repo_scope(start: Path, *, persist: bool = True) -> RepoScope | None:
    """The scope of the repository holding ``start`` (None outside any repository).

    ``persist`` writes a newly made repository id to the repository's git config (3. above); when
    that is not possible (read-only checkout) the same id is derived again next time.
    """
    found = find_repository(start)
    if found is None:
        return None
    root, _git_dir, common = found
    config_file = common / "config"
    config = read_git_config(config_file)
    remotes = sorted({key.split(".")[1] for key in config if key.startswith("remote.") and key.endswith(".url")
                      and key.count(".") >= 2})
    remote_url = config.get("remote.origin.url") or (config.get(f"remote.{remotes[0]}.url") if len(remotes) == 1 else None)
    remote = normalize_remote(remote_url) if remote_url else None
    identity = remote or f"path:{_real(common)}"
    legacy = root.name
    configured = config.get("mem.scope", "").strip()
    if configured:
        return RepoScope(configured, _display(configured), "git config mem.scope", root, identity, legacy)
    if remote:
        return RepoScope(remote, _display(remote), "remote " + ("origin" if "remote.origin.url" in config else remotes[0]),
                         root, identity, legacy)
    name = f"{_slug(legacy)}-{hashlib.sha256(_real(common).encode()).hexdigest()[:8]}"
    how = "repository id"
    if persist and _append_scope(config_file, name):
        how = "repository id (new)"
    return RepoScope(name, _slug(legacy), how, root, identity, legacy)


def _real(path: Path) -> str:
    return os.path.realpath(path)


def _slug(name: str) -> str:
    return re.sub(r"[^\w.-]+", "-", name).strip("-") or "repo"


def _display(name: str) -> str:
    parts = [p for p in name.split("/") if p]
    return "/".join(parts[-2:]) if len(parts) > 2 else name


def _append_scope(config_file: Path, name: str) -> bool:
    """Add ``[mem] scope = NAME`` to the repository's config (git's own format), if writable."""
    try:
        ends_open = config_file.exists() and not config_file.read_bytes().endswith(b"\n")
        with config_file.open("a", encoding="utf-8") as fh:
            fh.write(("\n" if ends_open else "") + f"[mem]\n\tscope = {name}\n")
        return True
    except OSError:
        return False
