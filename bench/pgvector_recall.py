"""pgvector HNSW against exact search on real text: recall@10 of the HNSW index.

    python bench/pgvector_recall.py --postgres embedded      # or an admin URL

LoCoMo dev turns (2,760) and questions (categories 1-4) embedded by MiniLM; exact top 10 by
cosine in numpy; HNSW (m 16, ef_construction 64, cosine) at a few ef_search values.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import fresh_database, postgres_admin  # noqa: E402  (also puts the repo on sys.path)

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo" / "locomo_dev.json"


def main() -> None:
    import numpy as np
    import psycopg

    from mem.embed import get_embedder

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postgres", default="embedded", metavar="ADMIN_URL")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    turns = [t["text"] for d in data for key, session in d["conversation"].items()
             if key.startswith("session_") and isinstance(session, list) for t in session]
    questions = [q["question"] for d in data for q in d["qa"] if q.get("category") in (1, 2, 3, 4)]
    embedder = get_embedder("minilm")
    vectors, queries = embedder.embed(turns), embedder.embed(questions)
    exact = np.argsort(-(queries @ vectors.T), axis=1, kind="stable")[:, :10]
    print(f"{len(turns)} turns, {len(questions)} questions, MiniLM")
    url = fresh_database(postgres_admin(args.postgres), "pgvector_recall")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE TABLE v (id int PRIMARY KEY, e vector(384))")
        with conn.cursor().copy("COPY v (id, e) FROM STDIN") as copy:
            for i, row in enumerate(vectors):
                copy.write_row((i, "[" + ",".join(f"{x:.7g}" for x in row) + "]"))
        start = time.perf_counter()
        conn.execute("CREATE INDEX ON v USING hnsw (e vector_cosine_ops)")
        print(f"HNSW build {time.perf_counter() - start:.1f} s")
        for ef in (40, 100):
            conn.execute(f"SET hnsw.ef_search = {ef}")
            found, times = 0, []
            for i, q in enumerate(queries):
                literal = "[" + ",".join(f"{x:.7g}" for x in q) + "]"
                start = time.perf_counter()
                got = [r[0] for r in conn.execute("SELECT id FROM v ORDER BY e <=> %s::vector LIMIT 10", (literal,))]
                times.append((time.perf_counter() - start) * 1000)
                found += len(set(got) & set(exact[i].tolist()))
            print(f"ef_search {ef}: recall@10 {found / (10 * len(queries)):.4f}, p50 {statistics.median(times):.2f} ms")


if __name__ == "__main__":
    main()
