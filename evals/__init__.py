"""The reproducible eval harness of lifelong: ``lifelong eval`` or ``python -m evals``.

See evals/README.md for every suite, metric and command; :mod:`evals.harness` for the runner."""
