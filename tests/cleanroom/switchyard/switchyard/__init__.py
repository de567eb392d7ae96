"""switchyard: an MCP gateway with two profiles.

* `search`    - ADR-041 meta-tools (search / schema / call / batch) with access control.
* `aggregate` - namespaced aggregation of upstream tools, prompts and resources.
"""

__version__ = "0.1.0"
