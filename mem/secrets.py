"""Secret scanner for the intake gate: find credentials before they are stored.

Every memory written through ``mem`` passes through :func:`scan`; by default a
finding rejects the write, and ``--redact`` rewrites it with :func:`redact`.

Design:

* A table of value-shaped rules (vendor prefixes such as ``AKIA``, ``ghp_``,
  ``xoxb-``; PEM blocks; JWTs; URLs with ``user:pass@``), each a compiled
  pattern, the group holding the secret value, cheap literal hints used to skip
  the regex entirely, and an optional validator that rejects look-alikes.
* One assignment rule (``password = ...``, ``"api_key": "..."``,
  ``--token ...``) where the value is judged by heuristics: placeholders and
  code are never secrets; password-like keys accept low-entropy values; token/key
  keys need a random-looking value (the high-entropy fallback lives only here,
  so bare hashes, UUIDs and identifiers in prose are never flagged).
* Overlaps are resolved by rule priority (specific vendor rules beat the
  generic assignment rule), so findings are non-overlapping and sorted.
* Rules run on a folded copy of the text (:func:`fold`: NFKC, format and
  invisible characters such as zero-width spaces and soft hyphens dropped,
  combining marks stripped, Cyrillic/Greek look-alikes mapped to Latin), so
  ``AKIA`` with a zero-width space inside is still a key; offsets are mapped
  back to the original text, so redaction masks what was written.

Stdlib only and compiled at import, because this runs on every write.
"""

from __future__ import annotations

import bisect
import math
import re
import unicodedata
from collections.abc import Callable  # not typing: keeps the import cheap
from dataclasses import dataclass

__all__ = ["SecretFinding", "scan", "redact", "fold", "KINDS"]


@dataclass(frozen=True)
class SecretFinding:
    """One secret value found in a text.

    ``start``/``end`` are character offsets of the secret *value* only (for
    ``password=hunter2`` that is ``hunter2``), so masking keeps the key visible.
    """

    kind: str
    start: int
    end: int


# --------------------------------------------------------------------------
# Folding: what a rule sees
# --------------------------------------------------------------------------

# Cyrillic and Greek letters drawn like Latin ones: "АКIА" (Cyrillic A and K) reads as AKIA.
_LOOKALIKES = str.maketrans(
    "АВЕЅІЈКМНОРСТХУаеѕіјорсхуԁһӏԛԝ"  # Cyrillic
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοικνρτυχ"  # Greek
    "‐‑‒–—―−",  # dashes and minus: "sk‐live" is "sk-live"
    "ABESIJKMHOPCTXYaesijopcxydhlqw"
    "ABEZHIKMNOPTYXoikvptux"
    "-------",
)
# Invisible letters and symbols (not category Cf, so listed): Hangul fillers, braille blank.
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def _fold_char(char: str) -> str:
    """One character as the rules see it ('' for an invisible one)."""
    if char in _INVISIBLE or unicodedata.category(char) == "Cf":  # zero-width, soft hyphen, bidi controls
        return ""
    folded = unicodedata.normalize("NFKD", char)
    # Marks go (accents, and the grapheme joiner U+034F, a mark of combining class 0).
    folded = "".join(c for c in folded if unicodedata.category(c) not in ("Mn", "Me", "Cf"))
    return unicodedata.normalize("NFKC", folded).translate(_LOOKALIKES)


_FOLDED: dict[str, str] = {}  # per-character cache: texts repeat the same few non-ASCII characters


def fold(text: str) -> tuple[str, list[int] | None]:
    """The text the rules scan, and for each of its characters the offset it came from.

    ASCII text is its own fold (``None`` map). Characters a rule must see through disappear or
    become their plain form: ``fold("AK\\u200bIA")[0] == "AKIA"``.
    """
    if text.isascii():
        return text, None
    parts: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if char.isascii():
            parts.append(char)
            origin.append(index)
            continue
        folded = _FOLDED.get(char)
        if folded is None:
            folded = _FOLDED.setdefault(char, _fold_char(char)) if len(_FOLDED) < 65536 else _fold_char(char)
        parts.append(folded)
        origin.extend([index] * len(folded))
    return "".join(parts), origin


# --------------------------------------------------------------------------
# Value heuristics
# --------------------------------------------------------------------------

# Values that are obviously stand-ins, not secrets: templating, env references,
# masks, doc examples. Checked on captured values; this also keeps redaction
# stable, since "[REDACTED:kind]" is itself a placeholder.
#
# Leading characters of templating and references: <your-token>,
# [REDACTED:kind], {{ var }}, (hidden), $VAR / ${VAR} / $(cmd), %VAR%, %(name)s,
# YAML tags (!vault), @file.
_PLACEHOLDER_OPEN = frozenset("<[{($%!@")
_MASK_CHARS = frozenset("xX*.\u2022#?_-")  # xxxx, ****, ..., ____
# Matched against the lowered value.
_PLACEHOLDER_WORDS = re.compile(
    r"your|example|placeholder|change[_\-]?me|redacted|dummy|sample|xxxx|\*\*\*|"
    r"fixme|todo|replace|insert|<|>|\.\.\.|%s|[_\-]here\b"
)
# Whole-value words that show up as defaults, types or prose, not credentials.
_NON_SECRET_WORDS = frozenset(
    """
    password passwd pass pwd secret secrets token tokens key apikey api_key none null nil
    undefined true false yes no on off empty blank default required optional string str
    bytes int bool any secretstr text test testing value values env environment prompt
    stdin file hidden masked unset same below above here there this self
    """.split()
)
# Code-shaped values: a reference to the secret, not the secret itself.
_DOTTED_RE = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
# snake_case, SCREAMING_SNAKE and kebab-case names (e.g. a k8s secret *name*).
_SNAKE_RE = re.compile(r"[a-z]+(?:_[a-z]+)+|[A-Z]+(?:_[A-Z]+)+|[a-z]+(?:-[a-z]+)+")
_CAMEL_RE = re.compile(r"[a-z]+(?:[A-Z][a-z]+)+|(?:[A-Z][a-z]+){2,}")
# name( / name[ : a call or subscript (random secrets may contain brackets, but
# not right after a leading identifier).
_CALL_RE = re.compile(r"[A-Za-z_$][\w.$]*\s*[(\[]")
_PATH_RE = re.compile(r"(?:~|\.{1,2})?/[\w.\-/]*")  # PWD=/home/dev is a path
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_SYMBOLS = frozenset("!@#$%^&*+=?~/\\|")


def _is_placeholder(value: str) -> bool:
    """True for stand-ins like ``<your-token>``, ``${DB_PASS}``, ``xxxx``, ``changeme``."""
    v = value.strip()
    if not v:
        return True
    if v[0] in _PLACEHOLDER_OPEN or set(v) <= _MASK_CHARS:
        return True
    low = v.lower()
    return low in _NON_SECRET_WORDS or _PLACEHOLDER_WORDS.search(low) is not None


def _is_code(value: str) -> bool:
    """True for references to a secret in code: ``os.environ[...]``, ``get_pw()``, ``user_password``."""
    return bool(
        _CALL_RE.match(value)
        or _PATH_RE.fullmatch(value)
        or _DOTTED_RE.fullmatch(value)
        or _SNAKE_RE.fullmatch(value)
        or _CAMEL_RE.fullmatch(value)
    )


# A passphrase written as one CamelCase or dashed word ("correctHorseBatteryStaple"): four or more words,
# none of them the vocabulary of code that *names* a password rather than holding one.
_PASSPHRASE_RE = re.compile(r"[a-z]{3,}(?:[A-Z][a-z]{2,}){3,}|(?:[A-Z][a-z]{2,}){4,}|[a-z]{3,}(?:[\-_][a-z]{3,}){3,}")
_CODE_WORDS = frozenset("""
    get set load read fetch from env environ config conf settings password passwd secret token key keys
    file path var value name field hash store stored vault keychain manager provider default user admin
    new old current prompt input hidden masked encrypted decrypt encrypt generate random salt
    """.split())


def _is_passphrase(value: str) -> bool:
    """True for a CamelCase or dashed run of four or more plain words that are not code vocabulary."""
    if len(value) < 16 or not _PASSPHRASE_RE.fullmatch(value):
        return False
    words = re.findall(r"[A-Z]?[a-z]+", value)
    return not any(w.lower() in _CODE_WORDS for w in words)


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in map(value.count, set(value)))


def _looks_random(value: str, min_len: int = 16) -> bool:
    """High-entropy test for token-like values (only used where context says "secret")."""
    if len(value) < min_len or len(value) > 1024:
        return False
    has_digit = any(map(str.isdigit, value))
    has_upper = any(map(str.isupper, value))
    has_lower = any(map(str.islower, value))
    # Random strings of >= 16 chars almost always mix digits in; all-letter
    # values must at least mix case (and not be CamelCase words).
    if not has_digit and not (has_upper and has_lower):
        return False
    if not (has_upper or has_lower):  # all digits: ids, timestamps, ports
        return False
    if _is_code(value):
        return False
    return _entropy(value) >= 3.0


def _random_value(value: str) -> bool:
    return not _is_placeholder(value) and _looks_random(value, 16)


def _mixed_alnum(value: str) -> bool:
    """Vendor bodies are random base62: must contain a digit and a letter."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value) and not _is_placeholder(value)


def _mixed_case(value: str) -> bool:
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and not _is_placeholder(value)


def _not_placeholder(value: str) -> bool:
    return not _is_placeholder(value)


def _decodes_to_digits(part: str) -> bool:
    """A Discord token's first part is the bot's numeric user id in base64."""
    import base64
    import binascii

    try:
        decoded = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        return False
    return 17 <= len(decoded) <= 20 and decoded.isdigit()


def _pem_has_body(value: str) -> bool:
    # A bare "-----BEGIN RSA PRIVATE KEY-----" header in prose carries no key.
    body = value.split("-----", 2)[-1]
    return sum(c.isalnum() for c in body) >= 20


def _url_password(value: str) -> bool:
    return len(value) >= 3 and not _is_placeholder(value)


# --------------------------------------------------------------------------
# Value-shaped rules
# --------------------------------------------------------------------------

Validator = Callable[[str], bool]


@dataclass(frozen=True)
class _Rule:
    """A value-shaped rule. Every rule needs at least one hint, or it never runs."""

    kind: str
    pattern: re.Pattern[str]
    group: int = 0  # group holding the secret value; -1 = the last group that matched
    hints: tuple[str, ...] = ()  # literal substrings; the regex runs only if one is present
    validate: Validator | None = None  # rejects look-alikes (given the value)


# Token body terminators: secrets are followed by a non-token char or the end.
_END = r"(?![A-Za-z0-9_\-])"

# (hints, pattern) of the prefixed tokens reported as ``vendor_token``.
_VENDOR_TOKENS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("key-",), r"key-[0-9a-f]{32}"),  # Mailgun
    (("-us",), r"[0-9a-f]{32}-us\d{1,2}"),  # Mailchimp
    (("sq0",), r"sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,43}"),  # Square
    (("EAAA",), r"EAAA[0-9A-Za-z_\-]{60}"),  # Square
    (("NRAK-",), r"NRAK-[A-Z0-9]{27}"),  # New Relic
    (("lin_api_",), r"lin_api_[A-Za-z0-9]{40}"),  # Linear
    (("ntn_",), r"ntn_\d{11}[A-Za-z0-9]{35}"),  # Notion
    (("secret_",), r"secret_[A-Za-z0-9]{43}"),  # Notion (older)
    (("dp.",), r"dp\.(?:st|pt|sa|ct|scim|audit)\.(?:[a-z0-9_\-]{1,40}\.)?[A-Za-z0-9_\-]{40,64}"),  # Doppler
    (("hvs.", "hvb.", "hvr."), r"hv[sbr]\.[A-Za-z0-9_\-]{24,}"),  # HashiCorp Vault
    (("ATATT3",), r"ATATT3[A-Za-z0-9_\-=]{150,}"),  # Atlassian
    (("dapi",), r"dapi[0-9a-f]{32}(?:-\d)?"),  # Databricks
    (("PMAK-",), r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}"),  # Postman
    (("pul-",), r"pul-[0-9a-f]{40}"),  # Pulumi
    (("glsa_",), r"glsa_[A-Za-z0-9]{32}_[0-9a-f]{8}"),  # Grafana service account
    (("glc_",), r"glc_[A-Za-z0-9+/]{32,}={0,2}"),  # Grafana Cloud
    (("sntry",), r"sntry[su]_[A-Za-z0-9+/=_\-]{40,}"),  # Sentry
    (("AGE-SECRET-KEY-",), r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),  # age
    (("dckr_pat_",), r"dckr_pat_[A-Za-z0-9_\-]{27,}"),  # Docker Hub
    (("sbp_",), r"sbp_[0-9a-f]{40}"),  # Supabase
    (("gsk_",), r"gsk_[A-Za-z0-9]{52}"),  # Groq
    (("r8_",), r"r8_[A-Za-z0-9]{37}"),  # Replicate
    (("tskey-",), r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{20,}"),  # Tailscale
    (("pplx-",), r"pplx-[A-Za-z0-9]{48}"),  # Perplexity
    (("xai-",), r"xai-[A-Za-z0-9]{70,90}"),  # xAI
    (("GOCSPX-",), r"GOCSPX-[A-Za-z0-9_\-]{28}"),  # Google OAuth client secret
    (("ya29.",), r"ya29\.[0-9A-Za-z_\-]{30,}"),  # Google OAuth access token
    (("HRKU-",), r"HRKU-[A-Za-z0-9_\-]{40,}"),  # Heroku
    (("fo1_",), r"fo1_[A-Za-z0-9_\-]{43}"),  # Fly.io
    (("shippo_",), r"shippo_(?:live|test)_[a-f0-9]{40}"),  # Shippo
    (("rzp_",), r"rzp_(?:live|test)_[A-Za-z0-9]{14}"),  # Razorpay
    (("pscale_",), r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.\-]{32,64}"),  # PlanetScale
    (("ops_eyJ",), r"ops_eyJ[A-Za-z0-9+/=_\-]{100,}"),  # 1Password service account
    ((".atlasv1.",), r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-]{60,}"),  # Terraform Cloud
)


# Order = priority when spans overlap (specific before generic).
_RULES: tuple[_Rule, ...] = (
    _Rule(
        "private_key",
        re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            # Body stops at the next BEGIN: keeps many unterminated headers linear.
            r"(?:(?:(?!-----BEGIN)[\s\S])*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            # Truncated paste without the END line: take the base64 runs only
            # (prose words are shorter than 24 chars, so they are not eaten).
            r"|(?:(?:\s|\\n)+[A-Za-z0-9+/=]{24,})+)?"
        ),
        hints=("PRIVATE KEY",),
        validate=_pem_has_body,
    ),
    _Rule(
        "aws_access_key",
        # AKIA = long-term key, ASIA = STS session key. AIDA/AROA/AGPA/... are
        # user/role/group *ids*, public identifiers rather than credentials.
        re.compile(r"\b((?:AKIA|ASIA)[A-Z0-9]{16})\b"),
        group=1,
        hints=("AKIA", "ASIA"),
        validate=_not_placeholder,  # AKIAIOSFODNN7EXAMPLE is the AWS docs key
    ),
    _Rule(
        "aws_secret_key",
        re.compile(
            r"(?i:aws[_\-. ]?secret(?:[_\-. ]?access)?[_\-. ]?key|secret[_\-. ]?access[_\-. ]?key)"
            r"""["']?\s*(?::=|=>|[:=])\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"""
        ),
        group=1,
        hints=("ecret", "ECRET"),
        validate=lambda v: _mixed_alnum(v) and _entropy(v) >= 3.5,
    ),
    _Rule(
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{50,255})" + _END),
        hints=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        validate=lambda v: _mixed_alnum(v.split("_", 1)[1]),
    ),
    _Rule(
        "gitlab_token",
        re.compile(r"\bgl(?:pat|ptt|dt|rt)-[A-Za-z0-9_\-]{20,}" + _END),
        hints=("glpat-", "glptt-", "gldt-", "glrt-"),
        validate=lambda v: _mixed_alnum(v.split("-", 1)[1]),
    ),
    _Rule(
        "slack_webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}"),
        hints=("hooks.slack.com",),
        validate=_mixed_alnum,
    ),
    _Rule(
        "slack_token",
        re.compile(r"\b(?:xox[abposre]|xapp)-[0-9A-Za-z]+(?:-[0-9A-Za-z]+){1,5}" + _END),
        hints=("xox", "xapp-"),
        validate=lambda v: len(v) >= 24 and _mixed_alnum(v),
    ),
    _Rule(
        "stripe_key",
        re.compile(r"\b(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,247}|whsec_[0-9A-Za-z]{24,})" + _END),
        hints=("k_live_", "k_test_", "whsec_"),
        validate=lambda v: _mixed_alnum(v.rsplit("_", 1)[1]),
    ),
    _Rule(
        "google_api_key",
        re.compile(r"\bAIza[0-9A-Za-z_\-]{35}" + _END),
        hints=("AIza",),
        validate=_not_placeholder,
    ),
    _Rule(
        "anthropic_key",
        re.compile(r"\bsk-ant-(?:api|admin|oat|sid)\d{2}-[A-Za-z0-9_\-]{20,}" + _END),
        hints=("sk-ant-",),
        validate=_not_placeholder,
    ),
    _Rule(
        "openai_key",
        re.compile(r"\bsk-(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_\-]{20,}" + _END),
        hints=("sk-",),
        # "sk-" + words (sk-learn-compat-...) is an identifier; keys are random.
        validate=lambda v: _mixed_alnum(v[3:]) and _mixed_case(v[3:]) and _entropy(v) >= 3.5,
    ),
    _Rule(
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{10,}" + _END),
        hints=("eyJ",),
    ),
    _Rule(
        "npm_token",
        re.compile(r"\bnpm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
        hints=("npm_",),
        validate=lambda v: _mixed_alnum(v[4:]),
    ),
    _Rule(
        "sendgrid_key",
        re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{32,64}" + _END),
        hints=("SG.",),
        validate=_mixed_alnum,
    ),
    _Rule(
        "twilio_api_key",
        re.compile(r"\bSK[0-9a-fA-F]{32}\b"),
        hints=("SK",),
        validate=lambda v: _mixed_alnum(v[2:]),
    ),
    _Rule(
        "azure_storage_key",
        re.compile(r"(?i:AccountKey|SharedAccessKey)\s*=\s*([A-Za-z0-9+/]{20,}={0,2})(?![A-Za-z0-9+/=])"),
        group=1,
        hints=("ccountKey", "ccessKey", "CCOUNTKEY", "CCESSKEY"),
        validate=lambda v: _mixed_alnum(v) and _entropy(v) >= 3.5,
    ),
    _Rule(
        "huggingface_token",
        re.compile(r"\bhf_[A-Za-z0-9]{34}(?![A-Za-z0-9_])"),
        hints=("hf_",),
        validate=lambda v: _mixed_case(v[3:]),
    ),
    _Rule(
        "pypi_token",
        re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{50,}" + _END),
        hints=("pypi-AgE",),
    ),
    _Rule(
        "rails_secret_key_base",
        re.compile(r"""(?i:secret_key_base)["']?\s*(?::=|=>|[:=])\s*["']?([0-9a-fA-F]{64,})(?![0-9a-fA-F])"""),
        group=1,
        hints=("ecret_key_base", "ECRET_KEY_BASE"),
        validate=_mixed_alnum,
    ),
    _Rule(
        "shopify_token",
        re.compile(r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"),
        hints=("shpat_", "shpss_", "shpca_", "shppa_"),
        validate=lambda v: _mixed_alnum(v[6:]),
    ),
    _Rule(
        "digitalocean_token",
        re.compile(r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
        hints=("_v1_",),
        validate=lambda v: _mixed_alnum(v[7:]),
    ),
    _Rule(
        "discord_bot_token",
        # base64(user id) . base64(timestamp) . HMAC; the first part must decode to the numeric id.
        # base64 of an ASCII digit starts M|N|O then D|T|j|z: twelve two-letter hints, rare in prose.
        re.compile(r"\b([MNO][DTjz][A-Za-z0-9_\-]{22,26})\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,40}" + _END),
        hints=tuple(a + b for a in "MNO" for b in "DTjz"),
        validate=lambda v: _decodes_to_digits(v.split(".", 1)[0]),
    ),
    _Rule(
        "telegram_bot_token",
        re.compile(r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_\-]{33}" + _END),  # also inside .../bot<token>/
        hints=(":AA",),
        validate=lambda v: _mixed_case(v.split(":", 1)[1]),
    ),
    # Prefixed tokens of more services: the prefix says what it is, the body must look random.
    # One rule per prefix, so a text runs only the patterns whose prefix it contains.
    *(_Rule("vendor_token", re.compile(r"\b(?:" + body + ")" + _END), hints=hints, validate=_mixed_alnum)
      for hints, body in _VENDOR_TOKENS),
    _Rule(
        "azure_client_secret",
        re.compile(r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"),
        hints=("Q~",),
        validate=_mixed_case,
    ),
    _Rule(
        "netrc_password",
        re.compile(r"\bmachine\s+[\w\-]+(?:\.[\w\-]+)+\s+login\s+\S+\s+password\s+(\S+)"),  # a host name
        group=1,
        hints=("machine",),
        validate=lambda v: len(v) >= 3 and not _is_placeholder(v),
    ),
    _Rule(
        "url_credentials",
        # scheme://user:PASSWORD@host -- only the password is the value. The
        # password may hold a raw "@" (invalid but common): greedy up to the last.
        re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]{1,30}://[^\s:/@?#'\"]*:([^\s/?#'\"]+)@[A-Za-z0-9\[]"),
        group=1,
        hints=("://",),
        validate=_url_password,
    ),
    _Rule(
        "cli_password",
        # Password flags of a few commands people paste into notes. Command-
        # specific because "-p" alone means port/parents/publish elsewhere; the
        # {0,200} gap bounds the work when a command name repeats a lot.
        re.compile(
            r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]{0,200}?\s-p['\"]?([^\s'\"]+)"
            r"|\b(?:docker|podman|nerdctl|helm\s+registry)\s+login\b[^\n|;&]{0,200}?\s-p\s+['\"]?([^\s'\"]+)"
            r"|\bredis-cli\b[^\n|;&]{0,200}?\s-a\s+['\"]?([^\s'\"]+)"
            r"|\bsshpass\s+-p\s*['\"]?([^\s'\"]+)"
        ),
        group=-1,  # whichever alternative matched
        hints=("mysql", "mariadb", "login", "redis-cli", "sshpass"),
        validate=lambda v: len(v) >= 3 and not _is_placeholder(v),
    ),
    _Rule(
        "auth_header",
        re.compile(r"(?i:\bbearer)\s+([A-Za-z0-9._~+/\-]{16,}=*)(?![A-Za-z0-9._~+/\-=])"),
        group=1,
        hints=("earer", "EARER"),
        validate=_random_value,
    ),
    _Rule(
        "auth_header",
        # "Basic" is an English word; only trust it inside an Authorization header.
        re.compile(
            r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:basic)\s+"
            r"([A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])"
        ),
        group=1,
        hints=("uthorization", "UTHORIZATION"),
        validate=_random_value,
    ),
)


# One flat (hint, rule index) table: a single pass of `in` checks is ~2x cheaper
# than a per-rule any() and lets most texts skip every regex.
_HINTS: tuple[tuple[str, int], ...] = tuple((h, i) for i, r in enumerate(_RULES) for h in r.hints)


# --------------------------------------------------------------------------
# Assignment rule: key = value, key: value, "key": "value", --key value
# --------------------------------------------------------------------------

# The assignment rule is anchored on the keyword that ENDS the key (DB_PASSWORD,
# client_secret, GITHUB_TOKEN, api_key), located with str.find on a lowered
# copy: a regex that tried every position with a lazy key prefix was ~8x slower.
_FIND_WORDS = ("pass", "pwd", "secret", "token", "key")
_PASSWORD_WORDS = frozenset({"password", "passwd", "passphrase", "pwd", "secret", "pass"})
# "...key" only counts with a credential-ish qualifier (not cache_key, primary key).
_KEY_QUALIFIER_RE = re.compile(
    r"(?i:api|access|secret|private|client|app|auth|encryption|signing|master|account|"
    r"shared|service|license|subscription|consumer|webhook|admin|deploy)[_\-. ]?\Z"
)
# Separator and value sit in a lookahead so only the keyword is "consumed".
_ASSIGN_AT = re.compile(
    r"""
    (?i:password|passwd|passphrase|pwd|pass|secret|token|key)
    (?![A-Za-z0-9])                               # the key must END with the keyword
    (?=
      ["']?                                       # closing quote of a JSON / dict key
      (?P<sep>\s*(?::=|=>|[:=])\s*               # key = value, key: value, key := value
        |[ \t]+(?:is|was)[ \t]+                   # prose: "the db password is ..."
        |[ \t]+)                                  # blanks only count after a --flag
      (?:"(?P<dq>[^"\n]{1,512})"
        |'(?P<sq>[^'\n]{1,512})'
        |(?P<bare>[^\s"'`,;]{1,512}))
    )
    """,
    re.X,
)
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_STRIP_TRAILING = ".,:;)]}>&"  # sentence punctuation, closing brackets, shell "&&"
# Fallback lowering when str.lower changes the length ("İ" -> "i̇"), which
# would misalign offsets; translate is ~10x slower, so only used then.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _key_start(text: str, pos: int) -> int:
    """Walk back from the keyword to the start of the key (``DB_`` in ``DB_PASSWORD``)."""
    stop = max(0, pos - 128)  # keys are short; bounds the work on pathological input
    while pos > stop and text[pos - 1] in _KEY_CHARS:
        pos -= 1
    return pos


def _is_flag(text: str, key_at: int) -> bool:
    """True if the key at ``key_at`` is a command-line flag (``--password``), not ``x--password``."""
    return text.startswith("-", key_at) and (key_at == 0 or text[key_at - 1] in " \t\n\r'\"=(")


def _keyword_positions(lowered: str) -> list[int]:
    """Start offsets of every keyword occurrence (may include non-keys; the regex decides)."""
    hits: set[int] = set()
    for word in _FIND_WORDS:
        i = lowered.find(word)
        while i >= 0:
            hits.add(i)
            i = lowered.find(word, i + 1)
    return sorted(hits)


def _scan_assignments(text: str, lowered: str) -> list[tuple[int, int, str]]:
    """Find ``key <sep> value`` pairs whose value looks like a real secret."""
    out: list[tuple[int, int, str]] = []
    for pos in _keyword_positions(lowered):
        m = _ASSIGN_AT.match(text, pos)
        if m is None:
            continue
        sep = m.group("sep")
        if not sep.strip() and not _is_flag(text, _key_start(text, pos)):
            continue  # "password reset": whitespace is only a separator for --flags
        prose = sep.strip() in ("is", "was")
        word = m.group(0).lower()
        if word == "pass" and (pos == 0 or text[pos - 1] not in "_-."):
            # DB_PASS / smtp.pass, but not the English word; "db pass: hunter2!" only with a
            # password-shaped value (letters and digits or symbols, 8+ characters).
            if pos == 0 or text[pos - 1] != " " or sep.strip() not in (":", "="):
                continue
            value = m.group("dq") or m.group("sq") or m.group("bare") or ""
            if not (len(value) >= 8 and any(c.isalpha() for c in value)
                    and any(c.isdigit() or c in _SYMBOLS for c in value)):
                continue
        if word == "key" and not _KEY_QUALIFIER_RE.search(text, max(0, pos - 16), pos):
            continue
        quoted = m.group("bare") is None
        group = "dq" if m.group("dq") is not None else "sq" if quoted else "bare"
        start, end = m.span(group)
        value = text[start:end]
        if not quoted:
            key_at = _key_start(text, pos) if "?" in text or "&" in text else 0
            if key_at > 0 and text[key_at - 1] in "?&":
                # URL query parameter: "&" starts the next one.
                amp = value.find("&")
                if amp >= 0:
                    end = start + amp
                    value = value[:amp]
            stripped = value.rstrip(_STRIP_TRAILING)
            end -= len(value) - len(stripped)
            value = stripped
        if _is_placeholder(value):
            continue
        if _is_code(value):
            if word in _PASSWORD_WORDS and word != "secret" and _is_passphrase(value):
                out.append((start, end, "password_assignment"))
            continue
        # The value is trusted as a literal when the syntax says so (quoted,
        # KEY=value, or alone at the end of its line). In prose-style
        # "Password: ..." / "The token: ..." more words follow, so demand more.
        eol = text.find("\n", end)
        rest = text[end : eol if eol >= 0 else len(text)]
        literal = not prose and (quoted or sep == "=" or not rest.strip(" \t\r#.,;)"))
        if word not in _PASSWORD_WORDS:
            # token / api key: only the high-entropy fallback counts; in prose a
            # UUID is far more likely an id than a (Heroku-style) key.
            if _looks_random(value, 16) and (literal or not _UUID_RE.fullmatch(value)):
                out.append((start, end, "generic_secret"))
            continue
        # Password-like key: low entropy is fine for a literal, but prose must
        # carry a password-shaped token (letters plus digits or symbols).
        if len(value) < (8 if word == "secret" else 4):
            continue
        if not literal:
            has_alpha = any(c.isalpha() for c in value)
            has_digit = any(c.isdigit() for c in value)
            has_sym = any(c in _SYMBOLS for c in value)
            if len(value) < 6 or not (has_alpha and (has_digit or has_sym)):
                continue
        out.append((start, end, "generic_secret" if word == "secret" else "password_assignment"))
    return out


# Base64 images are long random-looking runs; never scan inside them.
_DATA_URI_RE = re.compile(r"data:[\w.+\-]+/[\w.+\-]+;base64,[A-Za-z0-9+/=]+")

#: Every kind :func:`scan` can report. ``password_assignment``: a password /
#: passphrase key with a literal value. ``generic_secret``: a ``*secret`` key
#: with a literal value, or a token / API-key key whose value passed the
#: high-entropy test.
KINDS: tuple[str, ...] = tuple(dict.fromkeys(r.kind for r in _RULES)) + (
    "password_assignment",
    "generic_secret",
)


def scan(text: str) -> list[SecretFinding]:
    """Return the secrets in ``text``, sorted by start and non-overlapping.

    Offsets cover the secret value only, not the key or surrounding syntax.

    >>> scan("deploy with AKIAQ3EGUMJ5ZT7R2KXW please")
    [SecretFinding(kind='aws_access_key', start=12, end=32)]
    >>> scan("reset your password in settings")
    []
    """
    if not text:
        return []
    folded, origin = fold(text)
    findings = _scan_folded(folded)
    if origin is None or not findings:
        return findings
    # Back to offsets in ``text``: a value spans from its first character's origin to past its last's.
    return [SecretFinding(f.kind, origin[f.start], origin[f.end - 1] + 1) for f in findings]


def _scan_folded(text: str) -> list[SecretFinding]:
    # (priority, start, end, kind)
    candidates: list[tuple[int, int, int, str]] = []
    triggered = {i for h, i in _HINTS if h in text}
    for prio in sorted(triggered):
        rule = _RULES[prio]
        for m in rule.pattern.finditer(text):
            start, end = m.span(rule.group if rule.group >= 0 else m.lastindex or 0)
            if rule.validate is not None and not rule.validate(text[start:end]):
                continue
            candidates.append((prio, start, end, rule.kind))
    prio = len(_RULES)
    lowered = text.lower()
    if len(lowered) != len(text):
        lowered = text.translate(_ASCII_LOWER)
    candidates.extend((prio, s, e, k) for s, e, k in _scan_assignments(text, lowered))
    if not candidates:
        return []

    blocked: list[tuple[int, int]] = []
    if "base64," in text:
        blocked = [m.span() for m in _DATA_URI_RE.finditer(text)]

    # Greedy by priority: a vendor-specific match wins over a generic one
    # covering the same chars; then earliest start. `kept` stays sorted and
    # non-overlapping, so one bisect finds the only neighbours that can clash.
    candidates.sort()
    kept: list[tuple[int, int, str]] = []
    for _, start, end, kind in candidates:
        if any(start < e and s < end for s, e in blocked):
            continue
        i = bisect.bisect_left(kept, (start,))
        if i > 0 and kept[i - 1][1] > start:
            continue
        if i < len(kept) and kept[i][0] < end:
            continue
        kept.insert(i, (start, end, kind))
    return [SecretFinding(kind, start, end) for start, end, kind in kept]


def redact(text: str) -> tuple[str, list[str]]:
    """Mask every secret value as ``[REDACTED:<kind>]``.

    Returns the new text and the kind of each masked value (one entry per
    value, in the order masked, repeats kept). Text around each value, including
    the key, is unchanged, and the result re-scans clean.

    >>> redact("export DB_PASSWORD=hunter22 && make deploy")
    ('export DB_PASSWORD=[REDACTED:password_assignment] && make deploy', ['password_assignment'])
    """
    kinds: list[str] = []
    # Masking can change a neighbour's boundary (a token glued to a masked
    # value was not followed by a token char before, it is now), so repeat
    # until a re-scan is clean. Each pass replaces unmasked characters with a
    # marker no rule matches, so this ends; the cap is a belt-and-braces guard.
    for _ in range(8):
        findings = scan(text)
        if not findings:
            break
        parts: list[str] = []
        pos = 0
        for f in findings:
            parts.append(text[pos : f.start])
            parts.append(f"[REDACTED:{f.kind}]")
            pos = f.end
        parts.append(text[pos:])
        text = "".join(parts)
        kinds.extend(f.kind for f in findings)
    return text, kinds
