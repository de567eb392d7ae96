"""The exact pieces of the grammar comparison (generator/evolution/languages.py): length sets, character
classes over all of Unicode, and node-for-node inclusion, each against answers worked out by
hand."""

from __future__ import annotations

import pytest

from generator.evolution.languages import Lengths, class_within, seq_within


def test_length_sets_of_repetitions_and_sequences() -> None:
    lengths = Lengths(20)
    assert lengths.shown(lengths.node(("rep", (("lit", "ab"),), 0, 6))) == [0, 2, 4, 6, 8, 10, 12]
    # unbounded: every even length from 6 on, and "longer than 20"
    unbounded = lengths.node(("rep", (("lit", "ab"),), 3, None))
    assert lengths.shown(unbounded) == list(range(6, 21, 2)) and unbounded >> 21 & 1
    sequence = (("lit", "x"), ("rep", (("set", "a-z", 1, 3),), 0, 2))
    assert lengths.shown(lengths.seq(sequence)) == [1, 2, 3, 4, 5, 6, 7]
    assert lengths.shown(lengths.capped(lengths.seq(sequence), 4)) == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("a", "b", "inside"),
    [
        ("a-c", "a-z", True),
        ("a-z", "a-c", False),
        ("^ab", "^a", True),  # everything but a and b is inside everything but a
        ("^a", "^ab", False),
        ("\\x00-\\x10", "\\x00-\\x1f", True),
        ("a-z0-9_-", "a-z0-9_.-", True),
        ("\U0001f600", "^a", True),  # past the BMP too
    ],
)
def test_character_classes_compare_over_all_of_unicode(a: str, b: str, inside: bool) -> None:
    assert class_within(a, b) is inside


def test_inclusion_node_for_node() -> None:
    ns = (("set", "a-z", 1, 1), ("set", "a-z0-9_-", 0, 63))
    wider = (("set", "a-z", 1, 1), ("set", "a-z0-9_.-", 0, 63))
    assert seq_within(ns, wider) and not seq_within(wider, ns)
    one_of = (("alt", ((("lit", "all"),), (("lit", "lines:"), ("set", "0-9", 1, 9)))),)
    assert seq_within((("lit", "all"),), one_of)  # one alternative is inside the choice
    assert not seq_within(one_of, (("lit", "all"),))
    optional = (("rep", (("lit", "@"), ("set", "a-z", 1, 32)), 0, 1),)
    assert seq_within((("lit", "@"), ("set", "a-z", 1, 32)), optional)
    # the same language written differently is not proven node for node (samples decide it)
    split = (("set", "0-9a-f", 4, 4), ("set", "0-9a-f", 4, 4))
    assert not seq_within((("set", "0-9a-f", 8, 8),), split)
