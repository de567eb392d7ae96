"""Issue 22 item 1: the aggregate profile's resource allow-globs against URIs that walk out of
the allowed folder, through the real aggregate profile (gatespec serve over stdio, the
restricted `stdio_identity`) in front of a real upstream that resolves `..` and decodes `%2f`
(tests/fixtures/file_resources_server.py, on the MCP SDK).

The identity `reader` may see `fs:file://<root>/docs/*` only (the README's example glob); the
upstream's own root is `<root>`, which holds `secret/key.txt` beside `docs/`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from gatespec.access import FORBIDDEN_MESSAGE

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SERVER = Path(__file__).resolve().parents[1] / "fixtures" / "file_resources_server.py"
SECRET = "the-key-outside-docs"


def gateway(tmp_path: Path) -> tuple[StdioServerParameters, Path, str]:
    """(how to start gatespec, the upstream's read log, the root's file:// URI)."""
    root = (tmp_path / "root").resolve()
    (root / "docs" / "sub").mkdir(parents=True)
    (root / "secret").mkdir()
    (root / "docs" / "readme.txt").write_text("the docs readme")
    (root / "docs" / "sub" / "a.txt").write_text("a doc in a sub-folder")
    (root / "secret" / "key.txt").write_text(SECRET)
    log = tmp_path / "reads.log"
    base = root.as_uri()
    config = {
        "mcpServers": {
            "fs": {"command": sys.executable, "args": [str(SERVER), str(root), "--log", str(log)]}
        },
        "gateway": {
            "profile": "aggregate",
            "watch": False,
            "call_timeout": 10,
            "access": {
                "identities": {"reader": {"allow": [{"tools": [f"fs:{base}/docs/*"]}]}},
                "stdio_identity": "reader",
            },
        },
    }
    path = tmp_path / "gatespec.json"
    path.write_text(json.dumps(config))
    argv = [sys.executable, "-m", "gatespec.cli", "serve", "--config", str(path)]
    # The whole environment: the SDK's default would drop PYTHONPATH (a checkout's own code).
    server = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    return server, log, base


def walks_out(base: str) -> list[str]:
    """URIs under the allowed prefix (or spelled around it) that name secret/key.txt."""
    docs = f"{base}/docs"
    return [
        f"{docs}/../secret/key.txt",
        f"{docs}/./../secret/key.txt",
        f"{docs}/sub/../../secret/key.txt",
        f"{docs}/%2e%2e/secret/key.txt",
        f"{docs}/%2E%2E/secret/key.txt",
        f"{docs}/.%2e/secret/key.txt",
        f"{docs}/..%2fsecret/key.txt",
        f"{docs}/..%2Fsecret%2Fkey.txt",
        f"{docs}/%2e%2e%2fsecret/key.txt",
        f"{docs}/sub%2f..%2f..%2fsecret/key.txt",
        f"{docs}/%252e%252e/secret/key.txt",
        f"{docs}/..\\secret/key.txt",
        f"{docs}/..;/secret/key.txt",
        f"{docs}/%zz/../../secret/key.txt",
        f"FILE{docs[4:]}/../secret/key.txt",
    ]


async def test_a_restricted_identity_cannot_read_outside_its_folder(tmp_path: Path) -> None:
    params, log, base = gateway(tmp_path)
    async with Client(params, mode="legacy") as client:
        listed = [str(r.uri) for r in (await client.list_resources()).resources]
        assert sorted(listed) == [f"fs+{base}/docs/readme.txt", f"fs+{base}/docs/sub/a.txt"]
        for uri in walks_out(base):
            try:
                read = await client.read_resource(f"fs+{uri}")
            except MCPError as exc:
                data = exc.error.data
            else:
                pytest.fail(f"{uri} was read: {read.contents}")
            assert SECRET not in json.dumps(data), uri
            assert data["error"] in ("FORBIDDEN", "NAME_INVALID"), (uri, data)
            if data["error"] == "FORBIDDEN":
                assert data["message"] == FORBIDDEN_MESSAGE
            else:
                assert "resource URI" in data["message"], data
        reads = log.read_text().splitlines() if log.exists() else []
        assert not any("secret" in line for line in reads), reads  # nothing went upstream


async def test_what_the_folder_allows_still_reads_and_goes_upstream_normalised(
    tmp_path: Path,
) -> None:
    params, log, base = gateway(tmp_path)
    docs = f"{base}/docs"
    async with Client(params, mode="legacy") as client:
        for uri in (
            f"{docs}/readme.txt",
            f"{docs}/sub/../readme.txt",
            f"{docs}/./readme%2etxt",
            f"FILE{docs[4:]}/%72eadme.txt",
        ):
            read = await client.read_resource(f"fs+{uri}")
            assert read.contents[0].text == "the docs readme", uri  # type: ignore[union-attr]
        nested = await client.read_resource(f"fs+{docs}/sub/a.txt")
        assert nested.contents[0].text == "a doc in a sub-folder"  # type: ignore[union-attr]
    reads = log.read_text().splitlines()
    assert reads == [f"{docs}/readme.txt"] * 4 + [f"{docs}/sub/a.txt"]
