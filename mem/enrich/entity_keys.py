"""What an entity's key is: the known names, their other spellings, and ``canonical``, the one
normalization shared by entity keys and query words ("PostgreSQL", "postgres" and "pg" all meet on
``postgres``). ``KNOWN`` and ``ALIASES`` are public and may be extended at runtime: ``canonical``
and the scanner of :mod:`mem.enrich.entities` follow when they grow. Stdlib only.
"""

from __future__ import annotations

import re

# The known names by type, lower-case and space-separated.
_TOOLS = """
git github gitlab bitbucket docker podman kubernetes helm terraform pulumi ansible vagrant jenkins
circleci nginx apache haproxy traefik istio redis memcached valkey postgres mysql mariadb sqlite
mongodb cassandra couchdb dynamodb elasticsearch opensearch clickhouse duckdb neo4j influxdb
cockroachdb supabase firebase kafka rabbitmq zookeeper etcd consul nats prometheus grafana datadog
splunk kibana logstash jaeger aws gcp heroku vercel netlify cloudflare digitalocean s3 ec2 ecs eks
gke cloudwatch bigquery redshift npm npx yarn pnpm pip pipx conda uv rustup gradle bazel cmake gcc
clang llvm zsh powershell vim neovim emacs vscode intellij pycharm xcode tmux ssh wget jq grep sed
awk rsync cron systemd linux ubuntu debian fedora centos macos ios android python javascript
typescript java kotlin scala go ruby php perl haskell erlang clojure lua ocaml fsharp csharp cpp
zig deno node chrome firefox jira trello figma openai anthropic claude chatgpt copilot ollama
huggingface onnx cuda wasm kubectl sqlean sqlite-vec docker-compose github-actions homebrew brew apt
make rust swift dotnet
"""
_PACKAGES = """
numpy pandas scipy matplotlib seaborn plotly scikit-learn pytorch tensorflow keras jax langchain
llamaindex pydantic fastapi flask django sqlalchemy alembic celery requests httpx aiohttp pytest
hypothesis unittest mypy ruff black flake8 pylint isort tox nox typer click rich orjson ujson
networkx uvicorn gunicorn jinja boto3 react vue angular svelte next nuxt jquery redux tailwind
bootstrap webpack vite babel eslint prettier jest mocha vitest cypress playwright selenium
puppeteer lodash axios rails spring hibernate junit tokio serde numba polars dask airflow dbt
mlflow streamlit gradio opencv pillow sympy onnxruntime tokenizers transformers prisma protobuf
express nestjs spacy nltk xgboost lightgbm
"""
# Product names with odd capitals ("YouTube") that would otherwise look like code identifiers.
_BRANDS = """
youtube linkedin iphone ipad macbook tiktok whatsapp facebook instagram twitter reddit wordpress
shopify paypal netflix spotify airbnb playstation powerpoint photoshop google microsoft amazon
nvidia
"""
# Software concepts worth linking memories by, even when written in lower case.
_CONCEPTS = """
cache database api endpoint schema migration index query queue worker webhook auth
authentication authorization oauth jwt token session cookie cors csrf xss ssl tls dns cdn proxy
container cluster deployment pipeline ci lint linter formatter logging logger metric monitoring
tracing latency throughput benchmark embedding tokenizer llm rag regex parser compiler runtime
dependency lockfile virtualenv venv config secret credential permission repo repository branch
commit rebase refactor bug regression traceback stacktrace timeout retry deadlock thread
coroutine callback middleware router handler serializer orm sql nosql json yaml toml csv xml html
css markdown http https graphql grpc rest websocket tcp udp cli gui frontend backend microservice
monorepo sharding replication transaction mutex checksum encryption serialization pagination
dashboard incident outage rollback hotfix changelog semver sha256 utf8 base64 md5 ipv4 ipv6 http2
oauth2 i18n e2e url uri sdk ttl sla mvp vpn ide pr mr
load-balancer race-condition memory-leak pull-request merge-request rate-limit feature-flag
unit-test integration-test connection-pool env-var dead-letter-queue circuit-breaker
"""

KNOWN: dict[str, str] = {
    **{w: "tool" for w in _TOOLS.split()},
    **{w: "package" for w in _PACKAGES.split()},
    **{w: "name" for w in _BRANDS.split()},
    **{w.replace("-", " "): "concept" for w in _CONCEPTS.split()},
}

ALIASES: dict[str, str] = {
    "postgresql": "postgres", "pg": "postgres", "psql": "postgres", "pgsql": "postgres",
    "k8s": "kubernetes", "kube": "kubernetes", "js": "javascript", "ecmascript": "javascript",
    "ts": "typescript", "py": "python", "python3": "python", "py3": "python", "golang": "go",
    "node.js": "node", "nodejs": "node", "next.js": "next", "nextjs": "next", "vue.js": "vue",
    "vuejs": "vue", "react.js": "react", "reactjs": "react", "angularjs": "angular",
    "nest.js": "nestjs", "nuxt.js": "nuxt", "express.js": "express", "mongo": "mongodb",
    "elastic": "elasticsearch", "memcache": "memcached", "sqlite3": "sqlite", "mysql8": "mysql",
    "sklearn": "scikit-learn", "torch": "pytorch", "tailwindcss": "tailwind", "jinja2": "jinja",
    "c++": "cpp", "cplusplus": "cpp", "c#": "csharp", "f#": "fsharp", ".net": "dotnet",
    "hugging face": "huggingface", "hf": "huggingface", "osx": "macos", "mac os": "macos",
    "os x": "macos", "vs code": "vscode", "visual studio code": "vscode", "gh": "github",
    "github actions": "github-actions", "gha": "github-actions", "docker compose": "docker-compose",
    "amazon web services": "aws", "google cloud": "gcp", "google cloud platform": "gcp",
    "ruby on rails": "rails", "ror": "rails", "spring boot": "spring", "rabbit mq": "rabbitmq",
    "open ai": "openai", "chat gpt": "chatgpt", "homebrew": "brew", "dynamo": "dynamodb",
    "postgre": "postgres", "kafka streams": "kafka", "gpt": "chatgpt",
    # Concepts written several ways.
    "apis": "api", "db": "database", "dbs": "database", "databases": "database", "authn": "authentication",
    "authz": "authorization", "repos": "repo", "envvar": "env var", "env vars": "env var",
    "environment variable": "env var", "environment variables": "env var", "regexp": "regex",
    "regexes": "regex", "lb": "load balancer", "k/v": "key value", "ci/cd": "ci",
    "pull requests": "pull request", "merge requests": "merge request", "e2e tests": "e2e",
    "end to end": "e2e", "utf-8": "utf8", "end-to-end": "e2e", "llms": "llm", "large language model": "llm",
}

# Words that look plural but are not (and -s surnames), so plural folding leaves them alone.
_NOT_PLURAL = frozenset("""
this thus plus does goes less always perhaps whereas besides sometimes news series species lens
bias alias atlas canvas chaos cosmos kudos analysis basis axis thesis status corpus virus bonus
focus campus census consensus versus nexus radius genius christmas texas paris athens wales
jones williams davis adams harris roberts evans edwards collins stevens phillips parsons simmons
jennings hayes james charles thomas nicholas douglas lucas marcus carlos dennis chris lewis louis
frances doris lois gladys iris alexis morris travis mathematics physics economics politics ethics
graphics analytics statistics gas has was yes its his hers ours yours theirs kubernetes postgres
redis pandas jenkins aws ios macos js ts dns https css sass express less numpy various previous
famous serious nervous anxious obvious gorgeous delicious itertools devops sales
""".split())

_SPACES = re.compile(r"\s+")
_LEAD = " \t\r\n\"'`“”‘’([{<"
_TRAIL_PUNCT = " \t\r\n\"'`“”‘’.,;:!?"
_TRAIL = _TRAIL_PUNCT + ")]}>"
ACRONYM_PLURAL = re.compile(r"[A-Z]{2,}s")  # "APIs", "IDs": one API
VERSION = re.compile(r"v?\d+(?:\.\d+)+(?:[-+.]?[a-z]+\.?\d*)?|v\d+")  # "v1.2", "3.11.0rc1"
_PLAIN = re.compile(r"[a-z]+")
_IRREGULAR = {"caches": "cache", "aches": "ache", "headaches": "headache", "niches": "niche",
              "movies": "movie", "cookies": "cookie", "pies": "pie", "ties": "tie", "lies": "lie",
              "indices": "index", "matrices": "matrix", "vertices": "vertex", "children": "child",
              "people": "person", "men": "man", "women": "woman"}


def _singular(word: str) -> str:
    """Simple English plural folding for plain lower-case words ("caches" -> "cache")."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) < 4 or word[-1] != "s" or word in _NOT_PLURAL or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"  # queries -> query
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]  # classes -> class, patches -> patch, indexes -> index
    return word[:-1]


def _canonical_word(word: str) -> str:
    alias = ALIASES.get(word)
    if alias is not None:
        return alias
    if word in KNOWN:
        return word
    if "-" in word:  # "unit-tests" is the known "unit test"
        parts = word.split("-")
        for spaced in (" ".join(parts), " ".join(parts[:-1] + [_singular(parts[-1])])):
            if spaced in KNOWN or spaced in ALIASES:
                return ALIASES.get(spaced, spaced)
    return _singular(word) if _PLAIN.fullmatch(word) else word


_canonical_memo: dict[str, str] = {}
_memo_version: list[tuple[int, int]] = [(-1, -1)]


def canonical(name: str) -> str:
    """Normalized key for a name: lower case, aliases folded, a plain trailing plural dropped.

    Applied to extracted entities and to query words alike, so both meet on the same key.

    >>> [canonical(n) for n in ("PostgreSQL", "pg", "Postgres", "k8s", "caches", "get_user()")]
    ['postgres', 'postgres', 'postgres', 'kubernetes', 'cache', 'get_user']
    >>> canonical("Python 3.12"), canonical("v1.2.3"), canonical("./src/app.py"), canonical("APIs")
    ('python 3.12', '1.2.3', 'src/app.py', 'api')
    """
    if not isinstance(name, str):
        return ""
    # Memoised: the same few hundred names recur across memories and queries. Reset when the
    # public tables grow, or when the memo itself grows too big.
    version = (len(KNOWN), len(ALIASES))
    if version != _memo_version[0] or len(_canonical_memo) > 8192:
        _canonical_memo.clear()
        _memo_version[0] = version
    key = _canonical_memo.get(name)
    if key is None:
        key = _canonical_memo[name] = _canonical(name)
    return key


def _canonical(name: str) -> str:
    text = _SPACES.sub(" ", name).lstrip(_LEAD).rstrip(_TRAIL_PUNCT)
    if text.endswith("()"):  # "get_user()" and "get_user" are one function
        text = text[:-2]
    text = text.rstrip(_TRAIL)
    if ACRONYM_PLURAL.fullmatch(text):  # "APIs", "IDs"
        text = text[:-1]
    text = text.lower()
    if text.endswith(("'s", "’s")):
        text = text[:-2]
    if not text:
        return ""
    if text in ALIASES:
        return ALIASES[text]
    if "://" in text or text.startswith("www."):  # scheme and "www." dropped: http and https meet
        text = re.sub(r"^[a-z+]+://", "", text)
        return (text[4:] if text.startswith("www.") else text).rstrip("/")
    if "/" in text and " " not in text:
        while text.startswith("./"):
            text = text[2:]
        return text.rstrip("/") or text
    if VERSION.fullmatch(text):
        return text.lstrip("v")
    words = text.split(" ")
    if len(words) == 1:
        return _canonical_word(text)
    # Aliases word by word ("py 3.12" -> "python 3.12"); the plural sits on the head noun, the last.
    words = [ALIASES.get(w, w) for w in words]
    if VERSION.fullmatch(words[-1]):
        words[-1] = words[-1].lstrip("v")
    else:
        words[-1] = _canonical_word(words[-1])
    return " ".join(words)


def plurals(word: str) -> list[str]:
    """Plural spellings of a concept, so "caches" is found by the same lower-case word list."""
    last = word.rsplit(" ", 1)[-1]
    if not _PLAIN.fullmatch(last) or len(last) < 3:
        return []
    if last.endswith("y") and last[-2:-1] not in "aeiou":
        forms = [word[:-1] + "ies"]
    elif last.endswith(("s", "x", "ch", "sh")):
        forms = [word + "es"]
    else:
        forms = [word + "s"]
    return [f for f in forms if canonical(f) == canonical(word)]
