# Copied from generator/support/errors.py by `make generate`; do not edit.
"""Typed surface errors: a code, a message naming what was wrong, the offending path or id,
and details. The generated errors module subclasses SurfaceError once, binding its ErrorCode
enum, the codes' summaries and the ErrorPayload bounds (§3.4). Code here raises through an
ErrorFactory (the generated class's `of`), so that callers catch the generated class."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from .text import clip

# (code, message, path) -> the exception to raise.
ErrorFactory = Callable[[enum.StrEnum, str, str], Exception]


class SurfaceError(Exception):
    """A surface error; `to_payload()` gives the §3.4 wire shape. Subclasses bind `codes`,
    `summaries`, `message_max`, `path_max` and `ellipsis`; a subclass with a `default_code` is what `of`
    raises for that code."""

    codes: ClassVar[type[enum.StrEnum]]
    summaries: ClassVar[Mapping[Any, str]]  # code -> its summary
    message_max: ClassVar[int]
    path_max: ClassVar[int]
    ellipsis: ClassVar[str]  # what ends a clipped message or path
    default_code: ClassVar[enum.StrEnum | None] = None

    def __init__(
        self,
        code: enum.StrEnum | str | None = None,
        message: str = "",
        path: str = "",
        details: dict[str, Any] | None = None,
    ) -> None:
        resolved = code if code is not None else self.default_code
        if resolved is None:
            raise TypeError(f"{type(self).__name__} needs an error code")
        self.code = self.codes(resolved)
        # Clipped so that any raised error still makes a valid payload, whatever the input.
        self.message = clip(message or self.summaries[self.code], self.message_max, self.ellipsis)
        self.path = clip(path, self.path_max, self.ellipsis)
        self.details = dict(details or {})
        super().__init__(f"{self.code}: {self.message}")

    def to_payload(self) -> dict[str, Any]:
        return {
            "error": self.code.value,
            "message": self.message,
            "path": self.path,
            "details": self.details,
        }

    @classmethod
    def of(cls, code: enum.StrEnum, message: str, path: str = "") -> SurfaceError:
        """An error for `code`: the subclass whose default code it is, else this class."""
        for sub in cls.__subclasses__():
            if sub.default_code == code:
                return sub(message=message, path=path)
        return cls(code, message, path)
