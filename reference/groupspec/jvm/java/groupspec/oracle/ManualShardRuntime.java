package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.internals.Plugin;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitResponseData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
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
import org.apache.kafka.coordinator.group.metrics.GroupCoordinatorMetrics;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.timeline.SnapshotRegistry;

import com.yammer.metrics.core.MetricsRegistry;

import org.slf4j.Logger;

import java.lang.reflect.Field;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiFunction;

/**
 * What plays the runtime (CoordinatorRuntime) around one Kafka 4.1.2 GroupCoordinatorShard,
 * shared by {@link ClassicGroupShard} and {@link ConsumerGroupShard}: a {@link ManualClock},
 * a {@link ManualTimer} whose due timers fire when the driver advances the clock, a log of
 * every record appended, and a failover that unloads the shard and loads a fresh one
 * replaying that log. Each CoordinatorResult's records are appended and replayed into the
 * shard at once (a write that always succeeds) and its append future completed; an
 * operation that throws is answered as GroupCoordinatorService answers it (its
 * CoordinatorOperationExceptionHelper, with the service's per-request handlers).
 *
 * <p>A tool's subclass gives the executor, the metadata image the shard loads with, what it
 * keeps of each appended record, and the order of timers due at the same millisecond (which
 * Kafka leaves to its timing wheel); it holds its own requests and step output. The requests
 * both protocols send the same way (OffsetCommit, OffsetFetch, OffsetDelete, DeleteGroups)
 * are here.
 */
abstract class ManualShardRuntime {
    private static final ObjectMapper JSON = new ObjectMapper();

    final ManualClock time = new ManualClock();
    ManualTimer timer;
    Metrics metrics;
    final GroupCoordinatorConfig config;
    GroupCoordinatorShard shard;
    GroupMetadataManager groups;
    /** every group the driver has named, in the order first named: the step's summaries */
    final Set<String> groupIds = new LinkedHashSet<>();
    /** member ids the step reports (each tool says which) */
    final List<String> newIds = new ArrayList<>();
    /** every record appended so far: what a coordinator loading the partition replays */
    final List<CoordinatorRecord> log = new ArrayList<>();
    /** The producer id and epoch each record of {@link #log} was written with (a
     * transactional write's records carry its producer's; the others none). */
    final List<long[]> logProducers = new ArrayList<>();
    ArrayNode completed;
    long offset;
    private final String logPrefix;
    private final Logger logger;

    /** The shard's config from the driver's Kafka properties; the subclass then calls
     * {@link #load} once its own fields are set. */
    ManualShardRuntime(JsonNode cfg, String logPrefix, Logger logger) {
        Map<String, Object> props = new HashMap<>();
        cfg.fields().forEachRemaining(e -> props.put(e.getKey(), e.getValue().asText()));
        config = GroupCoordinatorConfig.fromProps(props);
        this.logPrefix = logPrefix;
        this.logger = logger;
    }

    /** The executor of a shard just loaded. */
    abstract CoordinatorExecutor<CoordinatorRecord> newExecutor();

    /** The metadata image the shard is loaded with (GroupCoordinatorShard.onLoaded). */
    abstract MetadataImage loadedImage();

    /** A record was appended to the log (after its replay, when it is replayed). */
    abstract void appended(CoordinatorRecord record);

    /** Sort key for timers due at one millisecond: the reference's order (the scheduling
     * order breaks the remaining ties). */
    abstract Object[] tieKey(ManualTimer.Scheduled s);

    /** The shard's snapshot registry (a plain OffsetFetch reads at a snapshot). */
    SnapshotRegistry snapshots;

    /** A fresh shard (timer, executor, snapshot registry, metrics) that replays the log, then
     * onLoaded, as the runtime loads a __consumer_offsets partition. */
    final void load() throws ReflectiveOperationException {
        if (metrics != null) {
            metrics.close();
        }
        timer = new ManualTimer(time);
        CoordinatorExecutor<CoordinatorRecord> executor = newExecutor();
        metrics = new Metrics();
        LogContext logContext = new LogContext(logPrefix);
        snapshots = new SnapshotRegistry(logContext);
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
        for (int at = 0; at < log.size(); at++) {
            long[] producer = logProducers.get(at);
            shard.replay(at, producer[0], (short) producer[1], log.get(at));
        }
        shard.onLoaded(loadedImage());
        Field f = GroupCoordinatorShard.class.getDeclaredField("groupMetadataManager");
        f.setAccessible(true);
        groups = (GroupMetadataManager) f.get(shard);
    }

    /** The coordinator moves: the shard unloads (parked JoinGroup / SyncGroup answered
     * NOT_COORDINATOR by GroupMetadataManager.onUnloaded), another loads the log. */
    final void failover() throws ReflectiveOperationException {
        shard.onUnloaded();
        load();
    }

    final void close() {
        metrics.close();
    }

    /** The tool's answer to one "op" input. */
    abstract JsonNode step(JsonNode op) throws ReflectiveOperationException;

    /** A step begins: nothing completed, no ids yet; the groups the op names are summarized
     * from now on. */
    final void begin(JsonNode op) {
        completed = JSON.createArrayNode();
        newIds.clear();
        if (op.has("group")) {
            groupIds.add(op.path("group").asText());
        }
        for (JsonNode g : op.path("groups")) {
            groupIds.add(g.asText());
        }
    }

    /** What the runtime does with a finished write: replay its records, then complete its append future. */
    final <T> T apply(CoordinatorResult<T, CoordinatorRecord> result) {
        for (CoordinatorRecord record : result.records()) {
            // the records go to the log whether or not they are replayed (a result that
            // says not to replay has already applied them, e.g. the empty record of a
            // group just created)
            if (result.replayRecords()) {
                shard.replay(offset, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH, record);
            }
            offset++;
            log.add(record);
            logProducers.add(new long[] {RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH});
            appended(record);
        }
        if (result.appendFuture() != null) {
            result.appendFuture().complete(null);
        }
        return result.response();
    }

    final void answered(int rid, ObjectNode response) {
        ArrayNode pair = JSON.createArrayNode();
        pair.add(rid);
        pair.add(response);
        completed.add(pair);
    }

    /** The service's answer to an operation that threw (GroupCoordinatorService). */
    final <T> T onError(String name, Object request, Throwable e, BiFunction<Errors, String, T> handler) {
        return CoordinatorOperationExceptionHelper.handleOperationException(name, request, e, handler, logger);
    }

    // ------------------------------------------------------------------ timers

    final ManualTimer.Scheduled nextDue(long until) {
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

    /** The clock moves to {@code to}, firing the timers due on the way, each at its own
     * deadline, and their writes.
     *
     * <p>A timer that fires and re-arms itself with no delay a second time in one
     * millisecond is next due 1 ms later. Kafka's own timer would fire it again at once, as
     * often as the event loop runs, while the real clock moves on: completeClassicGroupJoin
     * (GroupMetadataManager) re-arms the join timer at the group's rebalance timeout, 0 when
     * every member's is 0 or negative, for as long as no member has rejoined. On a clock
     * that only this loop moves that is a loop without end; here, and in the reference
     * (coordinator/classic/rebalance.py, complete_join), the clock moves 1 ms a firing
     * (docs/deviations.md, "A join timer re-armed with no delay"). */
    final void advance(long to) {
        if (to < time.milliseconds()) {
            throw new IllegalArgumentException("time went backwards: " + to + " < " + time.milliseconds());
        }
        String rearmedKey = null;
        long rearmedAt = -1;
        while (true) {
            ManualTimer.Scheduled due = nextDue(to);
            if (due == null) {
                break;
            }
            timer.byKey.remove(due.key);
            if (due.deadline > time.milliseconds()) {
                time.sleep(due.deadline - time.milliseconds());
            }
            long at = time.milliseconds();
            apply(due.op.generateRecords());
            ManualTimer.Scheduled again = timer.byKey.get(due.key);
            if (again == null || again.deadline > at) {
                continue;
            }
            if (due.key.equals(rearmedKey) && rearmedAt == at) {
                timer.byKey.put(due.key, new ManualTimer.Scheduled(due.key, at + 1, again.seq, again.op));
            }
            rearmedKey = due.key;
            rearmedAt = at;
        }
        time.sleep(to - time.milliseconds());
    }

    // ------------------------------------------------------------------ summaries

    /** A group's running timers, found as [kind, member, deadline], as the summary lists
     * them: by kind, then member. */
    static ArrayNode timersJson(List<String[]> found) {
        found.sort((a, b) -> (a[0] + "\0" + a[1]).compareTo(b[0] + "\0" + b[1]));
        ArrayNode timers = JSON.createArrayNode();
        for (String[] t : found) {
            ArrayNode each = timers.addArray();
            each.add(t[0]);
            each.add(t[1]);
            each.add(Long.parseLong(t[2]));
        }
        return timers;
    }

    /** The group's committed offsets ("topic-partition": offset) under "offsets", read as a
     * plain OffsetFetch of all offsets reads them (at a snapshot of the latest offset: a
     * require_stable read would answer a partition with a pending transactional offset
     * UNSTABLE_OFFSET_COMMIT instead of its committed offset). */
    final void putOffsets(ObjectNode o, String gid) {
        ObjectNode offsets = o.putObject("offsets");
        long at = offset;
        snapshots.idempotentCreateSnapshot(at);
        OffsetFetchResponseData.OffsetFetchResponseGroup fetched;
        try {
            fetched = shard.fetchAllOffsets(
                new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(gid).setTopics(null)
                    .setMemberEpoch(-1), at);
        } finally {
            snapshots.deleteSnapshot(at);
        }
        for (OffsetFetchResponseData.OffsetFetchResponseTopics t : fetched.topics()) {
            for (OffsetFetchResponseData.OffsetFetchResponsePartitions p : t.partitions()) {
                offsets.put(t.name() + "-" + p.partitionIndex(), p.committedOffset());
            }
        }
    }

    // ------------------------------------------------------------------ requests

    final <R> void whenDone(int rid, CompletableFuture<R> future, java.util.function.Function<R, ObjectNode> render) {
        future.whenComplete((r, e) -> {
            if (e != null) {
                throw new IllegalStateException("response future failed", e);
            }
            answered(rid, render.apply(r));
        });
    }

    static ObjectNode joinJson(JoinGroupResponseData r) {
        ObjectNode o = JSON.createObjectNode();
        o.put("error", r.errorCode());
        o.put("generation_id", r.generationId());
        o.put("protocol_type", r.protocolType());
        o.put("protocol_name", r.protocolName());
        o.put("leader", r.leader());
        o.put("skip_assignment", r.skipAssignment());
        o.put("member_id", r.memberId());
        ArrayNode members = o.putArray("members");
        for (JoinGroupResponseData.JoinGroupResponseMember m : r.members()) {
            ObjectNode mo = members.addObject();
            mo.put("member_id", m.memberId());
            mo.put("group_instance_id", m.groupInstanceId());
            mo.put("metadata", Base64.getEncoder().encodeToString(m.metadata()));
        }
        return o;
    }

    /** A classic JoinGroup (GroupMetadataManager.classicGroupJoin, after the service's
     * session-timeout bounds), answered when its future completes. */
    final void join(int rid, JsonNode op) {
        JoinGroupRequestData req = new JoinGroupRequestData()
            .setGroupId(op.path("group").asText())
            .setMemberId(op.path("member_id").asText())
            .setGroupInstanceId(optText(op, "group_instance_id"))
            .setProtocolType(op.path("protocol_type").asText())
            .setSessionTimeoutMs(op.path("session_timeout_ms").asInt())
            .setRebalanceTimeoutMs(op.path("rebalance_timeout_ms").asInt())
            .setReason(optText(op, "reason"));
        JoinGroupRequestData.JoinGroupRequestProtocolCollection protocols =
            new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
        for (JsonNode p : op.path("protocols")) {
            protocols.add(new JoinGroupRequestData.JoinGroupRequestProtocol()
                .setName(p.get(0).asText())
                .setMetadata(Base64.getDecoder().decode(p.get(1).asText())));
        }
        req.setProtocols(protocols);
        // GroupCoordinatorService.joinGroup: the session timeout bounds are checked
        // before the shard runs
        if (req.sessionTimeoutMs() < config.classicGroupMinSessionTimeoutMs()
            || req.sessionTimeoutMs() > config.classicGroupMaxSessionTimeoutMs()) {
            answered(rid, joinJson(new JoinGroupResponseData()
                .setMemberId(req.memberId())
                .setErrorCode(Errors.INVALID_SESSION_TIMEOUT.code())));
            return;
        }
        CompletableFuture<JoinGroupResponseData> future = new CompletableFuture<>();
        whenDone(rid, future, ManualShardRuntime::joinJson);
        AuthorizableRequestContext ctx = context(11, op.path("version").asInt(),
            op.path("client_id").asText(), op.path("client_host").asText("/127.0.0.1"));
        try {
            apply(shard.classicGroupJoin(ctx, req, future));
        } catch (Throwable e) {
            if (!future.isDone()) {
                future.complete(onError("classic-group-join", req, e,
                    (error, m) -> new JoinGroupResponseData().setErrorCode(error.code())));
            }
        }
    }

    static ObjectNode syncJson(SyncGroupResponseData r) {
        ObjectNode o = JSON.createObjectNode();
        o.put("error", r.errorCode());
        o.put("protocol_type", r.protocolType());
        o.put("protocol_name", r.protocolName());
        o.put("assignment", Base64.getEncoder().encodeToString(r.assignment()));
        return o;
    }

    /** A classic SyncGroup (GroupMetadataManager.classicGroupSync), answered when its future
     * completes: {"error", "protocol_type", "protocol_name", "assignment"}. */
    final void sync(int rid, JsonNode op) {
        SyncGroupRequestData req = new SyncGroupRequestData()
            .setGroupId(op.path("group").asText())
            .setGenerationId(op.path("generation_id").asInt())
            .setMemberId(op.path("member_id").asText())
            .setGroupInstanceId(optText(op, "group_instance_id"))
            .setProtocolType(optText(op, "protocol_type"))
            .setProtocolName(optText(op, "protocol_name"));
        List<SyncGroupRequestData.SyncGroupRequestAssignment> assignments = new ArrayList<>();
        for (JsonNode a : op.path("assignments")) {
            assignments.add(new SyncGroupRequestData.SyncGroupRequestAssignment()
                .setMemberId(a.get(0).asText())
                .setAssignment(Base64.getDecoder().decode(a.get(1).asText())));
        }
        req.setAssignments(assignments);
        CompletableFuture<SyncGroupResponseData> future = new CompletableFuture<>();
        whenDone(rid, future, ManualShardRuntime::syncJson);
        AuthorizableRequestContext ctx = context(14, op.path("version").asInt(5), "consumer");
        try {
            apply(shard.classicGroupSync(ctx, req, future));
        } catch (Throwable e) {
            if (!future.isDone()) {
                future.complete(onError("classic-group-sync", req, e,
                    (error, m) -> new SyncGroupResponseData().setErrorCode(error.code())));
            }
        }
    }


    /** A classic Heartbeat (GroupMetadataManager.classicGroupHeartbeat; the service answers
     * COORDINATOR_LOAD_IN_PROGRESS as NONE): {"error"}. */
    final void classicHeartbeat(int rid, JsonNode op) {
        HeartbeatRequestData req = new HeartbeatRequestData()
            .setGroupId(op.path("group").asText())
            .setGenerationId(op.path("generation_id").asInt())
            .setMemberId(op.path("member_id").asText())
            .setGroupInstanceId(optText(op, "group_instance_id"));
        AuthorizableRequestContext ctx = context(12, op.path("version").asInt(4), "consumer");
        HeartbeatResponseData resp;
        try {
            resp = apply(shard.classicGroupHeartbeat(ctx, req));
        } catch (Throwable e) {
            resp = onError("classic-group-heartbeat", req, e,
                (error, m) -> new HeartbeatResponseData().setErrorCode(
                    error == Errors.COORDINATOR_LOAD_IN_PROGRESS ? Errors.NONE.code() : error.code()));
        }
        ObjectNode o = JSON.createObjectNode();
        o.put("error", resp.errorCode());
        answered(rid, o);
    }

    /** A classic LeaveGroup (classicGroupLeave; the service answers a missing group per
     * member): {"error", "members": [{"member_id", "group_instance_id", "error"}]}. */
    final void classicLeave(int rid, JsonNode op) {
        List<LeaveGroupRequestData.MemberIdentity> members = new ArrayList<>();
        for (JsonNode m : op.path("members")) {
            members.add(new LeaveGroupRequestData.MemberIdentity()
                .setMemberId(m.get(0).asText())
                .setGroupInstanceId(m.get(1).isNull() ? null : m.get(1).asText())
                .setReason(m.size() > 2 && !m.get(2).isNull() ? m.get(2).asText() : null));
        }
        LeaveGroupRequestData req = new LeaveGroupRequestData()
            .setGroupId(op.path("group").asText())
            .setMembers(members);
        AuthorizableRequestContext ctx = context(13, op.path("version").asInt(5), "consumer");
        LeaveGroupResponseData resp;
        try {
            resp = apply(shard.classicGroupLeave(ctx, req));
        } catch (Throwable e) {
            // GroupCoordinatorService.leaveGroup: UNKNOWN_MEMBER_ID (no such group) is
            // answered per member
            resp = onError("classic-group-leave", req, e, (error, m) -> {
                if (error == Errors.UNKNOWN_MEMBER_ID) {
                    List<LeaveGroupResponseData.MemberResponse> each = new ArrayList<>();
                    for (LeaveGroupRequestData.MemberIdentity id : req.members()) {
                        each.add(new LeaveGroupResponseData.MemberResponse()
                            .setMemberId(id.memberId())
                            .setGroupInstanceId(id.groupInstanceId())
                            .setErrorCode(Errors.UNKNOWN_MEMBER_ID.code()));
                    }
                    return new LeaveGroupResponseData().setMembers(each);
                }
                return new LeaveGroupResponseData().setErrorCode(error.code());
            });
        }
        ObjectNode o = JSON.createObjectNode();
        o.put("error", resp.errorCode());
        ArrayNode each = o.putArray("members");
        for (LeaveGroupResponseData.MemberResponse m : resp.members()) {
            ObjectNode mo = each.addObject();
            mo.put("member_id", m.memberId());
            mo.put("group_instance_id", m.groupInstanceId());
            mo.put("error", m.errorCode());
        }
        answered(rid, o);
    }

    static String optText(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }

    /** The request context the shard reads: api key and version, client id and address. */
    static AuthorizableRequestContext context(int apiKey, int version, String clientId, String host) {
        InetAddress address;
        try {
            address = InetAddress.getByName(host.startsWith("/") ? host.substring(1) : host);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException("bad client host " + host, e);
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

    /** The request context of a client at 127.0.0.1. */
    static AuthorizableRequestContext context(int apiKey, int version, String clientId) {
        return context(apiKey, version, clientId, "/127.0.0.1");
    }

    /** OffsetCommit ("partitions": [[topic, partition, offset, metadata?, leader epoch?],
     * ...], "retention_time_ms" if any: v2-v4's), the version {@code defaultVersion} unless
     * the op names one. */
    final void commit(int rid, JsonNode op, int defaultVersion) {
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
                .setCommittedMetadata(p.size() > 3 && !p.get(3).isNull() ? p.get(3).asText() : null)
                .setCommittedLeaderEpoch(p.size() > 4 ? p.get(4).asInt() : -1));
        }
        OffsetCommitRequestData req = new OffsetCommitRequestData()
            .setGroupId(op.path("group").asText())
            .setGenerationIdOrMemberEpoch(op.path("generation_id").asInt())
            .setMemberId(op.path("member_id").asText())
            .setGroupInstanceId(optText(op, "group_instance_id"))
            .setRetentionTimeMs(op.path("retention_time_ms").asLong(-1L))
            .setTopics(ordered);
        AuthorizableRequestContext ctx = context(8, op.path("version").asInt(defaultVersion), "consumer");
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

    /** TxnOffsetCommit ("partitions": [[topic, partition, offset, metadata?, leader epoch?], ...],
     * "producer_id", "producer_epoch", "transactional_id"), at version 3 (the first with the
     * member id, generation and instance): the shard's commitTransactionalOffset, its
     * records replayed as the runtime replays a transactional write's (with the producer
     * id: pending offsets, invisible to OffsetFetch, until a marker no step here writes).
     * The transaction's verification before it (the runtime asks the transaction
     * coordinator) is not run: every transaction is taken as verified. The records go to
     * the log with the producer id, so a failover replays them pending again. */
    final void txnCommit(int rid, JsonNode op) {
        Map<String, TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic> topics = new TreeMap<>();
        List<TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic> ordered = new ArrayList<>();
        for (JsonNode p : op.path("partitions")) {
            String topic = p.get(0).asText();
            TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic t = topics.get(topic);
            if (t == null) {
                t = new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName(topic);
                topics.put(topic, t);
                ordered.add(t);
            }
            t.partitions().add(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition()
                .setPartitionIndex(p.get(1).asInt())
                .setCommittedOffset(p.get(2).asLong())
                .setCommittedMetadata(p.size() > 3 && !p.get(3).isNull() ? p.get(3).asText() : null)
                .setCommittedLeaderEpoch(p.size() > 4 ? p.get(4).asInt() : -1));
        }
        long producerId = op.path("producer_id").asLong(1L);
        short producerEpoch = (short) op.path("producer_epoch").asInt(0);
        TxnOffsetCommitRequestData req = new TxnOffsetCommitRequestData()
            .setGroupId(op.path("group").asText())
            .setTransactionalId(op.path("transactional_id").asText("transactional-id"))
            .setProducerId(producerId)
            .setProducerEpoch(producerEpoch)
            .setGenerationId(op.path("generation_id").asInt(-1))
            .setMemberId(op.path("member_id").asText(""))
            .setGroupInstanceId(optText(op, "group_instance_id"))
            .setTopics(ordered);
        TxnOffsetCommitResponseData resp;
        if (req.groupId().isEmpty()) {
            // GroupCoordinatorService.commitTransactionalOffsets: isGroupIdNotEmpty
            resp = TxnOffsetCommitRequest.getErrorResponse(req, Errors.INVALID_GROUP_ID);
        } else {
            try {
                CoordinatorResult<TxnOffsetCommitResponseData, CoordinatorRecord> result =
                    shard.commitTransactionalOffset(context(28, op.path("version").asInt(3), "producer"), req);
                for (CoordinatorRecord record : result.records()) {
                    shard.replay(offset++, producerId, producerEpoch, record);
                    log.add(record);
                    logProducers.add(new long[] {producerId, producerEpoch});
                    appended(record);
                }
                resp = result.response();
            } catch (Throwable e) {
                resp = onError("txn-commit-offset", req, e,
                    (error, m) -> TxnOffsetCommitRequest.getErrorResponse(req, error));
            }
        }
        ObjectNode o = JSON.createObjectNode();
        ArrayNode parts = o.putArray("partitions");
        for (TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic t : resp.topics()) {
            for (TxnOffsetCommitResponseData.TxnOffsetCommitResponsePartition p : t.partitions()) {
                ObjectNode po = parts.addObject();
                po.put("topic", t.name());
                po.put("partition", p.partitionIndex());
                po.put("error", p.errorCode());
            }
        }
        answered(rid, o);
    }

    /** OffsetFetch of one group: specific partitions ("partitions") or all of them (no
     * "partitions"); with a member id and epoch (v9+) or not. The service reads the shard at
     * its last committed offset, or as a write with require_stable
     * (GroupCoordinatorService.fetchOffsets / fetchAllOffsets); every write here is
     * committed at once, so both read the latest state, but only a require_stable read
     * answers UNSTABLE_OFFSET_COMMIT for a partition with a pending transactional offset
     * (the shard decides it by the offset it reads at: {@link #fetchOffsets}). */
    final void fetch(int rid, JsonNode op) {
        stableRead = op.path("require_stable").asBoolean(false);
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
        OffsetFetchResponseData.OffsetFetchResponseGroup resp = fetchOffsets(req, all);
        ObjectNode o = JSON.createObjectNode();
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
                po.add(p.committedLeaderEpoch());
            }
        }
        answered(rid, o);
    }

    /** The shard's answer to an OffsetFetch of one group, at the latest offset. An exception
     * is not caught here: the classic tool has always let it fail the step; the consumer
     * tool catches it as the service does. */
    OffsetFetchResponseData.OffsetFetchResponseGroup fetchOffsets(
            OffsetFetchRequestData.OffsetFetchRequestGroup req, boolean all) {
        if (stableRead) {
            // the read as a write, at the latest offset (OffsetMetadataManager.fetchOffsets
            // takes Long.MAX_VALUE for require_stable)
            return all ? shard.fetchAllOffsets(req, Long.MAX_VALUE) : shard.fetchOffsets(req, Long.MAX_VALUE);
        }
        // a plain read at the last committed offset: the latest state, as a snapshot the
        // runtime would have taken at it (dropped after the read)
        long at = offset;
        snapshots.idempotentCreateSnapshot(at);
        try {
            return all ? shard.fetchAllOffsets(req, at) : shard.fetchOffsets(req, at);
        } finally {
            snapshots.deleteSnapshot(at);
        }
    }

    /** Whether the OffsetFetch being read requires stable offsets. */
    boolean stableRead;

    /** ListGroups with a states filter and no types filter: the service combines each
     * shard's listGroups at its last committed offset (GroupCoordinatorService.listGroups);
     * one shard here, every write committed at once. Each group as [id, protocol type,
     * state], and its type too {@code withType} (the consumer tool's). */
    final void list(int rid, JsonNode op, boolean withType) {
        List<String> states = new ArrayList<>();
        op.path("states").forEach(x -> states.add(x.asText()));
        ObjectNode o = JSON.createObjectNode();
        o.put("error", Errors.NONE.code());
        ArrayNode each = o.putArray("listed");
        for (ListGroupsResponseData.ListedGroup g : shard.listGroups(states, List.of(), Long.MAX_VALUE)) {
            ArrayNode go = each.addArray();
            go.add(g.groupId());
            go.add(g.protocolType());
            go.add(g.groupState());
            if (withType) {
                go.add(g.groupType());
            }
        }
        answered(rid, o);
    }

    /** DeleteGroups ("groups") at {@code version}: the service's share-group step finds
     * none, then the shard's deleteGroups answers per group (GroupCoordinatorService.deleteGroups). */
    final void delete(int rid, JsonNode op, int version) {
        List<String> ids = new ArrayList<>();
        op.path("groups").forEach(g -> ids.add(g.asText()));
        AuthorizableRequestContext ctx = context(42, version, "admin");
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

    /** OffsetDelete (KIP-496): the service refuses a null or empty group id before the
     * shard (GroupCoordinatorService.deleteOffsets, isGroupIdNotEmpty); the shard's
     * deleteOffsets (OffsetMetadataManager) answers per partition and writes the
     * tombstones, which are appended and replayed; an exception becomes a response with
     * the error alone (the service's handleOperationException). The broker's API layer
     * (unknown topics and partitions, ACLs: KafkaApis) is not part of the coordinator. */
    final void offsetDelete(int rid, JsonNode op) {
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
}
