"""Behaviour of the zero-LLM assertion extractor and the intake contradiction test."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mem.enrich.assertions import (
    ATTRIBUTES,
    SINGLE_VALUED,
    Assertion,
    conflicts,
    extract_assertions,
    slot_key,
    supersedes,
)

DATA = Path(__file__).resolve().parents[1] / "bench" / "contradictions.jsonl"


def triples(text: str) -> set[tuple[str, str, str, bool]]:
    return {(a.subject, a.attribute, a.value, a.polarity) for a in extract_assertions(text)}


def conflict(new: str, old: str, kind: str = "fact") -> bool:
    return bool(supersedes(new, old, kind))


# --------------------------------------------------------------------------------------------
# Extraction, one pattern at a time
# --------------------------------------------------------------------------------------------

PATTERN_CASES = [
    # X uses Y / we use Y for X / X runs on Y / X is built with Y / we chose Y for X
    ("The billing service uses MongoDB.", ("billing service", "uses", "mongodb", True)),
    ("We use Redis for caching.", ("caching", "uses", "redis", True)),
    ("We use Postgres for the database.", ("database", "uses", "postgres", True)),
    ("CI runs on Jenkins.", ("ci", "uses", "jenkins", True)),
    ("The frontend is built with Vite.", ("frontend", "uses", "vite", True)),
    ("We chose Celery for background jobs.", ("background jobs", "uses", "celery", True)),
    ("We went with SQLAlchemy for the ORM.", ("orm", "uses", "sqlalchemy", True)),
    ("Sentry is used for error tracking.", ("error tracking", "uses", "sentry", True)),
    ("Use pnpm, not npm.", ("project", "uses", "npm", False)),
    # switches: the new value asserted, the old one denied
    ("We switched from MySQL to Postgres for the database.",
     ("database", "uses", "postgres", True)),
    ("We switched from MySQL to Postgres for the database.", ("database", "uses", "mysql", False)),
    ("The frontend moved from Create React App to Vite.", ("frontend", "uses", "vite", True)),
    ("The frontend moved from Create React App to Vite.",
     ("frontend", "uses", "create react app", False)),
    ("We migrated CI from Jenkins to GitHub Actions.", ("ci", "uses", "github actions", True)),
    ("We migrated CI from Jenkins to GitHub Actions.", ("ci", "uses", "jenkins", False)),
    ("We replaced flake8 with ruff for linting.", ("linting", "uses", "flake8", False)),
    # copula
    ("The default branch is main.", ("default branch", "is", "main", True)),
    ("The default branch is now main.", ("default branch", "is", "main", True)),
    ("Redis is our cache layer.", ("cache layer", "uses", "redis", True)),
    ("The database was MySQL.", ("database", "uses", "mysql", True)),
    ("The repo is a monorepo.", ("project", "is_a", "monorepo", True)),
    ("Redis is fast.", ("redis", "property", "fast", True)),
    ("The v1 API is deprecated.", ("v1 api", "status", "deprecated", True)),
    # assignments and settings
    ("MAX_RETRIES = 42", ("max_retries", "value", "42", True)),
    ("max_retries: 42", ("max_retries", "value", "42", True)),
    ("Set MAX_RETRIES to 5.", ("max_retries", "value", "5", True)),
    ("The request timeout is 30 seconds.", ("request timeout", "value", "30s", True)),
    ("Request timeout: 30s", ("request timeout", "value", "30s", True)),
    # versions
    ("Django version is 4.2.", ("django", "version", "4.2", True)),
    ("We upgraded Django to 5.0.", ("django", "version", "5.0", True)),
    ("We use Python 3.11.", ("python", "version", "3.11", True)),
    ("requests==2.31.0", ("requests", "version", "2.31.0", True)),
    # ports
    ("The API listens on port 8080.", ("api", "port", "8080", True)),
    ("Postgres runs on port 5432.", ("postgres", "port", "5432", True)),
    ("The dev server runs on localhost:5173.", ("dev server", "port", "5173", True)),
    ("The API server port is 9000.", ("api server", "port", "9000", True)),
    # ownership
    ("The payments service is owned by Alice.", ("payments service", "owner", "alice", True)),
    ("Alice owns the payments service.", ("payments service", "owner", "alice", True)),
    ("The auth library is maintained by @carol.", ("auth library", "owner", "carol", True)),
    ("The API belongs to the platform team.", ("api", "owner", "platform", True)),
    # language, hosting, location, schedule
    ("The API is written in Go.", ("api", "language", "go", True)),
    ("We deploy to Fly.io.", ("project", "host", "fly.io", True)),
    ("The docs site is hosted on Netlify.", ("docs site", "host", "netlify", True)),
    ("The deploy script lives in scripts/deploy.sh.",
     ("deploy script", "location", "scripts/deploy.sh", True)),
    ("The nightly backup runs at 2am UTC.", ("nightly backup", "schedule", "2am utc", True)),
    # negation
    ("We no longer use Celery for background jobs.", ("background jobs", "uses", "celery", False)),
    ("The billing service does not use MongoDB.", ("billing service", "uses", "mongodb", False)),
    ("The billing service doesn't use MongoDB anymore.",
     ("billing service", "uses", "mongodb", False)),
    ("We never use Prettier for formatting.", ("formatting", "uses", "prettier", False)),
    ("We stopped using Storybook.", ("project", "uses", "storybook", False)),
    ("We used to use Kubernetes for deployment.", ("deployment", "uses", "kubernetes", False)),
    ("Dark mode is not enabled by default anymore.", ("dark mode", "status", "enabled", False)),
    ("Previously, the database was MySQL.", ("database", "uses", "mysql", False)),
    # conversational first-person facts
    ("I work at Google.", ("i", "works_at", "google", True)),
    ("I live in Berlin.", ("i", "location", "berlin", True)),
    ("The user prefers tabs for indentation.", ("indentation", "prefers", "tabs", True)),
]


@pytest.mark.parametrize(("text", "expected"), PATTERN_CASES)
def test_pattern_extracts(text: str, expected: tuple[str, str, str, bool]) -> None:
    assert expected in triples(text)


def test_subject_normalization_strips_articles_and_possessives() -> None:
    assert triples("The cache layer uses Redis.") == {("cache layer", "uses", "redis", True)}
    assert ("ci", "uses", "circleci", True) in triples("Our CI is CircleCI.")
    assert ("user name", "is", "sam", True) in triples("The user's name is Sam.")


def test_switch_yields_new_positive_and_old_negative() -> None:
    got = extract_assertions("We switched the cache from Redis to Memcached.")
    assert [(a.value, a.polarity) for a in got] == [("memcached", True), ("redis", False)]
    assert {a.subject for a in got} == {"cache"}


def test_surface_is_the_source_clause() -> None:
    (a,) = extract_assertions("Note: the API listens on port 8080. Nothing else.")
    assert a.surface == "Note: the API listens on port 8080."


def test_pronoun_resolves_to_previous_subject() -> None:
    got = triples("The analytics pipeline doesn't use Spark; it uses DuckDB.")
    assert ("analytics pipeline", "uses", "duckdb", True) in got


@pytest.mark.parametrize("text", [
    "Should we use Redis?",
    "Should we use Redis for caching",
    "Do we still use Jenkins?",
    "If we used Mongo, the schema would be simpler.",
    "We might switch from MySQL to Postgres next quarter.",
    "We could use Kafka for the event bus.",
    "We're evaluating whether to replace Celery with Dramatiq.",
    "Maybe we should try pytest.",
    "We are thinking about moving off Heroku.",
    "What port does the API use?",
    "",
    "   ",
])
def test_questions_and_hypotheticals_yield_nothing(text: str) -> None:
    assert extract_assertions(text) == []


def test_attributes_come_from_the_vocabulary() -> None:
    texts = [line for c in PATTERN_CASES for line in (c[0],)]
    for text in texts:
        for a in extract_assertions(text):
            assert a.attribute in ATTRIBUTES
            assert a.subject and a.value
    assert SINGLE_VALUED <= set(ATTRIBUTES)


# --------------------------------------------------------------------------------------------
# Conflicts
# --------------------------------------------------------------------------------------------

CONFLICTS = [
    ("The API server now listens on port 9090.", "The API server listens on port 8080."),
    ("We switched the cache from Redis to Memcached.", "Redis is our cache layer."),
    ("We migrated CI from Jenkins to GitHub Actions.", "CI runs on Jenkins."),
    ("Bob now owns the payments service.", "The payments service is owned by Alice."),
    ("Set MAX_RETRIES to 5.", "MAX_RETRIES = 3"),
    ("We upgraded Django to 5.0.", "Django version is 4.2."),
    ("The default branch is now main.", "The default branch is master."),
    ("We no longer use Celery for background jobs.", "We use Celery for background jobs."),
    ("The billing service does not use MongoDB.", "The billing service uses MongoDB."),
    ("We use pnpm for package management now.", "We use npm for package management."),
    ("Main database upgraded to Postgres 16.", "The main database is Postgres 15."),
    ("Alerts now go to PagerDuty instead of Slack.", "The team uses Slack for alerts."),
    ("We stopped using Storybook.", "We use Storybook for the component library."),
    ("I work at Anthropic now.", "I work at Google."),
    ("The docs site is now hosted on Vercel.", "The docs site is hosted on Netlify."),
]


@pytest.mark.parametrize(("new", "old"), CONFLICTS)
def test_conflicting_pairs(new: str, old: str) -> None:
    assert conflict(new, old)


COMPATIBLE = [
    # compatible facts about different slots
    ("We use Postgres for the database.", "We use Redis for caching."),
    ("Redis is fast.", "Redis runs on port 6379."),
    ("The API server is written in Go.", "The API server listens on port 8080."),
    ("The frontend uses Tailwind for styling.", "The frontend uses React."),
    ("Tests use factory_boy for fixtures.", "Tests use pytest."),
    # multi-valued "uses": a project can use pytest and hypothesis
    ("The project uses hypothesis.", "The project uses pytest."),
    ("We use Ruff for linting.", "We use Python 3.12."),
    # different subjects that look alike
    ("The analytics database is ClickHouse.", "The staging database is Postgres."),
    ("The admin API listens on port 9090.", "The API listens on port 8080."),
    ("The production database is Postgres.", "The test database is SQLite."),
    ("The payments UI is owned by Bob.", "The payments service is owned by Alice."),
    ("Production hosts run Ubuntu 20.04.", "Dev containers use Ubuntu 22.04."),
    ("The API uses SQLite in tests.", "The API uses Postgres in production."),
    # questions and hypotheticals never supersede
    ("Should we use Memcached for caching?", "We use Redis for caching."),
    ("If we used MongoDB, the schema would be simpler.", "The database is Postgres."),
    # a description is not a rival value
    ("The database runs on a db.r6g.large instance.", "The database is Postgres."),
    # one negative, one positive, different values: no contradiction
    ("I work at Anthropic.", "I used to work at Google."),
]


@pytest.mark.parametrize(("new", "old"), COMPATIBLE)
def test_non_conflicting_pairs(new: str, old: str) -> None:
    assert not conflict(new, old)


def test_head_noun_match_cache_layer_vs_cache() -> None:
    old = extract_assertions("The cache layer uses Redis.")[0]
    new = extract_assertions("The cache uses Memcached.")[0]
    assert conflicts(new, old)


def test_uses_is_multi_valued_without_a_slot_subject() -> None:
    a = Assertion("project", "uses", "pytest")
    b = Assertion("project", "uses", "hypothesis")
    assert not conflicts(a, b)
    # ... but single-valued for a slot subject
    assert conflicts(Assertion("cache", "uses", "memcached"), Assertion("cache", "uses", "redis"))


def test_opposite_polarity_same_value_conflicts() -> None:
    assert conflicts(Assertion("api", "uses", "redis", False), Assertion("api", "uses", "redis"))
    assert not conflicts(Assertion("api", "uses", "redis"), Assertion("api", "uses", "redis"))


def test_refined_value_is_not_a_different_value() -> None:
    assert not conflict("We use Postgres for the database.", "We use Postgres 16.")


def test_correction_overrides_any_shared_subject_and_attribute() -> None:
    old = "The staging database password is rotated monthly."
    new = "The staging database password is rotated weekly."
    assert not conflict(new, old, "fact")  # descriptions are multi-valued ...
    assert conflict("Correction: " + new, old, "correction")  # ... unless it is a correction
    assert not conflict("Correction: the API uses Redis.", "The API uses Redis.", "correction")


def test_supersedes_returns_the_conflicting_pairs() -> None:
    pairs = supersedes("We moved CI to GitHub Actions.", "CI runs on Jenkins.")
    assert [(n.value, o.value) for n, o in pairs] == [("github actions", "jenkins")]


def test_slot_key_groups_by_attribute_subject_and_slot() -> None:
    (a,) = extract_assertions("The cache layer uses Redis.")
    assert slot_key(a) == ("uses", "cache", "cache")
    assert slot_key(Assertion("project", "uses", "postgres 16")) == ("uses", "project", "database")
    assert slot_key(Assertion("request timeout", "value", "30s"))[0] == "is"


def test_every_conflict_is_reachable_through_slot_keys() -> None:
    # the intake stage looks rivals up by (group, subject | slot) or by value, then calls
    # supersedes(): a conflict outside those keys would never be found
    for row in _labeled():
        for new, old in supersedes(row["new"], row["old"], row["new_kind"]):
            kn, ko = slot_key(new), slot_key(old)
            same_key = kn[0] == ko[0] and (kn[1] == ko[1] or kn[2] == ko[2])
            assert same_key or new.value == old.value, (new, old)


# --------------------------------------------------------------------------------------------
# Robustness, speed and the labeled set
# --------------------------------------------------------------------------------------------

_WORDS = ["we", "use", "uses", "the", "cache", "redis", "for", "is", "not", "no", "longer", "port",
          "8080", "from", "to", "switched", "owned", "by", "alice", "owns", "version", "3.2", "=",
          ":", "set", "in", "production", "a", "?", ",", ".", "instead", "of", "never", "it",
          "runs", "on", "written", "go", "'s", "our", "migrated", "if", "with", "and", "i", "work"]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_arbitrary_text(text: str) -> None:
    out = extract_assertions(text)
    assert isinstance(out, list)
    for a in out:
        assert isinstance(a, Assertion)
        assert a.attribute in ATTRIBUTES


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), max_size=30).map(" ".join))
def test_never_raises_on_pattern_shaped_text(text: str) -> None:
    out = extract_assertions(text)
    for a in out:
        assert a.attribute in ATTRIBUTES
        assert not conflicts(a, a)  # an assertion never contradicts itself
        assert conflicts(Assertion(a.subject, a.attribute, a.value, not a.polarity), a)


def test_pathological_inputs_stay_fast() -> None:
    cases = ["a " * 3000, "the " * 1000 + "is", "we use " * 500, "x from y to " * 300,
             "port " * 500 + ":8080", ("redis, " * 400) + "for caching", "1.2.3." * 500,
             "the cache " + "uses redis and " * 300, "switched " + "from a to b " * 200]
    extract_assertions("warm up the lazily compiled patterns")
    for text in cases:
        t0 = time.perf_counter()
        extract_assertions(text)
        assert time.perf_counter() - t0 < 0.25, text[:40]


@pytest.mark.parametrize("name", ["assertions", "clauses", "claim_patterns", "claims", "normal_forms", "lazy_regex"])
def test_docstring_examples(name: str) -> None:
    import doctest
    import importlib

    module = importlib.import_module(f"mem.enrich.{name}")
    result = doctest.testmod(module)
    assert result.attempted and not result.failed


def test_typical_memory_is_fast() -> None:
    # the budget is ~100 us per 200-char text; assert a generous bound so a loaded CI box passes
    text = ("We use Redis for caching, and the API listens on port 8080. Alice owns the billing "
            "service. The default branch is now main; we deploy to Fly.io. Postgres is our DB.")
    extract_assertions(text)
    from mem.enrich import assertions as module
    best = float("inf")
    for _ in range(20):
        module._extract_cached.cache_clear()
        t0 = time.perf_counter()
        extract_assertions(text)
        best = min(best, time.perf_counter() - t0)
    assert best < 0.002


def _labeled() -> list[dict]:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_labeled_set_is_well_formed() -> None:
    rows = _labeled()
    assert len(rows) >= 80
    kinds = {"update", "negation", "compatible", "lookalike", "correction"}
    for row in rows:
        assert set(row) == {"old", "new", "new_kind", "conflict", "type"}
        assert row["type"] in kinds and row["new_kind"] in {"fact", "correction", "decision"}
    positives = sum(r["conflict"] for r in rows)
    assert 0.35 < positives / len(rows) < 0.65  # roughly balanced


def test_labeled_set_precision_and_recall() -> None:
    tp = fp = fn = 0
    for row in _labeled():
        predicted = bool(supersedes(row["new"], row["old"], row["new_kind"]))
        tp += predicted and row["conflict"]
        fp += predicted and not row["conflict"]
        fn += row["conflict"] and not predicted
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    assert precision >= 0.9, (precision, recall)
    assert recall >= 0.7, (precision, recall)


@pytest.mark.parametrize("new, old", [
    ("web/ now runs on Node 20 (.nvmrc 20.12); Node 18 reaches end of life this month.",
     "web/ runs on Node 18 (.nvmrc pins 18.19)."),
    ("The API now runs on Python 3.12.", "The API runs on Python 3.11."),
    ("Reverted the pnpm switch: web/ is back on npm.", "Switch web/ from npm to pnpm: faster installs."),
    ("Billing ownership moved from Priya to Marcus.",
     "Priya Nair owns the billing service (api/services/billing/) and reviews every PR that touches invoices."),
])
def test_paraphrased_corrections_supersede(new: str, old: str) -> None:
    assert supersedes(new, old, "fact")


@pytest.mark.parametrize("new, old", [
    ("The API runs on Python 3.12.1.", "The API runs on Python 3.12."),  # a refinement, not a change
    ("The worker runs on Python 3.12.", "The API runs on Python 3.11."),  # another subject
    ("We are back on track with the release.", "We use Jira for tracking."),
    ("Reverted the pnpm switch: web/ is back on npm.", "The docs site uses pnpm workspaces."),
    ("Marcus owns the payments service.", "Priya owns the billing service and reviews every PR."),
])
def test_lookalike_corrections_do_not_supersede(new: str, old: str) -> None:
    assert not supersedes(new, old, "fact")


def test_a_short_lead_before_a_colon_is_its_own_clause() -> None:
    (a,) = extract_assertions("Reverted the pnpm switch: web/ is back on npm.")
    assert (a.subject, a.attribute, a.value, a.polarity) == ("web/", "uses", "npm", True)
    assert a.surface == "web/ is back on npm."


_WORD = st.text(alphabet="abcdefghij -.", min_size=1, max_size=12).map(lambda w: " ".join(w.split())).filter(bool)


@given(st.dictionaries(_WORD, _WORD, max_size=20))
def test_lexicon_tables_read_back_what_they_write(mapping: dict[str, str]) -> None:
    from mem.enrich.lexicon import table, words

    groups: dict[str, list[str]] = {}
    for variant, canonical in mapping.items():
        groups.setdefault(canonical, []).append(variant)
    text = "\n".join(f"{canonical}: " + ", ".join(variants) for canonical, variants in groups.items())
    assert table(text) == mapping
    assert words(", ".join(mapping) + ",") == frozenset(mapping)  # a comma anywhere: entries are comma-separated
