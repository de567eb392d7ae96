"""The ``gateway.access`` block of the config: identities, tokens, JWT settings and the policy.

    "access": {
      "identities": {
        "alice": {"tokens": ["sha256:<64 hex>"], "groups": ["dev"],
                  "allow": [SELECTOR, ...], "deny": [SELECTOR, ...]},
        "ci":    {"tokens": ["${CI_TOKEN}"], "deny": [{"annotations": {"destructiveHint": true}}]}
      },
      "groups": {"dev": {"allow": [{"namespaces": ["github", "fs"]}]}},
      "claims": [{"claim": "role", "value": "admin", "allow": [{"tools": ["*"]}]}],
      "jwt": {"jwks_file": "jwks.json", "issuer": "https://idp.example", "audience": "gatespec",
              "identity_claim": "sub", "groups_claim": "groups", "algorithms": ["RS256"],
              "leeway": 30},
      "stdio_identity": "alice",
      "http": {"resource_url": "https://gw.example/mcp", "authorization_server": "https://idp...",
               "allowed_hosts": ["gw.example"], "allowed_origins": ["https://app.example"]}
    }

SELECTOR is models.yaml AccessSelector ({namespaces, tools, annotations}); allow/deny follow
models.yaml AccessRules (checked against its generated JSON Schema). A static token is written
either as "sha256:" + the hex digest of the token, or as exactly one ${VAR} reference (without a
":-" default, which would be a token in clear text, and naming a value of at least
MIN_SECRET_CHARS characters): a token in clear text in the file is refused. Relative key files resolve against the config's folder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import jwt
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from gatespec.access.identity import LOCAL, Identity
from gatespec.access.policy import AccessPolicy, ClaimRule, Rules
from gatespec.access.tokens import (
    ASYMMETRIC_ALGORITHMS,
    GatewayTokenVerifier,
    JwtVerifier,
    StaticTokens,
    token_digest,
)
from gatespec.config_reader import Reader
from gatespec.secrets import MIN_SECRET_CHARS
from gatespec_surface.schemas import MODEL_SCHEMAS

__all__ = ["AccessConfig", "HttpAccess", "parse_access"]

_KEYS: Final = frozenset({"identities", "groups", "claims", "jwt", "stdio_identity", "http"})
_IDENTITY_KEYS: Final = frozenset({"tokens", "groups", "allow", "deny"})
_CLAIM_KEYS: Final = frozenset({"claim", "value", "allow", "deny"})
_JWT_KEYS: Final = frozenset(
    {
        "jwks_file",
        "public_key_file",
        "issuer",
        "audience",
        "algorithms",
        "identity_claim",
        "groups_claim",
        "leeway",
    }
)
_HTTP_KEYS: Final = frozenset(
    {"resource_url", "authorization_server", "allowed_hosts", "allowed_origins"}
)
_DIGEST: Final = re.compile(r"sha256:([0-9a-f]{64})")
_ENV_ONLY: Final = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?P<default>:-[^}]*)?\}")
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}")
_RULES: Final = Draft202012Validator(MODEL_SCHEMAS["AccessRules"])


@dataclass(frozen=True)
class HttpAccess:
    """HTTP settings that go with identity: the protected-resource metadata and the Host and
    Origin values DNS-rebinding protection accepts (loopback ones are always accepted)."""

    resource_url: str | None = None
    authorization_server: str | None = None
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()


@dataclass(frozen=True)
class AccessConfig:
    """Who may call the gateway and what each caller may see."""

    policy: AccessPolicy = field(default_factory=AccessPolicy.open)
    static: StaticTokens | None = None
    jwt: JwtVerifier | None = None
    stdio_identity: Identity = LOCAL
    http: HttpAccess = field(default_factory=HttpAccess)

    @property
    def authenticates(self) -> bool:
        """Whether HTTP callers must present a bearer token."""
        return self.static is not None or self.jwt is not None

    def verifier(self) -> GatewayTokenVerifier:
        return GatewayTokenVerifier(self.static, self.jwt)


class _Parser(Reader):
    """The config reader (file, key paths, ${VAR} expansion) with what access needs."""

    def mapping(self, value: Any, path: str, keys: frozenset[str] | None = None) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(path, "expected an object")
        if keys is not None:
            for k in value:
                if k not in keys:
                    expected = ", ".join(sorted(keys))
                    raise self.error(f"{path}.{k}", f"unknown key (expected {expected})")
        return value

    def strings(self, value: Any, path: str) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise self.error(path, "expected an array of strings")
        return tuple(self.string(v, f"{path}[{i}]") for i, v in enumerate(value))

    def name(self, value: str, path: str) -> str:
        if not _NAME.fullmatch(value):
            raise self.error(path, f"{value!r} is not a name (letters, digits, _ . @ -)")
        return value

    def rules(self, raw: Mapping[str, Any], path: str) -> Rules:
        body = {k: v for k, v in raw.items() if k in ("allow", "deny")}
        problem = best_match(_RULES.iter_errors(body))
        if problem is not None:
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in problem.path)
            raise self.error(f"{path}{where}", problem.message)
        return Rules.of(body)

    def token(self, raw: Any, path: str) -> bytes:
        if not isinstance(raw, str):
            raise self.error(path, "expected a string")
        digest = _DIGEST.fullmatch(raw)
        if digest is not None:
            return bytes.fromhex(digest.group(1))
        reference = _ENV_ONLY.fullmatch(raw)
        if reference is None:
            raise self.error(
                path,
                'a token is "sha256:<hex digest>" or one ${VAR} reference; never write a token '
                "itself into the config",
            )
        if reference.group("default") is not None:
            # "${UNSET:-abc}" would put "abc", written in the file, in force: a clear text
            # token by another name (and "${VAR:-}" an empty one).
            raise self.error(
                path,
                "a token reference takes no ':-' default: its default is a token in clear text "
                'in the config (write "${VAR}", or "sha256:<hex digest>")',
            )
        token = self.string(raw, path)
        if len(token) < MIN_SECRET_CHARS:
            # Never redacted from messages (gatespec.secrets) and guessed at once.
            raise self.error(
                path, f"the token {raw} names is shorter than {MIN_SECRET_CHARS} characters"
            )
        return token_digest(token)

    def identities(
        self, raw: Any
    ) -> tuple[dict[str, Identity], dict[str, Rules], dict[str, list[bytes]]]:
        identities: dict[str, Identity] = {}
        rules: dict[str, Rules] = {}
        tokens: dict[str, list[bytes]] = {}
        for name, entry in self.mapping(raw, "gateway.access.identities").items():
            at = f"gateway.access.identities.{name}"
            self.name(name, at)
            entry = self.mapping(entry, at, _IDENTITY_KEYS)
            groups = self.strings(entry.get("groups", []), f"{at}.groups")
            identities[name] = Identity(name, "token", groups)
            rules[name] = self.rules(entry, at)
            raw_tokens = entry.get("tokens", [])
            if not isinstance(raw_tokens, list):
                raise self.error(f"{at}.tokens", "expected an array of tokens")
            tokens[name] = [self.token(t, f"{at}.tokens[{i}]") for i, t in enumerate(raw_tokens)]
        seen: dict[bytes, str] = {}
        for name, digests in tokens.items():
            for digest in digests:
                if digest in seen:
                    raise self.error(
                        f"gateway.access.identities.{name}.tokens",
                        f"the same token is given to {seen[digest]!r} too",
                    )
                seen[digest] = name
        return identities, rules, tokens

    def claims(self, raw: Any) -> list[ClaimRule]:
        if not isinstance(raw, list):
            raise self.error("gateway.access.claims", "expected an array")
        out = []
        for i, entry in enumerate(raw):
            at = f"gateway.access.claims[{i}]"
            entry = self.mapping(entry, at, _CLAIM_KEYS)
            if "claim" not in entry or "value" not in entry:
                raise self.error(at, "needs claim and value")
            value = entry["value"]
            if not isinstance(value, str | int | bool):
                raise self.error(f"{at}.value", "expected a string, number or boolean")
            claim = self.string(entry["claim"], f"{at}.claim")
            out.append(ClaimRule(claim, value, self.rules(entry, at)))
        return out

    def jwt(self, raw: Any) -> JwtVerifier:
        at = "gateway.access.jwt"
        entry = self.mapping(raw, at, _JWT_KEYS)
        if ("jwks_file" in entry) == ("public_key_file" in entry):
            raise self.error(at, "give exactly one of jwks_file and public_key_file")
        for key in ("issuer", "audience"):
            if key not in entry:
                raise self.error(f"{at}.{key}", "missing (every JWT's is checked)")
        algorithms = (
            self.strings(entry["algorithms"], f"{at}.algorithms")
            if "algorithms" in entry
            else ASYMMETRIC_ALGORITHMS
        )
        for alg in algorithms:
            if alg not in ASYMMETRIC_ALGORITHMS:
                raise self.error(
                    f"{at}.algorithms",
                    f"{alg!r} is not a public-key algorithm ({', '.join(ASYMMETRIC_ALGORITHMS)})",
                )
        audience_raw = entry["audience"]
        audience: str | tuple[str, ...] = (
            self.strings(audience_raw, f"{at}.audience")
            if isinstance(audience_raw, list)
            else self.string(audience_raw, f"{at}.audience")
        )
        leeway = entry.get("leeway", 0)
        if (
            isinstance(leeway, bool)
            or not isinstance(leeway, int | float)
            or not 0 <= leeway <= 300
        ):
            raise self.error(f"{at}.leeway", "expected 0 to 300 seconds")
        return JwtVerifier(
            keys=self.keys(entry, at),
            issuer=self.string(entry["issuer"], f"{at}.issuer"),
            audience=audience,
            algorithms=algorithms,
            identity_claim=self.string(entry.get("identity_claim", "sub"), f"{at}.identity_claim"),
            groups_claim=self.string(entry.get("groups_claim", "groups"), f"{at}.groups_claim"),
            leeway=float(leeway),
        )

    def keys(self, entry: Mapping[str, Any], at: str) -> Any:
        key = "jwks_file" if "jwks_file" in entry else "public_key_file"
        path = self.path(entry[key], f"{at}.{key}")
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise self.error(f"{at}.{key}", f"cannot read {path}: {exc.strerror or exc}") from exc
        try:
            if key == "jwks_file":
                return jwt.PyJWKSet.from_dict(json.loads(text))
            from cryptography.hazmat.primitives.serialization import load_pem_public_key

            return load_pem_public_key(text.encode("ascii"))
        except (ValueError, jwt.PyJWKError, TypeError) as exc:
            raise self.error(f"{at}.{key}", f"{path} holds no usable public key: {exc}") from exc

    def http(self, raw: Any) -> HttpAccess:
        at = "gateway.access.http"
        entry = self.mapping(raw, at, _HTTP_KEYS)
        urls = {}
        for key in ("resource_url", "authorization_server"):
            if key in entry:
                url = self.string(entry[key], f"{at}.{key}")
                if not re.match(r"^https?://[^/\s]+", url):
                    raise self.error(f"{at}.{key}", f"expected an http(s) URL, got {url!r}")
                urls[key] = url
        return HttpAccess(
            resource_url=urls.get("resource_url"),
            authorization_server=urls.get("authorization_server"),
            allowed_hosts=self.strings(entry.get("allowed_hosts", []), f"{at}.allowed_hosts"),
            allowed_origins=self.strings(entry.get("allowed_origins", []), f"{at}.allowed_origins"),
        )


def parse_access(raw: Any, source: Path | None, environ: Mapping[str, str]) -> AccessConfig:
    """The AccessConfig of a ``gateway.access`` value (ConfigError naming the key path)."""
    p = _Parser(source, environ)
    entry = p.mapping(raw, "gateway.access", _KEYS)
    identities, rules, tokens = p.identities(entry.get("identities", {}))
    groups = {}
    for name, group in p.mapping(entry.get("groups", {}), "gateway.access.groups").items():
        at = f"gateway.access.groups.{name}"
        groups[name] = p.rules(p.mapping(group, at, frozenset({"allow", "deny"})), at)
    claims = p.claims(entry.get("claims", []))
    jwt_verifier = p.jwt(entry["jwt"]) if "jwt" in entry else None
    stdio = LOCAL
    if "stdio_identity" in entry:
        name = p.string(entry["stdio_identity"], "gateway.access.stdio_identity")
        if name not in identities:
            raise p.error("gateway.access.stdio_identity", f"no identity {name!r} is configured")
        stdio = Identity(name, "config", identities[name].groups)
    static = StaticTokens(tokens, identities) if any(tokens.values()) else None
    return AccessConfig(
        policy=AccessPolicy(rules, groups, claims),
        static=static,
        jwt=jwt_verifier,
        stdio_identity=stdio,
        http=p.http(entry.get("http", {})),
    )
