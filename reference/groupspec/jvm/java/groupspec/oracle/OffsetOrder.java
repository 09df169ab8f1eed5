package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.timeline.SnapshotRegistry;
import org.apache.kafka.timeline.TimelineHashMap;

/**
 * The order of one group's committed offsets in the nested TimelineHashMaps
 * OffsetMetadataManager keeps them in (topic -> partition, each created with expected size
 * 0; a commit puts the partition, creating the topic's map if absent; a tombstone removes
 * it, and an emptied partition map is dropped from the topic map), iterated as
 * fetchAllOffsets and deleteAllOffsets do:
 * {"ops": [["put" | "remove", topic, partition], ...]} -> [[topic, partition], ...].
 */
public final class OffsetOrder implements Tool {
    @Override
    public JsonNode run(JsonNode input) {
        SnapshotRegistry registry = new SnapshotRegistry(new LogContext());
        TimelineHashMap<String, TimelineHashMap<Integer, Long>> byTopic = new TimelineHashMap<>(registry, 0);
        long n = 0;
        for (JsonNode op : input.path("ops")) {
            String topic = op.get(1).asText();
            int partition = op.get(2).asInt();
            if ("put".equals(op.get(0).asText())) {
                byTopic.computeIfAbsent(topic, t -> new TimelineHashMap<>(registry, 0)).put(partition, n++);
            } else {
                TimelineHashMap<Integer, Long> byPartition = byTopic.get(topic);
                if (byPartition == null) {
                    continue;
                }
                byPartition.remove(partition);
                if (byPartition.isEmpty()) {
                    byTopic.remove(topic);
                }
            }
        }
        ArrayNode result = JsonNodeFactory.instance.arrayNode();
        byTopic.entrySet().forEach(topic -> topic.getValue().keySet().forEach(partition -> {
            ArrayNode pair = result.addArray();
            pair.add(topic.getKey());
            pair.add(partition);
        }));
        return result;
    }
}
