"""What an operator watches a running gateway by (issue 24): the status page (`routes`, fed by
`calls`, `source` and `status`), its stdio port (`port`) and traces (`tracing`). Prometheus
metrics live in gatespec.metrics."""
