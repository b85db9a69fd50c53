"""Zero-LLM entity extraction: people, names, code identifiers, paths, packages, URLs, versions.

Entities link memories that talk about the same thing, so every entity carries a normalized
``key`` ("PostgreSQL", "postgres" and "pg" all key to ``postgres``) and the same normalization,
``canonical``, is applied to query words. Pure regex plus small word lists; stdlib only.

>>> [(e.key, e.type) for e in extract_entities("Caroline moved the cache to PostgreSQL in src/db.py")]
[('caroline', 'person'), ('cache', 'concept'), ('postgres', 'tool'), ('src/db.py', 'path')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mem.enrich.lazy_regex import trie
from mem.enrich.lexicon import LABEL_WORDS

__all__ = ["ALIASES", "KNOWN", "Entity", "canonical", "extract_entities"]


@dataclass(frozen=True)
class Entity:
    """One thing a text mentions: ``key`` is the normalized identity, ``surface`` the text as written."""

    key: str
    surface: str
    type: str  # person|name|identifier|path|package|tool|url|version|quoted|concept


# --------------------------------------------------------------------------------------------
# Vocabulary. Lower-case, space-separated; extend KNOWN / ALIASES at runtime if needed.
# --------------------------------------------------------------------------------------------

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
# Known names that are also everyday words: only counted when capitalised mid-sentence
# ("we chose Rust"), in capitals ("REST") or in backticks, never in lower case ("rust on the
# car", "make sure", "a therapy session", "a social worker").
_AMBIGUOUS = frozenset("""
go rust swift make express next react angular black rich click requests hypothesis celery jest
mocha rails spring bootstrap babel prettier cypress playwright selenium puppeteer hibernate
transformers tokenizers airflow pillow ruby java apache
rest rag mr pr ide cookie secret session worker branch commit thread token incident permission
container bug timeout callback
""".split())
# Known names that are also first names: capitalised they are treated as names, not tools.
_PERSONISH = frozenset({"ruby", "julia"})

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

# Everyday capitalised words that are never names on their own, wherever they stand.
_STOP = frozenset("""
a an the and or but nor so yet for of in on at to from by with without about into onto over under
after before during since until till via per than then thus also as if because though although
while whereas whether either neither both each every any all some no not none nothing everything
something anything everyone someone anyone nobody everybody somebody i me my mine myself we us our
ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its
itself they them their theirs themselves this that these those there here what which who whom
whose when where why how is am are was were be been being do does did done doing have has had
having can could shall should will would may might must let lets oh ok okay yes yeah yep yup nope
hi hey hello thanks thank please sorry wow well sure cool great nice awesome lol omg btw fyi asap
imo tbh today yesterday tomorrow tonight now later soon recently morning afternoon evening night
week weekend month year day days weeks months years monday tuesday wednesday thursday friday
saturday sunday january february march april june july august september october november december
mon tue tues wed thu thur thurs fri sat sun jan feb mar apr jun jul aug sep sept oct nov dec
spring summer fall autumn winter mr mrs ms miss dr prof sir madam mom dad mum mommy daddy don won
isn doesn didn couldn shouldn wouldn aren wasn weren haven hasn hadn ain ll ve re im ive dear
note notes todo fixme xxx hack warning error info debug tip faq etc vs
""".split())
# Capitalised only because they open a sentence: ignored there, and they never start a name.
_STARTERS = frozenset("""
just also still even maybe perhaps actually really definitely probably finally first second third
next last then after afterwards later earlier however therefore anyway besides meanwhile instead
otherwise overall luckily unfortunately fortunately honestly basically update updated added fixed
removed changed use using used run running make made check see remember decided switched moved
tried need needs wanted want think thought know knew feel felt love loved like liked got get went
go going come came started start finished working work looks look looking sounds sound seems good
bad new old met saw told asked called took gave said left ran read set put sent won lost paid
bought found heard kept meant brought built sure glad happy excited thinking wondering hope hoped
congrats congratulations yay haha hmm um uh ah aw ooh whoa plus sometimes always never often usually
once twice another other such many much more most few several our everyone anyway wait listen look
""".split())
# Following a name, these make it a person ("Jon said", "Gina asked").
_PERSON_VERBS = frozenset("""
said says told tells asked asks thinks thought mentioned mentions suggested suggests replied
replies wrote writes explained explains recommended recommends agreed agrees shared shares wants
wanted loves loved likes liked prefers preferred feels felt decided decides
""".split())
# Before a name, these make it a person ("Dr. Smith", "my friend Jake").
_PERSON_BEFORE = frozenset("""
mr mrs ms miss dr prof sir madam aunt uncle grandma grandpa cousin friend friends sister brother
wife husband son daughter mom dad mother father boss colleague coworker teammate partner
girlfriend boyfriend neighbor neighbour manager mentor
""".split())
_FIRST_NAMES = frozenset("""
aaron abby abigail adam adrian aisha alan albert alex alexander alexis alice alicia allison amanda
amber amy ana andre andrea andrew andy angela angelina ann anna anne anthony antonio april ashley
audrey austin ava barbara ben benjamin beth betty bill billy bob brad brandon brenda brian brittany
bruce bryan calvin cameron carl carlos carol caroline carolyn catherine charles charlie charlotte
chloe chris christian christina christine christopher cindy claire clara cody colin connor craig
crystal cynthia dan daniel danielle dave david dawn dean debbie deborah debra denise dennis derek
diana diane dominic donald donna doris dorothy douglas dylan ed eddie edward elena eli elijah
elizabeth ella ellen emily emma eric erica erin ethan eva evan evelyn faith fiona frances francis
frank fred gabriel gary gavin george gina grace greg gregory hannah harold harry heather helen
henry holly howard ian isaac isabella jack jackson jacob jake james jamie jane janet janice jason
jasmine jean jeff jeffrey jennifer jenny jeremy jerry jess jessica jill jim jimmy joan joanna joe
joel john johnny jolene jon jonathan jordan jose joseph josh joshua joy joyce juan judith judy
julia julian julie justin karen kate katherine kathleen kathy katie kayla keith kelly ken kenneth
kevin kim kimberly kyle laura lauren leah lee leo leon linda lisa liam logan lois louis lucas lucy
luis luke lydia madison maggie marcus margaret maria marie marilyn mark martha martin mary mason
matt matthew maya megan mel melanie melissa michael michelle mike mila molly monica morgan nancy
natalie nate nathan nicholas nick nicole noah nora olivia oliver oscar owen pam pamela patricia
patrick paul paula peter philip phillip priya rachel raj ralph randy ray rebecca richard rick
rita rob robert robin roger ronald rose ruby russell ruth ryan sam samantha samuel sandra sara
sarah scott sean sebastian sharon shawn sophia sophie stephanie stephen steve steven sue susan
tammy tanya taylor teresa terry theresa thomas tiffany tim timothy tina todd tom tony tracy tyler
valerie vanessa victor victoria vincent virginia walter wayne wendy william willie zach zoe
""".split())
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
_FILE_EXTS = frozenset("""
py pyi pyx ipynb js jsx ts tsx mjs cjs json jsonl yaml yml toml ini cfg conf md rst txt csv tsv
sql sh bash zsh fish go rs rb java kt kts c h cpp hpp cc cs swift php html htm css scss sass less
lock env log xml proto tf lua vue svelte gradle mk bat ps1 db sqlite parquet whl gz tgz zip tar pdf
png jpg jpeg gif svg webp mp3 mp4 wav onnx pt pth pkl npy npz bin so dll dylib exe jar r rmd
""".split())
# Extension-less file names common enough to recognise as paths.
_FILE_NAMES = frozenset("""
makefile dockerfile readme license changelog procfile gemfile rakefile jenkinsfile vagrantfile
justfile containerfile
""".split())
_DIRS = frozenset("src lib libs tests test docs bin app apps pkg cmd scripts config etc var usr tmp "
                  "home opt node_modules build dist vendor internal examples assets static public".split())
_TLDS = frozenset("com org net io dev ai app co edu gov uk de fr info me sh xyz cloud".split())
_ABBREVIATIONS = frozenset("e.g i.e a.m p.m etc vs ph.d u.s u.k n.b".split())
_VERSION_BEFORE = frozenset("""
version ver release to from upgrade upgraded upgrading downgrade downgraded bump bumped pin pinned
on requires require needs need using use supports support at
""".split())
_UNIT_AFTER = re.compile(
    r"\s*(?:%|percent|ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?"
    r"|kg|km|mi|miles?|lbs?|gb|mb|kb|tb|x|times|k|m|million|billion|stars?|points?|pts|dollars?"
    r"|usd|eur|degrees?|inch(?:es)?|ft|feet|cm|mm|out)\b", re.IGNORECASE)


# --------------------------------------------------------------------------------------------
# canonical: the one normalization shared by entity keys and query words
# --------------------------------------------------------------------------------------------

_SPACES = re.compile(r"\s+")
_SPACES_OR_DASHES = re.compile(r"[\s-]+")
_LEAD = " \t\r\n\"'`“”‘’([{<"
_TRAIL_PUNCT = " \t\r\n\"'`“”‘’.,;:!?"
_TRAIL = _TRAIL_PUNCT + ")]}>"
_ACRONYM_PLURAL = re.compile(r"[A-Z]{2,}s")
_VERSION = re.compile(r"v?\d+(?:\.\d+)+(?:[-+.]?[a-z]+\.?\d*)?|v\d+")
_PLAIN = re.compile(r"[a-z]+")
_SPACED = r"[\s-]+"  # a space inside a known name: "pre commit" matches "pre-commit" too
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
    if _ACRONYM_PLURAL.fullmatch(text):  # "APIs", "IDs"
        text = text[:-1]
    text = text.lower()
    if text.endswith(("'s", "’s")):
        text = text[:-2]
    if not text:
        return ""
    if text in ALIASES:
        return ALIASES[text]
    if "://" in text or text.startswith("www."):
        return _canonical_url(text)
    if "/" in text and " " not in text:
        return _canonical_path(text)
    if _VERSION.fullmatch(text):
        return text.lstrip("v")
    words = text.split(" ")
    if len(words) == 1:
        return _canonical_word(text)
    # Aliases word by word ("py 3.12" -> "python 3.12"); the plural sits on the head noun, the last.
    words = [ALIASES.get(w, w) for w in words]
    if _VERSION.fullmatch(words[-1]):
        words[-1] = words[-1].lstrip("v")
    else:
        words[-1] = _canonical_word(words[-1])
    return " ".join(words)


def _canonical_url(text: str) -> str:
    # Scheme and "www." dropped so http/https spellings of one page share a key.
    text = re.sub(r"^[a-z+]+://", "", text)
    return text[4:].rstrip("/") if text.startswith("www.") else text.rstrip("/")


def _canonical_path(text: str) -> str:
    while text.startswith("./"):
        text = text[2:]
    return text.rstrip("/") or text


# --------------------------------------------------------------------------------------------
# The scanner: one regex pass, alternatives tried in order at each word start
# --------------------------------------------------------------------------------------------


def _plurals(word: str) -> list[str]:
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


_CAP = r"[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+(?![\w(]|[./@:]\w|-[A-Z])"
_CONNECTOR = r"(?:of|de|van|von|der|den|da|del|du|la|le)"


def _build_scanner() -> re.Pattern:
    lower_words: set[str] = set()
    for word, kind in list(KNOWN.items()) + [(a, KNOWN.get(t, "concept")) for a, t in ALIASES.items()]:
        if word in _AMBIGUOUS or not word or word != word.lower():
            continue
        lower_words.add(word)
        if kind == "concept":
            lower_words.update(_plurals(word))
    single = sorted(w for w in lower_words if " " not in w)
    multi = sorted(w for w in lower_words if " " in w)
    # Every alternative starts at a token start (the shared look-behind): mid-word positions are
    # rejected in one step, which is most of what keeps a scan of 200 characters near 20 us.
    alternatives = [
        r"(?<![\w/.@~*+-])(?:"
        + "|".join([
            r"(?P<url>(?:https?|ftp|file|ssh|git)://[^\s<>\"'`]+|www\.[^\s<>\"'`]+)",
            r"(?P<tick>`(?P<tick_in>[^`\n]{1,200})`)",
            # Only the opening quote is consumed, so the words inside are still scanned.
            r"(?P<dq>[\"“](?=(?P<dq_in>[^\"“”\n]{1,60})[\"”]))",
            rf"(?P<multi>(?i:{trie(multi, _SPACED)})(?![\w-]))" if multi else r"(?P<multi>(?!))",
            rf"(?P<known>{trie(single, _SPACED)}(?![\w-]|\.\w))",
            r"(?P<flag>--[A-Za-z][\w-]*)",
            # Everything below needs a capital, digit, inner dot or one of /_()@~*\ in the token:
            # one cheap look-ahead rules it out for the plain lower-case words that make up most text.
            r"(?=[\w@*+~:\\-]*(?:[A-Z0-9À-Þ/_(@~*\\#]|\.[\w/.]))(?:" + "|".join([
                # Names first (most capitalised tokens are), guarded so "Node.js", "Foo()",
                # "Jean-Luc" and "Src/x" fall through to the code-shaped alternatives below.
                rf"(?P<cap>{_CAP}(?:[ ](?:{_CONNECTOR}[ ](?:the[ ])?)?{_CAP})*)",
                r"(?P<mixed>[a-z]+[A-Z]\w*|[A-Z]+[a-z0-9]*[A-Z]\w*|[A-Za-z]+\d\w*)(?![\w(]|[./@:]\w)",
                r"(?P<win>[A-Za-z]:\\[^\s\"'<>|]+)",
                r"(?P<scoped>@[\w.-]+/[\w.-]+)",
                r"(?P<path>(?:~|\.{1,2})?/[\w.@+*~-][\w.@+*~/-]*|[\w.@*+~-]+/[\w.@+*~/-]*"
                r"|\*{1,2}\.\w+|\*\*/[\w.*/-]+)",
                r"(?P<cpp>[Cc](?:\+\+|#)(?![\w+#])|[Ff]#(?!\w))",
                r"(?P<ver>v\d+(?:\.\d+)*(?:[-+.]?(?:rc|alpha|beta|dev|post|pre)\.?\d*)?(?![\w]|\.\d)"
                r"|\d+\.\d+(?:\.\d+)*(?:-?(?:rc|alpha|beta|dev|post|pre)\.?\d*)?(?![\w]|\.\d))",
                r"(?P<sha>(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w]))",
                r"(?P<dotfile>\.[A-Za-z][\w.-]*)",
                r"(?P<dotted>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?)",
                r"(?P<call>[A-Za-z_]\w*\(\))",
                r"(?P<snake>[A-Za-z_]\w*_\w*)",
                r"(?P<hyph>[A-Z][a-z]*(?:-[A-Z][A-Za-z]*)+)(?![\w])",
                # Hyphenated names with capitals or digits: "all-MiniLM-L6-v2", "gpt-4", "utf-8".
                r"(?P<kebab>[A-Za-z][\w]*(?:-[\w]+)+)(?![\w])",
            ]) + ")",
        ])
        + ")",
    ]
    return re.compile("|".join(alternatives))


_scanner_cache: dict[tuple[int, int], re.Pattern] = {}


def _scanner() -> re.Pattern:
    """The compiled scanner, rebuilt only when KNOWN or ALIASES grew (they are public, extensible)."""
    version = (len(KNOWN), len(ALIASES))
    pattern = _scanner_cache.get(version)
    if pattern is None:
        _scanner_cache.clear()
        pattern = _scanner_cache[version] = _build_scanner()
    return pattern


_SPEAKER = re.compile(r"^[ \t>*_-]*([A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2})[*_]*[ \t]*:(?!//)", re.MULTILINE)
_SPEAKER_STOP = frozenset("""
note todo fixme q a user assistant human ai system error warning update summary example answer
question fix bug task decision context problem solution result status step output input reason
tip important caution hint goal issue source date time subject re fwd cc bcc from to
""".split()) | LABEL_WORDS  # the labels a note opens with ("Correction: ...") are no speakers either
_PREV_WORD = re.compile(r"([A-Za-z]+)\.?[\s,]*$")
_NEXT_WORD = re.compile(r"[\s,]*([A-Za-z]+)")


# --------------------------------------------------------------------------------------------
# Extraction
# --------------------------------------------------------------------------------------------


class _Collector:
    """Entities in order of first appearance. A name only seen opening a sentence stays tentative
    until it also shows up mid-sentence (then "Deploying" at a sentence start is never a name)."""

    __slots__ = ("items", "confirmed")

    def __init__(self) -> None:
        self.items: list[tuple[Entity, bool]] = []
        self.confirmed: set[str] = set()

    def add(self, key: str, surface: str, kind: str, sure: bool = True) -> None:
        if not key:
            return
        self.items.append((Entity(key, surface, kind), sure))
        if sure:
            self.confirmed.add(key)

    def result(self) -> list[Entity]:
        seen: dict[str, Entity] = {}
        for entity, sure in self.items:
            if entity.key not in seen and (sure or entity.key in self.confirmed):
                seen[entity.key] = entity
        return list(seen.values())


def _sentence_initial(text: str, pos: int) -> bool:
    """Whether ``pos`` opens a sentence, a line or a list item (so capitals there prove little)."""
    i = pos - 1
    while i >= 0 and text[i] in " \t\"'“‘(*[->#•_":
        i -= 1
    if i < 0 or text[i] in "\n\r.!?:;…":
        if i >= 0 and text[i] == ".":  # "Dr. Smith": a title's dot does not end a sentence
            prev = _PREV_WORD.search(text, max(0, i - 8), i + 1)
            if prev and prev.group(1).lower() in _PERSON_BEFORE:
                return False
        return True
    return False


def _known_type(word: str, key: str, initial: bool) -> str | None:
    """Type for a known tool/package/brand spelled ``word``, or None when it is not one here."""
    kind = KNOWN.get(key)
    if kind is None:
        return None
    lower = word.lower()
    if lower in _PERSONISH and word[:1].isupper():
        return None  # "Ruby said..." is a person before it is a language
    if lower in _AMBIGUOUS and (initial or word.islower()):
        return None  # "Make sure...", "we go there"
    return kind


def _person_context(text: str, start: int, end: int, speakers: set[str], first: str, key: str) -> bool:
    """Evidence that a name is a person: a known first name, a speaker, "Dr."/"my friend" before
    it, or "said"/"asked" after it."""
    if first.lower() in _FIRST_NAMES or first.lower() in speakers or key in speakers:
        return True
    prev = _PREV_WORD.search(text, max(0, start - 16), start)
    if prev and prev.group(1).lower() in _PERSON_BEFORE:
        return True
    nxt = _NEXT_WORD.match(text, end)
    return bool(nxt and nxt.group(1).lower() in _PERSON_VERBS)


def _starter_like(word: str) -> bool:
    lower = word.lower()
    return lower in _STARTERS or lower.endswith(("ly", "ing", "ed")) and lower not in _FIRST_NAMES


def _cap_run(out: _Collector, text: str, words: list[tuple[int, str]], initial: bool,
             speakers: set[str]) -> None:
    """One run of capitalised words that survived splitting: a person or a proper name."""
    while words and words[-1][1] in _CONNECTOR_WORDS:  # "Bank of" -> "Bank"
        words = words[:-1]
    if not words:
        return
    start, end = words[0][0], words[-1][0] + len(words[-1][1])
    surface = text[start:end]
    possessive = text.startswith(("'s", "’s"), end)
    key = canonical(surface)
    person = _person_context(text, start, end, speakers, words[0][1], key)
    # Mid-sentence capitals are names; at a sentence start we need some further evidence.
    sure = not initial or person or possessive or len(words) > 1
    out.add(key, surface, "person" if person else "name", sure)


_CONNECTOR_WORDS = frozenset("of de van von der den da del du la le the".split())


def _cap_sequence(out: _Collector, text: str, m: re.Match, speakers: set[str]) -> None:
    """Split "Yesterday Caroline and Melanie Smith" style runs into names, dropping stop words."""
    initial = _sentence_initial(text, m.start())
    run: list[tuple[int, str]] = []  # (offset, word) of the name being built
    run_initial = False

    def flush() -> None:
        nonlocal run
        if run:
            _cap_run(out, text, run, run_initial, speakers)
        run = []

    pos = m.start()
    for index, word in enumerate(m.group().split(" ")):
        lower = word.lower()
        opens_sentence = initial and index == 0
        key = ALIASES.get(lower, lower)
        kind = _known_type(word, key, opens_sentence)
        if lower in _CONNECTOR_WORDS:
            if run:  # "Bank of America"; a trailing "of" is trimmed by _cap_run
                run.append((pos, word))
        elif lower in _FILE_NAMES:  # "Makefile", "Dockerfile"
            flush()
            out.add(lower, word, "path")
        elif kind is not None:  # "Redis" inside "Deploying Redis Cluster"
            flush()
            out.add(key, word, kind)
        elif lower in _STOP or (opens_sentence and _starter_like(word) and lower not in speakers):
            flush()
        else:
            if not run:
                run_initial = opens_sentence
            run.append((pos, word))
        pos += len(word) + 1
    flush()


def _path_ok(p: str) -> bool:
    """Rejects slashed words that are not paths: "and/or", "client/server", "24/7", dates."""
    if not any(c.isalpha() for c in p):
        return False
    if p.startswith(("/", "./", "../", "~/", "*")):
        return len(p) > 1
    parts = [s for s in p.split("/") if s]
    last = parts[-1] if parts else ""
    has_ext = "." in last and last.rsplit(".", 1)[1].lower() in _FILE_EXTS
    if len(parts) >= 3 or has_ext or last.lower() in _FILE_NAMES:
        return True
    if len(parts) == 2:
        return p.endswith("/") or parts[0].lower() in _DIRS or parts[0].startswith(".")
    return p.endswith("/") and len(parts[0]) > 2


def _code_word(out: _Collector, word: str) -> None:
    """A token shaped like code (dots, underscores, inner capitals, digits): such spellings are
    never everyday words, so known names count here even if ambiguous ("GitHub", "Node.js")."""
    lower = word.lower()
    bare = lower[:-2] if lower.endswith("()") else lower
    key = canonical(word)
    kind = KNOWN.get(key)
    if kind is not None and kind != "concept":
        out.add(key, word, kind)
        return
    if "." in bare and not lower.endswith("()"):
        parts = bare.split(".")
        if bare in _ABBREVIATIONS or all(len(p) == 1 for p in parts):
            return
        if parts[-1] in _FILE_EXTS:
            out.add(key, word, "path")
            return
        if parts[-1] in _TLDS and word.islower() and len(parts) <= 3:
            out.add(key, word, "url")
            return
    if word.isupper() and "_" not in word and "." not in word:
        _acronym(out, word)
        return
    if bare in _FILE_NAMES:
        out.add(key, word, "path")
        return
    out.add(key, word, "concept" if key in KNOWN else "identifier")


def _acronym(out: _Collector, word: str) -> None:
    """All-capital words ("API", "LGBTQ"): concepts when known, else names; noise ("OK") dropped."""
    key = canonical(word)
    if key in _STOP or len(key) < 2:
        return
    kind = KNOWN.get(key)
    out.add(key, word, kind if kind else "name")


_SURNAME_PREFIX = re.compile(r"(?:Mc|Mac|De|Di|Da|La|Le|Van|Von|O)[A-Z][a-z]+")


def _mixed(out: _Collector, word: str) -> None:
    """Inner capitals or digits: "parseArgs", "GitHub", "API", "k8s", "McKenzie"."""
    if "_" not in word and (word.isupper() or _ACRONYM_PLURAL.fullmatch(word)):  # "API", "APIs"
        _acronym(out, word)
    elif _SURNAME_PREFIX.fullmatch(word) and canonical(word) not in KNOWN:
        out.add(canonical(word), word, "name")  # "McKenzie", "DeShawn"
    else:
        _code_word(out, word)


def _version(out: _Collector, text: str, m: re.Match, last: tuple[int, Entity | None]) -> None:
    """Versions: always "v1.2" and "1.2.3"; a bare "3.11" only after a tool or a word like "to"."""
    surface = m.group()
    start = m.start()
    prev_end, prev = last
    after_tool = prev is not None and prev.type in ("tool", "package") and prev_end == start - 1
    if after_tool:
        surface = text[start - 1 - len(prev.surface):m.end()]  # "Python 3.12"
    elif not surface.startswith("v") and surface.count(".") == 1:
        if (start > 0 and text[start - 1] in "$€£¥#") or _UNIT_AFTER.match(text, m.end()):
            return  # "$2.50", "3.5 hours": amounts, not versions
        prev_word = _PREV_WORD.search(text, max(0, start - 16), start)
        if not prev_word or prev_word.group(1).lower() not in _VERSION_BEFORE:
            return
    out.add(canonical(surface), surface, "version")


def _speakers(text: str) -> set[str]:
    """Names opening a line as "Caroline: ..." (chat transcripts): those are people."""
    if ":" not in text:
        return set()
    names = set()
    for m in _SPEAKER.finditer(text):
        name = m.group(1).rstrip(".")
        if name.lower() not in _SPEAKER_STOP and name.lower() not in _STOP and name.lower() not in KNOWN:
            names.add(name.lower())
    return names


def extract_entities(text: str) -> list[Entity]:
    """Entities in ``text``, deduplicated by key, in order of first appearance.

    >>> [(e.key, e.surface, e.type) for e in extract_entities(
    ...     "Melanie: We pinned Python 3.12 and `numpy` per https://numpy.org/doc")]
    [('melanie', 'Melanie', 'person'), ('python', 'Python', 'tool'), ('python 3.12', 'Python 3.12', 'version'), ('numpy', 'numpy', 'package'), ('numpy.org/doc', 'https://numpy.org/doc', 'url')]
    """
    if not isinstance(text, str) or not text:
        return []
    out = _Collector()
    speakers = _speakers(text)  # typed as people when their names come up in the scan below
    quote_close = -1  # index of the closing quote of the last quoted span
    last: tuple[int, Entity | None] = (-1, None)  # end index and entity of the previous token
    for m in _scanner().finditer(text):
        kind = m.lastgroup
        before = len(out.items)
        if kind == "dq":
            if m.start() == quote_close:
                continue  # that was the closing quote of the previous span
            inner = m.group("dq_in")
            quote_close = m.end() + len(inner)
            if inner.strip() and len(inner.split()) <= 8:
                out.add(canonical(inner), inner.strip(), "quoted")
        else:
            _dispatch(out, text, m, kind, speakers, last)
        if len(out.items) > before:
            last = (m.end(), out.items[-1][0])
    return out.result()


def _dispatch(out: _Collector, text: str, m: re.Match, kind: str, speakers: set[str],
              last: tuple[int, Entity | None]) -> None:
    word = m.group()
    if kind == "cap":
        if " " in word or word.lower() not in _STOP:  # fast path: a lone "The", "We", "May"
            _cap_sequence(out, text, m, speakers)
    elif kind == "known" or kind == "multi":
        # "unit-test" and "unit test" are one concept; the word list stores the spaced form.
        key = canonical(_SPACES_OR_DASHES.sub(" ", word) if kind == "multi" else word)
        out.add(key, word, KNOWN.get(key, "concept"))
    elif kind == "hyph":
        _hyphenated_name(out, text, m)
    elif kind in ("dotted", "call", "snake", "kebab"):
        _code_word(out, word)
    elif kind == "mixed":
        _mixed(out, word)
    elif kind == "ver":
        _version(out, text, m, last)
    elif kind == "url":
        url = word.rstrip(".,;:!?)]}'\"")
        out.add(canonical(url), url, "url")
    elif kind in ("path", "win", "dotfile"):
        path = word.rstrip(".,;:!?)]}'\"")
        if kind == "win" or (kind == "dotfile" and len(path) > 2) or (kind == "path" and _path_ok(path)):
            out.add(canonical(path), path, "path")
    elif kind == "tick":
        _backticked(out, m.group("tick_in").strip())
    elif kind == "scoped":
        out.add(word.lower(), word, "package")
    elif kind == "cpp":
        out.add(canonical(word), word, "tool")
    elif kind == "sha":
        out.add(word.lower(), word, "identifier")
    elif kind == "flag":
        out.add(word.lower(), word, "identifier")


def _hyphenated_name(out: _Collector, text: str, m: re.Match) -> None:
    """"Jean-Luc", "Coca-Cola", "Scikit-Learn": a known name, a person, or some other name."""
    word = m.group()
    key = canonical(word)
    if key in KNOWN:
        out.add(key, word, KNOWN[key])
        return
    person = word.split("-")[0].lower() in _FIRST_NAMES
    out.add(key, word, "person" if person else "name", person or not _sentence_initial(text, m.start()))


def _backticked(out: _Collector, inner: str) -> None:
    """`code`: one token is typed as it would be bare (path, url, version...), else it is an
    identifier; several words make a quoted term."""
    if not inner:
        return
    key = canonical(inner)
    if " " in inner:
        out.add(key, inner, "quoted")
        return
    if key in KNOWN:  # backticks lift the lower-case ambiguity: `make`, `black`
        out.add(key, inner, KNOWN[key])
        return
    if _VERSION.fullmatch(inner.lower()):  # `3.11`: in code quotes a bare number is a version
        out.add(key, inner, "version")
        return
    m = _scanner().match(inner)
    if m is not None and m.end() == len(inner) and m.lastgroup not in ("cap", "dq", "tick"):
        sub = _Collector()
        _dispatch(sub, inner, m, m.lastgroup, set(), (-1, None))
        found = sub.result()
        if found:
            out.add(found[0].key, inner, found[0].type)
            return
    out.add(key, inner, "identifier")
