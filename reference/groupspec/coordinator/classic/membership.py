"""Member identity checks shared by every request kind.

Source: ClassicGroup.validateMember (group-coordinator/.../classic/ClassicGroup.java): a
request naming a group.instance.id must come from the member id that instance maps to
(else FENCED_INSTANCE_ID: a zombie of a replaced static member), and the member id must be
known (else UNKNOWN_MEMBER_ID).
"""

from __future__ import annotations

from groupspec.coordinator.classic.group import Group
from groupspec.protocol.errors import Error


def validate_member(group: Group, member_id: str, group_instance_id: str | None) -> Error:
    if group_instance_id is not None:
        existing = group.static_member_id(group_instance_id)
        if existing is None:
            return Error.UNKNOWN_MEMBER_ID
        if existing != member_id:
            return Error.FENCED_INSTANCE_ID
    if not group.has_member(member_id):
        return Error.UNKNOWN_MEMBER_ID
    return Error.NONE
