"""OffsetFetch answers are judged on the metadata committed with each offset too
(FetchReturnsCommitted): Kafka stores a commit's missing metadata as "" and answers "" for it
(OffsetAndMetadata.fromRequest), so a broker that loses or alters the metadata, or answers
null for none, is named. Seqs are those of the simulated eager story (tests/
test_validate_violations.py): 591 an OffsetFetch answered with committed offsets."""

from __future__ import annotations

from typing import Any

from groupspec.validate import CONFORMING, VIOLATION, validate_bytes
from tests.test_validate_violations import dump, events, sim_trace

FETCH = 591


def _trace(change: Any) -> bytes:
    objs = events(sim_trace("eager"))
    for o in objs:
        change(o)
    return dump(objs).encode()


def _fetched(o: dict[str, Any]) -> list[dict[str, Any]]:
    assert o["api"] == "OffsetFetch"
    parts: list[dict[str, Any]] = o["response"]["partitions"]
    return parts


def test_the_story_fetches_committed_offsets_at_that_seq() -> None:
    [fetch] = [o for o in events(sim_trace("eager")) if o["kind"] == "exchange" and o["seq"] == FETCH]
    assert all(p["committed_offset"] > 0 and p["metadata"] == "" for p in _fetched(fetch))


def test_altered_metadata_is_a_broker_violation() -> None:
    def alter(o: dict[str, Any]) -> None:
        if o["kind"] == "exchange" and o["seq"] == FETCH:
            _fetched(o)[0]["metadata"] = "not what was committed"

    [g] = validate_bytes(_trace(alter)).groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert (g.violation.seq, g.violation.rule) == (FETCH, "FetchReturnsCommitted")
    assert 'metadata of invoices-0 (answered "not what was committed", committed "")' in g.violation.detail
    assert "invoices-0@422 (metadata \"not what was committed\")" in g.violation.broker_answered


def _commit_without_metadata(o: dict[str, Any]) -> None:
    if o["kind"] == "exchange" and o["api"] == "OffsetCommit":
        for p in o["request"]["partitions"]:
            p["committed_metadata"] = None


def test_a_commit_without_metadata_is_fetched_as_empty_metadata() -> None:
    [g] = validate_bytes(_trace(_commit_without_metadata)).groups
    assert g.verdict == CONFORMING, g.violation


def test_answering_null_for_no_metadata_is_a_broker_violation() -> None:
    def null_answers(o: dict[str, Any]) -> None:
        _commit_without_metadata(o)
        if o["kind"] == "exchange" and o["api"] == "OffsetFetch":
            for p in o["response"]["partitions"]:
                if p["committed_offset"] != -1:
                    p["metadata"] = None

    [g] = validate_bytes(_trace(null_answers)).groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.rule == "FetchReturnsCommitted"
    assert '(answered null, committed "")' in g.violation.detail and "(metadata null)" in g.violation.broker_answered
