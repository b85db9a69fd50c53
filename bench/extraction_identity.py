"""Identity check for refactors of the zero-LLM extraction (``mem.enrich.assertions``, ``corrections``, ``entities``).

Usage::

    python bench/extraction_identity.py --save SNAPSHOT [--locomo LOCOMO_JSON]   # before the change
    python bench/extraction_identity.py --check SNAPSHOT                         # after it: exit 1 on a difference

The snapshot holds its inputs as well as the outputs, so ``--check`` reads the very texts ``--save`` read
even when the data or tests changed in between. Inputs: every text of the bench's JSON Lines sets, 3,000
synthetic memories and 500 queries (``synth.py``), every string literal of the tests and bench scripts,
the LoCoMo turns, questions and summaries when given, and bench/extraction_probes.txt (one sentence per
shape of the pattern table) each in 15 variants (negated, past, "now", a reason, a contrast, a label,
a question, ...). Pairs: the labeled contradiction pairs, consecutive memories of each set, 20,000
random pairs, probe pairs, and texts whose assertions share a slot, each as a fact and as a correction.
Outputs: every assertion with its slot key, ``supersedes`` on each pair, ``conflicts`` on 100,000
random assertion pairs, the correction reading of each text and ``corrects`` on each pair, and the
entities of each text with the ``canonical`` key of the text and of each of its words (query words
meet entity keys there). ``--check`` of a snapshot saved before an output existed skips that output.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import HELD_OUT, ROOT  # noqa: E402  (also puts the repo on sys.path)

from mem.enrich import assertions as A  # noqa: E402
from mem.enrich import corrections as C  # noqa: E402
from mem.enrich.entities import extract_entities  # noqa: E402
from mem.enrich.entity_keys import canonical  # noqa: E402

_VARIANTS = ("{t}", "{b} now.", "Previously, {low}.", "Actually, {low}.", "{b} because it is faster.", "{b}?",
             "Correction: {low}.", "{b}, but the worker uses Celery.", "{b} as of March 2024.", "{neg_is}.",
             "{neg_we}.", "{b} in staging.", "The team said {low}.", "{upper}.", "{b} - not Jenkins.")


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return [s for item in items for s in _strings(item)]


def corpus(locomo: Path | None) -> tuple[list[str], list[tuple[str, str, str]]]:
    """The texts and ``(new, old, kind)`` pairs described in the module docstring, deterministic."""
    texts: list[str] = []
    pairs: list[tuple[str, str, str]] = []
    for path in sorted(p for p in (ROOT / "bench").glob("*.jsonl") if p.name not in HELD_OUT):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        previous = None
        for row in rows:
            texts.extend(row[k] for k in ("text", "query", "old", "new") if isinstance(row.get(k), str))
            if "old" in row and "new" in row:
                pairs.append((row["new"], row["old"], row.get("new_kind", "fact")))
            if "text" in row:
                if previous is not None:
                    pairs.append((row["text"], previous, row.get("kind", "fact")))
                previous = row["text"]
    import synth
    texts.extend(synth.memory_texts(3000))
    texts.extend(synth.queries(500))
    for path in sorted([*(ROOT / "tests").glob("*.py"), *(ROOT / "bench").glob("*.py")]):
        texts.extend(node.value for node in ast.walk(ast.parse(path.read_text()))
                     if isinstance(node, ast.Constant) and isinstance(node.value, str) and 3 <= len(node.value) < 2000)
    if locomo:
        for conversation in json.loads(locomo.read_text()):
            texts.extend(_strings([conversation.get(k) for k in ("conversation", "event_summary", "observation",
                                                                  "session_summary")]))
            texts.extend(str(qa.get(k, "")) for qa in conversation.get("qa", []) for k in ("question", "answer"))
    probes = [line.strip() for line in (ROOT / "bench" / "extraction_probes.txt").read_text().splitlines()
              if line.strip()]
    for probe in probes:
        b = probe.rstrip(".")
        low = b[0].lower() + b[1:]
        texts.extend(v.format(t=probe, b=b, low=low, upper=b.upper(), neg_is=low.replace(" is ", " is no longer ", 1),
                              neg_we=low.replace("We ", "we no longer ", 1)) for v in _VARIANTS)
    texts = list(dict.fromkeys(t for t in texts if t))
    rng = random.Random(5)
    short = [t for t in texts if len(t) < 400]
    pairs += [(rng.choice(short), rng.choice(short), rng.choice(("fact", "correction"))) for _ in range(20000)]
    pairs += [(a, b, rng.choice(("fact", "correction"))) for a in probes for b in probes if a != b and rng.random() < .25]
    by_slot: dict[str, list[str]] = {}
    for t in texts:
        for a in A.extract_assertions(t):
            by_slot.setdefault(A.slot_key(a)[2], []).append(t)
    for key in sorted(by_slot):
        group = list(dict.fromkeys(by_slot[key]))[:12]
        pairs += [(x, y, kind) for x in group for y in group if x != y for kind in ("fact", "correction")]
    return texts, pairs


def _plain(value: object) -> object:
    """JSON-ready and order-stable: dataclasses as dicts, sets sorted."""
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=repr)
    if isinstance(value, dict):
        return sorted(([_plain(k), _plain(v)] for k, v in value.items()), key=repr)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def outputs(texts: list[str], pairs: list[list[str]]) -> dict[str, list]:
    claims = [a for t in texts for a in A.extract_assertions(t)]
    rng = random.Random(9)
    readings = {t: C.read(t) for t in {p[0] for p in pairs} | set(texts)}
    return {
        "assertions": [[[a.subject, a.attribute, a.value, a.polarity, a.surface, list(A.slot_key(a))]
                        for a in A.extract_assertions(t)] for t in texts],
        "supersedes": [[[list(_plain(x)), list(_plain(y))] for x, y in A.supersedes(n, o, k)] for n, o, k in pairs],
        "conflicts": [A.conflicts(rng.choice(claims), rng.choice(claims)) for _ in range(100000)] if claims else [],
        "readings": [_plain(readings[t]) for t in texts],
        "corrects": [C.corrects(readings[n], o) if readings[n] else None for n, o, _ in pairs],
        "entities": [[[e.key, e.surface, e.type] for e in extract_entities(t)] for t in texts],
        "keys": [[canonical(w) for w in (t, *t.split())] for t in texts],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--save", type=Path, help="write inputs and outputs here")
    mode.add_argument("--check", type=Path, help="compare with a snapshot written by --save")
    ap.add_argument("--locomo", type=Path, help="LoCoMo JSON whose turns join the inputs (--save only)")
    args = ap.parse_args(argv)
    if args.save:
        texts, pairs = corpus(args.locomo)
        snapshot = {"texts": texts, "pairs": [list(p) for p in pairs], **outputs(texts, [list(p) for p in pairs])}
        args.save.write_text(json.dumps(snapshot))  # ASCII: test literals hold lone surrogates
        print(f"saved {len(texts)} texts, {len(pairs)} pairs, {sum(map(len, snapshot['assertions']))} assertions")
        return 0
    snapshot = json.loads(args.check.read_text())
    now = json.loads(json.dumps(outputs(snapshot["texts"], snapshot["pairs"])))
    differ = 0
    for name, values in now.items():
        if name not in snapshot:
            print(f"{name}: not in the snapshot, not checked")
            continue
        inputs = snapshot["texts"] if name in ("assertions", "readings", "entities", "keys") else snapshot["pairs"]
        changed = [i for i, (a, b) in enumerate(zip(snapshot[name], values)) if a != b]
        differ += len(changed) + abs(len(snapshot[name]) - len(values))
        for i in changed[:5]:  # conflicts draw random claims: they follow any change of the assertions
            where = f"claim pair {i}" if name == "conflicts" else repr(inputs[i])
            print(f"{name} differs on {where}:\n  was {snapshot[name][i]}\n  now {values[i]}")
        print(f"{name}: {len(values)} checked, {len(changed)} differ")
    print("identical" if not differ else f"{differ} outputs differ")
    return 0 if not differ else 1


if __name__ == "__main__":
    raise SystemExit(main())
