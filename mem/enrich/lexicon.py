"""Word tables for ``mem.enrich.assertions``: what makes claims comparable across phrasings ("we use
Postgres" vs "the database is MySQL") without any model. Data only: a mapping is written
``canonical: variant, variant, ...`` (indented lines continue), a set as words, commas when an
entry has spaces; :func:`table` and :func:`words` read them. Stdlib only."""

from __future__ import annotations


def table(text: str) -> dict[str, str]:
    """``canonical: a, b`` lines -> ``{a: canonical, b: canonical}`` (an empty canonical is allowed)."""
    out: dict[str, str] = {}
    for line in text.replace("\n  ", " ").strip().splitlines():
        canonical, _, variants = line.partition(": ")
        for variant in variants.split(","):
            out[variant.strip()] = canonical.strip()
    return out


def words(text: str) -> frozenset[str]:
    """Entries split at commas when there is one (entries with spaces), else at whitespace."""
    return frozenset(" ".join(w.split()) for w in (text.split(",") if "," in text else text.split()) if w.strip())


# category: tool, tool, ...   (one category per tool; ecosystem prefixes keep npm and poetry apart)
TOOL_TABLE = """
database: postgres, mysql, mariadb, sqlite, mongodb, dynamodb, cockroachdb, cassandra, clickhouse,
  duckdb, oracle, mssql, firestore, couchdb, neo4j, supabase, planetscale, snowflake, bigquery,
  redshift, timescaledb
cache: redis, memcached, valkey, dragonfly, varnish
queue: rabbitmq, kafka, sqs, nats, pubsub, kinesis, activemq, pulsar
task queue: celery, rq, sidekiq, bullmq, bull, dramatiq, huey, arq, resque, temporal
ci: github actions, gitlab ci, circleci, jenkins, travis, buildkite, drone, azure pipelines,
  bitbucket pipelines, teamcity, argo cd, argocd, spinnaker
python package manager: pip, poetry, uv, pipenv, pdm, conda, hatch, rye
js package manager: npm, yarn, pnpm
python test runner: pytest, unittest, nose, nose2, ward
js test runner: jest, vitest, mocha, jasmine, ava
e2e: playwright, cypress, selenium, puppeteer
python linter: flake8, pylint, ruff, pyflakes
python formatter: black, yapf, autopep8
js linter: eslint, tslint, oxlint
js formatter: prettier, biome
type checker: mypy, pyright, pyre, pytype
python web framework: django, flask, fastapi, starlette, litestar, sanic, tornado, pyramid
js web framework: express, koa, fastify, nestjs, hapi
frontend framework: react, vue, angular, svelte, solid, preact, ember, jquery, backbone
meta framework: next.js, nuxt, sveltekit, remix, gatsby, astro, create react app
bundler: webpack, vite, rollup, parcel, esbuild, turbopack, rspack
orm: sqlalchemy, django orm, prisma, typeorm, sequelize, drizzle, peewee, tortoise, activerecord,
  hibernate, gorm, diesel
cloud: aws, gcp, azure, digitalocean, linode, hetzner
hosting: heroku, vercel, netlify, fly.io, render, railway, cloudflare pages, github pages
orchestrator: kubernetes, ecs, nomad, docker swarm, eks, gke, aks
container runtime: docker, podman, docker compose
error tracking: sentry, rollbar, bugsnag
monitoring: datadog, prometheus, grafana, new relic, honeycomb, pagerduty, opsgenie
search: elasticsearch, opensearch, meilisearch, typesense, algolia, solr
vector store: faiss, pinecone, weaviate, qdrant, chroma, milvus, pgvector, sqlite-vec
object storage: s3, gcs, minio, r2
auth: auth0, okta, cognito, clerk, keycloak
iac: terraform, pulumi, cloudformation, cdk, ansible
build system: make, cmake, bazel, gradle, maven, ninja, meson, turborepo, nx
js runtime: node, deno, bun
http client: requests, httpx, aiohttp, axios, urllib3
state management: redux, mobx, zustand, recoil, pinia, vuex
css: tailwind, bootstrap, styled-components, sass, css modules
chat: slack, discord, microsoft teams, mattermost
editor: vim, neovim, emacs, vscode, pycharm, intellij, sublime, zed, cursor, helix, nano
docs: sphinx, mkdocs, docusaurus, storybook, jekyll, hugo
ml framework: pytorch, tensorflow, jax, keras
language: python, javascript, typescript, go, rust, java, kotlin, ruby, php, c, c++, c#, swift,
  scala, elixir, erlang, haskell, clojure, dart, lua, zig, ocaml, julia, perl
"""

TOOLS = table(TOOL_TABLE)  # tool -> category
LANGUAGES = frozenset(n for n, c in TOOLS.items() if c == "language")


# Categories whose members replace each other within one project (two ORMs, two CI systems at
# once are rare; two languages or two monitoring tools are normal).
EXCLUSIVE = words("""
build system, bundler, cache, chat, ci, database, docs, editor, error tracking, frontend framework,
hosting, js formatter, js linter, js package manager, js test runner, js web framework, meta
framework, orchestrator, orm, python formatter, python linter, python package manager, python test
runner, python web framework, state management, task queue, type checker, vector store
""")

# The slot a category fills, so "we use Postgres" can meet "the database is MySQL".
CAT_SLOT = {'python package manager': 'package manager', 'js package manager': 'package manager', 'python test runner': 'test runner', 'js test runner': 'test runner', 'e2e': 'e2e tests', 'python linter': 'linter', 'js linter': 'linter', 'python formatter': 'formatter', 'js formatter': 'formatter', 'python web framework': 'web framework', 'js web framework': 'web framework', 'meta framework': 'frontend framework', 'container runtime': 'containers', 'language': ''}

# Canonical spellings of values.
VALUE_ALIASES = table("""
postgres: postgresql, pg, psql
mongodb: mongo
kubernetes: k8s
github actions: gh actions, github action, gha
gitlab ci: gitlab-ci
javascript: js
typescript: ts
python: py
go: golang
node: nodejs, node.js
react: reactjs, react.js
vue: vue.js, vuejs
next.js: nextjs, next
elasticsearch: elastic
s3: amazon s3, aws s3
vscode: vs code, visual studio code
circleci: circle ci
travis: travis ci
memcached: memcache
rabbitmq: rabbit, rabbit mq
mssql: ms sql, sql server
fly.io: fly
create react app: cra, create-react-app
sqlalchemy: sqla
pytorch: torch
docker compose: docker-compose, compose
tailwind: tailwindcss
argo cd: argocd
gcp: google cloud
aws: amazon web services
enabled: on
disabled: off
""")

# Subjects that stand for "the project" or "the user" rather than a component.
GENERIC_SUBJECTS = table("""
project: we, us, team, dev team, engineering team, project, repo, repository, codebase, app,
  application, you, everyone
i: i, me, user, myself
""")

# Leading modifiers and trailing heads that do not change what a subject names:
# "the main database server" and "the database" are the same slot.
GENERIC_MODS = words("""
app application codebase current existing feature flag main our overall primary project repo
repository team
""")

GENERIC_HEADS = words("""
backend cluster component engine environment flag instance job jobs layer module platform process
provider rotation runtime server service setup solution stack step system task tier tool tooling
""")

# Whole-subject synonyms (after modifiers/heads are dropped).
SUBJECT_SYNONYMS = table("""
database: db, dbs, databases, data store, datastore, persistence
cache: caching, caches
ci: continuous integration, ci pipeline, ci/cd, cicd, ci/cd pipeline, build pipeline
package manager: package management, dependency management, dependencies, packaging
tests: testing, test suite, test
test runner: test framework, testing framework
unit tests: unit testing
e2e tests: e2e testing, end-to-end tests, end-to-end testing, e2e
linter: linting, lint
formatter: formatting, code formatting
type checker: type checking, typechecking, static typing
bundler: bundling, frontend build
deployment: deploys, deployments, deploy, deploying
task queue: background jobs, background tasks, async jobs, async tasks, job queue, jobs
queue: message queue, message broker, broker, messaging, queues
error tracking: error reporting, errors, exception tracking, error tracker, error monitoring
logging: logs
auth: authentication
orchestrator: orchestration, container orchestration
web framework: web server
build system: build tool, builds
css: styling, styles
vector store: vector db, vector database, vector search, embeddings store
state management: state
hosting: hosting
containers: containers, containerization
alerts: notifications
""")

# Subjects naming a slot that holds one tool at a time: "uses" is single-valued for them.
# Broad subjects ("tests", "ci", "monitoring") are left out on purpose: many tools serve them at
# once, so two *known* tools of one exclusive category (pytest vs unittest) are needed there.
SLOT_SUBJECTS = words("""
auth, bundler, cache, cdn, containers, css, data warehouse, database, dns, editor, email provider,
embedding model, error tracking, event bus, formatter, frontend framework, hosting, http client,
ide, linter, llm, message bus, object storage, orchestrator, orm, package manager, payment provider,
queue, runtime, search, secrets manager, shell, state management, task queue, test runner, type
checker, vcs, vector store, version control, warehouse, web framework
""")

# A subject is a setting (its numbers are values, not versions) if it contains one of these.
SETTING_WORDS = words("""
attempts backoff batch budget cadence cap capacity chunk concurrency connections count coverage days
delay depth dimension dimensions dims duration expiration expiry frequency hours instances interval
k length level lifetime limit max memory min minutes number percent percentage period pool priority
quota rate ratio replicas retries retry score seconds seed shards size temperature threads threshold
timeout tokens ttl weight width window workers
""")

# Status words: value -> canonical status. "X is deprecated" and "X is stable" conflict.
STATUS = table("""
enabled: enabled, on, turned on, active, activated, switched on
disabled: disabled, off, turned off, inactive, deactivated, switched off
deprecated: deprecated
archived: archived
frozen: frozen
removed: removed, deleted, decommissioned, retired, sunset, sunsetted, dropped
broken: broken
fixed: fixed
passing: passing, green
failing: failing, red
live: live, in production
down: down
stable: stable
beta: beta, in beta
alpha: alpha
experimental: experimental
in progress: in progress, wip
done: done, complete, completed, finished
blocked: blocked
pending: pending
paused: paused, on hold
merged: merged
released: released
unreleased: unreleased
open: open
closed: closed
resolved: resolved
in review: in review
supported: supported
unsupported: unsupported
maintained: maintained
unmaintained: unmaintained
required: required, mandatory
optional: optional
pinned: pinned
unpinned: unpinned
""")

# Descriptive predicates: "Redis is fast" describes, it does not identify, so it is multi-valued.
ADJECTIVES = words("""
annoying async asynchronous available bad better big bigger blocking buggy busy cheap cheaper clean
cold compatible complex complicated consistent convenient correct critical deterministic difficult
dynamic easy expensive external fast faster fine flaky fragile free generic good great handy hard
healthy heavy heavyweight high hot huge idempotent idle immutable important incompatible
inconsistent incorrect insecure internal large legacy lenient lightweight loose low mature messy
minimal modern mutable native new noisy nondeterministic obsolete ok okay old optional outdated
overloaded paid painful popular portable private proprietary public quick readable readonly ready
reliable responsive robust safe scalable secure shaky simple slow slower slowish small smaller solid
specific stateful stateless static strict sync synchronous tight tiny tricky unavailable unhealthy
unreliable unresponsive unsafe usable useful useless verbose worse wrong
""")

ADVERBS = words("""
a always extremely fairly generally highly incredibly kind less more mostly much not notoriously
often painfully pretty quite rather really relatively so sometimes somewhat super surprisingly too
usually very
""")

PRONOUNS = words("""
all anything both everything he here it nobody nothing one she some someone something that them
there these they this those what which who
""")

# A subject holding one of these is a fragment ("we think X"), as is one starting "via github actions".
NOT_SUBJECTS = words("""
we i you they he she if when which what who think said says know believe there because and or is are was were to
should must will use uses used using not whether
""")
NOT_SUBJECT_STARTS = words("via with through from to in on at by for of against into onto over as then than like")
# Words that start a manner or schedule, not a tool: "tests run in parallel", "runs every hour".
NOT_TOOLS = words("""
parallel serial series sequence background foreground isolation order batches every each daily nightly hourly weekly
monthly once twice at all any both production prod staging ci dev development locally local cron it them this that
under about less more up out into between minutes seconds hours
""")
PREPOSITIONS = words("in on with for to from by at of as into onto over via against about like than")
# Verbs whose change is of a tool ("switched to X") or of a language ("rewrote X in Rust").
TOOL_VERBS = words("""
switched switch switching moved move moving migrated migrate migrating swapped swap transitioned transition went go
going replaced replace reverted revert returned return
""")
REWRITE_VERBS = words("rewrote rewrite rewritten rewriting ported port porting converted convert write wrote written "
                      "implemented implement")
# "Note: ..." or "Q: ..." is a label, not a setting named "note".
LABEL_WORDS = words("""
note todo update fyi important decision correction tip warning example e.g i.e context summary q a question answer
user assistant status result error
""")

# Abbreviations folded anywhere in a subject.
TOKEN_SYNONYMS = table("""
database: db, dbs
kubernetes: k8s
environment: env
configuration: config
repository: repo
auth: auth
production: prod
development: dev
infrastructure: infra
documentation: docs
performance: perf
dependency: deps
""")


# Verbs of change for ``mem.enrich.corrections``, by the part their objects play (any inflection;
# several words: the first inflects, "rolled back"):
# change: "from A (to B)" names the old value; replace: "V A with B"; transfer: "X V Y to Z", the
# subject gives; remove: the object is the old value ("dropped A"; "A was dropped"); undo: both;
# settle: a value reached, no change named ("settled at 90 seconds"): never a slot word, no marker.
CHANGE_VERBS = table("""
change: switch, move, migrate, change, raise, lower, shorten, lengthen, extend, bump, increase, decrease,
  reduce, upgrade, downgrade, convert, cut, took, taken, went
replace: replace, rename, swap, exchange
transfer: hand, pass, transfer, reassign
remove: drop, remove, retire, deprecate, decommission, delete, ditch, kill, sunset, gone, switch off, shut down,
  turn off
undo: revert, undo, undid, rolled back
settle: settle, end, land
""")

# Words that mark an update without a verb of change ("the limit is now 1200", "Postmark, instead").
CHANGE_MARKERS = words("""
now, no longer, anymore, any more, instead, actually, correction, nowadays, these days, from now on, back to, back on,
after all
""")

# Words that keep a sentence's change unrealised: a plan, a proposal, an option weighed and not taken
# ("Plan: run it at 04:00 instead of 02:00", "the bump is postponed", "we considered X but stayed"); "plan"
# itself only opening its sentence ("the free plan now allows 3 shows" is a product plan). "Proposal" and its verb
# (twentieth session): "Proposal from crew control: publish rosters 42 days ahead instead of 28. Not agreed yet." had
# superseded "Published rosters cover 28 days ahead"; rank-1 2,552 -> 2,554 of 2,970 on the studied coding sets,
# held-out unchanged. "Planning" is not one: "Sprint 9 planning: the feed goes to every five minutes" is news.
UNREALISED = words("planned postpone postponed consider considered considering might maybe evaluating proposed floated parked "
                   "proposal proposals propose proposes proposing idea ideas brainstorm roadmap experiment")

# Numbers spelled out, read as digits before a unit ("cut access tokens to ten minutes").
NUMBER_WORDS = table("""
2: two
3: three
4: four
5: five
6: six
7: seven
8: eight
9: nine
10: ten
12: twelve
15: fifteen
20: twenty
30: thirty
45: forty-five
60: sixty
90: ninety
""")

# Words that name what kind of value a setting is, not which one: "the pool size" is "the pool", "the
# help channel is #x" is "the help" (as stems).
QUANTITY_HEADS = words("size maximum max minimum min value setting number count default total amount channel bucket path")

# Irregular past forms that name the same slot as their verb ("a slot is held" / "slot holds").
IRREGULAR_PAST = table("""
hold: held
keep: kept
send: sent
build: built
pay: paid
""")

# For ``mem.enrich.corrections``: words a value's text starts with that are not the value ("the old
# worker"), function words (never slot or value words), and heads that name a change rather than a
# value ("the pnpm switch", "the LaunchDarkly decision").
ARTICLES = words("the a an our my their its his her this that these those some all old previous former legacy existing current")
FUNCTION_WORDS = words("""
a an the and or but of to in on at for from by with as is are was were be been being it its this that these those we i you
they he she our my their his her your them us me who which what when where how than then so if not no now also only just
still again all any some each every there here do does did done has have had will would can could should may might must
shall into onto over under about after before because since while until per via out up down off more most less very too
own same other such new old one two instead longer anymore actually correction use used uses using run runs running ran get
got set during across along among around behind beyond despite through within without toward towards upon unless whether
plus
""")
CHANGE_HEADS = words("switch decision move change migration plan setup approach idea trick support")

# Units a setting's number may carry -> one spelling ("30 seconds", "30s" and "30 sec" are one value).
UNITS = table("""
s: s, sec, secs, second, seconds
ms: ms, millisecond, milliseconds
min: min, mins, minute, minutes
h: h, hr, hrs, hour, hours
d: d, day, days
wk: week, weeks
mo: month, months
y: year, years
kb: kb
mb: mb
gb: gb
tb: tb
%: %, percent
m: m
km: km
mv: mv, millivolt, millivolts
v: v, volt, volts
degc: degc, celsius
""")
# A frequency is its period, in seconds, as a duration is: "weekly" is "every 7 days", "once a week".
FREQUENCIES = {"hourly": "3600", "daily": "86400", "nightly": "86400", "weekly": "604800", "fortnightly": "1.2096e+06",
               "monthly": "2.6298e+06", "quarterly": "7.8894e+06", "yearly": "3.15576e+07", "annually": "3.15576e+07"}
EVERY = words("every each once")  # before a duration or a unit of time: a period ("every two weeks", "once a day")
# Units of one quantity -> (the quantity, its size in the smallest unit): "400 days" and "13 months" are
# two durations, "60 s" and "1 min" one.
QUANTITY_OF = {unit: (quantity, float(size)) for quantity, line in (
    ("duration", "ms 0.001 s 1 min 60 h 3600 d 86400 wk 604800 mo 2629800 y 31557600"),
    ("size", "kb 1 mb 1e3 gb 1e6 tb 1e9"), ("length", "m 1 km 1e3"), ("voltage", "mv 1 v 1e3"))
    for unit, size in zip(line.split()[::2], line.split()[1::2])}
