# Copied from generator/support/wire.py by `make generate`; do not edit.
"""Wire-safe names (AM-WIRE-NAME): a tool_id escaped into a name strict MCP clients accept,
reversibly, or shortened to a prefix plus a digest when the escaped id is too long (only the
catalog that issued a shortened name can resolve it)."""

from __future__ import annotations

import enum
import hashlib
import re
from collections.abc import Mapping

from .errors import ErrorFactory
from .grammar import GrammarInfo


class WireNames:
    def __init__(
        self,
        *,
        tool_id: GrammarInfo,
        wire_name: GrammarInfo,
        escape: str,
        escapes: Mapping[str, str],
        marker: str,
        digest_chars: int,
        max_length: int,
        error: ErrorFactory,
    ) -> None:
        self.tool_id = tool_id
        self.wire_name = wire_name
        self.escape = escape
        self.escapes = dict(escapes)
        self.unescapes = {v: k for k, v in escapes.items()}
        self.marker = marker
        self.digest_chars = digest_chars
        self.max_length = max_length
        self.error = error
        self._prefix_max = max_length - len(marker) - digest_chars
        self._short = re.compile(
            f"(?P<prefix>.*){re.escape(marker)}(?P<digest>[0-9a-f]{{{digest_chars}}})"
        )

    def encode(self, tool_id: str) -> str:
        """A name strict MCP clients accept. Reversible by decode unless the escaped id is too
        long, in which case it is a prefix plus a digest of the id."""
        self.tool_id.match(tool_id, self.error)
        pieces = [self.escapes.get(ch, ch) for ch in tool_id]
        full = "".join(pieces)
        if len(full) <= self.max_length:
            return full
        prefix = ""
        for piece in pieces:  # never split an escape sequence
            if len(prefix) + len(piece) > self._prefix_max:
                break
            prefix += piece
        digest = hashlib.sha256(tool_id.encode("utf-8")).hexdigest()[: self.digest_chars]
        return prefix + self.marker + digest

    def is_shortened(self, name: str) -> bool:
        """True for the prefix+digest form, which only the issuing catalog can resolve."""
        m = self._short.fullmatch(name)
        return m is not None and self._unescape(m.group("prefix")) is not None

    def _unescape(self, text: str) -> str | None:
        out: list[str] = []
        i = 0
        while i < len(text):
            if text[i] == self.escape:
                pair = text[i : i + 2]
                if pair not in self.unescapes:
                    return None
                out.append(self.unescapes[pair])
                i += 2
            else:
                out.append(text[i])
                i += 1
        return "".join(out)

    def decode(self, name: object) -> str:
        """The tool_id a full (not shortened) wire name stands for. Raises the wire-name
        grammar's error (NAME_INVALID) when the name is malformed or shortened."""
        self.wire_name.match(name, self.error)
        assert isinstance(name, str)
        code: enum.StrEnum = self.wire_name.error
        if self.is_shortened(name):
            message = f"wire name {name!r} is a shortened id; only the catalog that issued it can resolve it"
            raise self.error(code, message, name)
        tool_id = self._unescape(name)
        if tool_id is None:
            raise self.error(code, f"wire name {name!r} has an unknown escape", name)
        if not self.tool_id.accepts(tool_id):
            raise self.error(code, f"wire name {name!r} does not decode to a tool_id", name)
        return tool_id
