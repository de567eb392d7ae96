"""Layer 2: live MCP checks of a running implementation under test (IUT).

`run` plans and runs a profile's families; `client` is the kit's MCP connection to the IUT;
`checks`, `facts` and `observations` are the framework the families share; `readings` and `payloads` read what
the IUT answers; one module per family group (`browse`, `execute`, `search`, `aggregate`,
`access`, `surface`, `aggregate` with `registry_change`; `browse` with `cards` and `cache_stable`; `execute` with `invocation`, `artifacts`, `transparent`). docs/conformance.md ("Live MCP checks") describes a run.
"""
