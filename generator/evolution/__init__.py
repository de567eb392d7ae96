"""Spec evolution: how one version of the spec differs from another and what that means.

`commands` holds the `python -m generator` commands (diff, changelog, version-check, …);
`snapshot` reads one version; `diff` with `schema_diff`, `record_diff` and `languages` (grammar
language inclusion) finds the changes; `diff_rules` classifies them for implementers and
clients; `diff_report` and `changelog` show them; `semver` and `versioning` hold the version
discipline (spec/version.lock), and `pins` keeps the spec version's statements outside
spec/ (pyproject's pins, `SUPPORTED_SPEC`) in step with it (`bump`).
"""
