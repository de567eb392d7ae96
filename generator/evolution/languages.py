"""Whether one version of a grammar admits fewer strings than another, more, or others.

A language is a union of grammars, each with its length cap (an x-grammar list is one). Two
languages A (old) and B (new) are compared in both directions, each answered by the first of:

1. lengths (exact): A admits a length B admits nowhere, so A is not inside B. The length sets
   are computed exactly from the node trees (bit sets), caps applied;
2. structure (exact): the node trees correspond node for node and each of A's nodes admits no
   more than B's (character classes compared over all of Unicode, counts as intervals,
   alternatives as sets), with no length of A past B's cap, so A is inside B;
3. samples: a deterministic sample of A (shortest, longest, every class member rotated through
   every class, seeded draws, the grammar's own examples) checked with B's full match. A
   string B refuses is a witness that A is not inside B; none found in the sample is read as
   "inside", and the report says it was sampled.
"""

from __future__ import annotations

import random
import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..grammar import GrammarCompiler
from ..ir import Alt, CharSet, Grammar, Group, Lit, Node, Opt, Ref, Rep
from ..support.trees import Build, Extreme, build

# Normalised trees: references and groups inlined, adjacent literals joined, opt as rep 0..1.
#   ("lit", text) | ("set", body, min, max) | ("rep", seq, min, max) | ("alt", (seq, ...))
Seq = tuple[Any, ...]
SEEDED_DRAWS = 64
MAX_ROTATIONS = 256
UNBOUNDED_EXTRA = 6  # how far past its minimum a sample runs an unbounded count


def normalise(nodes: Sequence[Node], grammars: dict[str, Grammar]) -> Seq:
    out: list[Any] = []

    def add(node: Any) -> None:
        if node[0] == "lit" and out and out[-1][0] == "lit":
            out[-1] = ("lit", out[-1][1] + node[1])
        else:
            out.append(node)

    for n in nodes:
        if isinstance(n, Lit):
            add(("lit", n.text))
        elif isinstance(n, CharSet):
            add(("set", n.body, n.min, n.max))
        elif isinstance(n, (Ref, Group)):
            inner = grammars[n.name].nodes if isinstance(n, Ref) else n.nodes
            for m in normalise(inner, grammars):
                add(m)
        elif isinstance(n, Opt):
            add(("rep", normalise(n.nodes, grammars), 0, 1))
        elif isinstance(n, Rep):
            add(("rep", normalise(n.nodes, grammars), n.min, n.max))
        else:
            assert isinstance(n, Alt)
            add(("alt", tuple(normalise(o, grammars) for o in n.options)))
    return tuple(out)


# ---------------------------------------------------------------- character classes


@cache
def _every_character() -> str:
    """Every code point but the surrogates, in order: a class's members are runs of it."""
    return "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)


@cache
def sample_alphabet(body: str) -> str:
    """The characters samples draw from a class (the compiler's strategy alphabet)."""
    return GrammarCompiler({})._alphabet(body)


@cache
def members(body: str) -> tuple[tuple[int, int], ...]:
    """The class's members as sorted, maximal [start, end) runs of _every_character()."""
    runs = re.finditer(f"[{body}]+", _every_character())
    return tuple((m.start(), m.end()) for m in runs)


def class_within(a: str, b: str) -> bool:
    """Every member of class a is a member of class b."""
    if a == b:
        return True
    theirs = members(b)
    starts = [s for s, _ in theirs]
    for s, e in members(a):
        i = bisect_right(starts, s) - 1
        if i < 0 or theirs[i][1] < e:
            return False
    return True


def _count_within(lo: int, hi: int | None, lo2: int, hi2: int | None) -> bool:
    return lo2 <= lo and (hi2 is None or (hi is not None and hi <= hi2))


# ---------------------------------------------------------------- structure


def seq_within(a: Seq, b: Seq) -> bool:
    """Every string `a` admits, `b` admits (proven node for node; False: not proven)."""
    if a == b:
        return True
    if len(a) == 1 and a[0][0] == "alt":
        return all(seq_within(o, b) for o in a[0][1])
    if len(b) == 1 and len(a) != 1:
        y = b[0]
        if y[0] == "alt" and any(seq_within(a, o) for o in y[1]):
            return True
        if y[0] == "rep" and _count_within(1, 1, y[2], y[3]) and seq_within(a, y[1]):
            return True
    return len(a) == len(b) and all(node_within(x, y) for x, y in zip(a, b, strict=True))


def node_within(x: Any, y: Any) -> bool:
    """Every string node `x` admits, node `y` admits (each step descends into x or y)."""
    if x == y:
        return True
    kx, ky = x[0], y[0]
    if kx == "lit" and ky == "set":
        n = len(x[1])
        return _count_within(n, n, y[2], y[3]) and all(
            class_within(re.escape(c), y[1]) for c in x[1]
        )
    if kx == "set" and ky == "set":
        return _count_within(x[2], x[3], y[2], y[3]) and class_within(x[1], y[1])
    if kx == "rep" and ky == "rep" and _count_within(x[2], x[3], y[2], y[3]):
        if seq_within(x[1], y[1]):
            return True
    if kx == "alt":
        return all(seq_within(o, (y,)) for o in x[1])
    if ky == "alt":
        return any(seq_within((x,), o) for o in y[1])
    if ky == "rep" and _count_within(1, 1, y[2], y[3]):
        return seq_within((x,), y[1])
    return False


# ---------------------------------------------------------------- lengths


class Lengths:
    """Length sets as bit sets over 0..limit, with bit limit+1 standing for "longer"."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.over = 1 << (limit + 1)
        self.mask = (self.over << 1) - 1

    def _shift(self, bits: int, by: int) -> int:
        moved = bits << by
        return (moved & self.mask) | (self.over if moved > self.mask else 0)

    def _sum(self, a: int, b: int) -> int:
        out, i = 0, 0
        while b:
            if b & 1:
                out |= self._shift(a, i)
            b >>= 1
            i += 1
        return out

    def _range(self, lo: int, hi: int | None) -> int:
        top = self.limit + 1 if hi is None else min(hi, self.limit + 1)
        return 0 if lo > top else ((1 << (top + 1)) - 1) ^ ((1 << lo) - 1)

    def seq(self, nodes: Seq) -> int:
        bits = 1
        for n in nodes:
            bits = self._sum(bits, self.node(n))
        return bits

    def node(self, n: Any) -> int:
        if n[0] == "lit":
            return self._range(len(n[1]), len(n[1]))
        if n[0] == "set":
            return self._range(n[2], n[3])
        if n[0] == "alt":
            out = 0
            for o in n[1]:
                out |= self.seq(o)
            return out
        one, lo, hi = self.seq(n[1]), n[2], n[3]
        out, cur, k = 0, 1, 0
        while hi is None or k <= hi:
            if k >= lo:
                if out | cur == out and k > lo:
                    break
                out |= cur
            nxt = self._sum(cur, one)
            if nxt == cur and k >= lo:
                break
            cur, k = nxt, k + 1
        return out

    def capped(self, bits: int, cap: int | None) -> int:
        return bits if cap is None else bits & ((1 << (min(cap, self.limit + 1) + 1)) - 1)

    def shown(self, bits: int) -> list[int]:
        return [i for i in range(self.limit + 1) if bits >> i & 1]


# ---------------------------------------------------------------- languages


@dataclass(frozen=True)
class Option:
    """One grammar of a language, in one spec version."""

    name: str
    seq: Seq
    regex: re.Pattern[str]
    cap: int | None  # its max_length (None: the syntax alone bounds it)
    natural_max: int | None
    examples: tuple[str, ...]

    def accepts(self, value: str) -> bool:
        return (self.cap is None or len(value) <= self.cap) and bool(self.regex.fullmatch(value))


@dataclass(frozen=True)
class Language:
    options: tuple[Option, ...]

    def accepts(self, value: str) -> bool:
        return any(o.accepts(value) for o in self.options)


def language(names: Sequence[str], grammars: dict[str, Grammar]) -> Language:
    compiler = GrammarCompiler(grammars)
    options = []
    for name in names:
        g = grammars[name]
        # valid examples: strings, or {value, amended_by} (validated, or raw from an old layout)
        examples = tuple(
            e if isinstance(e, str) else str(e["value"] if isinstance(e, dict) else e.value)
            for e in (g.spec.valid or [])
        )
        options.append(
            Option(
                name=name,
                seq=normalise(g.nodes, grammars),
                regex=re.compile(compiler.regex(g.nodes, captures=False)),
                cap=g.spec.max_length,
                natural_max=compiler.bounds(g.nodes)[1],
                examples=examples,
            )
        )
    return Language(tuple(options))


class _Rotation:
    """A trees.Chooser that starts every class at member k and takes alternative k: over
    k = 0, 1, ... every member of every class appears. `longest` takes every count at its top."""

    def __init__(self, k: int, longest: bool) -> None:
        self.k = k
        self.longest = longest

    def _n(self, lo: int, hi: int | None) -> int:
        if self.longest:
            return lo + UNBOUNDED_EXTRA if hi is None else hi
        return max(lo, 1) if hi is None else min(max(lo, 1), hi)

    def chars(self, alphabet: str, lo: int, hi: int | None) -> str:
        return "".join(alphabet[(self.k + i) % len(alphabet)] for i in range(self._n(lo, hi)))

    def repeat(self, build: Build, lo: int, hi: int | None) -> str:
        return "".join(build() for _ in range(self._n(lo, hi)))

    def branch(self, options: Sequence[Build]) -> str:
        return options[self.k % len(options)]()


class _Seeded:
    """A trees.Chooser drawing from a seeded generator, counts mostly at their extremes."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def _n(self, lo: int, hi: int | None) -> int:
        top = lo + UNBOUNDED_EXTRA if hi is None else hi
        return self.rng.choice((lo, top, self.rng.randint(lo, top)))

    def chars(self, alphabet: str, lo: int, hi: int | None) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(self._n(lo, hi)))

    def repeat(self, build: Build, lo: int, hi: int | None) -> str:
        return "".join(build() for _ in range(self._n(lo, hi)))

    def branch(self, options: Sequence[Build]) -> str:
        return self.rng.choice(options)()


def _bodies(seq: Seq) -> Iterator[str]:
    for n in seq:
        if n[0] == "set":
            yield n[1]
        elif n[0] == "rep":
            yield from _bodies(n[1])
        elif n[0] == "alt":
            for o in n[1]:
                yield from _bodies(o)


def _first_outside(a: str, b: str) -> str | None:
    """A member of class a that class b lacks, if any."""
    theirs = members(b)
    every = _every_character()
    for s, e in members(a):
        for pos in (s, *(t for _, t in theirs if s <= t < e)):
            if not any(ts <= pos < te for ts, te in theirs):
                return every[pos]
    return None


def distinguishing(lang: Language, other: Language) -> str:
    """Characters some class of `lang` admits and some class of `other` does not: samples
    start every class with them, so a class that lost or gained a member shows it."""
    mine = sorted({b for o in lang.options for b in _bodies(o.seq)})
    theirs = sorted({b for o in other.options for b in _bodies(o.seq)})
    found = {c for a in mine for b in theirs if a != b and (c := _first_outside(a, b))}
    return "".join(sorted(found))


def _sample_tree(seq: Seq, first: str) -> list[Any]:
    """The strategy-tree form of a normalised tree; each class's alphabet starts with the
    characters of `first` it admits."""
    out: list[Any] = []
    for n in seq:
        if n[0] == "lit":
            out.append(["lit", n[1]])
        elif n[0] == "set":
            rx = re.compile(f"[{n[1]}]")
            lead = [c for c in first if rx.fullmatch(c)]
            rest = "".join(c for c in sample_alphabet(n[1]) if c not in lead)
            out.append(["set", "".join(lead) + rest, n[2], n[3]])
        elif n[0] == "rep":
            out.append(["rep", _sample_tree(n[1], first), n[2], n[3]])
        else:
            out.append(["alt", [_sample_tree(o, first) for o in n[1]]])
    return out


def _alphabet_sizes(tree: Any) -> Iterator[int]:
    for n in tree:
        if n[0] == "set":
            yield len(n[1])
        elif n[0] == "rep":
            yield from _alphabet_sizes(n[1])
        elif n[0] == "alt":
            for o in n[1]:
                yield from _alphabet_sizes(o)


# Focused strings: the shortest string whose one class node holds one given character, every
# other choice at its minimum. Rotations alone miss a character that only shows in one
# alternative of nested alternatives; these do not.

Path = tuple[int, ...]


def _set_paths(seq: Seq, at: Path = ()) -> Iterator[tuple[Path, str]]:
    for i, n in enumerate(seq):
        if n[0] == "set":
            yield (*at, i), n[1]
        elif n[0] == "rep":
            yield from _set_paths(n[1], (*at, i))
        elif n[0] == "alt":
            for j, o in enumerate(n[1]):
                yield from _set_paths(o, (*at, i, j))


def _minimal(seq: Seq) -> str:
    out = []
    for n in seq:
        if n[0] == "lit":
            out.append(n[1])
        elif n[0] == "set":
            out.append(sample_alphabet(n[1])[:1] * n[2])
        elif n[0] == "rep":
            out.append(_minimal(n[1]) * n[2])
        else:
            out.append(min((_minimal(o) for o in n[1]), key=len))
    return "".join(out)


def _through(seq: Seq, path: Path, char: str) -> str:
    out = []
    for i, n in enumerate(seq):
        if i != path[0]:
            out.append(_minimal((n,)))
        elif n[0] == "set":
            filler = sample_alphabet(n[1])[:1]
            out.append(char + filler * (max(n[2], 1) - 1))
        elif n[0] == "rep":
            out.append(_through(n[1], path[1:], char) + _minimal(n[1]) * (max(n[2], 1) - 1))
        else:
            out.append(_through(n[1][path[1]], path[2:], char))
    return "".join(out)


def _focused(seq: Seq, chars: str) -> Iterator[str]:
    for path, body in _set_paths(seq):
        rx = re.compile(f"[{body}]")
        for c in chars:
            if rx.fullmatch(c):
                yield _through(seq, path, c)


def samples(lang: Language, other: Language) -> list[str]:
    """A deterministic sample of the strings `lang` admits, shortest first."""
    first = distinguishing(lang, other)
    out: dict[str, None] = {}
    for o in lang.options:
        tree = _sample_tree(o.seq, first)
        rotations = range(min(MAX_ROTATIONS, max(_alphabet_sizes(tree), default=1)))
        choosers: list[Any] = [Extreme(longest=False), Extreme(longest=True)]
        choosers += [_Rotation(k, longest) for k in rotations for longest in (False, True)]
        choosers += [_Seeded(i) for i in range(SEEDED_DRAWS)]
        found = [*o.examples, *(build(tree, c) for c in choosers), *_focused(o.seq, first)]
        out.update((s, None) for s in found if o.accepts(s))
    return sorted(out, key=lambda s: (len(s), s))


@dataclass(frozen=True)
class Inclusion:
    inside: bool
    exact: bool
    evidence: str


@dataclass(frozen=True)
class Verdict:
    relation: str  # equal | narrowed | widened | changed
    lost: Inclusion  # is old inside new?
    gained: Inclusion  # is new inside old?

    @property
    def method(self) -> str:
        """exact: both directions decided by lengths or structure; exact + witness: the
        inclusion is exact and the difference a concrete sampled string; sampled: an
        inclusion rests on a sample alone."""
        both = (self.lost, self.gained)
        if all(i.exact for i in both):
            return "exact"
        return "exact + witness" if all(i.exact or not i.inside for i in both) else "sampled"

    def describe(self) -> str:
        parts = []
        if not self.lost.inside:
            parts.append(f"no longer admitted: {self.lost.evidence}")
        if not self.gained.inside:
            parts.append(f"newly admitted: {self.gained.evidence}")
        if not parts:
            parts.append(f"same language ({self.lost.evidence})")
        return "; ".join(parts)


def _shown(value: str) -> str:
    return repr(value if len(value) <= 60 else value[:57] + "...")


class Comparison:
    """Compares an old language with a new one."""

    def __init__(self, old: Language, new: Language) -> None:
        self.old, self.new = old, new
        finite = [
            v for o in (*old.options, *new.options) for v in (o.cap, o.natural_max) if v is not None
        ]
        self.lengths = Lengths(max(finite, default=64) + 1)

    def _lengths(self, lang: Language) -> int:
        out = 0
        for o in lang.options:
            out |= self.lengths.capped(self.lengths.seq(o.seq), o.cap)
        return out

    def _option_within(self, a: Option, b: Option) -> bool:
        if b.cap is not None:
            longest = self.lengths.capped(self.lengths.seq(a.seq), a.cap)
            if longest >> (b.cap + 1):
                return False
        return seq_within(a.seq, b.seq)

    def inclusion(self, a: Language, b: Language) -> Inclusion:
        only_a = self._lengths(a) & ~self._lengths(b) & (self.lengths.over - 1)
        if only_a:
            n = self.lengths.shown(only_a)
            shown = (
                f"{n[0]}"
                if len(n) == 1
                else f"{n[0]}..{n[-1]}"
                if n == list(range(n[0], n[-1] + 1))
                else f"{n[0]}, ..."
            )
            return Inclusion(False, True, f"strings of length {shown} (lengths)")
        if all(any(self._option_within(x, y) for y in b.options) for x in a.options):
            return Inclusion(True, True, "node for node")
        drawn = samples(a, b)
        for s in drawn:
            if not b.accepts(s):
                return Inclusion(False, False, f"{_shown(s)} (sampled)")
        return Inclusion(True, False, f"no difference in {len(drawn)} sampled strings")

    def verdict(self) -> Verdict:
        lost = self.inclusion(self.old, self.new)
        gained = self.inclusion(self.new, self.old)
        relation = {
            (True, True): "equal",
            (True, False): "widened",
            (False, True): "narrowed",
            (False, False): "changed",
        }[(lost.inside, gained.inside)]
        return Verdict(relation, lost, gained)


def compare(old: Language, new: Language) -> Verdict:
    return Comparison(old, new).verdict()
