"""Synthetic coding-project memories for scale benchmarks: varied, seeded, realistic enough to index."""

from __future__ import annotations

import random
from collections.abc import Iterator

SERVICES = ["auth", "billing", "search", "gateway", "scheduler", "ingest", "reports", "notifications", "inventory",
            "checkout", "profile", "analytics", "exporter", "webhooks", "payments", "catalog", "sync", "mailer"]
TOOLS = ["Redis", "Postgres", "Kafka", "RabbitMQ", "SQLite", "nginx", "Docker", "Kubernetes", "Terraform", "pytest",
         "React", "FastAPI", "Celery", "Prometheus", "Grafana", "Sentry", "ClickHouse", "Elasticsearch", "MinIO", "Vault"]
PEOPLE = ["Alice", "Bob", "Carol", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemal", "Lena"]
FILES = ["src/{s}/handlers.py", "src/{s}/models.py", "services/{s}/config.yaml", "tests/test_{s}.py",
         "docs/{s}.md", "deploy/{s}/values.yaml", "src/{s}/client.ts", "migrations/{n:04d}_{s}.sql"]
TEMPLATES = [
    "We decided to use {tool} for the {svc} service because {reason}.",
    "The {svc} service talks to {tool} through {file}.",
    "{person} owns the {svc} service and reviews changes to {file}.",
    "Bug #{n}: {svc} timed out under load; fixed by raising the {tool} pool size to {k}.",
    "Run `make test-{svc}` before pushing changes to {file}.",
    "The {svc} team prefers {tool} over {tool2} for new work.",
    "Incident {n}: {svc} lost writes when {tool} restarted; root cause was {reason}.",
    "{person} said the {svc} migration to {tool} finishes in sprint {k}.",
    "Config: {svc} listens on port {port} and reads secrets from {tool2}.",
    "Never deploy {svc} on Fridays; {person} asked for a freeze after incident {n}.",
    "The {svc} API returns 429 when more than {k} requests per second arrive.",
    "Use {file} as the template for new {svc} handlers.",
]
REASONS = ["latency was too high", "the old driver leaked connections", "it supports streaming",
           "the team already knows it", "costs dropped by a third", "a retry storm overloaded it",
           "the schema drifted", "a cache key collided", "the queue backed up overnight", "TLS certs expired"]


def memory_texts(n: int, seed: int = 7) -> Iterator[str]:
    """``n`` distinct memory texts, the same for the same seed."""
    rng = random.Random(seed)
    seen: set[str] = set()
    i = 0
    while len(seen) < n:
        i += 1
        svc = rng.choice(SERVICES)
        values = {
            "svc": svc, "tool": rng.choice(TOOLS), "tool2": rng.choice(TOOLS), "person": rng.choice(PEOPLE),
            "reason": rng.choice(REASONS), "n": i + 100, "k": rng.randint(2, 64), "port": rng.randint(3000, 9999),
        }
        values["file"] = rng.choice(FILES).format(s=svc, n=i)
        text = rng.choice(TEMPLATES).format(**values)
        if text not in seen:  # exact repeats would be (rightly) refused as duplicates
            seen.add(text)
            yield text


def queries(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    forms = ["which {tool} settings does {svc} use", "who owns {svc}", "why did {svc} time out",
             "how do I test {svc}", "what port does {svc} listen on", "{svc} incident root cause",
             "what did {person} say about {svc}", "rate limit of the {svc} API"]
    return [rng.choice(forms).format(tool=rng.choice(TOOLS), svc=rng.choice(SERVICES), person=rng.choice(PEOPLE))
            for _ in range(n)]
