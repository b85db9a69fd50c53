"""The settings reader (``mem.enrich.settings``): a number's unit is a whole word, never the first letters
of a name that follows the number ("6 m6i.xlarge nodes" are 6 of something, not 6 minutes; "16 H100 GPUs"
not 16 hours), which would let a correction of a duration replace an instance count. Property tests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mem.enrich.lexicon import TOKEN_SYNONYMS, UNITS
from mem.enrich.settings import _settings

units = st.sampled_from(sorted(u for u in UNITS if u.isalpha()))
tails = st.from_regex(r"[0-9][a-z0-9]{0,4}(\.[a-z]{1,6})?", fullmatch=True)


def _units(text: str) -> set[str]:
    return {kind for (_, kind) in _settings(text, plain=True)}


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 999), units, tails)
def test_a_name_starting_with_a_unit_is_no_unit(n: int, unit: str, tail: str) -> None:
    read = _settings(f"The pool runs {n} {unit}{tail} nodes.", plain=True)
    assert all(kind != UNITS[unit] for (_, kind) in read), read
    assert any(value == float(n) for (value, _) in read), read  # the number is still read, as a count


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 999), units, st.sampled_from(["", " ", "-"]), st.sampled_from([".", ",", ";", " now.", ""]))
def test_a_unit_that_ends_its_word_is_read(n: int, unit: str, gap: str, after: str) -> None:
    if gap == "-" and not unit.isalpha():
        return
    assert UNITS[unit] in _units(f"The timeout is {n}{gap}{unit}{after}")


def test_the_instances_of_the_bench_sets_are_counts() -> None:
    # six counts the nodes (the machine size between them is a setting of its own type), no unit "m"
    from mem.text import stem

    assert _settings("The prod EKS node group runs 6 m6i.xlarge nodes.", plain=True).keys() == {
        (6.0, stem("nodes")), ("m6i.xlarge", "instance")}
    assert _units("Kueue ClusterQueue cw-train has a quota of 16 H100 GPUs.") == {"#"}
    assert {v for v, _ in _settings("AKS user pool went from 4 to 6 D8s_v5 nodes.", plain=True)} == {4.0, 6.0}
    assert _units("AKS user pool went from 4 to 6 D8s_v5 nodes.") == {"#"}


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 999), st.sampled_from(["files", "credits", "msgs/s", "events"]))
def test_a_count_written_in_thousands_is_its_whole_number(n: int, noun: str) -> None:
    # "50k files" is 50,000 files: written either way, one value (a "50" beside "48 partitions" was a rival)
    spelled, short = _settings(f"A ZIP upload may hold {n * 1000} {noun}.", plain=True), \
        _settings(f"A ZIP upload may hold {n}k {noun}.", plain=True)
    assert set(spelled) == set(short), (spelled, short)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 200), st.integers(1, 99))
def test_a_signed_number_is_below_zero_with_a_unit_and_no_count_without(label: int, degrees: int) -> None:
    read = _settings(f"Alarm for the -{label} freezers triggers at -{degrees} °C.", plain=True)
    assert (float(-degrees), "degc") in read, read
    assert not any(kind.startswith("freezer") for (_, kind) in read), read  # "-80 freezers" is a label, no count


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 99), st.integers(-20, 20), st.sampled_from(["e", "E"]))
def test_a_number_in_scientific_notation_is_read_as_its_value(mantissa: int, exponent: int, e: str) -> None:
    from mem.enrich.settings import _numerals

    value = mantissa / 10 * 10.0 ** exponent
    written = f"{mantissa / 10:g}{e}{exponent}"
    read = _numerals(f"the learning rate is {written} now")
    assert float(read.split()[-2]) == pytest.approx(value, rel=1e-9, abs=1e-12)
    assert _numerals(f"tag v{written}x stays") == f"tag v{written}x stays"  # inside a word: no number


@pytest.mark.parametrize("short,full", sorted(TOKEN_SYNONYMS.items()))
def test_an_abbreviation_is_read_as_the_word_it_shortens(short: str, full: str) -> None:
    """Every abbreviation of the table ("prod", "repo", "infra", "docs", "perf", ...) folds as its word does, so a slot
    named either way is one slot (the README's list; ``settings._fold``)."""
    from mem.enrich.settings import _fold

    assert _fold(short) == _fold(full)
