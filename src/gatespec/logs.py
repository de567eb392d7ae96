"""Logging that untrusted text cannot forge: one record is one line.

Upstreams' output, client-chosen session ids and tool names end up in log messages; a line
break or another control character in them could fake log lines (or terminal escapes). The
formatter escapes them in the message; tracebacks, which are the gateway's own, stay as they are.
Every value a config's ``${VAR}`` expanded to is replaced by its reference in the whole record,
traceback included (gatespec.secrets).
"""

from __future__ import annotations

import logging
import re
from typing import Final

from gatespec.secrets import redact

__all__ = ["OneLineFormatter", "escape_controls"]

# C0 controls (but tab), DEL, C1 controls and the Unicode line and paragraph separators.
_CONTROLS: Final = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def escape_controls(text: str) -> str:
    """`text` with every control character written as an escape (\\n, \\x1b, \\u2028 ...)."""
    return _CONTROLS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


class OneLineFormatter(logging.Formatter):
    """A formatter whose message part never spans lines, whatever it quotes."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        record.message = escape_controls(record.message)
        return super().formatMessage(record)

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))
