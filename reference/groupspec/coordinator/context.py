"""One handler invocation: the state it reads, the records it emits, the responses it sends.

``emit`` applies a record at once (through :func:`apply_record`), so a handler always reads
the state its own earlier records produced. Responses to parked requests (a JoinGroup
answered when the join phase completes) are sent through ``respond`` with the id of the
request they answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.replay import apply_record
from groupspec.coordinator.state import CoordinatorState
from groupspec.protocol.messages import Response
from groupspec.protocol.records import Record


@dataclass
class Output:
    """What one input produced: responses (request id, response) and records, in order."""

    responses: list[tuple[int, Response]] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)

    def extend(self, other: Output) -> None:
        self.responses.extend(other.responses)
        self.records.extend(other.records)

    def response_to(self, request_id: int) -> Response | None:
        for rid, resp in self.responses:
            if rid == request_id:
                return resp
        return None


@dataclass
class Txn:
    state: CoordinatorState
    config: CoordinatorConfig
    now_ms: int
    out: Output = field(default_factory=Output)

    def emit(self, record: Record) -> None:
        apply_record(self.state, record)
        self.out.records.append(record)

    def respond(self, request_id: int, response: Response) -> None:
        self.out.responses.append((request_id, response))
