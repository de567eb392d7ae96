# Copied from generator/support/__init__.py by `make generate`; do not edit.
"""The hand-written support library of the generated package.

Everything here is ordinary Python, linted and type-checked with the project and tested
directly (tests/generator/test_support_*.py). The generator copies these files verbatim into
`gatespec_surface/_support/`, so the generated package stays self-contained; its generated
modules hold the spec's data (patterns, bounds, tables) and bind it to the code here.

Dependencies: the standard library, pydantic (the card validator) and, in `strategies` only,
hypothesis, so that importing the surface never imports hypothesis.
"""
