"""Errors the generator reports: each names the spec file and the key path at fault."""

from __future__ import annotations


class SpecError(Exception):
    """A problem in spec/: unknown key, dangling reference, failed static check."""

    def __init__(self, file: str, key_path: str, problem: str) -> None:
        self.file = file
        self.key_path = key_path
        self.problem = problem
        super().__init__(f"{file}: {key_path}: {problem}" if key_path else f"{file}: {problem}")


class SpecErrors(Exception):
    """Several SpecErrors found in one pass, reported together."""

    def __init__(self, errors: list[SpecError]) -> None:
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))
