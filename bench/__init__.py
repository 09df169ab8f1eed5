"""Benchmarks of groupspec's assignors against kafka-python's (issue 8); see bench/README.md."""
