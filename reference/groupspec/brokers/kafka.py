"""Apache Kafka on loopback: a single-node KRaft broker and controller in one JVM.

The broker is a pinned release from Maven Central (``org.apache.kafka:kafka_2.13``), its
runtime dependencies resolved by Maven from a POM this module writes into the cache
(``$GROUPSPEC_CACHE/kafka-<version>/``), so nothing but Java 17+ and Maven is needed and
no release tarball is downloaded. Maven checks each artifact against Central's checksums
(``-C``, strict).

Starting a broker writes ``server.properties`` (one node, roles broker and controller,
PLAINTEXT on a free loopback port, the controller on another), formats the storage with
a random cluster id (``kafka.tools.StorageTool format --standalone``), runs
``kafka.Kafka`` with ``java -cp``, and waits until Metadata lists the broker.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from groupspec.brokers.common import BrokerError, BrokerProcess, cache_dir, free_port

#: The Kafka release the project tests against.
KAFKA_VERSION = "4.1.2"
SCALA_VERSION = "2.13"
#: log4j2's SLF4J 1.x binding, at the log4j version Kafka 4.1.2 itself depends on, so the
#: broker's log lines go to its output file rather than nowhere.
LOG4J_VERSION = "2.25.3"
#: maven-dependency-plugin used to copy the classpath (pinned; Maven 3.8's default is old).
DEPENDENCY_PLUGIN_VERSION = "3.8.1"

_POM = """<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by groupspec.brokers.kafka: the runtime classpath of one Kafka broker. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>groupspec.local</groupId>
  <artifactId>kafka-broker-classpath</artifactId>
  <version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_{scala}</artifactId>
      <version>{version}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>{log4j}</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>{plugin}</version>
      </plugin>
    </plugins>
  </build>
</project>
"""

_COMPLETE = "libs.complete"


def kafka_home(version: str = KAFKA_VERSION) -> Path:
    return cache_dir() / f"kafka-{version}"


def kafka_libs(version: str = KAFKA_VERSION, *, fetch: bool = False) -> Path:
    """The directory holding the broker's jars; download them first when ``fetch``.

    Without ``fetch`` a missing cache is a :class:`BrokerError` that says how to fill it
    (tests never download).
    """
    home = kafka_home(version)
    libs = home / "libs"
    if (home / _COMPLETE).is_file() and libs.is_dir():
        return libs
    if not fetch:
        raise BrokerError(
            f"Kafka {version} is not in the cache ({home}); fetch it with "
            f"`groupspec broker fetch --kind kafka` (or ci/setup.d/30-brokers.sh)"
        )
    mvn = shutil.which("mvn")
    if mvn is None:
        raise BrokerError("Maven (mvn) is needed to fetch the Kafka broker and is not on PATH")
    home.mkdir(parents=True, exist_ok=True)
    pom = home / "pom.xml"
    pom.write_text(
        _POM.format(
            version=version,
            scala=SCALA_VERSION,
            log4j=LOG4J_VERSION,
            plugin=DEPENDENCY_PLUGIN_VERSION,
        ),
        encoding="utf-8",
    )
    staging = home / "libs.partial"
    shutil.rmtree(staging, ignore_errors=True)
    cmd = [
        mvn, "-B", "-q", "-C", "-f", str(pom),
        "dependency:copy-dependencies",
        f"-DoutputDirectory={staging}",
        "-DincludeScope=runtime",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BrokerError(
            f"Maven could not resolve Kafka {version} (exit {done.returncode}):\n"
            f"{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    if not (staging / f"kafka_{SCALA_VERSION}-{version}.jar").is_file():
        raise BrokerError(f"Maven finished but kafka_{SCALA_VERSION}-{version}.jar is missing")
    shutil.rmtree(libs, ignore_errors=True)
    staging.rename(libs)
    (home / _COMPLETE).write_text(
        "\n".join(sorted(p.name for p in libs.iterdir())) + "\n", encoding="utf-8"
    )
    return libs


def java_executable() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    java = shutil.which("java")
    if java is None:
        raise BrokerError("a Java runtime (17 or later) is needed for the Kafka broker")
    return java


def random_cluster_id() -> str:
    """A Kafka cluster id: 16 random bytes, URL-safe base64 without padding (Uuid.toString),
    drawn again when it starts with "-", as Kafka's Uuid.randomUuid does (clients/.../common/
    Uuid.java): the storage tool would read such an id as an option and refuse to format,
    one broker start in 64."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")
        if not text.startswith("-"):
            return text


#: group.consumer.session.timeout.ms of the broker groupspec starts (KIP-848 consumer groups;
#: Kafka's default is 45000, and its minimum, group.consumer.min.session.timeout.ms, too):
#: short, so that a crashed member is found in seconds (the conformance suite;
#: groupspec.conformance.runner.validation_config gives the reference the same)
CONSUMER_GROUP_SESSION_TIMEOUT_MS = 6000
#: group.consumer.heartbeat.interval.ms (Kafka's default 5000, its minimum 5000)
CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS = 1000

#: JVM options: a small heap and a quick start matter more here than peak throughput.
JVM_OPTIONS: tuple[str, ...] = (
    "-Xms128m",
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
)


class KafkaBroker(BrokerProcess):
    """A single-node KRaft Kafka broker on loopback.

    ``group_initial_rebalance_delay_ms`` (Kafka's default is 3000) is 0 by default so a
    test group forms at once; ``offsets_topic_partitions`` is 1 by default (the
    ``__consumer_offsets`` topic is created on the first FindCoordinator, and one
    partition creates fastest). Consumer groups (KIP-848) get a session timeout of
    :data:`CONSUMER_GROUP_SESSION_TIMEOUT_MS` and a heartbeat interval of
    :data:`CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS` (Kafka's defaults are 45 s and 5 s).
    ``properties`` adds or overrides any broker setting.
    """

    kind = "kafka"

    def __init__(
        self,
        *,
        version: str = KAFKA_VERSION,
        host: str = "127.0.0.1",
        port: int | None = None,
        group_initial_rebalance_delay_ms: int = 0,
        offsets_topic_partitions: int = 1,
        properties: Mapping[str, str] | None = None,
        fetch: bool = False,
        workdir: Path | None = None,
        start_timeout_s: float = 120.0,
    ) -> None:
        super().__init__(host=host, port=port, workdir=workdir, start_timeout_s=start_timeout_s)
        self.version = version
        self.group_initial_rebalance_delay_ms = group_initial_rebalance_delay_ms
        self.offsets_topic_partitions = offsets_topic_partitions
        self.extra_properties = dict(properties or {})
        self.fetch = fetch
        self.controller_port = 0
        self.cluster_id = random_cluster_id()

    def server_properties(self) -> dict[str, str]:
        data = self.workdir / "data"
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "listeners": (
                f"PLAINTEXT://{self.host}:{self.port},CONTROLLER://{self.host}:{self.controller_port}"
            ),
            "advertised.listeners": f"PLAINTEXT://{self.host}:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "controller.quorum.bootstrap.servers": f"{self.host}:{self.controller_port}",
            "log.dirs": str(data),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": str(self.offsets_topic_partitions),
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": str(self.group_initial_rebalance_delay_ms),
            # consumer groups (KIP-848): a shorter session and heartbeat interval
            "group.consumer.min.session.timeout.ms": str(CONSUMER_GROUP_SESSION_TIMEOUT_MS),
            "group.consumer.session.timeout.ms": str(CONSUMER_GROUP_SESSION_TIMEOUT_MS),
            "group.consumer.min.heartbeat.interval.ms": str(CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS),
            "group.consumer.heartbeat.interval.ms": str(CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS),
            "auto.create.topics.enable": "true",
        }
        props.update(self.extra_properties)
        return props

    def group_settings(self) -> dict[str, int]:
        """The broker settings this broker runs with that the reference models (Kafka's
        names, :data:`groupspec.coordinator.config.BROKER_SETTINGS`): what a recording
        made against it writes into its header."""
        from groupspec.coordinator.config import BROKER_SETTINGS

        return {k: int(v) for k, v in self.server_properties().items() if k in BROKER_SETTINGS}

    def _classpath(self) -> str:
        return str(kafka_libs(self.version, fetch=self.fetch) / "*")

    def prepare(self) -> None:
        classpath = self._classpath()
        self.controller_port = free_port(self.host)
        while self.controller_port == self.port:
            self.controller_port = free_port(self.host)
        config = self.workdir / "server.properties"
        config.write_text(
            "".join(f"{k}={v}\n" for k, v in self.server_properties().items()), encoding="utf-8"
        )
        (self.workdir / "log4j2.properties").write_text(
            "status = warn\n"
            "appender.out.type = Console\n"
            "appender.out.name = OUT\n"
            "appender.out.layout.type = PatternLayout\n"
            "appender.out.layout.pattern = [%d] %p %m (%c)%n\n"
            "rootLogger.level = INFO\n"
            "rootLogger.appenderRef.out.ref = OUT\n",
            encoding="utf-8",
        )
        # A fresh start formats afresh: the standalone controller's endpoint is written
        # into the storage, so a retry on another port cannot reuse it.
        shutil.rmtree(self.workdir / "data", ignore_errors=True)
        fmt = [
            java_executable(), *JVM_OPTIONS, "-cp", classpath,
            f"-Dlog4j2.configurationFile={self.workdir / 'log4j2.properties'}",
            "kafka.tools.StorageTool", "format",
            "--cluster-id", self.cluster_id,
            "--config", str(config),
            "--standalone",
        ]
        done = subprocess.run(fmt, capture_output=True, text=True, check=False, cwd=self.workdir)
        if done.returncode != 0:
            raise BrokerError(
                f"formatting Kafka storage failed (exit {done.returncode}):\n"
                f"{done.stdout[-3000:]}{done.stderr[-3000:]}"
            )

    def command(self) -> Sequence[str]:
        return [
            java_executable(), *JVM_OPTIONS, "-cp", self._classpath(),
            f"-Dlog4j2.configurationFile={self.workdir / 'log4j2.properties'}",
            "kafka.Kafka", str(self.workdir / "server.properties"),
        ]
