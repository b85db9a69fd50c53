"""Why a memory was hidden: ``mem get --explain`` on a superseded memory names what replaced it, when,
and the reason intake (or the person who linked the two) gave; and a correction is never dropped as a near
duplicate of what it corrects when it states another value. CLI (and MCP) through the real entry point."""

from __future__ import annotations

import pytest

from tests.conftest import added_on_day, pair_added_with, run_mem

MINILM = {"MEM_EMBEDDER": "minilm"}


def _add(text: str, day: int) -> dict:
    return added_on_day(text, day, MINILM)


def _explained(memory_id: str) -> dict:
    done = run_mem("get", "--explain", memory_id, "--json", "--now", "2026-05-09T00:00:00Z", env=MINILM)
    assert done.code == 0, done.stderr
    return done.records[0]["explain"]


# (older, newer, words the reason must hold): each way intake decides
REASONS = {
    "assertion": ("CI runs on Jenkins.", "We moved CI to GitHub Actions.", ["same claim", "jenkins -> github actions"]),
    "correction": ("Uploads are kept for 30 days before the sweeper deletes them.",
                   "Correction: the upload sweeper keeps files 14 days, not 30.", ["a correction", "30"]),
    "same_slot": ("The audit log holds 90 days of events.", "The audit log holds 180 days of events since the SOC 2 review.",
                  ["same slot", "90 d -> 180 d"]),
}


@pytest.mark.parametrize("name", sorted(REASONS))
def test_a_superseded_memory_says_what_replaced_it_and_why(name: str) -> None:
    older, newer, words = REASONS[name]
    first, second = _add(older, 1), _add(newer, 2)
    assert second.get("supersedes") == [first["id"]]
    superseded = _explained(first["id"])["superseded"]
    assert superseded["by"] == second["id"] and superseded["at"].startswith("2026-05-02T09:00")
    assert all(w in superseded["reason"] for w in words), superseded["reason"]
    assert "superseded" not in _explained(second["id"])  # the live memory explains no supersession


def test_a_supersession_by_hand_says_so_and_undoing_it_clears_it() -> None:
    first = _add("The design review happens on Tuesdays.", 1)
    second = _add("Lunch and learn sessions are on Fridays.", 2)
    assert run_mem("graph", "link", second["id"], first["id"], "-t", "supersedes", env=MINILM).code == 0
    assert _explained(first["id"])["superseded"] == {"by": second["id"], "at": _explained(first["id"])["superseded"]["at"],
                                                     "reason": "linked by hand"}
    assert run_mem("graph", "unlink", second["id"], first["id"], "-t", "supersedes", env=MINILM).code == 0
    assert "superseded" not in _explained(first["id"])


def test_over_mcp_get_explains_a_supersession() -> None:
    import anyio

    from tests.test_mcp import mcp_client, text

    first = _add("Uploads are kept for 30 days before the sweeper deletes them.", 1)
    second = _add("Correction: the upload sweeper keeps files 14 days, not 30.", 2)

    async def main() -> None:
        async with mcp_client("--embedder", "minilm", "--now", "2026-05-09T00:00:00Z") as client:
            plain = await client.call_tool("get", {"ids": first["id"]})
            assert "explain" not in plain.structured_content["memories"][0]
            got = await client.call_tool("get", {"ids": first["id"], "explain": True})
            superseded = got.structured_content["memories"][0]["explain"]["superseded"]
            assert superseded["by"] == second["id"] and superseded["reason"].startswith("a correction")
            assert f"superseded by {second['id']}: a correction" in text(got)

    anyio.run(main)


# (older, newer): nearly the same words (MiniLM cosine .97-.99), another value: an update, never a duplicate
NEAR_VALUES = {
    "version": ("Coursebridge runs on Django 4.2 LTS.", "Coursebridge runs on Django 5.2 LTS."),
    "capitals": ("Schema Registry compatibility for CDC subjects is BACKWARD.",
                 "CDC subjects in Schema Registry use FULL compatibility."),
}


@pytest.mark.parametrize("name", sorted(NEAR_VALUES))
@pytest.mark.parametrize("on", [True, False])
def test_a_near_duplicate_stating_another_value_is_kept(name: str, on: bool, monkeypatch) -> None:
    from mem.stages import supersede

    first, second = pair_added_with(monkeypatch, supersede, "VALUES_APART", on, NEAR_VALUES[name], MINILM)
    if not on:  # as before: dropped as a near duplicate of what it corrects
        assert second["status"] == "duplicate" and second["id"] == first["id"]
        return
    assert second["status"] == "added" and second["id"] != first["id"]
    hits = run_mem("search", "which " + ("django release" if name == "version" else "compatibility mode for CDC subjects"),
                   "--now", "2026-05-03T00:00:00Z", env=MINILM).records
    assert hits[0]["id"] == second["id"]


def test_a_restatement_with_the_same_values_is_still_a_duplicate() -> None:
    first = _add("The API gateway listens on port 8443 behind the load balancer.", 1)
    second = _add("The API gateway listens on port 8443, behind the load balancer.", 2)
    assert second["status"] == "duplicate" and second["id"] == first["id"]
