package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberValue;
import org.apache.kafka.coordinator.group.modern.Assignment;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The iteration order of a member's target assignment as the coordinator holds it after
 * replaying its record (Assignment.fromRecord): [[UUID, [p, ...]], ...] in record order ->
 * the same pairs in the order the resulting map and sets iterate.
 */
public final class ReplayedAssignmentOrder implements Tool {
    @Override
    public JsonNode run(JsonNode input) {
        List<ConsumerGroupTargetAssignmentMemberValue.TopicPartition> topics = new ArrayList<>();
        for (JsonNode entry : input) {
            List<Integer> partitions = new ArrayList<>();
            entry.get(1).forEach(p -> partitions.add(p.asInt()));
            topics.add(new ConsumerGroupTargetAssignmentMemberValue.TopicPartition()
                .setTopicId(Uuid.fromString(entry.get(0).asText()))
                .setPartitions(partitions));
        }
        Assignment assignment = Assignment.fromRecord(
            new ConsumerGroupTargetAssignmentMemberValue().setTopicPartitions(topics));
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (Map.Entry<Uuid, Set<Integer>> e : assignment.partitions().entrySet()) {
            ArrayNode pair = out.addArray();
            pair.add(e.getKey().toString());
            ArrayNode parts = pair.addArray();
            e.getValue().forEach(parts::add);
        }
        return out;
    }
}
