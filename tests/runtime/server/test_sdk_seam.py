"""Every private name of the MCP SDK (`mcp`, `mcp_types`) that the runtime uses is used in one
of two seam modules, gatespec.upstream._sdk and gatespec.server._sdk, and nowhere else, so an
SDK upgrade that moves one breaks in a known place (issue 23).

Two guards: ruff's banned-api rule (TID251, pyproject.toml) fails on an import of a private SDK
module outside the seams; the AST walk here also finds a private name imported from a public
module, a private attribute of an SDK object read or written (directly or by getattr/setattr),
a private SDK method overridden by a subclass, and an object's class swapped at run time.
"""

from __future__ import annotations

import ast
import importlib.util
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SRC = ROOT / "src"
SEAMS = frozenset({"src/gatespec/upstream/_sdk.py", "src/gatespec/server/_sdk.py"})
SDK_PACKAGES = ("mcp", "mcp_types")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _sdk_module(module: str) -> bool:
    return module.split(".")[0] in SDK_PACKAGES


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, package
    return Path(next(iter(spec.submodule_search_locations)))


def _defined_private_names(files: Iterator[Path]) -> set[str]:
    """Private attribute names the given sources define: `self._x = …`, class-level `_x`,
    methods `_x`."""
    names: set[str] = set()
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if _private(node.attr):
                    names.add(node.attr)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        targets = [item.name]
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        targets = [item.target.id]
                    elif isinstance(item, ast.Assign):
                        targets = [t.id for t in item.targets if isinstance(t, ast.Name)]
                    else:
                        continue
                    names.update(t for t in targets if _private(t))
    return names


def _sdk_files() -> Iterator[Path]:
    for package in SDK_PACKAGES:
        yield from _package_dir(package).rglob("*.py")


def _own_files() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


SDK_PRIVATE = _defined_private_names(_sdk_files())
OWN_PRIVATE = _defined_private_names(iter(_own_files()))
# A private name the SDK defines and gatespec never does can only be the SDK's.
ONLY_SDK = frozenset(SDK_PRIVATE - OWN_PRIVATE)


def leaks(source: str, only_sdk: frozenset[str] = ONLY_SDK) -> list[str]:
    """The private SDK names `source` uses, as 'line: what'."""
    tree = ast.parse(source)
    found: list[str] = []
    sdk_names: dict[str, str] = {}  # local name -> the SDK module (or module.name) it binds
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if not _sdk_module(node.module):
                continue
            if any(_private(part) for part in node.module.split(".")):
                found.append(f"{node.lineno}: from {node.module} import …")
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
                sdk_names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _sdk_module(alias.name):
                    if any(_private(part) for part in alias.name.split(".")):
                        found.append(f"{node.lineno}: import {alias.name}")
                    local = alias.asname or alias.name.split(".")[0]
                    sdk_names[local] = alias.name if alias.asname else local
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in only_sdk:
            found.append(f"{node.lineno}: ._{node.attr.lstrip('_')}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "setattr", "hasattr", "delattr"}
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value in only_sdk
        ):
            found.append(f"{node.lineno}: {node.func.id}(…, {node.args[1].value!r})")
        elif isinstance(node, ast.Attribute) and node.attr == "__class__":
            if isinstance(node.ctx, ast.Store):
                found.append(f"{node.lineno}: __class__ swapped")
        elif isinstance(node, ast.ClassDef):
            bases = [_sdk_class(base, sdk_names) for base in node.bases]
            for item in node.body:
                if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                if _private(item.name) and any(_defines(b, item.name) for b in bases):
                    found.append(f"{item.lineno}: {node.name}.{item.name} overrides the SDK")
    return found


def _sdk_class(base: ast.expr, sdk_names: dict[str, str]) -> type | None:
    """The SDK class a base-class expression names (through the module's imports), if any."""
    if isinstance(base, ast.Subscript):
        base = base.value
    dotted: list[str] = []
    while isinstance(base, ast.Attribute):
        dotted.insert(0, base.attr)
        base = base.value
    if not isinstance(base, ast.Name) or base.id not in sdk_names:
        return None
    path = [*sdk_names[base.id].split("."), *dotted]
    for cut in range(len(path), 0, -1):  # the longest importable module prefix
        try:
            obj: object = importlib.import_module(".".join(path[:cut]))
        except ImportError:
            continue
        for name in path[cut:]:
            obj = getattr(obj, name, None)
        return obj if isinstance(obj, type) else None
    return None


def _defines(cls: type | None, name: str) -> bool:
    """Whether an SDK class in `cls`'s hierarchy defines `name`."""
    return cls is not None and any(
        name in vars(k) for k in cls.__mro__ if _sdk_module(k.__module__)
    )


def test_no_private_sdk_name_outside_the_seams() -> None:
    found = {
        str(path.relative_to(ROOT)): hits
        for path in _own_files()
        if str(path.relative_to(ROOT)) not in SEAMS
        and (hits := leaks(path.read_text(encoding="utf-8")))
    }
    assert found == {}, "private SDK names belong in upstream/_sdk.py or server/_sdk.py"


@pytest.mark.parametrize("seam", sorted(SEAMS))
def test_each_seam_still_uses_private_sdk_names(seam: str) -> None:
    """An exemption nobody needs any more is removed (the seam's names moved or went)."""
    assert leaks((ROOT / seam).read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("from mcp.shared import _httpx_utils\n", "import _httpx_utils"),
        ("from mcp.client._transport import TransportStreams\n", "from mcp.client._transport"),
        ("import mcp.shared._otel\n", "import mcp.shared._otel"),
        ("from mcp_types._types import X\n", "from mcp_types._types"),
        ("def f(m):\n    return m._server_instances\n", "._server_instances"),
        ("def f(m):\n    return getattr(m, '_server_instances', {})\n", "getattr"),
        ("def f(t, C):\n    t.__class__ = C\n", "__class__ swapped"),
        (
            "from mcp.server.streamable_http import StreamableHTTPServerTransport as T\n"
            "class C(T):\n    async def _handle_post_request(self): ...\n",
            "C._handle_post_request overrides",
        ),
        (
            "import mcp.server.streamable_http as sh\n"
            "class C(sh.StreamableHTTPServerTransport):\n    def _handle_get_request(self): ...\n",
            "C._handle_get_request overrides",
        ),
    ],
)
def test_the_walk_finds_each_kind_of_leak(source: str, what: str) -> None:
    hits = leaks(source, frozenset({"_server_instances"}))
    assert any(what in hit for hit in hits), hits


def test_the_walk_leaves_public_and_own_names_alone() -> None:
    source = (
        "from mcp.server.streamable_http import StreamableHTTPServerTransport\n"
        "class C(StreamableHTTPServerTransport):\n    def handling_post(self): ...\n"
        "class D:\n    def _own(self):\n        return self._own_state\n"
        "class E(StreamableHTTPServerTransport):\n    def _own(self): ...\n"
    )
    assert leaks(source, frozenset({"_server_instances"})) == []


def test_ruff_bans_every_private_sdk_module_outside_the_seams() -> None:
    """pyproject's banned-api list names every private module of the installed SDK, and only
    the seams (and tests, which probe the SDK's internals) may import them."""
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"][
        "lint"
    ]
    assert "TID251" in lint["select"] or "TID" in lint["select"]
    banned = set(lint["flake8-tidy-imports"]["banned-api"])
    private_modules = set()
    for package in SDK_PACKAGES:
        base = _package_dir(package)
        for path in base.rglob("*"):
            rel = path.relative_to(base.parent)
            parts = [*rel.parent.parts, rel.stem] if path.suffix == ".py" else [*rel.parts]
            if (path.is_dir() or path.suffix == ".py") and "__pycache__" not in parts:
                if _private(parts[-1]) and not any(_private(p) for p in parts[:-1]):
                    private_modules.add(".".join(parts))
    assert private_modules <= banned, sorted(private_modules - banned)
    exempt = {path for path, rules in lint["per-file-ignores"].items() if "TID251" in rules}
    assert exempt == SEAMS | {"tests/**"}
