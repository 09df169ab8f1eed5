"""Named input problems: what can be wrong with a trace file, each with its line number.

The validator never raises on a trace's content. A bad line, a duplicated or out-of-order
event, a request without a response or an undecodable frame becomes an
:class:`InputProblem` of one of the :data:`PROBLEM_KINDS`, and every other line is still
validated. Only a file that cannot be opened at all raises :class:`TraceInputError`.
"""

from __future__ import annotations

from dataclasses import dataclass

#: kind -> what it means (docs/validator.md lists the same table)
PROBLEM_KINDS: dict[str, str] = {
    "malformed_json": "the line is not valid JSON (or not UTF-8)",
    "truncated": "the last line is cut short: the file was truncated",
    "unknown_api": "an exchange names an API (or API key) outside the group protocol",
    "bad_event": "valid JSON, but not a trace v1 event (unknown kind, wrong field types)",
    "missing_header": "the first event is not the trace header",
    "duplicate_event": "an event repeats the seq (or connection and correlation id) of an earlier one; the repeat is ignored",
    "out_of_order": "an event's seq is lower than the one before it in the file",
    "missing_events": "seq numbers skip: events between two lines were dropped",
    "bad_interval": "an exchange was received before it was sent; it is ignored",
    "missing_response": "a request with no response recorded",
    "decode_error": "the recorder could not decode a frame on this connection",
}


class TraceInputError(Exception):
    """A trace that cannot be read at all (missing file, a directory, not a trace format)."""


@dataclass(frozen=True)
class InputProblem:
    kind: str
    source: str
    line: int
    message: str
    #: the group the line belongs to, when it could be told (None: unknown or cluster-wide)
    group_id: str | None = None
    seq: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in PROBLEM_KINDS:
            raise ValueError(f"unknown problem kind {self.kind!r}")

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.kind}: {self.message}"
