"""The client run recorded in eos-zombie-producer--confluent-kafka.jsonl (classic
protocol) and eos-zombie-producer--confluent-kafka-consumer-protocol.jsonl (KIP-848, with
the argument ``consumer``): a consume-transform-produce loop (exactly-once) with
confluent-kafka, then a zombie: the transactional producer sends offsets with the
consumer's group metadata of a generation (member epoch) that a second consumer's join has
ended (TxnOffsetCommit, KIP-447), and a second producer commits with the current metadata.

Recorded on 2026-11-29 with confluent-kafka 2.16.1 against Apache Kafka 4.1.2 (and the
classic run against Tansu 0.6.0: ../tansu-eos-zombie-producer--confluent-kafka.jsonl):

    groupspec broker start --kind kafka --port 19093 \
        --set transaction.state.log.replication.factor=1 --set transaction.state.log.min.isr=1
    groupspec record --listen 127.0.0.1:19092 --upstream 127.0.0.1:19093 --out eos.jsonl \
        --broker-config group.initial.rebalance.delay.ms=0
    python eos-zombie-producer--confluent-kafka.py 127.0.0.1:19092 [consumer]

(the KIP-848 run and the Tansu run were recorded without the --broker-config)

(tests/test_txn_offset_commit.py validates the recordings.)"""
import sys, time
from confluent_kafka import Consumer, Producer, TopicPartition, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

B = sys.argv[1]
EXTRA = {"group.protocol": "consumer"} if len(sys.argv) > 2 and sys.argv[2] == "consumer" else {"partition.assignment.strategy": "range"}
admin = AdminClient({"bootstrap.servers": B})
for f in admin.create_topics([NewTopic("in", 2, 1), NewTopic("out", 1, 1)]).values():
    try:
        f.result()
    except Exception as e:
        print("topic:", e)
p0 = Producer({"bootstrap.servers": B})
for i in range(20):
    p0.produce("in", value=f"m{i}".encode(), partition=i % 2)
p0.flush()

def consumer(name):
    return Consumer({"bootstrap.servers": B, "group.id": "eos-g", "client.id": name,
                     "enable.auto.commit": False, "isolation.level": "read_committed",
                     "auto.offset.reset": "earliest", **({} if EXTRA.get("group.protocol") else {"session.timeout.ms": 10000}),
                     **EXTRA})

c1 = consumer("c1")
c1.subscribe(["in"])
prod = Producer({"bootstrap.servers": B, "transactional.id": "tx-eos", "client.id": "txp"})
prod.init_transactions()
done = 0
deadline = time.time() + 30
while done < 10 and time.time() < deadline:
    msgs = c1.consume(5, 1.0)
    if not msgs:
        continue
    prod.begin_transaction()
    for m in msgs:
        if m.error():
            continue
        prod.produce("out", value=m.value())
        done += 1
    prod.send_offsets_to_transaction(c1.position(c1.assignment()), c1.consumer_group_metadata())
    prod.commit_transaction()
print("processed", done)
old_meta = c1.consumer_group_metadata()
# a second member joins: the generation moves on; c1 rejoins at its next poll
c2 = consumer("c2")
c2.subscribe(["in"])
t_end = time.time() + 12
while time.time() < t_end:
    c1.poll(0.2)
    c2.poll(0.2)
prod.begin_transaction()
prod.produce("out", value=b"zombie")
try:
    prod.send_offsets_to_transaction([TopicPartition("in", 0, 3)], old_meta)
    print("zombie offsets accepted?!")
    prod.commit_transaction()
except KafkaException as e:
    print("zombie refused:", e)
    try:
        prod.abort_transaction()
    except KafkaException as e2:
        print("abort:", e2)
# a current commit with the fresh metadata
prod2 = Producer({"bootstrap.servers": B, "transactional.id": "tx-eos-2", "client.id": "txp2"})
prod2.init_transactions()
prod2.begin_transaction()
prod2.produce("out", value=b"fresh")
prod2.send_offsets_to_transaction(c1.position(c1.assignment()) or [TopicPartition("in", 0, 5)], c1.consumer_group_metadata())
prod2.commit_transaction()
print("fresh commit ok")
c1.close(); c2.close()
