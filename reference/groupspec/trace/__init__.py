"""Trace format v1: group-protocol events as JSON Lines (and Parquet), with a JSON Schema.

See ``schema/trace-v1.schema.json`` and ``docs`` in :mod:`groupspec.trace.events`.
"""
