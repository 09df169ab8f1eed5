"""What the broker's API layer does to a group request, knowing its wire version, before
the group coordinator sees it.

The reference's :class:`~groupspec.coordinator.coordinator.Coordinator` is Kafka's
``GroupCoordinatorService`` and below: it takes requests without their wire version. A few
rules live above it, in ``KafkaApis`` (core/src/main/scala/kafka/server/KafkaApis.scala,
Apache Kafka 4.1.2), and are decided on the version: they are kept here, and whatever
replays a recorded exchange (the validator) applies them first. Authorization is not
modelled (every request is authorized), so the ``GROUP_AUTHORIZATION_FAILED`` and
``TOPIC_AUTHORIZATION_FAILED`` answers of those handlers never arise here.
"""

from __future__ import annotations

import dataclasses

from groupspec.protocol import messages as m
from groupspec.protocol.errors import Error

#: SyncGroup v5 is the first version whose protocol type and name are mandatory (KIP-559)
SYNC_GROUP_MANDATORY_PROTOCOL_VERSION = 5


def answer_before_coordinator(api_version: int, request: object) -> m.Response | None:
    """The answer ``KafkaApis`` gives ``request`` without asking the group coordinator,
    if it does: a SyncGroup of version 5 or later that lacks its protocol type or its
    protocol name is INCONSISTENT_GROUP_PROTOCOL (handleSyncGroupRequest, checked before
    anything else, so even for a group that does not exist). None: the request goes on to
    the coordinator (:func:`as_coordinator_sees`)."""
    if (
        isinstance(request, m.SyncGroupRequest)
        and api_version >= SYNC_GROUP_MANDATORY_PROTOCOL_VERSION
        and (request.protocol_type is None or request.protocol_name is None)
    ):
        return m.SyncGroupResponse(error=Error.INCONSISTENT_GROUP_PROTOCOL)
    return None


def as_coordinator_sees(request: m.Request) -> m.Request:
    """``request`` as ``KafkaApis`` hands it on: a DeleteGroups naming a group twice asks
    for it once (handleDeleteGroupsRequest takes the distinct names, in order), so each
    group gets one result."""
    if isinstance(request, m.DeleteGroupsRequest):
        distinct = tuple(dict.fromkeys(request.groups_names))
        if distinct != request.groups_names:
            return dataclasses.replace(request, groups_names=distinct)
    return request
