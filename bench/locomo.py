"""LoCoMo retrieval benchmark: does the right dialog turn come back?

    python bench/locomo.py                       # dev split, every configuration, default embedder
    python bench/locomo.py --data FILE --configs full,bm25 --embedder hash
    python bench/locomo.py --configs full,full+ppr --cache-dir /tmp/locomo   # dev and folds side by side

Cross-validation: the 5 dev conversations make 5 rotating folds, each holding back 2 and training on
3. A configuration "replaces full" in a fold when it beats full on the fold's 3 training
conversations; what that gains or loses is read on the 2 held back. ``cv`` averages it over the
folds: a change stays on by default only where it is positive (and the coding bench agrees).
``--pick a,b,c`` chooses among a sweep of configurations per fold the same way.

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
from benchlib import (ablation_configs, cross_validate, fresh_database, latency, patched, pick_by_folds,  # noqa: E402
                      postgres_admin, rotating_folds, select_configs, vary_configs)

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
    from mem.enrich.timestamps import format_datetime, parse_datetime

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

    def merge(self, other: "Tally") -> None:
        self.n += other.n
        for k in KS:
            self.recall[k] += other.recall[k]
            self.session_recall[k] += other.session_recall[k]
        self.hit10 += other.hit10
        self.mrr += other.mrr

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


def evaluate(conversations: list[Conversation], configs: dict[str, dict[str, Any]], embedder: str,
             verbose: bool = True, include_superseded: bool = False, cache_dir: Path | None = None,
             postgres: str | None = None) -> dict[str, Any]:
    from mem.stages import search

    # config -> conversation -> category ("all" too): the folds regroup the conversations
    per_conv: dict[str, dict[str, dict[str, Tally]]] = {c: defaultdict(lambda: defaultdict(Tally)) for c in configs}
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
                for name, config in configs.items():
                    tallies = per_conv[name][conv.sample_id]
                    with patched(config) as fields:
                        for q in conv.questions:
                            t0 = time.perf_counter()
                            hits = search.run(ctx, search.Query(text=q.text, k=20, bump=False,
                                                                include_superseded=include_superseded, **fields))
                            latencies[name].append((time.perf_counter() - t0) * 1000)
                            ranked = [dias.get(h.memory.id, set()) for h in hits]
                            tallies["all"].add(ranked, q.evidence)
                            tallies[CATEGORIES[q.category]].add(ranked, q.evidence)
            finally:
                ctx.store.close()
            if verbose:
                print(f"  {conv.sample_id}: {len(conv.turns)} turns, {len(conv.questions)} questions", file=sys.stderr)
    totals: dict[str, dict[str, Tally]] = {}
    for name, convs in per_conv.items():
        totals[name] = defaultdict(Tally)
        for cats in convs.values():
            for cat, tally in cats.items():
                totals[name][cat].merge(tally)
    return {
        "results": {name: {cat: t.row() for cat, t in cats.items()} for name, cats in totals.items()},
        "latency_ms": {name: latency(v) for name, v in latencies.items() if v},
        "questions": totals[next(iter(configs))]["all"].n,
        "ingest_seconds": ingest_seconds,
        # (summed recall@k, questions) per config and conversation, for the folds
        "sums": {k: {name: {cid: (cats["all"].recall[k], cats["all"].n) for cid, cats in convs.items()}
                     for name, convs in per_conv.items()} for k in (5, 10)},
    }


def print_folds(report: dict[str, Any], reference: str, pick: list[str] | None) -> None:
    """Dev and held-back folds side by side: per config, dev R@10, each fold's held-back R@10 and its
    gain over ``reference``, and the cross-validated gain of choosing the config on the training folds."""
    sums10, sums5 = report["sums"][10], report["sums"][5]
    if reference not in sums10 or len(sums10[reference]) < 3:
        return
    cv10, cv5 = cross_validate(sums10, reference), cross_validate(sums5, reference)
    folds = rotating_folds(list(sums10[reference]))
    print(f"\nfolds: train on 3 conversations, report on the other 2, rotating; gains over {reference!r}")
    print("  " + "; ".join(f"f{i + 1} holds {'+'.join(back)}" for i, (_, back) in enumerate(folds)))
    print(f"{'config':18} {'dev R@10':>8} | " + " ".join(f"{'f' + str(i + 1):>6}" for i in range(len(folds)))
          + " | " + " ".join(f"{'Δf' + str(i + 1):>6}" for i in range(len(folds)))
          + f" | {'chosen':>6} {'gained':>6} {'cv ΔR@10':>8} {'cv ΔR@5':>8}")
    for name, r in cv10.items():
        print(f"{name:18} {r['dev']:>8.3f} | " + " ".join(f"{v:>6.3f}" for v in r["held"]) + " | "
              + " ".join(f"{g:>+6.3f}" for g in r["held_gains"])
              + f" | {r['chosen']:>4}/{len(folds)} {r['gained']:>4}/{len(folds)} {r['cv_gain']:>+8.4f} {cv5[name]['cv_gain']:>+8.4f}")
    if pick:
        chosen = pick_by_folds(sums10, pick)
        print(f"pick among {','.join(pick)}: per fold {chosen['picks']}, held-back R@10 {chosen['held']}, "
              f"mean {chosen['mean']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description="LoCoMo retrieval recall for mem")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--configs", default=None,
                        help="comma-separated subset of: bm25,semantic,hybrid,full,full-<part>,full+<part>,full-rrf,seed")
    parser.add_argument("--pick", default=None, help="comma-separated configs to choose among per fold (a sweep)")
    parser.add_argument("--vary", action="append", default=[], metavar="MODULE.NAME=v1|v2",
                        help="also run --vary-on with a constant of mem.MODULE set to each value (repeatable)")
    parser.add_argument("--vary-on", default="full", help="the configuration --vary changes (default full)")
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
    configs = select_configs(ablation_configs(), args.configs)
    configs.update(vary_configs(args.vary, ablation_configs(), args.vary_on))
    pick = [w for w in (args.pick or "").split(",") if w]
    if any(p not in configs for p in pick):
        raise SystemExit(f"--pick names configs outside --configs: {pick}")
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
    print_folds(report, "full", pick)


if __name__ == "__main__":
    main()
