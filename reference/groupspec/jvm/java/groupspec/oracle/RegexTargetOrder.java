package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordHelpers;
import org.apache.kafka.coordinator.group.GroupMetadataManager;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupRegularExpressionValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberValue;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.TargetAssignmentBuilder;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroupMember;
import org.apache.kafka.coordinator.group.modern.consumer.ResolvedRegularExpression;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Kafka's own steps for a group whose members subscribe, one after the other, to one regular
 * expression, and the order each step leaves its collections in.
 *
 * Input: {"group_id": S, "regex": S, "topics": [{"name": S, "id": UUID, "partitions": N}],
 *         "members": [member id, ...]} (members join in this order, one group epoch each,
 *         starting at epoch 2 once the regex is resolved).
 * Steps: the metadata image (built from TopicRecord/PartitionRecord in the given order),
 * GroupMetadataManager.refreshRegularExpressions (no authorizer), the regex record
 * (GroupCoordinatorRecordHelpers.newConsumerGroupRegularExpressionRecord) and its replay
 * (a HashSet of the record's topics, as GroupMetadataManager.replay does), then per joining
 * member the uniform assignor through ConsumerTargetAssignmentBuilder (the group's members
 * plus the joining one, the previous targets as replayed by Assignment.fromRecord).
 *
 * Output: {"resolved": [name, ...], "record_topics": [name, ...], "replayed": [name, ...],
 *          "epochs": [{"epoch": E, "records": {member: [[UUID, [p, ...]], ...]},
 *                      "replayed": {member: [[UUID, [p, ...]], ...]}}]}
 * Every list is in Kafka's iteration (or record) order.
 */
public final class RegexTargetOrder implements Tool {
    private static ArrayNode names(Iterable<String> it) {
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        it.forEach(out::add);
        return out;
    }

    private static ArrayNode pairs(Map<Uuid, Set<Integer>> m) {
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (Map.Entry<Uuid, Set<Integer>> e : m.entrySet()) {
            ArrayNode pair = out.addArray();
            pair.add(e.getKey().toString());
            ArrayNode ps = pair.addArray();
            e.getValue().forEach(ps::add);
        }
        return out;
    }

    @Override
    public JsonNode run(JsonNode input) {
        String groupId = input.get("group_id").asText();
        String regex = input.get("regex").asText();

        MetadataDelta delta = new MetadataDelta(MetadataImage.EMPTY);
        for (JsonNode t : input.get("topics")) {
            Uuid id = Uuid.fromString(t.get("id").asText());
            delta.replay(new TopicRecord().setName(t.get("name").asText()).setTopicId(id));
            for (int p = 0; p < t.get("partitions").asInt(); p++) {
                delta.replay(new PartitionRecord().setTopicId(id).setPartitionId(p)
                    .setReplicas(List.of(1)).setIsr(List.of(1)).setLeader(1).setLeaderEpoch(0)
                    .setPartitionEpoch(0));
            }
        }
        MetadataImage image = delta.apply(MetadataProvenance.EMPTY);

        ObjectNode out = JsonNodeFactory.instance.objectNode();
        Map<String, ResolvedRegularExpression> refreshed = GroupMetadataManager.refreshRegularExpressions(
            null, groupId, LoggerFactory.getLogger(RegexTargetOrder.class), Time.SYSTEM, image,
            Optional.empty(), Set.of(regex));
        out.set("resolved", names(refreshed.get(regex).topics));
        CoordinatorRecord regexRecord = GroupCoordinatorRecordHelpers.newConsumerGroupRegularExpressionRecord(
            groupId, regex, refreshed.get(regex));
        ConsumerGroupRegularExpressionValue regexValue =
            (ConsumerGroupRegularExpressionValue) regexRecord.value().message();
        out.set("record_topics", names(regexValue.topics()));
        ResolvedRegularExpression replayed = new ResolvedRegularExpression(
            new HashSet<>(regexValue.topics()), regexValue.version(), regexValue.timestamp());
        out.set("replayed", names(replayed.topics));
        Map<String, ResolvedRegularExpression> resolved = new HashMap<>();
        resolved.put(regex, replayed);

        Map<String, ConsumerGroupMember> members = new HashMap<>();
        Map<String, Assignment> targets = new HashMap<>();
        ArrayNode epochs = out.putArray("epochs");
        int epoch = 1;
        for (JsonNode m : input.get("members")) {
            epoch++;
            String memberId = m.asText();
            ConsumerGroupMember member = new ConsumerGroupMember.Builder(memberId)
                .setSubscribedTopicRegex(regex)
                .setSubscribedTopicNames(List.of())
                .build();
            Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
            targets.forEach((mid, a) -> a.partitions().forEach((t, ps) ->
                ps.forEach(p -> inverted.computeIfAbsent(t, __ -> new HashMap<>()).put(p, mid))));
            TargetAssignmentBuilder.TargetAssignmentResult result =
                new TargetAssignmentBuilder.ConsumerTargetAssignmentBuilder(groupId, epoch, new UniformAssignor())
                    .withMembers(members)
                    .withStaticMembers(Map.of())
                    .withSubscriptionType(SubscriptionType.HOMOGENEOUS)
                    .withTargetAssignment(targets)
                    .withInvertedTargetAssignment(inverted)
                    .withMetadataImage(image)
                    .withResolvedRegularExpressions(resolved)
                    .addOrUpdateMember(memberId, member)
                    .build();
            members.put(memberId, member);
            ObjectNode e = epochs.addObject();
            e.put("epoch", epoch);
            ObjectNode recs = e.putObject("records");
            ObjectNode reps = e.putObject("replayed");
            for (CoordinatorRecord rec : result.records()) {
                if (!(rec.key() instanceof ConsumerGroupTargetAssignmentMemberKey)) {
                    continue;
                }
                String mid = ((ConsumerGroupTargetAssignmentMemberKey) rec.key()).memberId();
                ConsumerGroupTargetAssignmentMemberValue value =
                    (ConsumerGroupTargetAssignmentMemberValue) rec.value().message();
                ArrayNode r = recs.putArray(mid);
                for (ConsumerGroupTargetAssignmentMemberValue.TopicPartition tp : value.topicPartitions()) {
                    ArrayNode pair = r.addArray();
                    pair.add(tp.topicId().toString());
                    ArrayNode ps = pair.addArray();
                    tp.partitions().forEach(ps::add);
                }
                Assignment a = Assignment.fromRecord(value);
                targets.put(mid, a);
                reps.set(mid, pairs(a.partitions()));
            }
        }
        return out;
    }
}
