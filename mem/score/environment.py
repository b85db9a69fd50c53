"""Deployment environments: a fact about one environment neither replaces nor answers for another.

Engineering memories come in rows of one table told apart by the environment they hold for
("Prod Elasticsearch data nodes: -Xms31g" / "Staging Elasticsearch is one node with a 4 GB heap").
Their words are nearly the same, so embeddings, BM25 and the correction rules take them for one
fact and its update; the environment word is what tells them apart. Two rules follow from that:

- intake never lets one supersede (or contradict) the other (:func:`apart`, read by
  ``mem.stages.supersede``), and search never moves one above the other as the newer value
  (``mem.score.contradiction.current_pairs``);
- a question that names an environment ("prod vespa content node count") is not answered by a
  memory that names only other environments ("The staging Vespa content cluster has 2 nodes"): it
  keeps part of its relevance (:func:`factors`) and the page model never moves it above one that
  does not (``mem.score.page_order.passing``).

Measured and left out: the same discount for a memory that names only non-production environments
when the question names none (the question asks about the system itself, production). Questions
allude to an environment without naming it ("on my laptop", "the test-mode Stripe"), and the 22
studied coding sets lost 3 rank-1 with it (``bench/README.md``, eighteenth session).

Only whole words count ("ember-patches-prod" names production; "product" and "devices" do not),
outside code spans, and only words that name an environment wherever they stand: "test", "local",
"CI" and "QA" name far more often something else ("a test", "the local team", "CI runner", "once
QA signs off"); "locally" was measured and left out (a how-to "run the suite locally" replaces one
that did not say so: rank-1 -1, above +1 on the studied sets).

>>> sorted(environments("Staging Prometheus keeps 7 days; prod keeps 30."))
['production', 'staging']
>>> environments("Product search runs on devices") == set()
True
>>> factors("prod node count", {1: "The staging cluster has 2 nodes.", 2: "Prod: 9 nodes.", 3: "Nodes are n2."}, 0.3)
{1: 0.7}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

PRODUCTION = "production"
IMPLICIT = True  # a text naming no environment holds for production
# word -> the environment it names
NAMES: dict[str, str] = {"prod": PRODUCTION, "production": PRODUCTION, "staging": "staging", "stg": "staging",
                         "tst": "test", "dev": "development",
                         "sandbox": "sandbox", "uat": "uat", "preprod": "preproduction",
                         "pre-prod": "preproduction", "pre-production": "preproduction",
                         "load-test": "load test", "loadtest": "load test"}
# a whole word, or a whole part of a hyphenated name ("ember-patches-prod"), but no part of a path, a
# host name, a channel or a flag ("v2/dev/{id}", "cgr.dev", "#cb-dev", "-Pdev")
_WORD = re.compile(r"(?<![\w./#@-])(?:\w+-)*?(%s)(?:-\w+)*(?![\w/-])(?!\.\w)" % "|".join(
    sorted(map(re.escape, NAMES), key=len, reverse=True)), re.IGNORECASE)
_CODE = re.compile(r"`[^`]*`")  # a command names what it runs, not what the text holds for ("`pnpm dev`")


@lru_cache(maxsize=8192)  # intake asks of each candidate pair, search of each hit: texts recur
def environments(text: str) -> frozenset[str]:
    """The environments ``text`` names, by whole word or whole hyphen-separated part, outside code spans.
    "dev" names one only before another word ("the dev cluster", "dev Loki"), and capitalized only at the
    start: "a backend dev", "Dev moves to CI" are people.

    >>> environments("Two approvals, one from a backend dev; Dev moves to CI."), environments("Dev Loki: 3 days")
    (frozenset(), frozenset({'development'}))
    """
    text = _CODE.sub(" ", text or "")
    found = set()
    for m in _WORD.finditer(text):
        word = m.group(1)
        if word.lower() == "dev" and m.start(1) == m.start() and m.end(1) == m.end() and (
                (word == "Dev" and m.start() > 0) or not re.match(r"\s+\w|:", text[m.end():])):
            continue
        found.add(NAMES[word.lower()])
    return frozenset(found)


def apart(a: str, b: str) -> bool:
    """Whether two texts hold for different environments: the environments other than production they
    name differ ("Staging RDS keeps backups for 1 day" and "RDS backups for prod are kept 7 days";
    "Staging CDC topics keep 1 day" and "CDC topics keep 7 days"). Production is what a text naming
    none holds for, so naming it sets nothing apart.

    >>> apart("Staging CDC topics keep 1 day.", "CDC topics keep 7 days."), apart("Prod: 9 nodes", "6 nodes")
    (True, False)
    """
    return _held_for(a) - {PRODUCTION} != _held_for(b) - {PRODUCTION}


LEADING = True  # a text holds for the environments its first sentence names, when it names one (``_held_for``)
_FIRST_SENTENCE = re.compile(r".*?(?:[.!?](?=\s)|\n|$)", re.DOTALL)


def _held_for(text: str) -> frozenset[str]:
    """The environments ``text`` holds for: those its first sentence names, when it names any ("production still runs
    Redis 6.2 ... Staging is our canary for it" holds for production), else all it names.

    >>> sorted(_held_for("Prod still runs Redis 6.2. Staging is our canary.")), sorted(_held_for("Redis 7 in staging."))
    (['production'], ['staging'])
    """
    first = _FIRST_SENTENCE.match(text or "")
    leading = environments(first[0]) if LEADING and first else frozenset()
    return leading or environments(text)


def elsewhere(asked: str, text: str) -> bool:
    """Whether ``text`` names only environments the question ``asked`` does not, when it names one.

    >>> elsewhere("prod node count", "The staging cluster has 2 nodes."), elsewhere("node count", "Dev: 2 nodes.")
    (True, False)
    """
    asked_for = environments(asked)
    if not asked_for:
        return False
    named = environments(text) or (frozenset({PRODUCTION}) if IMPLICIT else frozenset())
    return bool(named) and not named & asked_for


def factors(query: str, texts: Mapping[int, str], penalty: float) -> dict[int, float]:
    """The share of relevance each memory of ``texts`` keeps, for those that keep less than all:
    ``1 - penalty`` for those :func:`elsewhere` from the question ``query``."""
    if not environments(query):
        return {}
    return {rowid: round(1.0 - penalty, 6) for rowid, text in texts.items() if elsewhere(query, text)}
