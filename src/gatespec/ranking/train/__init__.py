"""Training gatespec's learned query tower on the dev data (issue 26).

    nice -n 19 python -m gatespec.ranking.train --out ranker/gatespec_ranker

Training-time only: needs the ``train`` extra (torch, transformers, onnx); serving never
imports this package. pipeline.py says what a run does.
"""
