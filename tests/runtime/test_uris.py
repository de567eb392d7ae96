"""Resource URI normalisation for the access policy (gatespec.access.uris, issue 22 item 1):
RFC 3986 §6.2.2 and §5.2.4, then a refusal of what an upstream could still walk with."""

from __future__ import annotations

import pytest

from gatespec.access import AccessPolicy, Identity, Rules, Selector
from gatespec.access.uris import UriRefused, normalise_uri, remove_dot_segments
from gatespec.profiles.aggregate.naming import LISTS
from gatespec.profiles.aggregate.policy import entry_subject


@pytest.mark.parametrize(
    ("path", "expected"),
    [  # RFC 3986 §5.2.4's own examples, and the edges
        ("/a/b/c/./../../g", "/a/g"),
        ("mid/content=5/../6", "mid/6"),
        ("/../x", "/x"),
        ("/a/..", "/"),
        ("/a/.", "/a/"),
        ("/a/b", "/a/b"),
        ("", ""),
    ],
)
def test_remove_dot_segments_is_rfc_3986s(path: str, expected: str) -> None:
    assert remove_dot_segments(path) == expected


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("file:///srv/docs/a.txt", "file:///srv/docs/a.txt"),
        ("file:///srv/docs/../secret/key.txt", "file:///srv/secret/key.txt"),
        ("file:///srv/docs/%2e%2e/secret", "file:///srv/secret"),
        ("file:///srv/docs/.%2E/secret", "file:///srv/secret"),
        ("FILE://Host.Example/srv/docs/x", "file://host.example/srv/docs/x"),
        ("http://User@HOST:80/a", "http://User@host:80/a"),
        ("file:///srv/docs/%7efoo/%41%2f", "file:///srv/docs/~foo/A%2F"),
        ("file:///srv/docs/r%c3%a9.txt?q=%2e#%7e", "file:///srv/docs/r%C3%A9.txt?q=.#~"),
        ("fixture://doc/./readme", "fixture://doc/readme"),
        ("fixture://item/{id}", "fixture://item/{id}"),
        ("urn:isbn:0451450523", "urn:isbn:0451450523"),
        ("a:", "a:"),
    ],
)
def test_uris_are_normalised(uri: str, expected: str) -> None:
    assert normalise_uri(uri) == expected
    assert normalise_uri(expected) == expected  # idempotent


@pytest.mark.parametrize(
    "uri",
    [
        "file:///srv/docs/..%2fsecret",  # %2f decoded by the upstream: ../secret
        "file:///srv/docs/..%2Fsecret",
        "file:///srv/docs/sub%2f..%2f..%2fsecret",
        "file:///srv/docs/%252e%252e/secret",  # decoded twice
        "file:///srv/docs/%25252e%25252e/secret",
        "file:///srv/docs/..\\secret",  # a backslash separator
        "file:///srv/docs/%5c..%5csecret",
        "file:///srv/docs/..;/secret",  # a path parameter
        "file:///srv/docs/%00.txt",  # a control character
        "file:///srv/docs/%zz",  # not percent-encoding
        "file:///srv/docs/%2",
        "file:///srv/docs/%",
        "urn:a/../b",  # a rootless path is checked, never rewritten
        "/srv/docs/no-scheme",
        "",
    ],
)
def test_uris_that_cannot_be_normalised_or_still_walk_are_refused(uri: str) -> None:
    with pytest.raises(UriRefused, match="resource URI|no scheme"):
        normalise_uri(uri)


def test_a_listed_resource_is_judged_by_its_normalised_uri() -> None:
    kind = LISTS["resources/list"]
    allow = Rules(allow=(Selector(tools=("fs:file:///srv/docs/*",)),))
    check = AccessPolicy({"reader": allow}).check(Identity("reader"))

    def seen(uri: str) -> bool:
        subject = entry_subject(kind, {"uri": f"fs+{uri}", "name": "x"})
        return subject is not None and check(subject)

    assert seen("file:///srv/docs/a.txt")
    assert seen("FILE:///srv/docs/sub/../a.txt")
    assert not seen("file:///srv/docs/../secret/key.txt")
    assert not seen("file:///srv/docs/..%2fsecret/key.txt")  # refused: listed to nobody restricted
