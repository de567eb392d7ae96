"""gatespec runtime."""
