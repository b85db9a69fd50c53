"""What-if orderings for current truth: could search alone put a correction above what it corrects?

Usage::

    python bench/current_whatif.py [--sets a,b,...,j] [--embedder minilm] [--policies recency,cover,pairs]

Issue 14 asks that the newer memory rank first where intake did not supersede the older. This bench
asks whether a rule over the *page* could do it without reading the texts' values: each set's project
database grows through the real intake (``coding_memory.Project``), every query runs through the real
search, and the final page (top 10, with the hits' pairwise cosines) is kept. Then each policy moves
the newer hit of chosen pairs (older ranked above, created earlier, same page, no episode) just above
the older (``contradiction.newer_first``'s move), and the page is scored as ``coding_memory`` scores
it (R@1, and ``above``: superseded queries whose stale key outranks every gold key).

Policies, each swept over its threshold:

* ``recency``: every pair of close neighbours (cosine >= t), the newer first; ``recency-asked``: the
  same unless the question names a word of the older that the newer lacks.
* ``cover``: the older names at least n of the question's words and the newer names all of them.
* ``learned``: the same model fitted instead on real page pairs of the other sets (leave one set out),
  labelled by the datasets' ``meta.supersedes`` (followed through chains): negatives from real
  neighbourhoods, and only the corrections intake missed, since a superseded memory leaves the page.
* ``pairs``: a logistic model of "the newer replaces the older" over structural pair features (cosine,
  best sentence-pair cosine, intake's own verdict, numbers and names each side lacks, word overlap,
  length ratio, a change marker, a correction reading), trained on the four studied labelled pair sets
  (``bench/contradictions*.jsonl`` except held-out ones); the newer first where its probability >= t.
  Its leave-one-set-out precision and recall on those sets print first.

Only studied sets belong in ``--sets`` (the default a-j); held-out sets are measured by
``coding_memory.py`` alone. Prints one row per policy and threshold: R@1 and above per set, and the
total change in rank-1 queries and in ``above`` against the real order.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import coding_memory as cm  # noqa: E402
from benchlib import ROOT, read_jsonl  # noqa: E402

STUDIED_PAIRS = ["contradictions", "contradictions_study", "contradictions_heldout", "contradictions_heldout2"]
WINDOW = 10
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)*")
_NAME = re.compile(r"(?<=[a-z,;] )[A-Z][\w.+-]*|\b[A-Za-z]*[A-Z][a-z]+[A-Z]\w*")  # a capital inside a sentence, CamelCase
_WORD = re.compile(r"[a-z][a-z0-9_-]{2,}")
_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n")


def pages(which: str, embedder: str) -> list[dict[str, Any]]:
    """Each query of set ``which`` with its final page: hits (keys, created, kind, text) and cosines."""
    from mem.stages import search

    out = []
    for project, q, canon in cm.asked_in_order(which, embedder):
        hits = search.run(project.ctx, search.Query(text=q["query"], k=WINDOW, bump=False))
        rowids = [project.store.rowid_of(h.memory.id) for h in hits]
        found, matrix = project.store.vectors_for(rowids)
        vec = dict(zip(found, matrix))
        out.append({"query": q["query"], "gold": [canon[g] for g in q["gold"]],
                    "stale": [canon[s] for s in q.get("stale", [])],
                    "hits": [{"keys": {canon[k] for k in project.keys_of.get(h.memory.id, ())},
                              "created": h.memory.created_at, "kind": h.memory.kind, "text": h.memory.text}
                             for h in hits],
                    "cos": [[float(vec[a] @ vec[b]) if a in vec and b in vec else -1.0 for b in rowids]
                            for a in rowids]})
    return out


def candidate_pairs(page: dict[str, Any]) -> list[tuple[int, int]]:
    """``(newer index, older index)`` of hits that may trade places: older above, created earlier, no episode."""
    hits = page["hits"]
    return [(j, i) for i in range(len(hits)) for j in range(i + 1, len(hits))
            if "episode" not in (hits[i]["kind"], hits[j]["kind"]) and hits[j]["created"] > hits[i]["created"]]


def reordered(hits: list[dict[str, Any]], moves: list[tuple[int, int]]) -> list[dict[str, Any]]:
    order = list(range(len(hits)))
    for newer, older in moves:
        if order.index(newer) > order.index(older):
            order.remove(newer)
            order.insert(order.index(older), newer)
    return [hits[i] for i in order]


class PairModel:
    """Logistic regression over :meth:`features`, fitted on labelled pairs (standardised, L2)."""

    NAMES = ("cosine", "best sentence cosine", "intake verdict", "new number", "old number", "numbers both",
             "new name", "old name", "word overlap", "log length ratio", "change marker", "correction reading")

    def __init__(self, embedder: str) -> None:
        from mem.embed import get_embedder

        self.embedder = get_embedder(embedder)
        self.vectors: dict[str, Any] = {}

    def _embed(self, texts: list[str]) -> Any:
        import numpy as np

        todo = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if todo:
            self.vectors.update(zip(todo, self.embedder.embed(todo)))
        return np.array([self.vectors[t] for t in texts])

    def features(self, rows: list[dict[str, Any]]) -> Any:
        import numpy as np

        from mem.enrich.aligned import replaced
        from mem.enrich.assertions import supersedes
        from mem.enrich.corrections import corrects, read

        sentences = {t: [s for s in _SENTENCE.split(t) if s.strip()] or [t] for r in rows for t in (r["old"], r["new"])}
        self._embed([t for r in rows for t in (r["old"], r["new"])] + [s for ss in sentences.values() for s in ss])
        out = []
        for r in rows:
            old, new, kind = r["old"], r["new"], r.get("new_kind", "fact")
            reading = read(new, kind)
            verdict = bool(supersedes(new, old, kind) or (reading and corrects(reading, old)) or replaced(new, old))
            numbers = set(_NUMBER.findall(old)), set(_NUMBER.findall(new))
            names = set(_NAME.findall(old)), set(_NAME.findall(new))
            words = set(_WORD.findall(old.lower())), set(_WORD.findall(new.lower()))
            out.append([float(self._embed([old])[0] @ self._embed([new])[0]),
                        float((self._embed(sentences[old]) @ self._embed(sentences[new]).T).max()),
                        float(verdict), float(bool(numbers[1] - numbers[0])), float(bool(numbers[0] - numbers[1])),
                        float(bool(numbers[0] and numbers[1])), float(bool(names[1] - names[0])),
                        float(bool(names[0] - names[1])), len(words[0] & words[1]) / max(1, len(words[0] | words[1])),
                        math.log(max(1, len(new)) / max(1, len(old))), float(bool(reading and reading.marked)),
                        float(reading is not None)])
        return np.array(out, dtype=float)

    def fit(self, x: Any, y: Any, l2: float = 1.0, steps: int = 3000, rate: float = 0.1) -> "PairModel":
        import numpy as np

        self.mean, self.scale = x.mean(0), x.std(0) + 1e-9
        z = (x - self.mean) / self.scale
        self.w, self.b = np.zeros(z.shape[1]), 0.0
        for _ in range(steps):
            p = 1.0 / (1.0 + np.exp(-(z @ self.w + self.b)))
            self.w -= rate * (z.T @ (p - y) / len(y) + l2 * self.w / len(y))
            self.b -= rate * float((p - y).mean())
        return self

    def probability(self, x: Any) -> Any:
        import numpy as np

        return 1.0 / (1.0 + np.exp(-(((x - self.mean) / self.scale) @ self.w + self.b)))


def _precision_recall(predicted: Any, truth: Any) -> tuple[float, float]:
    tp = int((predicted & (truth == 1)).sum())
    fp = int((predicted & (truth == 0)).sum())
    return (tp / (tp + fp) if tp + fp else 1.0), tp / max(1, int((truth == 1).sum()))


def trained_pair_model(embedder: str) -> PairModel:
    """The pair model fitted on every studied pair set, after printing its leave-one-set-out figures."""
    import numpy as np

    model = PairModel(embedder)
    data = {}
    for name in STUDIED_PAIRS:
        rows = read_jsonl(ROOT / "bench" / f"{name}.jsonl")
        data[name] = (model.features(rows), np.array([int(r["conflict"]) for r in rows]))
    for held in STUDIED_PAIRS:
        x = np.vstack([data[n][0] for n in STUDIED_PAIRS if n != held])
        y = np.concatenate([data[n][1] for n in STUDIED_PAIRS if n != held])
        fold = PairModel(embedder).fit(x, y)
        train = fold.probability(x)
        # the lowest threshold with precision >= .90 on the training sets
        cut = min((t for t in np.linspace(0.3, 0.99, 70) if _precision_recall(train >= t, y)[0] >= 0.9), default=0.99)
        xh, yh = data[held]
        p0, r0 = _precision_recall(xh[:, 2] == 1, yh)
        p1, r1 = _precision_recall(fold.probability(xh) >= cut, yh)
        print(f"pairs held out {held:24} intake's verdict P {p0:.3f} R {r0:.3f} | pair model (>= {cut:.2f}) P {p1:.3f} R {r1:.3f}")
    model.fit(np.vstack([d[0] for d in data.values()]), np.concatenate([d[1] for d in data.values()]))
    print("pair model weights (standardised): " + ", ".join(f"{n} {w:+.2f}" for n, w in zip(PairModel.NAMES, model.w)))
    return model


def superseded_keys(which: str) -> dict[str, set[str]]:
    """key -> every key it supersedes, through chains (``meta.supersedes``, restatements folded)."""
    memories = read_jsonl(cm.SETS[which][0])
    canon = cm.canonical_map(memories)
    direct: dict[str, set[str]] = {}
    for m in memories:
        olds = m.get("meta", {}).get("supersedes") or []
        direct.setdefault(canon[m["key"]], set()).update(canon[k] for k in ([olds] if isinstance(olds, str) else olds))
    out: dict[str, set[str]] = {}
    for key in direct:
        todo, seen = list(direct[key]), set()
        while todo:
            if (k := todo.pop()) not in seen:
                seen.add(k)
                todo += direct.get(k, ())
        out[key] = seen
    return out


def learned_rows(logged: dict[str, list[dict[str, Any]]], embedder: str,
                 cuts: tuple[float, ...] = (0.3, 0.5, 0.7, 0.9)) -> list[tuple[str, dict[str, tuple[float, int]]]]:
    """``(policy name, set -> (R@1, above))`` for the pair model fitted on the other sets' page pairs."""
    import numpy as np

    model = PairModel(embedder)
    found: dict[str, tuple[Any, Any, list[tuple[int, int, int]]]] = {}
    for which, pages_of_set in logged.items():
        older_of = superseded_keys(which)
        rows, labels, where = [], [], []
        for index, page in enumerate(pages_of_set):
            hits = page["hits"]
            for j, i in candidate_pairs(page):
                rows.append({"old": hits[i]["text"], "new": hits[j]["text"], "new_kind": hits[j]["kind"]})
                labels.append(int(any(hits[i]["keys"] & older_of.get(k, set()) for k in hits[j]["keys"])))
                where.append((index, j, i))
        found[which] = (model.features(rows) if rows else np.zeros((0, len(PairModel.NAMES))), np.array(labels), where)
    print("learned: positive page pairs " + ", ".join(f"{w} {int(f[1].sum())}/{len(f[1])}" for w, f in found.items()))
    out: dict[float, dict[str, tuple[float, int]]] = {cut: {} for cut in cuts}
    for held in logged:
        x = np.vstack([found[w][0] for w in logged if w != held])
        y = np.concatenate([found[w][1] for w in logged if w != held])
        fold = PairModel(embedder).fit(x, y)
        xh, _, where = found[held]
        probability = fold.probability(xh) if len(xh) else []
        for cut in cuts:
            moves: dict[int, list[tuple[int, int]]] = {}
            for (index, j, i), p in zip(where, probability):
                if p >= cut:
                    moves.setdefault(index, []).append((j, i))
            at = {id(page): index for index, page in enumerate(logged[held])}
            out[cut][held] = score(logged[held], lambda page: moves.get(at[id(page)], []))
    return [(f"learned >= {cut}", out[cut]) for cut in cuts]


def policies(wanted: list[str], model: PairModel | None) -> list[tuple[str, Any]]:
    from mem.enrich.corrections import words_named

    def recency(t: float, asked: bool) -> Any:
        def moves(page: dict[str, Any]) -> list[tuple[int, int]]:
            hits = page["hits"]
            return [(j, i) for j, i in candidate_pairs(page) if page["cos"][i][j] >= t and not (
                asked and words_named(page["query"], hits[i]["text"]) - words_named(page["query"], hits[j]["text"]))]
        return moves

    def cover(n: int) -> Any:
        def moves(page: dict[str, Any]) -> list[tuple[int, int]]:
            hits, q = page["hits"], page["query"]
            return [(j, i) for j, i in candidate_pairs(page)
                    if len(words_named(q, hits[i]["text"])) >= n and words_named(q, hits[i]["text"]) <= words_named(q, hits[j]["text"])]
        return moves

    def pairs(t: float) -> Any:
        def moves(page: dict[str, Any]) -> list[tuple[int, int]]:
            hits, found = page["hits"], candidate_pairs(page)
            if not found or model is None:
                return []
            rows = [{"old": hits[i]["text"], "new": hits[j]["text"], "new_kind": hits[j]["kind"]} for j, i in found]
            return [m for m, p in zip(found, model.probability(model.features(rows))) if p >= t]
        return moves

    out: list[tuple[str, Any]] = []
    if "recency" in wanted:
        out += [(f"recency >= {t}", recency(t, False)) for t in (0.5, 0.55, 0.6, 0.7, 0.8)]
        out += [(f"recency-asked >= {t}", recency(t, True)) for t in (0.5, 0.55, 0.6, 0.7, 0.8)]
    if "cover" in wanted:
        out += [(f"cover {n}", cover(n)) for n in (1, 2, 3)]
    if "pairs" in wanted:
        out += [(f"pairs >= {t}", pairs(t)) for t in (0.5, 0.7, 0.9)]
    return out


def score(pages_of_set: list[dict[str, Any]], moves: Any) -> tuple[float, int]:
    tally = cm.Tally()
    for page in pages_of_set:
        hits = reordered(page["hits"], moves(page)) if moves else page["hits"]
        tally.add([h["keys"] for h in hits], page["gold"], page["stale"])
    row = tally.row()
    return row["R@1"], int(row.get("above", 0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="a,b,c,d,e,f,g,h,i,j")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--policies", default="recency,cover,pairs,learned")
    args = parser.parse_args(argv)
    sets = args.sets.split(",")
    wanted = args.policies.split(",")
    model = trained_pair_model(args.embedder) if "pairs" in wanted else None
    logged = {s: pages(s, args.embedder) for s in sets}
    base = {s: score(logged[s], None) for s in sets}
    print(f"{'policy':22} " + " ".join(f"{s:>9}" for s in sets) + "   rank-1 change  above change")
    print(f"{'real order':22} " + " ".join(f"{base[s][0]:.3f}/{base[s][1]:<3}" for s in sets))
    rows = [(name, {s: score(logged[s], moves) for s in sets}) for name, moves in policies(wanted, model)]
    if "learned" in wanted:
        rows += learned_rows(logged, args.embedder)
    for name, res in rows:
        gained = sum(round((res[s][0] - base[s][0]) * len(logged[s])) for s in sets)
        print(f"{name:22} " + " ".join(f"{res[s][0]:.3f}/{res[s][1]:<3}" for s in sets)
              + f"   {gained:+14d}  {sum(res[s][1] - base[s][1] for s in sets):+12d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
