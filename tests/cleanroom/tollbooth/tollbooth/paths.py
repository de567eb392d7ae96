"""Path-navigation grammar for ``tool_browse(path=...)`` (seed 000 §3.2-§3.4).

::

    path    = "/" [ segment ( "/" segment )* ]
    segment = ( [a-z0-9] [a-z0-9_-]{0,63} ) | "*"

Root-level segments must also satisfy the §1.1 namespace production (start
with ``[a-z]``).  ``*`` means "all children at this level" and is equivalent to
omitting it; this implementation accepts it only as the final segment
(including the bare ``/*`` == ``/``).
"""

from __future__ import annotations

import re

from .errors import PATH_INVALID, GatewayError
from .toolid import is_namespace

SEGMENT_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
WILDCARD = "*"


def _invalid(path: str, message: str, **details: object) -> GatewayError:
    return GatewayError(PATH_INVALID, message, path=path, details=dict(details))


def parse_path(path: str) -> tuple[str, ...]:
    """Validate a browse path and return its addressed segments (seed 000 §3.2).

    The reserved trailing ``*`` is dropped (it is "equivalent to omitting the
    trailing segment"), so ``"/github/issues/*"`` -> ``("github", "issues")``
    and ``"/"`` -> ``()``.

    Raises :class:`GatewayError` with code ``PATH_INVALID`` for every §3.2
    violation: not starting with ``/``, trailing ``/``, empty segment,
    upper-case or otherwise illegal characters, over-long segment, a root
    segment that is not a namespace (e.g. starts with a digit), or ``*``
    anywhere but last.  A non-string *path* is also ``PATH_INVALID`` here (the
    server maps a wrong JSON type to ``ARGS_INVALID`` before calling this).
    """
    if not isinstance(path, str):
        raise _invalid("", "path must be a string")
    if path == "/":
        return ()
    if not path.startswith("/"):
        raise _invalid(path, "path must start with '/'")
    if path.endswith("/"):
        raise _invalid(path, "trailing '/' is invalid")
    raw = path[1:].split("/")
    segments: list[str] = []
    for i, seg in enumerate(raw):
        if seg == "":
            raise _invalid(path, "empty path segment", index=i)
        if seg == WILDCARD:
            if i != len(raw) - 1:
                raise _invalid(path, "'*' is only allowed as the last segment", index=i)
            continue
        if SEGMENT_RE.fullmatch(seg) is None:
            raise _invalid(path, f"segment {seg!r} is not [a-z0-9][a-z0-9_-]{{0,63}}", index=i, segment=seg)
        if i == 0 and not is_namespace(seg):
            raise _invalid(path, f"root segment {seg!r} must be a namespace (start with [a-z])", index=i, segment=seg)
        segments.append(seg)
    return tuple(segments)


def validate_path(path: str) -> str | None:
    """Return None if *path* is valid, else the ``PATH_INVALID`` message."""
    try:
        parse_path(path)
    except GatewayError as exc:
        return exc.message
    return None


def format_path(segments: tuple[str, ...] | list[str]) -> str:
    """Inverse of :func:`parse_path` for wildcard-free paths: ``()`` -> ``"/"``."""
    return "/" + "/".join(segments)
