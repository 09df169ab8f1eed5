package groupspec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Runs one of Kafka's client-side assignors the way a group leader does
 * (ConsumerCoordinator.onLeaderElected: a HashMap of subscriptions filled in JoinGroup order,
 * then assignor.assign(Cluster, GroupSubscription)), with a fresh assignor per request.
 *
 * <pre>
 * {"assignor": "range" | "roundrobin" | "sticky" | "cooperative-sticky",
 *  "topics": [{"name": T, "partitions": N, "racks": [[rack or null, ...] per partition] or null}],
 *  "members": [{"member_id": M, "group_instance_id": I or null, "topics": [T, ...],
 *               "user_data": base64 or null, "owned": [[T, p], ...], "generation": G,
 *               "rack": R or null}],
 *  "repeat": K (optional: run K more times first, untimed, to warm up)}
 * -> {"assignment": {M: [[T, p], ...]}, "nanos": time of the last assign call}
 * </pre>
 *
 * A partition without racks gets one replica on a node without a rack, as a broker that has
 * no broker.rack reports it.
 */
public final class KafkaAssignor implements Tool {
    private static ConsumerPartitionAssignor assignor(String name) {
        switch (name) {
            case "range":
                return new RangeAssignor();
            case "roundrobin":
                return new RoundRobinAssignor();
            case "sticky":
                return new StickyAssignor();
            case "cooperative-sticky":
                return new CooperativeStickyAssignor();
            default:
                throw new IllegalArgumentException("unknown assignor " + name);
        }
    }

    private static Cluster cluster(JsonNode topics) {
        Map<String, Node> nodes = new HashMap<>();
        Node noRack = new Node(0, "broker-0", 9092);
        List<PartitionInfo> partitions = new ArrayList<>();
        for (JsonNode topic : topics) {
            String name = topic.path("name").asText();
            int count = topic.path("partitions").asInt();
            JsonNode racks = topic.path("racks");
            for (int p = 0; p < count; p++) {
                Node[] replicas;
                if (racks.isArray()) {
                    JsonNode these = racks.get(p);
                    replicas = new Node[these.size()];
                    for (int r = 0; r < these.size(); r++) {
                        JsonNode rack = these.get(r);
                        if (rack.isNull()) {
                            replicas[r] = noRack;
                        } else {
                            String id = rack.asText();
                            replicas[r] = nodes.computeIfAbsent(
                                id, k -> new Node(nodes.size() + 1, "broker-" + k, 9092, k));
                        }
                    }
                } else {
                    replicas = new Node[] {noRack};
                }
                Node leader = replicas.length > 0 ? replicas[0] : null;
                partitions.add(new PartitionInfo(name, p, leader, replicas, replicas));
            }
        }
        List<Node> all = new ArrayList<>(nodes.values());
        all.add(noRack);
        return new Cluster("groupspec", all, partitions, Collections.emptySet(), Collections.emptySet());
    }

    private static Map<String, Subscription> subscriptions(JsonNode members) {
        // ConsumerCoordinator.onLeaderElected builds a plain HashMap in JoinGroup order.
        Map<String, Subscription> subscriptions = new HashMap<>();
        for (JsonNode m : members) {
            List<String> topics = new ArrayList<>();
            m.path("topics").forEach(t -> topics.add(t.asText()));
            JsonNode data = m.path("user_data");
            ByteBuffer userData = data.isTextual()
                ? ByteBuffer.wrap(Base64.getDecoder().decode(data.asText())) : null;
            List<TopicPartition> owned = new ArrayList<>();
            m.path("owned").forEach(tp -> owned.add(new TopicPartition(tp.get(0).asText(), tp.get(1).asInt())));
            JsonNode rack = m.path("rack");
            Subscription subscription = new Subscription(topics, userData, owned,
                m.path("generation").asInt(-1),
                rack.isTextual() ? Optional.of(rack.asText()) : Optional.empty());
            JsonNode instance = m.path("group_instance_id");
            if (instance.isTextual()) {
                subscription.setGroupInstanceId(Optional.of(instance.asText()));
            }
            subscriptions.put(m.path("member_id").asText(), subscription);
        }
        return subscriptions;
    }

    @Override
    public JsonNode run(JsonNode input) {
        String name = input.path("assignor").asText();
        Cluster cluster = cluster(input.path("topics"));
        int repeat = input.path("repeat").asInt(0);
        for (int i = 0; i < repeat; i++) {
            assignor(name).assign(cluster, new GroupSubscription(subscriptions(input.path("members"))));
        }
        GroupSubscription group = new GroupSubscription(subscriptions(input.path("members")));
        ConsumerPartitionAssignor fresh = assignor(name);
        long start = System.nanoTime();
        Map<String, Assignment> result = fresh.assign(cluster, group).groupAssignment();
        long nanos = System.nanoTime() - start;
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        ObjectNode assignment = out.putObject("assignment");
        for (Map.Entry<String, Assignment> e : result.entrySet()) {
            ArrayNode parts = assignment.putArray(e.getKey());
            for (TopicPartition tp : e.getValue().partitions()) {
                parts.addArray().add(tp.topic()).add(tp.partition());
            }
        }
        out.put("nanos", nanos);
        return out;
    }
}
