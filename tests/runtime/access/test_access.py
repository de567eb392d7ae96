"""Identity and access control (AM-ACCESS-CONTROL, AM-ACCESS-NO-LEAK) in process: the policy's
rules, the gateway.access config, the token verifiers, and the runtime's answers to a
restricted identity (FORBIDDEN whether a tool exists or not, nothing sent upstream, artifacts
kept to their owner). Property tests draw catalogs and policies and check that a restricted
identity's every answer equals that of a gateway fronting only its visible tools, and that no
hidden id or name appears in any answer or notification.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatespec.access import FORBIDDEN_MESSAGE, AccessPolicy, Identity, Rules, Selector, Subject
from gatespec.access.config import parse_access
from gatespec.access.tokens import IdentityToken
from gatespec.config import ConfigError, parse_config
from gatespec.runtime import ProxyRuntime
from gatespec.runtime_contract import Caller
from gatespec.server.notify import ListChangedNotifier
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.operations import CallArgs, SchemaArgs, SearchArgs

pytestmark = pytest.mark.timeout(120)

ALICE = Identity("alice", "token")
BOB = Identity("bob", "token", groups=("readers",))
OBJ: dict[str, Any] = {"type": "object"}


def tool(name: str, annotations: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "description": f"The {name} tool.", "inputSchema": OBJ}
    if annotations is not None:
        out["annotations"] = annotations
    return {**out, **extra}


class SpyPool:
    """Upstreams in a test: a fixed (changeable) tool list; every call recorded."""

    def __init__(self, tools: Mapping[str, list[dict[str, Any]]]) -> None:
        self.listing = {k: list(v) for k, v in tools.items()}
        self.calls: list[tuple[str, str]] = []
        self.on_tools_changed = None

    def tools(self) -> dict[str, list[dict[str, Any]]]:
        return self.listing

    async def call(
        self, key: str, name: str, arguments: Any = None, timeout: Any = None, relay: Any = None
    ) -> Any:
        self.calls.append((key, name))
        return {"content": [{"type": "text", "text": "x" * 900}], "structuredContent": {"k": 1}}


def runtime(tools: Mapping[str, list[dict[str, Any]]], policy: AccessPolicy, **kw: Any) -> Any:
    rt = ProxyRuntime(SpyPool(tools), policy=policy, **kw)  # type: ignore[arg-type]
    anyio.run(rt.rebuild)
    return rt


# ------------------------------------------------------------------ the policy


def test_a_selector_matches_when_every_field_does() -> None:
    subject = Subject.tool("github", "github:create_issue#00000000", {"readOnlyHint": False})
    assert Selector(namespaces=frozenset({"github"})).matches(subject)
    assert Selector(tools=("github:create_*",)).matches(subject)
    assert not Selector(namespaces=frozenset({"github"}), tools=("github:list_*",)).matches(subject)
    assert not Selector(tools=("GitHub:*",)).matches(subject)  # globs are case-sensitive


def test_annotations_have_their_mcp_defaults() -> None:
    destructive = Selector(annotations=(("destructiveHint", True),))
    assert destructive.matches(Subject.tool("a", "a:x"))  # undeclared: destructive by default
    assert not destructive.matches(Subject.tool("a", "a:x", {"destructiveHint": False}))
    # destructiveHint counts only for a tool that is not read-only
    assert not destructive.matches(
        Subject.tool("a", "a:x", {"readOnlyHint": True, "destructiveHint": True})
    )
    assert destructive.matches(Subject.tool("a", "a:x", {"destructiveHint": "yes"})) is not False


def test_deny_wins_allow_lists_narrow_and_no_rules_is_unrestricted() -> None:
    policy = AccessPolicy(
        identities={"bob": Rules(deny=(Selector(tools=("fs:delete*",)),))},
        groups={"readers": Rules(allow=(Selector(namespaces=frozenset({"fs"})),))},
    )
    fs_read = Subject.tool("fs", "fs:read#00000000")
    fs_delete = Subject.tool("fs", "fs:delete#00000000")
    mail = Subject.tool("mail", "mail:send#00000000")
    assert policy.restricted(BOB) and not policy.restricted(ALICE)
    assert [policy.visible(BOB, s) for s in (fs_read, fs_delete, mail)] == [True, False, False]
    assert all(policy.visible(ALICE, s) for s in (fs_read, fs_delete, mail))


def test_claim_rules_apply_to_jwt_identities() -> None:
    from gatespec.access import ClaimRule

    policy = AccessPolicy(claims=[ClaimRule("roles", "auditor", Rules(allow=()))])
    auditor = Identity("carol", "jwt", claims={"roles": ["dev", "auditor"]})
    dev = Identity("dan", "jwt", claims={"roles": ["dev"]})
    one = Identity("erin", "jwt", claims={"roles": 1})
    assert policy.restricted(auditor) and not policy.visible(auditor, Subject.tool("a", "a:b"))
    assert not policy.restricted(dev) and not policy.restricted(one)


def test_prompts_and_resources_have_subjects_too() -> None:
    """The API the aggregate profile calls for its prompts and resources."""
    policy = AccessPolicy(identities={"bob": Rules(deny=(Selector(tools=("fs:secret*",)),))})
    assert not policy.visible(BOB, Subject.prompt("fs", "secret_prompt"))
    assert policy.visible(BOB, Subject.resource("fs", "file:///public.txt"))


# ------------------------------------------------------------------ the config


def digest(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()


def access(raw: dict[str, Any], environ: dict[str, str] | None = None) -> Any:
    return parse_config(
        {"mcpServers": {}, "gateway": {"access": raw}}, environ=environ or {}
    ).options.access


def test_tokens_are_stored_hashed_or_taken_from_the_environment() -> None:
    parsed = access(
        {"identities": {"alice": {"tokens": [digest("a-secret")]}, "ci": {"tokens": ["${CI}"]}}},
        {"CI": "ci-secret"},
    )
    assert parsed.static.verify("a-secret") == Identity("alice", "token")
    assert parsed.static.verify("ci-secret").name == "ci"
    assert parsed.static.verify("guess") is None and parsed.authenticates


@pytest.mark.parametrize(
    ("raw", "where", "problem"),
    [
        ({"identities": {"a": {"tokens": ["plain-secret"]}}}, "tokens[0]", "never write a token"),
        ({"identities": {"a": {"tokens": ["${UNSET}"]}}}, "tokens[0]", "UNSET is not set"),
        ({"identities": {"a": {"tokns": []}}}, "identities.a.tokns", "unknown key"),
        ({"identities": {"a": {"deny": [{}]}}}, "identities.a.deny[0]", "should be non-empty"),
        ({"identities": {"a": {"deny": [{"tools": "x*"}]}}}, "deny[0].tools", "is not of type"),
        ({"identities": {"a": {"allow": [{"annotations": {"fooHint": True}}]}}}, "annotations",
         "Additional properties"),
        ({"identities": {"a": {}, "b": {}}, "stdio_identity": "c"}, "stdio_identity", "no identity"),
        ({"jwt": {"issuer": "i", "audience": "a"}}, "access.jwt", "exactly one of jwks_file"),
        ({"jwt": {"public_key_file": "k.pem", "issuer": "i", "audience": "a",
                  "algorithms": ["HS256"]}}, "jwt.algorithms", "not a public-key algorithm"),
        ({"identities": {"a": {"tokens": [digest("t")]}, "b": {"tokens": [digest("t")]}}},
         "identities.b.tokens", "given to 'a' too"),
        ({"acl": {}}, "gateway.access.acl", "unknown key"),
    ],
)  # fmt: skip
def test_config_errors_name_the_key(raw: dict[str, Any], where: str, problem: str) -> None:
    with pytest.raises(ConfigError) as exc:
        access(raw)
    assert where in exc.value.path and problem in exc.value.problem


@pytest.mark.parametrize(
    ("written", "environ", "problem"),
    [
        ("${UNSET:-abc}", {}, "its default is a token in clear text"),
        ("${CI:-a-long-fallback-token}", {"CI": "ci-secret"}, "its default is a token in clear"),
        ("${CI:-}", {"CI": "ci-secret"}, "its default is a token in clear text"),
        ("${CI}", {"CI": "abc"}, "shorter than 4 characters"),
    ],
)
def test_a_token_reference_puts_no_clear_text_or_trivial_token_in_force(
    written: str, environ: dict[str, str], problem: str
) -> None:
    """Issue 22 item 5: "${UNSET:-abc}" put the 3-character token "abc", written in clear
    text in the file, in force; a clear-text token is refused, and so is a default."""
    with pytest.raises(ConfigError) as exc:
        access({"identities": {"a": {"tokens": [written]}}}, environ)
    assert "identities.a.tokens[0]" in exc.value.path and problem in exc.value.problem
    assert "abc" not in str(exc.value) or "${" in written  # never the expanded value


# ------------------------------------------------------------------ JWTs


@pytest.fixture(scope="module")
def jwt_keys(tmp_path_factory: Any) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("keys")
    ec_key = ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(ec_key.public_key()))
    (folder / "jwks.json").write_text(json.dumps({"keys": [{**jwk, "kid": "k1", "use": "sig"}]}))
    ed_key = ed25519.Ed25519PrivateKey.generate()
    pem = ed_key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    (folder / "key.pem").write_bytes(pem)
    return {"folder": folder, "ec": ec_key, "ed": ed_key}


def jwt_verifier(keys: dict[str, Any], key_file: str) -> Any:
    kind = "jwks_file" if key_file.endswith(".json") else "public_key_file"
    raw = {"jwt": {kind: str(keys["folder"] / key_file), "issuer": "https://idp.test",
                   "audience": "gatespec", "groups_claim": "teams"}}  # fmt: skip
    return access(raw).jwt


def mint(key: Any, alg: str, **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": "https://idp.test", "aud": "gatespec", "sub": "carol", "exp": now + 60, **claims}
    headers = {"kid": "k1"} if alg == "ES256" else None
    return jwt.encode({k: v for k, v in body.items() if v is not None}, key, alg, headers=headers)


def test_a_valid_jwt_names_its_identity_and_groups(jwt_keys: dict[str, Any]) -> None:
    verifier = jwt_verifier(jwt_keys, "jwks.json")
    identity, expires = verifier.verify(mint(jwt_keys["ec"], "ES256", teams=["dev"]))
    assert (identity.name, identity.source, identity.groups) == ("carol", "jwt", ("dev",))
    assert expires is not None and identity.claims["aud"] == "gatespec"
    pem = jwt_verifier(jwt_keys, "key.pem")
    assert pem.verify(mint(jwt_keys["ed"], "EdDSA"))[0].name == "carol"


# Claims as functions of the time the test runs, not of collection: a slow suite once ran this
# test more than 600 s after collecting it, and the "not valid yet" token had become valid.
@pytest.mark.parametrize(
    "claims",
    [
        pytest.param(lambda now: {"exp": now - 120}, id="expired"),
        pytest.param(lambda now: {"aud": "someone-else"}, id="audience"),
        pytest.param(lambda now: {"iss": "https://evil.test"}, id="issuer"),
        pytest.param(lambda now: {"exp": None}, id="no-expiry"),
        pytest.param(lambda now: {"sub": None}, id="no-subject"),
        pytest.param(lambda now: {"sub": ""}, id="empty-subject"),
        pytest.param(lambda now: {"nbf": now + 600}, id="not-yet-valid"),
    ],
)
def test_jwts_that_must_be_refused(
    jwt_keys: dict[str, Any], claims: Callable[[int], dict[str, Any]]
) -> None:
    token = mint(jwt_keys["ec"], "ES256", **claims(int(time.time())))
    assert jwt_verifier(jwt_keys, "jwks.json").verify(token) is None


@pytest.mark.parametrize("teams", ["dev", ["dev", 7], {"dev": True}, 7, True, [["dev"]]])
def test_a_groups_claim_of_the_wrong_type_fails_closed(
    jwt_keys: dict[str, Any], teams: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 22 item 2: a groups claim that is not a list of strings would give its holder no
    groups, and so none of their deny rules: the token is refused, and the log says why."""
    caplog.set_level(logging.INFO, "gatespec.access.tokens")
    assert (
        jwt_verifier(jwt_keys, "jwks.json").verify(mint(jwt_keys["ec"], "ES256", teams=teams))
        is None
    )
    assert "claim 'teams' is not a list of strings" in caplog.text


def test_a_jwt_signed_otherwise_is_refused(jwt_keys: dict[str, Any]) -> None:
    verifier = jwt_verifier(jwt_keys, "jwks.json")
    stranger = ec.generate_private_key(ec.SECP256R1())
    assert verifier.verify(mint(stranger, "ES256")) is None
    assert verifier.verify(mint("a-shared-secret-of-32-characters", "HS256")) is None
    assert verifier.verify("not.a.jwt") is None


def test_the_sdk_verifier_hands_over_the_identity(jwt_keys: dict[str, Any]) -> None:
    config = parse_access({"identities": {"alice": {"tokens": [digest("a")]}}}, None, {})
    token = anyio.run(config.verifier().verify_token, "a")
    assert isinstance(token, IdentityToken) and token.identity.name == "alice"
    assert token.client_id == "token:alice" and "a" != token.token  # never the secret itself
    assert anyio.run(config.verifier().verify_token, "b") is None


# ------------------------------------------------------------------ the runtime

TOOLS = {
    "fs": [tool("read_file", {"readOnlyHint": True}), tool("delete_file"), tool("stat")],
    "vault": [tool("get_secret", {"readOnlyHint": True})],
}
POLICY = AccessPolicy(
    identities={
        "bob": Rules(
            allow=(Selector(namespaces=frozenset({"fs"})),),
            deny=(Selector(tools=("fs:delete_*",)),),
        )
    }
)


def error_of(fn: Any, *args: Any, **kw: Any) -> dict[str, Any]:
    with pytest.raises(GatewayError) as exc:
        anyio.run(lambda: fn(*args, **kw))
    return exc.value.to_payload()


def test_hidden_and_absent_tools_get_one_answer_and_never_reach_upstream() -> None:
    rt = runtime(TOOLS, POLICY)
    hidden = next(i.id for i in rt.catalog.items() if i.name == "get_secret")
    absent = hidden.replace("get_secret", "get_secrets")
    bob = Caller("s", BOB)
    answers = [error_of(rt.execute, "s", name, {}, identity=BOB) for name in (hidden, absent)] + [
        error_of(rt.hydrate, "s", name, identity=BOB) for name in (hidden, absent)
    ]
    for op in ("/vault/get_secret", "/vault/get_secrets", "/fs/delete_file"):
        answers.append(error_of(rt.call, bob, CallArgs(op, {})))
        answers.append(error_of(rt.schema, bob, SchemaArgs(op)))
    assert {a["error"] for a in answers} == {"FORBIDDEN"}
    assert {a["message"] for a in answers} == {FORBIDDEN_MESSAGE}
    assert all(a["details"] == {} for a in answers)
    assert rt.pool.calls == []
    # an unrestricted caller is told the truth about a tool that does not exist
    assert error_of(rt.execute, "s", absent, {}, identity=ALICE)["error"] == "TOOL_NOT_FOUND"
    anyio.run(rt.execute, "s", hidden, {})
    assert rt.pool.calls == [("vault", "get_secret")]


def test_counts_and_listings_cover_the_visible_catalog_only() -> None:
    rt = runtime(TOOLS, POLICY)
    root = anyio.run(lambda: rt.browse("s", None, "/", identity=BOB))
    assert [c["id"] for c in root.structured["cards"]] == ["/fs"]
    assert "delete_file" not in root.text and "2 tools" in root.text
    found = anyio.run(lambda: rt.browse("s", "get the secret file", None, identity=BOB))
    assert "vault" not in found.text and found.text.startswith(found.text.split("\n")[0])
    assert error_of(rt.browse, "s", None, "/vault", identity=BOB)["error"] == "PATH_NOT_FOUND"
    assert error_of(rt.browse, "s", None, "/nothing", identity=BOB)["error"] == "PATH_NOT_FOUND"
    hits = anyio.run(rt.search, Caller("s", BOB), SearchArgs(None, None, 50)).structured["hits"]
    assert [h["operation"] for h in hits] == ["/fs/read_file", "/fs/stat"]
    assert [t.name.split("-n")[1].split("-h")[0] for t in rt.stripped_tools(BOB)] == [
        "read_file",
        "stat",
    ]
    assert len(rt.stripped_tools(ALICE)) == 4


def test_artifacts_belong_to_the_caller_that_made_them() -> None:
    rt = runtime(TOOLS, AccessPolicy.open())
    alice, bob = Caller("s1", ALICE), Caller("s1", BOB)
    stat = next(i.id for i in rt.catalog.items() if i.name == "stat")
    envelope = anyio.run(lambda: rt.execute(alice.scope, stat, {}, identity=ALICE)).structured
    handle = envelope["artifacts"][0]["handle"]
    assert anyio.run(rt.view, alice.scope, handle, "all").structured["handle"] == handle
    stranger = error_of(rt.view, bob.scope, handle, "all")
    unknown = error_of(rt.view, bob.scope, "art_0000000000000000", "all")
    assert stranger["error"] == unknown["error"] == "VIEW_FAILED"
    assert stranger["message"].replace(handle, "H") == unknown["message"].replace(
        "art_0000000000000000", "H"
    )
    other_session = error_of(rt.view, Caller("s2", ALICE).scope, handle, "all")
    assert other_session["error"] == "VIEW_FAILED"


def test_list_changed_reaches_only_identities_whose_catalog_changed() -> None:
    rt = runtime(TOOLS, POLICY, profile="transparent")
    notifier = ListChangedNotifier(rt.visible_ids)
    bob, alice = notifier._audience(BOB), notifier._audience(ALICE)
    seen: dict[str, int] = {"alice": 0, "bob": 0}
    bob.bus.subscribe(lambda event: seen.__setitem__("bob", seen["bob"] + 1))
    alice.bus.subscribe(lambda event: seen.__setitem__("alice", seen["alice"] + 1))
    rt.pool.listing["vault"].append(tool("rotate_secret"))  # hidden from bob
    anyio.run(rt.rebuild)
    anyio.run(notifier.tools_changed)
    assert seen == {"alice": 1, "bob": 0}
    rt.pool.listing["fs"].append(tool("touch"))  # bob sees this one
    anyio.run(rt.rebuild)
    anyio.run(notifier.tools_changed)
    assert seen == {"alice": 2, "bob": 1}


# ------------------------------------------------------------------ properties

NAMES = st.from_regex(r"[a-z]{2,6}_[a-z]{2,6}", fullmatch=True)
NAMESPACES = st.sampled_from(["alpha", "beta", "gamma"])
HINTS = st.sampled_from([None, {"readOnlyHint": True}, {"destructiveHint": False}, {}])


@st.composite
def catalogs(draw: Any) -> dict[str, list[dict[str, Any]]]:
    names = draw(st.lists(NAMES, min_size=2, max_size=12, unique=True))
    out: dict[str, list[dict[str, Any]]] = {}
    for name in names:
        out.setdefault(draw(NAMESPACES), []).append(tool(name, draw(HINTS)))
    return out


@st.composite
def selectors(draw: Any, names: list[str]) -> Selector:
    kind = draw(st.sampled_from(["namespaces", "tools", "annotations"]))
    if kind == "namespaces":
        return Selector(namespaces=frozenset(draw(st.lists(NAMESPACES, min_size=1, max_size=2))))
    if kind == "tools":
        name = draw(st.sampled_from(names))
        glob = draw(st.sampled_from([f"*:{name}*", f"*:{name[:2]}*", "*:*_*"]))
        return Selector(tools=(glob,))
    hint = draw(st.sampled_from(["readOnlyHint", "destructiveHint"]))
    return Selector(annotations=((hint, draw(st.booleans())),))


@st.composite
def restricted_policies(draw: Any, names: list[str]) -> AccessPolicy:
    deny = tuple(draw(st.lists(selectors(names), min_size=0, max_size=2)))
    allow = draw(st.none() | st.lists(selectors(names), min_size=0, max_size=2).map(tuple))
    if not deny and allow is None:
        deny = (draw(selectors(names)),)
    return AccessPolicy(identities={"bob": Rules(allow=allow, deny=deny)})


def answers(rt: Any, identity: Identity) -> list[Any]:
    """Every listing answer an identity can get: browse by query and by every path of the
    tree, search with and without a query, tools/list entries."""
    out: list[Any] = []

    async def go() -> None:
        caller = Caller("p", identity)
        for query in ("tool", "alpha beta", "the"):
            out.append((await rt.browse("p", query, None, identity=identity)).text)
            out.append((await rt.search(caller, SearchArgs(query, None, 50))).structured)
        queue = ["/"]
        while queue:
            reply = await rt.browse("p", None, queue.pop(), identity=identity)
            out.append(reply.text)
            queue += [c["id"] for c in reply.structured["cards"] if c["kind"] == "internal"]
        out.append((await rt.search(caller, SearchArgs(None, None, 50))).structured)
        out.append([t.model_dump() for t in rt.stripped_tools(identity)])

    anyio.run(go)
    return out


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_restricted_identity_sees_exactly_a_gateway_of_its_visible_tools(data: Any) -> None:
    catalog = data.draw(catalogs())
    names = [t["name"] for tools in catalog.values() for t in tools]
    policy = data.draw(restricted_policies(names))
    rt = runtime(catalog, policy, profile="transparent")
    visible = {i.id for i in rt.catalog.items() if policy.visible(BOB, _subject(i))}
    alone = {
        ns: [t for t in tools if _id(rt, ns, t["name"]) in visible] for ns, tools in catalog.items()
    }
    reference = runtime({ns: ts for ns, ts in alone.items() if ts}, AccessPolicy.open())
    assert answers(rt, BOB) == answers(reference, ALICE)
    hidden = [i for i in rt.catalog.items() if i.id not in visible]
    text = json.dumps(answers(rt, BOB))
    for item in hidden:
        assert item.id not in text
        assert not re.search(rf"(?<![\w.-]){re.escape(item.name)}(?![\w.-])", text), item.name
    for item in hidden:  # and every hidden tool is one answer, as an absent one is
        for name in (item.id, item.id.replace(f":{item.name}", f":{item.name}x")):
            payload = error_of(rt.execute, "p", name, {}, identity=BOB)
            assert payload == {"error": "FORBIDDEN", "message": FORBIDDEN_MESSAGE,
                               "path": name, "details": {}}  # fmt: skip
    assert rt.pool.calls == []


@settings(max_examples=25)
@given(data=st.data())
def test_no_notification_tells_of_a_hidden_change(data: Any) -> None:
    catalog = data.draw(catalogs())
    names = [t["name"] for tools in catalog.values() for t in tools]
    policy = data.draw(restricted_policies(names))
    rt = runtime(catalog, policy, profile="transparent")
    notifier = ListChangedNotifier(rt.visible_ids)
    told = []
    notifier._audience(BOB).bus.subscribe(lambda event: told.append(event))
    before = rt.visible_ids(BOB)
    ns = data.draw(NAMESPACES)
    rt.pool.listing.setdefault(ns, []).append(
        tool(data.draw(NAMES.filter(lambda n: n not in names)))
    )
    anyio.run(rt.rebuild)
    anyio.run(notifier.tools_changed)
    assert bool(told) == (rt.visible_ids(BOB) != before)


def _subject(item: Any) -> Subject:
    from gatespec.runtime import subject_of

    return subject_of(item)


def _id(rt: Any, namespace: str, name: str) -> str | None:
    return next(
        (i.id for i in rt.catalog.items() if (i.namespace, i.name) == (namespace, name)), None
    )


def test_forbidden_is_an_error_code_of_every_tool_addressing_meta_tool() -> None:
    from gatespec_surface.descriptors import META_TOOL_ERRORS

    for tool_name in ("tool_execute", "tool_hydrate", "schema", "call", "batch"):
        assert ErrorCode.FORBIDDEN in META_TOOL_ERRORS[tool_name], tool_name


def test_a_config_path_resolves_key_files_against_the_config(tmp_path: Path, jwt_keys: Any) -> None:
    (tmp_path / "jwks.json").write_text((jwt_keys["folder"] / "jwks.json").read_text())
    config = tmp_path / "gw.json"
    config.write_text(json.dumps({"mcpServers": {}, "gateway": {"access": {"jwt": {
        "jwks_file": "jwks.json", "issuer": "https://idp.test", "audience": "gatespec"}}}}))  # fmt: skip
    from gatespec.config import load_config

    assert load_config(config).options.access.jwt is not None


def test_the_readme_example_is_a_valid_config(tmp_path: Path, jwt_keys: Any) -> None:
    """README.md's worked example parses, and decides as its prose says."""
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    section = readme.split("## Identities and access control", 1)[1]
    (tmp_path / "gw.yaml").write_text(section.split("```yaml\n", 1)[1].split("```", 1)[0])
    (tmp_path / "idp-jwks.json").write_text((jwt_keys["folder"] / "jwks.json").read_text())
    from gatespec.config import load_config

    env = {"GITHUB_TOKEN": "g", "CI_GATEWAY_TOKEN": "ci-secret"}
    parsed = load_config(tmp_path / "gw.yaml", environ=env).options.access
    assert parsed.static.verify("ci-secret").name == "ci"
    alice = parsed.static.verify("alice-token")  # the example's digest is of this token
    assert alice is not None and parsed.stdio_identity.name == "alice"
    delete = Subject.tool("fs", "fs:delete_file#00000000")
    read = Subject.tool("fs", "fs:read_file#00000000", {"readOnlyHint": True})
    assert not parsed.policy.visible(alice, delete) and parsed.policy.visible(alice, read)
    docs = Identity("dana", "jwt", ("docs-team",), {"sub": "dana"})
    assert parsed.policy.visible(docs, delete) and not parsed.policy.visible(
        docs, Subject.tool("github", "github:create_issue#00000000")
    )
