"""A member kept past its session (issue 16, item 2): a broker that still answers a member
after its session timeout ran out with no heartbeat is told which expiry it missed."""

from __future__ import annotations

import io
import json
from typing import Any

from groupspec.cli.simulate import bundled_scenarios
from groupspec.sim.render import write_trace
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import apply_overrides, load_scenario_text
from groupspec.validate import VIOLATION, validate_bytes
from tests.test_validate_violations import dump, events


def _late_heartbeat(error: str) -> bytes:
    """A one-member group's trace cut after its first heartbeat, sent 15 s after the member's
    SyncGroup (its session timeout is 10 s) and answered ``error``."""
    data = apply_overrides(json.loads(bundled_scenarios()["default"]), members=1, until_ms=20_000)
    out = io.StringIO()
    write_trace(simulate(load_scenario_text(json.dumps(data), "one.json")), out)
    objs: list[dict[str, Any]] = events(out.getvalue())
    exchanges = [o for o in objs if o["kind"] == "exchange"]
    sync = next(o for o in exchanges if o["api"] == "SyncGroup" and o["response"]["error"] == "NONE")
    hb = next(o for o in exchanges if o["api"] == "Heartbeat" and o["seq"] > sync["seq"])
    # the events up to the SyncGroup, then the heartbeat (numbered next: nothing dropped)
    keep = [o for o in objs if o["seq"] <= sync["seq"]]
    hb["seq"] = keep[-1]["seq"] + 1
    keep.append(hb)
    hb["sent_ms"] = sync["received_ms"] + 15_000
    hb["received_ms"] = hb["sent_ms"] + 1
    hb["response"]["error"] = error
    return dump(keep).encode()


def test_a_member_kept_past_its_session_expiry_is_a_violation_naming_it() -> None:
    raw = _late_heartbeat("NONE")
    [g] = [g for g in validate_bytes(raw).groups if g.verdict == VIOLATION]
    v = g.violation
    assert v is not None and v.api == "Heartbeat" and v.rule == "SessionExpiryRemovesMember", v
    assert "session expired at" in v.detail and "session timeout 10000 ms" in v.detail
    assert "Heartbeat UNKNOWN_MEMBER_ID" in v.protocol_allows


def test_the_expired_member_answered_unknown_is_not_this_violation() -> None:
    raw = _late_heartbeat("UNKNOWN_MEMBER_ID")
    for g in validate_bytes(raw).groups:
        assert all(d.rule != "SessionExpiryRemovesMember" for d in g.divergences), g
