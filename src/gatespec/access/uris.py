"""Resource URIs as the access policy sees them (issue 22 item 1).

A policy glob such as ``"fs:file:///srv/docs/*"`` is only a boundary if the URI it is matched
against is the one the upstream acts on. An upstream that resolves ``..`` (or decodes ``%2e%2e``
or ``%2f`` first) would otherwise read ``file:///srv/docs/../secret`` for a caller allowed
``/srv/docs`` only. So a restricted caller's resource URI is normalised before the policy sees
it, and the normalised URI is what goes upstream:

* RFC 3986 §6.2.2 syntax-based normalisation: scheme and host in lower case, percent-encoded
  unreserved characters decoded (``%2e`` is ``.``, ``%7E`` is ``~``), every other
  percent-encoding in upper case, and dot segments removed from the path (§5.2.4);
* then a refusal (`UriRefused`) of a URI that cannot be normalised (a ``%`` not followed by two
  hex digits, no scheme), or whose path, fully percent-decoded, still holds a dot segment
  (``..%2f``, ``%252e%252e``, ``..\\``, ``..;``) or a control character: an upstream that
  decodes once more, or splits on a backslash, would walk out of the folder.

No library is used: the one at hand, ``rfc3986`` 2.0 (python-hyper; only a twine dependency
here), keeps ``%2e%2e`` encoded (so it is not a dot segment to it, though it is one to an
upstream that decodes), turns ``file:///x`` into ``file:/x`` (no README glob would match it
again) and silently re-encodes a bad ``%zz`` as ``%25zz`` instead of refusing it; ``yarl``
targets HTTP URLs and ``ada-url`` follows WHATWG, whose rules for ``file:`` and non-special
schemes differ from RFC 3986's. The RFC's two algorithms are a few lines each.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import unquote_to_bytes

__all__ = ["UriRefused", "normalise_uri", "remove_dot_segments"]

# RFC 3986 Appendix B.
_PARTS: Final = re.compile(
    r"^(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$", re.S
)
_PERCENT: Final = re.compile(r"%(?P<hex>[0-9A-Fa-f]{2})?")
_UNRESERVED: Final = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
_DOTS: Final = frozenset({b".", b".."})
_SEPARATORS: Final = re.compile(rb"[/\\]")
_CONTROL: Final = re.compile(rb"[\x00-\x1f\x7f]")
# How many times a path is percent-decoded when looking for a dot segment an upstream could
# still see (one decode per layer an upstream might apply).
_DECODE_ROUNDS: Final = 4


class UriRefused(ValueError):
    """A resource URI that cannot be normalised, or that still escapes after normalisation."""


def _percent(component: str) -> str:
    """Percent-encoding normalisation (§6.2.2.1, §6.2.2.2): unreserved decoded, the rest upper
    case; UriRefused for a "%" not followed by two hex digits."""

    def one(match: re.Match[str]) -> str:
        hex_ = match.group("hex")
        if hex_ is None:
            raise UriRefused("it holds a '%' not followed by two hex digits")
        byte = int(hex_, 16)
        return chr(byte) if byte in _UNRESERVED else f"%{hex_.upper()}"

    return _PERCENT.sub(one, component)


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4, as written."""
    source, out = path, list[str]()
    while source:
        if source.startswith("../"):
            source = source[3:]
        elif source.startswith("./"):
            source = source[2:]
        elif source.startswith("/./"):
            source = source[2:]
        elif source == "/.":
            source = "/"
        elif source.startswith("/../"):
            source = source[3:]
            if out:
                out.pop()
        elif source == "/..":
            source = "/"
            if out:
                out.pop()
        elif source in (".", ".."):
            source = ""
        else:
            cut = source.find("/", 1)
            segment, source = (source, "") if cut < 0 else (source[:cut], source[cut:])
            out.append(segment)
    return "".join(out)


def _authority(authority: str) -> str:
    userinfo, at, hostport = authority.rpartition("@")
    return f"{userinfo}{at}{hostport.lower()}"


def _still_escapes(path: str) -> str | None:
    """Why `path`, decoded as an upstream might decode it, still walks (None: it does not)."""
    raw = path.encode("utf-8")
    for _ in range(_DECODE_ROUNDS):
        if _CONTROL.search(raw):
            return "a control character"
        for segment in _SEPARATORS.split(raw):
            if segment.split(b";", 1)[0] in _DOTS:
                return "a dot segment ('.' or '..') once percent-decoded"
        decoded = unquote_to_bytes(raw)
        if decoded == raw:
            return None
        raw = decoded
    return "percent-encoding nested deeper than an upstream would decode"


def normalise_uri(uri: str) -> str:
    """`uri` normalised (module docstring); UriRefused, with the reason, when it cannot be."""
    match = _PARTS.match(uri)
    if match is None or not match.group(1):
        raise UriRefused(f"{uri!r} has no scheme")
    scheme, authority, path, query, fragment = match.groups()
    try:
        path = _percent(path)
        out = scheme.lower() + ":"
        if authority is not None:
            out += "//" + _authority(_percent(authority))
        if path.startswith("/"):  # a rootless (opaque) path is never rewritten, only checked
            path = remove_dot_segments(path)
        out += path
        if query is not None:
            out += "?" + _percent(query)
        if fragment is not None:
            out += "#" + _percent(fragment)
    except UriRefused as exc:
        raise UriRefused(f"resource URI {uri!r} cannot be normalised: {exc}") from None
    why = _still_escapes(path)
    if why is not None:
        raise UriRefused(f"resource URI {uri!r} is refused: its path still holds {why}")
    return out
