package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.timeline.SnapshotRegistry;
import org.apache.kafka.timeline.TimelineHashMap;

/**
 * The order ListGroups lists groups in, with the collections Kafka keeps them in: one
 * TimelineHashMap of group ids per __consumer_offsets partition (GroupMetadataManager.groups,
 * expected size 0), and the runtime's ConcurrentHashMap keyed by the partitions, iterated to
 * visit the shards (CoordinatorRuntime.coordinators):
 * {"partitions": n, "load": [p, ...], "ops": [["put" | "remove", id], ...]} -> [id, ...]
 * ("load" is the order the partitions were put in the runtime's map, 0..n-1 by default).
 */
public final class ListGroupsOrder implements Tool {
    @Override
    public JsonNode run(JsonNode input) {
        int partitions = input.path("partitions").asInt(50);
        ConcurrentHashMap<TopicPartition, TimelineHashMap<String, Integer>> shards = new ConcurrentHashMap<>();
        if (input.has("load")) {
            for (JsonNode p : input.get("load")) {
                shards.put(new TopicPartition("__consumer_offsets", p.asInt()), newShard());
            }
        } else {
            for (int p = 0; p < partitions; p++) {
                shards.put(new TopicPartition("__consumer_offsets", p), newShard());
            }
        }
        int n = 0;
        for (JsonNode op : input.path("ops")) {
            String groupId = op.get(1).asText();
            TopicPartition tp = new TopicPartition("__consumer_offsets", Utils.abs(groupId.hashCode()) % partitions);
            TimelineHashMap<String, Integer> groups = shards.get(tp);
            if ("put".equals(op.get(0).asText())) {
                groups.put(groupId, n++);
            } else {
                groups.remove(groupId);
            }
        }
        ArrayNode result = JsonNodeFactory.instance.arrayNode();
        shards.keySet().forEach(tp -> shards.get(tp).keySet().forEach(result::add));
        return result;
    }

    private static TimelineHashMap<String, Integer> newShard() {
        return new TimelineHashMap<>(new SnapshotRegistry(new LogContext()), 0);
    }
}
