"""Benchmark the intake-gate secret scanner against a labeled corpus.

Usage::

    python bench/secrets_bench.py [--corpus PATH] [--repeat N]

Each corpus line is ``{"text": ..., "secret": bool, "kind": ...}``. A line is
predicted "secret" when :func:`mem.secrets.scan` returns any finding, so
precision/recall are per line (what the intake gate decides: reject or keep).
For secret lines the bench also reports whether the expected kind was among
the findings, as a diagnostic (it does not affect precision/recall).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import ROOT, read_jsonl  # noqa: E402  (also puts the repo on sys.path)

from mem.secrets import scan  # noqa: E402


def time_scan(texts: list[str], repeat: int) -> float:
    """Mean wall time of one ``scan`` call in microseconds (best of ``repeat`` passes)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for t in texts:
            scan(t)
        best = min(best, time.perf_counter() - t0)
    return best / len(texts) * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT / "bench" / "secrets_corpus.jsonl")
    ap.add_argument("--repeat", type=int, default=20, help="timing passes over the corpus")
    args = ap.parse_args(argv)

    rows = read_jsonl(args.corpus)
    tp = fp = fn = tn = 0
    per_kind: dict[tuple[bool, str], list[int]] = defaultdict(lambda: [0, 0, 0])  # n, correct, kind_match
    wrong: list[str] = []
    for row in rows:
        findings = scan(row["text"])
        predicted = bool(findings)
        label = bool(row["secret"])
        stats = per_kind[(label, row["kind"])]
        stats[0] += 1
        if predicted == label:
            stats[1] += 1
        if label and any(f.kind == row["kind"] for f in findings):
            stats[2] += 1
        if label and predicted:
            tp += 1
        elif label:
            fn += 1
            wrong.append(f"  MISSED  [{row['kind']}] {row['text']!r}")
        elif predicted:
            fp += 1
            got = ", ".join(f"{f.kind}={row['text'][f.start:f.end]!r}" for f in findings)
            wrong.append(f"  FALSE+  [{row['kind']}] {row['text']!r}\n           -> {got}")
        else:
            tn += 1

    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    texts = [r["text"] for r in rows]
    mean_us = time_scan(texts, args.repeat)
    mean_chars = sum(map(len, texts)) / len(texts)
    # The hot-path budget is stated for ~200-char memories: time the corpus
    # re-cut into 200-char windows too.
    joined = " ".join(texts)
    windows = [joined[i : i + 200] for i in range(0, len(joined) - 199, 200)]
    window_us = time_scan(windows, args.repeat)

    print(f"corpus: {args.corpus} ({len(rows)} lines: {tp + fn} secret, {fp + tn} look-alike)")
    print("\nper kind (lines, correct; for secrets also 'kind' = expected kind reported):")
    for (label, kind), (n, ok, km) in sorted(per_kind.items(), key=lambda kv: (not kv[0][0], kv[0][1])):
        tag = "secret " if label else "benign "
        extra = f"  kind {km}/{n}" if label else ""
        print(f"  {tag} {kind:<20} {ok:>3}/{n:<3}{extra}")
    print(f"\nmisclassified ({len(wrong)}):")
    print("\n".join(wrong) if wrong else "  none")
    print(f"\nTP={tp} FP={fp} FN={fn} TN={tn}")
    print(f"precision={precision:.4f} recall={recall:.4f}")
    print(f"scan time: mean {mean_us:.1f} us/text (mean text length {mean_chars:.0f} chars)")
    print(f"scan time: mean {window_us:.1f} us per 200-char window ({len(windows)} windows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
