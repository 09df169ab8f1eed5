"""The replay's shortcuts around ``compare`` and ``coordinator_moving`` (issue 20) say what
the functions they skip would say.

- ``_same_answer`` (the fast step's test that the broker's heartbeat or commit answer is
  the fast path's one as it is): a Hypothesis property over heartbeat and commit answers
  (every error code, partitions equal, reordered, missing or extra) requires that whenever
  it says yes, ``compare`` finds no mismatch; a shortcut that says yes too often fails it.
- ``_coordinator_error`` (``_prepare``'s per-exchange test, a heartbeat answered NONE told
  at once) equals ``coordinator_moving`` for every API and response the property draws.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupspec.protocol import messages as m
from groupspec.protocol.errors import Error
from groupspec.trace.events import WireExchange
from groupspec.validate import replay as rp
from groupspec.validate.compare import compare
from groupspec.validate.grouping import Exchange

ERRORS = st.sampled_from(list(Error))


def _heartbeat(error: Error) -> m.HeartbeatResponse:
    return m.HeartbeatResponse(error=error)
#: mostly NONE, the usual answer
AN_ERROR = st.one_of(st.just(Error.NONE), st.just(Error.NONE), ERRORS)
TOPIC_PARTITIONS = st.lists(st.tuples(st.sampled_from(("a", "b")), st.integers(0, 2)), max_size=4)


@st.composite
def commit_answers(draw: Any) -> tuple[m.OffsetCommitResponse, m.OffsetCommitResponse]:
    """The fast path's commit answer (every partition NONE, in the request's order) and a
    broker's: the same, reordered, with partitions dropped or added, or other errors."""
    ours = draw(TOPIC_PARTITIONS)
    theirs = draw(st.one_of(st.just(list(ours)), st.permutations(ours), TOPIC_PARTITIONS,
                            st.just(ours[1:]), st.just([*ours, ("a", 0)])))
    return (m.OffsetCommitResponse(partitions=tuple(m.OffsetCommitPartitionResponse(t, p, Error.NONE) for t, p in ours)),
            m.OffsetCommitResponse(partitions=tuple(m.OffsetCommitPartitionResponse(t, p, draw(AN_ERROR))
                                         for t, p in theirs)))


HEARTBEATS = st.tuples(AN_ERROR.map(_heartbeat), AN_ERROR.map(_heartbeat))
ANSWERS = st.one_of(HEARTBEATS, commit_answers(),
                    # answers of another class than the fast path's
                    st.tuples(AN_ERROR.map(_heartbeat), commit_answers().map(lambda p: p[1])))


def _check_same_answer(pair: tuple[m.Response, m.Response], version: int) -> None:
    ours, theirs = pair
    if rp._same_answer(ours, theirs):
        assert compare(version, ours, theirs) is None, (ours, theirs)


@settings(max_examples=200, deadline=None)
@given(ANSWERS, st.integers(0, 9))
def test_a_same_answer_is_one_compare_accepts(pair: tuple[m.Response, m.Response], version: int) -> None:
    _check_same_answer(pair, version)


def test_the_property_sees_both_outcomes() -> None:
    """It compares something: equal answers are told so, and unequal ones are not."""
    hb = _heartbeat(Error.NONE)
    assert rp._same_answer(hb, _heartbeat(Error.NONE))
    assert not rp._same_answer(hb, _heartbeat(Error.REBALANCE_IN_PROGRESS))
    commit = m.OffsetCommitResponse(partitions=(m.OffsetCommitPartitionResponse("a", 0, Error.NONE),))
    assert rp._same_answer(commit, m.OffsetCommitResponse(partitions=(m.OffsetCommitPartitionResponse("a", 0, Error.NONE),)))
    assert not rp._same_answer(commit, m.OffsetCommitResponse(partitions=
        (m.OffsetCommitPartitionResponse("a", 0, Error.ILLEGAL_GENERATION),)))
    assert not rp._same_answer(commit, m.OffsetCommitResponse(partitions=
        (m.OffsetCommitPartitionResponse("a", 1, Error.NONE),)))


@pytest.mark.parametrize("wrong", ["ignores the error", "ignores the length"])
def test_the_property_catches_a_shortcut_saying_yes_too_often(wrong: str, monkeypatch: pytest.MonkeyPatch) -> None:
    original = rp._same_answer

    def loose(expected: m.Response, actual: m.Response) -> bool:
        if type(expected) is not type(actual):
            return False
        if isinstance(expected, m.HeartbeatResponse):
            return True if wrong == "ignores the error" else original(expected, actual)
        assert isinstance(expected, m.OffsetCommitResponse) and isinstance(actual, m.OffsetCommitResponse)
        if wrong == "ignores the length":
            return all(q.error is Error.NONE for q in actual.partitions)
        return len(expected.partitions) == len(actual.partitions) and all(
            q.error is Error.NONE and (p.topic == q.topic or wrong == "ignores the partition")
            and (p.partition == q.partition or wrong == "ignores the partition")
            for p, q in zip(expected.partitions, actual.partitions, strict=True))

    monkeypatch.setattr(rp, "_same_answer", loose)
    with pytest.raises(AssertionError):
        test_a_same_answer_is_one_compare_accepts()


APIS = st.sampled_from(("Heartbeat", "OffsetCommit", "JoinGroup", "SyncGroup"))
RESPONSES = st.one_of(st.none(), ERRORS.map(_heartbeat), commit_answers().map(lambda p: p[1]))


@settings(max_examples=150, deadline=None)
@given(APIS, RESPONSES)
def test_prepare_tells_coordinator_errors_as_coordinator_moving(api: str, resp: m.Response | None) -> None:
    ev = WireExchange(seq=1, connection="c", client_id="k", api=api, api_key=12, api_version=4,
                      correlation_id=1, group_id="g", sent_ms=0, received_ms=1,
                      request=m.HeartbeatRequest(group_id="g", generation_id=1, member_id="m"), response=resp)
    assert rp._coordinator_error(Exchange(1, ev)) == rp.coordinator_moving(api, resp)
