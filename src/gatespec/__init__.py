"""gatespec: the hand-written runtime over the generated gateway surface (gatespec_surface).

The runtime implements one spec major.minor; importing it against a generated package of
another version fails loudly instead of serving a surface it does not understand.
"""

from __future__ import annotations

from gatespec_surface import SPEC_HASH, SPEC_VERSION

__version__ = "0.1.0"
# The spec version (major, minor) this runtime was written against. A patch-level spec change
# (wording, examples) needs no runtime change; anything else must come with one.
SUPPORTED_SPEC = (0, 4)


class SpecVersionMismatch(ImportError):
    """The generated surface was built from a spec version this runtime does not implement."""


def spec_version_tuple(version: str) -> tuple[int, int]:
    major, minor, *_ = version.split(".")
    return int(major), int(minor)


def check_spec_version(version: str = SPEC_VERSION) -> None:
    if spec_version_tuple(version) != SUPPORTED_SPEC:
        raise SpecVersionMismatch(
            f"gatespec {__version__} implements spec {SUPPORTED_SPEC[0]}.{SUPPORTED_SPEC[1]}.x, "
            f"but gatespec_surface was generated from spec {version}: regenerate or upgrade"
        )


check_spec_version()

__all__ = [
    "SPEC_HASH",
    "SPEC_VERSION",
    "SUPPORTED_SPEC",
    "SpecVersionMismatch",
    "check_spec_version",
]
