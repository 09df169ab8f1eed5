package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.internals.Plugin;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.RecordBatch;
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
import org.apache.kafka.coordinator.group.classic.ClassicGroup;
import org.apache.kafka.coordinator.group.generated.GroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.GroupMetadataValue;
import org.apache.kafka.coordinator.group.classic.ClassicGroupMember;
import org.apache.kafka.coordinator.group.metrics.GroupCoordinatorMetrics;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.timeline.SnapshotRegistry;

import com.yammer.metrics.core.MetricsRegistry;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.reflect.Field;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

/**
 * One Kafka 4.1.2 group coordinator shard (GroupCoordinatorShard from
 * kafka-group-coordinator, with its GroupMetadataManager and OffsetMetadataManager), driven
 * by classic-protocol requests one at a time, with a clock that moves only when told.
 *
 * <p>Input, one of:
 * <ul>
 * <li>{"action": "reset", "config": {kafka property: value}}: a fresh shard at time 0;</li>
 * <li>{"action": "op", "op": {...}}: one step on the current shard: a request
 * ("join", "sync", "heartbeat", "leave", "commit", with "rid") handled at the current time,
 * or {"kind": "advance", "to": ms}, which moves the clock to "to", firing the timers due on
 * the way, each at its own deadline.</li>
 * </ul>
 * Output of a step: {"completed": [[rid, response], ...] in completion order, "ids": member
 * ids seen for the first time (in responses, then in groups), "groups": {id: summary}}.
 *
 * <p>What plays the runtime (CoordinatorRuntime) here: each CoordinatorResult's records are
 * replayed into the shard at once (as a write that always succeeds) and its append future
 * completed; an operation that throws is answered as GroupCoordinatorService answers it
 * (its CoordinatorOperationExceptionHelper, with the service's per-request handlers); the
 * service's own request checks that the shard does not repeat (a JoinGroup session timeout
 * outside the configured bounds) are applied here before the shard sees the request.
 * Timers due at the same millisecond, whose order Kafka leaves to its timing wheel, fire in
 * the order the reference uses (heartbeats, then pending members, then join, then sync,
 * each by group and member), one of the orders Kafka may produce.
 */
public final class ClassicGroupShard implements Tool {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Logger LOG = LoggerFactory.getLogger(ClassicGroupShard.class);

    private State state;

    @Override
    public JsonNode run(JsonNode input) throws Exception {
        String action = input.path("action").asText();
        switch (action) {
            case "reset":
                if (state != null) {
                    state.close();
                }
                state = new State(input.path("config"));
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

    /** Classic groups never run executor tasks; a task scheduled anyway is an error. */
    private static final class NoExecutor implements CoordinatorExecutor<CoordinatorRecord> {
        @Override
        public <R> boolean schedule(String key, TaskRunnable<R> task, TaskOperation<CoordinatorRecord, R> operation) {
            throw new IllegalStateException("executor task scheduled by a classic-group operation: " + key);
        }

        @Override
        public boolean isScheduled(String key) {
            return false;
        }

        @Override
        public void cancel(String key) {
        }
    }

    /** The request context the shard reads: api key and version, client id and address. */
    private static AuthorizableRequestContext context(int apiKey, int version, String clientId, String host) {
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

    private static final class State {
        final ManualClock time = new ManualClock();
        ManualTimer timer;
        Metrics metrics;
        final GroupCoordinatorConfig config;
        GroupCoordinatorShard shard;
        GroupMetadataManager groups;
        final Set<String> groupIds = new LinkedHashSet<>();
        final Set<String> seenIds = new LinkedHashSet<>();
        final List<String> newIds = new ArrayList<>();
        final Map<String, GroupMetadataValue> persisted = new HashMap<>();
        /** every record appended so far: what a coordinator loading the partition replays */
        final List<CoordinatorRecord> log = new ArrayList<>();
        ArrayNode completed;
        long offset;

        State(JsonNode cfg) throws ReflectiveOperationException {
            Map<String, Object> props = new HashMap<>();
            cfg.fields().forEachRemaining(e -> props.put(e.getKey(), e.getValue().asText()));
            config = GroupCoordinatorConfig.fromProps(props);
            load();
        }

        /** A fresh shard (timer, snapshot registry, metrics) that replays the log, then
         * onLoaded, as the runtime loads a __consumer_offsets partition. */
        void load() throws ReflectiveOperationException {
            if (metrics != null) {
                metrics.close();
            }
            timer = new ManualTimer(time);
            metrics = new Metrics();
            LogContext logContext = new LogContext("[groupspec shard] ");
            SnapshotRegistry snapshots = new SnapshotRegistry(logContext);
            GroupCoordinatorShard.Builder builder =
                new GroupCoordinatorShard.Builder(config, new GroupConfigManager(Map.of()));
            builder.withAuthorizerPlugin(Optional.<Plugin<org.apache.kafka.server.authorizer.Authorizer>>empty());
            shard = builder
                .withLogContext(logContext)
                .withTime(time)
                .withTimer(timer)
                .withExecutor(new NoExecutor())
                .withCoordinatorMetrics(new GroupCoordinatorMetrics(new MetricsRegistry(), metrics))
                .withTopicPartition(new TopicPartition("__consumer_offsets", 0))
                .withSnapshotRegistry(snapshots)
                .build();
            long at = 0;
            for (CoordinatorRecord record : log) {
                shard.replay(at++, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH, record);
            }
            shard.onLoaded(MetadataImage.EMPTY);
            Field f = GroupCoordinatorShard.class.getDeclaredField("groupMetadataManager");
            f.setAccessible(true);
            groups = (GroupMetadataManager) f.get(shard);
        }

        /** The coordinator moves: the shard unloads (parked JoinGroup / SyncGroup answered
         * NOT_COORDINATOR by GroupMetadataManager.onUnloaded), another loads the log. */
        void failover() throws ReflectiveOperationException {
            shard.onUnloaded();
            load();
        }

        void close() {
            metrics.close();
        }

        /** What the runtime does with a finished write: replay its records, then complete its append future. */
        <T> T apply(CoordinatorResult<T, CoordinatorRecord> result) {
            for (CoordinatorRecord record : result.records()) {
                // the records go to the log whether or not they are replayed (a result that
                // says not to replay has already applied them, e.g. the empty record of a
                // group just created)
                if (result.replayRecords()) {
                    shard.replay(offset, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH, record);
                }
                offset++;
                log.add(record);
                if (record.key() instanceof GroupMetadataKey key) {
                    // the group's last persisted metadata (null: a tombstone)
                    persisted.put(key.group(), record.value() == null ? null : (GroupMetadataValue) record.value().message());
                }
            }
            if (result.appendFuture() != null) {
                result.appendFuture().complete(null);
            }
            return result.response();
        }

        void answered(int rid, ObjectNode response) {
            ArrayNode pair = JSON.createArrayNode();
            pair.add(rid);
            pair.add(response);
            completed.add(pair);
        }

        <R> void whenDone(int rid, CompletableFuture<R> future, java.util.function.Function<R, ObjectNode> render) {
            future.whenComplete((r, e) -> {
                if (e != null) {
                    throw new IllegalStateException("response future failed", e);
                }
                answered(rid, render.apply(r));
            });
        }

        /** The service's answer to an operation that threw (GroupCoordinatorService). */
        <T> T onError(String name, Object request, Throwable e, BiFunction<Errors, String, T> handler) {
            return CoordinatorOperationExceptionHelper.handleOperationException(name, request, e, handler, LOG);
        }

        JsonNode step(JsonNode op) throws ReflectiveOperationException {
            completed = JSON.createArrayNode();
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
                case "join": join(rid, op); break;
                case "sync": sync(rid, op); break;
                case "heartbeat": heartbeat(rid, op); break;
                case "leave": leave(rid, op); break;
                case "commit": commit(rid, op); break;
                case "delete": delete(rid, op); break;
                case "describe": describeGroups(rid, op); break;
                case "fetch": fetch(rid, op); break;
                case "list": list(rid, op); break;
                case "offset_delete": offsetDelete(rid, op); break;
                default: throw new IllegalArgumentException("unknown op kind: " + kind);
            }
            ObjectNode out = JSON.createObjectNode();
            out.set("completed", completed);
            for (JsonNode pair : completed) {
                collectIds(pair.get(1));
            }
            ObjectNode summary = JSON.createObjectNode();
            for (String gid : groupIds) {
                ObjectNode g = describe(gid);
                if (g != null) {
                    summary.set(gid, g);
                }
            }
            for (JsonNode g : summary) {
                for (JsonNode m : g.path("members")) {
                    see(m.asText());
                }
                for (JsonNode m : g.path("pending")) {
                    see(m.asText());
                }
            }
            ArrayNode ids = JSON.createArrayNode();
            newIds.forEach(ids::add);
            out.set("ids", ids);
            out.set("groups", summary);
            return out;
        }

        void see(String id) {
            if (!id.isEmpty() && seenIds.add(id)) {
                newIds.add(id);
            }
        }

        void collectIds(JsonNode response) {
            if (response.hasNonNull("member_id")) {
                see(response.get("member_id").asText());
            }
            for (JsonNode m : response.path("members")) {
                if (m.hasNonNull("member_id")) {
                    see(m.get("member_id").asText());
                }
            }
        }

        ObjectNode describe(String gid) {
            ClassicGroup g;
            try {
                g = groups.classicGroup(gid, Long.MAX_VALUE);
            } catch (Exception e) {
                return null;
            }
            ObjectNode o = JSON.createObjectNode();
            o.put("state", g.currentState().toString());
            o.put("generation", g.generationId());
            o.put("leader", g.leaderOrNull());
            o.put("protocol_name", g.protocolName().orElse(null));
            ArrayNode members = o.putArray("members");
            g.allMembers().stream().map(ClassicGroupMember::memberId).sorted().forEach(members::add);
            // each member's own state, by member id
            ObjectNode detail = o.putObject("member_state");
            for (ClassicGroupMember m : g.allMembers()) {
                ObjectNode d = detail.putObject(m.memberId());
                d.put("group_instance_id", m.groupInstanceId().orElse(null));
                d.put("session_timeout_ms", m.sessionTimeoutMs());
                d.put("rebalance_timeout_ms", m.rebalanceTimeoutMs());
                d.put("assignment", Base64.getEncoder().encodeToString(m.assignment()));
                d.put("awaiting_join", m.isAwaitingJoin());
                d.put("awaiting_sync", m.isAwaitingSync());
                d.put("is_new", m.isNew());
            }
            GroupMetadataValue saved = persisted.get(gid);
            if (saved == null) {
                o.putNull("persisted");
            } else {
                ObjectNode po = o.putObject("persisted");
                po.put("protocol_type", saved.protocolType());
                po.put("generation", saved.generation());
                po.put("protocol", saved.protocol());
                po.put("leader", saved.leader());
                po.put("state_timestamp", saved.currentStateTimestamp());
                ArrayNode pm = po.putArray("members");
                for (GroupMetadataValue.MemberMetadata m : saved.members()) {
                    ArrayNode each = pm.addArray();
                    each.add(m.memberId());
                    each.add(m.groupInstanceId());
                    each.add(m.clientId());
                    each.add(m.clientHost());
                    each.add(m.rebalanceTimeout());
                    each.add(m.sessionTimeout());
                    each.add(Base64.getEncoder().encodeToString(m.subscription()));
                    each.add(Base64.getEncoder().encodeToString(m.assignment()));
                }
            }
            ArrayNode pendingSync = o.putArray("pending_sync");
            g.allPendingSyncMembers().stream().sorted().forEach(pendingSync::add);
            // the group's running timers: [kind, member, deadline]
            ArrayNode timers = o.putArray("timers");
            List<String[]> found = new ArrayList<>();
            for (ManualTimer.Scheduled t : timer.byKey.values()) {
                if (t.key.startsWith("heartbeat-" + gid + "-")) {
                    String member = t.key.substring(("heartbeat-" + gid + "-").length());
                    // a heartbeat timer left behind for an id that is neither a member nor a
                    // pending member does nothing when it fires
                    // (GroupMetadataManager.expireClassicGroupMemberHeartbeat): not listed
                    if (g.hasMember(member) || g.isPendingMember(member)) {
                        found.add(new String[] {"heartbeat", member, Long.toString(t.deadline)});
                    }
                } else if (t.key.equals("join-" + gid)) {
                    found.add(new String[] {"join", "", Long.toString(t.deadline)});
                } else if (t.key.equals("sync-" + gid)) {
                    found.add(new String[] {"sync", "", Long.toString(t.deadline)});
                }
            }
            found.sort((a, b) -> (a[0] + "\0" + a[1]).compareTo(b[0] + "\0" + b[1]));
            for (String[] t : found) {
                ArrayNode each = timers.addArray();
                each.add(t[0]);
                each.add(t[1]);
                each.add(Long.parseLong(t[2]));
            }
            // the committed offsets, read as OffsetFetch with require_stable reads them
            ObjectNode offsets = o.putObject("offsets");
            OffsetFetchResponseData.OffsetFetchResponseGroup fetched = shard.fetchAllOffsets(
                new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(gid).setTopics(null), Long.MAX_VALUE);
            for (OffsetFetchResponseData.OffsetFetchResponseTopics t : fetched.topics()) {
                for (OffsetFetchResponseData.OffsetFetchResponsePartitions p : t.partitions()) {
                    offsets.put(t.name() + "-" + p.partitionIndex(), p.committedOffset());
                }
            }
            ArrayNode pending = o.putArray("pending");
            for (String candidate : new ArrayList<>(seenIds)) {
                if (g.isPendingMember(candidate)) {
                    pending.add(candidate);
                }
            }
            return o;
        }

        // ------------------------------------------------------------------ timers

        /** Sort key for timers due at one millisecond: the reference's (kind, group, member). */
        Object[] tieKey(ManualTimer.Scheduled s) {
            String k = s.key;
            int rank;
            String group = "";
            String member = "";
            if (k.startsWith("heartbeat-")) {
                String rest = k.substring("heartbeat-".length());
                group = matchGroup(rest);
                member = rest.substring(Math.min(rest.length(), group.length() + 1));
                ClassicGroup g = null;
                try {
                    g = groups.classicGroup(group, Long.MAX_VALUE);
                } catch (Exception e) {
                    // a group already gone: its timers rank first, they do nothing
                }
                rank = g != null && g.isPendingMember(member) ? 1 : 0;
            } else if (k.startsWith("join-")) {
                rank = 2;
                group = k.substring("join-".length());
            } else if (k.startsWith("sync-")) {
                rank = 3;
                group = k.substring("sync-".length());
            } else {
                rank = 4;
                group = k;
            }
            return new Object[] {s.deadline, rank, group, member};
        }

        String matchGroup(String rest) {
            String best = "";
            for (String gid : groupIds) {
                if (rest.startsWith(gid + "-") && gid.length() > best.length()) {
                    best = gid;
                }
            }
            return best;
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

        void join(int rid, JsonNode op) {
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
            whenDone(rid, future, State::joinJson);
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

        void sync(int rid, JsonNode op) {
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
            whenDone(rid, future, State::syncJson);
            AuthorizableRequestContext ctx = context(14, op.path("version").asInt(5), "consumer", "/127.0.0.1");
            try {
                apply(shard.classicGroupSync(ctx, req, future));
            } catch (Throwable e) {
                if (!future.isDone()) {
                    future.complete(onError("classic-group-sync", req, e,
                        (error, m) -> new SyncGroupResponseData().setErrorCode(error.code())));
                }
            }
        }

        void heartbeat(int rid, JsonNode op) {
            HeartbeatRequestData req = new HeartbeatRequestData()
                .setGroupId(op.path("group").asText())
                .setGenerationId(op.path("generation_id").asInt())
                .setMemberId(op.path("member_id").asText())
                .setGroupInstanceId(optText(op, "group_instance_id"));
            AuthorizableRequestContext ctx = context(12, op.path("version").asInt(4), "consumer", "/127.0.0.1");
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

        void leave(int rid, JsonNode op) {
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
            AuthorizableRequestContext ctx = context(13, op.path("version").asInt(5), "consumer", "/127.0.0.1");
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

        /** DeleteGroups of classic groups: the service's share-group step finds none, then
         * the shard's deleteGroups answers per group (GroupCoordinatorService.deleteGroups). */
        void delete(int rid, JsonNode op) {
            List<String> ids = new ArrayList<>();
            op.path("groups").forEach(g -> ids.add(g.asText()));
            AuthorizableRequestContext ctx = context(42, op.path("version").asInt(2), "admin", "/127.0.0.1");
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

        /** DescribeGroups: the service reads the shard at its last committed offset; every
         * write here is committed at once, so the latest state is read. */
        void describeGroups(int rid, JsonNode op) {
            List<String> ids = new ArrayList<>();
            op.path("groups").forEach(g -> ids.add(g.asText()));
            AuthorizableRequestContext ctx = context(15, op.path("version").asInt(5), "admin", "/127.0.0.1");
            ObjectNode o = JSON.createObjectNode();
            ArrayNode each = o.putArray("groups");
            for (DescribeGroupsResponseData.DescribedGroup g : shard.describeGroups(ctx, ids, Long.MAX_VALUE)) {
                ObjectNode go = each.addObject();
                go.put("error", g.errorCode());
                go.put("group_id", g.groupId());
                go.put("group_state", g.groupState());
                go.put("protocol_type", g.protocolType());
                go.put("protocol_data", g.protocolData());
                ArrayNode ms = go.putArray("members");
                for (DescribeGroupsResponseData.DescribedGroupMember m : g.members()) {
                    ArrayNode mo = ms.addArray();
                    mo.add(m.memberId());
                    mo.add(m.groupInstanceId());
                    mo.add(m.clientId());
                    mo.add(m.clientHost());
                    mo.add(Base64.getEncoder().encodeToString(m.memberMetadata()));
                    mo.add(Base64.getEncoder().encodeToString(m.memberAssignment()));
                }
            }
            answered(rid, o);
        }

        /** ListGroups with a states filter and no types filter: the service combines each
         * shard's listGroups at its last committed offset (GroupCoordinatorService.listGroups);
         * one shard here, every write committed at once. */
        void list(int rid, JsonNode op) {
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
            }
            answered(rid, o);
        }

        /** OffsetFetch of one group: specific partitions ("partitions") or all of them (no
         * "partitions"). The service reads the shard at its last committed offset, or as a
         * write with require_stable (GroupCoordinatorService.fetchOffsets / fetchAllOffsets);
         * every write here is committed at once, so both read the latest state. */
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
            OffsetFetchResponseData.OffsetFetchResponseGroup resp = all
                ? shard.fetchAllOffsets(req, Long.MAX_VALUE)
                : shard.fetchOffsets(req, Long.MAX_VALUE);
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
                }
            }
            answered(rid, o);
        }

        /** OffsetDelete (KIP-496): the service refuses a null or empty group id before the
         * shard (GroupCoordinatorService.deleteOffsets, isGroupIdNotEmpty); the shard's
         * deleteOffsets (OffsetMetadataManager) answers per partition and writes the
         * tombstones, which are appended and replayed; an exception becomes a response with
         * the error alone (the service's handleOperationException). The broker's API layer
         * (unknown topics and partitions, ACLs: KafkaApis) is not part of the coordinator. */
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
            AuthorizableRequestContext ctx = context(47, 0, "admin", "/127.0.0.1");
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
            AuthorizableRequestContext ctx = context(8, op.path("version").asInt(8), "consumer", "/127.0.0.1");
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
    }
}
