"""One log record is one line, whatever untrusted text it quotes (issue 12, item 14)."""

from __future__ import annotations

import logging

from gatespec.logs import OneLineFormatter, escape_controls


def test_controls_are_escaped() -> None:
    assert escape_controls("a\nb\rc\x1b[31md\u2028e\tf") == "a\\nb\\rc\\x1b[31md\\u2028e\tf"


def test_a_forged_line_stays_inside_its_record() -> None:
    formatter = OneLineFormatter("gatespec: %(levelname)s %(message)s")
    record = logging.LogRecord(
        "x", logging.WARNING, __file__, 1, "upstream said %s", ("ok\ngatespec: ERROR fake",), None
    )
    line = formatter.format(record)
    assert "\n" not in line and line.endswith("ok\\ngatespec: ERROR fake")


def test_tracebacks_keep_their_lines() -> None:
    formatter = OneLineFormatter("%(message)s")
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    assert "Traceback (most recent call last):\n" in formatter.format(record)
