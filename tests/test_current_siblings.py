"""Siblings are not corrections, a period is a value however it is spelled, and a preface is not the claim.
Two memories that say the same of two things of one kind (another customer, the staging deployment, the
partner API, "Warehouse B", the Android Auto app) each stay current; a frequency told as "weekly", "every
day" or "once a day" replaces another of its slot; "Small fix to my earlier note: ..." is compared from its
colon on. CLI through the real entry point, each rule with its ablation switch off and on."""

from __future__ import annotations

import pytest

from tests.conftest import clear_reader_caches, jsonl, run_mem

MINILM = {"MEM_EMBEDDER": "minilm"}


def _superseded(older: str, newer: str, scope: str) -> bool:
    """Import the two (older a day first) into their own scope; whether the newer superseded the older."""
    records = [{"text": older, "scope": scope, "created_at": "2026-05-01T09:00:00Z"},
               {"text": newer, "scope": scope, "created_at": "2026-05-02T09:00:00Z"}]
    done = run_mem("import", "-", "--now", "2026-05-03T00:00:00Z", input=jsonl(*records), env=MINILM)
    assert done.code == 0, done.stderr
    old, new = done.records
    return {r["id"]: r for r in run_mem("export").records}[old["id"]].get("superseded_by") == new["id"]


def _switched(monkeypatch, name: str, on: bool) -> None:
    """``name`` set to ``on`` in both readers that have it, their caches emptied."""
    from mem.enrich import aligned, corrections
    from mem.stages import supersede

    for module in (aligned, corrections, supersede):
        if hasattr(module, name):
            monkeypatch.setattr(module, name, on)
    clear_reader_caches()


# (older, newer) that tell two siblings apart, by the switch that tells them so
SIBLINGS = {
    # another row of a table: the subject swapped with the value (``SIBLINGS``)
    "another_row": ("Customer Northwind has a 99.9% uptime SLA.",
                    "Customer Contoso has a 99.5% uptime SLA."),
    # a word put inside the words both say side by side: the orders *partner* API
    "inserted": ("The orders API rate limit is 200 rps.", "The orders partner API rate limit is 50 rps."),
    # a name of two words the older names in part
    "narrowed": ("The Android app needs Android 9 or newer.",
                 "The Android Auto app needs Android 11 or newer."),
    # a capital letter inside a clause labels a thing
    "label": ("Warehouse A ships parcels over FedEx.", "Warehouse B ships parcels via UPS Ground."),
    # the same words but a word each after the value
    "after": ("The search service runs 8 workers in production.",
              "The search service runs 2 workers in staging."),
    # a capitalised word inside a sentence is a name, not a verb of change (``NAMED_VERBS``)
    "named_verb": ("The Xbox build caps at 60 fps.", "The Switch build caps at 30 fps."),
}


NAMED_ROWS = ("another_row", "label")
ENVIRONMENT_ROWS = ("after",)  # two deployment environments, which intake's environment gate tells apart too


@pytest.mark.parametrize("key", list(SIBLINGS))
@pytest.mark.parametrize("on", [True, False])
def test_a_sibling_is_no_correction(key: str, on: bool, monkeypatch) -> None:
    # two rows told by names hold a value after the name, which ``NAMES_AT_ENDS`` refuses as well, and
    # ``NAME_MODIFIERS`` too when a plain word follows it ("Warehouse *A* ships")
    switches = ["NAMED_VERBS" if key == "named_verb" else "SIBLINGS",
                *(["NAMES_AT_ENDS", "NAME_MODIFIERS"] if key in NAMED_ROWS else []),
                *(["ENVIRONMENTS"] if key in ENVIRONMENT_ROWS else [])]
    for switch in switches:
        _switched(monkeypatch, switch, on)
    try:
        assert _superseded(*SIBLINGS[key], key) is not on
    finally:
        for switch in switches:
            _switched(monkeypatch, switch, True)


PERIODS = {
    "weekly_daily": ("The billing report is generated weekly.", "The billing report is now generated every day."),
    "daily_hourly": ("Stock levels are synced from the ERP once a day.", "Stock levels sync from the ERP every hour now."),
}


@pytest.mark.parametrize("key", list(PERIODS))
@pytest.mark.parametrize("on", [True, False])
def test_a_period_in_words_is_replaced(key: str, on: bool, monkeypatch) -> None:
    from mem.stages import supersede

    # what the rule decides: without it the learned judge (tests/test_replaces.py) supersedes these too
    monkeypatch.setattr(supersede, "JUDGE", False)
    _switched(monkeypatch, "PERIODS", on)
    try:
        assert _superseded(*PERIODS[key], key) is on
    finally:
        _switched(monkeypatch, "PERIODS", True)


@pytest.mark.parametrize("on", [True, False])
def test_a_preface_before_a_colon_is_not_the_clause_compared(on: bool, monkeypatch) -> None:
    # the words before the colon share nothing with the older: the value and its slot are after it
    _switched(monkeypatch, "PREFACE", on)
    try:
        assert _superseded("Build logs are kept for 14 days.",
                           "Small fix to my earlier note: build logs are retained 30 days.", "preface") is on
    finally:
        _switched(monkeypatch, "PREFACE", True)
