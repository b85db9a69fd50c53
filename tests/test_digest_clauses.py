"""A correction inside a list of news (a digest) is read even when another item of the list is a plan:
a word of plan ("postponed") holds only in its own clause between commas (``corrections.LISTED``), so
the item that tells a change still supersedes what it changes. CLI through the real entry point."""

from __future__ import annotations

import pytest

from tests.conftest import clear_reader_caches, jsonl, run_mem

MINILM = {"MEM_EMBEDDER": "minilm"}
OLDER = "Application logs are shipped to Loki and kept for 14 days."
DIGEST = ("Friday notes: the Grafana upgrade is postponed, the pager stayed quiet all week, Mei shipped the "
          "invoice export, and Loki now keeps our logs for 30 days on the bigger bucket.")


@pytest.mark.parametrize("listed", [3, 0])
def test_a_change_in_a_digest_supersedes_what_it_changes_whatever_plan_sits_beside_it(listed: int,
                                                                                     monkeypatch) -> None:
    from mem.enrich import corrections

    monkeypatch.setattr(corrections, "LISTED", listed)
    clear_reader_caches()
    try:
        done = run_mem("import", "-", "--now", "2026-05-03T00:00:00Z", env=MINILM, input=jsonl(
            {"text": OLDER, "created_at": "2026-05-01T09:00:00Z"},
            {"text": DIGEST, "created_at": "2026-05-02T09:00:00Z"}))
    finally:
        clear_reader_caches()
    assert done.code == 0, done.stderr
    old, new = done.records
    superseded = {r["id"]: r for r in run_mem("export").records}[old["id"]].get("superseded_by")
    assert superseded == (new["id"] if listed else None)


def test_a_plan_of_few_clauses_still_blanks_its_sentence() -> None:
    # two clauses are no list: "Considering ..., for now it stays at 4" names no change
    from mem.enrich.corrections import read

    assert read("Considering scheduled scaling for the ETA model, for now it stays at 4 replicas minimum.") is None


def _superseded(older: str, newer: str) -> bool:
    done = run_mem("import", "-", "--now", "2026-05-03T00:00:00Z", env=MINILM, input=jsonl(
        {"text": older, "created_at": "2026-05-01T09:00:00Z"}, {"text": newer, "created_at": "2026-05-02T09:00:00Z"}))
    assert done.code == 0, done.stderr
    old, new = done.records
    return {r["id"]: r for r in run_mem("export").records}[old["id"]].get("superseded_by") == new["id"]


def test_a_plan_leading_a_list_holds_over_every_item() -> None:
    # the lead before the colon is a plan: no item of its list tells what holds now
    assert not _superseded(OLDER, "Plan for next quarter: the Grafana upgrade, a quieter pager rota, and Loki "
                                  "keeping our logs for 30 days on the bigger bucket.")


def test_a_period_spelled_as_a_word_replaces_one_in_minutes() -> None:
    assert _superseded("Metrics are scraped from the edge nodes every 10 minutes.",
                       "Metrics are scraped from the edge nodes every hour now.")


@pytest.mark.parametrize("items", [3, 0])
def test_a_setting_in_a_list_of_news_is_read_in_its_own_item(items: int, monkeypatch) -> None:
    """"Sprint 9 review: A, B, and from now on sprints are three weeks": the weeks set what their item names, not
    the items before it (``settings.LIST_ITEMS``); with no lists read, the slot runs back into "invoice export"."""
    from mem.enrich import settings

    monkeypatch.setattr(settings, "LIST_ITEMS", items)
    clear_reader_caches()
    try:
        replaced = _superseded("Sprints are two weeks long and start on Mondays.",
                               "Sprint 9 review: the search rewrite is done, the invoice export shipped, and from now "
                               "on sprints are three weeks. Kim liked the new board.")
    finally:
        clear_reader_caches()
    assert replaced is bool(items)


def test_commas_around_a_phrase_are_no_list() -> None:
    from mem.enrich.settings import _placed

    # "every Tuesday" is a phrase between commas, not an item: its slot is the releases' cadence
    placed = _placed("Mobile releases moved to a weekly cadence, every Tuesday, now that the pipeline runs in CI.", True)
    assert placed[("tuesday", "day")][0][:2] == ("mobile", "releas")
    listed = _placed("Notes: Ana rewrote the guide, the milestone has 12 open issues, triage is on Thursdays now.", True)
    assert listed[("thursday", "day")][0] == ("triage", "")
