"""Layer 1: the surface's pure functions, answered by an adapter program over JSON lines.

`run` sends the cases and judges the answers; `cases` and `families` build them (shipped
vectors and drawn families); `protocol` names the functions, `process` runs the adapter;
`card_rules` judges one ChoiceCard (also used by layer 2); `export` writes the vectors out.
"""
