"""Coding-assistant memory benchmark: does the right project memory come back, and never the stale one?

    python bench/coding_memory.py                              # every configuration, minilm
    python bench/coding_memory.py --embedder hash --configs full,bm25 --json
    python bench/coding_memory.py --misses                     # also list what the full config got wrong
    python bench/coding_memory.py --set both --configs full    # both datasets, one table each

Thirty datasets, different projects and teams (``--set a|b|...|x|y|z|zb|zc|zd|ze|both|all|judge|held``, default ``a``; ``both`` is a
and b; ``--data``/``--queries`` name any other pair):

* ``a``: Brightbill, a B2B invoicing SaaS (Python/FastAPI, Celery, Next.js): ``bench/coding_memory.jsonl``;
* ``b``: Harborline, fleet telematics (Go, MQTT, Kafka, TimescaleDB, Flutter):
  ``bench/coding_memory_b.jsonl``, written before any tuning against it, with corrections that name
  the old value ("raised from 60 to 120 seconds"), handovers ("X handed Y over to Z"), renames,
  drops, "no longer", "is gone", "took over" and a correction of a correction;
* ``c``: Tidewell, clinic appointment booking (Kotlin/Spring, RabbitMQ, RDS, React Native):
  ``bench/coding_memory_c.jsonl``, a small held-out set of corrections (17 of 52 memories), written
  and committed before the intake work it measures and never tuned on: settings that change with no
  change word ("the pool ended up at 40 connections", "Back-office sessions: 15 minutes idle
  timeout"), how-to corrections that do not name the old way, handovers, "instead of", renames;
* ``d``: Marrowgate, podcast hosting and transcription (Elixir/Phoenix, Oban, Whisper workers, CloudFront):
  ``bench/coding_memory_d.jsonl``, 79 memories over ten weeks, 58 queries, 22 superseded facts, held out
  like ``c`` (written and committed before the correction work it measures): every correction class
  (raised/shortened/changed from A to B, handovers and a hand-back, settings with units, switched /
  migrated / replaced / renamed / dropped / gone, corrections with no change word) and near misses that
  must not supersede (another queue's concurrency, another load balancer's timeout, staging's pool,
  another command of the same program, "Leila also reviews ...");
* ``e``: Saltmarsh, routing and map tiles for bike couriers (Rust/axum, PostGIS, Redis, Vue, GCP):
  ``bench/coding_memory_e.jsonl``, 130 memories over ten weeks, 95 queries, 28 about superseded facts,
  held out like ``c`` and ``d``: handovers, settings with units changed with and without change words,
  renames, removals, a correction of a correction, near misses on neighbouring slots, and three notes
  of an old wiki imported after the memories that correct them (``meta.imported_at``: the record
  reaches the store then, ``created_at`` stays the day it was written).
* ``f``: Fernhill, a mobile bank's platform team (GraphQL gateway on Node, Go auth, Kafka on MSK, iOS and
  Android CI): ``bench/coding_memory_f.jsonl``, 126 memories over 17 sessions (eight weeks), 105 queries,
  35 about superseded facts, written and committed before any work against it: corrections as engineers
  write them in chat ("got bumped to 12", "we ended up going with Vault after all", "X owns it from now
  on", a move told in prose, numbers in words, 20% vs 0.05, corrections of corrections, a correction
  inside a message with other news) and look-alikes that must not supersede (a plan, "we considered X
  but stayed", another service's timeout or limit, a new unrelated setting);
* ``g``: Cobalt, a grocery company's internal data and ML platform (Feast feature store, Spark, Flink,
  Airflow then Dagster, Snowflake, KServe): ``bench/coding_memory_g.jsonl``, 120 memories over 16
  sessions, 107 queries, 31 about superseded facts, written with ``f`` and kept as the held-out check
  (only its totals were read while tuning on ``f``; its misses were studied later);
* ``h``: Skyreach, the online services of a co-op shooter (Go services, Open Match, Agones fleets on GKE,
  CockroachDB, Redis, Pub/Sub, ClickHouse): ``bench/coding_memory_h.jsonl``, 143 memories over 14 sessions
  (eleven weeks), 128 queries, 45 about superseded facts (34 labeled corrections), written and committed
  before any tuning against it; held out, then studied. Corrections in chat and ticket style: with and without the old
  value, with and without units, numbers in words, 10% vs 0.25, handovers told by the new owner, the old
  owner or a third party (and two hand-backs), vendor switches, renames of a service, an env var, a branch
  and a channel, removals ("dropped", "is gone", "no longer", "was removed"), a setting changed inside other
  news, corrections of corrections (5 -> 7 -> 6 nodes, 20 -> 35 -> 25 servers), three old wiki notes
  imported after their corrections, corrections weeks later and ones sharing few words with the original;
  and 18 look-alikes that must not supersede (a plan, "considered X but stayed on Y", staging or dev
  values, another service's deadline or another worker's concurrency, "X also reviews", a secondary
  on-call, "in 2026 we ran X").
* ``i``: Furrowline, the firmware and cloud team of a maker of soil-moisture probes for farms (Zephyr on
  STM32WL, LoRaWAN with ChirpStack and FUOTA, NestJS on ECS, InfluxDB then Timescale, a React Native app):
  ``bench/coding_memory_i.jsonl``, 155 memories over 16 sessions (twenty weeks), 154 queries, 59 about
  superseded facts (41 labeled corrections), written by a helper told not to read the correction rules and
  committed before any run against it; held out until the twelfth session, which studied its misses
  (a study set since, like ``g`` and ``h``). Corrections with and without a change word or the old
  value, value before or after the setting's name, other units (3.3 V vs 3200 mV, 20% written 0.2, "half an
  hour", "two weeks"), handovers and hand-backs (a pager passed on three times), moved hosts, streams, carriers
  and dashboards, a correction inside other news, chains (15 -> 20 -> 30 minutes, weekly -> fortnightly ->
  weekly, nightly -> six-hourly -> nightly), three old wiki notes imported after their corrections and one
  corrected after import; and 27 look-alikes that must not supersede (plans, "looked at X, staying on
  Y", staging, a pilot in another region, another product's threshold, a one-off swap, "also reviews", a
  value restated in other units).
* ``j``: Pressroom, the digital engineering team of a regional newspaper, the Northgate Chronicle (Wagtail CMS
  on Django, Postgres on RDS, Celery, Fastly, a TypeScript paywall meter on Zuora, newsletters, push, EKS):
  ``bench/coding_memory_j.jsonl``, 158 memories over 16 sessions (Jan-Jun 2030), 194 queries, 81 about
  superseded facts (56 labeled corrections), written blind (without reading the rule code, set i or the
  contradiction pairs) and committed before any run against it; held out, then studied (like ``g``-``i``). Corrections restating a new value
  with no change word or naming only it ("Morning Briefing send time: 6 am"), "actually", denials ("we no
  longer use", "is gone", "was decommissioned"), paraphrased verbs and other units (7 days -> "three weeks" ->
  30 days, 300 seconds -> "two minutes" -> 10 minutes, "twenty-two thousand dollars", "half past nine in the
  evening"), aliases (Postgres 14 -> PostgreSQL 16, Elasticsearch -> OpenSearch), handovers and a hand-back,
  renames (repo, branch, channel, env var, domain, bucket), corrections inside long notes, chains, and five
  old wiki notes imported late (three corrected before they arrive, one after); and 28 look-alikes that must
  not supersede (plans, proposals, an open question, "evaluated X, kept Y", staging, another region, other
  workers, pages and newsletters, temporary freezes and stand-ins, "also", history, restatements in other
  units).
* ``k``: Berthwise, the terminal systems team of a container port, Kestrel Bay Container Terminal (Kotlin on
  Spring Boot, PostgreSQL, Kafka, OpenShift on-prem, a truck appointment portal, gate OCR, EDIFACT EDI with
  shipping lines, a customs Single Window, crane telemetry over OPC UA): ``bench/coding_memory_k.jsonl``,
  161 memories over 16 sessions (Jan-Jul 2031), 176 queries, 74 about superseded facts (53 labeled
  corrections), written blind (without reading the rule code or the other sets' queries) and committed before
  any run against it; held out. Corrections naming only the new value ("The Tariff export runs at 02:30
  now"), "from A, up from B", removals ("we dropped Redpanda/Twilio", "the nightly file is gone", "no longer
  goes through"), other units and words (every 2 seconds -> 1 Hz, 72 hours -> "four days", 45 minutes -> "half
  an hour", 90 seconds -> "once a minute"), handovers told by the old owner and by a third party, renames
  (channel, gitops repo, topic, API path, default branch), vendor and engine switches, a correction inside a
  long summary (PostgreSQL 13 -> 16, Confluent 7.4 -> 7.6), chains (01:00 -> 02:30 -> back to 01:00 -> file
  gone; 12 -> 14 -> 10 trucks; 0.85 -> 0.80 -> 0.90; 20 -> 45 -> 10 s), and eight old wiki notes imported
  late (five corrected before they arrive, two after, one never); and 29 look-alikes that must not supersede
  (plans, proposals, open questions, "evaluated X, kept Y", staging, the test and demo environments, a sibling
  depot, rail gate and barge terminal, pharma reefers, the Android side of the app, a secondary rotation,
  temporary exceptions, stand-ins and freezes, "also reviews", a load-test figure, history) plus two
  restatements in other units (300 a minute as "about five a second", 72 hours as "three days").
* ``l``: Shelfmark, the digital services team of a public library consortium, Ashdown Valley Libraries (a Rails
  catalogue site with Hotwire and Sidekiq, a Java/Quarkus circulation API, Solr, a Go SIP2 gateway for the
  self-check kiosks, a nightly MARC import from a union catalogue, BorrowBox e-lending, AKS on Azure):
  ``bench/coding_memory_l.jsonl``, 186 memories over 16 sessions (Jan-Aug 2032), 212 queries, 94 about
  superseded facts (64 labeled corrections), written blind (without reading the rule code, the other sets'
  queries or the contradiction pairs) and committed before any run against it; held out. Corrections naming
  only the new value, in other units or words (8 GB as -Xmx12g, 60000 ms as "every 15 seconds", 7 days as "a
  month", 10 a second as 1,200 a minute, 0.1 as 25%, 80% as 0.85, 3 years as 24 months), the setting named
  differently in old and new, corrections inside meeting, sprint and tech-debt notes, handovers told by a third
  party or the old owner and a hand-back, removals, renames, chains of three and four (01:30 -> 23:00 -> 02:00
  -> a file picked up at 01:15; 3 -> 5 -> 4 -> 3 bigger nodes), and nine old wiki notes imported late (six
  corrected before they arrive, two after, one never); and 32 look-alikes that must not supersede (plans, a
  proposal, open questions, "trialled X, stayed on Y", staging, dev, sandbox and load-test values, a sibling
  branch, deployment, repo, queue and client, temporary exceptions, stand-ins and freezes, "also reviews")
  plus three restatements in other units ("three weeks", "four weeks", 10 a second as "about 600 a minute").
* ``zd``: Gustline, the software team of a wind-farm operator (about 40 onshore farms plus two offshore ones; a
  Python OPC UA / IEC 61400-25 SCADA ingester, Kafka under Strimzi, TimescaleDB, a Go alarm router, a LightGBM
  forecaster on AWS, a React operator dashboard, a TSO curtailment API, an SAP PM integration):
  ``bench/coding_memory_zd.jsonl``, 173 memories over 16 sessions (Jan-May 2037, six old wiki notes imported
  late), 180 queries, 48 about superseded facts (40 labelled corrections), written blind by a helper in the
  twenty-first session and committed before any run against it; held out. Its focus is what sits beside a
  rule: 29 per-environment, per-component and conditional rows (offshore vs onshore, staging, dev, the test
  rig, weekends, storm shutdown, curtailment, warranty, audit), most not opening with their case, and five
  temporary exceptions that end, each asked for by name (53 queries), with the general facts asked on their
  own and again after each exception has ended (gold the rule, stale the exception); 25 look-alikes that must
  not supersede and three restatements in other units. Its misses were read in the same session (after the first
  run), so it is studied from then on.
* ``ze``: Snowline, the software team of a five-resort ski group (a Django/Stripe ticket shop, a Rust gate-bridge to
  RFID lift readers over TCP, a season-pass service, a FastAPI snow and lift-status API feeding Kotlin and Swift
  apps, grooming-fleet telemetry MQTT -> Kafka -> ClickHouse, a staff-scheduling sync; GKE, Cloud SQL, Memorystore,
  Pub/Sub, GitLab CI): ``bench/coding_memory_ze.jsonl``, 203 memories over 16 sessions (Sep 2038 - Feb 2039, six
  late wiki imports), 213 queries, 77 about superseded facts (65 labelled corrections), written blind by a helper
  in the twenty-first session, while zd was being studied, and committed before any run against it; held out.
  Corrections with and without a change word or the old value, other units and words, the same setting named
  otherwise, handovers told by the old owner, the new owner and a third party and a hand-back, vendor switches,
  renames, removals, a correction inside long notes, chains of three and four; 20 sibling rows, six temporary
  exceptions asked before and after their end, 27 look-alikes (eight restatements in other units).

Dataset ``a`` is ten weeks of one project's memories as a coding
assistant would store them: facts, decisions, conventions, bugs, people, commands, preferences,
episodes, restatements and small talk. A record whose ``meta.supersedes`` names another key corrects
it; one whose ``meta.restates`` names a key says the same thing again (a hit on either counts as the
original). Queries (``bench/coding_memory_queries.jsonl``) carry ``gold`` keys, a ``type`` (direct,
paraphrase, later, superseded), ``asked_at`` and, for superseded ones, ``stale`` keys that must stay
out of the top results.

The database grows as the project did: queries run in ``asked_at`` order, and before each one every
memory created up to then goes through the real intake path (``mem.stages.add``: near-duplicate
gate, enrichment, supersession, linking) with the clock at its session's time; the query then runs
through ``mem.stages.search`` with the clock at ``asked_at``. Returned ids map back to keys (a
duplicate outcome maps to the memory it duplicated, which then answers for both keys).

Reported per configuration: recall@1/5/10 (gold keys found in the top k over gold keys), MRR (first
gold hit in the top 10), per query type; for superseded queries stale@5 (a stale key in the top 5:
should be ~0), new@5 (every gold key in the top 5) and above (a stale key ranked above every gold key
in the top 10: the superseded-above-gold count, goal 0); and what intake did with the labeled
corrections (old memory marked superseded by its correction or not).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (ROOT, ablation_configs, fresh_database, latency, patched, postgres_admin, read_jsonl,  # noqa: E402  (also puts the repo on sys.path)
                      select_configs, vary_configs)

DEFAULT_DATA = ROOT / "bench" / "coding_memory.jsonl"
DEFAULT_QUERIES = ROOT / "bench" / "coding_memory_queries.jsonl"
SETS = {"a": (DEFAULT_DATA, DEFAULT_QUERIES),
        "b": (ROOT / "bench" / "coding_memory_b.jsonl", ROOT / "bench" / "coding_memory_b_queries.jsonl"),
        "c": (ROOT / "bench" / "coding_memory_c.jsonl", ROOT / "bench" / "coding_memory_c_queries.jsonl"),
        "d": (ROOT / "bench" / "coding_memory_d.jsonl", ROOT / "bench" / "coding_memory_d_queries.jsonl"),
        "e": (ROOT / "bench" / "coding_memory_e.jsonl", ROOT / "bench" / "coding_memory_e_queries.jsonl"),
        "f": (ROOT / "bench" / "coding_memory_f.jsonl", ROOT / "bench" / "coding_memory_f_queries.jsonl"),
        "g": (ROOT / "bench" / "coding_memory_g.jsonl", ROOT / "bench" / "coding_memory_g_queries.jsonl"),
        "h": (ROOT / "bench" / "coding_memory_h.jsonl", ROOT / "bench" / "coding_memory_h_queries.jsonl"),
        "i": (ROOT / "bench" / "coding_memory_i.jsonl", ROOT / "bench" / "coding_memory_i_queries.jsonl"),
        "j": (ROOT / "bench" / "coding_memory_j.jsonl", ROOT / "bench" / "coding_memory_j_queries.jsonl"),
        "k": (ROOT / "bench" / "coding_memory_k.jsonl", ROOT / "bench" / "coding_memory_k_queries.jsonl"),
        "l": (ROOT / "bench" / "coding_memory_l.jsonl", ROOT / "bench" / "coding_memory_l_queries.jsonl"),
        **{w: (ROOT / "bench" / f"coding_memory_{w}.jsonl", ROOT / "bench" / f"coding_memory_{w}_queries.jsonl")
           for w in [*"mnopqrstuvwxyz", "zb", "zc", "zd", "ze"]}}
# m-r, s-x: written blind for fitting the learned judge (``mem.score.replaces``, ``bench/slot_judge.py``);
# y, z, zb, zc, zd, ze: written blind as held-out data (zd studied since its first run), like k and l (``benchlib.HELD_OUT``)
GROUPS = {"both": ("a", "b"), "all": ("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"),
          "judge": tuple("mnopqrstuvwx"), "held": ("k", "l", "y", "z", "zb", "zc", "zd", "ze")}
TYPES = ("direct", "paraphrase", "later", "superseded")
KS = (1, 5, 10)
SCOPE = "proj"


def check_dataset(memories: list[dict[str, Any]], queries: list[dict[str, Any]]) -> list[str]:
    """Problems with the labels (empty when the dataset is consistent).

    >>> check_dataset([{"key": "m1", "text": "x", "created_at": "2026-01-01T00:00:00Z"}],
    ...               [{"query": "q", "gold": ["m2"], "type": "direct", "asked_at": "2026-02-01T00:00:00Z"}])
    ["query 1: gold key 'm2' is not in the dataset"]
    """
    from mem.enrich.timestamps import parse_datetime
    from mem.vocab import KINDS

    problems: list[str] = []
    created: dict[str, Any] = {}
    stored: dict[str, Any] = {}  # when the record reaches the store (an import arrives after it was written)
    for i, m in enumerate(memories, start=1):
        key = m.get("key")
        if not key or key in created:
            problems.append(f"memory line {i}: missing or repeated key {key!r}")
            continue
        if m.get("kind", "fact") not in KINDS:  # intake would reject the whole session's batch
            problems.append(f"{key}: unknown kind {m['kind']!r}")
        created[key] = parse_datetime(m["created_at"])
        stored[key] = parse_datetime(arrival(m))
        if stored[key] < created[key]:
            problems.append(f"{key}: meta.imported_at is before created_at")
    for m in memories:
        for name in ("supersedes", "restates"):
            ref = m.get("meta", {}).get(name)
            for r in [ref] if isinstance(ref, str) else (ref or []):
                if r not in created:
                    problems.append(f"{m['key']}: meta.{name} {r!r} is not in the dataset")
                elif created[r] > created[m["key"]]:
                    problems.append(f"{m['key']}: meta.{name} {r!r} is newer than the record itself")
    for i, q in enumerate(queries, start=1):
        if q.get("type") not in TYPES:
            problems.append(f"query {i}: unknown type {q.get('type')!r}")
        if not q.get("gold"):
            problems.append(f"query {i}: no gold keys")
        asked = parse_datetime(q["asked_at"])
        for name in ("gold", "stale"):
            for key in q.get(name, []):
                if key not in created:
                    problems.append(f"query {i}: {name} key {key!r} is not in the dataset")
                elif stored[key] > asked:
                    how = "created" if stored[key] == created[key] else "imported"
                    problems.append(f"query {i}: {name} key {key!r} was {how} after the question was asked")
        if q.get("type") == "superseded" and not q.get("stale"):
            problems.append(f"query {i}: a superseded query needs stale keys")
    return problems


def arrival(memory: dict[str, Any]) -> str:
    """When a record reaches the store: ``meta.imported_at`` for older notes imported later, else ``created_at``."""
    return memory.get("meta", {}).get("imported_at") or memory["created_at"]


def canonical_map(memories: list[dict[str, Any]]) -> dict[str, str]:
    """key -> the key it restates (followed to the end), else itself."""
    restates = {m["key"]: m.get("meta", {}).get("restates") for m in memories}
    out = {}
    for key in restates:
        seen, k = set(), key
        while restates.get(k) and k not in seen:
            seen.add(k)
            k = restates[k]
        out[key] = k
    return out


@dataclasses.dataclass
class Tally:
    n: int = 0
    recall: dict[int, float] = dataclasses.field(default_factory=lambda: defaultdict(float))
    mrr: float = 0.0
    stale5: float = 0.0
    stale1: float = 0.0
    new5: float = 0.0
    above: int = 0  # queries where a stale key outranks every gold key in the top 10
    n_stale: int = 0

    def add(self, ranked: list[set[str]], gold: list[str], stale: list[str]) -> None:
        self.n += 1
        gold_set = set(gold)
        for k in KS:
            found = set().union(*ranked[:k]) if ranked[:k] else set()
            self.recall[k] += len(found & gold_set) / len(gold_set)
        for rank, keys in enumerate(ranked[:10], start=1):
            if keys & gold_set:
                self.mrr += 1.0 / rank
                break
        if stale:
            self.n_stale += 1
            top5 = set().union(*ranked[:5]) if ranked else set()
            top1 = ranked[0] if ranked else set()
            self.stale5 += 1.0 if top5 & set(stale) else 0.0
            self.stale1 += 1.0 if top1 & set(stale) else 0.0
            self.new5 += 1.0 if gold_set <= top5 else 0.0
            self.above += 1 if _stale_first(ranked[:10], gold_set, set(stale)) else 0

    def row(self) -> dict[str, float]:
        n = max(self.n, 1)
        out: dict[str, float] = {"n": self.n}
        out.update({f"R@{k}": self.recall[k] / n for k in KS})
        out["MRR"] = self.mrr / n
        if self.n_stale:
            s = self.n_stale
            out.update({"stale@1": self.stale1 / s, "stale@5": self.stale5 / s, "new@5": self.new5 / s,
                        "above": self.above})
        return out


def _stale_first(ranked: list[set[str]], gold: set[str], stale: set[str]) -> bool:
    """Whether a stale key comes before any gold key (a gold key sharing the stale one's rank wins)."""
    for keys in ranked:
        if keys & gold:
            return False
        if keys & stale:
            return True
    return False


class Project:
    """One database that grows session by session through the real intake path."""

    def __init__(self, db: Path | str, embedder: str, memories: list[dict[str, Any]]) -> None:
        from mem.config import resolve_settings
        from mem.stages.context import Context
        from mem.store import Store

        self.pending = sorted(enumerate(memories, start=1), key=lambda p: (arrival(p[1]), p[0]))
        first = arrival(self.pending[0][1]) if self.pending else "2026-01-01T00:00:00Z"
        settings = resolve_settings(db=db, embedder=embedder, scope=SCOPE, now=first, env={})
        self.store = Store.open(db)
        self.ctx = Context(store=self.store, settings=settings)
        self.keys_of: dict[str, set[str]] = defaultdict(set)  # memory id -> dataset keys it answers for
        self.id_of: dict[str, str] = {}  # dataset key -> memory id
        self.statuses: Counter[str] = Counter()
        self.events: list[dict[str, Any]] = []  # duplicates, rejections, intake-reported supersessions

    def at(self, when: str) -> None:
        """Set the clock every stage reads."""
        from mem.config import parse_now

        self.ctx.settings = dataclasses.replace(self.ctx.settings, now_override=parse_now(when))

    def ingest_until(self, when: str | None) -> None:
        """Add every pending memory created at or before ``when`` (None: all), one session at a time."""
        from mem.enrich.timestamps import parse_datetime
        from mem.stages import add

        limit = parse_datetime(when) if when else None
        due = []
        while self.pending and (limit is None or parse_datetime(arrival(self.pending[0][1])) <= limit):
            due.append(self.pending.pop(0))
        by_session: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        for line, record in due:
            by_session.setdefault(record.get("meta", {}).get("session", "?"), []).append((line, record))
        for batch in by_session.values():
            self.at(max(arrival(r) for _, r in batch))
            key_at = {line: r["key"] for line, r in batch}
            for outcome in add.run(self.ctx, batch, add.AddOptions()):
                key = key_at[outcome.line]
                self.statuses[outcome.status] += 1
                if outcome.id is None:
                    self.events.append({"key": key, "status": outcome.status, "reason": outcome.reason})
                    continue
                self.keys_of[outcome.id].add(key)
                self.id_of[key] = outcome.id
                if outcome.status != "added" or (outcome.detail or {}).get("supersedes"):
                    event = {"key": key, "status": outcome.status, "reason": outcome.reason,
                             "same_as": sorted(self.keys_of[outcome.id] - {key}) or None}
                    if (outcome.detail or {}).get("supersedes"):
                        event["supersedes"] = sorted(k for i in outcome.detail["supersedes"]
                                                     for k in self.keys_of.get(i, ()))
                    self.events.append(event)

    def supersession_report(self, memories: list[dict[str, Any]]) -> dict[str, Any]:
        """What intake did with each labeled correction, and supersessions nobody labeled."""
        labeled = {}
        for m in memories:
            old = m.get("meta", {}).get("supersedes")
            for o in [old] if isinstance(old, str) else (old or []):
                labeled[o] = m["key"]
        pairs = []
        for old, new in labeled.items():
            old_id, new_id = self.id_of.get(old), self.id_of.get(new)
            if old_id is None or new_id is None:
                verdict = "not stored"
            elif old_id == new_id:
                verdict = "merged as duplicate"
            else:
                by = self.store.get(old_id).superseded_by
                verdict = ("detected" if by == new_id else
                           "missed" if by is None else
                           f"superseded by {','.join(sorted(self.keys_of.get(by, {by})))}")
            pairs.append({"old": old, "new": new, "verdict": verdict})
        unlabeled = []
        for memory_id, keys in self.keys_of.items():
            by = self.store.get(memory_id).superseded_by
            if by and not any(labeled.get(k) in self.keys_of.get(by, ()) for k in keys):
                unlabeled.append({"old": sorted(keys), "by": sorted(self.keys_of.get(by, {by}))})
        counts = Counter(p["verdict"] if p["verdict"] in ("detected", "missed") else "other" for p in pairs)
        return {"labeled": len(pairs), "detected": counts["detected"], "missed": counts["missed"],
                "other": counts["other"], "pairs": pairs, "unlabeled": sorted(unlabeled, key=str)}

    def close(self) -> None:
        self.store.close()



def asked_in_order(which: str, embedder: str) -> Iterator[tuple[Project, dict[str, Any], dict[str, str]]]:
    """Each query of set ``which`` in the order asked, with its project grown through the real intake
    until then and the clock set to it (a temporary database), and the set's canonical key map."""
    memories, queries = (read_jsonl(p) for p in SETS[which])
    canon = canonical_map(memories)
    with tempfile.TemporaryDirectory() as tmp:
        project = Project(Path(tmp) / "asked.db", embedder, memories)
        try:
            for q in sorted(queries, key=lambda q: q["asked_at"]):
                project.ingest_until(q["asked_at"])
                project.at(q["asked_at"])
                yield project, q, canon
        finally:
            project.close()

def evaluate(memories: list[dict[str, Any]], queries: list[dict[str, Any]],
             configs: dict[str, dict[str, Any]], embedder: str, misses_for: str | None = "full",
             postgres: str | None = None) -> dict[str, Any]:
    """Grow the project database, ask every query under every configuration, return the figures.

    >>> report = evaluate(read_jsonl(DEFAULT_DATA), read_jsonl(DEFAULT_QUERIES), {"bm25": {"channels": ["bm25"]}}, "hash")
    >>> 0.0 <= report["results"]["bm25"]["all"]["R@5"] <= 1.0
    True
    """
    from mem.stages import search

    canon = canonical_map(memories)
    tallies: dict[str, dict[str, Tally]] = {c: defaultdict(Tally) for c in configs}
    latencies: dict[str, list[float]] = {c: [] for c in configs}
    misses: list[dict[str, Any]] = []
    order = sorted(range(len(queries)), key=lambda i: (queries[i]["asked_at"], i))
    with tempfile.TemporaryDirectory() as tmp:
        db = fresh_database(postgres, "coding_bench") if postgres else Path(tmp) / "coding.db"
        project = Project(db, embedder, memories)
        try:
            start = time.perf_counter()
            ingest_seconds = 0.0
            for i in order:
                q = queries[i]
                t0 = time.perf_counter()
                project.ingest_until(q["asked_at"])
                ingest_seconds += time.perf_counter() - t0
                project.at(q["asked_at"])
                gold = [canon[g] for g in q["gold"]]
                stale = [canon[s] for s in q.get("stale", [])]
                for name, config in configs.items():
                    with patched(config) as fields:
                        t1 = time.perf_counter()
                        hits = search.run(project.ctx, search.Query(text=q["query"], k=10, bump=False, **fields))
                        latencies[name].append((time.perf_counter() - t1) * 1000)
                    raw = [sorted(project.keys_of.get(h.memory.id, ())) for h in hits]
                    ranked = [{canon[k] for k in keys} for keys in raw]
                    tallies[name]["all"].add(ranked, gold, stale)
                    tallies[name][q["type"]].add(ranked, gold, stale)
                    top5 = set().union(*ranked[:5]) if ranked else set()
                    first = ranked[0] if ranked else set()
                    if name == misses_for and (not set(gold) <= top5 or top5 & set(stale) or not first & set(gold)):
                        misses.append({"query": q["query"], "type": q["type"], "gold": q["gold"],
                                       "stale": q.get("stale", []),
                                       "top5": raw[:5]})
            project.ingest_until(None)
            supersession = project.supersession_report(memories)
            intake = {"statuses": dict(project.statuses), "events": project.events,
                      "seconds": ingest_seconds + 0.0, "total_seconds": time.perf_counter() - start}
        finally:
            project.close()
    return {
        "dataset": {"memories": len(memories), "queries": len(queries),
                    "types": dict(Counter(q["type"] for q in queries))},
        "results": {name: {t: tally.row() for t, tally in types.items()} for name, types in tallies.items()},
        "latency_ms": {name: latency(v) for name, v in latencies.items() if v},
        "intake": intake,
        "supersession": supersession,
        "misses": misses,
        "misses_config": misses_for,
        "embedder": embedder,
    }


def print_table(report: dict[str, Any], show_misses: bool) -> None:
    d = report["dataset"]
    intake = report["intake"]
    types = ", ".join(f"{t} {d['types'].get(t, 0)}" for t in TYPES)
    print(f"coding memory: {d['memories']} memories, {d['queries']} queries ({types}), "
          f"embedder {report['embedder']}, intake {intake['seconds']:.1f} s")
    print("intake outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(intake["statuses"].items())))
    print(f"{'config':16} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} | "
          + " ".join(f"{t[:10]:>10}" for t in TYPES)
          + f" | {'new@5':>6} {'stale@5':>7} {'stale@1':>7} {'above':>5} | {'p50 ms':>6}")
    for name, types in report["results"].items():
        a = types["all"]
        s = types.get("superseded", {})
        per_type = " ".join(f"{types.get(t, {}).get('R@5', 0):>10.3f}" for t in TYPES)
        print(f"{name:16} {a['R@1']:>6.3f} {a['R@5']:>6.3f} {a['R@10']:>6.3f} {a['MRR']:>6.3f} | {per_type} | "
              f"{s.get('new@5', 0):>6.3f} {s.get('stale@5', 0):>7.3f} {s.get('stale@1', 0):>7.3f} "
              f"{s.get('above', 0):>5} | "
              f"{report['latency_ms'][name]['p50']:>6.1f}")
    print("(per-type columns are R@5; new@5/stale@5/stale@1 over superseded queries; above: superseded "
          "queries whose stale memory outranks the gold one)")
    sup = report["supersession"]
    print(f"intake supersession of labeled corrections: {sup['detected']}/{sup['labeled']} detected, "
          f"{sup['missed']} missed, {sup['other']} other; {len(sup['unlabeled'])} unlabeled supersessions")
    if show_misses:
        for p in sup["pairs"]:
            if p["verdict"] != "detected":
                print(f"  correction {p['new']} -> {p['old']}: {p['verdict']}")
        for u in sup["unlabeled"]:
            print(f"  unlabeled: {','.join(u['old'])} superseded by {','.join(u['by'])}")
        for e in intake["events"]:
            if e["status"] != "added":
                print(f"  intake {e['key']}: {e['status']} {e.get('reason') or ''} {e.get('same_as') or ''}")
            elif e.get("supersedes"):
                print(f"  intake {e['key']}: supersedes {','.join(e['supersedes'])}")
        print(f"misses of the {report['misses_config']!r} config (gold not all in top 5, not first, or a stale key in top 5): {len(report['misses'])}")
        for m in report["misses"]:
            top = " ".join("/".join(k) or "-" for k in m["top5"])
            stale = f" stale {m['stale']}" if m["stale"] else ""
            print(f"  [{m['type'][:5]}] {m['query']!r} gold {m['gold']}{stale} -> {top}")


def main() -> None:
    parser = argparse.ArgumentParser(description="coding-assistant memory retrieval benchmark for mem")
    parser.add_argument("--set", dest="which", choices=[*SETS, *GROUPS], default="a",
                        help="which dataset: a (Brightbill), b (Harborline), c (Tidewell), d (Marrowgate), e (Saltmarsh), "
                             "f (Fernhill), g (Cobalt), h (Skyreach), i (Furrowline), j (Pressroom; g-j were held out, then "
                             "studied), k (Berthwise, held out), both (a and b) or all (ignored with --data)")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--queries", type=Path, default=None)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--configs", default=None,
                        help="comma-separated subset of: bm25,semantic,hybrid,full,full-<part>,full+<part>,full-rrf,seed")
    parser.add_argument("--vary", action="append", default=[], metavar="MODULE.NAME=v1|v2",
                        help="also run --vary-on with a constant of mem.MODULE set to each value (repeatable)")
    parser.add_argument("--vary-on", default="full", help="the configuration --vary changes (default full)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--misses", action="store_true",
                        help="list the misses of the full config (else the first one) and the intake events")
    parser.add_argument("--postgres", default=None, metavar="ADMIN_URL",
                        help="run on PostgreSQL (a fresh database on that server; 'embedded' starts one)")
    args = parser.parse_args()
    admin = postgres_admin(args.postgres) if args.postgres else None
    if args.data or args.queries:
        pairs = {"custom": (args.data or DEFAULT_DATA, args.queries or DEFAULT_QUERIES)}
    else:
        pairs = {w: SETS[w] for w in GROUPS.get(args.which, (args.which,))}
    datasets = {}
    for name, (data, query_path) in pairs.items():
        memories, queries = read_jsonl(data), read_jsonl(query_path)
        problems = check_dataset(memories, queries)
        if problems:
            raise SystemExit(f"dataset {name} problems:\n  " + "\n  ".join(problems))
        datasets[name] = (memories, queries)
    configs = select_configs(ablation_configs(), args.configs)
    configs.update(vary_configs(args.vary, ablation_configs(), args.vary_on))
    misses_for = "full" if "full" in configs else next(iter(configs))
    reports = {name: evaluate(memories, queries, configs, args.embedder, misses_for=misses_for, postgres=admin)
               for name, (memories, queries) in datasets.items()}
    if args.json:  # one set: its report, as before; several: {"a": report, "b": report, ...}
        print(json.dumps(next(iter(reports.values())) if len(reports) == 1 else reports))
        return
    for name, report in reports.items():
        if len(reports) > 1:
            print(f"== set {name}")
        print_table(report, args.misses)


if __name__ == "__main__":
    main()
