"""tollbooth: a clean-room MCP gateway / transparent proxy (seed 000 + seed 002).

The pure surface functions live in :mod:`tollbooth.surface`.
"""

__version__ = "0.1.0"
