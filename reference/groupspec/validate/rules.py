"""The rules a verdict can cite: a name, what it says, and the Kafka source it comes from.

Replay divergences are named after the rule that decided the reference coordinator's
answer, looked up from the API and the answer the reference gave (:func:`rule_for`). The
replay-free checks and the assignor contract have their own rules. Sources are files of
apache/kafka (see PROTOCOL.md for the snapshot); the function is named where it helps.
"""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.protocol.errors import Error

GMM = "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupMetadataManager.java"
CG = "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/classic/ClassicGroup.java"
OMM = "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/OffsetMetadataManager.java"
GCS = "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupCoordinatorService.java"
GC = "core/src/main/scala/kafka/coordinator/group/GroupCoordinator.scala"
KA = "core/src/main/scala/kafka/server/KafkaApis.scala"
CC = "clients/src/main/java/org/apache/kafka/clients/consumer/internals/ConsumerCoordinator.java"
APA = "clients/src/main/java/org/apache/kafka/clients/consumer/internals/AbstractPartitionAssignor.java"
AC = "clients/src/main/java/org/apache/kafka/clients/consumer/internals/AbstractCoordinator.java"
HB = "clients/src/main/java/org/apache/kafka/clients/consumer/internals/Heartbeat.java"
CSG = "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/modern/consumer/ConsumerGroup.java"
CAB = "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/modern/consumer/CurrentAssignmentBuilder.java"
TAB = "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/modern/TargetAssignmentBuilder.java"


@dataclass(frozen=True)
class Rule:
    name: str
    summary: str
    source: str


def _r(name: str, summary: str, source: str) -> Rule:
    return Rule(name, summary, source)


RULES: dict[str, Rule] = {
    r.name: r
    for r in [
        # JoinGroup: GroupMetadataManager.classicGroupJoin* (GroupCoordinator.handleJoinGroup in Scala)
        _r("JoinMemberIdRequired",
           "a new dynamic member on JoinGroup v4+ gets MEMBER_ID_REQUIRED and a fresh member id (KIP-394)",
           f"{GMM} (classicGroupJoinNewDynamicMember); {GC} (doNewMemberJoinGroup)"),
        _r("JoinUnknownMember",
           "a JoinGroup naming a member id the group does not know is rejected with UNKNOWN_MEMBER_ID",
           f"{GMM} (classicGroupJoinExistingMember); {CG} (validateMember)"),
        _r("StaticMemberFencing",
           "a request whose group.instance.id maps to another member id is FENCED_INSTANCE_ID (KIP-345)",
           f"{CG} (validateMember); {GMM}"),
        _r("JoinProtocolSupported",
           "a member must share a protocol type and name with the group (INCONSISTENT_GROUP_PROTOCOL)",
           f"{CG} (supportsProtocols)"),
        _r("JoinSessionTimeoutBounds",
           "the session timeout must lie within group.min/max.session.timeout.ms",
           f"{GMM} (classicGroupJoin); {GC}"),
        _r("GroupMaxSize", "a group never grows beyond group.max.size (GROUP_MAX_SIZE_REACHED)",
           f"{GMM} (acceptJoiningMember)"),
        _r("JoinCompletion",
           "a completed join phase answers every member with the new generation, the selected protocol, the leader, and the member list to the leader only",
           f"{GMM} (completeClassicGroupJoin); {CG} (initNextGeneration, selectProtocol)"),
        _r("GenerationStartsAtOne",
           "a new group is at generation 0 and its first completed join phase makes it generation 1",
           f"{CG} (initNextGeneration); {GMM} (completeClassicGroupJoin)"),
        _r("GenerationIncrements",
           "each completed join phase adds exactly one to the group's generation",
           f"{CG} (initNextGeneration); {GMM} (completeClassicGroupJoin)"),
        _r("JoinWaitsForAllMembers",
           "JoinGroup is answered only when every member has rejoined or the rebalance (or initial) delay expired",
           f"{GMM} (maybeCompleteJoinPhase, completeClassicGroupJoin); {CG} (hasAllMembersJoined)"),
        _r("JoinGroupAnswer", "JoinGroup is answered as the group's state requires", f"{GMM} (classicGroupJoin)"),
        # SyncGroup
        _r("SyncUnknownMember", "SyncGroup from a non-member is UNKNOWN_MEMBER_ID",
           f"{GMM} (validateSyncGroup); {CG} (validateMember)"),
        _r("SyncGenerationCheck", "SyncGroup with a generation other than the group's is ILLEGAL_GENERATION",
           f"{GMM} (validateSyncGroup)"),
        _r("SyncDuringPreparingRebalance", "SyncGroup while a rebalance is being prepared is REBALANCE_IN_PROGRESS",
           f"{GMM} (classicGroupSyncToClassicGroup)"),
        _r("SyncPropagatesLeaderAssignment",
           "every member receives exactly the assignment the generation's leader sent for it",
           f"{GMM} (setAndPropagateAssignment); {CG}"),
        _r("SyncWaitsForLeader", "a follower's SyncGroup is answered when the leader's assignment arrives",
           f"{GMM} (classicGroupSyncToClassicGroup)"),
        _r("AnsweredWhenDue",
           "a parked JoinGroup or SyncGroup is answered as soon as what completes it happens (the last member's join, the leader's assignment, a timer), not later",
           f"{GMM} (completeClassicGroupJoin, setAndPropagateAssignment); {CG} (completeJoinFuture)"),
        _r("AnsweredBeforeLaterRequests",
           "a request Kafka must have answered by some time is answered by then when its connection stays open past it: the broker answers a connection's requests in order, so a request left unanswered while the same client goes on sending on that connection was never answered",
           "core/src/main/scala/kafka/network/SocketServer.scala (a channel is muted until its in-flight request is answered); "
           f"{GMM} (completeClassicGroupJoin); {CG} (completeJoinFuture)"),
        _r("SyncGroupAnswer", "SyncGroup is answered as the group's state requires", f"{GMM} (classicGroupSync)"),
        _r("SyncProtocolConsistent",
           "a SyncGroup v5+ without a protocol type or name (refused by the API layer before "
           "anything else), or naming another than the group's, is INCONSISTENT_GROUP_PROTOCOL",
           f"{KA} (handleSyncGroupRequest); {GMM} (validateSyncGroup, isProtocolInconsistent)"),
        # Heartbeat
        _r("HeartbeatUnknownMember", "a heartbeat from a non-member is UNKNOWN_MEMBER_ID",
           f"{GMM} (validateClassicGroupHeartbeat)"),
        _r("HeartbeatGenerationCheck", "a heartbeat with another generation is ILLEGAL_GENERATION",
           f"{GMM} (validateClassicGroupHeartbeat)"),
        _r("HeartbeatSignalsRebalance", "a heartbeat during PreparingRebalance is REBALANCE_IN_PROGRESS",
           f"{GMM} (classicGroupHeartbeatToClassicGroup)"),
        _r("SessionExpiryRemovesMember",
           "a member that sends no heartbeat (or other request that counts) within its session timeout is removed; later requests naming it are UNKNOWN_MEMBER_ID",
           f"{GMM} (expireClassicGroupMemberHeartbeat, rescheduleClassicGroupMemberHeartbeat)"),
        _r("HeartbeatWhileLoading",
           "a heartbeat reaching a coordinator that is still loading the group is answered NONE, never COORDINATOR_LOAD_IN_PROGRESS",
           f"{GCS} (heartbeat)"),
        _r("HeartbeatAnswer", "a heartbeat is answered as the group's state requires",
           f"{GMM} (classicGroupHeartbeat)"),
        # LeaveGroup
        _r("LeaveGroupAnswer", "LeaveGroup removes known members and answers unknown ones per member",
           f"{GMM} (classicGroupLeave)"),
        # OffsetCommit
        _r("CommitGenerationCheck",
           "an OffsetCommit from another generation than the group's is rejected (ILLEGAL_GENERATION)",
           f"{CG} (validateOffsetCommit); {OMM} (validateOffsetCommit)"),
        _r("CommitUnknownMember", "an OffsetCommit from a non-member of an active group is UNKNOWN_MEMBER_ID",
           f"{CG} (validateOffsetCommit)"),
        _r("CommitDuringCompletingRebalance",
           "an OffsetCommit between JoinGroup and SyncGroup is REBALANCE_IN_PROGRESS",
           f"{CG} (validateOffsetCommit)"),
        _r("CommitAccepted", "a valid OffsetCommit is stored and answered NONE per partition",
           f"{OMM} (commitOffset)"),
        _r("CommitUnknownGroup",
           "an OffsetCommit with a generation for a group that does not exist is GROUP_ID_NOT_FOUND (v9+) or ILLEGAL_GENERATION",
           f"{OMM} (validateOffsetCommit)"),
        _r("OffsetCommitAnswer", "OffsetCommit is answered as the group's state requires", f"{OMM}; {CG}"),
        # others
        _r("FetchReturnsCommitted",
           "OffsetFetch returns the last committed offset of each partition asked for (every "
           "committed one when asked for all), with no partition error but UNSTABLE_OFFSET_COMMIT",
           f"{OMM} (fetchOffsets, fetchAllOffsets)"),
        _r("DescribeGroupAnswer",
           "DescribeGroups reports the group's state, protocol type, protocol and members as they are",
           f"{GMM} (describeGroups); {CG} (asDescribedGroup)"),
        _r("AnsweredBeforeClose",
           "a broker answers every request it can parse and closes a connection only when it is "
           "idle or the broker stops: a well-formed group request left unanswered on a connection "
           "the broker closed while it stayed up is a deviation",
           "core/src/main/scala/kafka/network/SocketServer.scala (Processor: closes a connection "
           "on a request that fails to parse, on connections.max.idle.ms, and at shutdown)"),
        _r("ListGroupAnswer",
           "ListGroups lists each group the coordinator has, once, with its protocol type, from v4 "
           "its state and from v5 its type, within the states and types filters",
           f"{GMM} (listGroups); {CG} (asListedGroup, isInStates); {CSG} (asListedGroup); {GCS} (listGroups)"),
        _r("ConsumerGroupDescribeAnswer",
           "ConsumerGroupDescribe reports a consumer group's state, epochs, assignor and members "
           "(epochs, subscriptions, assignments, targets) as of a committed state",
           f"{GMM} (consumerGroupDescribe); {CSG} (asDescribedGroup); {GCS} (consumerGroupDescribe)"),
        _r("DeleteGroupAnswer", "DeleteGroups deletes only Empty groups (NON_EMPTY_GROUP)",
           f"{GMM} (deleteGroups)"),
        # TxnOffsetCommit (KIP-447): GroupCoordinatorService.commitTransactionalOffsets
        # validates the group id, OffsetMetadataManager.validateTransactionalOffsetCommit the
        # group and the member, generation and instance the producer names (the group's
        # validateOffsetCommit with isTransactional), commitTransactionalOffset each
        # partition's metadata
        _r("TxnCommitGroupId", "a TxnOffsetCommit with an empty group id is INVALID_GROUP_ID",
           f"{GCS} (commitTransactionalOffsets)"),
        _r("TxnCommitGenerationCheck",
           "a TxnOffsetCommit naming another generation (or member epoch) than its member's, or a "
           "generation for a group that does not exist, is ILLEGAL_GENERATION: a zombie producer "
           "of an earlier generation is fenced",
           f"{OMM} (validateTransactionalOffsetCommit); {CG} (validateOffsetCommit); {CSG} (validateOffsetCommit)"),
        _r("TxnCommitUnknownMember",
           "a TxnOffsetCommit naming a member the group does not have is UNKNOWN_MEMBER_ID",
           f"{CG} (validateOffsetCommit, validateMember); {CSG} (validateOffsetCommit)"),
        _r("TxnCommitAccepted",
           "a valid TxnOffsetCommit is answered NONE per partition (OFFSET_METADATA_TOO_LARGE for "
           "too long metadata), in any group state, whatever member it names when it names none",
           f"{OMM} (commitTransactionalOffset); {CG} (validateOffsetCommit)"),
        _r("TxnOffsetCommitAnswer", "TxnOffsetCommit is answered as the group's state requires",
           f"{OMM} (commitTransactionalOffset); {GCS} (commitTransactionalOffsets)"),
        # OffsetDelete (KIP-496): GroupCoordinatorService.deleteOffsets validates the group id,
        # OffsetMetadataManager.deleteOffsets the group (GroupMetadataManager.group,
        # ClassicGroup / ConsumerGroup.validateOffsetDelete) and each topic
        # (isSubscribedToTopic), and tombstones the committed offsets of the others
        _r("OffsetDeleteGroupId", "an OffsetDelete with an empty group id is INVALID_GROUP_ID",
           f"{GCS} (deleteOffsets)"),
        _r("OffsetDeleteUnknownGroup",
           "an OffsetDelete for a group the coordinator does not have is GROUP_ID_NOT_FOUND, answering no partition",
           f"{OMM} (deleteOffsets, validateOffsetDelete); {GMM} (group); {GCS} (deleteOffsets)"),
        _r("OffsetDeleteNonEmptyGroup",
           "a classic group with members whose protocol type is not \"consumer\" refuses OffsetDelete (NON_EMPTY_GROUP)",
           f"{CG} (validateOffsetDelete); {OMM} (validateOffsetDelete)"),
        _r("OffsetDeleteSubscribedTopic",
           "the offsets of a topic the group subscribes to are not deleted: each of its partitions is "
           "GROUP_SUBSCRIBED_TO_TOPIC",
           f"{OMM} (deleteOffsets); {CG} (isSubscribedToTopic, computeSubscribedTopics); "
           "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/modern/ModernGroup.java "
           "(isSubscribedToTopic)"),
        _r("OffsetDeleteAccepted",
           "an OffsetDelete the group allows answers NONE for each partition of a topic it does not "
           "subscribe to and deletes that partition's committed offset",
           f"{OMM} (deleteOffsets); {CG} (validateOffsetDelete); {CSG} (validateOffsetDelete)"),
        _r("OffsetDeleteAnswer", "OffsetDelete is answered as the group's state and subscriptions require",
           f"{OMM} (deleteOffsets); {GCS} (deleteOffsets)"),
        _r("MemberIdFresh", "a member id handed out by the coordinator is not already in use",
           f"{CG} (generateMemberId); {GMM}"),
        # ConsumerGroupHeartbeat (KIP-848): GroupMetadataManager.consumerGroupHeartbeat
        _r("ConsumerHeartbeatRequestValid",
           "a ConsumerGroupHeartbeat missing what its epoch requires (member id, rebalance timeout, subscription, empty owned partitions on joining) is INVALID_REQUEST, and an unknown server assignor UNSUPPORTED_ASSIGNOR, before any group is looked at",
           f"{GCS} (throwIfConsumerGroupHeartbeatRequestIsInvalid)"),
        _r("ConsumerMemberEpochCheck",
           "a heartbeat ahead of the member's epoch, or behind it other than at the previous epoch with a subset of the assignment, is FENCED_MEMBER_EPOCH",
           f"{GMM} (throwIfConsumerGroupMemberEpochIsInvalid)"),
        _r("ConsumerUnknownMember",
           "a heartbeat (or leave) naming a member or instance id the consumer group does not have is UNKNOWN_MEMBER_ID",
           f"{CSG} (getOrMaybeCreateMember); {GMM} (throwIfStaticMemberIsUnknown)"),
        _r("ConsumerStaticMembership",
           "an instance id held by a member that did not leave with epoch -2 cannot be taken (UNRELEASED_INSTANCE_ID); a request naming another member id for it is FENCED_INSTANCE_ID",
           f"{GMM} (throwIfInstanceIdIsUnreleased, throwIfInstanceIdIsFenced)"),
        _r("ConsumerGroupIdNotFound",
           "a heartbeat other than a join for a group that is not a consumer group, or a join to a classic group that cannot be converted, is GROUP_ID_NOT_FOUND",
           f"{GMM} (getOrMaybeCreateConsumerGroup, consumerGroup)"),
        _r("ConsumerGroupMaxSize", "a consumer group never grows beyond group.consumer.max.size",
           f"{GMM} (throwIfConsumerGroupIsFull)"),
        _r("ConsumerReconciliation",
           "an accepted heartbeat answers the member's epoch after reconciliation and, when it changed (or on a full request), its assignment: partitions join it only once no other member holds them, and a member stays in its epoch until it stops reporting the partitions it must revoke",
           f"{GMM} (consumerGroupHeartbeat, updateTargetAssignment, maybeReconcile); {CAB}; {TAB}"),
        _r("ConsumerHeartbeatInterval",
           "an accepted ConsumerGroupHeartbeat tells the member the group's heartbeat interval (the group's "
           "consumer.heartbeat.interval.ms, else the broker's group.consumer.heartbeat.interval.ms); a leave, 0",
           f"{GMM} (consumerGroupHeartbeat, consumerGroupHeartbeatIntervalMs, consumerGroupLeave)"),
        _r("ConsumerHeartbeatAnswer", "a ConsumerGroupHeartbeat is answered as the consumer group's state requires",
           f"{GMM} (consumerGroupHeartbeat, consumerGroupLeave)"),
        _r("CommitMemberEpoch",
           "an OffsetCommit to a consumer group must carry the member's current epoch (STALE_MEMBER_EPOCH; ILLEGAL_GENERATION for a member speaking the classic protocol) and, from a consumer-protocol member, use version 9 or later (UNSUPPORTED_VERSION)",
           f"{CSG} (validateOffsetCommit); {OMM} (validateOffsetCommit)"),
        # replay-free checks (groupspec.validate.checks)
        _r("StaleCommitAccepted",
           "an OffsetCommit carrying a generation older than one the group had already completed must not be accepted",
           f"{CG} (validateOffsetCommit); {OMM} (validateOffsetCommit)"),
        _r("OneOwnerPerGenerationInv",
           "in one generation no partition is handed to two members in SyncGroup results",
           f"{GMM} (setAndPropagateAssignment); {CC} (onLeaderElected); {APA}"),
        _r("AssignSubscribedTopicsOnly",
           "the leader assigns a member only partitions of topics it subscribed to",
           f"{APA} (assign); {CC} (performAssignment)"),
        _r("AssignDisjoint", "the leader's assignment gives no partition to two members",
           f"{APA} (assign); {CC} (performAssignment)"),
        _r("CooperativeRevokeFirst",
           "a cooperative assignment never hands a member a partition another member still owns (KIP-429)",
           f"{CC} (validateCooperativeAssignment)"),
        # client-side rules (groupspec.validate.client_rules): the side that deviates is a client
        _r("ClientFetchesOwnedOnly",
           "a member fetches only partitions it owns: assigned in its current generation and not yet "
           "revoked, lost, or (eager) given up before rejoining",
           f"{CC} (onJoinPrepare, onJoinComplete); {AC} (resetStateAndGeneration); "
           "clients/src/main/java/org/apache/kafka/clients/consumer/internals/ConsumerMembershipManager.java "
           "(reconcile)"),
        _r("ClientCommitsOwnedOnly",
           "an OffsetCommit carrying a generation names only partitions assigned to the member in that "
           "generation (or, cooperatively, just revoked by it)",
           f"{CC} (sendOffsetCommitRequest, generationIfStable, onJoinComplete)"),
        _r("CooperativeOwnedIsAssigned",
           "a cooperative member reports as owned only partitions of its assignment in the generation it "
           "reports, never ones it was told to revoke",
           f"{CC} (metadata, onJoinComplete, onJoinPrepare)"),
        _r("EagerRevokesBeforeJoin",
           "an eager member gives up every partition before it sends JoinGroup (it reports none owned)",
           f"{CC} (constructor: the protocol all its assignors support; onJoinPrepare, metadata)"),
        _r("ClientIgnoresStaleErrors",
           "an error answering a heartbeat of an older generation than the member's does not reset its "
           "generation or member id (KAFKA-9823)",
           f"{AC} (HeartbeatResponseHandler, generationUnchanged)"),
        _r("ClientKeepsMemberId",
           "a dynamic member rejoins with the member id it holds: only UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID "
           "or leaving the group drops it, never ILLEGAL_GENERATION, a rebalance or a coordinator error "
           "(KAFKA-13419, KAFKA-13214)",
           f"{AC} (resetStateAndGeneration, resetStateOnResponseError, resetGenerationOnLeaveGroup, "
           "JoinGroupResponseHandler)"),
        _r("ClientStopsWhenFenced",
           "after UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION or FENCED_INSTANCE_ID for its current member id and "
           "generation, a member no longer heartbeats or commits with them; after a ConsumerGroupHeartbeat "
           "answered FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID, a consumer-protocol member no longer commits "
           "or fetches offsets with that member epoch",
           f"{AC} (HeartbeatResponseHandler, resetStateOnResponseError); {CC} (OffsetCommitResponseHandler); "
           "AbstractHeartbeatRequestManager.java (onErrorResponse), AbstractMembershipManager.java "
           "(transitionToFenced, resetEpoch), CommitRequestManager.java (onMemberEpochUpdated)"),
        _r("LeaderSyncsItsGeneration",
           "a member told it leads a generation sends that generation's SyncGroup, with its assignment, "
           "before it rejoins (KAFKA-13406: a leader that failed its own assignment rejoined again and again)",
           f"{AC} (JoinGroupResponseHandler, onLeaderElected)"),
        _r("ConsumerClientRejoinsAtZero",
           "a consumer-protocol member out of the group (fenced with FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID, "
           "or after its leave) rejoins at epoch 0: no heartbeat with its fenced epoch (KAFKA-16251), no rejoin "
           "sent as a leave (KAFKA-19335)",
           "clients/src/main/java/org/apache/kafka/clients/consumer/internals/AbstractMembershipManager.java "
           "(transitionToFenced, resetEpoch, shouldSkipHeartbeat, transitionToJoining)"),
        _r("ConsumerClientRequestValid",
           "a consumer-protocol member's heartbeat carries what its epoch requires (a member id, a full "
           "request at epoch 0, an instance id to leave as static): none the coordinator must refuse as "
           "INVALID_REQUEST (KAFKA-16190)",
           f"{GCS} (throwIfConsumerGroupHeartbeatRequestIsInvalid); "
           "clients/src/main/java/org/apache/kafka/clients/consumer/internals/ConsumerHeartbeatRequestManager.java"),
        _r("HeartbeatKeepsSessionAlive",
           "a member heartbeats often enough to keep its session: gaps longer than its session timeout "
           "again and again are its heartbeat cadence, not a pause",
           f"{AC} (HeartbeatThread); {HB} (heartbeat.interval.ms below session.timeout.ms)"),
        # record invariants (groupspec.invariants), for traces that carry reference records
        _r("ValidTransitionInv", "every group-state transition is in Kafka's valid-previous-state table",
           "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/classic/ClassicGroupState.java; "
           f"{CG} (transitionTo)"),
        _r("GenerationMonotonicInv", "the generation grows by one per completed join phase",
           f"{CG} (initNextGeneration)"),
        _r("NoStaleCommitInv", "no commit from a stale generation, unknown member or fenced instance is stored",
           f"{CG} (validateOffsetCommit); {OMM}"),
        _r("LeaderIsMemberInv", "a group with members has a leader that is a member", f"{CG}"),
        _r("StaticMembersInv", "each group.instance.id maps to exactly one member", f"{CG} (staticMembers)"),
        _r("PendingMembersInv", "a KIP-394 pending member id is never also a member", f"{CG} (pendingJoinMembers)"),
        _r("ParkedRequestsInv",
           "JoinGroups wait only in PreparingRebalance, SyncGroups only in CompletingRebalance", f"{GMM}"),
    ]
}

#: rules that name a cause whatever the timing: when one exchange breaks one of these and
#: another rule, this one is named first (a broker numbering generations from 0 is told so,
#: not that its join answer came at another time)
FIRST_CAUSE = frozenset({"GenerationStartsAtOne", "GenerationIncrements", "HeartbeatWhileLoading",
                         "SessionExpiryRemovesMember"})

_BY_ANSWER: dict[tuple[str, Error | None], str] = {
    ("JoinGroup", Error.MEMBER_ID_REQUIRED): "JoinMemberIdRequired",
    ("JoinGroup", Error.UNKNOWN_MEMBER_ID): "JoinUnknownMember",
    ("JoinGroup", Error.FENCED_INSTANCE_ID): "StaticMemberFencing",
    ("JoinGroup", Error.INCONSISTENT_GROUP_PROTOCOL): "JoinProtocolSupported",
    ("JoinGroup", Error.INVALID_SESSION_TIMEOUT): "JoinSessionTimeoutBounds",
    ("JoinGroup", Error.GROUP_MAX_SIZE_REACHED): "GroupMaxSize",
    ("JoinGroup", Error.NONE): "JoinCompletion",
    ("JoinGroup", None): "JoinWaitsForAllMembers",
    ("SyncGroup", Error.UNKNOWN_MEMBER_ID): "SyncUnknownMember",
    ("SyncGroup", Error.FENCED_INSTANCE_ID): "StaticMemberFencing",
    ("SyncGroup", Error.ILLEGAL_GENERATION): "SyncGenerationCheck",
    ("SyncGroup", Error.REBALANCE_IN_PROGRESS): "SyncDuringPreparingRebalance",
    ("SyncGroup", Error.NONE): "SyncPropagatesLeaderAssignment",
    ("SyncGroup", Error.INCONSISTENT_GROUP_PROTOCOL): "SyncProtocolConsistent",
    ("SyncGroup", None): "SyncWaitsForLeader",
    ("Heartbeat", Error.UNKNOWN_MEMBER_ID): "HeartbeatUnknownMember",
    ("Heartbeat", Error.FENCED_INSTANCE_ID): "StaticMemberFencing",
    ("Heartbeat", Error.ILLEGAL_GENERATION): "HeartbeatGenerationCheck",
    ("Heartbeat", Error.REBALANCE_IN_PROGRESS): "HeartbeatSignalsRebalance",
    ("OffsetCommit", Error.ILLEGAL_GENERATION): "CommitGenerationCheck",
    ("OffsetCommit", Error.UNKNOWN_MEMBER_ID): "CommitUnknownMember",
    ("OffsetCommit", Error.FENCED_INSTANCE_ID): "StaticMemberFencing",
    ("OffsetCommit", Error.REBALANCE_IN_PROGRESS): "CommitDuringCompletingRebalance",
    ("OffsetCommit", Error.NONE): "CommitAccepted",
    ("OffsetCommit", Error.GROUP_ID_NOT_FOUND): "CommitUnknownGroup",
    ("OffsetCommit", Error.STALE_MEMBER_EPOCH): "CommitMemberEpoch",
    ("OffsetCommit", Error.UNSUPPORTED_VERSION): "CommitMemberEpoch",
    ("ConsumerGroupHeartbeat", Error.INVALID_REQUEST): "ConsumerHeartbeatRequestValid",
    ("ConsumerGroupHeartbeat", Error.UNSUPPORTED_ASSIGNOR): "ConsumerHeartbeatRequestValid",
    ("ConsumerGroupHeartbeat", Error.FENCED_MEMBER_EPOCH): "ConsumerMemberEpochCheck",
    ("ConsumerGroupHeartbeat", Error.UNKNOWN_MEMBER_ID): "ConsumerUnknownMember",
    ("ConsumerGroupHeartbeat", Error.UNRELEASED_INSTANCE_ID): "ConsumerStaticMembership",
    ("ConsumerGroupHeartbeat", Error.FENCED_INSTANCE_ID): "ConsumerStaticMembership",
    ("ConsumerGroupHeartbeat", Error.GROUP_ID_NOT_FOUND): "ConsumerGroupIdNotFound",
    ("ConsumerGroupHeartbeat", Error.GROUP_MAX_SIZE_REACHED): "ConsumerGroupMaxSize",
    ("ConsumerGroupHeartbeat", Error.NONE): "ConsumerReconciliation",
    ("TxnOffsetCommit", Error.INVALID_GROUP_ID): "TxnCommitGroupId",
    ("TxnOffsetCommit", Error.ILLEGAL_GENERATION): "TxnCommitGenerationCheck",
    ("TxnOffsetCommit", Error.UNKNOWN_MEMBER_ID): "TxnCommitUnknownMember",
    ("TxnOffsetCommit", Error.FENCED_INSTANCE_ID): "StaticMemberFencing",
    ("TxnOffsetCommit", Error.OFFSET_METADATA_TOO_LARGE): "TxnCommitAccepted",
    ("TxnOffsetCommit", Error.NONE): "TxnCommitAccepted",
    ("OffsetDelete", Error.INVALID_GROUP_ID): "OffsetDeleteGroupId",
    ("OffsetDelete", Error.GROUP_ID_NOT_FOUND): "OffsetDeleteUnknownGroup",
    ("OffsetDelete", Error.NON_EMPTY_GROUP): "OffsetDeleteNonEmptyGroup",
    ("OffsetDelete", Error.GROUP_SUBSCRIBED_TO_TOPIC): "OffsetDeleteSubscribedTopic",
    ("OffsetDelete", Error.NONE): "OffsetDeleteAccepted",
}

#: rules decided by what the broker answered, whatever the reference's answer
_BY_BROKER: dict[tuple[str, Error | None], str] = {
    ("Heartbeat", Error.COORDINATOR_LOAD_IN_PROGRESS): "HeartbeatWhileLoading",
}

_DEFAULT: dict[str, str] = {
    "JoinGroup": "JoinGroupAnswer",
    "SyncGroup": "SyncGroupAnswer",
    "Heartbeat": "HeartbeatAnswer",
    "LeaveGroup": "LeaveGroupAnswer",
    "OffsetCommit": "OffsetCommitAnswer",
    "OffsetFetch": "FetchReturnsCommitted",
    "DescribeGroups": "DescribeGroupAnswer",
    "ListGroups": "ListGroupAnswer",
    "DeleteGroups": "DeleteGroupAnswer",
    "ConsumerGroupHeartbeat": "ConsumerHeartbeatAnswer",
    "OffsetDelete": "OffsetDeleteAnswer",
    "TxnOffsetCommit": "TxnOffsetCommitAnswer",
    "ConsumerGroupDescribe": "ConsumerGroupDescribeAnswer",
}


def broker_rule(api: str, broker: Error | None) -> Rule | None:
    """The rule a broker's answer ``broker`` to ``api`` breaks in any state of the group
    (so no history from before the trace can excuse it), if there is one."""
    name = _BY_BROKER.get((api, broker))
    return RULES[name] if name is not None else None


def rule_for(api: str, answer: Error | None) -> Rule:
    """The rule behind the reference's answer ``answer`` (None: it keeps the request parked)."""
    name = _BY_ANSWER.get((api, answer)) or _DEFAULT.get(api, "JoinGroupAnswer")
    return RULES[name]


def reported_rule(api: str, rule: Rule, broker: Error | None) -> Rule:
    """The rule a replay divergence is reported under, given ``rule``, the one the replay
    named it by (after the reference's answer), and ``broker``, the error the broker
    answered. A ConsumerGroupHeartbeat the reference accepts is judged by
    ConsumerReconciliation, which speaks of what an accepted answer carries; a broker that
    refused the heartbeat broke the rule of the error it answered instead (KAFKA-17228: a
    consumer-protocol member replacing a classic static member refused
    UNRELEASED_INSTANCE_ID is a matter of ConsumerStaticMembership). The replay's search
    keeps the first name (a reconciliation divergence widens its horizon)."""
    if api == "ConsumerGroupHeartbeat" and rule.name == "ConsumerReconciliation" \
            and broker is not None and broker is not Error.NONE:
        return rule_for(api, broker)
    return rule
