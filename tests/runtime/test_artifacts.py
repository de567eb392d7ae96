"""ArtifactStore: handles, bounds, LRU eviction and tool_view selectors (seed 000 §4.2)."""

from __future__ import annotations

import base64
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatespec.artifacts import ArtifactStore, clean_media_type, is_textual_media_type, view_cut_note
from gatespec_surface import strategies as gs
from gatespec_surface.budgets import VIEW_MAX_CHARS
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.grammars import is_artifact_handle
from gatespec_surface.models import ArtifactRef, ViewResult
from gatespec_surface.schemas import MODEL_SCHEMAS

ERROR_PAYLOAD = jsonschema.Draft202012Validator(MODEL_SCHEMAS["ErrorPayload"])
LABEL_MAX = MODEL_SCHEMAS["ArtifactRef"]["properties"]["label"]["maxLength"]

TEXT = "".join(f"line {n}: some words here\n" for n in range(1, 121))  # 120 lines
DOC = {"items": [{"name": "a"}, {"name": "b"}], "a/b": {"~c": 1}, "": "empty key", "n": None}
PNG_HEAD = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40  # binary, 10248 bytes


def view_error(store: ArtifactStore, handle: object, selector: object) -> GatewayError:
    with pytest.raises(GatewayError) as info:
        store.view(handle, selector)
    ERROR_PAYLOAD.validate(info.value.to_payload())
    return info.value


@pytest.fixture
def store() -> ArtifactStore:
    return ArtifactStore()


@pytest.fixture
def handles(store: ArtifactStore) -> dict[str, str]:
    return {
        "text": store.put(TEXT.encode(), "text/plain", "text")["handle"],
        "json": store.put(json.dumps(DOC).encode(), "application/json", "doc")["handle"],
        "binary": store.put(PNG_HEAD, "image/png", "png")["handle"],
        "empty": store.put(b"", "text/plain", "empty")["handle"],
    }


# ---------------------------------------------------------------------- put / get


def test_put_returns_a_valid_artifact_ref_with_a_grammar_handle(store: ArtifactStore) -> None:
    ref = store.put(b"hello", "text/plain", "greeting", uri="demo://x")
    ArtifactRef.model_validate(ref)
    assert is_artifact_handle(ref["handle"])
    assert ref == {
        "handle": ref["handle"],
        "media_type": "text/plain",
        "label": "greeting",
        "size_bytes": 5,
        "uri": "demo://x",
    }
    assert store.get(ref["handle"]).data == b"hello"


def test_handles_are_distinct(store: ArtifactStore) -> None:
    refs = [store.put(b"x", "text/plain", str(i)) for i in range(500)]
    assert len({r["handle"] for r in refs}) == 500


def test_untrusted_media_type_and_label_are_brought_within_bounds(store: ArtifactStore) -> None:
    for bad in ["", "   ", "x" * 300, "text/plain\nX-Injected: 1"]:
        ref = store.put(b"x", bad, "y" * 500)
        ArtifactRef.model_validate(ref)
        assert ref["media_type"] == "application/octet-stream"
        assert len(ref["label"]) == LABEL_MAX
    assert clean_media_type("image/png") == "image/png"


@pytest.mark.parametrize(
    ("media", "textual"),
    [
        ("text/plain", True),
        ("text/csv; charset=utf-8", True),
        ("application/json", True),
        ("application/vnd.api+json", True),
        ("image/svg+xml", True),
        ("image/png", False),
        ("audio/wav", False),
        ("application/octet-stream", False),
    ],
)
def test_textual_media_types(media: str, textual: bool) -> None:
    assert is_textual_media_type(media) is textual


def test_text_media_type_with_non_utf8_bytes_is_treated_as_binary(store: ArtifactStore) -> None:
    ref = store.put(b"\xff\xfe\x00bad", "text/plain", "latin")
    result = store.view(ref["handle"], "all")
    assert base64.b64decode(result["content"]) == b"\xff\xfe\x00bad"


@given(handle=gs.valid("artifact_handle"))
def test_unknown_well_formed_handle_is_view_failed_naming_it(handle: str) -> None:
    err = view_error(ArtifactStore(), handle, "all")
    assert err.code is ErrorCode.VIEW_FAILED
    assert handle in err.message and err.path == handle


@given(handle=gs.invalid("artifact_handle"))
def test_malformed_handle_is_view_failed(handle: str) -> None:
    err = view_error(ArtifactStore(), handle, "all")
    assert err.code is ErrorCode.VIEW_FAILED


@pytest.mark.parametrize("handle", [None, 42, ["art_0123456789abcdef"], b"art_0123456789abcdef"])
def test_non_string_handle_is_view_failed(store: ArtifactStore, handle: object) -> None:
    assert view_error(store, handle, "all").code is ErrorCode.VIEW_FAILED


# ---------------------------------------------------------------------- bounds and eviction


def test_lru_eviction_keeps_total_within_bound_and_says_evicted() -> None:
    store = ArtifactStore(max_total_bytes=100)
    a = store.put(b"a" * 40, "text/plain", "a")["handle"]
    b = store.put(b"b" * 40, "text/plain", "b")["handle"]
    store.get(a)  # a is now more recently used than b
    c = store.put(b"c" * 40, "text/plain", "c")["handle"]
    assert store.total_bytes == 80 <= store.max_total_bytes
    assert a in store and c in store and b not in store
    err = view_error(store, b, "all")
    assert err.code is ErrorCode.VIEW_FAILED and "evicted" in err.message and b in err.message


def test_view_refreshes_recency() -> None:
    store = ArtifactStore(max_total_bytes=100)
    a = store.put(b"a" * 50, "text/plain", "a")["handle"]
    b = store.put(b"b" * 50, "text/plain", "b")["handle"]
    store.view(a, "all")
    store.put(b"c" * 50, "text/plain", "c")
    assert a in store and b not in store


def test_artifact_count_is_bounded() -> None:
    store = ArtifactStore(max_artifacts=3)
    refs = [store.put(b"", "text/plain", str(i)) for i in range(5)]
    assert len(store) == 3
    assert [r["handle"] in store for r in refs] == [False, False, True, True, True]


def test_artifact_larger_than_the_store_is_refused_up_front() -> None:
    store = ArtifactStore(max_total_bytes=10)
    assert store.fits(10) and not store.fits(11)
    with pytest.raises(ValueError):
        store.put(b"x" * 11, "text/plain", "big")
    assert len(store) == 0


# ---------------------------------------------------------------------- all / lines / bytes


def test_all_returns_the_whole_text(store: ArtifactStore, handles: dict[str, str]) -> None:
    result = store.view(handles["text"])
    ViewResult.model_validate(result)
    assert result == {
        "handle": handles["text"],
        "selector": "all",
        "content": TEXT,
        "total_size": len(TEXT.encode()),
        "truncated": False,
        "encoding": "text",
    }


def test_all_is_capped_at_view_max_chars(store: ArtifactStore) -> None:
    big = "é" * (VIEW_MAX_CHARS + 10)
    ref = store.put(big.encode(), "text/plain", "big")
    result = store.view(ref["handle"], "all")
    assert result["content"] == big[:VIEW_MAX_CHARS]
    assert result["truncated"] is True and result["total_size"] == len(big.encode())
    # AM-TRANSPARENT-VIEW: the cut is said in words, not only in the structured flag
    note = view_cut_note(result)
    assert f"first {VIEW_MAX_CHARS} characters" in note and '"lines:A-B"' in note


def test_a_cut_binary_view_names_the_byte_range_that_reads_on(
    store: ArtifactStore, handles: dict[str, str]
) -> None:
    whole = store.view(handles["binary"], "all")
    read = len(whole["content"]) // 4 * 3
    note = view_cut_note(whole)
    assert f"{read} of {whole['total_size']} bytes" in note and f"'bytes:{read}-" in note


@pytest.mark.parametrize(
    ("selector", "first", "last"),
    [("lines:1-3", 1, 3), ("lines:5", 5, 5), ("lines:118-", 118, 120), ("lines:119-500", 119, 120)],
)
def test_lines_are_one_based_and_inclusive(
    store: ArtifactStore, handles: dict[str, str], selector: str, first: int, last: int
) -> None:
    result = store.view(handles["text"], selector)
    expected = [f"line {n}: some words here" for n in range(first, last + 1)]
    assert result["content"].split("\n") == expected
    assert result["truncated"] is False


def test_lines_past_the_end_name_the_line_count(
    store: ArtifactStore, handles: dict[str, str]
) -> None:
    err = view_error(store, handles["text"], "lines:121-130")
    assert err.code is ErrorCode.VIEW_FAILED
    assert "lines:121-130" in err.message and "has 120 lines" in err.message
    assert "has 0 lines" in view_error(store, handles["empty"], "lines:1").message


def test_lines_on_binary_is_view_failed(store: ArtifactStore, handles: dict[str, str]) -> None:
    err = view_error(store, handles["binary"], "lines:1-2")
    assert "binary" in err.message and "image/png" in err.message


def test_bytes_are_zero_based_and_inclusive(store: ArtifactStore, handles: dict[str, str]) -> None:
    assert store.view(handles["text"], "bytes:0-5")["content"] == TEXT[:6]
    assert store.view(handles["text"], "bytes:7")["content"] == TEXT[7]
    tail = store.view(handles["text"], f"bytes:{len(TEXT) - 3}-")["content"]
    assert tail == TEXT[-3:]


def test_bytes_past_the_end_name_the_size(store: ArtifactStore, handles: dict[str, str]) -> None:
    size = len(TEXT.encode())
    err = view_error(store, handles["text"], f"bytes:{size}-")
    assert f"has {size} bytes" in err.message


def test_binary_views_are_base64(store: ArtifactStore, handles: dict[str, str]) -> None:
    part = store.view(handles["binary"], "bytes:0-7")
    assert part["encoding"] == "base64"
    assert base64.b64decode(part["content"]) == PNG_HEAD[:8]
    assert store.view(handles["text"], "bytes:0-7")["encoding"] == "text"
    whole = store.view(handles["binary"], "all")
    assert whole["truncated"] is True and len(whole["content"]) <= VIEW_MAX_CHARS
    decoded = base64.b64decode(whole["content"], validate=True)
    assert PNG_HEAD.startswith(decoded) and len(decoded) > 0


def test_paging_by_bytes_reassembles_a_binary_artifact(store: ArtifactStore) -> None:
    data = bytes(range(256)) * 100
    handle = store.put(data, "application/octet-stream", "blob")["handle"]
    chunk = (VIEW_MAX_CHARS // 4) * 3
    pieces = []
    for start in range(0, len(data), chunk):
        view = store.view(handle, f"bytes:{start}-{start + chunk - 1}")
        assert view["truncated"] is False
        pieces.append(base64.b64decode(view["content"]))
    assert b"".join(pieces) == data


def test_bytes_cut_inside_a_character_is_replaced_not_raised(store: ArtifactStore) -> None:
    handle = store.put("héllo".encode(), "text/plain", "x")["handle"]
    assert store.view(handle, "bytes:0-1")["content"] == "h\ufffd"


def test_link_artifact_view_names_the_uri(store: ArtifactStore) -> None:
    handle = store.put(b"", "text/plain", "link", uri="demo://resource/1")["handle"]
    err = view_error(store, handle, "all")
    assert "demo://resource/1" in err.message


# ---------------------------------------------------------------------- json pointers


@pytest.mark.parametrize(
    ("selector", "value"),
    [
        ("json:", DOC),
        ("json:/items", DOC["items"]),
        ("json:/items/1/name", "b"),
        ("json:/a~1b/~0c", 1),
        ("json:/", "empty key"),
        ("json:/n", None),
    ],
)
def test_json_pointer_resolves_rfc6901(
    store: ArtifactStore, handles: dict[str, str], selector: str, value: Any
) -> None:
    assert json.loads(store.view(handles["json"], selector)["content"]) == value


@pytest.mark.parametrize(
    ("selector", "says"),
    [
        ("json:/nope", "no key 'nope'"),
        ("json:/items/2", "array of 2 items"),
        ("json:/items/01", "array of 2 items"),
        ("json:/items/-", "array of 2 items"),
        ("json:/items/0/name/x", "is a string"),
        ("json:/n/x", "is null"),
    ],
)
def test_json_pointer_that_resolves_nothing_says_what_exists(
    store: ArtifactStore, handles: dict[str, str], selector: str, says: str
) -> None:
    err = view_error(store, handles["json"], selector)
    assert err.code is ErrorCode.VIEW_FAILED
    assert selector in err.message and says in err.message


def test_json_selector_on_non_json_artifact(store: ArtifactStore, handles: dict[str, str]) -> None:
    assert "is not JSON" in view_error(store, handles["text"], "json:/a").message
    assert "not JSON" in view_error(store, handles["binary"], "json:").message


def test_deeply_nested_json_is_view_failed_not_recursion_error(store: ArtifactStore) -> None:
    handle = store.put(b"[" * 100_000 + b"]" * 100_000, "application/json", "deep")["handle"]
    assert view_error(store, handle, "json:/0").code is ErrorCode.VIEW_FAILED


def test_lone_surrogates_in_json_are_replaced_in_views(store: ArtifactStore) -> None:
    handle = store.put(b'{"a": "x\\ud800y"}', "application/json", "j")["handle"]
    content = store.view(handle, "json:/a")["content"]
    assert content == '"x\ufffdy"'
    content.encode("utf-8")


# ---------------------------------------------------------------------- selectors (properties)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(selector=gs.invalid("view_selector"))
def test_every_invalid_selector_is_args_invalid(
    store: ArtifactStore, handles: dict[str, str], selector: str
) -> None:
    for handle in handles.values():
        err = view_error(store, handle, selector)
        assert err.code is ErrorCode.ARGS_INVALID


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=300)
@given(selector=gs.valid("view_selector"))
def test_every_valid_selector_gives_a_view_or_view_failed(
    store: ArtifactStore, handles: dict[str, str], selector: str
) -> None:
    for handle in handles.values():
        try:
            result = store.view(handle, selector)
        except GatewayError as err:
            # A well-formed selector may still be a reversed range (ARGS_INVALID, from the
            # generated parser) or address nothing (VIEW_FAILED); nothing else is allowed.
            assert err.code in (ErrorCode.VIEW_FAILED, ErrorCode.ARGS_INVALID)
            ERROR_PAYLOAD.validate(err.to_payload())
        else:
            ViewResult.model_validate(result)
            assert result["selector"] == selector
            assert len(result["content"]) <= VIEW_MAX_CHARS


@given(
    lines=st.lists(
        st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\n"), max_size=20)
    ),
    start=st.integers(1, 30),
    length=st.integers(0, 30),
)
def test_lines_match_a_reference_split(lines: list[str], start: int, length: int) -> None:
    store = ArtifactStore()
    handle = store.put("".join(f"{line}\n" for line in lines).encode(), "text/plain", "t")["handle"]
    end = start + length
    if start > len(lines):
        assert (
            f"has {len(lines)} lines" in view_error(store, handle, f"lines:{start}-{end}").message
        )
    else:
        content = store.view(handle, f"lines:{start}-{end}")["content"]
        assert content == "\n".join(lines[start - 1 : end])


# ---------------------------------------------------------------------- shares (issue 22 item 6)

ALICE, BOB = "token:alice|s1", "token:bob|s2"


def test_one_identity_cannot_evict_anothers_artifacts() -> None:
    """Issue 22 item 6: one shared store, plain LRU: an identity that puts enough evicted
    every other identity's artifacts. Now the store, when full, evicts from the identity that
    holds the most of it: a flood evicts the flooder's own artifacts."""
    store = ArtifactStore(max_total_bytes=1000, max_artifacts=50)
    bobs = [store.put(b"b" * 100, "text/plain", "b", owner=BOB)["handle"] for _ in range(3)]
    alices = [store.put(b"a" * 100, "text/plain", "a", owner=ALICE)["handle"] for _ in range(100)]
    for handle in bobs:
        assert store.get(handle, BOB).data == b"b" * 100
    assert store.total_bytes <= 1000
    assert store.get(alices[-1], ALICE).size == 100  # the flooder's latest is kept...
    err = view_error_as(store, alices[0], ALICE)
    assert "evicted" in err.message  # ...its oldest went
    # the count bound too: many empty artifacts of alice's never push bob's out
    counted = ArtifactStore(max_total_bytes=1000, max_artifacts=10)
    kept = [counted.put(b"", "text/plain", "b", owner=BOB)["handle"] for _ in range(3)]
    for i in range(40):
        counted.put(b"", "text/plain", str(i), owner=ALICE)
    assert all(h in counted for h in kept) and len(counted) == 10


def test_sessions_of_one_identity_share_its_share_and_a_share_is_capped() -> None:
    """The share is the identity's (its sessions together: "<identity key>|<session>", a JWT
    subject holding "|" included); max_share_bytes caps one identity below the store's size."""
    store = ArtifactStore(max_total_bytes=1000, max_share_bytes=300)
    bob = store.put(b"b" * 100, "text/plain", "b", owner=BOB)["handle"]
    jwt_owner = "jwt:auth0|1234|sessionA"
    first = store.put(b"j" * 200, "text/plain", "j", owner=jwt_owner)["handle"]
    store.put(b"j" * 200, "text/plain", "j", owner="jwt:auth0|1234|sessionB")
    assert first not in store  # the same identity's share: 400 > 300, its own oldest goes
    assert bob in store
    assert not store.fits(301) and store.fits(300)


def view_error_as(store: ArtifactStore, handle: str, owner: str) -> GatewayError:
    with pytest.raises(GatewayError) as info:
        store.get(handle, owner)
    return info.value
