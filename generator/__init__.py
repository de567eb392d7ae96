"""gatespec's code generator: spec/*.yaml -> generated/ (run as `python -m generator`).

Pipeline: load YAML into a validated intermediate representation (ir), run static checks
(checks), then render templates and datamodel-code-generator output (emit). Nothing here is
imported by the runtime; its dependencies live in the `generator` extra.
"""
