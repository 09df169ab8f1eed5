package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.internals.Plugin;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.coordinator.common.runtime.CoordinatorExecutor;
import org.apache.kafka.coordinator.common.runtime.CoordinatorOperationExceptionHelper;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.common.runtime.CoordinatorResult;
import org.apache.kafka.coordinator.group.GroupConfigManager;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.apache.kafka.coordinator.group.GroupCoordinatorShard;
import org.apache.kafka.coordinator.group.GroupMetadataManager;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupCurrentMemberAssignmentKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupCurrentMemberAssignmentValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMetadataValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupRegularExpressionKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupRegularExpressionValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMetadataValue;
import org.apache.kafka.coordinator.group.generated.GroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.OffsetCommitKey;
import org.apache.kafka.coordinator.group.generated.OffsetCommitValue;
import org.apache.kafka.coordinator.group.metrics.GroupCoordinatorMetrics;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroup;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroupMember;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.timeline.SnapshotRegistry;

import com.yammer.metrics.core.MetricsRegistry;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.reflect.Field;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiFunction;

/**
 * One Kafka 4.1.2 group coordinator shard (GroupCoordinatorShard, its GroupMetadataManager
 * and OffsetMetadataManager) driven by consumer-group (KIP-848) requests one at a time, with
 * a clock that moves only when told and a metadata image of the topics the input names.
 * The consumer-protocol sibling of {@link ClassicGroupShard}, with the same runtime
 * stand-ins (the clock and timer shared: {@link ManualClock}, {@link ManualTimer}).
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
 * DeleteGroups ("delete", "groups") is answered as the service answers it; {"kind": "regex"}
 * runs the executor's pending tasks (regular-expression resolutions) and their writes.
 * Output of a step: {"completed": [[rid, response]], "ids": member ids Kafka generated,
 * "records": the records appended in the step, in order, "pending_tasks": the executor's
 * task keys, "groups": {id: summary}}.
 *
 * <p>The runtime played here, as in ClassicGroupShard: each result's records are appended
 * to a log and replayed at once (a write that always succeeds); an operation that throws is
 * answered as GroupCoordinatorService answers it (CoordinatorOperationExceptionHelper with
 * the service's handler); the service's own ConsumerGroupHeartbeat checks
 * (throwIfConsumerGroupHeartbeatRequestIsInvalid, a private method) are applied here before
 * the shard, written from their documented rules; a failover unloads the shard and loads a
 * fresh one that replays the whole log. Timers due at the same millisecond fire in the
 * reference's order (session timeouts, then rebalance timeouts, by group and member; the
 * shard's periodic jobs last), one of the orders Kafka's timing wheel may produce.
 */
public final class ConsumerGroupShard implements Tool {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Logger LOG = LoggerFactory.getLogger(ConsumerGroupShard.class);

    private State state;

    @Override
    public JsonNode run(JsonNode input) throws Exception {
        String action = input.path("action").asText();
        switch (action) {
            case "reset":
                if (state != null) {
                    state.close();
                }
                state = new State(input.path("config"), input.path("topics"));
                return JSON.createObjectNode();
            case "op":
                if (state == null) {
                    throw new IllegalStateException("no shard: send a reset first");
                }
                return state.step(input.path("op"));
            default:
                throw new IllegalArgumentException("unknown action: " + action);
        }
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

    private static AuthorizableRequestContext context(int apiKey, int version, String clientId) {
        InetAddress address;
        try {
            address = InetAddress.getByName("127.0.0.1");
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
        return new AuthorizableRequestContext() {
            @Override public String listenerName() { return "PLAINTEXT"; }
            @Override public SecurityProtocol securityProtocol() { return SecurityProtocol.PLAINTEXT; }
            @Override public KafkaPrincipal principal() { return KafkaPrincipal.ANONYMOUS; }
            @Override public InetAddress clientAddress() { return address; }
            @Override public int requestType() { return apiKey; }
            @Override public int requestVersion() { return version; }
            @Override public String clientId() { return clientId; }
            @Override public int correlationId() { return 0; }
        };
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

    private static final class State {
        final ManualClock time = new ManualClock();
        ManualTimer timer;
        ManualExecutor executor;
        Metrics metrics;
        final GroupCoordinatorConfig config;
        MetadataImage image;
        long imageOffset = 1;
        GroupCoordinatorShard shard;
        GroupMetadataManager groups;
        final Set<String> groupIds = new LinkedHashSet<>();
        final List<String> newIds = new ArrayList<>();
        final List<CoordinatorRecord> log = new ArrayList<>();
        ArrayNode completed;
        ArrayNode stepRecords;
        long offset;

        State(JsonNode cfg, JsonNode topics) throws ReflectiveOperationException {
            Map<String, Object> props = new HashMap<>();
            cfg.fields().forEachRemaining(e -> props.put(e.getKey(), e.getValue().asText()));
            config = GroupCoordinatorConfig.fromProps(props);
            image = imageDelta(MetadataImage.EMPTY, topics).apply(new MetadataProvenance(imageOffset, 1, 0, true));
            load();
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

        void load() throws ReflectiveOperationException {
            if (metrics != null) {
                metrics.close();
            }
            timer = new ManualTimer(time);
            // a shard loaded afresh has no pending task (the runtime cancels them on unload)
            executor = new ManualExecutor();
            metrics = new Metrics();
            LogContext logContext = new LogContext("[groupspec consumer shard] ");
            SnapshotRegistry snapshots = new SnapshotRegistry(logContext);
            GroupCoordinatorShard.Builder builder =
                new GroupCoordinatorShard.Builder(config, new GroupConfigManager(Map.of()));
            builder.withAuthorizerPlugin(Optional.<Plugin<org.apache.kafka.server.authorizer.Authorizer>>empty());
            shard = builder
                .withLogContext(logContext)
                .withTime(time)
                .withTimer(timer)
                .withExecutor(executor)
                .withCoordinatorMetrics(new GroupCoordinatorMetrics(new MetricsRegistry(), metrics))
                .withTopicPartition(new TopicPartition("__consumer_offsets", 0))
                .withSnapshotRegistry(snapshots)
                .build();
            long at = 0;
            for (CoordinatorRecord record : log) {
                shard.replay(at++, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH, record);
            }
            shard.onLoaded(image);
            Field f = GroupCoordinatorShard.class.getDeclaredField("groupMetadataManager");
            f.setAccessible(true);
            groups = (GroupMetadataManager) f.get(shard);
        }

        void failover() throws ReflectiveOperationException {
            shard.onUnloaded();
            load();
        }

        void close() {
            metrics.close();
        }

        <T> T apply(CoordinatorResult<T, CoordinatorRecord> result) {
            for (CoordinatorRecord record : result.records()) {
                if (result.replayRecords()) {
                    shard.replay(offset, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH, record);
                }
                offset++;
                log.add(record);
                stepRecords.add(recordJson(record));
            }
            if (result.appendFuture() != null) {
                result.appendFuture().complete(null);
            }
            return result.response();
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
                } else {
                    o.addNull();
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

        void answered(int rid, ObjectNode response) {
            ArrayNode pair = JSON.createArrayNode();
            pair.add(rid);
            pair.add(response);
            completed.add(pair);
        }

        <T> T onError(String name, Object request, Throwable e, BiFunction<Errors, String, T> handler) {
            return CoordinatorOperationExceptionHelper.handleOperationException(name, request, e, handler, LOG);
        }

        JsonNode step(JsonNode op) throws ReflectiveOperationException {
            completed = JSON.createArrayNode();
            stepRecords = JSON.createArrayNode();
            newIds.clear();
            String kind = op.path("kind").asText();
            int rid = op.path("rid").asInt();
            if (op.has("group")) {
                groupIds.add(op.path("group").asText());
            }
            for (JsonNode g : op.path("groups")) {
                groupIds.add(g.asText());
            }
            switch (kind) {
                case "advance": advance(op.path("to").asLong()); break;
                case "failover": failover(); break;
                case "heartbeat": heartbeat(rid, op); break;
                case "commit": commit(rid, op); break;
                case "fetch": fetch(rid, op); break;
                case "describe": describe(rid, op); break;
                case "list": list(rid, op); break;
                case "image": newImage(op.path("topics")); break;
                case "delete": delete(rid, op); break;
                case "regex": runTasks(); break;
                case "offset_delete": offsetDelete(rid, op); break;
                default: throw new IllegalArgumentException("unknown op kind: " + kind);
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
            for (ManualTimer.Scheduled t : timer.byKey.values()) {
                if (t.key.startsWith(session)) {
                    found.add(new String[] {"session", t.key.substring(session.length()), Long.toString(t.deadline)});
                } else if (t.key.startsWith(rebalance)) {
                    found.add(new String[] {"rebalance", t.key.substring(rebalance.length()), Long.toString(t.deadline)});
                }
            }
            found.sort((a, b) -> (a[0] + "\0" + a[1]).compareTo(b[0] + "\0" + b[1]));
            ArrayNode timers = o.putArray("timers");
            for (String[] t : found) {
                timers.addArray().add(t[0]).add(t[1]).add(Long.parseLong(t[2]));
            }
            ObjectNode offsets = o.putObject("offsets");
            OffsetFetchResponseData.OffsetFetchResponseGroup fetched = shard.fetchAllOffsets(
                new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(gid).setTopics(null)
                    .setMemberEpoch(-1), Long.MAX_VALUE);
            for (OffsetFetchResponseData.OffsetFetchResponseTopics t : fetched.topics()) {
                for (OffsetFetchResponseData.OffsetFetchResponsePartitions p : t.partitions()) {
                    offsets.put(t.name() + "-" + p.partitionIndex(), p.committedOffset());
                }
            }
            return o;
        }

        // ------------------------------------------------------------------ timers

        /** Sort key for timers due at one millisecond: the reference's (kind, group, member). */
        Object[] tieKey(ManualTimer.Scheduled s) {
            String k = s.key;
            int rank;
            String rest;
            if (k.startsWith("session-timeout-")) {
                rank = 0;
                rest = k.substring("session-timeout-".length());
            } else if (k.startsWith("rebalance-timeout-")) {
                rank = 1;
                rest = k.substring("rebalance-timeout-".length());
            } else {
                rank = 2;
                rest = k;
            }
            return new Object[] {s.deadline, rank, rest};
        }

        ManualTimer.Scheduled nextDue(long until) {
            ManualTimer.Scheduled best = null;
            Object[] bestKey = null;
            for (ManualTimer.Scheduled s : timer.byKey.values()) {
                if (s.deadline > until) {
                    continue;
                }
                Object[] key = tieKey(s);
                if (best == null || compare(key, bestKey) < 0 || (compare(key, bestKey) == 0 && s.seq < best.seq)) {
                    best = s;
                    bestKey = key;
                }
            }
            return best;
        }

        @SuppressWarnings("unchecked")
        static int compare(Object[] a, Object[] b) {
            for (int i = 0; i < a.length; i++) {
                int c = ((Comparable<Object>) a[i]).compareTo(b[i]);
                if (c != 0) {
                    return c;
                }
            }
            return 0;
        }

        void advance(long to) {
            if (to < time.milliseconds()) {
                throw new IllegalArgumentException("time went backwards: " + to + " < " + time.milliseconds());
            }
            while (true) {
                ManualTimer.Scheduled due = nextDue(to);
                if (due == null) {
                    break;
                }
                timer.byKey.remove(due.key);
                if (due.deadline > time.milliseconds()) {
                    time.sleep(due.deadline - time.milliseconds());
                }
                apply(due.op.generateRecords());
            }
            time.sleep(to - time.milliseconds());
        }

        // ------------------------------------------------------------------ requests

        static String optText(JsonNode n, String field) {
            JsonNode v = n.get(field);
            return v == null || v.isNull() ? null : v.asText();
        }

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
            List<String> assignors = config.consumerGroupAssignors().stream().map(a -> a.name()).toList();
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

        void commit(int rid, JsonNode op) {
            Map<String, OffsetCommitRequestData.OffsetCommitRequestTopic> topics = new TreeMap<>();
            List<OffsetCommitRequestData.OffsetCommitRequestTopic> ordered = new ArrayList<>();
            for (JsonNode p : op.path("partitions")) {
                String topic = p.get(0).asText();
                OffsetCommitRequestData.OffsetCommitRequestTopic t = topics.get(topic);
                if (t == null) {
                    t = new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(topic);
                    topics.put(topic, t);
                    ordered.add(t);
                }
                t.partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                    .setPartitionIndex(p.get(1).asInt())
                    .setCommittedOffset(p.get(2).asLong())
                    .setCommittedMetadata(p.size() > 3 && !p.get(3).isNull() ? p.get(3).asText() : null));
            }
            OffsetCommitRequestData req = new OffsetCommitRequestData()
                .setGroupId(op.path("group").asText())
                .setGenerationIdOrMemberEpoch(op.path("generation_id").asInt())
                .setMemberId(op.path("member_id").asText())
                .setGroupInstanceId(optText(op, "group_instance_id"))
                .setTopics(ordered);
            AuthorizableRequestContext ctx = context(8, op.path("version").asInt(9), "consumer");
            OffsetCommitResponseData resp;
            try {
                resp = apply(shard.commitOffset(ctx, req));
            } catch (Throwable e) {
                resp = onError("commit-offset", req, e,
                    (error, m) -> OffsetCommitRequest.getErrorResponse(req, error));
            }
            ObjectNode o = JSON.createObjectNode();
            ArrayNode parts = o.putArray("partitions");
            for (OffsetCommitResponseData.OffsetCommitResponseTopic t : resp.topics()) {
                for (OffsetCommitResponseData.OffsetCommitResponsePartition p : t.partitions()) {
                    ObjectNode po = parts.addObject();
                    po.put("topic", t.name());
                    po.put("partition", p.partitionIndex());
                    po.put("error", p.errorCode());
                }
            }
            answered(rid, o);
        }

        /** OffsetFetch of one group at the latest offset (every write is committed at once):
         * specific partitions ("partitions") or all; with a member id and epoch (v9+) or not.
         * The service catches the shard's exception per group (GroupCoordinatorService.fetchOffsets). */
        void fetch(int rid, JsonNode op) {
            OffsetFetchRequestData.OffsetFetchRequestGroup req = new OffsetFetchRequestData.OffsetFetchRequestGroup()
                .setGroupId(op.path("group").asText())
                .setMemberId(optText(op, "member_id"))
                .setMemberEpoch(op.path("member_epoch").asInt(-1));
            boolean all = !op.has("partitions") || op.get("partitions").isNull();
            if (!all) {
                Map<String, OffsetFetchRequestData.OffsetFetchRequestTopics> topics = new TreeMap<>();
                List<OffsetFetchRequestData.OffsetFetchRequestTopics> ordered = new ArrayList<>();
                for (JsonNode p : op.path("partitions")) {
                    OffsetFetchRequestData.OffsetFetchRequestTopics t = topics.get(p.get(0).asText());
                    if (t == null) {
                        t = new OffsetFetchRequestData.OffsetFetchRequestTopics().setName(p.get(0).asText());
                        topics.put(p.get(0).asText(), t);
                        ordered.add(t);
                    }
                    t.partitionIndexes().add(p.get(1).asInt());
                }
                req.setTopics(ordered);
            } else {
                req.setTopics(null);
            }
            ObjectNode o = JSON.createObjectNode();
            OffsetFetchResponseData.OffsetFetchResponseGroup resp;
            try {
                resp = all ? shard.fetchAllOffsets(req, Long.MAX_VALUE) : shard.fetchOffsets(req, Long.MAX_VALUE);
            } catch (Throwable e) {
                resp = onError("fetch-offsets", req, e, (error, m) ->
                    new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId(req.groupId()).setErrorCode(error.code()));
            }
            o.put("error", resp.errorCode());
            ArrayNode parts = o.putArray("offsets");
            for (OffsetFetchResponseData.OffsetFetchResponseTopics t : resp.topics()) {
                for (OffsetFetchResponseData.OffsetFetchResponsePartitions p : t.partitions()) {
                    ArrayNode po = parts.addArray();
                    po.add(t.name());
                    po.add(p.partitionIndex());
                    po.add(p.committedOffset());
                    po.add(p.metadata());
                    po.add(p.errorCode());
                }
            }
            answered(rid, o);
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

        /** DeleteGroups: the service's share-group step finds none, then the shard's
         * deleteGroups answers per group (GroupCoordinatorService.deleteGroups). */
        void delete(int rid, JsonNode op) {
            List<String> ids = new ArrayList<>();
            op.path("groups").forEach(g -> ids.add(g.asText()));
            AuthorizableRequestContext ctx = context(42, 2, "admin");
            DeleteGroupsResponseData.DeletableGroupResultCollection results;
            try {
                results = apply(shard.deleteGroups(ctx, ids));
            } catch (Throwable e) {
                results = onError("delete-groups", ids, e,
                    (error, m) -> DeleteGroupsRequest.getErrorResultCollection(ids, error));
            }
            ObjectNode o = JSON.createObjectNode();
            ArrayNode each = o.putArray("results");
            for (DeleteGroupsResponseData.DeletableGroupResult r : results) {
                ObjectNode ro = each.addObject();
                ro.put("group_id", r.groupId());
                ro.put("error", r.errorCode());
            }
            answered(rid, o);
        }

        /** OffsetDelete (KIP-496) of one group's partitions, as the service hands it to the
         * shard (the empty group id refused before, GroupCoordinatorService.deleteOffsets). */
        void offsetDelete(int rid, JsonNode op) {
            Map<String, OffsetDeleteRequestData.OffsetDeleteRequestTopic> topics = new TreeMap<>();
            OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection ordered =
                new OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection();
            for (JsonNode p : op.path("partitions")) {
                String topic = p.get(0).asText();
                OffsetDeleteRequestData.OffsetDeleteRequestTopic t = topics.get(topic);
                if (t == null) {
                    t = new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName(topic);
                    topics.put(topic, t);
                    ordered.add(t);
                }
                t.partitions().add(new OffsetDeleteRequestData.OffsetDeleteRequestPartition()
                    .setPartitionIndex(p.get(1).asInt()));
            }
            String gid = op.path("group").asText();
            OffsetDeleteRequestData req = new OffsetDeleteRequestData().setGroupId(gid).setTopics(ordered);
            AuthorizableRequestContext ctx = context(47, 0, "admin");
            OffsetDeleteResponseData resp;
            if (gid.isEmpty()) {
                resp = new OffsetDeleteResponseData().setErrorCode(Errors.INVALID_GROUP_ID.code());
            } else {
                try {
                    resp = apply(shard.deleteOffsets(ctx, req));
                } catch (Throwable e) {
                    resp = onError("delete-offsets", req, e,
                        (error, m) -> new OffsetDeleteResponseData().setErrorCode(error.code()));
                }
            }
            ObjectNode o = JSON.createObjectNode();
            o.put("error", resp.errorCode());
            ArrayNode parts = o.putArray("deleted");
            for (OffsetDeleteResponseData.OffsetDeleteResponseTopic t : resp.topics()) {
                for (OffsetDeleteResponseData.OffsetDeleteResponsePartition p : t.partitions()) {
                    ArrayNode po = parts.addArray();
                    po.add(t.name());
                    po.add(p.partitionIndex());
                    po.add(p.errorCode());
                }
            }
            answered(rid, o);
        }

        /** ListGroups with a states filter and no types filter, at the latest offset. */
        void list(int rid, JsonNode op) {
            List<String> states = new ArrayList<>();
            op.path("states").forEach(x -> states.add(x.asText()));
            ObjectNode o = JSON.createObjectNode();
            o.put("error", Errors.NONE.code());
            ArrayNode each = o.putArray("listed");
            for (ListGroupsResponseData.ListedGroup g : shard.listGroups(states, List.of(), Long.MAX_VALUE)) {
                each.addArray().add(g.groupId()).add(g.protocolType()).add(g.groupState()).add(g.groupType());
            }
            answered(rid, o);
        }
    }
}
