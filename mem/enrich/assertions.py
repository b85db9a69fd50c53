"""Zero-LLM assertion extraction and the contradiction test used at intake.

A memory's text is cut into clauses; each clause is matched against a table of compiled patterns
("X uses Y", "we switched from Y to Z for X", "X listens on port 8080", "Alice owns X", ...) and
yields :class:`Assertion` triples ``(subject, attribute, value)`` with a polarity. At intake a new
memory supersedes an older one when one of its assertions :func:`conflicts` with one of the older
memory's: same subject and attribute, and either a different value for a single-valued attribute
or the same value with the opposite polarity.

The design leans towards precision: anything that looks like a question, a hypothetical, a plan or
a hedge is skipped, and multi-valued attributes ("the project uses pytest" and "... uses
hypothesis") never conflict on a mere difference of values. Stdlib only; each pattern is
compiled on first use, so importing is cheap.

The steps, one module each: :mod:`~mem.enrich.clauses` cuts the text and reads each clause's frame
(questions, plans and hedges left out; negation and contrast tails turned into polarity),
:mod:`~mem.enrich.claim_patterns` matches it against the table of clause shapes,
:mod:`~mem.enrich.claims` turns what a shape matched into assertions, with the normal forms of
:mod:`~mem.enrich.normal_forms` (and the word lists of :mod:`~mem.enrich.lexicon`); this module
holds the public API and the contradiction test.

>>> [(a.subject, a.attribute, a.value) for a in extract_assertions("We use Redis for caching.")]
[('caching', 'uses', 'redis')]
>>> bool(supersedes("The API now listens on port 9090.", "The API listens on port 8080."))
True

Attribute vocabulary (``ATTRIBUTES``):

* ``uses``      tool/technology ("X uses Y", "we use Y for X", "X runs on Y", "X is built with Y");
                single-valued for slot subjects ("cache", "database", "orm", "package manager")
                or when both values are known tools of one exclusive category (django vs fastapi)
* ``is``        identity of a definite subject ("the default branch is main")
* ``value``     numeric setting ("MAX_RETRIES = 3", "the timeout is 30s"); compared with ``is``
* ``version``   "Django version is 4.2", "upgraded Node to 20", "we use Python 3.11"
* ``port``, ``owner``, ``language``, ``status`` (enabled, deprecated, ...), ``host`` (deploy
  target), ``location`` (path or store), ``schedule`` (9:30, fridays), ``works_at``
* ``is_a``      classification ("X is a monorepo"), ``property`` (descriptions: "Redis is fast"),
  ``prefers`` and ``supports``: multi-valued, so they conflict only by negation (``prefers`` is
  single-valued for a purpose subject: "prefers tabs for indentation")

``is`` through ``works_at`` are single-valued (``SINGLE_VALUED``): two different asserted values
conflict.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from mem.enrich.claim_patterns import claims_of
from mem.enrich.claims import Assertion
from mem.enrich.clauses import clauses
from mem.enrich.lazy_regex import LazyRe
from mem.enrich.lexicon import CAT_SLOT as _CAT_SLOT, EXCLUSIVE as _EXCLUSIVE
from mem.enrich.normal_forms import VERSION, alias, base_value, canon_subject, category, is_slot

__all__ = [
    "ATTRIBUTES",
    "SINGLE_VALUED",
    "Assertion",
    "conflicts",
    "extract_assertions",
    "slot_key",
    "supersedes",
]

ATTRIBUTES: tuple[str, ...] = (
    "uses", "is", "value", "version", "port", "owner", "language", "status", "host", "location",
    "schedule", "works_at", "is_a", "property", "prefers", "supports",
)
# Attributes that hold one value per subject at a time; two different positive values conflict.
SINGLE_VALUED: frozenset[str] = frozenset(
    {"is", "value", "version", "port", "owner", "language", "status", "host", "location",
     "schedule", "works_at"})
# "the timeout is 30s" (value) and "the timeout is infinite" (is) talk about the same slot.
_ATTR_GROUP = {"value": "is"}
_PERSONS = frozenset({"i"})


def extract_assertions(text: str) -> list[Assertion]:
    """All assertions in ``text``, in order; questions, plans and hypotheticals yield none.

    >>> [(a.subject, a.attribute, a.value, a.polarity) for a in
    ...  extract_assertions("We switched from MySQL to Postgres for the database.")]
    [('database', 'uses', 'postgres', True), ('database', 'uses', 'mysql', False)]
    >>> extract_assertions("Should we use Redis?")
    []
    """
    if not text or not isinstance(text, str):
        return []
    return list(_extract_cached(text))


@lru_cache(maxsize=2048)
def _extract_cached(text: str) -> tuple[Assertion, ...]:
    """Intake compares one new memory with many stored ones: old texts repeat, so cache them."""
    out: list[Assertion] = []
    seen: set[tuple[str, str, str, bool]] = set()
    last_subject: Optional[str] = None
    for clause in clauses(text):
        for a in claims_of(clause, last_subject):
            key = (a.subject, a.attribute, a.value, a.polarity)
            if key in seen:
                continue
            seen.add(key)
            out.append(a)
            if a.subject not in ("project", "i"):
                last_subject = a.subject
    return tuple(out)


# Where something lives, what hosts it and what it uses overlap enough for a denial to count.
_STORE_ATTRS = frozenset({"uses", "location", "host"})


def _effective_subject(a: Assertion, canon: str) -> str:
    """The slot a generic subject's tool fills: ("project", uses, postgres) -> "database"."""
    if canon in ("project", "i") and a.attribute in ("uses", "prefers"):
        cat = category(a.value)
        if cat:
            slot = _CAT_SLOT.get(cat, cat)
            if slot:
                return slot
    return canon


def slot_key(assertion: Assertion) -> tuple[str, str, str]:
    """Index keys for finding rivals: ``(attribute group, canonical subject, slot)``.

    :func:`conflicts` can only pair two assertions that share the attribute group and either the
    canonical subject or the slot, or that have the same ``value`` (denials across subjects and
    attributes: "we stopped using X"). A store can index on these and call :func:`supersedes`
    only for the candidates.

    >>> slot_key(Assertion("project", "uses", "postgres"))
    ('uses', 'project', 'database')
    >>> slot_key(Assertion("main db server", "uses", "mysql"))
    ('uses', 'database', 'database')
    """
    canon = canon_subject(assertion.subject)
    group = _ATTR_GROUP.get(assertion.attribute, assertion.attribute)
    return group, canon, _effective_subject(assertion, canon)


def _same_value(a: str, b: str) -> bool:
    a, b = alias(a), alias(b)
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if long_.startswith(short + " ") and _VERSION_TAIL.fullmatch(long_[len(short) + 1:]):
        return True  # "postgres" vs "postgres 16": a refinement, not a different tool
    if VERSION.match(short) and long_.startswith(short + "."):
        return True  # "3.12" vs "3.12.1"
    # "launchdarkly" vs "launchdarkly and are reviewed weekly": the same value with more said after it
    return long_.startswith((short + " and ", short + ", "))


_OPEN_PAREN_TAIL = LazyRe(r"\s*\(.*$")
_VERSION_TAIL = LazyRe(r"v?\d[\w.+-]*")


def _other_version(a: str, b: str) -> bool:
    """The same tool at two different versions: "node 18 (.nvmrc 18.19" vs "node 20" (not "3.12" vs "3.12.1")."""
    (na, va), (nb, vb) = base_value(_OPEN_PAREN_TAIL.sub("", a)), base_value(_OPEN_PAREN_TAIL.sub("", b))
    if not (va and vb) or na != nb or va == vb:
        return False
    return not (va.startswith(vb + ".") or vb.startswith(va + "."))


def _shared_slot(new: Assertion, old: Assertion) -> Optional[str]:
    """The common (canonical) subject when both talk about the same subject+attribute, else None."""
    group = _ATTR_GROUP.get
    if group(new.attribute, new.attribute) != group(old.attribute, old.attribute):
        return None
    sn, so = canon_subject(new.subject), canon_subject(old.subject)
    if sn == so:
        return sn
    en, eo = _effective_subject(new, sn), _effective_subject(old, so)
    return en if en == eo else None


_CONFLICTS: dict[tuple[str, str, str, bool, str, str, str, bool], bool] = {}
_CONFLICTS_KEPT = 65536


def conflicts(new: Assertion, old: Assertion) -> bool:
    """True when ``new`` contradicts ``old`` (``_conflicts``). Remembered by the two claims without
    their surfaces (which it never reads): intake weighs each new memory against a few dozen stored
    rivals, and the same claims recur in them (``supersedes`` spent most of its time here)."""
    key = (new.subject, new.attribute, new.value, new.polarity, old.subject, old.attribute, old.value, old.polarity)
    known = _CONFLICTS.get(key)
    if known is None:
        if len(_CONFLICTS) >= _CONFLICTS_KEPT:
            _CONFLICTS.clear()
        known = _CONFLICTS[key] = _conflicts(new, old)
    return known


def _conflicts(new: Assertion, old: Assertion) -> bool:
    """True when ``new`` contradicts ``old``: same subject and attribute, and either

    * different values, both asserted, for a single-valued attribute (``SINGLE_VALUED``; ``uses``
      when the subject is a one-tool slot like "cache"/"database"/"orm", or when both values are
      known tools of one exclusive category such as two CI systems), or
    * the same value with opposite polarity ("X uses Y" then "X no longer uses Y"); a denial at
      project level ("we stopped using Storybook") covers every component's use of it.

    Subjects match after folding synonyms and generic words ("the cache layer" ~ "caching"), or
    through the slot a project-level tool fills ("we use Postgres" ~ "the database is MySQL").

    >>> a = extract_assertions("The cache layer uses Redis.")[0]
    >>> b = extract_assertions("We switched the cache to Memcached.")[0]
    >>> conflicts(b, a)
    True
    >>> conflicts(*extract_assertions("The project uses pytest. The project uses hypothesis."))
    False
    """
    if new.polarity != old.polarity and new.attribute != old.attribute \
            and new.attribute in _STORE_ATTRS and old.attribute in _STORE_ATTRS \
            and _same_value(new.value, old.value) \
            and canon_subject(new.subject) == canon_subject(old.subject):
        return True  # "we store secrets in Vault" vs "secrets no longer use Vault"
    if new.attribute == old.attribute == "uses" and new.polarity != old.polarity:
        denial, claim = (old, new) if new.polarity else (new, old)
        d, c = canon_subject(denial.subject), canon_subject(claim.subject)
        if _same_value(new.value, old.value) and (
                (d == "project" and c not in _PERSONS) or c.startswith(d + ": ")):
            # "we stopped using Storybook" denies it for every component; "the app stopped using
            # Firebase" denies it for whatever the app used it for
            return True
    subject = _shared_slot(new, old)
    if subject is None:
        return False
    if _same_value(new.value, old.value):
        return new.polarity != old.polarity
    if not (new.polarity and old.polarity):
        return False
    if new.value.startswith(("a ", "an ")) or old.value.startswith(("a ", "an ")):
        return False  # "a large instance" is a description, not a rival value
    attribute = new.attribute
    if attribute in SINGLE_VALUED:
        return True
    cn, co = category(new.value), category(old.value)
    if attribute == "uses" and _other_version(new.value, old.value):
        # "web/ runs on Node 18" then "web/ now runs on Node 20": one subject runs one version of a
        # tool at a time (coding-memory intake: 2 -> 4 of 24 labeled corrections detected, Node 18 -> 20
        # and Python 3.11 -> 3.12; bench/contradictions.py precision 1.000, recall .903 unchanged)
        return True
    if attribute == "uses":
        if is_slot(subject):
            # a slot holds one tool, unless the two are known tools of different kinds
            # ("CI uses GitHub Actions" and "we use ruff in CI")
            return not (cn and co and cn != co)
        return bool(cn) and cn == co and cn in _EXCLUSIVE
    if attribute == "prefers":
        return subject not in _PERSONS and subject != "project"
    return False


def _corrected_slot(new: Assertion, old: Assertion) -> bool:
    """Whether a correction's ``new`` claim overrides ``old``: the same slot and not the same claim;
    a denial only overrides the claim it denies ("we replaced the Makefile" denies the Makefile, it
    says nothing of "running a worker locally")."""
    if _shared_slot(new, old) is None:
        return False
    if _same_value(new.value, old.value):
        return new.polarity != old.polarity
    return new.polarity and old.polarity


def supersedes(new_text: str, old_text: str,
               new_kind: str = "fact") -> list[tuple[Assertion, Assertion]]:
    """Conflicting ``(new, old)`` assertion pairs between two memory texts.

    A ``"correction"`` overrides whatever the old text said about any subject+attribute it also
    talks about (unless it repeats the old claim exactly).

    >>> pairs = supersedes("We moved CI to GitHub Actions.", "CI runs on Jenkins.")
    >>> [(new.value, old.value) for new, old in pairs]
    [('github actions', 'jenkins')]
    >>> supersedes("We use Postgres for the database.", "We use Redis for caching.")
    []
    """
    new_as = extract_assertions(new_text)
    if not new_as:
        return []
    old_as = extract_assertions(old_text)
    correction = new_kind == "correction"
    pairs: list[tuple[Assertion, Assertion]] = []
    for n in new_as:
        for o in old_as:
            if conflicts(n, o):
                pairs.append((n, o))
            elif correction and _corrected_slot(n, o):
                pairs.append((n, o))
    return pairs
