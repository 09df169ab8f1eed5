package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Times Kafka's server-side assignor inside the JVM, for bench/server_assignors.py.
 *
 * Input: {"assignor": NAME, "topics": [UUID, ...], "partitions": N,
 *   "members": [{"member_id": S, "topics": [topic index, ...]}, ...],
 *   "scenario": "fresh"|"leave"|"join", "leaver": member index, "joiner": {member},
 *   "warmup": W, "runs": R}
 * The group is the members in the given order with the given subscriptions. "fresh": nobody
 * holds anything. "leave"/"join": first the fresh target is computed (untimed), then the
 * leaver is removed or the joiner added, the others holding their fresh target (as the
 * coordinator keeps it: unmodifiable maps of the assignor's own sets). The assign call is run
 * W times untimed (JIT warm-up) and R times timed.
 *
 * Output: {"times_s": [...], "moves": M, "assigned": A, "members": K, "min_size": x, "max_size": y}.
 */
public final class ServerAssignorBench implements Tool {
    @Override
    public JsonNode run(JsonNode input) {
        ConsumerGroupPartitionAssignor assignor = ServerAssignor.assignor(input.path("assignor").asText());
        List<Uuid> topicIds = new ArrayList<>();
        input.path("topics").forEach(t -> topicIds.add(Uuid.fromString(t.asText())));
        int partitions = input.path("partitions").asInt();
        ServerAssignor.Describer describer = new ServerAssignor.Describer();
        topicIds.forEach(t -> describer.partitions.put(t, partitions));

        Map<String, Set<Uuid>> subscriptions = new LinkedHashMap<>();
        for (JsonNode m : input.path("members")) {
            subscriptions.put(m.path("member_id").asText(), topics(m, topicIds));
        }
        Map<String, Map<Uuid, Set<Integer>>> current = new HashMap<>();
        String scenario = input.path("scenario").asText();
        if (!scenario.equals("fresh")) {
            GroupAssignment fresh = assignor.assign(spec(subscriptions, current), describer);
            fresh.members().forEach((id, a) -> current.put(id, a.partitions()));
            if (scenario.equals("leave")) {
                String leaver = input.path("members").get(input.path("leaver").asInt()).path("member_id").asText();
                subscriptions.remove(leaver);
            } else if (scenario.equals("join")) {
                JsonNode joiner = input.path("joiner");
                subscriptions.put(joiner.path("member_id").asText(), topics(joiner, topicIds));
            } else {
                throw new IllegalArgumentException("unknown scenario " + scenario);
            }
        }
        GroupSpecImpl spec = spec(subscriptions, current);

        GroupAssignment result = null;
        for (int i = 0; i < input.path("warmup").asInt(); i++) {
            result = assignor.assign(spec, describer);
        }
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        ArrayNode times = out.putArray("times_s");
        for (int i = 0; i < input.path("runs").asInt(); i++) {
            long start = System.nanoTime();
            result = assignor.assign(spec, describer);
            times.add((System.nanoTime() - start) / 1e9);
        }

        Map<Uuid, Map<Integer, String>> before = owners(current);
        long moves = 0;
        long assigned = 0;
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (Map.Entry<String, MemberAssignment> e : result.members().entrySet()) {
            int size = 0;
            for (Map.Entry<Uuid, Set<Integer>> tp : e.getValue().partitions().entrySet()) {
                Map<Integer, String> prev = before.getOrDefault(tp.getKey(), Map.of());
                for (int p : tp.getValue()) {
                    String owner = prev.get(p);
                    if (owner != null && !owner.equals(e.getKey())) {
                        moves++;
                    }
                }
                size += tp.getValue().size();
            }
            assigned += size;
            min = Math.min(min, size);
            max = Math.max(max, size);
        }
        out.put("moves", moves).put("assigned", assigned).put("members", result.members().size());
        out.put("min_size", min).put("max_size", max);
        return out;
    }

    static Set<Uuid> topics(JsonNode member, List<Uuid> topicIds) {
        Set<Uuid> out = new LinkedHashSet<>();
        member.path("topics").forEach(i -> out.add(topicIds.get(i.asInt())));
        return Collections.unmodifiableSet(out);
    }

    static GroupSpecImpl spec(Map<String, Set<Uuid>> subscriptions, Map<String, Map<Uuid, Set<Integer>>> current) {
        Map<String, MemberSubscriptionAndAssignmentImpl> members = new LinkedHashMap<>();
        boolean homogeneous = new java.util.HashSet<>(subscriptions.values()).size() <= 1;
        subscriptions.forEach((id, topics) -> members.put(id, new MemberSubscriptionAndAssignmentImpl(
            Optional.empty(), Optional.empty(), topics,
            new Assignment(current.getOrDefault(id, Map.of())))));
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        members.forEach((id, m) -> m.partitions().forEach((t, ps) -> {
            Map<Integer, String> byPartition = inverted.computeIfAbsent(t, k -> new HashMap<>());
            ps.forEach(p -> byPartition.put(p, id));
        }));
        return new GroupSpecImpl(
            Collections.unmodifiableMap(members),
            homogeneous ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS,
            inverted);
    }

    static Map<Uuid, Map<Integer, String>> owners(Map<String, Map<Uuid, Set<Integer>>> assignment) {
        Map<Uuid, Map<Integer, String>> out = new HashMap<>();
        assignment.forEach((id, parts) -> parts.forEach((t, ps) -> {
            Map<Integer, String> byPartition = out.computeIfAbsent(t, k -> new HashMap<>());
            ps.forEach(p -> byPartition.put(p, id));
        }));
        return out;
    }
}
