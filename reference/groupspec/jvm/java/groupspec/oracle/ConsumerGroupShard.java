package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.coordinator.common.runtime.CoordinatorExecutor;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupCurrentMemberAssignmentKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupCurrentMemberAssignmentValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMetadataValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupPartitionMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupRegularExpressionKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupRegularExpressionValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMetadataValue;
import org.apache.kafka.coordinator.group.generated.GroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.OffsetCommitKey;
import org.apache.kafka.coordinator.group.generated.OffsetCommitValue;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroup;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroupMember;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One Kafka 4.1.2 group coordinator shard (GroupCoordinatorShard, its GroupMetadataManager
 * and OffsetMetadataManager) driven by consumer-group (KIP-848) requests one at a time, with
 * a clock that moves only when told and a metadata image of the topics the input names.
 * The consumer-protocol sibling of {@link ClassicGroupShard}, sharing its runtime
 * stand-ins ({@link ManualShardRuntime}, {@link ManualClock}, {@link ManualTimer}); what
 * differs (the executor, the metadata image, the step's output) stays in each tool.
 *
 * <p>Input, one of:
 * <ul>
 * <li>{"action": "reset", "config": {kafka property: value}, "topics": [[name, id, partitions], ...]}:
 * a fresh shard at time 0, loaded with a metadata image holding those topics (ids in
 * Kafka's base64 text form);</li>
 * <li>{"action": "op", "op": {...}}: one step: a request ("heartbeat", "commit", "fetch",
 * "describe", "list", with "rid") at the current time, {"kind": "advance", "to": ms} (the
 * timers due on the way fire, each at its own deadline), {"kind": "failover"}, or
 * {"kind": "image", "topics": [...]}: a new metadata image (topics created, partitions
 * added) handed to the shard.</li>
 * </ul>
 * Classic requests to the shard's groups, answered as the service answers them:
 * "classic_join" (the fields of ClassicGroupShard's "join"), "classic_sync" ("group",
 * "generation_id", "member_id", "group_instance_id", "protocol_type", "protocol_name"),
 * "classic_heartbeat" ("group", "generation_id", "member_id", "group_instance_id") and
 * "classic_leave" ("group", "members": [[member id, instance id or null]]).
 * DeleteGroups ("delete", "groups") is answered as the service answers it; {"kind": "regex"}
 * runs the executor's pending tasks (regular-expression resolutions) and their writes.
 * Output of a step: {"completed": [[rid, response]], "ids": member ids Kafka generated,
 * "records": the records appended in the step, in order, "pending_tasks": the executor's
 * task keys, "groups": {id: summary}}.
 *
 * <p>The runtime played here is {@link ManualShardRuntime}, shared with ClassicGroupShard:
 * each result's records are appended to a log and replayed at once (a write that always
 * succeeds); an operation that throws is answered as GroupCoordinatorService answers it
 * (CoordinatorOperationExceptionHelper with the service's handler); a failover unloads the
 * shard and loads a fresh one that replays the whole log. The service's own
 * ConsumerGroupHeartbeat checks (throwIfConsumerGroupHeartbeatRequestIsInvalid, a private
 * method) are applied here before the shard, written from their documented rules. Timers due
 * at the same millisecond fire in the reference's order (session timeouts, then rebalance
 * timeouts, by group and member; the shard's periodic jobs last), one of the orders Kafka's
 * timing wheel may produce.
 */
public final class ConsumerGroupShard extends ShardTool {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Logger LOG = LoggerFactory.getLogger(ConsumerGroupShard.class);

    @Override
    ManualShardRuntime reset(JsonNode input) throws ReflectiveOperationException {
        return new State(input.path("config"), input.path("topics"));
    }

    /** The runtime's executor (CoordinatorExecutorImpl) played by hand: a key holds at most
     * one task; the tasks run when the driver says ("regex" step), in the order they were
     * scheduled, each followed by its write operation, as the executor thread and the
     * runtime would run them a few milliseconds later. */
    private static final class ManualExecutor implements CoordinatorExecutor<CoordinatorRecord> {
        final Map<String, Object[]> tasks = new java.util.LinkedHashMap<>();

        @Override
        public <R> boolean schedule(String key, TaskRunnable<R> task, TaskOperation<CoordinatorRecord, R> operation) {
            if (tasks.containsKey(key)) {
                return false;
            }
            tasks.put(key, new Object[] {task, operation});
            return true;
        }

        @Override
        public boolean isScheduled(String key) {
            return tasks.containsKey(key);
        }

        @Override
        public void cancel(String key) {
            tasks.remove(key);
        }
    }

    static ArrayNode partitionsJson(Map<Uuid, Set<Integer>> parts) {
        ArrayNode out = JSON.createArrayNode();
        TreeMap<String, TreeSet<Integer>> sorted = new TreeMap<>();
        parts.forEach((t, ps) -> {
            if (!ps.isEmpty()) {
                sorted.computeIfAbsent(t.toString(), x -> new TreeSet<>()).addAll(ps);
            }
        });
        sorted.forEach((t, ps) -> {
            ArrayNode each = out.addArray();
            each.add(t);
            ArrayNode pa = each.addArray();
            ps.forEach(pa::add);
        });
        return out;
    }

    static ArrayNode recordPartitionsJson(List<?> topics) {
        Map<Uuid, Set<Integer>> parts = new HashMap<>();
        for (Object o : topics) {
            if (o instanceof ConsumerGroupTargetAssignmentMemberValue.TopicPartition tp) {
                parts.computeIfAbsent(tp.topicId(), x -> new TreeSet<>()).addAll(tp.partitions());
            } else if (o instanceof ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions tp) {
                parts.computeIfAbsent(tp.topicId(), x -> new TreeSet<>()).addAll(tp.partitions());
            } else {
                throw new IllegalArgumentException("not a record's topic partitions: " + o);
            }
        }
        return partitionsJson(parts);
    }

    private static final class State extends ManualShardRuntime {
        ManualExecutor executor;
        MetadataImage image;
        long imageOffset = 1;
        /** the records appended in the step, as {@link #recordJson} writes them */
        ArrayNode stepRecords;

        State(JsonNode cfg, JsonNode topics) throws ReflectiveOperationException {
            super(cfg, "[groupspec consumer shard] ", LOG);
            image = imageDelta(MetadataImage.EMPTY, topics).apply(new MetadataProvenance(imageOffset, 1, 0, true));
            load();
        }

        @Override
        CoordinatorExecutor<CoordinatorRecord> newExecutor() {
            // a shard loaded afresh has no pending task (the runtime cancels them on unload)
            executor = new ManualExecutor();
            return executor;
        }

        @Override
        MetadataImage loadedImage() {
            return image;
        }

        @Override
        void appended(CoordinatorRecord record) {
            stepRecords.add(recordJson(record));
        }

        /** The delta from {@code from} to an image with {@code topics} ([name, id, partitions]):
         * new topics and the partitions added to existing ones (topics are never deleted or
         * shrunk here: deletion goes through the service's onPartitionsDeleted too). */
        static MetadataDelta imageDelta(MetadataImage from, JsonNode topics) {
            MetadataDelta delta = new MetadataDelta(from);
            for (JsonNode t : topics) {
                Uuid id = Uuid.fromString(t.get(1).asText());
                int have = 0;
                if (from.topics().getTopic(id) == null) {
                    delta.replay(new TopicRecord().setName(t.get(0).asText()).setTopicId(id));
                } else {
                    have = from.topics().getTopic(id).partitions().size();
                }
                for (int p = have; p < t.get(2).asInt(); p++) {
                    delta.replay(new PartitionRecord().setTopicId(id).setPartitionId(p)
                        .setReplicas(List.of(0)).setIsr(List.of(0)).setLeader(0)
                        .setLeaderEpoch(0).setPartitionEpoch(0));
                }
            }
            return delta;
        }

        /** Every pending executor task runs now, then its write operation (in scheduling order). */
        @SuppressWarnings({"unchecked", "rawtypes"})
        void runTasks() {
            while (!executor.tasks.isEmpty()) {
                String key = executor.tasks.keySet().iterator().next();
                Object[] entry = executor.tasks.remove(key);
                Object result = null;
                Throwable failure = null;
                try {
                    result = ((CoordinatorExecutor.TaskRunnable) entry[0]).run();
                } catch (Throwable e) {
                    failure = e;
                }
                apply(((CoordinatorExecutor.TaskOperation) entry[1]).onComplete(result, failure));
            }
        }

        /** A new metadata image reaches the shard (GroupCoordinatorShard.onNewMetadataImage). */
        void newImage(JsonNode topics) {
            MetadataDelta delta = imageDelta(image, topics);
            imageOffset++;
            image = delta.apply(new MetadataProvenance(imageOffset, 1, 0, true));
            shard.onNewMetadataImage(image, delta);
        }

        /** A record as [kind, group, key..., value or null]: the reference's record kinds. */
        static ArrayNode recordJson(CoordinatorRecord record) {
            ArrayNode o = JSON.createArrayNode();
            Object key = record.key();
            Object value = record.value() == null ? null : record.value().message();
            if (key instanceof ConsumerGroupMetadataKey k) {
                o.add("epoch").add(k.groupId());
                if (value instanceof ConsumerGroupMetadataValue v) {
                    o.addArray().add(v.epoch()).add(v.metadataHash());
                } else {
                    o.addNull();
                }
            } else if (key instanceof ConsumerGroupMemberMetadataKey k) {
                o.add("subscription").add(k.groupId()).add(k.memberId());
                if (value instanceof ConsumerGroupMemberMetadataValue v) {
                    ObjectNode vo = o.addObject();
                    vo.put("instance_id", v.instanceId());
                    vo.put("rack_id", v.rackId());
                    vo.put("client_id", v.clientId());
                    vo.put("client_host", v.clientHost());
                    ArrayNode names = vo.putArray("subscribed_topic_names");
                    new TreeSet<>(v.subscribedTopicNames()).forEach(names::add);
                    vo.put("subscribed_topic_regex", v.subscribedTopicRegex());
                    vo.put("rebalance_timeout_ms", v.rebalanceTimeoutMs());
                    vo.put("server_assignor", v.serverAssignor());
                    if (v.classicMemberMetadata() != null) {
                        vo.set("classic", classicJson(v.classicMemberMetadata().sessionTimeoutMs(),
                            v.classicMemberMetadata().supportedProtocols()));
                    }
                } else {
                    o.addNull();
                }
            } else if (key instanceof ConsumerGroupPartitionMetadataKey k) {
                // the deprecated subscription metadata: 4.1 writes only its tombstone
                o.add("subscription_metadata").add(k.groupId());
                if (value == null) {
                    o.addNull();
                } else {
                    o.add("value");
                }
            } else if (key instanceof ConsumerGroupTargetAssignmentMemberKey k) {
                o.add("target").add(k.groupId()).add(k.memberId());
                if (value instanceof ConsumerGroupTargetAssignmentMemberValue v) {
                    o.add(recordPartitionsJson(v.topicPartitions()));
                } else {
                    o.addNull();
                }
            } else if (key instanceof ConsumerGroupTargetAssignmentMetadataKey k) {
                o.add("target_epoch").add(k.groupId());
                if (value instanceof ConsumerGroupTargetAssignmentMetadataValue v) {
                    o.add(v.assignmentEpoch());
                } else {
                    o.addNull();
                }
            } else if (key instanceof ConsumerGroupCurrentMemberAssignmentKey k) {
                o.add("current").add(k.groupId()).add(k.memberId());
                if (value instanceof ConsumerGroupCurrentMemberAssignmentValue v) {
                    ArrayNode vo = o.addArray();
                    vo.add(v.memberEpoch()).add(v.previousMemberEpoch()).add(v.state());
                    vo.add(recordPartitionsJson(v.assignedPartitions()));
                    vo.add(recordPartitionsJson(v.partitionsPendingRevocation()));
                } else {
                    o.addNull();
                }
            } else if (key instanceof ConsumerGroupRegularExpressionKey k) {
                o.add("regex").add(k.groupId()).add(k.regularExpression());
                if (value instanceof ConsumerGroupRegularExpressionValue v) {
                    ArrayNode vo = o.addArray();
                    ArrayNode topics = vo.addArray();
                    new TreeSet<>(v.topics()).forEach(topics::add);
                    vo.add(v.version()).add(v.timestamp());
                } else {
                    o.addNull();
                }
            } else if (key instanceof OffsetCommitKey k) {
                o.add("offset").add(k.group()).add(k.topic()).add(k.partition());
                if (value instanceof OffsetCommitValue v) {
                    o.addArray().add(v.offset()).add(v.metadata()).add(v.commitTimestamp());
                } else {
                    o.addNull();
                }
            } else if (key instanceof GroupMetadataKey k) {
                o.add("classic").add(k.group()).add(value == null ? "tombstone" : "value");
            } else {
                o.add(key.getClass().getSimpleName());
            }
            return o;
        }

        /** A classic SyncGroup (classicGroupSync), answered when its future completes: {"error"}. */
        /** the classic members' ids reported so far */
        final java.util.Set<String> classicIds = new java.util.HashSet<>();

        @Override
        JsonNode step(JsonNode op) throws ReflectiveOperationException {
            begin(op);
            stepRecords = JSON.createArrayNode();
            String kind = op.path("kind").asText();
            int rid = op.path("rid").asInt();
            switch (kind) {
                case "advance": advance(op.path("to").asLong()); break;
                case "failover": failover(); break;
                case "heartbeat": heartbeat(rid, op); break;
                case "commit": commit(rid, op, 9); break;
                case "txn_commit": txnCommit(rid, op); break;
                case "fetch": fetch(rid, op); break;
                case "describe": describe(rid, op); break;
                case "list": list(rid, op, true); break;
                case "image": newImage(op.path("topics")); break;
                case "delete": delete(rid, op, 2); break;
                case "regex": runTasks(); break;
                case "offset_delete": offsetDelete(rid, op); break;
                case "classic_heartbeat": classicHeartbeat(rid, op); break;
                case "classic_join": join(rid, op); break;
                case "classic_sync": sync(rid, op); break;
                case "classic_leave": classicLeave(rid, op); break;
                default: throw new IllegalArgumentException("unknown op kind: " + kind);
            }
            // member ids Kafka drew for classic members of classic groups (a JoinGroup parks
            // while its member is already in the group), so the driver can hand them to the
            // reference
            for (String gid : groupIds) {
                try {
                    org.apache.kafka.coordinator.group.classic.ClassicGroup cg = groups.classicGroup(gid, Long.MAX_VALUE);
                    cg.allMembers().forEach(m -> {
                        if (classicIds.add(m.memberId()) && !newIds.contains(m.memberId())) {
                            newIds.add(m.memberId());
                        }
                    });
                } catch (Exception e) {
                    // not a classic group
                }
            }
            ObjectNode out = JSON.createObjectNode();
            out.set("completed", completed);
            ArrayNode ids = out.putArray("ids");
            newIds.forEach(ids::add);
            out.set("records", stepRecords);
            ArrayNode pending = out.putArray("pending_tasks");
            executor.tasks.keySet().forEach(pending::add);
            ObjectNode summary = out.putObject("groups");
            for (String gid : groupIds) {
                ObjectNode g = summarize(gid);
                if (g != null) {
                    summary.set(gid, g);
                }
            }
            return out;
        }

        ObjectNode summarize(String gid) {
            ConsumerGroup g;
            try {
                g = groups.consumerGroup(gid, Long.MAX_VALUE);
            } catch (Exception e) {
                return null;
            }
            ObjectNode o = JSON.createObjectNode();
            o.put("state", g.stateAsString());
            o.put("group_epoch", g.groupEpoch());
            o.put("assignment_epoch", g.assignmentEpoch());
            o.put("metadata_hash", g.metadataHash());
            o.put("preferred_assignor", g.preferredServerAssignor().orElse(null));
            ObjectNode members = o.putObject("members");
            for (ConsumerGroupMember m : g.members().values()) {
                ObjectNode d = members.putObject(m.memberId());
                d.put("instance_id", m.instanceId());
                d.put("rack_id", m.rackId());
                d.put("member_epoch", m.memberEpoch());
                d.put("previous_member_epoch", m.previousMemberEpoch());
                d.put("state", m.state().value());
                d.put("rebalance_timeout_ms", m.rebalanceTimeoutMs());
                d.put("client_id", m.clientId());
                d.put("client_host", m.clientHost());
                ArrayNode names = d.putArray("subscribed_topic_names");
                new TreeSet<>(m.subscribedTopicNames()).forEach(names::add);
                d.put("subscribed_topic_regex", m.subscribedTopicRegex());
                d.put("server_assignor", m.serverAssignorName().orElse(null));
                d.set("assigned", partitionsJson(m.assignedPartitions()));
                d.set("pending_revocation", partitionsJson(m.partitionsPendingRevocation()));
                if (m.useClassicProtocol()) {
                    d.set("classic", classicJson(m.classicProtocolSessionTimeout().get(),
                        m.supportedClassicProtocols().get()));
                }
            }
            ObjectNode target = o.putObject("target");
            for (Map.Entry<String, Assignment> e : g.targetAssignment().entrySet()) {
                target.set(e.getKey(), partitionsJson(e.getValue().partitions()));
            }
            ObjectNode regexes = o.putObject("resolved_regexes");
            new TreeMap<>(g.resolvedRegularExpressions()).forEach((rx, rr) -> {
                ArrayNode each = regexes.putArray(rx);
                ArrayNode topics = each.addArray();
                new TreeSet<>(rr.topics).forEach(topics::add);
                each.add(rr.version).add(rr.timestamp);
            });
            ObjectNode statics = o.putObject("static_members");
            new TreeMap<>(g.staticMembers()).forEach(statics::put);
            // the group's running timers: [kind, member, deadline]
            List<String[]> found = new ArrayList<>();
            String session = "session-timeout-" + gid + "-";
            String rebalance = "rebalance-timeout-" + gid + "-";
            // a classic member's join and sync timeouts (consumerGroupJoinKey, consumerGroupSyncKey)
            String join = "join-" + gid + "-";
            String sync = "sync-" + gid + "-";
            for (ManualTimer.Scheduled t : timer.byKey.values()) {
                if (t.key.startsWith(session)) {
                    found.add(new String[] {"session", t.key.substring(session.length()), Long.toString(t.deadline)});
                } else if (t.key.startsWith(rebalance)) {
                    found.add(new String[] {"rebalance", t.key.substring(rebalance.length()), Long.toString(t.deadline)});
                } else if (t.key.startsWith(join)) {
                    found.add(new String[] {"join", t.key.substring(join.length()), Long.toString(t.deadline)});
                } else if (t.key.startsWith(sync)) {
                    found.add(new String[] {"sync", t.key.substring(sync.length()), Long.toString(t.deadline)});
                }
            }
            o.set("timers", timersJson(found));
            putOffsets(o, gid);
            return o;
        }

        /** A classic member's metadata: [session timeout, [protocol name, ...]]. */
        static ArrayNode classicJson(int sessionTimeoutMs, List<ConsumerGroupMemberMetadataValue.ClassicProtocol> protocols) {
            ArrayNode a = JSON.createArrayNode();
            a.add(sessionTimeoutMs);
            ArrayNode names = a.addArray();
            protocols.forEach(p -> names.add(p.name()));
            return a;
        }

        // ------------------------------------------------------------------ timers

        /** Sort key for timers due at one millisecond: the reference's (kind, group, member),
         * its TimerKind order: a classic group's heartbeat (a pending member's after), join and
         * sync timers; a consumer group's session, rebalance, and a classic member's join and
         * sync timeouts; the shard's periodic jobs last. */
        @Override
        Object[] tieKey(ManualTimer.Scheduled s) {
            String k = s.key;
            int rank;
            String rest;
            if (k.startsWith("heartbeat-")) {
                rest = k.substring("heartbeat-".length());
                rank = isPendingClassicMember(rest) ? 1 : 0;
            } else if (k.startsWith("join-") && groupIds.contains(k.substring("join-".length()))) {
                rank = 2;
                rest = k.substring("join-".length());
            } else if (k.startsWith("sync-") && groupIds.contains(k.substring("sync-".length()))) {
                rank = 3;
                rest = k.substring("sync-".length());
            } else if (k.startsWith("session-timeout-")) {
                rank = 5;
                rest = k.substring("session-timeout-".length());
            } else if (k.startsWith("rebalance-timeout-")) {
                rank = 6;
                rest = k.substring("rebalance-timeout-".length());
            } else if (k.startsWith("join-")) {
                rank = 7;
                rest = k.substring("join-".length());
            } else if (k.startsWith("sync-")) {
                rank = 8;
                rest = k.substring("sync-".length());
            } else {
                rank = 9;
                rest = k;
            }
            return new Object[] {s.deadline, rank, rest};
        }

        /** Whether "group-member" names a pending member of a classic group. */
        boolean isPendingClassicMember(String groupAndMember) {
            for (String gid : groupIds) {
                if (groupAndMember.startsWith(gid + "-")) {
                    try {
                        return groups.classicGroup(gid, Long.MAX_VALUE)
                            .isPendingMember(groupAndMember.substring(gid.length() + 1));
                    } catch (Exception e) {
                        return false;
                    }
                }
            }
            return false;
        }

        // ------------------------------------------------------------------ requests

        static boolean blank(String s) {
            return s != null && s.trim().isEmpty();
        }

        /** GroupCoordinatorService's checks of a ConsumerGroupHeartbeat before the shard
         * (its rules, in its order), or null when the request passes them. */
        ApiError serviceCheck(ConsumerGroupHeartbeatRequestData req, int version) {
            Errors bad = Errors.INVALID_REQUEST;
            if ((version >= 1 || req.memberEpoch() > 0 || req.memberEpoch() == -1) && blank(req.memberId())) {
                return new ApiError(bad, "MemberId can't be empty.");
            }
            if (blank(req.groupId())) {
                return new ApiError(bad, "GroupId can't be empty.");
            }
            if (blank(req.instanceId())) {
                return new ApiError(bad, "InstanceId can't be empty.");
            }
            if (blank(req.rackId())) {
                return new ApiError(bad, "RackId can't be empty.");
            }
            if (req.memberEpoch() == 0) {
                if (req.rebalanceTimeoutMs() == -1) {
                    return new ApiError(bad, "RebalanceTimeoutMs must be provided in first request.");
                }
                if (req.topicPartitions() == null || !req.topicPartitions().isEmpty()) {
                    return new ApiError(bad, "TopicPartitions must be empty when (re-)joining.");
                }
                if (req.subscribedTopicNames() == null && req.subscribedTopicRegex() == null) {
                    return new ApiError(bad, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.");
                }
            } else if (req.memberEpoch() == -2) {
                if (req.instanceId() == null) {
                    return new ApiError(bad, "InstanceId can't be null.");
                }
            } else if (req.memberEpoch() < -2) {
                return new ApiError(bad, "MemberEpoch is invalid.");
            }
            // a HashSet, as the service's constructor collects the names (Collectors.toSet()):
            // the message lists them in its order
            Set<String> assignors = config.consumerGroupAssignors().stream().map(a -> a.name())
                .collect(java.util.stream.Collectors.toSet());
            if (req.serverAssignor() != null && !assignors.contains(req.serverAssignor())) {
                return new ApiError(Errors.UNSUPPORTED_ASSIGNOR, "ServerAssignor " + req.serverAssignor()
                    + " is not supported. Supported assignors: " + String.join(", ", assignors) + ".");
            }
            return null;
        }

        void heartbeat(int rid, JsonNode op) {
            ConsumerGroupHeartbeatRequestData req = new ConsumerGroupHeartbeatRequestData()
                .setGroupId(op.path("group").asText())
                .setMemberId(op.path("member_id").asText())
                .setMemberEpoch(op.path("member_epoch").asInt())
                .setInstanceId(optText(op, "instance_id"))
                .setRackId(optText(op, "rack_id"))
                .setRebalanceTimeoutMs(op.path("rebalance_timeout_ms").asInt(-1))
                .setSubscribedTopicRegex(optText(op, "subscribed_topic_regex"))
                .setServerAssignor(optText(op, "server_assignor"));
            JsonNode names = op.get("subscribed_topic_names");
            if (names == null || names.isNull()) {
                req.setSubscribedTopicNames(null);
            } else {
                List<String> list = new ArrayList<>();
                names.forEach(n -> list.add(n.asText()));
                req.setSubscribedTopicNames(list);
            }
            JsonNode owned = op.get("topic_partitions");
            if (owned == null || owned.isNull()) {
                req.setTopicPartitions(null);
            } else {
                List<ConsumerGroupHeartbeatRequestData.TopicPartitions> list = new ArrayList<>();
                for (JsonNode t : owned) {
                    List<Integer> ps = new ArrayList<>();
                    t.get(1).forEach(p -> ps.add(p.asInt()));
                    list.add(new ConsumerGroupHeartbeatRequestData.TopicPartitions()
                        .setTopicId(Uuid.fromString(t.get(0).asText())).setPartitions(ps));
                }
                req.setTopicPartitions(list);
            }
            int version = op.path("version").asInt(1);
            AuthorizableRequestContext ctx = context(68, version, op.path("client_id").asText("consumer"));
            ConsumerGroupHeartbeatResponseData resp;
            ApiError invalid = serviceCheck(req, version);
            if (invalid != null) {
                resp = new ConsumerGroupHeartbeatResponseData()
                    .setErrorCode(invalid.error().code()).setErrorMessage(invalid.message());
            } else {
                try {
                    resp = apply(shard.consumerGroupHeartbeat(ctx, req));
                } catch (Throwable e) {
                    resp = onError("consumer-group-heartbeat", req, e,
                        (error, message) -> new ConsumerGroupHeartbeatResponseData()
                            .setErrorCode(error.code()).setErrorMessage(message));
                }
            }
            ObjectNode o = JSON.createObjectNode();
            o.put("error", resp.errorCode());
            o.put("error_message", resp.errorMessage());
            o.put("member_id", resp.memberId());
            o.put("member_epoch", resp.memberEpoch());
            o.put("heartbeat_interval_ms", resp.heartbeatIntervalMs());
            if (resp.assignment() == null) {
                o.putNull("assignment");
            } else {
                Map<Uuid, Set<Integer>> parts = new HashMap<>();
                for (ConsumerGroupHeartbeatResponseData.TopicPartitions tp : resp.assignment().topicPartitions()) {
                    parts.computeIfAbsent(tp.topicId(), x -> new TreeSet<>()).addAll(tp.partitions());
                }
                o.set("assignment", partitionsJson(parts));
            }
            if (resp.errorCode() == Errors.NONE.code() && resp.memberId() != null
                && req.memberId().isEmpty()) {
                newIds.add(resp.memberId());
            }
            answered(rid, o);
        }

        /** OffsetFetch as the base reads it, with the shard's exception caught: the service
         * catches it per group (GroupCoordinatorService.fetchOffsets / fetchAllOffsets). */
        @Override
        OffsetFetchResponseData.OffsetFetchResponseGroup fetchOffsets(
                OffsetFetchRequestData.OffsetFetchRequestGroup req, boolean all) {
            try {
                return super.fetchOffsets(req, all);
            } catch (Throwable e) {
                return onError("fetch-offsets", req, e, (error, m) ->
                    new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId(req.groupId()).setErrorCode(error.code()));
            }
        }

        /** ConsumerGroupDescribe at the latest offset (GroupCoordinatorService reads the
         * shard's consumerGroupDescribe at its last committed offset). */
        void describe(int rid, JsonNode op) {
            List<String> ids = new ArrayList<>();
            op.path("groups").forEach(g -> ids.add(g.asText()));
            ObjectNode o = JSON.createObjectNode();
            ArrayNode each = o.putArray("groups");
            for (ConsumerGroupDescribeResponseData.DescribedGroup g : shard.consumerGroupDescribe(ids, Long.MAX_VALUE)) {
                ObjectNode go = each.addObject();
                go.put("error", g.errorCode());
                go.put("error_message", g.errorMessage());
                go.put("group_id", g.groupId());
                go.put("group_state", g.groupState());
                go.put("group_epoch", g.groupEpoch());
                go.put("assignment_epoch", g.assignmentEpoch());
                go.put("assignor_name", g.assignorName());
                ArrayNode ms = go.putArray("members");
                for (ConsumerGroupDescribeResponseData.Member m : g.members()) {
                    ObjectNode mo = ms.addObject();
                    mo.put("member_id", m.memberId());
                    mo.put("instance_id", m.instanceId());
                    mo.put("rack_id", m.rackId());
                    mo.put("member_epoch", m.memberEpoch());
                    mo.put("client_id", m.clientId());
                    mo.put("client_host", m.clientHost());
                    ArrayNode names = mo.putArray("subscribed_topic_names");
                    new TreeSet<>(m.subscribedTopicNames()).forEach(names::add);
                    mo.put("subscribed_topic_regex", m.subscribedTopicRegex());
                    mo.set("assignment", describedJson(m.assignment()));
                    mo.set("target_assignment", describedJson(m.targetAssignment()));
                    mo.put("member_type", m.memberType());
                }
            }
            answered(rid, o);
        }

        static ArrayNode describedJson(ConsumerGroupDescribeResponseData.Assignment a) {
            TreeMap<String, ArrayNode> sorted = new TreeMap<>();
            for (ConsumerGroupDescribeResponseData.TopicPartitions tp : a.topicPartitions()) {
                ArrayNode each = JSON.createArrayNode();
                each.add(tp.topicId().toString()).add(tp.topicName());
                ArrayNode ps = each.addArray();
                new TreeSet<>(tp.partitions()).forEach(ps::add);
                sorted.put(tp.topicId().toString(), each);
            }
            ArrayNode out = JSON.createArrayNode();
            sorted.values().forEach(out::add);
            return out;
        }
    }
}
