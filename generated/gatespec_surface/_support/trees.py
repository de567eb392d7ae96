# Copied from generator/support/trees.py by `make generate`; do not edit.
"""Grammar trees and the one interpreter that builds strings from them.

A tree is a list of JSON-serialisable nodes, references already inlined:
  ["lit", text]                  the text itself
  ["set", alphabet, min, max]    min..max characters drawn from alphabet (max None: unbounded)
  ["seq", nodes]                 the nodes in order
  ["rep", nodes, min, max]       the nodes repeated min..max times
  ["alt", [nodes, nodes, ...]]   exactly one of the alternatives
`build` walks a tree and leaves every choice to a Chooser: `Extreme` gives the deterministic
shortest or longest instance (the generator's vectors), the strategies module a hypothesis one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Protocol

Tree = Sequence[Any]
Build = Callable[[], str]


class Chooser(Protocol):
    def chars(self, alphabet: str, lo: int, hi: int | None) -> str:
        """lo..hi characters from `alphabet`."""
        ...

    def repeat(self, build: Build, lo: int, hi: int | None) -> str:
        """lo..hi instances of `build()`, joined."""
        ...

    def branch(self, options: Sequence[Build]) -> str:
        """The instance of one option."""
        ...


def build(nodes: Tree, chooser: Chooser) -> str:
    out: list[str] = []
    for node in nodes:
        kind = node[0]
        if kind == "lit":
            out.append(node[1])
        elif kind == "set":
            out.append(chooser.chars(node[1], node[2], node[3]))
        elif kind == "seq":
            out.append(build(node[1], chooser))
        elif kind == "rep":
            out.append(chooser.repeat(partial(build, node[1], chooser), node[2], node[3]))
        elif kind == "alt":
            out.append(chooser.branch([partial(build, o, chooser) for o in node[1]]))
        else:
            raise ValueError(f"unknown grammar-tree node kind {kind!r}")
    return "".join(out)


class Extreme:
    """The shortest instance (first shortest alternative, every count at its minimum) or the
    longest (every count at its maximum, an unbounded one that far past its minimum),
    cycling through each class's characters."""

    def __init__(self, longest: bool, set_extra: int = 12, rep_extra: int = 2) -> None:
        self.longest = longest
        self.set_extra = set_extra
        self.rep_extra = rep_extra

    def _count(self, lo: int, hi: int | None, extra: int) -> int:
        if not self.longest:
            return lo
        return lo + extra if hi is None else hi

    def chars(self, alphabet: str, lo: int, hi: int | None) -> str:
        n = self._count(lo, hi, self.set_extra)
        return "".join(alphabet[i % len(alphabet)] for i in range(n))

    def repeat(self, build: Build, lo: int, hi: int | None) -> str:
        return build() * self._count(lo, hi, self.rep_extra)

    def branch(self, options: Sequence[Build]) -> str:
        built = [o() for o in options]
        return max(built, key=len) if self.longest else min(built, key=len)


def shortest(tree: Tree) -> str:
    return build(tree, Extreme(longest=False))


def longest(tree: Tree) -> str:
    return build(tree, Extreme(longest=True))
