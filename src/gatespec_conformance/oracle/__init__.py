"""Expected answers the kit works out for itself, from the seeds and the recorded amendments.

Nothing here calls gatespec or the generated parsers, renderers or validators: an expected
answer computed by the code under test can never disagree with it. Each module cites the seed
section (and amendment) it restates, and stays small enough to read against that text.

* `seed_hash`: hash8 exactly as seed 000 §1.3 prints it.
* `tool_ids`: tool ids built and split by the §1.1 grammar; AM-NAMESPACE-FROM-CONFIG server keys.
* `truncation`: §2.4 by brute force (AM-TRUNC-CHAR-BOUNDARY, AM-SENTENCE-ENDS).
* `render`: the card line of AM-CARD-RENDER.
* `answers`: the rest (annotations per seed 002, view selectors, wire names).
"""
