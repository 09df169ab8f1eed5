package groupspec.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * One Java consumer (kafka-clients' KafkaConsumer, {@code group.protocol=consumer}: KIP-848)
 * driven by the conformance suite, the Java twin of {@code groupspec.conformance.drivers}:
 * the member's configuration as JSON in the first argument, commands as JSON Lines on
 * stdin, events as JSON Lines on stdout ({@code started}, {@code status} whenever the
 * assignment or the count of consumed records changes, {@code reply} per command,
 * {@code poll_error}). Commands: pause, resume, commit, remember, zombie_commit,
 * subscribe, metadata, close, status. Kafka's log lines go to stderr.
 */
public final class ConsumerDriver {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Object END = new Object();
    /** OffsetCommit v9: the first version that carries a member epoch (KIP-848). */
    private static final short OFFSET_COMMIT_VERSION = 9;

    private final PrintStream out;
    private final JsonNode cfg;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
        // A listener makes the consumer hand revocations to the application thread (they
        // complete in poll), so a member that stops polling does not release partitions.
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        }
    };
    private boolean subscribed;
    private Map<TopicPartition, Long> remembered = new LinkedHashMap<>();
    private String rememberedMemberId = "";
    private int rememberedEpoch = -1;

    private ConsumerDriver(PrintStream out, JsonNode cfg) {
        this.out = out;
        this.cfg = cfg;
        Properties p = new Properties();
        p.put("bootstrap.servers", cfg.path("bootstrap").asText());
        p.put("group.id", cfg.path("group_id").asText());
        p.put("client.id", cfg.path("client_id").asText());
        p.put("group.protocol", "consumer");
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("max.poll.interval.ms", String.valueOf(cfg.path("max_poll_interval_ms").asInt(10000)));
        p.put("metadata.max.age.ms", "10000");
        JsonNode instance = cfg.path("group_instance_id");
        if (instance.isTextual()) {
            p.put("group.instance.id", instance.asText());
        }
        consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        JsonNode regex = cfg.path("topic_regex");
        if (regex.isTextual()) {
            subscribe(null, regex.asText());
        } else {
            subscribe(strings(cfg.path("topics")), null);
        }
    }

    private static List<String> strings(JsonNode array) {
        List<String> list = new ArrayList<>();
        array.forEach(n -> list.add(n.asText()));
        return list;
    }

    /** Subscribe (again); with no topics and no regex, not yet (the member waits). */
    private void subscribe(List<String> topics, String regex) {
        if (regex != null) {
            consumer.subscribe(new SubscriptionPattern(regex), listener);
        } else if (topics != null && !topics.isEmpty()) {
            consumer.subscribe(topics, listener);
        } else {
            return;
        }
        subscribed = true;
    }

    private void emit(ObjectNode event) {
        try {
            out.println(JSON.writeValueAsString(event));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        out.flush();
    }

    private ObjectNode event(String ev) {
        ObjectNode node = JSON.createObjectNode();
        node.put("ev", ev);
        return node;
    }

    private ObjectNode reply(String op, String error) {
        ObjectNode node = event("reply");
        node.put("op", op);
        node.put("ok", error == null);
        if (error == null) {
            node.putNull("error");
        } else {
            node.put("error", error);
        }
        return node;
    }

    /** The name Kafka gives an error (STALE_MEMBER_EPOCH, ...), else the exception's class. */
    static String errorName(Throwable e) {
        Throwable cause = e;
        while (cause instanceof KafkaException && cause.getCause() instanceof KafkaException) {
            cause = cause.getCause();
        }
        Errors error = Errors.forException(cause);
        if (error != Errors.UNKNOWN_SERVER_ERROR) {
            return error.name();
        }
        return cause.getClass().getSimpleName();
    }

    private List<TopicPartition> assignment() {
        List<TopicPartition> list = new ArrayList<>(consumer.assignment());
        list.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        return list;
    }

    private Map<TopicPartition, Long> positions() {
        Map<TopicPartition, Long> positions = new LinkedHashMap<>();
        for (TopicPartition tp : assignment()) {
            positions.put(tp, consumer.position(tp, Duration.ofSeconds(10)));
        }
        return positions;
    }

    private void commit() {
        Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
        positions().forEach((tp, off) -> offsets.put(tp, new OffsetAndMetadata(off)));
        if (offsets.isEmpty()) {
            throw new IllegalStateException("nothing assigned to commit");
        }
        consumer.commitSync(offsets, Duration.ofSeconds(15));
    }

    private ObjectNode remember() {
        remembered = positions();
        ConsumerGroupMetadata meta = consumer.groupMetadata();
        rememberedMemberId = meta.memberId();
        rememberedEpoch = meta.generationId();
        ObjectNode node = reply("remember", null);
        node.put("member_id", rememberedMemberId);
        node.put("member_epoch", rememberedEpoch);
        node.put("generation", rememberedEpoch);
        return node;
    }

    /**
     * The remembered positions committed with the given (else the remembered) member id and
     * epoch, as a member that missed its epoch's end would send them: no consumer API lets an
     * application choose the epoch of a commit, so the driver sends Kafka's own
     * OffsetCommitRequest (v9) on a connection of its own, under the member's client id.
     */
    private ObjectNode zombieCommit(JsonNode cmd) throws Exception {
        if (remembered.isEmpty()) {
            throw new IllegalStateException("nothing was remembered to commit");
        }
        String memberId = cmd.path("member_id").isTextual() ? cmd.path("member_id").asText() : rememberedMemberId;
        int epoch = cmd.path("member_epoch").isInt() ? cmd.path("member_epoch").asInt() : rememberedEpoch;
        Map<String, OffsetCommitRequestData.OffsetCommitRequestTopic> topics = new TreeMap<>();
        remembered.forEach((tp, off) -> topics.computeIfAbsent(tp.topic(),
                t -> new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(t))
            .partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                .setPartitionIndex(tp.partition()).setCommittedOffset(off)
                .setCommittedLeaderEpoch(-1).setCommittedMetadata("")));
        OffsetCommitRequestData data = new OffsetCommitRequestData()
            .setGroupId(cfg.path("group_id").asText())
            .setGenerationIdOrMemberEpoch(epoch)
            .setMemberId(memberId)
            .setGroupInstanceId(cfg.path("group_instance_id").isTextual()
                ? cfg.path("group_instance_id").asText() : null)
            .setTopics(new ArrayList<>(topics.values()));
        OffsetCommitRequest request = OffsetCommitRequest.Builder.forTopicNames(data).build(OFFSET_COMMIT_VERSION);
        RequestHeader header = new RequestHeader(ApiKeys.OFFSET_COMMIT, OFFSET_COMMIT_VERSION,
            cfg.path("client_id").asText(), 1);
        ByteBuffer frame = request.serializeWithHeader(header);
        String[] hostPort = cfg.path("bootstrap").asText().split(",")[0].trim().split(":");
        OffsetCommitResponse response;
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1])), 10000);
            socket.setSoTimeout(15000);
            DataOutputStream os = new DataOutputStream(socket.getOutputStream());
            byte[] bytes = new byte[frame.remaining()];
            frame.get(bytes);
            os.writeInt(bytes.length);
            os.write(bytes);
            os.flush();
            DataInputStream is = new DataInputStream(socket.getInputStream());
            byte[] answer = new byte[is.readInt()];
            is.readFully(answer);
            AbstractResponse parsed = AbstractResponse.parseResponse(ByteBuffer.wrap(answer), header);
            response = (OffsetCommitResponse) parsed;
        }
        String first = null;
        ArrayNode errors = JSON.createArrayNode();
        for (OffsetCommitResponseData.OffsetCommitResponseTopic t : response.data().topics()) {
            for (OffsetCommitResponseData.OffsetCommitResponsePartition part : t.partitions()) {
                Errors error = Errors.forCode(part.errorCode());
                errors.add(t.name() + "-" + part.partitionIndex() + ": " + error.name());
                if (error != Errors.NONE && first == null) {
                    first = error.name();
                }
            }
        }
        ObjectNode node = reply("zombie_commit", first);
        node.put("member_id", memberId);
        node.put("member_epoch", epoch);
        node.set("partitions", errors);
        return node;
    }

    private ObjectNode status(List<TopicPartition> assignment, long consumed) {
        ObjectNode node = event("status");
        ArrayNode parts = node.putArray("assignment");
        for (TopicPartition tp : assignment) {
            ArrayNode pair = parts.addArray();
            pair.add(tp.topic());
            pair.add(tp.partition());
        }
        node.put("consumed", consumed);
        return node;
    }

    private int run(LinkedBlockingQueue<Object> commands) throws Exception {
        ObjectNode started = event("started");
        started.put("pid", ProcessHandle.current().pid());
        emit(started);
        boolean polling = true;
        long consumed = 0;
        List<TopicPartition> assignment = new ArrayList<>();
        String last = null;
        while (true) {
            Object next = commands.poll();
            if (next == END) {
                consumer.close();
                return 0;
            }
            JsonNode cmd = next == null ? JSON.createObjectNode() : (JsonNode) next;
            String op = cmd.path("op").asText("");
            switch (op) {
                case "pause" -> {
                    polling = false;
                    emit(reply(op, null));
                }
                case "resume" -> {
                    polling = true;
                    emit(reply(op, null));
                }
                case "remember" -> emit(remember());
                case "subscribe" -> {
                    String error = null;
                    try {
                        subscribe(cmd.has("topics") ? strings(cmd.path("topics")) : null,
                            cmd.path("regex").isTextual() ? cmd.path("regex").asText() : null);
                    } catch (Exception e) {
                        error = errorName(e);
                    }
                    emit(reply(op, error));
                }
                case "metadata" -> {
                    ObjectNode answer;
                    try {
                        ObjectNode found = JSON.createObjectNode();
                        for (String topic : strings(cmd.path("topics"))) {
                            found.put(topic, consumer.partitionsFor(topic, Duration.ofSeconds(10)).size());
                        }
                        answer = reply(op, null);
                        answer.set("partitions", found);
                    } catch (Exception e) {
                        answer = reply(op, errorName(e));
                    }
                    emit(answer);
                }
                case "commit", "zombie_commit" -> {
                    int retries = cmd.path("retries").asInt(0);
                    ObjectNode answer = null;
                    for (int attempt = 0; attempt <= retries; attempt++) {
                        try {
                            if (op.equals("commit")) {
                                commit();
                                answer = reply(op, null);
                            } else {
                                answer = zombieCommit(cmd);
                            }
                            break;
                        } catch (Exception e) {
                            answer = reply(op, errorName(e));
                            if (!(e instanceof RetriableException) || attempt == retries) {
                                break;
                            }
                            Thread.sleep(200);
                        }
                    }
                    emit(answer);
                }
                case "close" -> {
                    String error = null;
                    try {
                        consumer.close();
                    } catch (Exception e) {
                        error = errorName(e);
                    }
                    emit(reply(op, error));
                    return 0;
                }
                case "status" -> last = null;
                default -> {
                }
            }
            if (polling && subscribed) {
                try {
                    consumed += consumer.poll(Duration.ofMillis(100)).count();
                } catch (Exception e) {
                    // a fenced member: report it and go on (the scenario decides what it means)
                    ObjectNode err = event("poll_error");
                    err.put("error", errorName(e));
                    emit(err);
                    Thread.sleep(100);
                }
                assignment = assignment();
            } else {
                Thread.sleep(50);
            }
            ObjectNode now = status(assignment, consumed);
            String text = JSON.writeValueAsString(now);
            if (!text.equals(last)) {
                emit(now);
                last = text;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: groupspec.conformance.ConsumerDriver CONFIG_JSON");
            System.exit(2);
        }
        // Events own stdout; anything else printing there (a logger's console appender)
        // goes to stderr instead.
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        LinkedBlockingQueue<Object> commands = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (!line.isBlank()) {
                        commands.put(JSON.readTree(line));
                    }
                }
            } catch (Exception e) {
                e.printStackTrace();
            }
            commands.add(END); // stdin closed: the controller is gone
        }, "commands");
        reader.setDaemon(true);
        reader.start();
        ConsumerDriver driver = new ConsumerDriver(out, JSON.readTree(args[0]));
        System.exit(driver.run(commands));
    }
}
