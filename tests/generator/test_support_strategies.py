"""generator.support.strategies: the hypothesis chooser over grammar trees reaches the extremes
the deterministic builder gives, and valid / invalid draws agree with the reference match."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.support.strategies import from_tree
from generator.support.trees import longest, shortest
from tests.generator.bound import ARGS, GRAMMARS, STRATEGIES

BOUNDED = [["lit", "/"], ["set", "ab", 1, 3], ["alt", [[["lit", "xyz"]], [["lit", "q"]]]]]


@given(from_tree(BOUNDED))
def test_drawn_instances_stay_between_the_extremes(value: str) -> None:
    assert len(shortest(BOUNDED)) <= len(value) <= len(longest(BOUNDED))
    assert value[0] == "/" and set(value[1:-1]) <= set("abxyz")


@given(from_tree(BOUNDED, longest=True))
def test_longest_draws_take_every_maximum(value: str) -> None:
    # "/", three class characters, then either alternative ("xyz" or "q")
    assert len(value) in (5, len(longest(BOUNDED))) and len(longest(BOUNDED)) == 7


@settings(max_examples=30)
@given(st.sampled_from(sorted(GRAMMARS)), st.data())
def test_valid_and_invalid_agree_with_the_reference(name: str, data: st.DataObject) -> None:
    assert GRAMMARS[name].accepts(data.draw(STRATEGIES.valid(name)))
    assert not GRAMMARS[name].accepts(data.draw(STRATEGIES.invalid(name)))


@given(st.data())
def test_valid_args_hold_exactly_one_of_query_and_path(data: st.DataObject) -> None:
    """profiles.yaml: tool_browse takes exactly one of query and path."""
    args = data.draw(ARGS.valid_args("tool_browse"))
    assert len({"query", "path"} & set(args)) == 1
    if "path" in args:
        assert GRAMMARS["path"].accepts(args["path"])


def test_a_default_value_is_a_fresh_copy() -> None:
    drawn: list[object] = []

    @given(ARGS.value("tool_execute", "args", {}))
    def draw(value: object) -> None:
        drawn.append(value)

    draw()
    assert all(v == {} for v in drawn) and len({id(v) for v in drawn}) == len(drawn)
