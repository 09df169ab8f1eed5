"""The recording proxy: sits between Kafka clients and a broker, forwards every byte, and
writes the group protocol's request/response exchanges as a trace (format v1,
:mod:`groupspec.trace`). See docs/recorder.md.
"""

from __future__ import annotations

from groupspec.recorder.proxy import BackgroundRecorder, Recorder, Stats, parse_address

__all__ = ["BackgroundRecorder", "Recorder", "Stats", "parse_address"]
