package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberValue;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Runs Kafka's server-side assignors (UniformAssignor, RangeAssignor) on a group given as JSON.
 *
 * Input: {"assignor": "uniform"|"range", "subscription_type": "HOMOGENEOUS"|"HETEROGENEOUS",
 *   "topics": [{"id": UUID, "partitions": N, "racks": [[rack, ...], ...]}],
 *   "members": [{"member_id": S, "instance_id": S|null, "rack_id": S|null,
 *                "topics": [UUID, ...], "assignment": [[UUID, [p, ...]], ...]}]}
 * UUIDs in Kafka's base64 form. Every order in the input is kept: members() iterates in the
 * given order (GroupSpec.memberIds()), subscriptions and assignments too (linked collections
 * behind the unmodifiable maps the coordinator hands over), so an order-sensitive rule of the
 * assignor sees exactly what the Python side sees. The inverted assignment is built from the
 * members' assignments, as the coordinator keeps it. With "replayed": true, each member's
 * assignment is instead built by Assignment.fromRecord from a record listing it in the
 * given order, so Kafka's own collection orders apply.
 *
 * Output: {"members": {member_id: [[UUID, [p, ...]], ...]}} with partitions sorted, or
 * {"error": message} when the assignor throws PartitionAssignorException.
 */
public final class ServerAssignor implements Tool {
    static ConsumerGroupPartitionAssignor assignor(String name) {
        switch (name) {
            case "uniform":
                return new UniformAssignor();
            case "range":
                return new RangeAssignor();
            default:
                throw new IllegalArgumentException("unknown server assignor " + name);
        }
    }

    /** A describer over plain partition counts and racks (no MetadataImage needed). */
    static final class Describer implements SubscribedTopicDescriber {
        final Map<Uuid, Integer> partitions = new HashMap<>();
        final Map<Uuid, List<Set<String>>> racks = new HashMap<>();

        @Override
        public int numPartitions(Uuid topicId) {
            return partitions.getOrDefault(topicId, -1);
        }

        @Override
        public Set<String> racksForPartition(Uuid topicId, int partition) {
            List<Set<String>> byPartition = racks.get(topicId);
            if (byPartition == null || partition < 0 || partition >= byPartition.size()) {
                return Set.of();
            }
            return byPartition.get(partition);
        }
    }

    static Describer describer(JsonNode topics) {
        Describer d = new Describer();
        for (JsonNode t : topics) {
            Uuid id = Uuid.fromString(t.path("id").asText());
            d.partitions.put(id, t.path("partitions").asInt());
            List<Set<String>> racks = new ArrayList<>();
            for (JsonNode rs : t.path("racks")) {
                Set<String> set = new HashSet<>();
                rs.forEach(r -> set.add(r.asText()));
                racks.add(Collections.unmodifiableSet(set));
            }
            d.racks.put(id, racks);
        }
        return d;
    }

    static Optional<String> optional(JsonNode node) {
        return node == null || node.isNull() || node.isMissingNode()
            ? Optional.empty() : Optional.of(node.asText());
    }

    static GroupSpecImpl groupSpec(JsonNode input) {
        Map<String, MemberSubscriptionAndAssignmentImpl> members = new LinkedHashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        for (JsonNode m : input.path("members")) {
            String memberId = m.path("member_id").asText();
            Set<Uuid> topics = new LinkedHashSet<>();
            m.path("topics").forEach(t -> topics.add(Uuid.fromString(t.asText())));
            Map<Uuid, Set<Integer>> assignment = new LinkedHashMap<>();
            List<ConsumerGroupTargetAssignmentMemberValue.TopicPartition> record = new ArrayList<>();
            for (JsonNode entry : m.path("assignment")) {
                Uuid topicId = Uuid.fromString(entry.get(0).asText());
                Set<Integer> partitions = new LinkedHashSet<>();
                for (JsonNode p : entry.get(1)) {
                    partitions.add(p.asInt());
                    inverted.computeIfAbsent(topicId, k -> new HashMap<>()).put(p.asInt(), memberId);
                }
                assignment.put(topicId, partitions);
                record.add(new ConsumerGroupTargetAssignmentMemberValue.TopicPartition()
                    .setTopicId(topicId).setPartitions(new ArrayList<>(partitions)));
            }
            // "replayed": the assignment as the coordinator holds it after replaying its
            // record, in Java's own orders, instead of the orders given.
            Assignment current = input.path("replayed").asBoolean(false)
                ? Assignment.fromRecord(new ConsumerGroupTargetAssignmentMemberValue().setTopicPartitions(record))
                : new Assignment(assignment);
            members.put(memberId, new MemberSubscriptionAndAssignmentImpl(
                optional(m.get("rack_id")),
                optional(m.get("instance_id")),
                Collections.unmodifiableSet(topics),
                current
            ));
        }
        return new GroupSpecImpl(
            Collections.unmodifiableMap(members),
            SubscriptionType.valueOf(input.path("subscription_type").asText()),
            inverted
        );
    }

    static ObjectNode render(GroupAssignment result) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        ObjectNode members = out.putObject("members");
        for (Map.Entry<String, MemberAssignment> e : result.members().entrySet()) {
            ArrayNode topics = members.putArray(e.getKey());
            for (Map.Entry<Uuid, Set<Integer>> tp : e.getValue().partitions().entrySet()) {
                ArrayNode pair = topics.addArray();
                pair.add(tp.getKey().toString());
                ArrayNode parts = pair.addArray();
                List<Integer> sorted = new ArrayList<>(tp.getValue());
                Collections.sort(sorted);
                sorted.forEach(parts::add);
            }
        }
        return out;
    }

    @Override
    public JsonNode run(JsonNode input) {
        ConsumerGroupPartitionAssignor a = assignor(input.path("assignor").asText());
        try {
            return render(a.assign(groupSpec(input), describer(input.path("topics"))));
        } catch (PartitionAssignorException e) {
            ObjectNode out = JsonNodeFactory.instance.objectNode();
            out.put("error", e.getMessage());
            return out;
        }
    }
}
