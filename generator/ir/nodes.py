"""A grammar's syntax as the IR holds it: literal, character-set, reference, optional,
repeated, alternative and group nodes, parsed from grammars.yaml's `syntax` lists."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import SpecError


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class CharSet:
    body: str  # a regex character-class body, e.g. "a-z0-9_-"
    min: int
    max: int | None
    capture: str | None = None


@dataclass(frozen=True)
class Ref:
    name: str
    capture: str | None = None


@dataclass(frozen=True)
class Opt:
    nodes: tuple[Node, ...]


@dataclass(frozen=True)
class Rep:
    nodes: tuple[Node, ...]
    min: int
    max: int | None


@dataclass(frozen=True)
class Alt:
    options: tuple[tuple[Node, ...], ...]


@dataclass(frozen=True)
class Group:
    nodes: tuple[Node, ...]
    capture: str | None = None


Node = Lit | CharSet | Ref | Opt | Rep | Alt | Group


def parse_nodes(raw: Any, file: str, where: str) -> tuple[Node, ...]:
    if not isinstance(raw, list) or not raw:
        raise SpecError(file, where, "expected a non-empty list of grammar nodes")
    return tuple(parse_node(item, file, f"{where}[{i}]") for i, item in enumerate(raw))


def _count(value: Any, file: str, where: str, *, allow_none: bool) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SpecError(file, where, f"expected a non-negative integer, got {value!r}")
    return value


def parse_node(raw: Any, file: str, where: str) -> Node:
    if not isinstance(raw, dict):
        raise SpecError(file, where, f"expected a mapping, got {type(raw).__name__}")
    kinds = [k for k in ("lit", "set", "ref", "opt", "rep", "alt", "group") if k in raw]
    if len(kinds) != 1:
        raise SpecError(file, where, "a node has exactly one of lit/set/ref/opt/rep/alt/group")
    kind = kinds[0]
    allowed = {
        "lit": {"lit"},
        "set": {"set", "min", "max", "as"},
        "ref": {"ref", "as"},
        "opt": {"opt"},
        "rep": {"rep", "min", "max"},
        "alt": {"alt"},
        "group": {"group", "as"},
    }[kind]
    extra = sorted(set(raw) - allowed)
    if extra:
        raise SpecError(file, f"{where}.{extra[0]}", f"unknown key for a {kind} node")
    capture = raw.get("as")
    if capture is not None and not re.fullmatch(r"[a-z][a-z0-9_]*", str(capture)):
        raise SpecError(file, f"{where}.as", f"capture name {capture!r} is not an identifier")
    if kind == "lit":
        if not isinstance(raw["lit"], str) or not raw["lit"]:
            raise SpecError(file, f"{where}.lit", "expected a non-empty string")
        return Lit(raw["lit"])
    if kind == "set":
        body = raw["set"]
        if not isinstance(body, str) or not body:
            raise SpecError(file, f"{where}.set", "expected a character-class body")
        try:
            re.compile(f"[{body}]")
        except re.error as exc:
            raise SpecError(file, f"{where}.set", f"not a valid character class: {exc}") from None
        lo = _count(raw.get("min", 1), file, f"{where}.min", allow_none=False)
        hi = _count(raw.get("max", lo), file, f"{where}.max", allow_none=True)
        assert lo is not None
        if hi is not None and hi < lo:
            raise SpecError(file, where, f"max {hi} is below min {lo}")
        if hi == 0:
            raise SpecError(file, where, "max 0 makes the node match nothing")
        return CharSet(body, lo, hi, capture)
    if kind == "ref":
        return Ref(str(raw["ref"]), capture)
    if kind == "opt":
        return Opt(parse_nodes(raw["opt"], file, f"{where}.opt"))
    if kind == "group":
        return Group(parse_nodes(raw["group"], file, f"{where}.group"), capture)
    if kind == "rep":
        lo = _count(raw.get("min", 0), file, f"{where}.min", allow_none=False)
        hi = _count(raw.get("max"), file, f"{where}.max", allow_none=True)
        assert lo is not None
        if hi is not None and hi < lo:
            raise SpecError(file, where, f"max {hi} is below min {lo}")
        return Rep(parse_nodes(raw["rep"], file, f"{where}.rep"), lo, hi)
    options = raw["alt"]
    if not isinstance(options, list) or len(options) < 2:
        raise SpecError(file, f"{where}.alt", "expected at least two alternatives")
    return Alt(tuple(parse_nodes(opt, file, f"{where}.alt[{i}]") for i, opt in enumerate(options)))


# ---------------------------------------------------------------- errors, models
