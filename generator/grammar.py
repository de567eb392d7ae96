"""Grammar analysis: regex compilation, length bounds, first sets, and the node tree the
generated strategies interpret. One compiler serves the parser regex (Python, with named
captures) and the JSON-Schema pattern (portable, no captures)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .ir import Alt, CharSet, Grammar, Group, Lit, Node, Opt, Ref, Rep

# Characters the analysis knows individually; a negated class also stands for "anything else".
UNIVERSE = [chr(c) for c in range(0, 0x250)]
OTHER = "\uffff"  # sentinel: some character outside UNIVERSE
# Non-ASCII members offered to strategies for negated classes (letters, CJK, emoji, look-alikes).
EXTRA_SAMPLE = "éßжа中文ツ😀\u00a0\u2028"


# Characters a literal must escape. Only these: ECMA-262 in unicode mode (ajv, the TypeScript
# SDK) rejects identity escapes such as "\#" or "\-" that Python's re.escape produces.
_SYNTAX_CHARACTERS = frozenset("^$\\.*+?()[]{}|/")


def portable_escape(text: str) -> str:
    """Escape literal text for a pattern that Python's re and ECMA-262 (unicode mode) share."""
    return "".join("\\" + ch if ch in _SYNTAX_CHARACTERS else ch for ch in text)


@dataclass(frozen=True)
class Analysis:
    regex: str  # Python, named captures; use with fullmatch
    portable: str  # ECMA-262 and Python alike: ^(?:...)(?![\s\S])
    min_len: int
    max_len: int | None  # None: unbounded
    captures: tuple[str, ...]
    tree: Any  # JSON-serialisable node tree with refs inlined (support/trees.py)
    syntax: str  # the nodes as one line of text, for error messages
    alphabet: str | None  # every character the grammar can use; None with a negated class
    constant: str | None  # the one string the grammar admits, when it admits only one


class GrammarCompiler:
    def __init__(self, grammars: dict[str, Grammar]) -> None:
        self.grammars = grammars

    # ------------------------------------------------------------ regex

    def regex(self, nodes: tuple[Node, ...], captures: bool) -> str:
        return "".join(self._node_regex(n, captures) for n in nodes)

    @staticmethod
    def _quant(lo: int, hi: int | None) -> str:
        if (lo, hi) == (1, 1):
            return ""
        if hi is None:
            return "*" if lo == 0 else "+" if lo == 1 else f"{{{lo},}}"
        if (lo, hi) == (0, 1):
            return "?"
        return f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"

    def _wrap(self, inner: str, capture: str | None, captures: bool) -> str:
        if capture and captures:
            return f"(?P<{capture}>{inner})"
        return inner

    def _node_regex(self, n: Node, captures: bool) -> str:
        if isinstance(n, Lit):
            return portable_escape(n.text)
        if isinstance(n, CharSet):
            return self._wrap(f"[{n.body}]{self._quant(n.min, n.max)}", n.capture, captures)
        if isinstance(n, Ref):
            inner = self.regex(self.grammars[n.name].nodes, captures=False)
            if n.capture and captures:
                return f"(?P<{n.capture}>{inner})"
            return f"(?:{inner})"
        if isinstance(n, Opt):
            return f"(?:{self.regex(n.nodes, captures)})?"
        if isinstance(n, Rep):
            return f"(?:{self.regex(n.nodes, captures)}){self._quant(n.min, n.max)}"
        if isinstance(n, Group):
            inner = self.regex(n.nodes, captures)
            return f"(?P<{n.capture}>{inner})" if n.capture and captures else f"(?:{inner})"
        assert isinstance(n, Alt)
        return "(?:" + "|".join(self.regex(o, captures) for o in n.options) + ")"

    # ------------------------------------------------------------ lengths

    def bounds(self, nodes: tuple[Node, ...]) -> tuple[int, int | None]:
        lo = 0
        hi: int | None = 0
        for n in nodes:
            a, b = self._node_bounds(n)
            lo += a
            hi = None if hi is None or b is None else hi + b
        return lo, hi

    def _node_bounds(self, n: Node) -> tuple[int, int | None]:
        if isinstance(n, Lit):
            return len(n.text), len(n.text)
        if isinstance(n, CharSet):
            return n.min, n.max
        if isinstance(n, Ref):
            return self.bounds(self.grammars[n.name].nodes)
        if isinstance(n, Opt):
            return 0, self.bounds(n.nodes)[1]
        if isinstance(n, Group):
            return self.bounds(n.nodes)
        if isinstance(n, Rep):
            a, b = self.bounds(n.nodes)
            if n.max is None:
                return a * n.min, (0 if b == 0 else None)
            return a * n.min, None if b is None else b * n.max
        assert isinstance(n, Alt)
        pairs = [self.bounds(o) for o in n.options]
        his = [p[1] for p in pairs]
        return min(p[0] for p in pairs), None if None in his else max(
            h for h in his if h is not None
        )

    # ------------------------------------------------------------ first sets

    @staticmethod
    def class_members(body: str) -> set[str]:
        rx = re.compile(f"[{body}]")
        members = {c for c in UNIVERSE if rx.fullmatch(c)}
        if body.startswith("^"):
            members.add(OTHER)
        return members

    def first(self, nodes: tuple[Node, ...]) -> tuple[set[str], bool]:
        """(characters that can start a match, whether the sequence can match empty)."""
        out: set[str] = set()
        for n in nodes:
            f, nullable = self._node_first(n)
            out |= f
            if not nullable:
                return out, False
        return out, True

    def _node_first(self, n: Node) -> tuple[set[str], bool]:
        if isinstance(n, Lit):
            return {n.text[0]}, False
        if isinstance(n, CharSet):
            return self.class_members(n.body), n.min == 0
        if isinstance(n, Ref):
            return self.first(self.grammars[n.name].nodes)
        if isinstance(n, Opt):
            return self.first(n.nodes)[0], True
        if isinstance(n, Group):
            return self.first(n.nodes)
        if isinstance(n, Rep):
            f, nullable = self.first(n.nodes)
            return f, nullable or n.min == 0
        assert isinstance(n, Alt)
        out: set[str] = set()
        nullable = False
        for o in n.options:
            f, nl = self.first(o)
            out |= f
            nullable = nullable or nl
        return out, nullable

    def ambiguities(self, nodes: tuple[Node, ...], where: str) -> list[str]:
        """Alternatives that could start the same way (or both match empty) are ambiguous."""
        problems: list[str] = []
        for i, n in enumerate(nodes):
            here = f"{where}[{i}]"
            if isinstance(n, Alt):
                firsts = [self.first(o) for o in n.options]
                for a in range(len(firsts)):
                    for b in range(a + 1, len(firsts)):
                        overlap = firsts[a][0] & firsts[b][0]
                        if overlap or (firsts[a][1] and firsts[b][1]):
                            shown = "".join(sorted(c for c in overlap if c != OTHER)[:8])
                            problems.append(
                                f"{here}: alternatives {a} and {b} are ambiguous "
                                f"(both can start with {shown!r} or both match empty)"
                            )
                for j, o in enumerate(n.options):
                    problems += self.ambiguities(o, f"{here}.alt[{j}]")
            elif isinstance(n, (Opt, Rep, Group)):
                problems += self.ambiguities(n.nodes, f"{here}")
        return problems

    # ------------------------------------------------------------ strategy tree

    def tree(self, nodes: tuple[Node, ...]) -> list[Any]:
        return [self._node_tree(n) for n in nodes]

    def _alphabet(self, body: str) -> str:
        members = sorted(c for c in self.class_members(body) if c != OTHER)
        if body.startswith("^"):
            rx = re.compile(f"[{body}]")
            members = [c for c in members if c.isprintable() or c == " "]
            members += [c for c in EXTRA_SAMPLE if rx.fullmatch(c)]
        return "".join(members)

    def _node_tree(self, n: Node) -> Any:
        if isinstance(n, Lit):
            return ["lit", n.text]
        if isinstance(n, CharSet):
            return ["set", self._alphabet(n.body), n.min, n.max]
        if isinstance(n, Ref):
            return ["seq", self.tree(self.grammars[n.name].nodes)]
        if isinstance(n, Opt):
            return ["rep", self.tree(n.nodes), 0, 1]
        if isinstance(n, Group):
            return ["seq", self.tree(n.nodes)]
        if isinstance(n, Rep):
            return ["rep", self.tree(n.nodes), n.min, n.max]
        assert isinstance(n, Alt)
        return ["alt", [self.tree(o) for o in n.options]]

    # ------------------------------------------------------------ text forms

    def syntax(self, nodes: tuple[Node, ...]) -> str:
        parts = []
        for n in nodes:
            if isinstance(n, Lit):
                parts.append(json.dumps(n.text, ensure_ascii=False))
            elif isinstance(n, CharSet):
                parts.append(f"[{n.body}]{self._quant(n.min, n.max)}")
            elif isinstance(n, Ref):
                parts.append(n.name)
            elif isinstance(n, Opt):
                parts.append(f"[ {self.syntax(n.nodes)} ]")
            elif isinstance(n, Group):
                parts.append(f"( {self.syntax(n.nodes)} )")
            elif isinstance(n, Rep):
                parts.append(f"( {self.syntax(n.nodes)} ){self._quant(n.min, n.max)}")
            elif isinstance(n, Alt):
                parts.append("( " + " | ".join(self.syntax(o) for o in n.options) + " )")
        return " ".join(parts)

    def class_bodies(self, nodes: tuple[Node, ...]) -> list[str]:
        """Every character-class body in the nodes, references followed."""
        out: list[str] = []
        for n in nodes:
            if isinstance(n, CharSet):
                out.append(n.body)
            elif isinstance(n, Ref):
                out += self.class_bodies(self.grammars[n.name].nodes)
            elif isinstance(n, (Opt, Rep, Group)):
                out += self.class_bodies(n.nodes)
            elif isinstance(n, Alt):
                for o in n.options:
                    out += self.class_bodies(o)
        return out

    def alphabet(self, nodes: tuple[Node, ...]) -> str | None:
        # A negated class has no finite alphabet worth reporting against.
        if any(body.startswith("^") for body in self.class_bodies(nodes)):
            return None
        chars: set[str] = set()

        def walk(tree: list[Any]) -> None:
            for n in tree:
                if n[0] in ("lit", "set"):
                    chars.update(n[1])
                elif n[0] in ("seq", "rep"):
                    walk(n[1])
                elif n[0] == "alt":
                    for o in n[1]:
                        walk(o)

        walk(self.tree(nodes))
        return "".join(sorted(chars))

    # ------------------------------------------------------------ all at once

    def captures(self, nodes: tuple[Node, ...]) -> list[str]:
        out: list[str] = []
        for n in nodes:
            if isinstance(n, (CharSet, Ref)) and n.capture:
                out.append(n.capture)
            if isinstance(n, Group):
                if n.capture:
                    out.append(n.capture)
                out += self.captures(n.nodes)
            elif isinstance(n, (Opt, Rep)):
                out += self.captures(n.nodes)
            elif isinstance(n, Alt):
                for o in n.options:
                    out += self.captures(o)
        return out

    def analyse(self, g: Grammar) -> Analysis:
        lo, hi = self.bounds(g.nodes)
        plain = self.regex(g.nodes, captures=False)
        tree = self.tree(g.nodes)
        return Analysis(
            regex=self.regex(g.nodes, captures=True),
            portable=f"^(?:{plain})(?![\\s\\S])",
            min_len=lo,
            max_len=hi,
            captures=tuple(self.captures(g.nodes)),
            tree=tree,
            syntax=self.syntax(g.nodes),
            alphabet=self.alphabet(g.nodes),
            constant=_constant(tree),
        )


def _constant(tree: list[Any]) -> str | None:
    """The one string a tree admits, or None when it admits several."""
    out: list[str] = []
    for n in tree:
        if n[0] == "lit":
            out.append(n[1])
        elif n[0] == "set" and len(n[1]) == 1 and n[2] == n[3]:
            out.append(n[1] * n[2])
        elif n[0] in ("seq", "rep") and (n[0] == "seq" or n[2] == n[3]):
            inner = _constant(n[1])
            if inner is None:
                return None
            out.append(inner if n[0] == "seq" else inner * n[2])
        else:
            return None
    return "".join(out)
