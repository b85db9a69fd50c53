"""Could a learned judge find the corrections intake's rules miss, in real neighbourhoods?

Usage::

    python bench/slot_judge.py [--sets a,...,j,m,...,r] [--cache DIR] [--evaluate] [--variants 0.9/0.3] [--write]

Each coding set's project grows through the real intake (``coding_memory.Project``) with the judge
(``mem.score.replaces``) deciding nothing, and every pair it judged is kept with the features intake
computed for it (``replaces.observed``): a new memory and each of its older close neighbours the rules left
live. Label 1 when the dataset says the newer corrects the older (``meta.supersedes``), 0 otherwise (the
negatives are real neighbourhoods: sibling settings, plans, other settings of the topic); an older version
further down a chain, or a restatement, is left out. What the rules did with the pair (an open
``contradicts`` edge, or nothing) is kept beside the features.

A logistic model is fitted leaving one set out, its threshold chosen on the training sets for precision
``TARGET_P``. Prints, per held-back set: corrections, the model's right and wrong ones at that threshold,
the AUC; then the pooled held-back ranking. ``--evaluate`` runs each held-back set's queries with the judge
off and on (each variant), ``--write`` writes ``mem/score/replaces_model.py`` fitted on every set given.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import coding_memory as cm  # noqa: E402
from benchlib import read_jsonl  # noqa: E402

TARGET_P = 0.9
def _named(ref: Any) -> list[str]:
    """``meta.supersedes`` as a list of keys (one key or several)."""
    return [ref] if isinstance(ref, str) else list(ref or [])


def collect(which: str, embedder: str) -> list[dict[str, Any]]:
    """Every pair intake's judge (``mem.score.replaces``) met in set ``which``, with its features (as intake
    computed them, the judge deciding nothing), its label, and what the rules did with it."""
    from mem.score import replaces
    from mem.stages import supersede
    from mem.store.lifecycle import edges_from

    memories, _ = (read_jsonl(p) for p in cm.SETS[which])
    by_key = {m["key"]: m for m in memories}
    older_versions: dict[str, set[str]] = {}
    for m in memories:  # every version a memory's chain replaces, directly or further down
        seen: set[str] = set()
        todo = _named(m.get("meta", {}).get("supersedes"))
        while todo:
            old = todo.pop()
            if old in by_key and old not in seen:
                seen.add(old)
                todo += _named(by_key[old].get("meta", {}).get("supersedes"))
        older_versions[m["key"]] = seen
    saved = replaces.observed, replaces.SUPERSEDE, replaces.CONTRADICTS, supersede.JUDGE
    replaces.observed, replaces.SUPERSEDE, replaces.CONTRADICTS, supersede.JUDGE = [], 2.0, 2.0, True
    out: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            project = cm.Project(Path(tmp) / "judge.db", embedder, memories)
            try:
                project.ingest_until(None)
                store = project.store
                for n_id, o_id, feats, _ in replaces.observed:
                    n_keys, o_keys = project.keys_of.get(n_id, set()), project.keys_of.get(o_id, set())
                    meta = [by_key[k].get("meta", {}) for k in n_keys]
                    labelled = {o for m in meta for o in _named(m.get("supersedes"))}
                    ignored = {o for m in meta for o in _named(m.get("restates"))}.union(
                        *(older_versions[k] for k in n_keys))
                    label = 1 if o_keys & labelled else (-1 if o_keys & ignored else 0)
                    rule = "superseded" if store.get(o_id).superseded_by == n_id else \
                        "contradicts" if o_id in edges_from(store, n_id, "contradicts") else "none"
                    out.append({"set": which, "new": sorted(n_keys), "old": sorted(o_keys), "label": label,
                                "rule": rule, "f": feats})
            finally:
                project.store.close()
    finally:
        replaces.observed, replaces.SUPERSEDE, replaces.CONTRADICTS, supersede.JUDGE = saved
    return out


def fit(x: "Any", y: "Any", l2: float = 1.0) -> tuple[Any, Any, Any]:
    """Logistic regression by Newton steps on standardised features: (weights, mean, scale)."""
    import numpy as np

    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    for _ in range(30):
        p = 1 / (1 + np.exp(-z @ w))
        grad = z.T @ (p - y) + l2 * np.r_[w[:-1], 0]
        hess = (z * (p * (1 - p))[:, None]).T @ z + l2 * np.diag(np.r_[np.ones(len(w) - 1), 0])
        w -= np.linalg.solve(hess, grad)
    return w, mean, scale


def predict(model: tuple[Any, Any, Any], x: "Any") -> "Any":
    import numpy as np

    w, mean, scale = model
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    return 1 / (1 + np.exp(-z @ w))


def threshold_for(p: "Any", y: "Any", target: float) -> float:
    """The lowest probability at which precision over the examples scored at or above it stays >= target."""
    order = sorted(zip(p, y), reverse=True)
    best, tp = 1.01, 0
    for i, (prob, label) in enumerate(order, start=1):
        tp += label
        if tp / i >= target:
            best = prob
    return best


def main(argv: list[str] | None = None) -> int:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="a,b,c,d,e,f,g,h,i,j,m,n,o,p,q,r")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--cache", type=Path, default=None, help="directory keeping each set's pairs (JSON)")
    parser.add_argument("--drop", default="", help="features left out, comma-separated")
    parser.add_argument("--show", type=int, default=0, help="print the top N held-back pairs")
    parser.add_argument("--evaluate", action="store_true",
                        help="run each held-back set's queries with the model fitted on the others, against the judge off")
    parser.add_argument("--variants", default="0.9/0.3",
                        help="--evaluate's variants, comma-separated TARGET/CONTRADICTS: supersede at the probability "
                             "giving precision TARGET on the other sets (above 1: never), contradicts edges from CONTRADICTS")
    parser.add_argument("--write", action="store_true", help="write mem/score/replaces_model.py fitted on every set")
    parser.add_argument("--target", type=float, default=TARGET_P)
    parser.add_argument("--floor", type=float, default=None,
                        help="the judge's neighbour floor (replaces.FLOOR) while collecting and evaluating")
    args = parser.parse_args(argv)
    if args.floor is not None:
        from mem.score import replaces

        replaces.FLOOR = args.floor
    sets = args.sets.split(",")
    held = cm_held_out(sets)
    if held:
        parser.error(f"held-out sets are not studied here: {', '.join(held)}")
    pairs: list[dict[str, Any]] = []
    for which in sets:
        path = args.cache / f"{which}-{args.embedder}.json" if args.cache else None
        if path and path.exists():
            got = json.loads(path.read_text())
        else:
            got = collect(which, args.embedder)
            if path:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(got))
        pairs += got
    drop = set(filter(None, args.drop.split(",")))
    names = [n for n in pairs[0]["f"] if n not in drop]
    usable = [p for p in pairs if p["label"] >= 0]
    x = np.array([[p["f"][n] for n in names] for p in usable])
    y = np.array([p["label"] for p in usable], dtype=float)
    of_set = np.array([p["set"] for p in usable])
    print(f"{len(usable)} pairs, {int(y.sum())} labelled corrections; features: {', '.join(names)}")
    print(f"{'held':>5} {'pos':>4} {'model tp/fp':>11} {'AUC':>6} {'thr':>5}")
    pooled = np.zeros(len(y))
    tp_all = fp_all = 0
    for which in sets:
        test = of_set == which
        model = fit(x[~test], y[~test])
        thr = threshold_for(predict(model, x[~test]), y[~test], args.target)
        pooled[test] = p = predict(model, x[test])
        chosen, yt = p >= thr, y[test]
        tp, fp = int((chosen & (yt == 1)).sum()), int((chosen & (yt == 0)).sum())
        tp_all, fp_all = tp_all + tp, fp_all + fp
        print(f"{which:>5} {int(yt.sum()):>4} {tp:>5}/{fp:<5} {_auc(p, yt):>6.3f} {thr:>5.2f}")
    print(f"{'all':>5} {int(y.sum()):>4} {tp_all:>5}/{fp_all:<5}")
    order = np.argsort(-pooled)
    hits = np.cumsum(y[order])
    print(f"pooled held-back: top n -> corrections (precision, recall of the {int(y.sum())})")
    print("  " + "  ".join(f"{n}: {int(hits[n - 1])} ({hits[n - 1] / n:.2f}, {hits[n - 1] / y.sum():.2f})"
                           for n in (10, 25, 50, 100, 200, 400) if n <= len(hits)))
    if args.show:
        texts = _texts(sets)
        for i in order[:args.show]:
            u = usable[i]
            print(f"{pooled[i]:.2f} {'YES' if y[i] else 'no '} {u['rule']:<11} {u['set']} "
                  f"{','.join(u['new'])}: {texts[u['new'][0]][:90]!r} | {','.join(u['old'])}: {texts[u['old'][0]][:90]!r}")
    if args.evaluate:
        variants = [(float(t), float(c)) for v in args.variants.split(",") for t, c in [v.split("/")]]
        _evaluate(sets, args.embedder, names, x, y, of_set, variants)
    model = fit(x, y)
    if args.write:
        _write(names, model, threshold_for(predict(model, x), y, args.target))
    print("weights (standardised), all sets: " + ", ".join(f"{n} {w:+.2f}" for n, w in zip(names + ["bias"], model[0])))
    return 0


class _Model:
    def __init__(self, names: list[str], model: tuple[Any, Any, Any]) -> None:
        w, mean, scale = model
        self.FEATURES, self.MEAN, self.SCALE = tuple(names), tuple(mean.tolist()), tuple(scale.tolist())
        self.WEIGHTS, self.BIAS = tuple(w[:-1].tolist()), float(w[-1])


def _evaluate(sets: list[str], embedder: str, names: list[str], x: Any, y: Any, of_set: Any,
              variants: list[tuple[float, float]]) -> None:
    """Each held-back set's queries (``coding_memory.evaluate``, config full) with the judge off, then on
    with the model fitted on the other sets, once per variant ``(target, contradicts)``: supersede at the
    probability that gave ``target`` precision on the other sets (a target above 1: never), an open
    ``contradicts`` edge from ``contradicts``."""
    from benchlib import ablation_configs
    from mem.score import replaces
    from mem.stages import supersede

    config = {"full": ablation_configs()["full"]}
    print("held  judge off: R@1 above detected | each variant (target/contradicts): R@1 above detected")
    sums: dict[str, list[int]] = {}
    saved = supersede.JUDGE, replaces.SUPERSEDE, replaces.CONTRADICTS, replaces.MODEL
    try:
        for which in sets:
            train = of_set != which
            model = fit(x[train], y[train])
            probs = predict(model, x[train])
            memories, queries = (read_jsonl(p) for p in cm.SETS[which])
            cells = []
            for name, on, target, contradicts in [("off", False, 2.0, 2.0),
                                                  *((f"{t:g}/{c:g}", True, t, c) for t, c in variants)]:
                thr = threshold_for(probs, y[train], target) if target <= 1 else 2.0
                supersede.JUDGE = on
                replaces.SUPERSEDE, replaces.CONTRADICTS = thr, min(contradicts, thr)
                replaces.MODEL = _Model(names, model)
                report = cm.evaluate(memories, queries, config, embedder, misses_for=None)
                row = report["results"]["full"]["all"]
                got = [round(row["R@1"] * len(queries)), row.get("above", 0), report["supersession"]["detected"], len(queries)]
                sums[name] = [a + b for a, b in zip(sums.get(name, [0, 0, 0, 0]), got)]
                cells.append(f"{got[0] / len(queries):.3f} {got[1]:>3} {got[2]:>3}")
            print(f"{which:>4}  " + " | ".join(cells), flush=True)
    finally:
        supersede.JUDGE, replaces.SUPERSEDE, replaces.CONTRADICTS, replaces.MODEL = saved
    for name, (rank1, above, detected, n) in sums.items():
        print(f"  {name:>9}: rank-1 {rank1} of {n} ({rank1 / n:.3f}), above {above}, detected {detected}")


def _write(names: list[str], model: tuple[Any, Any, Any], supersede: float) -> None:
    from benchlib import ROOT

    m = _Model(names, model)
    lines = ['"""Fitted by ``python bench/slot_judge.py --write`` (the studied coding sets\' real neighbourhoods,',
             'labelled by their ``meta.supersedes``); do not edit by hand: refit."""',
             f"FEATURES = {m.FEATURES!r}"]
    for name in ("MEAN", "SCALE", "WEIGHTS"):
        lines.append(f"{name} = ({', '.join(f'{v:.6g}' for v in getattr(m, name))},)")
    lines.append(f"BIAS = {m.BIAS:.6g}")
    lines.append(f"SUPERSEDE = {supersede:.4g}  # the probability at which the fitted pairs' precision reaches {TARGET_P}")
    (ROOT / "mem" / "score" / "replaces_model.py").write_text("\n".join(lines) + "\n")
    print("wrote mem/score/replaces_model.py", file=sys.stderr)


def _texts(sets: list[str]) -> dict[str, str]:
    return {m["key"]: m["text"] for which in sets for m in read_jsonl(cm.SETS[which][0])}


def _auc(p: "Any", y: "Any") -> float:
    pos, neg = p[y == 1], p[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    return float(((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (len(pos) * len(neg)))


def cm_held_out(sets: list[str]) -> list[str]:
    from benchlib import HELD_OUT

    return [s for s in sets if Path(cm.SETS[s][0]).name in HELD_OUT]


if __name__ == "__main__":
    raise SystemExit(main())
