"""Loading spec/: each file read (a safe YAML loader), validated into the IR's models, hashed,
and the whole cross-checked. Every problem found is reported together (SpecErrors)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from ..errors import SpecError, SpecErrors
from .model import (
    RULE_FILES,
    SEMVER,
    Amendment,
    Budgets,
    ErrorCodeSpec,
    Extensions,
    Grammar,
    GrammarSpec,
    ModelSpec,
    NameMapping,
    Profiles,
    Requirements,
    SeedFacts,
    Spec,
    Surface,
    Vectors,
)
from .nodes import parse_nodes
from .references import resolve_references

# libyaml's safe loader when PyYAML was built with it (10x faster on the requirements file).
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(path: Path) -> Any:
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)  # noqa: S506 - a safe loader
    except FileNotFoundError:
        raise SpecError(path.name, "", "file is missing") from None
    except yaml.YAMLError as exc:
        raise SpecError(path.name, "", f"invalid YAML: {exc}") from None


def validate(model: type[BaseModel], data: Any, file: str, prefix: str = "") -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            key = f"{prefix}.{loc}" if prefix and loc else (prefix or loc)
            msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            errors.append(SpecError(file, key, msg))
        raise SpecErrors(errors) from None


def load_spec(root: Path) -> Spec:
    """Load and cross-check spec/ at `root`. Raises SpecErrors listing every problem found."""
    surface_raw = load_yaml(root / "surface.yaml")
    surface: Surface = validate(Surface, surface_raw, "surface.yaml")
    if not SEMVER.fullmatch(surface.spec_version):
        raise SpecError("surface.yaml", "spec_version", "not a semantic version")
    # The spec hash covers surface.yaml and every listed file, in the listed order.
    digest = hashlib.sha256()
    file_hashes = {}
    raw: dict[str, Any] = {}
    for name in ["surface.yaml", *surface.files]:
        data = (root / name).read_bytes() if (root / name).exists() else b""
        if not data:
            raise SpecError(name, "", "file is missing or empty")
        digest.update(name.encode() + b"\0" + data + b"\0")
        file_hashes[name] = hashlib.sha256(data).hexdigest()
        if name != "surface.yaml":
            raw[name] = load_yaml(root / name)
    expected = {
        "grammars.yaml", "errors.yaml", "models.yaml", *RULE_FILES, "profiles.yaml",
        "amendments.yaml", "requirements.yaml", "vectors.yaml", "seed_facts.yaml",
        "extensions.yaml",
    }  # fmt: skip
    missing = expected - set(surface.files)
    if missing:
        raise SpecError("surface.yaml", "files", f"must list {sorted(missing)}")

    errors: list[SpecError] = []

    def collect(fn: Any) -> Any:
        try:
            return fn()
        except SpecErrors as exc:
            errors.extend(exc.errors)
        except SpecError as exc:
            errors.append(exc)
        return None

    grammars: dict[str, Grammar] = {}
    graw = raw["grammars.yaml"]
    name_mapping = None
    if not isinstance(graw, dict) or set(graw) != {"grammars", "name_mapping"}:
        errors.append(
            SpecError(
                "grammars.yaml", "", "expected exactly the keys 'grammars' and 'name_mapping'"
            )
        )
    else:
        name_mapping = collect(
            lambda: validate(NameMapping, graw["name_mapping"], "grammars.yaml", "name_mapping")
        )
        for gname, gdata in graw["grammars"].items():
            gspec = collect(
                lambda gd=gdata, gn=gname: validate(
                    GrammarSpec, gd, "grammars.yaml", f"grammars.{gn}"
                )
            )
            if gspec is None:
                continue
            nodes = collect(
                lambda gs=gspec, gn=gname: parse_nodes(
                    gs.syntax, "grammars.yaml", f"grammars.{gn}.syntax"
                )
            )
            if nodes is not None:
                grammars[gname] = Grammar(gname, gspec, nodes)

    def section(file: str, key: str) -> Any:
        data = raw[file]
        if not isinstance(data, dict) or key not in data:
            raise SpecError(file, key, "missing")
        return data

    codes = collect(
        lambda: {
            k: validate(ErrorCodeSpec, v, "errors.yaml", f"codes.{k}")
            for k, v in section("errors.yaml", "codes")["codes"].items()
        }
    )
    models = collect(
        lambda: {
            k: validate(ModelSpec, v, "models.yaml", f"models.{k}")
            for k, v in section("models.yaml", "models")["models"].items()
        }
    )
    rule_sections: dict[str, Any] = {}
    for file, model in RULE_FILES.items():
        checked = collect(lambda f=file, m=model: validate(m, raw[f], f))
        if checked is not None:
            rule_sections.update({k: getattr(checked, k) for k in type(checked).model_fields})
    budgets = Budgets(**rule_sections) if len(rule_sections) == len(Budgets.model_fields) else None
    profiles = collect(lambda: validate(Profiles, raw["profiles.yaml"], "profiles.yaml"))
    amendments = collect(
        lambda: {
            k: validate(Amendment, v, "amendments.yaml", f"amendments.{k}")
            for k, v in section("amendments.yaml", "amendments")["amendments"].items()
        }
    )
    reqs = collect(lambda: validate(Requirements, raw["requirements.yaml"], "requirements.yaml"))
    vectors = collect(lambda: validate(Vectors, raw["vectors.yaml"], "vectors.yaml"))
    facts = collect(lambda: validate(SeedFacts, raw["seed_facts.yaml"], "seed_facts.yaml"))
    extensions = collect(lambda: validate(Extensions, raw["extensions.yaml"], "extensions.yaml"))
    if errors:
        raise SpecErrors(errors)
    # Each is None only after an error collected above.
    assert name_mapping is not None and budgets is not None

    spec = Spec(
        root=root,
        surface=surface,
        grammars=grammars,
        name_mapping=name_mapping,
        error_codes=codes,
        models=models,
        budgets=budgets,
        profiles=profiles,
        amendments=amendments,
        requirements=reqs.requirements,
        external_checks=reqs.external_checks,
        vectors=vectors.cases,
        seed_facts=facts.facts,
        extensions=extensions.extensions,
        spec_hash=digest.hexdigest(),
        file_hashes=file_hashes,
        raw=raw,
    )
    resolve_references(spec)
    return spec
