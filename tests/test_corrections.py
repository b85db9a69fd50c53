"""Corrections win: structural reading (mem.enrich.corrections), intake supersession in both orders,
open contradictions ranked newer-first in search and listed by verify. CLI through the real entry point."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from mem.enrich.corrections import OTHER, SAME, _relation, _settings, corrects, read, related
from tests.conftest import added_on_day, jsonl, open_contradictions, run_mem

# (older memory, correction, correction kind, a question both answer)
PAIRS = {
    "owner": ("Alice Nguyen owns the billing service",
              "Correction: billing is now owned by Erin Walsh; Alice Nguyen moved to the platform team",
              "correction", "who is responsible for billing?"),
    "timeout": ("The payments timeout is 30 seconds", "The payments timeout was raised from 30 to 45 seconds",
                "fact", "what is the payments timeout now?"),
    "search": ("Search runs on Elasticsearch 8", "We switched from Elasticsearch to OpenSearch for search",
               "fact", "what do we use for search?"),
    "port": ("The API listens on port 8080", "The API now listens on port 9090", "fact",
             "which port does the API listen on?"),
    "handover": ("Marta Lopez is the contact for the deploy pipeline and approves hotfixes.",
                 "Marta handed the deploy pipeline over to Jon Reyes; Jon is now the contact for hotfix approvals.",
                 "fact", "who approves hotfixes on the deploy pipeline?"),
    "took_over": ("Priya maintains the billing exporter and reviews its pull requests.",
                  "Omar took over the billing exporter from Priya; he reviews its pull requests now.",
                  "fact", "who reviews billing exporter pull requests?"),
    "shortened": ("Password reset links expire after 48 hours.",
                  "We shortened the password reset link lifetime from 48 hours to 2 hours.",
                  "fact", "how long is a password reset link valid?"),
    "renamed": ("The nightly sync_accounts job lives in jobs/sync.py.",
                "Renamed the sync_accounts job to reconcile_accounts; it still lives in jobs/sync.py.",
                "fact", "what is the nightly accounts job called?"),
    "dropped": ("The web app still supports Safari 14 through a polyfill bundle.",
                "We dropped Safari 14 from the web app; the polyfill bundle is deleted.",
                "fact", "does the web app support Safari 14?"),
    "no_longer": ("Invoices are emailed to customers by the Mailgun integration.",
                  "Invoices are no longer emailed by Mailgun; Postmark sends them to customers.",
                  "fact", "what emails invoices to customers?"),
    "gone": ("Feature toggles are read from the legacy config service at startup.",
             "The config service is gone; feature toggles are read from Flagd at startup.",
             "fact", "where are feature toggles read from?"),
    "replaced": ("Visual regressions in CI are checked with BackstopJS screenshots.",
                 "Replaced BackstopJS with Playwright screenshots for visual regressions in CI.",
                 "fact", "what checks visual regressions in CI?"),
    "not_old": ("The default geofence radius is 50 m around each depot.",
                "Actually the default geofence radius is 100 m around each depot, not 50 m.",
                "correction", "what is the default geofence radius?"),
    # no change word at all: another number of the same unit on the same slot
    # a channel and a bucket are values of their own type, as a number of a unit is
    "channel": ("The platform help channel is #cobalt-help.",
                "After the Slack cleanup last Tuesday #cobalt-help is archived; ask for help with the platform in "
                "#data-platform-support instead.", "fact", "where do I ask for help with the platform?"),
    "bucket": ("The S3 path for the nightly exports is s3://acme-lake/exports.",
               "The lake bucket was renamed after the storage cleanup last Tuesday; the nightly exports are under "
               "s3://acme-lakehouse/exports now.", "fact", "which S3 path holds the nightly exports?"),
    # a version named with no tool after a change is another version of the tool the older names
    "version_plain": ("The stream jobs run Flink 1.18 with the Python Table API.",
                      "We moved the stream jobs to 1.19 this week; the Python Table API code needed no changes.",
                      "fact", "which Flink version do the stream jobs run?"),
    # a duration in another unit is another value of the same quantity
    "months": ("Raw events are kept in the lake for 400 days; a lifecycle rule deletes anything older.",
               "Raw events are kept in the lake for 13 months now, legal asked for less.",
               "fact", "how long are raw events kept in the lake?"),
    "settled": ("The Redis connection pool timeout is 5 seconds.",
                "Redis connection pool timeout ended up at 8 seconds after the soak test.",
                "fact", "what is the redis connection pool timeout?"),
    # a how-to whose command runs another program, naming no old value
    "howto": ("Build the docs locally with `make docs`; the HTML lands in site/.",
              "Building the docs locally: `uv run mkdocs build` now; the HTML still lands in site/.",
              "procedure", "how do I build the docs locally?"),
    "identifier": ("The worker reads the broker address from BROKER_URL.",
                   "BROKER_URL is now CELERY_BROKER_URL; the worker no longer reads the old name.",
                   "correction", "which variable holds the broker address?"),
    "address": ("The status page lives at https://status.acme.dev for customers.",
                "The status page moved to https://status.acme.io; the old address redirects for a month.",
                "fact", "where is the status page?"),
    "not_needed": ("To debug a job, start the worker with `--pool=solo` so breakpoints work.",
                   "Workers run on the new runner now; the --pool=solo trick is no longer needed.",
                   "fact", ""),
    # a time of day is a setting: another time on the same slot, no change word
    "clock": ("The nightly backup of the orders database to S3 runs at 02:00 UTC.",
              "Nightly backup of the orders database to S3: 03:30 UTC, after the reindex has finished.",
              "fact", "when does the nightly orders backup run?"),
    # in a change, a version of a named tool is a setting of that tool
    "version": ("The billing worker is written in Go 1.21 and routes with chi.",
                "Upgraded the billing worker to Go 1.22 on Monday.", "fact", "which Go version is the billing worker on?"),
    # no change word, and the correction names the slot with fewer words than the memory it corrects
    "refers_back": ("The gateway's Redis maximum connection pool size is 50 connections.",
                    "After the load test the Redis pool for the gateway ended up at 80 connections.",
                    "fact", "how big is the gateway's redis connection pool?"),
    # any verb of handing over: the giver is the old value
    "passed": ("Noor Hassan is the contact for the analytics exporter and its dashboards.",
               "Noor passed the analytics exporter to Felix Braun; Felix is the one to ask about its dashboards.",
               "fact", "who do I ask about the analytics exporter?"),
    "moved_off": ("Error reports from the desktop app go to Bugsnag.",
                  "Desktop app error reporting moved off Bugsnag onto Sentry.", "fact",
                  "where do desktop app error reports go?"),
    # a rename told as the name that holds now
    "called_now": ("The ledger-export job writes the nightly CSV files to the finance bucket.",
                   "The ledger-export job is called books-export now; it still writes the CSV files to the finance bucket.",
                   "fact", "what is the job that writes the finance CSV files called?"),
    # "back to" marks a change: another number of the unit on the slot, the slot named with fewer words
    # an identifier a change replaces is as specific as two words, though no semantic neighbour
    "name_like": ("Staging lives in zone eu-central-2: Nomad for the workers, Consul for discovery, Vault for secrets.",
                  "Staging moved from eu-central-2 to eu-north-1 for the spot instance prices.", "fact",
                  "which zone is staging in?"),
    # a bare number counts what the bound before it names: "max attachments ... raised to 25" is 25 attachments
    "bound": ("A support ticket holds at most 10 attachments.",
              "Max attachments per support ticket raised to 25 for the enterprise plan.", "fact",
              "how many files can a support ticket hold?"),
    # a unit joined to its number by a hyphen is the same unit: "a 30-minute window" is 30 minutes
    "hyphen_unit": ("Idle dashboard sessions expire after a 30-minute window.",
                    "Idle dashboard sessions now expire after 60 minutes.", "fact",
                    "how long can a dashboard session stay idle?"),
    "back_to": ("After the soak test the Postgres pool for ledger-api ended up at 60 connections.",
                "Pool size for ledger-api is back to 40 connections: two replicas at 60 each hit max_connections.",
                "fact", "how many connections does the ledger-api pool have?"),
    # a day or a run of days is a setting: another run on the same slot, no change word
    "days": ("Ines Duarte is on the release rota Monday to Wednesday; Tomas covers Thursday and Friday.",
             "Release rota from June: Ines Duarte Monday to Thursday, Tomas on Fridays.",
             "fact", "who is on the release rota on Thursdays?"),
    # an inflection that doubles a consonant is the same word ("capped" / "cap")
    "doubled": ("Attachments are capped at 10 MB per message.",
                "Raised the per-message attachment cap from 10 MB to 25 MB.", "fact", "how large can an attachment be?"),
    # a change that leaves the unit out, as people do once it is known
    "elided_unit": ("The gateway's upstream timeout for calls to core banking is 8 seconds.",
                    "Core banking calls from the gateway got bumped to 12, their month-end batch slows everything down.",
                    "fact", "what is the core banking timeout?"),
    # a number spelled out before its unit
    "spelled": ("Access tokens from the auth service expire after 15 minutes.",
                "After the pen test access tokens from the auth service now expire after ten minutes.",
                "fact", "how long do access tokens last?"),
    # no change word, but the older value named again beside a new one of its unit
    "names_old": ("The bike profile adds 25 seconds of waiting at every traffic light.",
                  "Traffic lights cost 15 seconds each in the bike profile; 25 overestimated the wait.",
                  "fact", "how long does the bike profile wait at a traffic light?"),
    # what holds now names someone else on the same subject, no old value named
    "now_person": ("Priya Raman owns the gateway and reviews every change under services/gateway.",
                   "Daniel Okafor owns the gateway from now on, Priya moved to the payments squad. Ping him for "
                   "gateway reviews.", "fact", "who owns the gateway?"),
    # the same with full names the entity reader's first-name list does not know
    "now_full_names": ("Anneke Visser owns the feature store and approves new feature views.",
                       "Grace Liu approves new feature views from now on; Anneke owns the feature store until March.",
                       "fact", "who approves new feature views?"),
    # a handover whose receiver is followed by "before ..." (a clause, not part of the name)
    "before": ("Sara Kim owns the search indexer and is the contact for reindex failures.",
               "Sara handed the search indexer over to Luca Bianchi before her long research sabbatical; Luca is now "
               "the contact for reindex failures.", "fact", "who is the contact for reindex failures?"),
    # someone who moves on, and a successor named: the older's holder is the old value (a first name the
    # entity reader's list does not know, so read from the older, where the full name stands)
    "departed": ("Nadia Farouk owns the metering service and reviews its pull requests.",
                 "Rhys Pritchard looks after the metering service and its pull requests; Nadia is moving to the data "
                 "team.", "fact", "who reviews metering service pull requests?"),
    # "takes over ... from" in the present, as notes tell a handover: the one taken over from is the old value
    "takes_over": ("Aiko Sato runs the CI infrastructure day to day.",
                   "Tariq Aziz takes over the CI infrastructure from Aiko in November.", "fact",
                   "who runs the CI infrastructure?"),
    # a point from which it holds, said as "from now on" is: what holds now names someone else
    "from_this_on": ("Ines Duarte is the release captain for the mobile app and signs off each store build.",
                     "Tomas Lind signs off each mobile app store build from this release on.", "fact",
                     "who signs off mobile app store builds?"),
    # a machine size is one of a series: another size of the same service, on the same slot
    "instance": ("The search cluster's data nodes run on db.r6g.large instances.",
                 "Search cluster data nodes: db.r7g.2xlarge after the reindex.", "fact",
                 "what size are the search data nodes?"),
    # an abbreviation is the word it shortens: "prod" names the production slot
    "abbreviated": ("Topic data in the production Kafka cluster is kept for 7 days.",
                    "Prod Kafka topic data is kept for 14 days now, the auditors asked for two weeks.", "fact",
                    "how long does production kafka keep topic data?"),
    # a number in scientific notation is one number ("3e-4" is 0.0003, not 3 and -4), and a verb of removal with an
    # amount later in its clause lowers that amount: it names no value removed
    "scientific": ("ranker training: lr = 3e-4, AdamW.",
                   "Dropped the ranker's LR to 1e-4, the 3e-4 runs were diverging.", "fact",
                   "what learning rate does the ranker train with?"),
    # ... "infra" the infrastructure a handover names, with the person who moves on as the old value
    "infra_abbreviated": ("Rafael Ortiz (Norrland Systems) looks after the CI infrastructure: runners, caches and the "
                          "workflow files.",
                          "Aiko Sato (Quayside) runs the CI infra day to day from this month; Rafael is moving to the "
                          "codegen team.", "fact", "who looks after the CI infrastructure?"),
    # "took over X from P, who moves to ...": the thing handed over is a name with a separator, as specific as
    # two slot words, and the person taken over from is the old value
    "took_over": ("Priya Raman owns hs-ingest, the Rust service that reads telemetry off the broker.",
                  "Jonas Berg took over hs-ingest from Priya, who moves to the app backend.", "fact",
                  "who owns hs-ingest?"),
    # an active "B replaces A" with no "with": its object is the old value
    "replaces": ("The Fastly purge token is read from the environment variable PRESSROOM_FASTLY_KEY.",
                 "FASTLY_API_TOKEN replaces PRESSROOM_FASTLY_KEY for the purge token.", "fact",
                 "which environment variable holds the Fastly purge token?"),
    # a name (one word) called another, with no "now"
    "called_name": ("Quizly's grading service is called quiz-grader.",
                    "Grading service: quiz-grader is named assessment-engine in all deploy manifests since v5.", "fact",
                    "what is Quizly's grading service called?"),
    # a note's arrow: A -> B
    "arrow": ("TableTap's menu service is menu-api.", "Menu service: menu-api -> catalog-svc (it handles modifiers and combos).",
              "fact", "what is TableTap's menu service?"),
    # one value of the older changes while the other is said to stay: still a change
    "partly_kept": ("The gateway runs 6 replicas in production with an HPA that can go up to 20.",
                    "The gateway HPA tops out at 30 replicas in production now; still 6 at the bottom.", "fact",
                    "how far can the gateway HPA scale in production?"),
    # who rolled off, joined or left something else is the old holder, with a successor named (a name ending in "s"
    # folds as the value's words do: "Lars" is the "Lars" of "Lars Eklund")
    "rolled_off": ("Kenji Sato is the go-to person for Pipettex instrument integrations.",
                   "Ask Beatriz Lima about Pipettex instrument integrations. Kenji rolled off the Pipettex project.",
                   "fact", "who handles Pipettex instrument integrations?"),
    "joined": ("Ama Owusu reviews all schema migrations for the Lakeshore warehouse.",
               "Schema migration reviews for the Lakeshore warehouse go to Rafael Costa. Ama joined the ML team.", "fact",
               "who reviews schema migrations for the warehouse?"),
    "left_named": ("Contact for the Skyforge anti-cheat vendor is Lars Eklund.",
                   "Lars left Skyforge last week. Vendor contacts for anti-cheat go through Yuki Tanaka.", "fact",
                   "who is the contact for the anti-cheat vendor?"),
    # ... unless it says what holds now beside it
    "originally_now": ("The Lakeshore batch window is 22:00-06:00 UTC.",
                       "Originally the Lakeshore batch window was 22:00-06:00; now it is 01:00-05:00 UTC.", "fact",
                       "when is the Lakeshore batch window?"),
    "starting_this": ("Ines Duarte is the release captain for the mobile app and signs off each store build.",
                      "Tomas Lind signs off each mobile app store build starting this sprint.", "fact",
                      "who signs off mobile app store builds?"),
}


def _load(pairs: dict[str, tuple[str, str, str, str]], *, correction_first: bool = False) -> dict[str, tuple[str, str]]:
    """Store each pair in its own scope (old a day before new) with one ``mem import``; key -> (old id, new id)."""
    records = []
    for key, (old, new, kind, _) in pairs.items():
        first = {"text": old, "scope": key, "created_at": "2026-05-01T09:00:00Z"}
        second = {"text": new, "kind": kind, "scope": key, "created_at": "2026-05-02T09:00:00Z"}
        records += [second, first] if correction_first else [first, second]
    done = run_mem("import", "-", "--now", "2026-05-03T00:00:00Z", input=jsonl(*records))
    assert done.code == 0, done.stderr
    outcomes = done.records
    ids = {}
    for i, key in enumerate(pairs):
        a, b = outcomes[2 * i], outcomes[2 * i + 1]
        old, new = (b, a) if correction_first else (a, b)
        ids[key] = (old, new)
    return ids


def test_each_correction_supersedes_what_it_corrects_and_search_answers_with_it() -> None:
    ids = _load(PAIRS)
    for key, (old, new) in ids.items():
        assert new["status"] == "added", (key, new)
        assert new.get("supersedes") == [old["id"]], (key, new)
    exported = {r["id"]: r for r in run_mem("export").records}
    for key, (old, new) in ids.items():
        assert exported[old["id"]]["superseded_by"] == new["id"], key
    for key in ("owner", "timeout", "search", "port", "handover", "shortened", "settled", "howto", "address", "channel",
                "bucket", "months"):
        question = PAIRS[key][3]
        hits = run_mem("search", question, "--scope", key, "--now", "2026-05-03T00:00:00Z").records
        assert hits and hits[0]["id"] == ids[key][1]["id"], (key, hits)
        assert ids[key][0]["id"] not in [h["id"] for h in hits]


def test_the_fact_a_correction_corrects_arrives_later_with_an_older_date_and_ends_superseded() -> None:
    pairs = {k: PAIRS[k] for k in ("owner", "timeout", "search", "port", "handover", "no_longer", "renamed", "gone",
                                   "settled", "howto", "identifier", "clock", "version", "refers_back", "days",
                                   "doubled", "before", "called_now", "back_to", "hyphen_unit",
                                   "name_like", "bound", "elided_unit", "spelled", "names_old", "now_person",
                                   "now_full_names", "departed", "takes_over", "from_this_on",
                                   "starting_this", "instance", "abbreviated", "took_over", "replaces",
                                   "called_name", "arrow", "partly_kept", "rolled_off", "joined",
                                   "left_named", "originally_now")}
    ids = _load(pairs, correction_first=True)
    for key, (old, new) in ids.items():
        assert new["status"] == "added", (key, new)
        assert old["status"] == "superseded" and old["superseded_by"] == new["id"], (key, old)
    for key in ("owner", "timeout", "search", "port"):  # the four pairs answer with the correction
        hits = run_mem("search", PAIRS[key][3], "--scope", key, "--now", "2026-05-03T00:00:00Z").records
        assert hits and hits[0]["id"] == ids[key][1]["id"], (key, hits)


# what a correction corrects may share neither meaning (cosine .28) nor an entity with it: found by the
# old value it names, or, when it is imported after its correction, by its own words
FAR = ("Every sprint somebody writes the release notes by hand in the team wiki, copying merged PR titles one at a time.",
       "Release notes moved from the wiki to changelogs generated on tag.", "fact", "")


def test_a_near_duplicate_that_changes_a_setting_is_an_update_not_a_duplicate() -> None:
    # cosine .97 (hash embedder): over the near-duplicate gate's .95
    older = ("Nightly exports of the billing warehouse to the finance bucket in the eu-west region keep 30 days of "
             "parquet files, compressed with zstd, partitioned by tenant, date and source system, and listed in the "
             "export manifest.")
    first = run_mem("add", older, "--now", "2026-05-01T09:00:00Z").records[0]
    again = run_mem("add", older.replace("manifest.", "manifest!"), "--now", "2026-05-01T10:00:00Z").records[0]
    assert again["status"] == "duplicate" and again["id"] == first["id"], again  # the same facts: a duplicate
    newer = run_mem("add", older.replace("30 days", "90 days"), "--now", "2026-05-02T09:00:00Z").records[0]
    assert newer["status"] == "added" and newer.get("supersedes") == [first["id"]], newer
    hits = run_mem("search", "how many days of billing exports does the finance bucket keep?",
                   "--now", "2026-05-03T00:00:00Z").records
    assert hits[0]["id"] == newer["id"] and first["id"] not in [h["id"] for h in hits]


def test_a_hand_back_supersedes_the_handover_it_undoes() -> None:
    # the handover names the new contact (Ravi) as its giver: that is no sign it already states the new state
    texts = ["Ravi Menon is the contact for the payments ledger and approves its migrations.",
             "Ravi handed the payments ledger over to Olga Petrova; Olga now approves its migrations.",
             "Olga handed the payments ledger back to Ravi when he returned; Ravi approves its migrations again."]
    records = [{"text": t, "scope": "handback", "created_at": f"2026-05-0{i + 1}T09:00:00Z"} for i, t in enumerate(texts)]
    done = run_mem("import", "-", "--now", "2026-05-04T00:00:00Z", input=jsonl(*records))
    assert done.code == 0, done.stderr
    first, second, third = done.records
    assert second.get("supersedes") == [first["id"]] and third.get("supersedes") == [second["id"]], done.records
    hits = run_mem("search", "who approves payments ledger migrations?", "--scope", "handback",
                   "--now", "2026-05-04T00:00:00Z").records
    assert [h["id"] for h in hits] == [third["id"]]


def test_a_correction_finds_what_it_corrects_by_the_old_value_in_both_orders() -> None:
    ids = {**_load({"in_order": FAR}), **_load({"reversed": FAR}, correction_first=True)}  # one scope each
    exported = {r["id"]: r for r in run_mem("export").records}
    for key, (old, new) in ids.items():
        assert new["status"] == "added", (key, new)
        assert exported[old["id"]]["superseded_by"] == new["id"], (key, old, new)
    assert ids["reversed"][0]["status"] == "superseded"


def test_look_alikes_that_correct_nothing_stay_live() -> None:
    pairs = {
        # a one-word old value and one shared word are not enough: Dana still applies topics
        "handover": ("Dana applies new Kafka topic manifests after review.",
                     "Dana handed the Kafka on-call rotation over to Pavel; Pavel is now the contact.", "fact", ""),
        # the old number, but not the same slot
        "number": ("Failed webhooks are retried 30 times.", "The payments timeout was raised from 30 to 45 seconds.",
                   "fact", ""),
        # a reminder that rejects the same value agrees with the older memory
        "agree": ("Amounts are integer cents in bigint columns, never floats.",
                  "Reminder: amounts stay integer cents in bigint columns, never floats.", "fact", ""),
        # the bound's count is not another unit's: days are no attachments
        "bound_other": ("Support tickets close on their own after 10 days without a reply.",
                        "Max attachments per support ticket raised to 25 for the enterprise plan.", "fact", ""),
        # the identifier alone, in a memory about something else, is not what moved
        "name_elsewhere": ("Nightly backups are copied to a bucket in eu-central-2.",
                           "Staging moved from eu-central-2 to eu-north-1 for the spot instance prices.", "fact", ""),
        # a hyphenated unit on another slot: the nightly export is not the session window
        "hyphen_other": ("Idle dashboard sessions expire after a 30-minute window.",
                         "The nightly invoice export now takes 60 minutes.", "fact", ""),
        # a channel or a bucket for another purpose or another environment
        "other_channel": ("Payment alerts for the on-call engineer go to the #payments-alerts channel.",
                          "Deploy notices for the release manager go to the #deploys channel now.", "fact", ""),
        "other_bucket": ("Staging uploads are stored under s3://acme-staging/uploads.",
                         "Prod uploads are stored under s3://acme-prod/uploads now.", "fact", ""),
        # the same unit on another slot, with no change word
        "other_slot": ("The API request timeout is 30 seconds.", "The API worker timeout is 60 seconds.", "fact", ""),
        # ... and with a change word: still another slot
        "other_slot_now": ("The API request timeout is 30 seconds.", "The API worker timeout is now 60 seconds.", "fact", ""),
        # versions of one tool on clusters named apart
        "other_cluster": ("The EU cluster runs Postgres 15 for the booking service.",
                          "The US cluster now runs Postgres 16 for the booking service.", "fact", ""),
        # with no change word, a number on a one-word slot is another thing of its kind, not a new value
        "one_word_slot": ("Service 3 talks to queue 5 through handler 45.", "Service 7 talks to queue 5 through handler 83.",
                          "fact", ""),
        # with no change word, another version is one more that holds
        "versions": ("We use Python 3.11 in CI.", "Python 3.12 is supported as well.", "fact", ""),
        # the same unit, a slot that says more ("session cache TTL" is not "cache TTL")
        "narrower": ("The cache TTL is 5 minutes.", "The session cache TTL is 30 minutes.", "fact", ""),
        # a handover of kind correction names a person: another fact that person told is not corrected
        "person": ("Reminder from Priya in review: amounts are integer cents in bigint columns, never float.",
                   "Billing ownership moved from Priya to Marcus Oyelaran; PRs touching invoices or tax now need "
                   "Marcus's review.", "correction", ""),
        # with no change word, a setting whose sentence opens with a word the older one lacks is that
        # subject's: staging's pool beside the pool of every pod
        "subject": ("After the load test: gateway Redis pool, 50 connections per pod.",
                    "Staging runs the gateway with a Redis pool of 5 connections per pod to fit the small instance.",
                    "fact", ""),
        # a lone number named as the old value recurs in unrelated facts: "3 times, not 5" is no
        # correction of "5 hours of uploads", whatever the kind
        "lone_number": ("Free accounts get 5 hours of uploads per month.",
                        "Correction: the upload importer retries a failed feed 3 times, not 5.", "correction", ""),
        # a name stated, with no "now": no rename
        "named": ("The ledger-export job writes the nightly CSV files to the finance bucket.",
                  "The job that archives the finance bucket is called bucket-archiver.", "fact", ""),
        # days of the week on other slots are two schedules, not a change
        "other_days": ("Deploys to production go out on Tuesdays.", "Database backups are restored as a drill on Fridays.",
                       "fact", ""),
        # a statement with no change word on a one-word slot: days of two meetings
        "two_meetings": ("Planning is on Mondays.", "The retro is on Thursdays.", "fact", ""),
        # someone who moves on with no successor named: who holds it now is unknown, so nothing is replaced
        "no_successor": ("Nadia Farouk owns the metering service and reviews its pull requests.",
                         "Nadia is moving to the data team; the metering service pull requests wait for a new owner.",
                         "fact", ""),
        # a capitalised subject that moves is no person unless the older names it as one: a standup moved to
        # another hour is another time, not a departure (Rhys only runs it)
        "not_a_person": ("Standup is at 09:30 in the Liffey room and Rhys Pritchard runs it.",
                         "Standup moved to the Shannon room; Owen Kelly books it.", "fact", ""),
        # a failover "takes over from" a machine: no one handed anything over
        "failover": ("The primary broker in Frankfurt serves every producer; Dana Kim looks after it.",
                     "Ada Byrne notes the standby broker takes over from the primary when Frankfurt fails.", "fact", ""),
        # a service's name shared by two facts about it is no slot of its own: the retention change is not the
        # alert's threshold, whatever number they share
        "service_named": ("Runbook: the ingester lag alert fires when hs-ingest is more than 30 seconds behind.",
                          "Cut Loki retention for hs-ingest logs from 30 to 14 days.", "fact", ""),
        # a procedure headed by "Replacing ..." replaces nothing: only a finite "replaces / replaced" names an old value
        "procedure": ("To provision a probe: scan its QR label, then `flctl probe register <deveui>` creates it.",
                      "Replacing a probe in the field: `flctl probe replace <old> <new>` moves its history over.",
                      "procedure", ""),
        # a qualifier is read in the value's own sentence: "Reads are quick" after the write timeout names no read
        # timeout, so read and write timeouts stay two settings
        "write_timeout": ("Ledgerline refunds-api read timeout is 5 seconds.",
                          "Ledgerline refunds-api write timeout is 15 seconds. Reads are quick, but writes wait on the "
                          "processor.", "fact", ""),
        # a head word read where it stands nearest its value: "display floor price" beside "CTV floor price", though
        # "Bidwell floors" opens the older
        "nearest_head": ("Bidwell floors, from the yield team: display floor price is $1.20 CPM, applied per ad unit.",
                         "Sales ops memo: Bidwell's CTV floor price went up to $18 CPM on Monday.", "fact", ""),
        # "50k msgs/s" is fifty thousand, no rival of 48 partitions
        "thousands": ("GridPulse uses Kafka for meter events: 48 partitions on the readings topic.",
                      "Architecture history: the switch to Kafka happened in 2020 when meter event volume passed 50k "
                      "msgs/s.", "fact", ""),
        # a statement that ended before it was written is history ("until 2020", written in 2026)
        "history": ("Hearth listing photos are stored in S3.",
                    "Hearth listing photos were kept on an NFS share in the data center until 2020.", "fact", ""),
        # "dropping X to N" lowers an amount: X is the slot, not a value removed (the older, where the TTL is set, holds)
        "dropping_to": ("The homepage cache TTL is set in the Fastly config.",
                        "Dropping the homepage cache TTL to 5 s for the launch.", "fact", ""),
        # a text holds for the environment its first sentence names: production's version, with staging only named
        # after it as the canary, is no change of staging's
        "first_sentence_env": ("CareTrack staging runs Redis 7.",
                               "Platform status, CareTrack: production still runs Redis 6.2 and the upgrade ticket sits "
                               "in the backlog. Staging is our canary for it.", "fact", ""),
        # a clause that opens on the past ("Historically ...") tells what held then, not a change
        "historically": ("The Lakeshore batch window is 01:00-05:00 UTC.",
                         "Historically the Lakeshore batch window was 22:00-06:00, before BI moved off the cluster.",
                         "fact", ""),
        # a flow told with arrows is no change, and one arrow to a value the older states already changes nothing
        "flow": ("Requests go through nginx first.", "Requests flow nginx -> gunicorn -> django.", "fact", ""),
        "arrow_same": ("Stripe webhooks hit billing-svc.", "Webhook flow: Stripe -> billing-svc, then the ledger queue.",
                       "fact", ""),
        # a second setting beside the older's, whose own value is said to stay, adds and replaces nothing
        "stays": ("Service tokens from Vaultkeeper have a 1-hour TTL; long-running jobs must renew the tokens.",
                  "Actually there's more to it: Vaultkeeper tokens can be renewed up to a max TTL of 24 hours. The "
                  "default TTL of the tokens stays 1 hour.", "correction", ""),
        # two recipes of one program are two commands, not a change
        "siblings": ("Unit tests: `just test` after the justfile switch.",
                     "End-to-end tests after the justfile switch: `just e2e`; it needs the docker stack.",
                     "correction", ""),
    }
    ids = _load(pairs)
    for key, (old, new) in ids.items():
        assert "supersedes" not in new, (key, new)
    exported = {r["id"]: r for r in run_mem("export").records}
    assert all(exported[old["id"]]["superseded_by"] is None for old, _ in ids.values())
    found = [r for r in run_mem("verify", "--now", "2026-05-03T00:00:00Z").records if r.get("finding") == "contradiction"]
    assert {r["id"] for r in found} <= {ids["narrower"][1]["id"]}, found  # only the unsure one may stay open
    # unsure, not unrelated: a close neighbour would get an open contradiction (ranked newer first)
    assert related(read(pairs["narrower"][1]), pairs["narrower"][0])
    assert not related(read("The worker pool has 60 seconds of backoff."), pairs["other_slot"][0])
    for key in ("other_slot", "other_slot_now"):  # another qualifier on the head: no contradiction either
        assert not related(read(pairs[key][1]), pairs[key][0]), key


def test_a_setting_on_a_slot_qualified_apart_is_no_contradiction_and_verify_passes() -> None:
    # cosine .80 (hash) and .94 (MiniLM): close enough for an open contradiction, were the slots one
    older = "The payments API request timeout behind the internal load balancer is 30 seconds."
    newer = "The payments API worker timeout behind the internal load balancer is 60 seconds."
    first = run_mem("add", older, "--now", "2026-05-01T09:00:00Z").records[0]
    second = run_mem("add", newer, "--now", "2026-05-02T09:00:00Z").records[0]
    assert "supersedes" not in second
    report = run_mem("verify", "--now", "2026-05-03T00:00:00Z")
    assert not [r for r in report.records if r.get("finding") == "contradiction"], report.records
    assert report.code == 0, report.records
    hits = run_mem("search", "payments API timeout", "--now", "2026-05-03T00:00:00Z").records
    assert {first["id"], second["id"]} <= {h["id"] for h in hits}


def test_an_unsure_correction_leaves_an_open_contradiction_search_ranks_newer_first_and_verify_lists() -> None:
    # (a day of the week would be a setting: "every Thursday" -> "every Tuesday" supersedes)
    older = "Mobile releases ship from the release branch every second week after QA sign-off."
    newer = "Mobile releases now ship from the release branch weekly after QA sign-off."
    first = run_mem("add", older, "--now", "2026-05-01T09:00:00Z").records[0]
    second = run_mem("add", newer, "--now", "2026-05-02T09:00:00Z").records[0]
    assert "supersedes" not in second  # no old value named, no setting of one type: not proof enough
    report = run_mem("verify", "--now", "2026-05-03T00:00:00Z")
    assert report.code == 7
    found = [r for r in report.records if r.get("finding") == "contradiction"]
    assert [(r["id"], r["other"]) for r in found] == [(second["id"], first["id"])]
    hits = run_mem("search", "when do mobile releases ship from the release branch?",
                   "--now", "2026-05-03T00:00:00Z").records
    order = [h["id"] for h in hits]
    assert order.index(second["id"]) < order.index(first["id"])
    assert hits[order.index(second["id"])]["why"]["contradicts"]["over"] == first["id"]


def test_reading_names_old_and_new_values_by_shape() -> None:
    cases = {
        "The payments timeout was raised from 30 to 45 seconds.": (["30"], ["45 seconds"]),
        "We switched CI from Jenkins to GitHub Actions.": (["jenkins"], ["github actions"]),
        "Replaced BackstopJS with Playwright in CI.": (["backstopjs"], ["playwright"]),
        "Fluent Bit was replaced by Vector for log shipping.": (["fluent bit"], ["vector"]),
        "Marta handed the pipeline over to Jon Reyes.": (["marta"], ["jon reyes"]),
        "Omar took over the exporter from Priya.": (["priya"], []),
        "The Python monolith is gone.": (["python monolith"], []),
        "We dropped IE11 support from the dashboard.": (["ie11 support"], []),
        "The radius is 100 m, not 50 m.": (["50 m"], []),
        # a verb of removal followed by an amount lowers that amount: its object is a slot, no value removed
        "Dropping the Hearth homepage TTL to 5 s for the launch.": ([], []),
        "Dropped the Hearth homepage cache entirely.": (["hearth homepage cache entirely"], []),
        # a value never runs on past the end of its sentence
        "Queries hit pgvector instead of Pinecone. Costs should fall.": (["pinecone"], []),
    }
    for text, (old, new) in cases.items():
        reading = read(text)
        assert reading is not None, text
        assert [v.text for v in reading.old] == old, text
        assert [v.text for v in reading.new] == new, text
    assert read("The API uses FastAPI and Postgres.") is None
    # a verb of change a modal governs says what may or must be done: it names no old value
    for able in ("Nobody, root included, can shorten retention or delete a locked object.",
                 "You should drop the cache after a deploy."):
        assert not (reading := read(able)) or not reading.old, able
    assert read("Anything", "correction") is not None  # the kind alone makes it a correction


def test_a_number_of_the_same_unit_on_the_same_slot_is_replaced() -> None:
    reading = read("Bumped the per-fleet API rate limit to 1200 requests per minute.")
    assert corrects(reading, "The API rate limit is 600 requests per minute per fleet.") \
        == "same slot, 600 request -> 1200 request"
    # the same unit attached to other words is another slot
    assert corrects(reading, "The API gateway serves 600 requests per minute at peak, rate limit aside.") is None
    assert related(reading, "The API rate limit is documented in the handbook.")


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300), st.text(max_size=300), st.sampled_from(["fact", "correction", "decision"]))
def test_reading_and_deciding_never_raise(new: str, old: str, kind: str) -> None:
    reading = read(new, kind)
    if reading is not None:
        verdict = corrects(reading, old)
        assert verdict is None or isinstance(verdict, str)
        assert isinstance(related(reading, old), bool)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 23), st.integers(0, 59), st.sampled_from(["UTC", "every night", "after the reindex", ""]))
def test_a_time_of_day_is_one_setting_whose_digits_are_no_other_number(hour: int, minute: int, tail: str) -> None:
    found = _settings(f"The nightly export runs at {hour}:{minute:02d} {tail}.", plain=True)
    assert found == {(f"{hour:02d}:{minute:02d}", "clock"): ("nightly", "export", "")}


_SLOT_WORDS = st.lists(st.sampled_from(["api", "request", "worker", "timeout", "cache", "session", "pool", "", "redis"]),
                       max_size=7).map(tuple)


@settings(max_examples=300, deadline=None)
@given(_SLOT_WORDS, _SLOT_WORDS)
def test_a_slot_is_its_own_and_other_slots_are_other_both_ways(mine: tuple[str, ...], theirs: tuple[str, ...]) -> None:
    words_of = lambda phrase: frozenset(w for w in phrase if w)  # noqa: E731
    if any(mine):
        assert _relation(mine, mine, words_of(mine), words_of(mine)) == SAME
    forth = _relation(mine, theirs, words_of(mine), words_of(theirs)) == OTHER
    assert forth == (_relation(theirs, mine, words_of(theirs), words_of(mine)) == OTHER)


def test_a_correction_ranks_where_the_memory_it_superseded_would_have() -> None:
    old = {"id": "019de7ea-0000-7000-8000-000000000001", "text": "Priya Nair owns the billing service and its invoice exporter.",
           "created_at": "2026-05-01T09:00:00Z", "superseded_by": "019de7ea-0000-7000-8000-000000000002"}
    new = {"id": "019de7ea-0000-7000-8000-000000000002", "kind": "correction",
           "text": "Marcus Oyelaran is responsible for it since Priya moved teams.", "created_at": "2026-05-02T09:00:00Z"}
    other = {"id": "019de7ea-0000-7000-8000-000000000003", "text": "The billing service exporter runs every night at 02:00.",
             "created_at": "2026-05-01T10:00:00Z"}
    done = run_mem("import", "-", "--now", "2026-05-03T00:00:00Z", input=jsonl(old, new, other))
    assert done.code == 0, done.stderr
    hits = run_mem("search", "who owns the billing service?", "--now", "2026-05-03T00:00:00Z").records
    assert [h["id"] for h in hits][:2] == [new["id"], other["id"]]  # the stale memory itself stays hidden


def test_a_correction_of_a_correction_inherits_through_the_chain() -> None:
    ids = [f"019de7ea-0000-7000-8000-00000000001{i}" for i in range(4)]
    records = [
        {"id": ids[0], "text": "The MQTT keepalive for truck connections is 60 seconds.", "created_at": "2026-05-01T09:00:00Z",
         "superseded_by": ids[1]},
        {"id": ids[1], "text": "Raised it to 120 after the tunnel reconnect storms.", "created_at": "2026-05-02T09:00:00Z",
         "superseded_by": ids[2]},
        {"id": ids[2], "text": "Settled at 90 in the end: 120 drained the broker's session table.",
         "created_at": "2026-05-03T09:00:00Z"},
        {"id": ids[3], "text": "Truck connections reconnect through the MQTT load balancer.", "created_at": "2026-05-01T10:00:00Z"},
    ]
    assert run_mem("import", "-", "--now", "2026-05-04T00:00:00Z", input=jsonl(*records)).code == 0
    hits = run_mem("search", "what is the MQTT keepalive for truck connections?", "--now", "2026-05-04T00:00:00Z").records
    order = [h["id"] for h in hits]
    assert order[0] == ids[2] and ids[0] not in order and ids[1] not in order


# False supersessions: each look-alike was superseded once, a true fact hidden from search; each twin
# shares its shape and still supersedes.
FALSE_LOOK_ALIKES = {
    # a burst allowance and a steady rate are two settings of one API: the words right before the values
    # ("a burst of", "rate limit:") differ and neither text names the other's
    "burst": ("The search API allows a burst of 300 queries per token above the steady rate.",
              "Search API rate limit: 80 queries per second per token, agreed with the mobile team.", "fact", ""),
    # a port and a sample ratio of one worker: unitless numbers set two things, and the old value the
    # correction names (9000) is not in the older memory
    "ratio": ("Datadog samples every request of the export worker (sample_ratio 1.0).",
              "Correction: the export worker listens on port 9443 behind the proxy, not 9000.", "correction", ""),
    # a handover replaces whom the thing handed over goes to, not what else the giver does or wants
    "giver_does": ("Vendor invoices are checked by hand every month; Lars emails finance a day ahead.",
                   "Lars passed the analytics vendor relationship to Mira Kovacs, the new data engineer; questions on "
                   "vendor contracts, exports and invoices go to Mira.", "fact", ""),
    "giver_wants": ("Lars wants the export runbook updated before any contract change goes out.",
                    "Lars passed the analytics vendor relationship to Mira Kovacs, the new data engineer; questions on "
                    "vendor contracts, exports and invoices go to Mira.", "fact", ""),
    # what a command does, told in the present ("it deletes their uploads"), is a step, not a change
    "steps": ("To block one tenant's uploads, add a row to the tenant_blocks table; the gateway reads it at its "
              "next 5-minute reload.",
              "When a tenant closes its account, run `just close-tenant <tenant>`: it revokes their gateway tokens "
              "at once and deletes their uploads after 14 days.", "procedure", ""),
    # a change to "the default" workers leaves a worker pinned apart alone: the default holds where nothing more
    # specific is set (the older names a qualifier of its own right before the shared words)
    "default": ("The image-processing Celery worker is pinned to concurrency 2 because the crops are memory-hungry.",
                "Bumped the default Celery workers to 12 after the backlog.", "fact", ""),
}
TWINS = {
    "default": ("The default Celery workers run with concurrency 8.", FALSE_LOOK_ALIKES["default"][1], "fact", ""),
    "burst": ("The search API rate limit is 40 queries per second per token, enforced at the gateway.",
              FALSE_LOOK_ALIKES["burst"][1], "fact", ""),
    "ratio": ("The export worker listens on port 9000.", FALSE_LOOK_ALIKES["ratio"][1], "correction", ""),
    "giver": ("Questions about the analytics vendor (contracts, exports, invoices) go to Lars Berg, our data lead.",
              FALSE_LOOK_ALIKES["giver_does"][1], "fact", ""),
    # a change told in the past, or opening its clause as a commit message does, still is one
    "steps": (FALSE_LOOK_ALIKES["steps"][0], "Deleted the tenant_blocks table: blocked tenants are read from the "
              "tenant config.", "fact", ""),
    "commit": ("Uploads larger than 2 GB are kept in the cold-storage bucket.",
               "Moves uploads larger than 2 GB from the cold-storage bucket to the archive tier.", "fact", ""),
}


def test_look_alikes_of_false_supersessions_stay_live_and_their_twins_supersede() -> None:
    live = _load(FALSE_LOOK_ALIKES)
    for key, (old, new) in live.items():
        assert "supersedes" not in new, (key, new)
    hits = run_mem("search", "search API burst allowance", "--scope", "burst", "--now", "2026-05-03T00:00:00Z").records
    assert live["burst"][0]["id"] in [h["id"] for h in hits]  # the burst allowance is still found
    found = [r for r in run_mem("verify", "--now", "2026-05-03T00:00:00Z").records if r.get("finding") == "contradiction"]
    assert not found, found  # two settings of one subject, not an open contradiction either
    replaced = _load({f"twin_{key}": pair for key, pair in TWINS.items()})
    for key, (old, new) in replaced.items():
        assert new.get("supersedes") == [old["id"]], (key, new)


# A plan, a postponement or an option weighed and not taken changes nothing: it supersedes nothing,
# in either order; the same change told as done does.
UNREALISED = {
    "plan": ("The statements worker generates the statement PDFs every night at 02:00.",
             "Plan for next quarter: run the statements worker as an EKS CronJob, and at 04:00 instead of 02:00.",
             "Statement PDFs are generated at 04:00 now instead of 02:00."),
    "postponed": ("Android minSdk is 26 (Android 8.0).", "The Android minSdk bump to 28 is postponed to next year.",
                  "Bumped the Android minSdk from 26 to 28."),
    # a plan leading a bare instruction after a colon: the lead governs it (read as "upgrade prod
    # Postgres to 16" alone, it was the claim "prod postgres is 16")
    "plan lead": ("Postgres in prod is version 14.",
                  "Plan: upgrade prod Postgres to 16 during the May maintenance window.",
                  "Prod Postgres is on version 16 since the May maintenance window."),
    "proposal": ("Published rosters cover 28 days ahead of the publication date.",
                 "Proposal from crew control: publish rosters 42 days ahead instead of 28. Not agreed yet.",
                 "Rosters are published 42 days ahead now instead of 28."),
    # ideas of a brainstorm and an experiment to run are no change made
    "ideas": ("The statements worker generates the statement PDFs every night at 02:00.",
              "Roadmap brainstorm, Q3. Ideas: run the statements worker at 04:00 instead of 02:00; scheduled exports. "
              "None of it is committed.",
              "The statements worker runs at 04:00 now instead of 02:00."),
    "experiment": ("The statements worker generates the statement PDFs every night at 02:00.",
                   "Experiment next sprint: run the statements worker at 04:00 instead of 02:00, behind a flag.",
                   "Moved the statements worker to 04:00 instead of 02:00."),
    "considered": ("Feature flags are in LaunchDarkly; flag keys are kebab-case.",
                   "We considered replacing LaunchDarkly with Unleash to save money but are staying.",
                   "We replaced LaunchDarkly with Unleash for the feature flags to save money."),
}


@pytest.mark.parametrize("correction_first", [False, True])
def test_a_plan_or_an_option_weighed_supersedes_nothing_and_the_change_done_does(correction_first: bool) -> None:
    ids = _load({key: (old, plan, "fact", "") for key, (old, plan, _) in UNREALISED.items()},
                correction_first=correction_first)
    for key, (old, plan) in ids.items():
        assert "supersedes" not in plan and old["status"] == "added" and "superseded_by" not in old, (key, old, plan)
    done = _load({f"{key}-done": (old, change, "fact", "") for key, (old, _, change) in UNREALISED.items()},
                 correction_first=correction_first)
    for key, (old, change) in done.items():
        assert (old["superseded_by"] == change["id"]) if correction_first else (change["supersedes"] == [old["id"]]), key


def test_a_handover_that_names_no_old_value_ranks_above_what_it_replaces() -> None:
    # a semantic neighbour (MiniLM cosine .62; hash .25) on the same slot, with no old value named and no
    # setting: not proof enough to supersede, an open contradiction; search answers with the newer
    env = {"MEM_EMBEDDER": "minilm"}
    older = "Olu Adeyemi owns the notifier service and the push certificates."
    newer = "Hana Sato has the notifier now, APNs certs included; Olu went to the cards squad."
    first, second = added_on_day(older, 1, env), added_on_day(newer, 2, env)
    assert "supersedes" not in second
    assert open_contradictions("--now", "2026-05-03T00:00:00Z", env=env) == [(second["id"], first["id"])]
    hits = run_mem("search", "who owns the notifier?", "--now", "2026-05-03T00:00:00Z", env=env).records
    order = [h["id"] for h in hits]
    assert order.index(second["id"]) < order.index(first["id"])
    assert hits[order.index(second["id"])]["why"]["contradicts"]["over"] == first["id"]


def test_a_thousands_separator_is_part_of_its_number() -> None:
    # "£2,500" was read as 2 and 500: a change to 2,500 then matched any older 500 or 2 on the slot
    assert set(_settings("The daily payout limit for new merchants is now £2,500.", plain=True)) == {(2500.0, "#")}
    reading = read("The daily payout limit for new merchants is now £2,500.")
    assert corrects(reading, "The daily payout limit for new merchants is £1,000.", neighbour=True)


# Two memories that answer one question with two values of one type, the newer saying nothing of a
# change (no change word, no old value, a slot intake cannot match): search ranks the newer first and
# says why. (older, newer, question, the change named in why)
CURRENT = {
    "person": ("Model serving: Femi Balogun owns model serving.",
               "Femi is on parental leave until April, so Sofia Marquez takes model serving questions in the meantime.",
               "who is on model serving", "femi balogun -> sofia marquez"),
    "minutes": ("Access tokens: access tokens from the auth service expire after 15 minutes.",
                "After the pen test last week the security team cut the lifetime of access tokens to ten minutes.",
                "how long do access tokens live", "15 min -> 10 min"),
}


@pytest.mark.parametrize("name", sorted(CURRENT))
def test_search_ranks_the_newer_of_two_values_for_what_both_answer_first(name: str) -> None:
    older, newer, question, change = CURRENT[name]
    first = run_mem("add", older, "--now", "2026-05-01T09:00:00Z").records[0]
    second = run_mem("add", newer, "--now", "2026-05-02T09:00:00Z").records[0]
    assert "supersedes" not in second  # intake leaves both: search alone decides the order
    hits = run_mem("search", question, "--now", "2026-05-03T00:00:00Z").records
    order = [h["id"] for h in hits]
    assert order.index(second["id"]) < order.index(first["id"])
    why = hits[order.index(second["id"])]["why"]["current"]
    assert why["over"] == first["id"] and change in why["reason"]


# Look-alikes: the newer names another queue, another environment, or only plans the change; the
# older answers the question and stays first.
LOOK_ALIKES = {
    "another_queue": ("The transcription queue runs with a concurrency of 4 jobs per node.",
                      "The email queue runs with a concurrency of 10 jobs per node.",
                      "what is the concurrency of the transcription queue"),
    "another_environment": ("Staging: the staging API database pool is 25 connections per pod.",
                            "Production runs the API with a database pool of 50 connections per pod.",
                            "staging API database pool"),
    "a_plan": ("Standup: standup is at 09:45 in the Thames room.",
               "We might move standup to 10:00 when the contractors join.",
               "what time is standup"),
    "another_channel": ("Payment alerts for the on-call engineer go to the #payments-alerts channel.",
                        "Deploy notices for the release manager go to the #deploys channel.",
                        "which channel do payment alerts go to"),
    "another_bucket": ("Staging uploads are stored under s3://acme-staging/uploads.",
                       "Prod uploads are stored under s3://acme-prod/uploads.",
                       "where are staging uploads stored"),
}


@pytest.mark.parametrize("name", sorted(LOOK_ALIKES))
def test_search_keeps_an_older_answer_first_when_the_newer_value_is_another_slots(name: str) -> None:
    older, newer, question = LOOK_ALIKES[name]
    first = run_mem("add", older, "--now", "2026-05-01T09:00:00Z").records[0]
    second = run_mem("add", newer, "--now", "2026-05-02T09:00:00Z").records[0]
    hits = run_mem("search", question, "--now", "2026-05-03T00:00:00Z").records
    order = [h["id"] for h in hits]
    assert "supersedes" not in second and order.index(first["id"]) < order.index(second["id"])
    assert not any("current" in h["why"] for h in hits)


# (older, newer): a note's passive without its "was", and "renamed" with the new name right after it
TELEGRAPHIC_PAIRS = {
    "renamed_no_to": ("Build notifications go to #ci-builds.", "#ci-builds renamed #ci-alerts; the bot config is updated."),
    "renamed_no_was": ("Payment events are consumed by the pay-sync worker.",
                       "pay-sync renamed to ledger-sync; dashboards follow."),
    "replaced_no_was": ("Nightly exports go to the bucket exports-prod-eu.",
                        "exports-prod-eu replaced by exports-archive-eu after the storage review."),
}


@pytest.mark.parametrize("name", sorted(TELEGRAPHIC_PAIRS))
@pytest.mark.parametrize("on", [True, False])
def test_a_rename_told_in_a_note_s_short_form_supersedes(name: str, on: bool, monkeypatch) -> None:
    from mem.enrich import corrections
    from tests.conftest import pair_added_with

    older, newer = pair_added_with(monkeypatch, corrections, "TELEGRAPHIC", on, TELEGRAPHIC_PAIRS[name],
                                   {"MEM_EMBEDDER": "minilm"})
    assert (newer.get("supersedes") == [older["id"]]) is on


def test_an_active_rename_with_no_target_reads_no_change() -> None:
    from mem.enrich import corrections

    assert corrections.read("We renamed the repo.") is None or not corrections.read("We renamed the repo.").new


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("newer", ["From Marta: I've handed billing-export over to Tom Reyes, send questions his way.",
                                   "Marta here - I'm handing billing-export to Tom Reyes, send questions his way.",
                                   # a note that opens on its verb says it of its speaker
                                   "Marta: handing billing-export to Tom Reyes, send questions his way.",
                                   "Marta here: handing billing-export to Tom Reyes, send questions his way.",
                                   # ... and so does a note signed at its end
                                   "I've handed billing-export over to Tom Reyes, send questions his way. - Marta",
                                   "Handing billing-export to Tom Reyes from Monday, send questions his way. - Marta"])
def test_a_handover_told_by_the_old_owner_in_the_first_person_supersedes(newer: str, on: bool, monkeypatch) -> None:
    from mem.enrich import corrections
    from tests.conftest import pair_added_with

    # given as a fact: "Marta here - I'm ..." is guessed to be a dialogue turn, an episode, which never supersedes
    older, added = pair_added_with(monkeypatch, corrections, "SPEAKER_I", on,
                                   ("Questions about billing-export go to Marta Lind, who owns it.", newer),
                                   {"MEM_EMBEDDER": "minilm"}, (None, "fact"))
    assert (added.get("supersedes") == [older["id"]]) is on


@pytest.mark.parametrize("on", [True, False])
def test_what_an_older_memory_only_asks_is_no_value_a_handover_replaces(on: bool, monkeypatch) -> None:
    from mem.enrich import corrections
    from tests.conftest import pair_added_with

    asked, added = pair_added_with(
        monkeypatch, corrections, "OLDER_ASKED", on,
        ("Open question for Marta: should billing-export retry on a 503 or page? Nothing decided yet.",
         "From Marta: I've handed billing-export over to Tom Reyes, send questions his way."),
        {"MEM_EMBEDDER": "minilm"}, ("note", "fact"))
    assert (added.get("supersedes") == [asked["id"]]) is not on


def test_a_message_relayed_from_someone_is_a_note_and_its_handover_supersedes() -> None:
    """"From Marta: ..." relays a message, no dialogue turn: guessed a fact, it corrects what it changes."""
    env = {"MEM_EMBEDDER": "minilm"}
    older = run_mem("add", "Questions about billing-export go to Marta Lind, who owns it.", "--now", "2026-05-01T09:00:00Z",
                    env=env).records[0]
    added = run_mem("add", "From Marta: I've handed billing-export over to Tom Reyes, send questions his way.",
                    "--now", "2026-05-02T09:00:00Z", env=env).records[0]
    assert added["kind"] == "fact" and added.get("supersedes") == [older["id"]]
    turn = run_mem("add", "Marta: I went to the billing offsite yesterday.", "--now", "2026-05-03T09:00:00Z", env=env)
    assert turn.records[0]["kind"] == "episode"  # a dialogue turn stays one


@pytest.mark.parametrize("label", ["Handover", "Retro", "Runbook", "Wiki", "ClickHouse", "Ingest SLO"])
def test_a_note_s_heading_is_no_speaker_so_the_note_is_a_fact_that_corrects(label: str) -> None:
    """"Handover: ..." or "ClickHouse: ..." heads a note about something; only a person's label opens a dialogue
    turn (an episode, which is never asserted and never supersedes)."""
    older = run_mem("add", "Nadia Farouk owns the metering service and reviews its pull requests.",
                    "--now", "2026-05-01T09:00:00Z").records[0]
    added = run_mem("add", f"{label}: Rhys Pritchard looks after the metering service and its pull requests; Nadia is "
                    "moving to the data team.", "--now", "2026-05-02T09:00:00Z").records[0]
    assert added["kind"] == "fact" and added["layer"] == 3 and added.get("supersedes") == [older["id"]], added
    people = {e["key"] for e in run_mem("graph", "entities").records if e["type"] in ("person", "name")}
    assert "rhys pritchard" in people and label.lower() not in people, people


def test_a_plural_ending_in_ies_is_the_word_itself_so_a_digest_s_change_finds_its_slot() -> None:
    # "dependencies" and "dependency" are one slot word ("dependenci" had left the slot one word short)
    old = run_mem("add", "Security scans use Snyk for dependencies.", "--now", "2026-05-01T09:00:00Z").records[0]
    new = run_mem("add", "AppSec monthly: pentest findings are all closed, and we moved dependency scanning from Snyk "
                  "to GitHub Dependabot to cut costs.", "--now", "2026-05-02T09:00:00Z").records[0]
    assert new["supersedes"] == [old["id"]]
    hits = run_mem("search", "which tool scans our dependencies?").records
    assert [h["id"] for h in hits] == [new["id"]]  # the superseded memory is not answered with


@pytest.mark.parametrize(("text", "marked"), [
    ("Tomas signs off each store build from this release on.", True),
    ("From here on sprints are three weeks.", True),
    ("Nadia holds the feed on-call starting this rotation.", True),
    ("As of today the ingest cap is 40 MB.", True),
    ("Going forward the linter runs in CI.", True),
    ("On-call swaps on Mondays at 10:00 from next week.", True),
    # no point in time: a place in a text, a way of starting, a person
    ("Read the checklist from the page on the wiki on.", False),
    ("The importer rebuilt the index starting from scratch on Monday.", False),
    ("We got the key from someone on the SRE team.", False),
])
def test_a_point_from_which_it_holds_marks_what_holds_now(text: str, marked: bool) -> None:
    reading = read(text)
    assert (reading is not None and reading.marked) is marked, reading


def test_a_machine_size_is_typed_by_what_it_sizes_and_a_host_name_is_none() -> None:
    from mem.enrich.settings import typed

    assert typed("db.r6g.2xlarge") == ("db.r6g.2xlarge", "instance")
    assert typed("m5.large") == ("m5.large", "instance")
    assert typed("api.v2.example") is None and typed("node2.internal") is None
    # two sizes of one service are rivals on one slot; a database size is no cache size
    older = "Sidekiq's Redis is an ElastiCache cache.r6g.large with noeviction."
    assert corrects(read("Sidekiq's Redis is a cache.r7g.xlarge after the resize."), older)
    assert not corrects(read("Sidekiq's Redis host is a db.r7g.xlarge after the resize."), older)


def test_a_change_that_says_the_old_value_comes_back_is_left_open_and_ranked_first() -> None:
    # "revert to 30 when the audit closes": the newer holds for a while, the older again after it (no day named,
    # so no end to store): an open contradiction, never a supersession; told for good, the change supersedes
    env = {"MEM_EMBEDDER": "minilm"}
    older = "GridPulse keeps 30 days of data in hot storage."
    for_a_while = ("Per the compliance team: GridPulse hot retention stretched to 45 days while the regulator audit is "
                   "open. Revert to 30 when the audit closes.")
    first, second = added_on_day(older, 1, env), added_on_day(for_a_while, 2, env)
    assert "supersedes" not in second, second
    assert open_contradictions("--now", "2026-05-03T00:00:00Z", env=env) == [(second["id"], first["id"])]
    hits = [h["id"] for h in run_mem("search", "how many days does GridPulse keep in hot storage?", "--now",
                                     "2026-05-03T00:00:00Z", env=env).records]
    assert hits.index(second["id"]) < hits.index(first["id"])
    rule = run_mem("add", "ClaimDesk SLA: first response within 4 business hours for new claims; the breach report "
                   "goes to the claims director every Monday.", "--now", "2026-05-01T09:00:00Z", "--scope", "again",
                   env=env).records[0]
    again = run_mem("add", "Storm surge update from claims ops (Rosa): the ClaimDesk first-response target is relaxed to "
                    "1 business day until Friday. The catastrophe team is pulling in 12 extra adjusters; the 4-hour "
                    "target applies again from Monday.", "--kind", "decision", "--now", "2026-05-02T09:00:00Z",
                    "--scope", "again", env=env).records[0]
    assert "supersedes" not in again, (rule, again)
    for_good = run_mem("add", "GridPulse hot retention is 45 days now, the regulator asked for it.", "--now",
                       "2026-05-02T10:00:00Z", "--scope", "good", env=env).records[0]
    kept = run_mem("add", older, "--now", "2026-05-01T09:00:00Z", "--scope", "good", env=env).records[0]
    assert kept["status"] == "superseded" and kept["superseded_by"] == for_good["id"], kept


def test_a_year_a_change_is_dated_by_replaces_no_version() -> None:
    # "migrated to Postgres in 2021" (a close neighbour under MiniLM) dates the move: 2021 is no version of Postgres
    env = {"MEM_EMBEDDER": "minilm"}
    run_mem("add", "Ledgerline runs on Postgres 15.", "--now", "2026-05-01T09:00:00Z", env=env)
    told = run_mem("add", "Background for the new folks: ledgerline started on MySQL in 2019 and was migrated to "
                   "Postgres in 2021, which is why some column names still look MySQL-ish.", "--now",
                   "2026-05-02T09:00:00Z", env=env).records[0]
    assert "supersedes" not in told, told


@pytest.mark.parametrize("on", [True, False])
def test_a_qualifier_with_a_function_word_part_is_told_only_whole(on: bool, monkeypatch) -> None:
    """"US-region" is not told by "EU-region": its "us" is no pronoun there, so the two backups are siblings."""
    from mem.enrich import corrections
    from tests.conftest import pair_added_with

    note = ("Infra weekly, 9 May: 1) Quizly US-region database backups are kept 14 days (confirmed with Jonas); 2) the "
            "new bastion host is live; 3) cost report shows NAT gateway spend up 12%.")
    env = {"MEM_EMBEDDER": "minilm"}
    older, newer = pair_added_with(monkeypatch, corrections, "QUALIFIER_PARTS", on,
                                   ("Quizly EU-region database backups are kept 35 days.", note), env)
    assert (newer.get("supersedes") == [older["id"]]) is not on
    # the same note still replaces the US region's own older retention
    twin = run_mem("add", "Quizly US-region database backups are kept 35 days.", "--scope", "us",
                   "--now", "2026-05-01T09:00:00Z", env=env).records[0]
    again = run_mem("add", note, "--scope", "us", "--now", "2026-05-02T09:00:00Z", env=env).records[0]
    assert again.get("supersedes") == [twin["id"]]


@pytest.mark.parametrize("on", [True, False])
def test_two_names_of_parts_are_told_alike_only_as_spelled(on: bool, monkeypatch) -> None:
    """Token states find "order-service" and "inventory-service" alike; they name two services, so the pool size of
    one restated for the other replaces nothing."""
    from mem.enrich import aligned
    from tests.conftest import pair_added_with

    older, newer = pair_added_with(
        monkeypatch, aligned, "NAMES_SPELLED", on,
        ("Basketry order-service max DB pool size: 40.",
         "DB tuning session notes: Basketry inventory-service max DB pool size is 25, min idle 5, statement timeout 2 s. "
         "Connection usage rarely goes above 18."), {"MEM_EMBEDDER": "minilm"})
    assert (newer.get("supersedes") == [older["id"]]) is not on


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("older,newer", [
    ("LearnLoop's K-12 tenant uses Google SSO; students sign in with their school Google accounts.",
     "LearnLoop's university tenant replaced Google SSO with Shibboleth over the summer."),
    ("The customer-facing API is documented on ReadMe.",
     "Internal APIs are no longer documented on ReadMe; they use Backstage TechDocs now."),
])
def test_an_old_value_named_about_a_sibling_is_none_of_the_older_s(older: str, newer: str, on: bool,
                                                                  monkeypatch) -> None:
    """The old value a correction names is read with the phrase before it, as a setting's slot is: "the university
    tenant" replacing Google SSO leaves the K-12 tenant's Google SSO alone."""
    from mem.enrich import corrections
    from tests.conftest import pair_added_with

    old, new = pair_added_with(monkeypatch, corrections, "VALUE_SLOTS", on, (older, newer), {"MEM_EMBEDDER": "minilm"})
    assert (new.get("supersedes") == [old["id"]]) is not on


def test_the_same_change_of_the_same_subject_still_replaces_its_old_value() -> None:
    env = {"MEM_EMBEDDER": "minilm"}
    older = added_on_day("LearnLoop's K-12 tenant uses Google SSO; students sign in with their school Google accounts.",
                         1, env)
    newer = added_on_day("LearnLoop's K-12 tenant replaced Google SSO with Clever over the summer.", 2, env)
    assert newer.get("supersedes") == [older["id"]]
