"""Identity and access control (AM-ACCESS-CONTROL, AM-ACCESS-NO-LEAK).

* `Identity`: who is calling (a bearer token's identity over HTTP, the config's over stdio).
* `AccessPolicy.visible(identity, Subject.tool/prompt/resource(...))`: the policy API every
  profile's server calls, including the aggregate profile's prompts and resources.
* `AccessConfig` (`gateway.access` of the config) and the SDK token verifier over static
  tokens and JWTs.
"""

from gatespec.access.identity import LOCAL, Identity
from gatespec.access.policy import (
    FORBIDDEN_MESSAGE,
    AccessPolicy,
    ClaimRule,
    Rules,
    Selector,
    Subject,
    forbidden,
)

__all__ = [
    "FORBIDDEN_MESSAGE",
    "LOCAL",
    "AccessPolicy",
    "ClaimRule",
    "Identity",
    "Rules",
    "Selector",
    "Subject",
    "forbidden",
]
