"""Tests for mem.secrets: the intake gate's secret scanner.

Fake secret values are assembled at runtime from a seeded RNG, so this file
holds no literal token that a push-protection scanner could mistake for a leak.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mem.secrets import KINDS, SecretFinding, redact, scan

CORPUS = Path(__file__).resolve().parents[1] / "bench" / "secrets_corpus.jsonl"

_R = random.Random(1234)
_B62 = string.ascii_letters + string.digits
_B64 = _B62 + "+/"
_B64U = _B62 + "-_"
_HEX = "0123456789abcdef"


def _rs(alphabet: str, n: int) -> str:
    return "".join(_R.choice(alphabet) for _ in range(n))


def _pem(label: str) -> str:
    body = "\n".join(_rs(_B64, 64) for _ in range(4))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


# kind -> (text template with {v}, secret value). Offsets must cover exactly the value.
V = {
    "aws_access_key": "AKIA" + _rs(string.ascii_uppercase + "234567", 16),
    "aws_secret_key": _rs(_B64, 40),
    "github_token": "ghp" + "_" + _rs(_B62, 36),
    "gitlab_token": "glpat" + "-" + _rs(_B62, 20),
    "slack_token": "xox" + f"b-{_rs(string.digits, 12)}-{_rs(string.digits, 13)}-{_rs(_B62, 24)}",
    "slack_webhook": "https://hooks.slack.com/services/"
    + f"T{_rs(string.ascii_uppercase, 8)}/B{_rs(string.ascii_uppercase, 10)}/{_rs(_B62, 24)}",
    "stripe_key": "sk" + "_live_" + _rs(_B62, 24),
    "google_api_key": "AI" + "za" + _rs(_B64U, 35),
    "anthropic_key": "sk-" + "ant-api03-" + _rs(_B64U, 93) + "AA",
    "openai_key": "sk-" + "proj-" + _rs(_B64U, 120),
    "jwt": "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjMifQ." + _rs(_B64U, 43),
    "npm_token": "npm" + "_" + _rs(_B62, 36),
    "sendgrid_key": "SG" + "." + _rs(_B64U, 22) + "." + _rs(_B64U, 43),
    "twilio_api_key": "SK" + _rs(_HEX, 32),
    "azure_storage_key": _rs(_B64, 86) + "==",
    "huggingface_token": "hf" + "_" + _rs(string.ascii_letters, 34),
    "pypi_token": "pypi" + "-AgEIcHlwaS5vcmc" + _rs(_B64U, 80),
    "private_key": _pem("RSA PRIVATE KEY"),
    "url_credentials": "Xq7" + _rs(_B62, 13),
    "cli_password": "Zq8#vLm2" + _rs(_B62, 4),
    "auth_header": _rs(_B62, 40),
    "password_assignment": "Tr0ub4dor&3",
    "generic_secret": _rs(_HEX, 32),
    "rails_secret_key_base": _rs(_HEX, 128),
    "shopify_token": "shp" + "at_" + _rs(_HEX, 32),
    "digitalocean_token": "dop" + "_v1_" + _rs(_HEX, 64),
    "discord_bot_token": "MTEy" + "MjMzNDQ1NTY2Nzc4ODk5" + "." + _rs(_B64U, 6) + "." + _rs(_B64U, 38),
    "telegram_bot_token": "123456789" + ":AA" + _rs(_B64U, 33),
    "vendor_token": "hv" + "s." + _rs(_B64U, 90),
    "azure_client_secret": "abc" + "8Q~" + _rs(_B62, 34),
    "netrc_password": "Xs9fk2" + _rs(_B62, 8),
}
CASES = {
    "rails_secret_key_base": "SECRET_KEY_BASE={v}",
    "shopify_token": "Shopify admin token {v} for the sync",
    "digitalocean_token": "doctl auth init -t {v}",
    "discord_bot_token": "DISCORD_TOKEN={v}",
    "telegram_bot_token": "curl https://api.telegram.org/bot{v}/getMe",
    "vendor_token": "VAULT_TOKEN={v}",
    "azure_client_secret": "AZURE_CLIENT_SECRET={v}",
    "netrc_password": "machine api.example.com login dev password {v}",
    "aws_access_key": "Deploy uses AWS key {v} with the ci-deployer IAM user.",
    "aws_secret_key": "[default]\naws_secret_access_key = {v}\n",
    "github_token": "export GITHUB_TOKEN={v}",
    "gitlab_token": "CI pushes with {v} (scope: write_repository).",
    "slack_token": "Bot token for #alerts is {v}.",
    "slack_webhook": "Alerts post to {v}",
    "stripe_key": "Stripe live secret key: {v}",
    "google_api_key": "Maps embed uses {v} (restricted).",
    "anthropic_key": "ANTHROPIC_API_KEY={v}",
    "openai_key": "The eval harness reads {v} from the env.",
    "jwt": "Session cookie: {v}",
    "npm_token": "//registry.npmjs.org/:_authToken={v}",
    "sendgrid_key": "Mail goes through {v}.",
    "twilio_api_key": "Twilio API key SID {v} lives in 1Password",
    "azure_storage_key": "DefaultEndpointsProtocol=https;AccountName=logs;AccountKey={v};EndpointSuffix=core.windows.net",
    "huggingface_token": "huggingface-cli login --token {v}",
    "pypi_token": "TWINE_PASSWORD={v} twine upload dist/*",
    "private_key": "Deploy key:\n{v}\nsaved to ~/.ssh/deploy",
    "url_credentials": "DATABASE_URL=postgres://app:{v}@db.internal:5432/app",
    "cli_password": "mysql -h db -uroot -p{v} orders < fix.sql",
    "auth_header": "curl -H 'Authorization: Bearer {v}' https://api.acme.io/v2/jobs",
    "password_assignment": 'cfg = {{"user": "etl", "password": "{v}"}}',
    "generic_secret": 'api_key = "{v}"',
}


def _one(text: str) -> SecretFinding:
    found = scan(text)
    assert len(found) == 1, (text, found)
    return found[0]


def test_every_kind_has_a_case() -> None:
    assert set(CASES) == set(KINDS)
    assert len(KINDS) >= 12


def test_every_rule_has_hints() -> None:
    # scan() only runs a rule's regex when one of its hints is in the text.
    from mem.secrets import _RULES

    assert all(rule.hints for rule in _RULES)


@pytest.mark.parametrize("kind", sorted(CASES))
def test_kind_detected_with_value_offsets(kind: str) -> None:
    value = V[kind]
    text = CASES[kind].format(v=value)
    f = _one(text)
    assert f.kind == kind
    assert text[f.start : f.end] == value


@pytest.mark.parametrize(
    "text, value",
    [
        ("ASIA creds: " + "ASIA" + "Q3EGUMJ5ZT7R2KXW" + " (expires in 1h)", "ASIA" + "Q3EGUMJ5ZT7R2KXW"),
        ("gh auth gave " + "gho_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5", "gho_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"),
        ("rk" + "_live_" + "9fK2mQ7xL4pW8vN3bR6tY1zA", "rk" + "_live_" + "9fK2mQ7xL4pW8vN3bR6tY1zA"),
        ("OPENAI_API_KEY=sk-" + "T3Bl" + "x9Kq2LmN7pR4vW8yZ1aB3cD5eF6gH0jK", "sk-" + "T3Bl" + "x9Kq2LmN7pR4vW8yZ1aB3cD5eF6gH0jK"),
        ("export DB_PASSWORD=hunter22 && make deploy", "hunter22"),
        ("database:\n  password: S3cure!Pass99\n  host: db", "S3cure!Pass99"),
        ("mysql -u root --password=Sup3rS3cret! prod", "Sup3rS3cret!"),
        ("The admin password: P@55w0rd_prod (rotate monthly)", "P@55w0rd_prod"),
        ("redis password is hunter2", "hunter2"),
        ("root password was Tr0ub4dor&3 until March", "Tr0ub4dor&3"),
        ("https://api.weather.io/v1?city=Oslo&api_key=4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c&units=si", "4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"),
        ("mysql://root:p@55w0rd_prod@10.0.3.12/orders", "p@55w0rd_prod"),
        ("docker login -u ci -p Gh7kLq9mZ2vX ghcr.io", "Gh7kLq9mZ2vX"),
        ("truncated: -----BEGIN OPENSSH PRIVATE KEY-----\n" + "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", None),
    ],
)
def test_more_shapes(text: str, value: str | None) -> None:
    f = _one(text)
    if value is not None:
        assert text[f.start : f.end] == value


LOOK_ALIKES = [
    # git SHAs, digests, ids
    "Fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b (flaky test).",
    "git revert 9fceb02",
    "HEAD is now at 1a2b3c4d5e Merge pull request #412 from acme/fix-auth-token-refresh",
    "trace_id=123e4567-e89b-42d3-a456-426614174000 failed at the auth step",
    "The token: 550e8400-e29b-41d4-a716-446655440000 is the workspace id",
    "Docker image digest sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "md5sum of the dump is 5d41402abc4b2a76b9719d911017c592",
    "token_hash: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    # data URIs, identifiers, paths, versions, URLs
    "logo: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "Refactored get_user_password_hash_from_secret_store into the auth module.",
    "AbstractSingletonProxyFactoryBeanTokenProvider fails to wire.",
    "sk-learn-compat-shim-for-legacy-pipelines was removed",
    "MAX_TOKEN_COUNT_PER_REQUEST = 4096",
    "see src/auth/token_store.py and ~/.aws/credentials",
    "PWD=/home/dev/project make test",
    "release 4.0.0-rc.1+build.20240501.a1b2c3d",
    "DATABASE_URL=postgres://localhost:5432/app_dev",
    "clone via ssh://git@github.com:22/acme/infra.git",
    "sentry dsn https://public@o0.ingest.sentry.io/0",
    # prose
    "reset your password in settings",
    "the token expired yesterday",
    "Password: reset your password in settings, then log in again.",
    "the password is stored in Vault",
    "The secret is to warm the cache before the benchmark.",
    "GitHub tokens start with the ghp_ prefix and AWS keys with AKIA.",
    "the bearer token is read from the keychain on startup",
    # placeholders
    "password=<your-password>",
    "API_KEY=your_api_key_here",
    "DB_PASSWORD=${DB_PASSWORD}",
    "token: xxxxxxxxxxxxxxxx",
    "password: '********'",
    "password: changeme",
    "AWS docs example key AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "postgres://user:password@localhost/db",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    'curl -H "Authorization: Bearer $TOKEN" https://api.acme.io',
    "docker login -u ci -p $CI_REGISTRY_PASSWORD $CI_REGISTRY",
    # code
    'password = request.form["password"]',
    "def login(username: str, password: str) -> Token:",
    "api_key: Optional[str] = None",
    "const token = await getToken();",
    'SECRET_KEY = os.environ["SECRET_KEY"]',
    "existingSecret: postgres-credentials",
    "url = f'postgres://{user}:{password}@{host}/{db}'",
    "docker run -p 8080:80 -v $PWD:/app nginx",
    # public material
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----",
    "The deploy key header looks like -----BEGIN RSA PRIVATE KEY----- and must never be pasted.",
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_not_flagged(text: str) -> None:
    assert scan(text) == []


def test_redact_masks_value_and_keeps_context() -> None:
    text = "export DB_PASSWORD=hunter22 && make deploy"
    out, kinds = redact(text)
    assert out == "export DB_PASSWORD=[REDACTED:password_assignment] && make deploy"
    assert kinds == ["password_assignment"]


def test_redact_multiple_in_order() -> None:
    aws, gh = V["aws_access_key"], V["github_token"]
    text = f"Notes: key {aws} and DB_PASSWORD=Zq8#vLm2$pX; token {gh} for CI."
    found = scan(text)
    assert [f.kind for f in found] == ["aws_access_key", "password_assignment", "github_token"]
    assert [text[f.start : f.end] for f in found] == [aws, "Zq8#vLm2$pX", gh]
    out, kinds = redact(text)
    assert out == (
        "Notes: key [REDACTED:aws_access_key] and DB_PASSWORD=[REDACTED:password_assignment];"
        " token [REDACTED:github_token] for CI."
    )
    assert kinds == [f.kind for f in found]


def test_url_credentials_keep_user_and_host() -> None:
    out, _ = redact("DATABASE_URL=postgres://app:Xq7pL2mK9vR4@db.internal:5432/app")
    assert out == "DATABASE_URL=postgres://app:[REDACTED:url_credentials]@db.internal:5432/app"


def test_specific_kind_beats_generic_assignment() -> None:
    gh = V["github_token"]
    f = _one(f"GITHUB_TOKEN={gh}")
    assert f.kind == "github_token"


def test_unicode_offsets_are_char_offsets() -> None:
    # Characters whose lowercase form has a different length must not shift offsets.
    text = "İİİ ünïcødé — DB_PASSWORD=Zq8#vLm2$pX ✓"
    f = _one(text)
    assert text[f.start : f.end] == "Zq8#vLm2$pX"


def test_empty_and_trivial() -> None:
    assert scan("") == []
    assert redact("") == ("", [])
    assert redact("nothing here") == ("nothing here", [])


def test_nul_and_control_chars() -> None:
    text = "\x00password=\x00Zq8#vLm2$pX\x00\x07 token:\x00"
    f = _one(text)
    assert f.kind == "password_assignment"
    assert "Zq8#vLm2$pX" in text[f.start : f.end]
    out, _ = redact(text)
    assert "Zq8#vLm2$pX" not in out and scan(out) == []


# ---------------------------------------------------------------- properties

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400)
_FRAGMENTS = [CASES[k].format(v=V[k]) for k in CASES] + [
    "password", "token", "secret", "api_key", "=", ": ", '"', "'", "\n", " ", "&", "?", "@",
    "://", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "eyJ", ".",
    "AKIA", "hunter2", "[REDACTED:jwt]", "xox", "data:image/png;base64,", "--password ",
    "is", "mysql -p", "Bearer ", "AccountKey=", "ghp_", "changeme", "${X}", "é", "\x00",
]
_MIXED = st.lists(st.one_of(st.sampled_from(_FRAGMENTS), _TEXT.filter(lambda s: len(s) < 12)), max_size=12).map(
    "".join
)
_PROP = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_invariants(text: str, found: list[SecretFinding]) -> None:
    prev_end = 0
    for f in found:
        assert f.kind in KINDS
        assert prev_end <= f.start < f.end <= len(text)
        prev_end = f.end


@_PROP
@given(st.one_of(_TEXT, _MIXED))
def test_scan_never_raises_and_is_well_formed(text: str) -> None:
    _check_invariants(text, scan(text))


@_PROP
@given(st.one_of(_MIXED, _TEXT))
def test_redacted_text_has_no_findings(text: str) -> None:
    out, kinds = redact(text)
    first = [f.kind for f in scan(text)]
    assert kinds[: len(first)] == first
    assert scan(out) == []


@_PROP
@given(_TEXT)
def test_redact_is_identity_without_findings(text: str) -> None:
    if not scan(text):
        assert redact(text) == (text, [])


@_PROP
@given(_TEXT, st.sampled_from(sorted(CASES)), _TEXT)
def test_embedded_secret_found_with_any_padding(prefix: str, kind: str, suffix: str) -> None:
    # A secret between arbitrary text (separated by a newline) is still found
    # and redaction removes the value itself.
    body = CASES[kind].format(v=V[kind])
    text = f"{prefix}\n{body}\n{suffix}"
    out, kinds = redact(text)
    assert kinds, text
    assert V[kind] not in out


# ---------------------------------------------------------------- corpus


def _corpus() -> list[dict]:
    with CORPUS.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_corpus_precision_recall() -> None:
    rows = _corpus()
    secrets = [r for r in rows if r["secret"]]
    benign = [r for r in rows if not r["secret"]]
    assert len(secrets) >= 80 and len(benign) >= 70
    assert len({r["kind"] for r in secrets}) >= 20
    tp = sum(bool(scan(r["text"])) for r in secrets)
    fp = sum(bool(scan(r["text"])) for r in benign)
    precision = tp / (tp + fp)
    recall = tp / len(secrets)
    assert precision == 1.0, precision
    assert recall >= 0.98, recall
