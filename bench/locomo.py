"""LoCoMo retrieval benchmark: does the right dialog turn come back?

    python bench/locomo.py                       # dev split, every configuration, default embedder
    python bench/locomo.py --data FILE --configs full,bm25 --embedder hash

Each dialog turn becomes one memory through the real intake path (``mem.stages.add``), text
``"<speaker>: <text>"`` plus the image caption when there is one, ``created_at`` = its session's
date, ``meta`` = dia_id and session; one database per conversation. Every question of categories
1-4 with valid evidence is asked through ``mem.stages.search``; recall@k = gold turns in the top k
over gold turns, micro-averaged. Category ids follow the official evaluation code: 1 multi-hop,
2 temporal, 3 open-domain, 4 single-hop. The data is CC BY-NC 4.0 and is never copied into this
repository (see ../shared/bench/locomo/SOURCE.md).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import ablation_configs, fresh_database, latency, postgres_admin  # noqa: E402  (also puts the repo on sys.path)

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo" / "locomo_dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 5, 10, 20)
_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


def normalize_evidence(items: list[str]) -> list[str]:
    """``"D8:6; D9:17"``, ``"D:11:26"``, ``"D30:05"`` -> ``["D8:6", "D9:17", "D11:26", "D30:5"]``."""
    out: list[str] = []
    for item in items:
        for session, turn in _EVIDENCE.findall(item):
            dia = f"D{int(session)}:{int(turn)}"
            if dia not in out:
                out.append(dia)
    return out


@dataclass
class Turn:
    dia_id: str
    session: str
    text: str
    created_at: str


@dataclass
class Question:
    text: str
    category: int
    evidence: list[str]


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    last_date: str = ""


def load(path: Path, limit: int | None = None) -> list[Conversation]:
    from mem.enrich.dates import format_datetime, parse_datetime

    samples = json.loads(path.read_text())
    conversations = []
    for sample in samples[:limit]:
        conv = sample["conversation"]
        turns: list[Turn] = []
        numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
        last = ""
        for n in numbers:
            when = format_datetime(parse_datetime(conv[f"session_{n}_date_time"]))
            last = max(last, when)
            for turn in conv[f"session_{n}"]:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shared an image: {turn['blip_caption']}]"
                turns.append(Turn(turn["dia_id"], f"session_{n}", text, when))
        known = {t.dia_id for t in turns}
        questions = []
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORIES:
                continue
            evidence = [e for e in normalize_evidence(qa.get("evidence", [])) if e in known]
            if evidence:
                questions.append(Question(qa["question"], qa["category"], evidence))
        conversations.append(Conversation(sample["sample_id"], turns, questions, last))
    return conversations


@dataclass
class Tally:
    n: int = 0
    recall: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    session_recall: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    hit10: float = 0.0
    mrr: float = 0.0

    def add(self, ranked: list[set[str]], gold: list[str]) -> None:
        self.n += 1
        gold_set = set(gold)
        gold_sessions = {g.split(":")[0] for g in gold}
        for k in KS:
            found = set().union(*ranked[:k]) if ranked[:k] else set()
            self.recall[k] += len(found & gold_set) / len(gold_set)
            sessions = {d.split(":")[0] for d in found}
            self.session_recall[k] += len(sessions & gold_sessions) / len(gold_sessions)
        top10 = set().union(*ranked[:10]) if ranked else set()
        self.hit10 += 1.0 if top10 & gold_set else 0.0
        for rank, dias in enumerate(ranked[:20], start=1):
            if dias & gold_set:
                self.mrr += 1.0 / rank
                break

    def row(self) -> dict[str, float]:
        n = max(self.n, 1)
        out = {f"R@{k}": self.recall[k] / n for k in KS}
        out.update({"hit@10": self.hit10 / n, "MRR": self.mrr / n})
        out.update({f"S@{k}": self.session_recall[k] / n for k in (5, 10)})
        return out


def ingest(conv: Conversation, db: Path | str, embedder: str) -> tuple[Any, dict[str, set[str]]]:
    """One database per conversation, every turn through the real intake path; memory id -> dia_ids."""
    from mem.config import resolve_settings
    from mem.stages import add
    from mem.stages.context import Context
    from mem.store import Store

    settings = resolve_settings(db=db, embedder=embedder, scope=conv.sample_id, now=conv.last_date, env={})
    store = Store.open(db)
    ctx = Context(store=store, settings=settings)
    records = [(i + 1, {"text": t.text, "created_at": t.created_at, "kind": "episode",
                        "meta": {"dia_id": t.dia_id, "session": t.session}}) for i, t in enumerate(conv.turns)]
    dias: dict[str, set[str]] = defaultdict(set)
    for outcome in add.run(ctx, records, add.AddOptions(keep_near=True)):
        if outcome.id is None:
            raise SystemExit(f"{conv.sample_id} line {outcome.line}: {outcome.status} {outcome.reason}")
        dias[outcome.id].add(conv.turns[outcome.line - 1].dia_id)
    return ctx, dias


def open_or_ingest(conv: Conversation, folder: Path, embedder: str,
                   postgres: str | None = None) -> tuple[Any, dict[str, set[str]]]:
    """Reuse a database built by an earlier run with ``--cache-dir`` (same data, same embedder);
    with ``postgres`` (an admin URL), a fresh database on that server per conversation instead."""
    from mem.config import resolve_settings
    from mem.stages.context import Context
    from mem.store import Store

    if postgres:
        return ingest(conv, fresh_database(postgres, f"locomo_{conv.sample_id}".lower().replace("-", "_")), embedder)
    db = folder / f"{conv.sample_id}.{embedder.replace(':', '_')}.db"
    mapping = db.with_suffix(".dias.json")
    if db.exists() and mapping.exists():
        settings = resolve_settings(db=db, embedder=embedder, scope=conv.sample_id, now=conv.last_date, env={})
        dias = {k: set(v) for k, v in json.loads(mapping.read_text()).items()}
        return Context(store=Store.open(db), settings=settings), dias
    for stale in (db, mapping):
        stale.unlink(missing_ok=True)
    ctx, dias = ingest(conv, db, embedder)
    mapping.write_text(json.dumps({k: sorted(v) for k, v in dias.items()}))
    return ctx, dias


def evaluate(conversations: list[Conversation], configs: dict[str, list[str] | None], embedder: str,
             verbose: bool = True, include_superseded: bool = False, cache_dir: Path | None = None,
             postgres: str | None = None) -> dict[str, Any]:
    from mem.stages import search

    tallies: dict[str, dict[str, Tally]] = {c: defaultdict(Tally) for c in configs}
    latencies: dict[str, list[float]] = {c: [] for c in configs}
    ingest_seconds = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        folder = cache_dir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for conv in conversations:
            start = time.perf_counter()
            ctx, dias = open_or_ingest(conv, folder, embedder, postgres)
            ingest_seconds += time.perf_counter() - start
            try:
                for name, channels in configs.items():
                    for q in conv.questions:
                        t0 = time.perf_counter()
                        hits = search.run(ctx, search.Query(text=q.text, k=20, channels=channels, bump=False,
                                                                  include_superseded=include_superseded))
                        latencies[name].append((time.perf_counter() - t0) * 1000)
                        ranked = [dias.get(h.memory.id, set()) for h in hits]
                        tallies[name]["all"].add(ranked, q.evidence)
                        tallies[name][CATEGORIES[q.category]].add(ranked, q.evidence)
            finally:
                ctx.store.close()
            if verbose:
                print(f"  {conv.sample_id}: {len(conv.turns)} turns, {len(conv.questions)} questions", file=sys.stderr)
    return {
        "results": {name: {cat: t.row() for cat, t in cats.items()} for name, cats in tallies.items()},
        "latency_ms": {name: latency(v) for name, v in latencies.items() if v},
        "questions": tallies[next(iter(configs))]["all"].n,
        "ingest_seconds": ingest_seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="LoCoMo retrieval recall for mem")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--configs", default=None, help="comma-separated subset of: bm25,semantic,hybrid,full,full-<channel>")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--include-superseded", action="store_true", help="search superseded turns too")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="keep the ingested databases here and reuse them (tuning runs; delete after code changes to intake)")
    parser.add_argument("--postgres", default=None, metavar="ADMIN_URL",
                        help="run on PostgreSQL instead (a database per conversation on that server; 'embedded' starts one)")
    args = parser.parse_args()
    if not args.data.exists():
        raise SystemExit(f"no data at {args.data}: pass --data")
    configs = ablation_configs()
    if args.configs:
        wanted = args.configs.split(",")
        unknown = [w for w in wanted if w not in configs]
        if unknown:
            raise SystemExit(f"unknown config(s) {unknown}; known: {list(configs)}")
        configs = {w: configs[w] for w in wanted}
    conversations = load(args.data, args.conversations)
    report = evaluate(conversations, configs, args.embedder, verbose=not args.json,
                      include_superseded=args.include_superseded, cache_dir=args.cache_dir,
                      postgres=postgres_admin(args.postgres) if args.postgres else None)
    if args.json:
        print(json.dumps(report))
        return
    print(f"LoCoMo {args.data.name}: {len(conversations)} conversations, {report['questions']} questions, "
          f"embedder {args.embedder}, {'PostgreSQL' if args.postgres else 'SQLite'}, ingest {report['ingest_seconds']:.1f} s")
    print(f"{'config':18} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'R@20':>6} {'hit@10':>7} {'MRR':>6} {'S@10':>6} | "
          + " ".join(f"{CATEGORIES[c][:11]:>11}" for c in (1, 2, 3, 4)) + f" | {'p50 ms':>7} {'p95 ms':>7}")
    for name, cats in report["results"].items():
        a = cats["all"]
        per_cat = " ".join(f"{cats.get(CATEGORIES[c], {}).get('R@10', 0):>11.3f}" for c in (1, 2, 3, 4))
        lat = report["latency_ms"][name]
        print(f"{name:18} {a['R@1']:>6.3f} {a['R@5']:>6.3f} {a['R@10']:>6.3f} {a['R@20']:>6.3f} {a['hit@10']:>7.3f} "
              f"{a['MRR']:>6.3f} {a['S@10']:>6.3f} | {per_cat} | {lat['p50']:>7.1f} {lat['p95']:>7.1f}")
    print("(per-category columns are R@10)")


if __name__ == "__main__":
    main()
