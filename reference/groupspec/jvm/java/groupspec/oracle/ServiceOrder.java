package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;

/**
 * The order GroupCoordinatorService lists the answers of a request naming several groups
 * (describeGroups, deleteGroups, consumerGroupDescribe): each id put with computeIfAbsent in
 * a HashMap keyed by its __consumer_offsets partition, the map then iterated:
 * {"groups": [id, ...], "partitions": n, "hash_set": bool} -> [id, ...]. With "hash_set"
 * each partition's ids go through a new HashSet made from them, as deleteGroups hands them
 * to the shard (updateResponseAndGetNonErrorGroupList: new HashSet<>(groupList) streamed).
 */
public final class ServiceOrder implements Tool {
    @Override
    public JsonNode run(JsonNode input) {
        int partitions = input.path("partitions").asInt(50);
        boolean hashSet = input.path("hash_set").asBoolean(false);
        Map<TopicPartition, List<String>> byPartition = new HashMap<>();
        for (JsonNode id : input.path("groups")) {
            String groupId = id.asText();
            TopicPartition tp = new TopicPartition("__consumer_offsets", Utils.abs(groupId.hashCode()) % partitions);
            byPartition.computeIfAbsent(tp, k -> new ArrayList<>()).add(groupId);
        }
        ArrayNode result = JsonNodeFactory.instance.arrayNode();
        byPartition.forEach((tp, ids) -> (hashSet ? new HashSet<>(ids).stream().toList() : ids).forEach(result::add));
        return result;
    }
}
