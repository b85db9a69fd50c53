"""Fit and check the page model (``mem.score.page_order``) on the studied coding sets.

Usage::

    python bench/page_order.py [--sets a,...,j,m,...,x] [--embedder minilm] [--cache FILE] [--fit]

Each set's project grows through the real intake (``coding_memory.Project``) and every query runs
through the real search with the page step off (``-recency``); the first ``page_order.WINDOW`` hits are
kept with their features (``page_order.features``: place, cosine to the question from the stored vectors,
age's place, length, days since the window's oldest and until its newest) and which may pass which (``page_order.passing``). A pairwise logistic regression learns gold over each other hit of the window
(standardised features, L2). Prints, leaving one set out: each held-back set's rank-1 and ``above``
(superseded queries whose stale memory outranks every gold one) with its pages reordered by the weights
fitted on the other sets, against the real order, and those weights; then the totals. ``--fit`` also
prints the weights fitted on every set given, for ``page_order.WEIGHTS``. ``--cache`` keeps the pages
(delete it after a change to intake or search). Only studied sets belong here: held-out sets are
measured by ``coding_memory.py`` alone.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import coding_memory as cm  # noqa: E402
from benchlib import HELD_OUT  # noqa: E402

STUDIED = "a,b,c,d,e,f,g,h,i,j,m,n,o,p,q,r,s,t,u,v,w,x"


def pages(which: str, embedder: str) -> list[dict[str, Any]]:
    """Each query of set ``which`` whose window has hits to order: their features and places, the page's
    keys, and the query's gold and stale keys."""
    from mem.score import page_order
    from mem.stages import search

    out = []
    for project, q, canon in cm.asked_in_order(which, embedder):
        hits = search.run(project.ctx, search.Query(text=q["query"], k=10, bump=False, channels=["-recency"]))
        ids = {project.store.rowid_of(h.memory.id): h.memory.id for h in hits[:page_order.WINDOW]}
        found, matrix = project.store.vectors_for(list(ids))
        vectors = {ids[r]: row for r, row in zip(found, matrix)}
        seen = page_order.window(hits, project.ctx.embedder.embed([q["query"]])[0], vectors, q["query"])
        if seen is None:
            continue  # what search leaves alone
        out.append({"features": seen.features, "places": seen.places, "may_pass": seen.may_pass,
                    "keys": [{canon[k] for k in project.keys_of.get(h.memory.id, ())} for h in hits],
                    "gold": [canon[g] for g in q["gold"]], "stale": [canon[s] for s in q.get("stale", [])]})
    return out


def pairs(pages_of: list[dict[str, Any]]) -> tuple[list[Any], list[int]]:
    """Feature differences gold - other (label 1) and other - gold (label 0) over each window."""
    import numpy as np

    x, y = [], []
    for page in pages_of:
        f = np.array(page["features"])
        gold = [i for i, place in enumerate(page["places"]) if page["keys"][place] & set(page["gold"])]
        for i in gold:
            for j in range(len(f)):
                if j not in gold:
                    x += [f[i] - f[j], f[j] - f[i]]
                    y += [1, 0]
    return x, y


def fit(x: list[Any], y: list[int], l2: float = 1.0, steps: int = 2000, rate: float = 1.0) -> Any:
    """Logistic regression without intercept (pairs are symmetric) on standardised features."""
    import numpy as np

    xs, ys = np.array(x), np.array(y, dtype=float)
    scale = xs.std(axis=0) + 1e-9
    z, w = xs / scale, np.zeros(xs.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(z @ w)))
        w -= rate * (z.T @ (p - ys) + l2 * w) / len(ys)
    return w / scale


def scored(pages_of: list[dict[str, Any]], weights: Any | None) -> tuple[int, int]:
    """Rank-1 queries and ``above`` with each window reordered by ``weights`` (None: the real order)."""
    import numpy as np

    from mem.score import page_order

    tally = cm.Tally()
    for page in pages_of:
        keys = list(page["keys"])
        if weights is not None:  # the movable hits sorted among their own places, as page_order.reorder does
            order = page_order.ordered(list(np.array(page["features"]) @ weights), page["may_pass"])
            places = page["places"]
            for slot, i in enumerate(order):
                keys[places[slot]] = page["keys"][places[i]]
        tally.add(keys, page["gold"], page["stale"])
    row = tally.row()
    return round(row["R@1"] * len(pages_of)), int(row.get("above", 0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=STUDIED)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--cache", help="a pickle of the collected pages (made when missing)")
    parser.add_argument("--fit", action="store_true", help="also print the weights fitted on every set")
    args = parser.parse_args(argv)
    sets = args.sets.split(",")
    held = [w for w in sets if any(Path(p).name in HELD_OUT for p in cm.SETS[w])]
    if held:
        parser.error(f"held-out sets are measured by coding_memory.py alone: {','.join(held)}")
    cache = Path(args.cache) if args.cache else None
    collected = pickle.loads(cache.read_bytes()) if cache and cache.exists() else {}
    for which in sets:
        if which not in collected:
            collected[which] = pages(which, args.embedder)
            if cache:
                cache.write_bytes(pickle.dumps(collected))
    data = {w: pairs(collected[w]) for w in sets}
    totals = [0, 0, 0, 0]
    print("set  rank-1 real -> reordered  above real -> reordered  weights fitted on the other sets")
    for which in sets:
        x = [v for w in sets if w != which for v in data[w][0]]
        y = [v for w in sets if w != which for v in data[w][1]]
        weights = fit(x, y)
        real, moved = scored(collected[which], None), scored(collected[which], weights)
        totals = [t + v for t, v in zip(totals, (*real, *moved))]
        print(f"{which:4} {real[0]:4d} -> {moved[0]:4d}  {real[1]:3d} -> {moved[1]:3d}  "
              + " ".join(f"{v:+.2f}" for v in weights))
    print(f"all  {totals[0]:4d} -> {totals[2]:4d}  {totals[1]:3d} -> {totals[3]:3d}  "
          f"({sum(len(collected[w]) for w in sets)} pages with two or more hits to order)")
    if args.fit:
        weights = fit([v for w in sets for v in data[w][0]], [v for w in sets for v in data[w][1]])
        print("fitted on every set: WEIGHTS = (" + ", ".join(f"{v:.2f}" for v in weights) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
