"""Seed 000 §3.2-§3.4 path grammar."""

import pytest

from tollbooth.surface import GatewayError, parse_path, validate_path


@pytest.mark.parametrize(
    "path,segments",
    [
        ("/", ()),
        ("/github", ("github",)),
        ("/github/issues", ("github", "issues")),
        ("/github/issues/*", ("github", "issues")),
        ("/github/issues/create_issue", ("github", "issues", "create_issue")),
        ("/github/2fa", ("github", "2fa")),  # deeper segments may start with a digit
        ("/*", ()),
        ("/a-b/c_d", ("a-b", "c_d")),
    ],
)
def test_valid_paths(path, segments):
    assert parse_path(path) == segments
    assert validate_path(path) is None


@pytest.mark.parametrize(
    "path",
    [
        "",
        "github",
        "/github/",  # trailing slash
        "//foo",  # empty segment
        "/github//issues",
        "/GitHub",  # case-sensitive lower-case
        "/1github",  # root segment must be a namespace
        "/_x",
        "/github/Issues",
        "/github/*/issues",  # '*' only last
        "/github/iss.ues",
        "/github/" + "a" * 65,
        "/a b",
    ],
)
def test_invalid_paths(path):
    with pytest.raises(GatewayError) as ei:
        parse_path(path)
    err = ei.value.to_dict()
    assert err["error"] == "PATH_INVALID"
    assert err["path"] == path
    assert set(err) == {"error", "message", "path", "details"}
