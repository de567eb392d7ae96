"""`make dist`, the TypeScript part: the npm package of the generated TypeScript surface
(generated-ts/, issue 25), compiled with tsc, packed twice with `npm pack` and compared byte
for byte, its contents checked, then installed from the tarball into an empty project and
smoke-tested: every shipped vector passes, and the `adapter` bin answers the kit's hello."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "generated-ts"
TSC = ROOT / "node_modules" / ".bin" / "tsc"
MUST = [
    "package/package.json",
    "package/LICENSE",
    "package/README.md",
    "package/dist/src/index.js",
    "package/dist/src/index.d.ts",
    "package/dist/src/cli.js",
    "package/dist/src/adapter.js",
    "package/vectors/meta-schema.json",
]
MUST_NOT = ["package/dist/test/", "package/src/", "package/test/", "package/node_modules/"]

SMOKE = """
import { SPEC_VERSION, loadCases, runCase } from "gatespec-surface";
import { isDeepStrictEqual } from "node:util";
const cases = loadCases();
const failed = cases.filter((c) => !isDeepStrictEqual(runCase(c), c.expect)).map((c) => c.name);
if (cases.length === 0 || failed.length > 0) throw new Error(`${failed.length} of ${cases.length} vectors failed: ${failed.slice(0, 5)}`);
console.log(`smoke: gatespec-surface ${SPEC_VERSION} (npm): ${cases.length} vectors pass`);
"""


def say(message: str) -> None:
    print(f"dist: {message}", flush=True)


def run(*argv: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in argv], check=True, text=True, **kwargs)  # type: ignore[call-overload]


def pack(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    name = run("npm", "pack", "--silent", "--pack-destination", dest, PACKAGE,
               capture_output=True).stdout.strip().splitlines()[-1]  # fmt: skip
    return dest / name


def check_contents(tarball: Path) -> None:
    with tarfile.open(tarball) as t:
        names = t.getnames()
    missing = [n for n in MUST if n not in names]
    stray = [n for n in names for b in MUST_NOT if n.startswith(b)]
    if missing or stray:
        raise SystemExit(f"{tarball.name}: lacks {missing}, must not hold {stray[:5]}")


def smoke(tarball: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="gatespec-npm-") as tmp:
        project = Path(tmp)
        (project / "package.json").write_text(json.dumps({"private": True, "type": "module"}))
        run("npm", "install", "--silent", "--prefer-offline", "--no-audit", "--no-fund",
            tarball, cwd=project)  # fmt: skip
        (project / "smoke.mjs").write_text(SMOKE)
        say(run("node", "smoke.mjs", cwd=project, capture_output=True).stdout.strip())
        hello = json.dumps({"id": 1, "function": "hello"}) + "\n"
        answer = run("npx", "--no-install", "gatespec-surface", "adapter", cwd=project,
                     input=hello, capture_output=True).stdout  # fmt: skip
        reply = json.loads(answer)
        if reply.get("id") != 1 or "spec_version" not in reply.get("ok", {}):
            raise SystemExit(f"the adapter bin answered {answer!r}")
        say(f"smoke: npx gatespec-surface adapter: {reply['ok']['implementation']}")


def main(out: Path, smoke_test: bool = True) -> Path:
    """Build, pack twice, compare, check; the tarball ends up in `out`."""
    run(TSC, "-p", PACKAGE)
    with tempfile.TemporaryDirectory(prefix="gatespec-npm-pack-") as tmp:
        first, second = pack(Path(tmp) / "a"), pack(Path(tmp) / "b")
        digests = {hashlib.sha256(p.read_bytes()).hexdigest() for p in (first, second)}
        if len(digests) != 1:
            raise SystemExit(f"two npm packs of {PACKAGE.name} differ (not reproducible)")
        tarball = out / first.name
        shutil.copyfile(first, tarball)
    say(f"{digests.pop()}  {tarball.name}")
    say("two npm packs are byte-identical")
    check_contents(tarball)
    if smoke_test:
        smoke(tarball)
    return tarball
