package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.coordinator.common.runtime.CoordinatorExecutor;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.classic.ClassicGroup;
import org.apache.kafka.coordinator.group.generated.GroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.GroupMetadataValue;
import org.apache.kafka.coordinator.group.classic.ClassicGroupMember;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

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
 * <p>What plays the runtime (CoordinatorRuntime) here is {@link ManualShardRuntime}, shared
 * with {@link ConsumerGroupShard}: each CoordinatorResult's records are replayed into the
 * shard at once (as a write that always succeeds) and its append future completed; an
 * operation that throws is answered as GroupCoordinatorService answers it (its
 * CoordinatorOperationExceptionHelper, with the service's per-request handlers). Classic
 * groups run no executor task (NoExecutor). The service's own request checks that the shard
 * does not repeat (a JoinGroup session timeout outside the configured bounds) are applied
 * here before the shard sees the request. Timers due at the same millisecond, whose order
 * Kafka leaves to its timing wheel, fire in the order the reference uses (heartbeats, then
 * pending members, then join, then sync, each by group and member), one of the orders Kafka
 * may produce.
 */
public final class ClassicGroupShard extends ShardTool {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Logger LOG = LoggerFactory.getLogger(ClassicGroupShard.class);

    @Override
    ManualShardRuntime reset(JsonNode input) throws ReflectiveOperationException {
        return new State(input.path("config"));
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

    private static final class State extends ManualShardRuntime {
        /** every member id seen so far (in responses, then in groups) */
        final Set<String> seenIds = new LinkedHashSet<>();
        final Map<String, GroupMetadataValue> persisted = new HashMap<>();

        State(JsonNode cfg) throws ReflectiveOperationException {
            super(cfg, "[groupspec shard] ", LOG);
            load();
        }

        @Override
        CoordinatorExecutor<CoordinatorRecord> newExecutor() {
            return new NoExecutor();
        }

        @Override
        MetadataImage loadedImage() {
            return MetadataImage.EMPTY;
        }

        @Override
        void appended(CoordinatorRecord record) {
            if (record.key() instanceof GroupMetadataKey key) {
                // the group's last persisted metadata (null: a tombstone)
                persisted.put(key.group(), record.value() == null ? null : (GroupMetadataValue) record.value().message());
            }
        }

        @Override
        JsonNode step(JsonNode op) throws ReflectiveOperationException {
            begin(op);
            String kind = op.path("kind").asText();
            int rid = op.path("rid").asInt();
            switch (kind) {
                case "advance": advance(op.path("to").asLong()); break;
                case "failover": failover(); break;
                case "join": join(rid, op); break;
                case "sync": sync(rid, op); break;
                case "heartbeat": classicHeartbeat(rid, op); break;
                case "leave": classicLeave(rid, op); break;
                case "commit": commit(rid, op, 8); break;
                case "txn_commit": txnCommit(rid, op); break;
                case "delete": delete(rid, op, op.path("version").asInt(2)); break;
                case "describe": describeGroups(rid, op); break;
                case "fetch": fetch(rid, op); break;
                case "list": list(rid, op, false); break;
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
            o.set("timers", timersJson(found));
            putOffsets(o, gid);
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
        @Override
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

        // ------------------------------------------------------------------ requests

        /** DescribeGroups: the service reads the shard at its last committed offset; every
         * write here is committed at once, so the latest state is read. */
        void describeGroups(int rid, JsonNode op) {
            List<String> ids = new ArrayList<>();
            op.path("groups").forEach(g -> ids.add(g.asText()));
            AuthorizableRequestContext ctx = context(15, op.path("version").asInt(5), "admin");
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
    }
}
