"""generator.support errors, grammar and trees, on small hand-made grammars: acceptance within
the cap, errors that say what was wrong, and the shortest and longest instance of a tree."""

from __future__ import annotations

import enum

import pytest

from generator.support.errors import SurfaceError
from generator.support.grammar import GrammarInfo
from generator.support.text import clip, json_type, scrub
from generator.support.trees import Extreme, build, longest, shortest


class Code(enum.StrEnum):
    BAD_KEY = "BAD_KEY"
    CATALOG_ERROR = "CATALOG_ERROR"


class Error(SurfaceError):
    codes = Code
    summaries = {Code.BAD_KEY: "The key is malformed.", Code.CATALOG_ERROR: "Catalog."}
    message_max = 80
    path_max = 8
    ellipsis = "…"


class CatalogError(Error):
    default_code = Code.CATALOG_ERROR


KEY = GrammarInfo(
    name="key",
    summary="A short key.",
    syntax="[a-z] [a-z0-9]{0,5}",
    pattern="(?P<head>[a-z])[a-z0-9]{0,5}",
    json_pattern="^(?:[a-z][a-z0-9]{0,5})(?![\\s\\S])",
    min_length=1,
    max_length=4,
    error=Code.BAD_KEY,
    captures=("head",),
    alphabet="0123456789abcdefghijklmnopqrstuvwxyz",
)


def test_clip_marks_a_cut_with_an_ellipsis() -> None:
    assert clip("abc", 3, "…") == "abc"
    assert clip("abcd", 3, "…") == "ab…"
    assert clip("abcd", 3, "~") == "ab~"


def test_clip_at_a_word_keeps_most_of_the_room() -> None:
    text = "alpha beta gamma delta"
    assert clip(text, 17, "…", at_word=True) == "alpha beta gamma…"
    assert clip("alpha betagammadelta", 12, "…", at_word=True) == "alpha betag…"  # 5 < 4/5 of 11


def test_scrub_and_clip_make_lone_surrogates_encodable() -> None:
    assert scrub("a\ud800b") == "a\ufffdb"
    clip("\udfff" * 10, 5, "…").encode("utf-8")


def test_json_type_names() -> None:
    values = [None, True, 1, 1.5, "s", {}, [], ()]
    assert [json_type(v) for v in values] == [
        "null", "boolean", "number", "number", "string", "object", "array", "array"
    ]  # fmt: skip


def test_an_error_is_clipped_to_the_payload_bounds() -> None:
    exc = Error("BAD_KEY", "m" * 90, "p" * 30, {"k": 1})
    assert exc.code is Code.BAD_KEY
    assert exc.to_payload() == {
        "error": "BAD_KEY",
        "message": "m" * 79 + "…",
        "path": "p" * 7 + "…",
        "details": {"k": 1},
    }
    assert Error(Code.BAD_KEY).message == "The key is malformed."


def test_of_picks_the_subclass_of_a_code() -> None:
    assert type(Error.of(Code.CATALOG_ERROR, "x")) is CatalogError
    assert type(Error.of(Code.BAD_KEY, "x")) is Error
    with pytest.raises(TypeError, match="needs an error code"):
        Error()
    with pytest.raises(ValueError):
        Error("NO_SUCH_CODE")


@pytest.mark.parametrize(
    ("value", "accepted"),
    [("a", True), ("ab12", True), ("abc12", False), ("1a", False), ("a\n", False), (3, False)],
)
def test_accepts_is_a_full_match_within_the_cap(value: object, accepted: bool) -> None:
    """ "abc12" matches the syntax ({0,5}) but not the 4-character cap."""
    assert KEY.accepts(value) is accepted


def test_match_returns_the_captures() -> None:
    assert KEY.match("ab", Error.of) == {"head": "a"}
    assert KEY.matcher(Error.of)("zz") == {"head": "z"}
    assert KEY.matcher(Error.of).__name__ == "match_key"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "key is empty; expected [a-z] [a-z0-9]{0,5}"),
        ("abcde", "key 'abcde' is 5 characters; the limit is 4"),
        ("ab\n", "key 'ab\\n' ends with a line break"),
        ("aB", "key 'aB' has 'B' at position 1, which it never allows"),
        ("1a", "key '1a' does not match [a-z] [a-z0-9]{0,5}"),
    ],
)
def test_explain_says_what_is_wrong(value: str, message: str) -> None:
    assert KEY.explain(value) == message
    with pytest.raises(Error) as exc:
        KEY.match(value, Error.of)
    assert exc.value.code is Code.BAD_KEY
    assert exc.value.details == {}


def test_a_long_value_is_shown_shortened() -> None:
    assert KEY.explain("a" * 100) == f"key '{'a' * 77}...' is 100 characters; the limit is 4"


def test_a_non_string_names_its_type() -> None:
    with pytest.raises(Error) as exc:
        KEY.match(42, Error.of)
    assert exc.value.message.startswith("key must be a string, not int")


def test_a_minimum_length_is_explained() -> None:
    three = GrammarInfo("t", "", "[a]{3}", "a{3}", "", 3, 3, Code.BAD_KEY, (), "a")
    assert three.explain("aa") == "t 'aa' is 2 characters; the minimum is 3"


# ------------------------------------------------------------------ trees

TREE = [
    ["lit", "/"],
    ["set", "ab", 1, 3],
    ["rep", [["lit", "-"], ["set", "0", 1, 1]], 0, 2],
    ["alt", [[["lit", "xyz"]], [["lit", "q"]]]],
]


def test_shortest_takes_every_minimum_and_the_shortest_alternative() -> None:
    assert shortest(TREE) == "/aq"


def test_longest_takes_every_maximum_and_the_longest_alternative() -> None:
    assert longest(TREE) == "/aba-0-0xyz"


def test_unbounded_counts_run_past_their_minimum() -> None:
    tree = [["set", "ab", 1, None], ["rep", [["lit", "."]], 0, None], ["seq", [["lit", "!"]]]]
    assert longest(tree) == "ab" * 6 + "a" + ".." + "!"
    assert build(tree, Extreme(longest=True, set_extra=2, rep_extra=1)) == "aba.!"


def test_an_unknown_node_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown grammar-tree node kind 'star'"):
        shortest([["star"]])
