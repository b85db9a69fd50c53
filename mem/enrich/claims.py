"""The assertions of one clause: :class:`Clause` receives what a pattern of the table matched (a
subject, a value, a change's two ends) and decides which attribute it asserts: "the port is 8080" a
port, "Postgres is our database" a tool in the database slot, "we switched from Jenkins to GitHub
Actions" a new tool asserted and the old one denied.

>>> c = Clause("We use ruff and black for formatting", None, False)
>>> c.uses(None, "ruff and black for formatting", True), [(a.subject, a.value) for a in c.out]
(True, [('formatting', 'ruff'), ('formatting', 'black')])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from mem.enrich.lazy_regex import LazyRe
from mem.enrich.lexicon import (
    LANGUAGES as _LANGUAGES, NOT_TOOLS as _NOT_TOOLS, PREPOSITIONS as _PREPOSITIONS, PRONOUNS as _PRONOUNS,
    REWRITE_VERBS as _REWRITE_VERBS, SLOT_SUBJECTS as _SLOT_SUBJECTS, STATUS as _STATUS, TOOL_VERBS as _TOOL_VERBS,
    TOOLS as _TOOLS,
)
from mem.enrich.normal_forms import (
    ENV_WORDS, TIME, USES_CUT, VALUE_QUALIFIER, VERSION, base_value, canon_subject, category,
    clean, cut_value, is_adjectival, is_slot, normalize_subject, normalize_value, numeric, numeric_attr, owner_value,
    split_attr, strip_article, valid_subject, when_named,
)


@dataclass(frozen=True)
class Assertion:
    """One extracted claim: ``subject`` ``attribute`` ``value``, asserted or denied (``polarity``).

    ``subject`` and ``value`` are normalized (lowercase, articles and possessives stripped);
    ``surface`` is the clause of the original text the claim came from.
    """

    subject: str
    attribute: str
    value: str
    polarity: bool = True
    surface: str = ""


_MAX_VALUE_TOKENS = 6
_WITH_PART = LazyRe(r"^(?P<a>.+?)\s+with\s+(?P<b>[^,]+)$")
_LIST_SPLIT = LazyRe(r"\s*,\s*(?:and\s+|&\s+|or\s+)?|\s+(?:and|&|plus|as well as|along with)\s+")
_PORT_NUMBER = LazyRe(r"\d{2,5}")
_PORT_VALUE = LazyRe(r"port\s*:?\s*\d")
_VERSION_PREFIX = LazyRe(r"^(?:version\s+|v(?=\d))")
_COUNT_NOUN = LazyRe(r"^(?P<n>\d[\d,.]*)\s+(?P<noun>[a-z][\w-]*(?:\s[a-z][\w-]*)?)$")
_PREF_PURPOSE = LazyRe(r"^(?P<v>.+?)\s+(?:for|when)\s+(?P<p>.+)$")
_DESCRIBED = LazyRe(r"^(?P<kind>.+?)\s+(?P<how>written|implemented|coded|built|powered|backed)\s+"
                    r"(?:in|with|on|by)\s+(?P<what>.+)$")
_QUALIFIER_PREPS = ("on ", "in ", "for ", "at ", "across ")
_PURPOSE = LazyRe(r"^(?P<v>.+?)\s+(?:for|as|to handle|to manage|to run|to power|in|on|across|"
                  r"throughout|when)\s+(?P<p>.+)$")


class Clause:
    """Collects the assertions of one clause; :meth:`add` normalizes and validates them."""

    __slots__ = ("surface", "out", "last_subject", "past")

    def __init__(self, surface: str, last_subject: Optional[str], past: bool) -> None:
        self.surface = surface
        self.out: list[Assertion] = []
        self.last_subject = last_subject
        self.past = past

    def subject(self, raw: Optional[str], default: str = "project") -> Optional[tuple[str, bool]]:
        """Normalized subject (with pronoun resolution); None when unusable."""
        if raw is None or not raw.strip():
            return default, False
        s, definite = normalize_subject(raw)
        if s in ("it", "this", "that", "they", "its", "these", "those"):
            if not self.last_subject:
                return None
            return self.last_subject, True
        if not valid_subject(s):
            return None
        return s, definite

    def put(self, subj_raw: Optional[str], attribute: str, value: str, polarity: bool) -> bool:
        """``subject attribute value`` as a pattern matched it; False when the subject is unusable."""
        sub = self.subject(subj_raw)
        if sub is None:
            return False
        self.add(sub[0], attribute, value, polarity)
        return True

    def add(self, subject: str, attribute: str, value: str, polarity: bool) -> None:
        """Append one assertion; values are cleaned per attribute, versions split off."""
        if not subject or not value or value in _PRONOUNS:
            return
        if len(value.split()) > _MAX_VALUE_TOKENS or len(value) > 80:
            return
        when = when_named(value) if attribute in ("uses", "host", "location", "is", "schedule") else None
        if when:  # "we deploy on Fridays", "standup is at 9:30": a when, not a what
            attribute, value = "schedule", when
        if attribute == "uses" and value.startswith("port"):
            m = _PORT_VALUE.match(value)
            if m:  # "the dev server now uses port 3000"
                attribute = "port"
        if attribute == "owner":
            value = owner_value(value)
        elif attribute == "port":
            m = _PORT_NUMBER.search(value)
            if not m:
                return
            value = m.group()
        elif attribute == "version":
            value = _VERSION_PREFIX.sub("", value)
            base, ver = base_value(value)
            if ver and base == subject:
                value = ver
        versioned = value
        if attribute == "language":  # "written in Python 3.12": language python, version 3.12
            value, _ = base_value(value)
        if self.past:
            polarity = not polarity
        self.out.append(Assertion(subject, attribute, value, polarity, self.surface))
        if attribute in ("uses", "language", "is") and not numeric(versioned):
            base, ver = base_value(versioned)
            if ver and (base in _TOOLS or attribute != "is"):  # "we use Python 3.11" -> version
                # scoped by the user unless that is the project or a bare slot: the dev
                # containers' Ubuntu and the production hosts' Ubuntu are different things
                scoped = subject not in ("project", "i") \
                    and canon_subject(subject) not in _SLOT_SUBJECTS
                self.out.append(Assertion(f"{canon_subject(subject)} {base}" if scoped else base,
                                          "version", ver,
                                          polarity, self.surface))

    # ---- helpers used by the pattern handlers ----

    def uses(self, subj_raw: Optional[str], rest: str, polarity: bool,
             attribute: str = "uses") -> bool:
        """``subject uses item, item for purpose, ...`` with list splitting and purposes."""
        sub = self.subject(subj_raw)
        if sub is None:
            return False
        subject = sub[0]
        generic = subject in ("project", "i")
        rest = cut_value(rest)
        items: list[tuple[str, Optional[str]]] = []
        for chunk in _LIST_SPLIT.split(rest):
            chunk = chunk.strip()
            if not chunk:
                continue
            m = (_PURPOSE if attribute == "uses" else _PREF_PURPOSE).match(chunk)
            items.append((m["v"], m["p"]) if m else (chunk, None))
        if not items:
            return False
        # "we use pytest and hypothesis for testing": a purpose on the last item covers the list
        if len(items) > 1 and items[-1][1] and not any(p for _, p in items[:-1]):
            items = [(v, items[-1][1]) for v, _ in items]
        added = skipped = False
        for raw_value, purpose in items:
            with_part = _WITH_PART.match(raw_value) if " with " in raw_value else None
            if with_part:  # "Postgres with pgvector": pgvector is something Postgres uses
                raw_value = with_part["a"]
            value, article = normalize_value(USES_CUT.sub("", raw_value))
            if not value or value in _PRONOUNS or value.split(" ", 1)[0] in _PREPOSITIONS:
                continue  # not this pattern's shape: let a later pattern try
            if value.split(" ", 1)[0] in _NOT_TOOLS or value in ENV_WORDS:
                skipped = True  # a manner or schedule ("run in parallel"): recognised, dropped
                continue
            if article in ("a", "an"):
                # "runs on a large instance" describes rather than names: keep the article so
                # conflicts() lets it clash only by polarity, never as a different tool
                value = f"{article} {value}"
            if with_part and not article:
                extra, extra_article = normalize_value(USES_CUT.sub("", with_part["b"]))
                if extra and not extra_article and extra.split(" ", 1)[0] not in _NOT_TOOLS:
                    self.add(value, "uses", extra, polarity)
            subj = subject
            if purpose:
                p, _ = normalize_subject(purpose)
                p = ENV_WORDS.get(p, p) if p in ENV_WORDS else p
                if generic:
                    if not valid_subject(p):
                        continue
                    subj = p
                elif purpose.strip() in ENV_WORDS or p in ENV_WORDS.values():
                    subj = f"{p} {subject}"
                elif attribute == "uses" and valid_subject(p) and len(p.split()) <= 3:
                    # "tests use factory_boy for fixtures": the tool fills the tests' fixtures
                    # role; the ": " marks the narrowing so a plain "tests" denial still covers it
                    subj = f"{subject}: {p}"
            if value[:1].isdigit() and attribute == "uses":
                count = _COUNT_NOUN.match(value)
                if count:  # "code review requires 2 approvals" -> code review approvals = 2
                    self.add(f"{subj} {count['noun']}", "value", count["n"], polarity)
                    added = True
                    continue
            self.add(subj, attribute, value, polarity)
            added = True
        return added or skipped

    def state(self, subj_raw: Optional[str], val_raw: str, polarity: bool,
              kind: str = "is") -> bool:
        """``subject is value`` / ``subject = value`` / ``set subject to value``: pick an attribute.

        ``kind`` is "is" (copula), "set" (an explicit change) or "assign" (``X = Y``, ``X: Y``).
        """
        sub = self.subject(subj_raw)
        if sub is None:
            return False
        subject, definite = sub
        subject, attribute = split_attr(subject)
        if not valid_subject(subject):
            return False
        raw = clean(val_raw)
        env = VALUE_QUALIFIER.match(raw)
        if env:  # "log level is INFO in production" -> subject "production log level"
            raw = env["x"]
            subject = f"{ENV_WORDS[env['env']]} {subject}" if subject != "project" \
                else ENV_WORDS[env["env"]]
        value, article = normalize_value(raw)
        if not value:
            return False
        if attribute:
            if attribute == "status":
                value = _STATUS.get(value, value)
            self.add(subject, attribute, value, polarity)
            return True
        first, _, rest = value.partition(" ")
        if value not in _STATUS and first in _STATUS and rest.startswith(_QUALIFIER_PREPS):
            # "auto-merge is enabled on the main repo": the qualifier narrows the subject
            rest = rest.split(" ", 1)[1] if " " in rest else ""
            rest = strip_article(rest)[0]
            if not rest:
                return False
            subject, value = f"{subject} {ENV_WORDS.get(rest, rest)}", first
        if value in _STATUS:
            self.add(subject, "status", _STATUS[value], polarity)
            if _STATUS[value] == "removed":
                self.add("project", "uses", subject, not polarity)
            return True
        if article in ("a", "an", "some"):
            m = _DESCRIBED.match(value)
            if m:  # "a FastAPI service written in Python 3.12": the kind, and how it is made
                self.add(subject, "is_a", m["kind"], polarity)
                if m["how"] in ("written", "implemented", "coded"):
                    lang = normalize_value(m["what"])[0]
                    if base_value(lang)[0] in _LANGUAGES:
                        self.add(subject, "language", lang, polarity)
                else:
                    self.uses(subj_raw, m["what"], polarity)
                return True
            self.add(subject, "is_a", value, polarity)
            return True
        if TIME.match(value):  # "the standup is at 9:30"
            self.add(subject, "schedule", value, polarity)
            return True
        if numeric(value) or VERSION.match(value):
            self.add(subject, numeric_attr(subject, value), value, polarity)
            return True
        if article in ("the", "our", "my", "their", "your", "its"):  # "X is the bottleneck"
            self.add(subject, "is_a", value, polarity)
            return True
        if is_adjectival(value):
            self.add(subject, "property", value, polarity)
            return True
        if len(value.split()) > 5:
            return False
        canon = canon_subject(subject)
        if is_slot(canon) or (category(value) and category(value) != "language"):
            self.add(subject, "uses", value, polarity)
        elif definite or kind != "is" or len(subject.split()) >= 2:
            self.add(subject, "is", value, polarity)
        else:  # "Redis is Valkey-compatible": a bare name described, not a slot filled
            self.add(subject, "property", value, polarity)
        return True

    def change(self, subj_raw: Optional[str], old_raw: Optional[str], new_raw: str, verb: str,
               purpose: Optional[str], polarity: bool) -> bool:
        """A change "from old to new": new asserted, old denied, attribute read off the values."""
        if not polarity:  # "we did not switch from X to Y" says nothing definite
            return False
        subj = subj_raw
        default = "project"
        if subj is None or normalize_subject(subj)[0] in ("project", "i"):
            if subj is not None:
                default = normalize_subject(subj)[0]
            subj = purpose if purpose and normalize_subject(purpose)[0] not in ENV_WORDS else None
        sub = self.subject(subj, default)
        if sub is None:
            return False
        subject, attribute = split_attr(sub[0])
        new_v = normalize_value(USES_CUT.sub("", clean(new_raw)))[0]
        old_vs = [normalize_value(USES_CUT.sub("", part))[0]
                  for part in _LIST_SPLIT.split(clean(old_raw))] if old_raw else []
        old_vs = [v for v in old_vs if v]
        old_v = old_vs[0] if old_vs else ""
        if not new_v:
            return False
        if _PORT_VALUE.match(new_v) or _PORT_VALUE.match(old_v):
            attribute = "port"
        if attribute is None and TIME.match(new_v):
            attribute = "schedule"
        if attribute is None:
            nums = numeric(new_v) or VERSION.match(new_v)
            if nums:
                attribute = numeric_attr(subject, new_v)
            elif verb in _REWRITE_VERBS and base_value(new_v)[0] in _LANGUAGES:
                attribute = "language"
            elif verb in _TOOL_VERBS or is_slot(canon_subject(subject)) or category(new_v) \
                    or (old_v and category(old_v)):
                attribute = "uses"
            elif _STATUS.get(new_v):
                attribute, new_v = "status", _STATUS[new_v]
            else:
                attribute = "is"
        self.add(subject, attribute, new_v, True)
        for old_v in old_vs:  # "replaced black and isort with ruff": both are denied
            if attribute == "status":
                old_v = _STATUS.get(old_v, old_v)
            self.add(subject, attribute, old_v, False)
        return True

