"""Values as people write them, read as values of one type, so a correction is found by the slot and the
old value whatever unit or spelling each side uses (volts and millivolts, degrees Celsius, "half an
hour", "one week", "a fortnight"); a number closing a name ("RX-3 prototypes") is part of the name, and a slot the newer
narrows by such a name is another slot; one reading whatever the interpreter's hash seed. CLI through
the real entry point, intake in both orders."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from mem.enrich.corrections import words_named
from tests.conftest import added_then_asked, clear_reader_caches, jsonl, run_mem

MINILM = {"MEM_EMBEDDER": "minilm"}

# (older, newer): the newer replaces the older's value, told in another unit or spelling
CORRECTED = {
    # a unit spelled out as words: "half an hour" is 30 minutes, so 10 minutes is replaced
    "half_an_hour": ("A build agent is marked offline after 10 minutes without a heartbeat.",
                     "Build agents are now marked offline after half an hour without a heartbeat; short network "
                     "blips kept failing builds."),
    "one_week": ("Release duty is two weeks per engineer now.",
                 "Release duty went back to one week each; with six engineers a fortnight came round too rarely."),
    # a duration spelled as a phrase: "a fortnight" is 2 weeks, "a quarter of an hour" 15 minutes
    "fortnight": ("The card.authorizations topic keeps 7 days of events.",
                  "Retention on the card.authorizations topic was raised to a fortnight for the chargeback team."),
    "quarter_hour": ("The enrollment sync to Banner runs every 30 minutes.",
                     "The enrollment sync to Banner now runs every quarter of an hour."),
    # degrees: the old value named again beside the new one
    "celsius": ("Greenhouse heaters switch on when the air temperature drops below 8 °C.",
                "Greenhouse heaters now switch on at 6 °C. At 8 they ran most of the night for nothing."),
    # volts: "the 12.2 cut" names the old floor again
    "volts": ("The inverter disconnects the load when the battery reads under 12.2 V.",
              "Lowered the inverter's battery floor to 11.9 V; the 12.2 cut was dropping the load every evening."),
}


def _import(pairs: dict[str, tuple[str, str]], *, correction_first: bool) -> dict[str, tuple[dict, dict]]:
    """Each pair in its own scope (older a day before newer), one ``mem import``; key -> (old, new) outcome."""
    records = []
    for key, (old, new) in pairs.items():
        first = {"text": old, "scope": key, "created_at": "2026-05-01T09:00:00Z"}
        second = {"text": new, "scope": key, "created_at": "2026-05-02T09:00:00Z"}
        records += [second, first] if correction_first else [first, second]
    done = run_mem("import", "-", "--now", "2026-05-03T00:00:00Z", input=jsonl(*records), env=MINILM)
    assert done.code == 0, done.stderr
    out = done.records
    return {key: ((out[2 * i + 1], out[2 * i]) if correction_first else (out[2 * i], out[2 * i + 1]))
            for i, key in enumerate(pairs)}


@pytest.mark.parametrize("correction_first", [False, True], ids=["in_order", "correction_first"])
def test_a_value_in_another_unit_or_spelling_is_replaced_in_both_orders(correction_first: bool) -> None:
    ids = _import(CORRECTED, correction_first=correction_first)
    exported = {r["id"]: r for r in run_mem("export").records}
    for key, (old, new) in ids.items():
        assert exported[old["id"]]["superseded_by"] == new["id"], (key, old, new)
        assert (old if correction_first else new)["status"] == ("superseded" if correction_first else "added"), key


def test_a_series_member_naming_its_own_threshold_replaces_nothing() -> None:
    # "RX-3 prototypes" is another product than the one whose threshold the older sets; "RX-3" counts no prototypes
    ids = _import({"member": ("low_voltage alarm threshold: 11800 mV on the RX-2 controllers.",
                              "RX-3 prototypes raise their low-voltage alarm at 12.4 V; the lithium pack has a "
                              "different discharge curve.")}, correction_first=False)
    (old, new), = ids.values()
    assert "supersedes" not in new
    assert not {r["id"]: r for r in run_mem("export").records}[old["id"]].get("superseded_by")


OLDER_ALARM = "Operators get a low-voltage alarm on the panel when a UPS battery reads below 11.8 V."
NEWER_ALARM = ("low_voltage alarm threshold: 11500 mV. Lead-acid blocks rest around 11.8 V under load, so the alarm "
               "was firing every afternoon.")


def test_search_ranks_the_newer_of_two_close_neighbours_whose_values_differ_in_unit() -> None:
    # no change word, so intake leaves both; search puts the newer first and says why
    older, newer, hits = added_then_asked(OLDER_ALARM, NEWER_ALARM, "when do operators get a low-voltage alarm on the panel",
                                          env=MINILM)
    assert "supersedes" not in newer
    assert [h["id"] for h in hits][:2] == [newer["id"], older["id"]]
    assert hits[0]["why"]["current"]["over"] == older["id"] and "11500 mv" in hits[0]["why"]["current"]["reason"]


@pytest.mark.parametrize("also_near", [True, False])
def test_close_neighbours_are_compared_also_when_the_question_names_both(also_near: bool, monkeypatch) -> None:
    # the question names the older's words in the newer too, but they pick the newer's sentence that restates
    # the older's value beside the new one: only the two being close neighbours (``ALSO_NEAR``) says what both set
    from mem.records import Hit, Memory
    from mem.score import contradiction

    monkeypatch.setattr(contradiction, "ALSO_NEAR", also_near)
    hits = [Hit(memory=Memory(id=i, text=t, created_at=at), rank=r, score=1.0 / r, why={})
            for r, (i, t, at) in enumerate([("old", OLDER_ALARM, "2026-05-01T09:00:00Z"),
                                            ("new", NEWER_ALARM, "2026-05-02T09:00:00Z")], start=1)]
    asked = "what voltage sets off the low voltage alarm"
    assert 2 <= len(words_named(asked, OLDER_ALARM)) and words_named(asked, OLDER_ALARM) <= words_named(asked, NEWER_ALARM)
    import numpy as np
    close = {"old": np.array([1.0, 0.0]), "new": np.array([0.6, 0.8])}  # cosine .6
    pairs = contradiction.current_pairs(hits, asked, close)
    assert [p[:2] for p in pairs] == ([("new", "old")] if also_near else [])


def test_the_reading_is_the_same_whatever_the_hash_seed() -> None:
    # a slot's compound words were split after joining the set of them in iteration order, so whether these
    # two shared a slot word depended on PYTHONHASHSEED
    code = ("from mem.enrich.corrections import read, corrects\n"
            "r = read('FP-3 prototypes raise their low-battery alert at 3.4 V; the Li-SOCl2 cell has a different "
            "discharge curve from the L91s.')\n"
            "print(corrects(r, 'FP-3 is the next probe: it adds a 90 cm sensor and runs on a single Li-SOCl2 D cell. "
            "The first prototypes are in the chamber.', neighbour=True))\n")
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in range(4)}
    assert seen == {"None\n"}


@pytest.mark.parametrize("cased", [True, False])
def test_a_verb_spelled_like_a_tool_is_no_value(cased: bool, monkeypatch) -> None:
    # "releases go out" names no Go: a tool in lower case is a word beside a name ("Android"), so the release
    # day does not replace which Android versions the app supports (``aligned.CASED_TOOLS``)
    from mem.enrich import aligned

    monkeypatch.setattr(aligned, "CASED_TOOLS", cased)
    clear_reader_caches()
    try:
        ids = _import({"go_out": ("The Harbor app supports Android 9 and up.",
                                  "Harbor app store releases go out on Thursday mornings so support has the rest of "
                                  "the week to catch problems.")}, correction_first=False)
    finally:
        clear_reader_caches()
    (old, new), = ids.values()
    superseded = {r["id"]: r for r in run_mem("export").records}[old["id"]].get("superseded_by")
    assert (superseded == new["id"]) is not cased
