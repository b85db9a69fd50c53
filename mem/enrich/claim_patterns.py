"""The pattern table of the zero-LLM extraction and its interpreter: each entry is a clause shape
("X uses Y", "we switched from Y to Z for X", "X listens on port 8080", "Alice owns X", ...), the
words that must be in a clause for it to be tried, and a handler that hands the matched parts to a
:class:`mem.enrich.claims.Clause`. :func:`claims_of` tries the candidates in table order; the
first handler that returns True wins.

>>> [(a.subject, a.attribute, a.value) for a in claims_of("The API listens on port 9090, not 8080.", None)]
[('api', 'port', '9090'), ('api', 'port', '8080')]
"""

from __future__ import annotations

import re
from typing import Callable, Optional

from mem.enrich.claims import Assertion, Clause
from mem.enrich.clauses import read_clause
from mem.enrich.lazy_regex import LazyRe, trie
from mem.enrich.lexicon import (
    CAT_SLOT as _CAT_SLOT, GENERIC_SUBJECTS as _GENERIC_SUBJECTS, LABEL_WORDS as _LABEL_WORDS, LANGUAGES as _LANGUAGES,
    PREPOSITIONS as _PREPOSITIONS, PRONOUNS as _PRONOUNS, STATUS as _STATUS, TOOLS as _TOOLS,
)
from mem.enrich.normal_forms import (
    ARTICLE, ENV_WORDS, PARENS, USES_CUT, WEEKDAY, alias, base_value, canon_subject, category, clean, normalize_subject,
    normalize_value, numeric, owner_value, split_attr, valid_subject,
)

_lazy = LazyRe  # a plain pattern; the table's go through _p, which factors their word alternations

_AUX = (r"(?:(?:are|am|is|was|were|have been|has been|had been|have|has|had|will be|will|shall|"
        r"must|do|does|did|need to|needs to|have to|has to|should|always|decided to|agreed to|"
        r"started|start|began|begin|keep|keeps|continue to|continued to|be|being|got|get|gets|"
        r"now|currently|still|also|only|just|exclusively|primarily|mostly|actually|really|"
        r"officially|generally|usually|typically|mainly|entirely|fully|already|all)\s+)*")
_S = r"(?P<s>[^,;:=]+?)"            # a subject phrase (lazy)
_WE = r"(?:(?:we|i|you|they|the team|our team)\s+)?"
# Verbs of a change that names its new value; "from A to B" takes a few more, "set X to" others.
# (Order is free: every plain-word alternation is factored into a sorted prefix trie, see _p.)
_ADJUST_VERBS = (r"switched|switch|moved|move|migrated|migrate|changed|change|upgraded|upgrade|downgraded|downgrade|"
                 r"bumped|bump|raised|raise|lowered|lower|increased|increase|decreased|decrease|reduced|reduce|"
                 r"updated|update|rolled back|reverted")
_CHANGE_VERBS = _ADJUST_VERBS + (r"|switching|moving|migrating|changing|swapped|swap|transitioned|transition|went|"
                                 r"upgrading|ported|converted|rewrote|rewritten")
_SET_VERBS = _ADJUST_VERBS + r"|set|configured|configure|pinned|pin|locked|lock|capped|cap|limited|limit"
_USE_VERBS = (r"uses|use|used|using|utilizes|utilize|leverages|leverage|relies on|rely on|"
              r"relying on|depends on|depend on|depending on|chose|choose|chosen|picked|pick|"
              r"selected|select|went with|go with|going with|settled on|settle on|adopted|adopt|"
              r"standardized on|standardize on|opted for|opt for|decided on|stick with|stick to|"
              r"stuck with|run|runs|running|ran|prefer|prefers|avoid|avoids|"
              r"avoiding|requires|require|needs|need|targets|"
              r"standardised on|favor|favour|favors|favours|wants|want|likes|like|supports|support")

Handler = Callable[[re.Match[str], Clause, bool], bool]


def _h_works(m: re.Match[str], c: Clause, pol: bool) -> bool:
    v, _ = normalize_value(m["v"])
    c.add("i", "works_at", v, pol if m["verb"] not in ("left", "quit") else not pol)
    return bool(v)


_FROM_TAIL = _lazy(r"^(?P<old>.+?)\s+(?:to|onto|over to|into|in)\s+(?P<new>.+)$")
_PURPOSE_TAIL = _lazy(r"^(?P<new>.+?)\s+(?:for|in|on|as)\s+(?P<s3>[^\s].*)$")


def _h_switch_from(m: re.Match[str], c: Clause, pol: bool) -> bool:
    subj = m["s2"] or (m["s1"] if m["s1"] else None)
    if m["s2"] and m["s1"] and normalize_subject(m["s1"])[0] not in ("project", "i"):
        return False  # "the X switched Y from a to b": too ambiguous
    tail = _FROM_TAIL.match(m["rest"])
    if not tail:
        return False
    new, s3 = tail["new"], None
    purpose = _PURPOSE_TAIL.match(new)
    if purpose:  # "... to GitHub Actions for CI"
        new, s3 = purpose["new"], purpose["s3"]
    return c.change(subj, tail["old"], new, m["verb"], s3, pol)


# "replaced A with B for X", "A was replaced by B in X": a change with both ends and maybe its slot.
_FOR_SLOT = r"(?:\s+(?:for|in|as)\s+(?P<s>.+?))?"


def _h_replace(m: re.Match[str], c: Clause, pol: bool) -> bool:
    return c.change(None, m["old"], m["new"], "replaced", m["s"], pol)


def _h_drop(m: re.Match[str], c: Clause, pol: bool) -> bool:
    purpose = m.groupdict().get("s")
    return c.uses(None, m["old"] + (f" for {purpose}" if purpose else ""), not pol)


def _h_port(m: re.Match[str], c: Clause, pol: bool) -> bool:
    sub = c.subject(m["s"])
    if sub is not None:  # "the api port is 8080": the api's port
        c.add(split_attr(sub[0])[0], "port", m["p"], pol)
    return sub is not None


def _h_owner(m: re.Match[str], c: Clause, pol: bool) -> bool:
    sub = c.subject(m["s"])
    if sub is None:
        return False
    v, _ = normalize_value(m["v"])
    if not v or len(v.split()) > 4:
        return False
    if category(v):  # "managed by Terraform" is tooling, not ownership
        c.add(sub[0], "uses", v, pol)
    else:
        c.add(split_attr(sub[0])[0], "owner", v, pol)
    return True


def _h_owner_active(m: re.Match[str], c: Clause, pol: bool) -> bool:
    owner_sub = normalize_subject(m["v"])[0]
    if not valid_subject(owner_sub) or len(owner_sub.split()) > 3 or category(owner_sub):
        return False
    # "owns the billing service (api/services/billing/) and reviews every PR": the owned thing ends
    # at a parenthesis or at "and <verb>s" (coding-memory intake: 5 -> 6 of 24 labeled corrections,
    # full R@5 .926 -> .937, stale@5 .808 -> .731; bench/contradictions.py precision 1.000)
    return c.put(_OWNED_TAIL.sub("", PARENS.sub("", m["s"])), "owner", owner_value(owner_sub), pol)


_OWNED_TAIL = _lazy(r"\s*\(.*$|\s+and\s+(?:reviews|approves|maintains|handles|runs|signs)\b.*$")


def _h_language(m: re.Match[str], c: Clause, pol: bool) -> bool:
    v, _ = normalize_value(m["v"])
    base = base_value(v)[0]
    if base not in _LANGUAGES:
        if m["verb"] in ("built", "developed", "build", "building") or len(v.split()) > 2 \
                or numeric(v):
            return False
    return c.put(m["s"], "language", v, pol)


def _h_location(m: re.Match[str], c: Clause, pol: bool) -> bool:
    v, _ = normalize_value(m["v"])
    return bool(v) and c.put(m["s"], "location", v, pol)


def _h_host(m: re.Match[str], c: Clause, pol: bool) -> bool:
    sub = c.subject(m.groupdict().get("s"))
    if sub is None:
        return False
    subject = sub[0]
    if subject in ENV_WORDS:  # "staging is deployed to Render"
        subject = ENV_WORDS[subject]
    v, _ = normalize_value(USES_CUT.sub("", m["v"]))
    if not v or v in ENV_WORDS:
        return False
    c.add(subject, "host", v, pol)
    return True


def _h_status_verb(m: re.Match[str], c: Clause, pol: bool) -> bool:
    verb = m["verb"]  # "disabled", "disable" + "d", "pause" + "d", else the irregular ones
    status = _STATUS.get(verb) or _STATUS.get(verb + "d") or _STATUS.get(verb + "ed") or {
        "turn on": "enabled", "turn off": "disabled", "freeze": "frozen", "froze": "frozen", "killed": "removed",
        "shut down": "removed", "shutdown": "removed"}.get(verb, verb)
    return c.state(m["s"], status, pol)


def _h_uses_s(m: re.Match[str], c: Clause, pol: bool) -> bool:
    return c.uses(m["s"], m["v"], pol)


def _h_tool_does(m: re.Match[str], c: Clause, pol: bool) -> bool:
    """"GitLab CI builds the Docker images": only when the doer is a known tool."""
    v, article = normalize_value(m["v"])
    if article or not category(v):
        return False
    return c.uses(m["s"], v, pol)


def _h_uses(m: re.Match[str], c: Clause, pol: bool) -> bool:
    verb = m["verb"]
    subj = m["s"]
    if subj is not None and subj.strip() in ("it", "this", "that") and verb in ("needs", "need"):
        return False
    if verb.startswith("avoid"):
        pol = not pol
    if verb.startswith(("want", "like")):
        # "the user wants answers in Spanish"; but "the API is like REST" is no preference
        if subj is None or normalize_subject(subj)[0] not in ("i", "project"):
            return False
    if verb.startswith("support"):
        return c.uses(subj, m["v"], pol, "supports")
    attribute = "prefers" if verb.startswith(("prefer", "favo", "want", "like")) else "uses"
    return c.uses(subj, m["v"], pol, attribute)


# "we format with Biome" fills the formatter slot.
_VERB_SLOTS = {"format": "formatter", "lint": "linter", "test": "test runner", "bundle": "bundler",
               "build": "build system", "deploy": "deployment", "type-check": "type checker",
               "typecheck": "type checker", "package": "package manager", "cache": "cache",
               "monitor": "monitoring", "track": "error tracking", "manage": "",
               "orchestrate": "orchestrator", "containerize": "containers",
               "migrate": "migrations", "schedule": "scheduler"}


def _h_verb_with(m: re.Match[str], c: Clause, pol: bool) -> bool:
    verb = m["verb"]
    stem = next((k for k in _VERB_SLOTS if verb.startswith(k)), "")
    slot = _VERB_SLOTS.get(stem, "")
    obj = m["obj"]
    if obj:  # "we build the frontend with Vite", "we lint Python with ruff" (Python's linter)
        sub = c.subject(obj)
        if sub is None:
            return False
        return c.uses(None, f"{m['v']} for {sub[0]}: {slot}" if slot else f"{m['v']} for {sub[0]}",
                      pol)
    if not slot:
        return False
    return c.uses(None, f"{m['v']} for {slot}", pol)


_FREQUENCIES = {"daily": "every day", "nightly": "every night", "hourly": "every hour",
                "weekly": "every week", "monthly": "every month"}


def _h_schedule(m: re.Match[str], c: Clause, pol: bool) -> bool:
    if m["freq"]:
        value = _FREQUENCIES.get(m["freq"], m["freq"])
    else:
        value = clean(m["v"])
        value = value[3:] if value.startswith("at ") else value
    return c.put(m["s"], "schedule", value, pol)


def _h_is_inverse(m: re.Match[str], c: Clause, pol: bool) -> bool:
    v = m["v"].strip()
    if ARTICLE.match(v) or v.split()[0] in _PRONOUNS or v in _GENERIC_SUBJECTS:
        return False
    return c.state(m["s"], v, pol, "is")


def _h_set(m: re.Match[str], c: Clause, pol: bool) -> bool:
    if not c.change(m["s"], None, m["new"], m["verb"], m.groupdict().get("s3"), pol):
        return False
    if m["verb"].startswith(("pin", "lock")):  # "we pin numpy to 1.26" also says numpy is pinned
        c.state(m["s"], "pinned", pol)
    return True


def _h_assign(m: re.Match[str], c: Clause, pol: bool) -> bool:
    s = m["s"].strip()
    if len(s.split()) > (6 if " for " in s or " of " in s else 4) or s in _LABEL_WORDS:
        return False
    return c.state(s, m["v"], pol, "assign")


# A group whose branches are plain words: "(?:uses|use|used)" or "(?P<verb>set|configured)".
_LITERAL_GROUP = _lazy(r"\((\?:|\?P<\w+>)((?:[a-z' -]+\|)+[a-z' -]+)\)")


def _factor_alternations(pattern: str) -> str:
    """Rewrite plain-word alternation groups of ``pattern`` as prefix tries (see :func:`mem.enrich.lazy_regex.trie`)."""
    def factor(m: re.Match[str]) -> str:
        return "(" + m.group(1) + trie(m.group(2).split("|")) + ")"
    return _LITERAL_GROUP.sub(factor, pattern)


def _p(pattern: str) -> LazyRe:
    """A table pattern: compiled (with its word alternations factored) on first use only."""
    return LazyRe(pattern, 0, _factor_alternations)


def _T(words: str, substrings: str = "") -> tuple[frozenset[str], tuple[str, ...]]:  # noqa: N802
    """A pattern's trigger: any of ``words`` among the clause's tokens, or any substring present.

    Checking a token set is ~100x cheaper than running a regex with lazy groups, and most
    patterns cannot match a clause that lacks their verb or preposition.
    """
    return frozenset(words.split()), tuple(substrings.split())


Trigger = tuple[frozenset[str], tuple[str, ...]]


def _verb(before: str, verbs: str, after: str, trigger: str = "") -> tuple[Trigger, LazyRe]:
    """Trigger and pattern of a clause built around its verb: ``^before (?P<verb>verbs) after$``; the
    trigger is the longest word of each verb but its prepositions ("sent" of "is sent", "go" of "go with"),
    which the clause must hold, unless ``trigger`` names the words instead (a preposition the shape
    cannot lack: "from", "to")."""
    return (_T(trigger or " ".join({max([w for w in v.split() if w not in _PREPOSITIONS] or v.split(), key=len): None
                                    for v in verbs.split("|")})),
            _p(rf"^{before}(?P<verb>{verbs}){after}$"))


def _said(verbs: str, preps: str, value: str = r"(?P<v>.+)") -> tuple[Trigger, LazyRe]:
    """``SUBJECT [aux] VERB PREP VALUE``: "X is hosted on Y"."""
    return _verb(rf"{_S}\s+{_AUX}", verbs, rf"\s+(?:{preps})\s+{value}")


def _done(verbs: str, preps: str, value: str = r"(?P<v>.+)") -> tuple[Trigger, LazyRe]:
    """``[we] [aux] VERB SUBJECT PREP VALUE``: "we store X in Y"."""
    return _verb(rf"{_WE}{_AUX}", verbs, rf"\s+{_S}\s+(?:{preps})\s+{value}")


def _doer(verbs: str, subject: str = r"(?P<s>.+)") -> tuple[Trigger, LazyRe]:
    """``VALUE [aux] VERB SUBJECT``: "Alice owns X", "Redis handles the cache"."""
    return _verb(r"(?P<v>[^,;:=]+?)\s+" + _AUX, verbs, rf"\s+{subject}")


# (name, trigger, pattern, handler); order matters: the first handler that returns True wins.
_PATTERNS: tuple[tuple[str, tuple[frozenset[str], tuple[str, ...]], LazyRe, Handler], ...] = (
    # --- conversational first-person facts: "I work at Google", "I live in Berlin" ---
    ("works_at", *_verb(r"i\s+" + _AUX, r"work|works|worked|working|employed|joined|started at|left|quit",
                        r"\s+(?:(?:at|for|with)\s+)?(?P<v>.+)"), _h_works),
    ("lives_in", *_verb(r"(?P<s>i|user|the user)\s+" + _AUX, r"live|lives|living|lived|moved|relocated|based",
                        r"\s+(?:in|to)\s+(?P<v>.+)"), _h_location),  # "user" and "the user" are "i"

    # --- changes with both ends: "we switched from Y to Z for X", "X moved from Y to Z" ---
    # (the tail after "from" is split in Python: four lazy groups in one regex backtrack badly)
    ("switch_from", *_verb(r"(?:(?P<s1>[^,;:=]+?)\s+)?" + _AUX, _CHANGE_VERBS, r"\s+(?:(?:over|back)\s+)?"
                           r"(?:(?P<s2>[^,;:=]+?)\s+)?(?:from|off(?: of)?|away from)\s+(?P<rest>.+)", "from off"),
     _h_switch_from),
    ("replace", *_verb(_WE + _AUX, r"replaced|replace|replacing|swapped out|swapped|swap out|swap|substituted",
                       r"\s+(?P<old>.+?)\s+(?:with|for|by)\s+(?P<new>.+?)" + _FOR_SLOT), _h_replace),
    ("replaced_by", *_verb(r"(?P<old>.+?)\s+" + _AUX, r"replaced|superseded|swapped out",
                           r"\s+(?:with|by)\s+(?P<new>.+?)" + _FOR_SLOT), _h_replace),

    # --- ports: "X listens on port 8080", "X port is 8080", "X runs on localhost:5173" ---
    ("port_of", _T("port"),  # also where the copula cannot take it: a long subject before "=" or ":"
     _p(r"^(?:the\s+)?port\s+(?:for|of)\s+(?P<s>.+?)\s+(?:is|=|:|was|has been)\s+(?:now\s+)?(?P<p>\d{2,5})$"),
     _h_port),
    ("serve_on_port", *_done(r"serve|serves|run|runs|expose|exposes|bind|binds|start|starts|host|hosts|deploy|deploys|"
                             r"moved|moves|move|changed|switched", r"on|at|to", r"(?:port\s+|:)(?P<p>\d{2,5})\b.*"),
     _h_port),
    ("listens_on", _T("port", ":"),
     _p(r"^" + _S + r"\s+" + _AUX + r"(?:listens|listen|listening|runs|run|running|served|serves|"
        r"exposed|exposes|available|reachable|bound|binds|bind|hosted|deployed|accessible|lives|"
        r"live|moved|changed|switched|sits|starts|started|up)?\s*(?:on|at|to|via|through|from)\s+"
        r"(?:port\s+(?:number\s+)?|(?:https?://)?(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|"
        r"[a-z][\w.-]*)?:)(?P<p>\d{2,5})\b.*$"),
     _h_port),
    ("port_is", _T("port"),
     _p(r"^" + _S + r"(?:'s)?\s+port\s+(?:number\s+)?(?:is\s+|=\s*|:\s*|was\s+|of\s+|"
        r"has been\s+)?(?:now\s+)?(?P<p>\d{2,5})$"),
     _h_port),

    # --- ownership: "X is owned by Alice", "Alice owns X", "X belongs to the platform team" ---
    ("owned_by", _T("by"),
     _p(r"^" + _S + r"\s+" + _AUX + r"(?:owned|maintained|led|looked after|stewarded|run|"
        r"managed)(?:\s+and\s+(?:owned|maintained|operated|run|managed))?\s+by\s+(?P<v>.+)$"),
     _h_owner),
    ("owner_of", _T("owner owners maintainer maintainers dri point poc"),
     _p(r"^(?:the\s+)?(?:owner|owners|maintainer|maintainers|dri|point of contact|poc)\s+"
        r"(?:of|for)\s+(?P<s>.+?)\s+(?:is|are|was|=|:)\s+(?:now\s+)?(?P<v>.+)$"),
     _h_owner),
    ("belongs_to", *_said(r"belongs|belong|belonged", r"to"), _h_owner),
    ("ownership_moved", _T("ownership maintenance responsibility"),
     _p(r"^(?:the\s+)?(?:ownership|maintenance|responsibility)\s+(?:of|for)\s+(?P<s>.+?)\s+" +
        _AUX + r"(?:moved|transferred|passed|went|handed|shifted)\s+(?:over\s+)?to\s+(?P<v>.+)$"),
     _h_owner),
    ("owns", *_doer(r"owns|own|owned|maintains|maintain|maintained|leads|took over|takes over|has taken over|"
                    r"is responsible for|are responsible for|was responsible for|is in charge of|are in charge of|"
                    r"is the owner of|are the owners of|is the maintainer of|is the dri for|is the point of contact for"),
     _h_owner_active),

    # --- implementation language: "X is written in Go", "we rewrote X in Rust" ---
    ("written_in", *_said(r"written|implemented|coded|built|developed|rewritten|re-written|ported|programmed|authored",
                          r"entirely in|mostly in|fully in|purely in|in"), _h_language),
    ("write_in", *_done(r"write|wrote|rewrite|rewrote|rewriting|writing|implement|implemented|port|ported|porting|build|"
                        r"built|building", r"in"), _h_language),

    # --- where things live: "X lives in scripts/", "we store X in Vault" ---
    ("lives_in_path", *_said(r"lives|live|located|stored|kept|saved|defined|placed|sits|resides|reside|persisted|"
                             r"written|based", r"in|at|under|inside|on|to"), _h_location),
    ("store_in", *_done(r"store|stored|keep|kept|save|saved|put|persist|persisted", r"in|on|into|under"), _h_location),
    ("is_at_path", _T("in at under"),
     _p(r"^" + _S + r"\s+(?:is|are|was|were)\s+(?:now\s+)?(?:in|at|under)\s+"
        r"(?P<v>[\w~./-]*[/.][\w~./-]*)$"),
     _h_location),

    # --- hosting / deploy target: "X is hosted on Netlify", "we deploy to Fly.io" ---
    ("hosted_on", *_said(r"hosted|deployed|served|shipped", r"on|to|at|in|by|from"), _h_host),
    ("deploy_to", _T("deploy deployed deploying host hosted hosting ship shipped"),
     _p(r"^" + _WE + _AUX + r"(?:deploy|deployed|deploying|host|hosted|hosting|ship|shipped)\s+"
        r"(?:(?P<s>[^,;:=]+?)\s+)?(?:to|on|at)\s+(?P<v>.+)$"),
     _h_host),

    # --- changes with only the new end: "set X to 42", "X moved to Y", "upgraded X to 5.0" ---
    ("switch_to", *_verb(_WE + _AUX, r"switched|switch|moved|move|migrated|migrate|transitioned|changed|went|go|going|"
                         r"upgraded|upgrade|reverted|revert|returned|return",
                         r"\s+(?:over\s+|back\s+)?(?:to|onto)\s+(?P<new>.+?)(?:\s+(?:for|as)\s+(?P<s3>.+?))?",
                         "to onto"),
     lambda m, c, pol: c.change(None, None, m["new"], m["verb"], m["s3"], pol)),
    ("set_to", *_done(_SET_VERBS, r"to|at|onto", r"(?:version\s+)?(?P<new>.+?)(?:\s+(?:for|in)\s+(?P<s3>.+?))?"), _h_set),
    ("rewrite_in", *_done(r"rewrote|rewrite|ported|port|converted|convert", r"in|into|to", r"(?P<new>.+)"), _h_set),
    ("changed_to", *_said(rf"{_CHANGE_VERBS}|pinned|locked|set", r"over to|over onto|over at|to|onto|at",
                          r"(?:version\s+)?(?P<new>.+)"), _h_set),
    ("version_at", _T("at on"),
     _p(r"^" + _S + r"\s+(?:is|are|was)\s+(?:now\s+|currently\s+|still\s+)?(?:at|on)\s+"
        r"(?:version\s+|v(?=\d))?(?P<new>\d[\w.+-]*)$"),
     lambda m, c, pol: c.change(m["s"], None, m["new"], "set", None, pol)),

    # --- removal and status verbs: "we dropped Sentry", "we disabled the flag" ---
    ("drop", *_verb(_WE + _AUX, r"dropped|ditched|abandoned|removed|uninstalled|retired|decommissioned|sunset|killed|"
                    r"got rid of|moved off|moved away from|migrated off|migrated away from|deleted",
                    r"\s+(?P<old>.+?)(?:\s+(?:for|from)\s+(?P<s>.+?))?"), _h_drop),
    ("status_verb", *_verb(_WE + _AUX, r"enabled|enable|disabled|disable|turned on|turn on|turned off|turn off|"
                           r"archived|archive|deprecated|deprecate|paused|pause|froze|freeze|killed|shut down|shutdown",
                           r"\s+" + _S), _h_status_verb),

    # --- uses: "X is used for Y", "X is built with Y", "X runs on Y", "we use Y for X" ---
    ("used_for", _T("used"),
     _p(r"^(?P<v>[^,;:=]+?)\s+(?:is|are|was|were|has been|have been|gets|get)\s+"
        r"(?:now\s+|still\s+|also\s+|only\s+|mainly\s+|primarily\s+|mostly\s+)?used\s+"
        r"(?:for|as|in)\s+(?P<s>.+)$"),
     lambda m, c, pol: c.uses(None, f"{m['v']} for {m['s']}", pol)),
    ("built_with", *_said(r"done|performed|built|made|implemented|developed|powered|backed|driven|handled|orchestrated|"
                          r"tested|linted|formatted|packaged|bundled|compiled|containerized|cached|rendered|styled|"
                          r"type-checked|checked|scheduled|queued|processed|managed|monitored|tracked|build|builds|"
                          r"compile|compiles", r"with|using|on|by|via|through|on top of|atop|in"), _h_uses_s),
    ("schedule", *_verb(_S + r"\s+" + _AUX, r"runs|run|ran|scheduled|happens|happen|executes|fires|triggers",
                        r"\s+(?:(?P<v>(?:at\s+\d|every\s|each\s|on\s+(?:" + WEEKDAY + r"\b|weekdays|weekends|"
                        r"the first|the last))[^,;]*)|(?P<freq>daily|nightly|hourly|weekly|monthly|once a \w+|twice a \w+))"),
     _h_schedule),
    ("expires", *_said(r"expire|expires|expired", r"after|in|every", r"(?P<v>[^,;]+)"),  # the subject's expiry setting
     lambda m, c, pol: c.state(f"{m['s']} expiry", m["v"], pol, "assign")),
    ("runs_on", *_said(r"runs|run|running|ran|sits|sit|lives", r"on top of|on|in|under|inside|atop|with|via|using|through"),
     _h_uses_s),
    ("goes_through", *_said(r"go|goes|going|went|are sent|is sent|get sent|gets sent|are routed|is routed|route|routes|"
                            r"flow|flows|happen|happens|happened|run|runs", r"through|to|via|into"), _h_uses_s),
    ("handles", *_doer(r"handles|handled|powers|powered|manages|serves as|acts as", r"(?:(?:our|the)\s+)?(?P<s>.+)"),
     _h_uses),
    ("tool_does", *_doer(r"builds|built|runs|deploys|deployed|tests|tested|hosts|stores|stored|caches|serves|"
                         r"processes|schedules|checks|lints|formats|bundles", r"(?P<s>[^,;:=]+)"), _h_tool_does),
    ("verb_with", *_verb(_WE + _AUX, r"format|formatted|lint|linted|test|tested|bundle|bundled|build|built|deploy|"
                         r"deployed|type-check|typecheck|package|packaged|cache|cached|monitor|track|manage|"
                         r"orchestrate|containerize|migrate|schedule",
                         r"(?:\s+(?P<obj>[^,;:=]+?))?\s+(?:with|using|via|through|by)\s+(?P<v>.+)"), _h_verb_with),
    # --- a reverted change: "web/ is back on npm", "the cache is back to Redis" (people and idioms
    # such as "back on track" excluded); with the colon lead split below, coding-memory intake
    # detects 5 of its 24 labeled corrections instead of 4, bench/contradictions.py precision 1.000 ---
    ("back_on", _T("back"),
     _p(r"^(?!(?:we|i|you|they|the team|our team)\s)(?P<s>[^,;:=]+?)\s+(?:is|are|was|were|has gone|"
        r"have gone|went)\s+(?:now\s+)?back\s+(?:on|to)\s+"
        r"(?!(?:track|normal|green|red|square one|business|work|it|that|this)\b)(?P<v>.+)$"),
     _h_uses_s),
    ("we_are_on", _T("on using running"),
     _p(r"^(?:we|i|project|repo|codebase|team)\s+(?:are|am|is|were|was)\s+" + _AUX +
        r"(?:on|using|running)\s+(?P<v>.+)$"),
     lambda m, c, pol: c.uses(None, m["v"], pol)),
    ("uses", *_verb(r"(?:(?P<s>[^,;:=]+?)\s+)?" + _AUX, _USE_VERBS, r"\s+(?P<v>.+)"), _h_uses),

    # --- copula: "X defaults to Y", "Postgres is our database", "X is/was Y" ---
    ("defaults_to", *_said(r"defaults|default", r"to|is"), lambda m, c, pol: c.state(m["s"], m["v"], pol, "assign")),
    ("is_inverse", _T("is was"),
     _p(r"^(?P<v>[^ ,;:=]+(?: [^ ,;:=]+)?)\s+(?:is|was)\s+(?:now\s+|still\s+|currently\s+)?"
        r"(?:the|our|my|their|your)\s+(?P<s>[^,;]+)$"),
     _h_is_inverse),
    ("is", _T("is are was were been be remains remain stays stay became becomes"),
     _p(r"^" + _S + r"\s+(?:is|are|was|were|has been|have been|had been|will be|remains|remain|"
        r"stays|stay|became|becomes|be)\s+(?:now\s+|currently\s+|still\s+|always\s+|actually\s+|"
        r"officially\s+|just\s+|set to\s+|equal to\s+)*(?P<v>[^,;]+)$"),
     lambda m, c, pol: c.state(m["s"], m["v"], pol, "is")),

    # --- assignments: "X = 42", "X: 42", "requests==2.31" ---
    ("assign", _T("", "= -> \u2192"),
     _p(r"^(?P<s>[^=<>!:]+?)\s*(?:==|:=|=|->|\u2192)\s*(?P<v>[^=]+)$"),
     _h_assign),
    ("colon", _T("", ":"),
     _p(r"^(?P<s>[a-z0-9_.\-/ ']{1,40}?)\s*:\s*(?P<v>\S+(?:\s+\S+){0,2})$"),
     _h_assign),
)


def _build_trigger_index() -> tuple[dict[str, int], tuple[tuple[str, int], ...]]:
    """token -> bitmask of the patterns it can trigger (bit i = _PATTERNS[i]); same for substrings.

    OR-ing small ints and walking the set bits in order is cheaper than unioning and sorting sets.
    """
    by_word: dict[str, int] = {}
    by_sub: dict[str, int] = {}
    for i, (_name, (words, subs), _rx, _h) in enumerate(_PATTERNS):
        for w in words:
            by_word[w] = by_word.get(w, 0) | (1 << i)
        for x in subs:
            by_sub[x] = by_sub.get(x, 0) | (1 << i)
    return by_word, tuple(by_sub.items())


_TRIGGER_INDEX, _SUBSTRING_TRIGGERS = _build_trigger_index()


def _compounds(tokens: list[str]) -> list[tuple[str, str]]:
    """``(slot, tool)`` for each known tool directly followed by the slot its category fills.

    >>> _compounds("postgres database , redis cache and celery workers".split())
    [('database', 'postgres'), ('cache', 'redis')]
    """
    out: list[tuple[str, str]] = []
    n = len(tokens)
    for i in range(n - 1):
        for width in (2, 1):  # "github actions ci" before "github"
            if i + width >= n:
                continue
            tool = alias(" ".join(tokens[i:i + width]))
            cat = _TOOLS.get(tool)
            if not cat:
                continue
            slot = _CAT_SLOT.get(cat, cat)
            noun = tokens[i + width]
            two = f"{noun} {tokens[i + width + 1]}" if i + width + 1 < n else ""
            if slot and (canon_subject(noun) == slot or (two and canon_subject(two) == slot)):
                out.append((slot, tool))
            break
    return out


def claims_of(surface: str, last_subject: Optional[str]) -> list[Assertion]:
    """The assertions of one clause: its reading (:func:`mem.enrich.clauses.read_clause`) handed to the
    first pattern whose handler takes it, else to the "<tool> <its slot>" compounds it lists; then the
    values a contrast tail denied ("use pnpm, not npm")."""
    reading = read_clause(surface)
    if reading is None:
        return []
    c, tokens, pol, past, negs = reading
    ctx = Clause(surface.strip(), last_subject, past)
    mask = 0
    get = _TRIGGER_INDEX.get
    for token in tokens:
        mask |= get(token, 0)
    for sub, bits in _SUBSTRING_TRIGGERS:
        if sub in c:
            mask |= bits
    while mask:  # candidate patterns in table order: lowest set bit first
        low = mask & -mask
        mask ^= low
        _name, _trigger, rx, handler = _PATTERNS[low.bit_length() - 1]
        m = rx.match(c)
        if m and handler(m, ctx, pol):
            break
    else:
        # No clause pattern: fall back to "<tool> <its slot>" compounds in lists and fragments
        # ("Project setup: FastAPI backend, Postgres database, Redis cache").
        for slot, tool in _compounds(tokens):
            ctx.add(slot, "uses", tool, pol)
    if negs and ctx.out:
        first = ctx.out[0]
        for neg in negs:
            v, _ = normalize_value(USES_CUT.sub("", neg))
            if v:
                ctx.add(first.subject, first.attribute, v, not first.polarity)
    elif negs and pol:
        for neg in negs:  # "Alerts go to PagerDuty instead of Slack" with an unparsed head
            v, _ = normalize_value(neg)
            if v and category(v):
                ctx.add("project", "uses", v, False)
    return ctx.out
