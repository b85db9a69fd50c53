"""Numbered schema migrations, one transaction each, tracked by ``PRAGMA user_version``.

Never edit a shipped migration: add the next number. The vec0 index is not created here because
its width depends on the embedder; ``Store.bind_embedder`` creates it on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Connection = Any  # sqlean.Connection; kept loose so this module imports nothing heavy


def run_script(conn: Connection, script: str) -> None:
    """Execute each statement of ``script`` inside the caller's transaction.

    ``executescript`` would COMMIT first, breaking the one-transaction-per-migration rule.
    """
    import sqlean

    buffer = ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--"):
            continue
        buffer += line
        if sqlean.complete_statement(buffer):
            conn.execute(buffer)
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete SQL statement in migration: {buffer[:80]!r}")


def m001_init(conn: Connection) -> None:
    run_script(conn, 
        """
        CREATE TABLE memories (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            text TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'fact',
            scope TEXT NOT NULL DEFAULT 'global',
            tags TEXT NOT NULL DEFAULT '[]',
            meta TEXT NOT NULL DEFAULT '{}',
            source TEXT,
            source_hash TEXT,
            source_line INTEGER,
            author TEXT,
            created_at TEXT NOT NULL,
            event_at TEXT,
            valid_until TEXT,
            updated_at TEXT NOT NULL,
            last_accessed_at TEXT,
            access_count INTEGER NOT NULL DEFAULT 0,
            layer INTEGER NOT NULL DEFAULT 3 CHECK (layer BETWEEN 1 AND 4),
            pinned INTEGER NOT NULL DEFAULT 0,
            confidence REAL NOT NULL DEFAULT 1.0,
            verification TEXT NOT NULL DEFAULT 'unverified',
            importance REAL NOT NULL DEFAULT 0.5,
            surprise REAL NOT NULL DEFAULT 0.5,
            status TEXT NOT NULL DEFAULT 'active',
            superseded_by TEXT,
            content_hash TEXT NOT NULL
        );
        CREATE INDEX memories_scope_hash ON memories(scope, content_hash);
        CREATE INDEX memories_scope_created ON memories(scope, created_at);
        CREATE INDEX memories_created ON memories(created_at);
        CREATE INDEX memories_status ON memories(status);

        CREATE VIRTUAL TABLE memory_fts USING fts5(
            text, tags, content='memories', content_rowid='rowid', tokenize='porter unicode61'
        );
        -- Triggers fire on text/tags only, so access bumps never touch the index.
        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memory_fts(rowid, text, tags) VALUES (new.rowid, new.text, new.tags);
        END;
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memory_fts(memory_fts, rowid, text, tags) VALUES ('delete', old.rowid, old.text, old.tags);
        END;
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, tags ON memories BEGIN
            INSERT INTO memory_fts(memory_fts, rowid, text, tags) VALUES ('delete', old.rowid, old.text, old.tags);
            INSERT INTO memory_fts(rowid, text, tags) VALUES (new.rowid, new.text, new.tags);
        END;

        CREATE TABLE vectors (
            rowid INTEGER PRIMARY KEY REFERENCES memories(rowid) ON DELETE CASCADE,
            f32 BLOB NOT NULL,
            var BLOB
        );

        CREATE TABLE edges (
            src TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            dst TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            layer TEXT NOT NULL,
            type TEXT NOT NULL,
            weight REAL NOT NULL DEFAULT 1.0,
            created_at TEXT NOT NULL,
            origin TEXT NOT NULL DEFAULT 'auto',
            PRIMARY KEY (src, dst, type)
        ) WITHOUT ROWID;
        CREATE INDEX edges_dst ON edges(dst, type);

        CREATE TABLE entities (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            type TEXT NOT NULL DEFAULT 'concept',
            aliases TEXT NOT NULL DEFAULT '[]',
            mention_count INTEGER NOT NULL DEFAULT 0,
            first_seen TEXT,
            last_seen TEXT
        );
        CREATE TABLE memory_entities (
            memory_rowid INTEGER NOT NULL REFERENCES memories(rowid) ON DELETE CASCADE,
            entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            PRIMARY KEY (memory_rowid, entity_id)
        ) WITHOUT ROWID;
        CREATE INDEX memory_entities_entity ON memory_entities(entity_id);

        CREATE TABLE communities (
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL,
            centroid BLOB,
            size INTEGER NOT NULL DEFAULT 0,
            label TEXT,
            updated_at TEXT
        );

        CREATE TABLE changelog (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            op TEXT NOT NULL,
            memory_id TEXT,
            author TEXT,
            payload TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX changelog_memory ON changelog(memory_id);

        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """
    )


def m002_graph(conn: Connection) -> None:
    """Graph tables beyond m001 (owned by the knowledge-graph work).

    - ``community_members``: which memories each stored community holds (one row per member).
    - ``memories_session``: an expression index on the session key (``meta.session``, else
      ``source``) so the temporal layer finds a memory's session neighbours without a scan;
      queries must spell the expression exactly as below to use it.
    Edges need no new index: the primary key (src, dst, type) and m001's edges_dst serve both
    directions, and every extra index is one more B-tree write per edge at intake.
    """
    run_script(conn,
        """
        CREATE TABLE community_members (
            community_id INTEGER NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
            memory_rowid INTEGER NOT NULL REFERENCES memories(rowid) ON DELETE CASCADE,
            PRIMARY KEY (community_id, memory_rowid)
        ) WITHOUT ROWID;
        CREATE INDEX community_members_memory ON community_members(memory_rowid);
        CREATE INDEX communities_scope ON communities(scope);

        CREATE INDEX memories_session ON memories(
            scope, COALESCE(json_extract(meta, '$.session'), source), created_at
        ) WHERE COALESCE(json_extract(meta, '$.session'), source) IS NOT NULL;

        """
    )


def m003_lifecycle(conn: Connection) -> None:
    """Lifecycle state and consolidation log (owned by the lifecycle work).

    - ``lc_radius``: the memory's radius in the Poincare ball (NULL until its first lifecycle step),
      ``lc_at``: when it was last stepped, ``lc_uses``: access_count seen at that step (so a step
      knows how many uses happened since), ``asserted``: 1 once its assertions are indexed.
    - ``assertions``: the local sections of the contradiction sheaf, keyed for indexed lookup by
      (scope, attribute group, canonical subject), (scope, attribute group, slot) and (scope, value).
    - ``consolidation_runs``: one row per ``mem consolidate`` run.
    """
    run_script(conn,
        """
        ALTER TABLE memories ADD COLUMN lc_radius REAL;
        ALTER TABLE memories ADD COLUMN lc_at TEXT;
        ALTER TABLE memories ADD COLUMN lc_uses INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE memories ADD COLUMN asserted INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX memories_source ON memories(source) WHERE source IS NOT NULL;
        CREATE INDEX memories_unasserted ON memories(rowid) WHERE asserted = 0;

        CREATE TABLE assertions (
            memory_rowid INTEGER NOT NULL REFERENCES memories(rowid) ON DELETE CASCADE,
            scope TEXT NOT NULL,
            attribute TEXT NOT NULL,
            subject TEXT NOT NULL,
            slot TEXT NOT NULL,
            value TEXT NOT NULL,
            polarity INTEGER NOT NULL
        );
        CREATE INDEX assertions_subject ON assertions(scope, attribute, subject);
        CREATE INDEX assertions_slot ON assertions(scope, attribute, slot);
        CREATE INDEX assertions_memory ON assertions(memory_rowid);
        CREATE INDEX assertions_value ON assertions(scope, value);

        CREATE TABLE consolidation_runs (
            id INTEGER PRIMARY KEY,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            phases TEXT NOT NULL,
            dry_run INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'running',
            summary TEXT NOT NULL DEFAULT '{}',
            error TEXT
        );
        """
    )


def m004_newest_assertions(conn: Connection) -> None:
    """Assertion lookups end in ``memory_rowid``, so intake reads the newest rivals of a key straight
    off the index (``ORDER BY memory_rowid DESC LIMIT n``) instead of every memory that ever
    asserted a common value ("... on Fridays": thousands at 100k memories)."""
    run_script(conn,
        """
        DROP INDEX assertions_subject;
        DROP INDEX assertions_slot;
        DROP INDEX assertions_value;
        CREATE INDEX assertions_subject ON assertions(scope, attribute, subject, memory_rowid);
        CREATE INDEX assertions_slot ON assertions(scope, attribute, slot, memory_rowid);
        CREATE INDEX assertions_value ON assertions(scope, value, memory_rowid);
        """
    )


def m005_fts_epoch(conn: Connection) -> None:
    """A counter of changes to what is full-text indexed, other than new rows: a process keeping BM25
    postings in RAM (``mem.store.terms``) drops them when it moves. Triggers, so no write path can
    forget it."""
    run_script(conn,
        """
        INSERT OR IGNORE INTO meta(key, value) VALUES ('fts_epoch', '0');
        CREATE TRIGGER memories_fts_epoch_update AFTER UPDATE OF text, tags, scope ON memories BEGIN
            UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'fts_epoch';
        END;
        CREATE TRIGGER memories_fts_epoch_delete AFTER DELETE ON memories BEGIN
            UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'fts_epoch';
        END;
        """
    )


def m006_id_handles(conn: Connection) -> None:
    """Tables show handles, prefixes of an id's random tail (``mem.ids``): an index on the tail makes
    resolving one and finding its shortest unique length two index probes."""
    run_script(conn, "CREATE INDEX memories_id_tail ON memories(substr(id, 25));")


def m007_scopes(conn: Connection) -> None:
    """Scopes that name repositories (``mem/scope.py``).

    - ``scope_roots``: every repository top folder a command ran in, the scope it resolved to, what
      identifies the repository (normalised remote or git dir) and its pre-m007 folder-name scope;
      ``mem scope list`` and ``mem doctor`` read it.
    - ``scope_aliases``: scopes renamed or merged away, and folder-name scopes adopted by the
      repository they came from (one adoption per old name).
    """
    run_script(conn,
        """
        CREATE TABLE scope_roots (
            root TEXT PRIMARY KEY,
            scope TEXT NOT NULL,
            identity TEXT NOT NULL,
            how TEXT NOT NULL,
            legacy TEXT NOT NULL,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL
        );
        CREATE INDEX scope_roots_scope ON scope_roots(scope);
        CREATE TABLE scope_aliases (
            old TEXT PRIMARY KEY,
            new TEXT NOT NULL,
            at TEXT NOT NULL,
            reason TEXT NOT NULL
        );
        """
    )


def m008_structure(conn: Connection) -> None:
    """Each memory's structure type (timeline, ledger, taxonomy, narrative; ``mem.enrich.structure``),
    set at intake and read by ``mem search --organize``. Memories stored before read as narrative."""
    run_script(conn, "ALTER TABLE memories ADD COLUMN structure TEXT NOT NULL DEFAULT 'narrative';")


def m009_pending_links(conn: Connection) -> None:
    """Bulk import defers the graph (``mem.stages.finish``): ``pending_links`` holds each memory a bulk
    import stored whose links and assertions are not made yet, with the nearest neighbours intake
    found for it (JSON ``[[rowid, cosine], ...]``, NULL when it has no vector), written in the same
    transaction as the memory, so an interrupted import leaves exactly the rows still to finish."""
    run_script(conn,
        """
        CREATE TABLE pending_links (
            memory_rowid INTEGER PRIMARY KEY REFERENCES memories(rowid) ON DELETE CASCADE,
            neighbours TEXT
        );
        """
    )


def m010_structure_backfill(conn: Connection) -> None:
    """Structure types for the memories stored before m008, which read as narrative: computed as intake
    computes them (``mem.enrich.structure.structure_of``, pure and stdlib), over every narrative row in
    rowid batches. Intake classes a text the same way each time, so a row it called narrative stays so."""
    from mem.enrich.structure import structure_of

    last = 0
    while True:
        rows = conn.execute("SELECT rowid, text, event_at FROM memories WHERE structure = 'narrative' AND rowid > ? "
                            "ORDER BY rowid LIMIT 2000", (last,)).fetchall()
        if not rows:
            return
        for rowid, text, event_at in rows:
            found = structure_of(text, dated=event_at is not None)
            if found != "narrative":
                conn.execute("UPDATE memories SET structure = ? WHERE rowid = ?", (found, rowid))
        last = rows[-1][0]


def m011_token_states(conn: Connection) -> None:
    """Compact token states (``mem.store.token_states``) for MaxSim and Fisher-Rao, one row per memory
    that has them; ``vectors.var`` goes: it was never written (the variance of a memory's token
    states comes from these rows). Safe to run again over a store that has both already."""
    run_script(conn,
        """
        CREATE TABLE IF NOT EXISTS token_states (
            rowid INTEGER PRIMARY KEY REFERENCES memories(rowid) ON DELETE CASCADE,
            form TEXT NOT NULL,
            states BLOB NOT NULL
        );
        """
    )
    if getattr(conn, "backend", "sqlite") != "sqlite":
        conn.execute("ALTER TABLE vectors DROP COLUMN IF EXISTS var")
    elif conn.execute("SELECT 1 FROM pragma_table_info('vectors') WHERE name = 'var'").fetchone():
        conn.execute("ALTER TABLE vectors DROP COLUMN var")


def m012_label_entities(conn: Connection) -> None:
    """Drop the people intake made of the labels a note opens with ("Correction: ...", "Note: ..."):
    before they were speaker stop-words (``mem.enrich.lexicon.LABEL_WORDS``), every memory opening with
    one mentioned that one "person", which tied all of them together as corrections' candidates and in
    the entity channel. The words are this migration's own copy, so it stays what it was when written."""
    labels = sorted(set("""note todo update fyi important decision correction tip warning example e.g i.e
        context summary q a question answer user assistant status result error""".split()))
    marks = ",".join("?" * len(labels))
    doomed = f"SELECT id FROM entities WHERE type = 'person' AND key IN ({marks})"
    conn.execute(f"DELETE FROM memory_entities WHERE entity_id IN ({doomed})", labels)
    conn.execute(f"DELETE FROM entities WHERE id IN ({doomed})", labels)


MIGRATIONS: list[Callable[[Connection], None]] = [m001_init, m002_graph, m003_lifecycle, m004_newest_assertions,
                                                  m005_fts_epoch, m006_id_handles, m007_scopes, m008_structure,
                                                  m009_pending_links, m010_structure_backfill, m011_token_states,
                                                  m012_label_entities]
LATEST = len(MIGRATIONS)
