"""The runtime refuses a generated surface from a spec version it does not implement."""

from __future__ import annotations

import pytest

import gatespec
from gatespec_surface import SPEC_HASH, SPEC_VERSION


def test_the_installed_surface_is_supported() -> None:
    gatespec.check_spec_version()
    assert gatespec.SPEC_VERSION == SPEC_VERSION and len(SPEC_HASH) == 64


MAJOR, MINOR = gatespec.SUPPORTED_SPEC


@pytest.mark.parametrize(
    "version", [f"{MAJOR}.{MINOR}.0", f"{MAJOR}.{MINOR}.7", f"{MAJOR}.{MINOR}.0-rc.1"]
)
def test_patch_releases_are_accepted(version: str) -> None:
    gatespec.check_spec_version(version)


@pytest.mark.parametrize(
    "version", [f"{MAJOR}.{MINOR + 1}.0", f"{MAJOR + 1}.0.0", f"{MAJOR + 1}.{MINOR}.0"]
)
def test_other_versions_are_refused(version: str) -> None:
    with pytest.raises(gatespec.SpecVersionMismatch, match=version):
        gatespec.check_spec_version(version)
