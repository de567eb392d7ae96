"""The seed texts themselves, read so that the spec's citations can be checked against them.

Seeds live outside the repository (`../shared/seeds` beside the checkout, in every checkout and
in CI; `GATESPEC_SEEDS` names another folder). A citation names a seed by number and a section
by its heading, as the seed writes it:

- seed 000 numbers its sections: "2.1" is the text from the line "2.1 Permitted fields" to the
  next heading that is not inside 2.1 ("2" holds 2.1 to 2.5);
- seeds 001, 003 and 004 are markdown: a section is a heading's text ("Tool Routing" for
  "### Requirement: Tool Routing", "Error Handling"), "Parent: Child" a heading inside another
  ("Execution Policies: Enforce timeout"), and "Decision 1" the heading "1. ..." inside
  "Decision"; seed 003 lost its line breaks, so its headings are found inline;
- seed 002 lost its markdown: its headings are the lines listed in UNMARKED_HEADINGS (each must
  be a line of the seed), each section running to the next of them.

A heading also matches by its beginning, up to a word boundary ("mcp_result_to_envelope" for
"mcp_result_to_envelope(result_dict, tool_name)", "Runtime modes" for "Runtime modes: ...").
Quotes are compared with whitespace normalised (every run of white space is one space): the
texts carry line breaks where the originals had none.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

ENV = "GATESPEC_SEEDS"
QUOTE_MAX_CHARS = 200  # a citation quotes a few words, never a passage

# Seed 002's headings (its markdown was lost in the copy), in the order they appear.
UNMARKED_HEADINGS: dict[str, tuple[str, ...]] = {
    "002": (
        "MCP Integration",
        "Adapter functions",
        "mcp_tool_to_selectable(tool_dict)",
        "mcp_result_to_envelope(result_dict, tool_name)",
        "Supported content types",
        "Structured content",
        "Content-part annotations",
        "load_mcp_session_jsonl(path)",
        "Session JSONL format",
        "End-to-end example",
        "Prompt-caching compatibility",
        "Worked example: Anthropic cache_control",
        "Security Considerations",
        "MCP annotations are untrusted hints",
        "side_effects is informational only",
        "Authorization status",
        "Runtime modes: transparent proxy and two-tool gateway",
        "Wiring a gateway over stdio",
        "Wiring a transparent proxy over stdio",
        "Connecting to real upstream MCP servers",
        "Error shape",
        "See also",
    )
}

_WS = re.compile(r"\s+")
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.? [A-Za-z]", re.M)
_MARKDOWN = re.compile(r"^(#{1,6}) +(.*)$", re.M)
_INLINE = re.compile(r"(?:^|(?<=\s))(#{1,6}) +")
_STRIP = ("Requirement: ", "Scenario: ")


def normalise(text: str) -> str:
    return _WS.sub(" ", text).strip()


@dataclass(frozen=True)
class Heading:
    level: int
    title: str
    start: int  # offset of the heading in the seed text
    body: int  # offset where its text starts
    end: int = -1  # offset where its section ends (the next heading of its level or above)
    number: str | None = None  # seed 000's "2.1"


class SeedText:
    """One seed's text and its sections."""

    def __init__(self, number: str, path: Path) -> None:
        self.number = number
        self.path = path
        self.text = path.read_text(encoding="utf-8")
        self.problems: list[str] = []
        self.headings = self._outline()

    # ------------------------------------------------------------ outline

    def _outline(self) -> list[Heading]:
        text = self.text
        raw: list[Heading] = []
        if self.number in UNMARKED_HEADINGS:
            pos = 0
            for title in UNMARKED_HEADINGS[self.number]:
                m = re.compile(rf"^{re.escape(title)}[ \t]*$", re.M).search(text, pos)
                if m is None:
                    self.problems.append(f"heading {title!r} is not a line of the seed")
                    continue
                raw.append(Heading(1, title, m.start(), m.end()))
                pos = m.end()
        elif _MARKDOWN.search(text) and text.count("\n") > 10:
            fenced = [m.start() for m in re.finditer(r"^```", text, re.M)]
            for m in _MARKDOWN.finditer(text):
                if sum(1 for f in fenced if f < m.start()) % 2:
                    continue  # a comment inside a code block
                title = m.group(2).strip()
                for prefix in _STRIP:
                    title = title.removeprefix(prefix)
                raw.append(Heading(len(m.group(1)), title, m.start(), m.end()))
        elif text.count("\n") <= 10:  # one long line: markdown headings inline
            for m in _INLINE.finditer(text):
                nxt = _INLINE.search(text, m.end())
                title = text[m.end() : nxt.start() if nxt else len(text)].strip()
                raw.append(Heading(len(m.group(1)), title, m.start(), m.end()))
        else:
            for m in _NUMBERED.finditer(text):
                line_end = text.find("\n", m.start())
                title = text[m.start() : line_end if line_end >= 0 else len(text)]
                number = m.group(1)
                raw.append(
                    Heading(number.count(".") + 1, title, m.start(), line_end, number=number)
                )
        out = []
        for i, h in enumerate(raw):
            end = next((o.start for o in raw[i + 1 :] if o.level <= h.level), len(text))
            out.append(Heading(h.level, h.title, h.start, h.body, end, h.number))
        return out

    # ------------------------------------------------------------ sections

    def _find(self, name: str, within: Heading | None) -> Heading | None:
        pool = [
            h
            for h in self.headings
            if within is None or (within.start < h.start and h.end <= within.end)
        ]
        for h in pool:
            if name in (h.number, h.title):
                return h
        for h in pool:
            if h.title.startswith(name) and not re.match(r"[\w]", h.title[len(name) :] or " "):
                return h
        return None

    def section(self, name: str) -> Heading | None:
        """The heading a citation's section names, or None."""
        found = self._find(name, None)
        if found is not None:
            return found
        # "Parent: Child", tried at every ": "
        for m in re.finditer(": ", name):
            parent = self.section(name[: m.start()])
            if parent is not None:
                child = self._find(name[m.end() :], parent)
                if child is not None:
                    return child
        # "Decision 1": the numbered heading "1. ..." inside "Decision"
        numbered = re.fullmatch(r"(.+) (\d+)", name)
        if numbered:
            parent = self.section(numbered.group(1))
            if parent is not None:
                return self._find(f"{numbered.group(2)}.", parent)
        return None

    def section_text(self, name: str) -> str | None:
        h = self.section(name)
        return None if h is None else normalise(self.text[h.start : h.end])


class Seeds:
    """Every seed the spec names, read from the seed folder."""

    def __init__(self, folder: Path | None, files: dict[str, str]) -> None:
        self.folder = folder
        self.texts: dict[str, SeedText] = {}
        self.problems: dict[str, str] = {}
        for number, file in files.items():
            if folder is None:
                self.problems[number] = "no seed folder found"
                continue
            path = folder / file
            if not path.is_file():
                self.problems[number] = f"{path} does not exist"
                continue
            self.texts[number] = SeedText(number, path)

    def where(self, seed: str, section: str) -> str:
        return (
            f"seed {seed} ({self.texts[seed].path.name if seed in self.texts else '?'}) §{section}"
        )

    def locate(self, seed: str, section: str) -> tuple[str | None, str | None]:
        """(section text, None) or (None, why it cannot be read)."""
        if seed not in self.texts:
            return None, self.problems.get(seed, f"unknown seed {seed!r}")
        text = self.texts[seed].section_text(section)
        if text is None:
            return None, f"seed {seed} has no section {section!r}"
        return text, None


def seed_folder(project_root: Path) -> Path | None:
    """The seed folder: $GATESPEC_SEEDS, ../shared/seeds beside the checkout, or (in a git
    worktree) beside the main checkout."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    candidates = [project_root.resolve().parent / "shared" / "seeds"]
    dot_git = project_root / ".git"
    if dot_git.is_file():  # a worktree: "gitdir: MAIN/.git/worktrees/NAME"
        line = dot_git.read_text(encoding="utf-8").strip()
        if line.startswith("gitdir:"):
            gitdir = Path(line.partition(":")[2].strip())
            if gitdir.parent.name == "worktrees":
                main = gitdir.parent.parent.parent
                candidates.append(main.resolve().parent / "shared" / "seeds")
    return next((c for c in candidates if c.is_dir()), None)
