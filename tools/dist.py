"""`make dist`: build the distributions reproducibly, check them, and smoke-test them in fresh
virtual environments.

    python tools/dist.py [--out dist] [--skip-smoke] [--python PYTHON ...]

1. Builds the sdist and wheel of gatespec-surface (generated/), gatespec-ranker (ranker/: the
   learned query tower's weights) and gatespec (the project root) with `python -m build`, twice, with SOURCE_DATE_EPOCH fixed to the last commit's
   time, and fails unless both builds are byte-identical.
2. `twine check --strict` on every file; checks what each archive must and must not hold
   (licences, NOTICE, the kit's docs; no tests, no test data, no surface inside gatespec).
3. Fresh venvs of this interpreter and of each --python, installed with
   --no-index from the built files plus a wheelhouse of the dependencies (downloaded once per
   Python version from the package index into .venv/dist-wheelhouse/):
   - gatespec-surface alone: imports without the MCP SDK or hypothesis; every vector passes;
   - gatespec: hypothesis is not installed; `gatespec --help`, `python -m gatespec --help`;
     a real stdio round trip (tools/smoke_stdio.py: the official MCP client -> gatespec ->
     the kit's fixture upstream); then the `conformance` extra: `gatespec vectors export` and
     `gatespec conformance functions` against the reference adapter.
4. The TypeScript surface's npm package (generated-ts/), packed twice and compared, then
   installed from the tarball and smoke-tested (tools/dist_npm.py).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import dist_npm

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = {
    "gatespec-surface": ROOT / "generated",
    "gatespec-ranker": ROOT / "ranker",  # the learned query tower's weights (issue 26)
    "gatespec": ROOT,
}
WHEELHOUSE = ROOT / ".venv" / "dist-wheelhouse"
PY = sys.executable

# What each archive must hold, and what no archive of it may (name fragments).
MUST = {
    "gatespec_surface-*.whl": ["licenses/LICENSE", "gatespec_surface/vectors/meta-schema.json"],
    "gatespec_surface-*.tar.gz": ["/LICENSE", "/pyproject.toml", "/gatespec_surface/__init__.py"],
    "gatespec-*.whl": [
        "licenses/LICENSE",
        "licenses/NOTICE",
        "gatespec/__main__.py",
        "gatespec/data/default_catalog.json",
        "gatespec_conformance/docs/conformance.md",
        "gatespec_conformance/docs/examples/adapter_minimal.py",
    ],
    "gatespec-*.tar.gz": [
        "/LICENSE",
        "/NOTICE",
        "/docs/conformance.md",
        "/src/gatespec/cli/__init__.py",
    ],
    "gatespec_ranker-*.whl": [
        "licenses/LICENSE",
        "licenses/NOTICE",
        "gatespec_ranker/query_encoder.onnx",
        "gatespec_ranker/training.json",
    ],
    "gatespec_ranker-*.tar.gz": [
        "/NOTICE",
        "/MODEL_CARD.md",
        "/gatespec_ranker/query_encoder.onnx",
    ],
}
MUST_NOT = {
    "gatespec-*": ["gatespec_surface/", "gatespec_ranker/", "tests/", "bench/", "mcp_catalog.json"],
    "gatespec_surface-*": ["tests/", "gatespec/"],
}


def say(message: str) -> None:
    print(f"dist: {message}", flush=True)


def run(*argv: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in argv], check=True, text=True, **kwargs)  # type: ignore[call-overload]


# -- build -----------------------------------------------------------------------------


def source_date_epoch() -> str:
    found = subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%ct"], capture_output=True, text=True
    )
    return found.stdout.strip() if found.returncode == 0 and found.stdout.strip() else "1767225600"


def build(out: Path, epoch: str) -> dict[str, str]:
    """Every project's sdist and wheel into `out`; file name -> sha256."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": epoch}
    for project in PROJECTS.values():
        # --no-isolation: the pinned hatchling of the dev install, so that two builds (and
        # two machines) use the same backend; the wheel is built from the sdist.
        run(PY, "-m", "build", "--no-isolation", "--outdir", out, project,
            env=env, stdout=subprocess.DEVNULL)  # fmt: skip
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir())}


def names_in(archive: Path) -> list[str]:
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            return z.namelist()
    with tarfile.open(archive) as t:
        return t.getnames()


def check_contents(out: Path) -> None:
    for pattern, needed in MUST.items():
        [archive] = out.glob(pattern)
        names = names_in(archive)
        missing = [n for n in needed if not any(x.endswith(n) for x in names)]
        if missing:
            raise SystemExit(f"{archive.name} lacks {missing}")
    for wheel in out.glob("*.whl"):
        with zipfile.ZipFile(wheel) as z:
            metadata = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            if not z.read(metadata).startswith(b"Metadata-Version: 2.4\n"):
                raise SystemExit(f"{wheel.name}: expected core metadata 2.4")
    for pattern, banned in MUST_NOT.items():
        for archive in out.glob(pattern):
            found = [x for x in names_in(archive) for b in banned if f"/{b}" in f"/{x}"]
            if found:
                raise SystemExit(f"{archive.name} must not hold {found[:5]}")


# -- smoke -----------------------------------------------------------------------------


def wheelhouse(out: Path, base: str) -> Path:
    """The dependencies of the built files for the interpreter `base`, from the package index
    (once per Python version; kept in .venv)."""
    version = run(base, "-c", "import sys; print('py%d%d' % sys.version_info[:2])",
                  capture_output=True).stdout.strip()  # fmt: skip
    house = WHEELHOUSE / version
    house.mkdir(parents=True, exist_ok=True)
    gatespec = next(out.glob("gatespec-*.whl"))
    run(base, "-m", "pip", "download", "--quiet", "--dest", house, "--find-links", out,
        f"{gatespec}[conformance]")  # fmt: skip
    for ours in [*house.glob("gatespec-*"), *house.glob("gatespec_*-*")]:
        ours.unlink()  # the built files come from `out` only
    return house


def fresh_venv(base: str, where: Path, out: Path, house: Path, *requirements: str) -> Path:
    run(base, "-m", "venv", where)
    python = where / "bin" / "python"
    run(python, "-m", "pip", "install", "--quiet", "--no-index", "--find-links", out,
        "--find-links", house, *requirements)  # fmt: skip
    return python


def importable(python: Path, module: str) -> bool:
    probe = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    return subprocess.run([python, "-c", probe]).returncode == 0


SURFACE_SMOKE = """
from gatespec_surface import SPEC_VERSION
from gatespec_surface.vectors import load_cases, run_case
cases = load_cases()
failed = [c["name"] for c in cases if run_case(c) != c["expect"]]
assert cases and not failed, f"{len(failed)} of {len(cases)} vectors failed: {failed[:5]}"
print(f"smoke: gatespec-surface {SPEC_VERSION} alone: {len(cases)} vectors pass")
"""


def smoke(out: Path, base: str) -> None:
    house = wheelhouse(out, base)
    with tempfile.TemporaryDirectory(prefix="gatespec-dist-") as tmp:
        surface = fresh_venv(base, Path(tmp) / "surface", out, house, "gatespec-surface")
        for absent in ("mcp", "hypothesis"):
            if importable(surface, absent):
                raise SystemExit(f"gatespec-surface alone installed {absent}")
        run(surface, "-c", SURFACE_SMOKE)

        python = fresh_venv(base, Path(tmp) / "gatespec", out, house, "gatespec")
        if importable(python, "hypothesis"):
            raise SystemExit("installing gatespec installed hypothesis (an extra's dependency)")
        bindir = python.parent
        for argv in ([bindir / "gatespec", "--help"], [python, "-m", "gatespec", "--help"]):
            run(*argv, stdout=subprocess.DEVNULL)
        say("gatespec --help and python -m gatespec --help: ok (hypothesis not installed)")
        run(python, ROOT / "tools" / "smoke_stdio.py", "--", bindir / "gatespec")

        run(python, "-m", "pip", "install", "--quiet", "--no-index", "--find-links", out,
            "--find-links", house, "gatespec[conformance]")  # fmt: skip
        vectors = Path(tmp) / "vectors"
        run(bindir / "gatespec", "vectors", "export", vectors)
        run(bindir / "gatespec", "conformance", "functions", "--quiet", "--max-examples", "5",
            "--", python, "-m", "gatespec.adapter")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="(default: dist/)")
    parser.add_argument("--skip-smoke", action="store_true", help="build and check only")
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        help="another interpreter to smoke-test with, besides this one (repeatable)",
    )
    args = parser.parse_args()
    epoch = source_date_epoch()
    shutil.rmtree(args.out, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="gatespec-rebuild-") as again:
        first = build(args.out, epoch)
        second = build(Path(again), epoch)
    if first != second:
        differ = sorted(n for n in first.keys() | second.keys() if first.get(n) != second.get(n))
        raise SystemExit(f"two builds differ (not reproducible): {differ}")
    for name, digest in first.items():
        say(f"{digest}  {name}")
    say(f"two builds are byte-identical (SOURCE_DATE_EPOCH={epoch})")
    run(PY, "-m", "twine", "check", "--strict", *sorted(args.out.iterdir()))
    check_contents(args.out)
    say("contents: licences, NOTICE and docs present; no tests, test data or stray packages")
    for base in [] if args.skip_smoke else [PY, *args.python]:
        say(f"smoke tests with {base}")
        smoke(args.out, base)
    dist_npm.main(args.out, smoke_test=not args.skip_smoke)
    say("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
