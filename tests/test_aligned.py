"""Corrections read by alignment (``mem.enrich.aligned``): a claim restated with its value swapped or denied."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mem.enrich import aligned
from mem.enrich.aligned import replaced
from tests.conftest import jsonl, run_mem

CORRECTIONS = [
    ("The audit log keeps 90 days of events.", "The audit log holds 400 days of events."),
    ("Password reset links expire after 30 minutes.", "Password reset links are good for 2 hours."),
    ("Offline sync is supported in the courier app.", "Offline sync was pulled from the courier app after the crash reports."),
    ("The image resizer runs 6 workers per node.", "Image resizer runs 10 workers per node after the launch."),
    ("Loki keeps two weeks of logs.", "Loki holds 30 days of logs since the audit."),
    ("Node version for the web app is 18.", "The web app now runs on Node 22."),
    ("The API supports XML responses.", "The API doesn't support XML responses anymore."),
    ("Customers can pay by bank transfer.", "Bank transfer is no longer offered at checkout."),
    ("The cron for the report fires at 02:00.", "The report cron fires at 04:30 now."),
    ("The deploy guide lives in docs/deploy.md.", "The deploy guide moved to handbook/deploying.md."),
    # the README's other types: a frequency, a weekday, an amount of money; a denial by "switched off"
    ("The staging database is refreshed weekly.", "The staging database is refreshed nightly now."),
    ("The deploy freeze starts on Friday.", "The deploy freeze starts on Thursday now."),
    ("The monthly cloud budget is $40k.", "The monthly cloud budget is $55k now."),
    ("The nightly CSV export goes to the finance SFTP server.",
     "The nightly CSV export to the finance SFTP server was switched off."),
    # one tool named two ways, each with a version; a newer owning up to a correction names one word and
    # leaves the older's qualifiers out
    ("We train with PyTorch 2.0.", "Training runs on torch 2.2 now."),
    ("The thumbnail worker pool has 4 workers.", "Actually the thumbnail pool has 6 workers."),
    ("Grafana alert emails go out at 08:00.", "Correction: alert emails go out at 07:30."),
]

NOT_CORRECTIONS = [
    # another thing with a value of the same type: a qualifier before what the two share, or swapped inside it
    ("The staging resizer runs 6 workers per node.", "The production resizer runs 10 workers per node."),
    ("The upload limit is 10 MB.", "Avatar uploads are limited to 2 MB."),
    ("The orders table has 40M rows.", "The users table has 2M rows."),
    ("The EU API key is rotated monthly.", "The US API key is rotated weekly."),
    ("The payments service is owned by Alice.", "The payments UI is owned by Bob."),
    ("Offline sync is supported in the courier app.", "Offline sync is not supported in the dispatcher web app."),
    ("Redis is used for caching.", "Redis is not used for sessions."),
    # the same value in other units, a value of another kind, two tools' versions
    ("The request body limit is 1 MB.", "Request bodies are capped at 1024 KB."),
    # a negated comparison is a bound, not a denial: at most 12 hours, said again
    ("Home standby duties are at most 12 hours long.", "A home standby duty can't run longer than half a day."),
    ("The cache TTL is 5 minutes.", "The cache hit rate is around 90%."),
    ("The project targets Node 20.", "The project uses pnpm 9."),
    ("The ingestion worker concurrency is 8.", "The ingestion worker retries failed jobs 3 times."),
    # plans, questions, exceptions, history, additions
    ("Tempo keeps traces for 7 days.", "We might keep traces for 14 days in Tempo next quarter."),
    ("Gunicorn runs 4 workers per box.", "What if we bumped gunicorn to 8 workers?"),
    ("The invoice export starts at 01:30.", "Until March the invoice export started at 00:30."),
    ("The image resizer runs 6 workers per node.", "The image resizer also runs a cache warmer with 2 workers."),
    ("I used to work at Google.", "I work at Anthropic."),
    # another thing told after the value, or in another clause; a file is what a claim is about
    ("We decided to use RabbitMQ for the auth service.", "We decided to use Kafka for the profile service."),
    ("Never deploy search on Fridays; Alice asked for a freeze after incident 103.",
     "Never deploy payments on Fridays; Alice asked for a freeze after incident 200."),
    ("Alice reviews changes to migrations/0020_gateway.sql.", "Alice reviews changes to src/gateway/client.ts."),
    ("Run `make test-analytics` before pushing changes to src/analytics/models.py.",
     "Run `make test-catalog` before pushing changes to migrations/0012_catalog.sql."),
    ("writer 0 wrote note number 3 about shard 8", "writer 1 wrote note number 3 about shard 8"),
    ("The routing API rate limit is 50 requests per second per API key.",
     "The routing API allows a burst of 200 requests per API key above the steady rate."),
    # owning up to a correction does not make another thing this one
    ("The upload limit is 10 MB.", "Actually, avatar uploads are limited to 2 MB."),
    ("The EU cluster runs Postgres 15.", "Actually the US cluster runs Postgres 16."),
    # "a" before a number is no amount of its own ("a 100 ms buffer" is no "a second")
    ("Arena match servers simulate 30 steps a second.", "Arena clients interpolate between snapshots with a 100 ms buffer."),
]

# A contrast ("..., not Y") denies Y when a clause before it is about what the older says, or the newer
# owns up to correcting; added to clauses about another thing, it says what that thing is not.
CONTRASTS = [  # (older, newer, denied)
    ("The app uses SQLite on device for the offline cache.", "Sorry, the offline cache is Realm, not SQLite.", True),
    ("The EEPROM on the controller is 32 KB.", "Datasheet check: the controller's EEPROM is 64 Kbit, i.e. 8 KB, not 32 KB.",
     True),
    ("The door access system vendor is HID.", "Correction: badge readers are from Paxton, not HID.", True),
    ("Sales tax at checkout comes from Stripe Tax.",
     "Gift cards are issued by Loomhouse itself, not Stripe, and live in the gift_cards table with balances in cents.",
     False),
    ("Radiology orders (ORM) go to Fuji Synapse through the RAD_ORM_OUT channel.",
     "SlotBoard uses Dapper for all data access, no ORM.", False),
]

# Two plain names swap where each stands as its clause's value, with no other value after it; a name with
# a value after it is what its clause is about. (older, newer, the swap or None)
NAME_SWAPS = [
    ("Feature flags use LaunchDarkly.", "Feature flags: Unleash, self-hosted on AKS.", "LaunchDarkly -> Unleash"),
    ("In Grafana the peak dashboard is 'Reg Week'.", "In Grafana the peak dashboard is called 'Registration Live'.",
     "Reg Week -> Registration Live"),
    ("Mirth's JVM heap on prod is 4 GiB.", "Mirth prod VMs have 4 vCPU and 16 GB RAM each.", None),
    ("The render farm runs Blender 4.1.", "The render farm nodes each have 128 GB of RAM.", None),
]

# The predicate told in other words: only token states tell "keeps" and "holds" apart from two things
# (MiniLM, ``mem.score.counterparts``); the look-alikes beside them are sibling qualifiers, whose states are
# as close as a synonym's, and stay live. (older, newer, superseded)
TOLD_OTHERWISE = {
    "tempo": ("Tempo keeps traces for 7 days.", "Tempo holds traces for three weeks.", True),
    "idempotency": ("The billing API keeps idempotency keys for 24 hours.",
                    "The billing API stores idempotency keys for 7 days.", True),
    "staging": ("The staging API listens on port 8080.", "The production API listens on port 80.", False),
    "frontend": ("Frontend runs on port 3000.", "Backend runs on port 8000.", False),
    "replica": ("The read replica keeps WAL for 3 days.", "The primary keeps WAL for 7 days.", False),
    # "top" and "speed" would both find "assumes": a word stands in for one, its best match's best match
    "scooter": ("The scooter profile's top speed on bike lanes is 20 km/h.",
                "The scooter profile assumes 15 km/h on shared sidewalks.", False),
}


@pytest.mark.parametrize(("older", "newer"), CORRECTIONS)
def test_a_restated_claim_with_its_value_swapped_or_denied_corrects_it(older: str, newer: str) -> None:
    assert replaced(newer, older)


@pytest.mark.parametrize(("older", "newer"), NOT_CORRECTIONS)
def test_another_thing_a_plan_or_an_addition_corrects_nothing(older: str, newer: str) -> None:
    assert replaced(newer, older) is None


@pytest.mark.parametrize(("older", "newer", "denied"), CONTRASTS)
def test_a_contrast_denies_only_what_its_clauses_are_about(older: str, newer: str, denied: bool) -> None:
    assert replaced(newer, older) == ("denied" if denied else None)


@pytest.mark.parametrize(("older", "newer", "swap"), NAME_SWAPS)
def test_two_names_swap_only_as_their_clauses_values(older: str, newer: str, swap: str | None) -> None:
    assert replaced(newer, older) == swap


@pytest.mark.slow
@pytest.mark.parametrize(("older", "newer", "question"), [
    (*CONTRASTS[3][:2], "which service calculates sales tax"),  # "not Stripe" tells what gift cards are not
    (*NAME_SWAPS[2][:2], "how much heap does the Mirth JVM get on prod"),  # the JVM is what the clause is about
])
def test_another_thing_told_by_a_contrast_or_a_name_supersedes_nothing_through_the_cli(
        older: str, newer: str, question: str) -> None:
    # MiniLM: the two are close neighbours, which alignment is read for; the older stays live and answers
    env = {"MEM_EMBEDDER": "minilm"}
    out = _import([{"text": older, "created_at": "2026-05-01T09:00:00Z"},
                   {"text": newer, "created_at": "2026-05-02T09:00:00Z"}], env=env)
    assert [r["status"] for r in out] == ["added", "added"] and not out[1].get("supersedes")
    hits = run_mem("search", question, "--now", "2026-05-03T00:00:00Z", env=env).records
    assert hits[0]["text"] == older


def test_without_token_states_the_predicate_told_otherwise_is_another_claim() -> None:
    for older, newer, _ in TOLD_OTHERWISE.values():
        assert replaced(newer, older) is None


def test_the_reason_names_both_values() -> None:
    assert replaced("Password reset links are good for 2 hours.",
                    "Password reset links expire after 30 minutes.") == "30 minutes -> 2 hours"


def test_without_alignment_intake_leaves_both(monkeypatch: pytest.MonkeyPatch) -> None:
    from mem.stages import supersede

    monkeypatch.setattr(supersede, "ALIGNED", False)
    older, newer = CORRECTIONS[0]
    out = _import([{"text": older, "created_at": "2026-05-01T09:00:00Z"}, {"text": newer, "created_at": "2026-05-02T09:00:00Z"}])
    assert [r["status"] for r in out] == ["added", "added"] and not out[1].get("supersedes")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_a_text_never_corrects_itself_and_nothing_raises(text: str) -> None:
    assert replaced(text, text) is None
    replaced(text, "The API listens on port 8080.")
    replaced("The API listens on port 8080.", text)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([o for o, _ in CORRECTIONS]), st.integers(1, 999))
def test_the_same_value_restated_is_no_correction(older: str, _: int) -> None:
    assert replaced(older[:-1] + " now.", older) is None  # "now" and nothing changed


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_a_text_never_corrects_itself_whatever_its_words_are_alike_to(text: str) -> None:
    assert replaced(text, text, alike=lambda older, newer: True) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["keeps", "holds", "traces", "Tempo", "for", "7", "days", "the", "API"]),
                min_size=1, max_size=8), st.integers(0, 2**32 - 1))
def test_every_word_is_its_own_counterpart(words: list[str], seed: int) -> None:
    # a word's state is found by where it stands, the same on both sides of one text, whatever the states
    import numpy as np

    from mem.score.counterparts import Counterparts

    text = " ".join(words)
    spans = [(m.start(), m.end()) for m in __import__("re").finditer(r"\w+", text)]
    rows = np.random.default_rng(seed).standard_normal((len(spans), 8)).astype(np.float32)
    alike = Counterparts(text, text, lambda: (rows, rows), lambda _: spans)
    assert all(alike(w, w) for w in words)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab c-_.1", max_size=40), st.lists(st.tuples(st.integers(0, 40), st.integers(0, 6)), max_size=12),
       st.integers(0, 2**32 - 1))
def test_a_words_vector_is_the_mean_of_the_tokens_it_overlaps(text: str, places: list, seed: int) -> None:
    # every word's row, made for all words at once, is the one made word by word
    import numpy as np

    from mem.score import counterparts

    spans = tuple((start, start + width) for start, width in places)
    rows = np.random.default_rng(seed).standard_normal((len(spans), 4)).astype(np.float32)
    words, vectors = counterparts._word_vectors(text, spans, rows)
    found: dict = {}
    for match in counterparts.WORD.finditer(text):
        found.setdefault(match[0].lower(), (match.start(), match.end()))
    assert words == (list(found) if spans else [])
    if words:
        starts, ends = np.array(spans).T
        cover = np.array([(starts < end) & (ends > start) for start, end in found.values()], dtype=np.float32)
        means = cover @ rows
        assert np.array_equal(vectors, means / np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12))


def _import(records: list[dict], env: dict | None = None) -> list[dict]:
    done = run_mem("import", "-", "--now", "2026-05-03T00:00:00Z", input=jsonl(*records), env=env)
    assert done.code == 0, done.stderr
    return done.records


def _pairs(pairs: dict[str, tuple[str, str]], correction_first: bool, env: dict | None = None
           ) -> dict[str, tuple[dict, dict]]:
    """Each pair imported in its own scope, the newer a day later (first when ``correction_first``):
    scope -> (older's outcome, newer's outcome)."""
    records = []
    for scope, (older, newer) in pairs.items():
        first = {"text": older, "scope": scope, "created_at": "2026-05-01T09:00:00Z"}
        second = {"text": newer, "scope": scope, "created_at": "2026-05-02T09:00:00Z"}
        records += [second, first] if correction_first else [first, second]
    out = _import(records, env)
    return {scope: (out[2 * i + 1], out[2 * i]) if correction_first else (out[2 * i], out[2 * i + 1])
            for i, scope in enumerate(pairs)}


def _superseded(old: dict, new: dict, correction_first: bool) -> bool:
    """Whether the newer superseded the older: on its arrival, or (imported first) the older came in superseded."""
    if correction_first:
        return old["status"] == "superseded" and old.get("superseded_by") == new["id"]
    return new.get("supersedes") == [old["id"]]


@pytest.mark.parametrize("correction_first", [False, True])
def test_intake_supersedes_a_restated_claim_in_both_orders(correction_first: bool) -> None:
    # neither pair is read as a correction by ``corrections`` or the assertions: alignment alone decides
    outcomes = _pairs({"swap": CORRECTIONS[0], "denied": CORRECTIONS[2], "staging": NOT_CORRECTIONS[0]},
                      correction_first)
    for scope in ("swap", "denied"):
        assert _superseded(*outcomes[scope], correction_first), (scope, outcomes[scope])
    old, new = outcomes["staging"]
    assert old["status"] == new["status"] == "added" and not new.get("supersedes"), outcomes["staging"]
    hits = run_mem("search", "how many days of events does the audit log keep?", "--scope", "swap",
                   "--now", "2026-05-03T00:00:00Z").records
    assert [h["id"] for h in hits] == [outcomes["swap"][1]["id"]]


@pytest.mark.slow
@pytest.mark.parametrize("correction_first", [False, True])
def test_token_states_tell_a_predicate_told_otherwise_from_another_thing(correction_first: bool) -> None:
    outcomes = _pairs({k: (o, n) for k, (o, n, _) in TOLD_OTHERWISE.items()}, correction_first,
                      env={"MEM_EMBEDDER": "minilm"})
    for scope, (old, new) in outcomes.items():
        assert _superseded(old, new, correction_first) == TOLD_OTHERWISE[scope][2], (scope, old, new)
        if not TOLD_OTHERWISE[scope][2]:
            assert old["status"] == new["status"] == "added", (scope, old, new)


@pytest.mark.slow
def test_without_counterparts_intake_leaves_a_predicate_told_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    from mem.stages import supersede

    monkeypatch.setattr(supersede, "COUNTERPARTS", False)
    outcomes = _pairs({"tempo": TOLD_OTHERWISE["tempo"][:2]}, False, env={"MEM_EMBEDDER": "minilm"})
    old, new = outcomes["tempo"]
    assert old["status"] == new["status"] == "added" and not new.get("supersedes")


@pytest.mark.slow
@pytest.mark.parametrize("correction_first", [False, True])
def test_an_alias_and_an_owned_up_correction_supersede_in_both_orders(correction_first: bool) -> None:
    # the spelling decides these (their words need no token states); MiniLM for intake's cosine gate
    pairs = {"alias": CORRECTIONS[-3], "owned": CORRECTIONS[-2], "eu": NOT_CORRECTIONS[-2]}
    outcomes = _pairs(pairs, correction_first, env={"MEM_EMBEDDER": "minilm"})
    for scope in ("alias", "owned"):
        assert _superseded(*outcomes[scope], correction_first), (scope, outcomes[scope])
    old, new = outcomes["eu"]
    assert old["status"] == new["status"] == "added" and not new.get("supersedes")


@pytest.mark.slow
def test_the_word_test_reads_a_chunks_token_states_without_running_the_model_again(monkeypatch) -> None:
    # eager intake writes a chunk's token states at its end; the supersession check's word test must read
    # the earlier drafts' states from the chunk, not run MiniLM again on the writing thread (it once did,
    # and `mem add -` fell from x0.63 to x0.38 of the embedder alone)
    import traceback

    from mem.embed.minilm import MiniLM

    from_the_check: list[int] = []
    states = MiniLM.token_states

    def counted(self, texts):
        if any(frame.filename.endswith("supersede.py") for frame in traceback.extract_stack()):
            from_the_check.append(len(texts))
        return states(self, texts)

    monkeypatch.setattr(MiniLM, "token_states", counted)
    old, new = TOLD_OTHERWISE["tempo"][:2]
    done = run_mem("add", "-", "--now", "2026-05-03T00:00:00Z",
                   input=jsonl({"text": old, "created_at": "2026-05-01T09:00:00Z"},
                               {"text": new, "created_at": "2026-05-02T09:00:00Z"}),
                   env={"MEM_EMBEDDER": "minilm"})
    assert done.code == 0, done.stderr
    first, second = done.records
    assert second.get("supersedes") == [first["id"]], done.records  # the word test ran and decided
    assert from_the_check == []


# (older, newer): a name before a plain word of its clause qualifies that word, so no value is swapped
NAME_MODIFIER_PAIRS = {
    "repo_database": ("SlotBoard's code is in the Azure DevOps repo wardlink/slotboard.",
                      "SlotBoard's database is on SQL Server 2019 now."),
    "feed_drop": ("HR integration wiki: the Workday crew feed (bases, contracts) arrives daily at 05:00 UTC; "
                  "publish-worker reads it before the optimiser snapshot.",
                  "The HR feed for agency cabin crew arrives at 06:00 UTC from a separate SFTP drop."),
}


@pytest.mark.parametrize("name", sorted(NAME_MODIFIER_PAIRS))
@pytest.mark.parametrize("on", [True, False])
def test_a_name_qualifying_a_word_is_no_value_swapped(name: str, on: bool, monkeypatch) -> None:
    from tests.conftest import pair_added_with

    older, newer = pair_added_with(monkeypatch, aligned, "NAME_MODIFIERS", on, NAME_MODIFIER_PAIRS[name],
                                   {"MEM_EMBEDDER": "minilm"})
    assert (newer.get("supersedes") == [older["id"]]) is not on  # without the rule: "Azure DevOps -> SQL Server"


def test_a_name_at_the_end_of_its_clause_is_still_swapped() -> None:
    assert aligned.replaced("The search health dashboard moved to Grafana.",
                            "The search health dashboard is in Looker.") == "Looker -> Grafana"
    assert aligned.replaced("Feature flags: Unleash, self-hosted on AKS.", "Feature flags use LaunchDarkly.") \
        == "LaunchDarkly -> Unleash"


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["in", "since", "until", "before", "after"]), st.integers(1995, 2035), st.integers(9, 17))
def test_a_year_a_change_is_dated_by_is_no_value_it_swaps(word: str, year: int, version: int) -> None:
    # "migrated to Postgres in 2021" dates the change: 2021 is no value of the slot "Postgres 15" holds
    older = f"Ledgerline runs on Postgres {version}."
    assert replaced(f"Ledgerline started on MySQL and was migrated to Postgres {word} {year}.", older) is None
    assert replaced(f"Ledgerline runs on Postgres {version + 1} now.", older) == f"{version} -> {version + 1}"
