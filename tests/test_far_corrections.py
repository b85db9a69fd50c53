"""A correction worded far from what it corrects: one that says what holds now ("... now", "no longer",
"any more") and names the older's slot gets an open ``contradicts`` edge down to the cosine intake looks
its neighbours up to, so search ranks it above the older for a question both answer (``why.contradicts``)
and ``mem verify`` lists the pair. CLI through the real entry point, with the threshold as before too."""

from __future__ import annotations

import pytest

from mem.stages import supersede
from tests.conftest import added_on_day, run_mem

MINILM = {"MEM_EMBEDDER": "minilm"}

# (older, newer, question): MiniLM puts each pair below the rules' neighbour cosine (0.5)
FAR = {
    "push": ("Enrollment changes are pushed to Banner every quarter of an hour.",
             "The Banner push doesn't run from cron any more: Ethos change notifications trigger it as they arrive.",
             "what triggers the banner enrollment push"),
    # (a machine size is a setting of its own since the twenty-third session: "m6i.2xlarge" -> "m7g.2xlarge" replaces
    # outright, so the far pair names no size)
    "nodes": ("The EKS web node group runs on Intel instances.",
              "Web node group: Graviton, now that libvips is rebuilt with NEON.",
              "which CPUs do the web nodes run on"),
}


def _add(text: str, day: int) -> dict:
    return added_on_day(text, day, MINILM)


@pytest.mark.parametrize("name", sorted(FAR))
@pytest.mark.parametrize("far", [True, False], ids=["now", "before"])
def test_a_far_correction_saying_what_holds_now_ranks_first(name: str, far: bool, monkeypatch) -> None:
    if not far:
        monkeypatch.setattr(supersede, "MARKED_CONTRADICTS_MIN", supersede.NEIGHBOUR_MIN)
    older, newer, question = FAR[name]
    first, second = _add(older, 1), _add(newer, 2)
    assert "supersedes" not in second  # too little of the older named to replace it outright
    hits = run_mem("search", question, "--now", "2026-05-03T00:00:00Z", env=MINILM).records
    order = [h["id"] for h in hits]
    listed = run_mem("verify", "--now", "2026-05-03T00:00:00Z", env=MINILM).records
    open_pair = any(r.get("finding") == "contradiction" and {r.get("id"), r.get("other")} == {first["id"], second["id"]}
                    for r in listed)
    if far:
        assert order.index(second["id"]) < order.index(first["id"])
        assert hits[order.index(second["id"])]["why"]["contradicts"]["over"] == first["id"]
        assert open_pair, listed
    else:
        assert order.index(first["id"]) < order.index(second["id"]) and not open_pair


# A correction that replaces what it corrects, and an older memory on the same subject it does not correct
# (after bench set u): the correction's edge to that memory would put it over it for a question about it
CART = ("We keep the enrollment cart server-side in the session rather than localStorage, so a student switching "
        "devices mid-registration keeps their cart.",
        "The enrollment cart front end uses jQuery 3.",
        "Correction: the enrollment cart front end uses HTMX, not jQuery 3.")


@pytest.mark.parametrize("one_target", [True, False], ids=["one-target", "before"])
def test_a_correction_that_replaced_its_target_doubts_nothing_else(one_target: bool, monkeypatch) -> None:
    monkeypatch.setattr(supersede, "ONE_TARGET", one_target)
    session, jquery, correction = (_add(text, day) for day, text in enumerate(CART, start=1))
    assert correction["supersedes"] == [jquery["id"]]
    listed = run_mem("verify", "--now", "2026-05-04T00:00:00Z", env=MINILM).records
    doubted = {r.get("other") for r in listed if r.get("finding") == "contradiction" and r.get("id") == correction["id"]}
    hits = run_mem("search", "why does the enrollment cart live in the session", "--now", "2026-05-04T00:00:00Z",
                   env=MINILM).records
    if one_target:
        assert not doubted and hits[0]["id"] == session["id"]
    else:
        assert doubted == {session["id"]}
        assert hits[0]["id"] == correction["id"] and hits[0]["why"]["contradicts"]["over"] == session["id"]
