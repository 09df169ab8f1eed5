"""Coordinator configuration with Kafka's defaults.

Source: group-coordinator/.../GroupCoordinatorConfig.java and OffsetConfig (the
``group.*`` and ``offsets.*`` broker settings). An impossible configuration raises
ValueError naming the setting.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

#: ConsumerGroupMigrationPolicy's values -> (upgrade enabled, downgrade enabled)
MIGRATION_POLICIES: dict[str, tuple[bool, bool]] = {
    "bidirectional": (True, True),
    "upgrade": (True, False),
    "downgrade": (False, True),
    "disabled": (False, False),
}


#: GroupConfig's names of the settings of one consumer group (``kafka-configs --alter
#: --entity-type groups``) the reference models -> GroupConfig's fields
GROUP_CONFIG_NAMES: dict[str, str] = {
    "consumer.session.timeout.ms": "consumer_session_timeout_ms",
    "consumer.heartbeat.interval.ms": "consumer_heartbeat_interval_ms",
}


@dataclass(frozen=True)
class GroupConfig:
    """One group's dynamic settings (group-coordinator/.../GroupConfig.java, kept by
    GroupConfigManager): None is the broker's value (GroupConfig.fromProps fills what the
    group does not set from the broker's settings). Only the consumer group protocol's are
    modelled; share and streams groups are out of scope. Kafka checks a value against the
    broker's group.consumer.min/max bounds when an admin sets it (GroupConfig.validate);
    those bounds are not modelled, so the reference takes any positive value a broker
    accepted, and checks only that a session the group sets outlasts the heartbeat interval
    it sets."""

    consumer_session_timeout_ms: int | None = None
    consumer_heartbeat_interval_ms: int | None = None

    @classmethod
    def parse(cls, settings: dict[str, str]) -> GroupConfig:
        """From GroupConfig's names (``consumer.session.timeout.ms=50000``); an unknown name
        or a value that is not a positive integer raises ValueError naming it."""
        values: dict[str, int] = {}
        for name, text in settings.items():
            if name not in GROUP_CONFIG_NAMES:
                raise ValueError(f"unknown group config name {name!r}; known: "
                                 f"{', '.join(GROUP_CONFIG_NAMES)}")
            try:
                values[GROUP_CONFIG_NAMES[name]] = int(text)
            except ValueError:
                raise ValueError(f"group config {name}: not an integer: {text!r}") from None
        return cls(**values)


#: Kafka's names of the broker settings the reference models (GroupCoordinatorConfig,
#: OffsetConfig) -> (CoordinatorConfig's field, the factor from Kafka's unit to the field's:
#: offsets.retention.minutes is held in milliseconds). What a trace header's
#: ``broker_config`` and ``groupspec validate --broker-config`` may set; other settings
#: change nothing the reference answers.
BROKER_SETTINGS: dict[str, tuple[str, int]] = {
    "group.min.session.timeout.ms": ("group_min_session_timeout_ms", 1),
    "group.max.session.timeout.ms": ("group_max_session_timeout_ms", 1),
    "group.initial.rebalance.delay.ms": ("group_initial_rebalance_delay_ms", 1),
    "group.max.size": ("group_max_size", 1),
    "offsets.retention.minutes": ("offsets_retention_ms", 60_000),
    "offsets.retention.check.interval.ms": ("offsets_retention_check_interval_ms", 1),
    "offset.metadata.max.bytes": ("offset_metadata_max_bytes", 1),
    "offsets.topic.num.partitions": ("offsets_topic_num_partitions", 1),
    "group.consumer.session.timeout.ms": ("consumer_group_session_timeout_ms", 1),
    "group.consumer.heartbeat.interval.ms": ("consumer_group_heartbeat_interval_ms", 1),
    "group.consumer.max.size": ("consumer_group_max_size", 1),
}


@dataclass(frozen=True)
class CoordinatorConfig:
    #: group.min.session.timeout.ms
    group_min_session_timeout_ms: int = 6_000
    #: group.max.session.timeout.ms
    group_max_session_timeout_ms: int = 1_800_000
    #: group.initial.rebalance.delay.ms
    group_initial_rebalance_delay_ms: int = 3_000
    #: group.max.size
    group_max_size: int = 2**31 - 1
    #: the timeout of a member added in a join phase until it completes
    #: (GroupCoordinatorConfig CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS, 5 minutes)
    group_new_member_join_timeout_ms: int = 300_000
    #: offsets.retention.minutes (7 days) in milliseconds
    offsets_retention_ms: int = 7 * 24 * 60 * 60 * 1000
    #: offsets.retention.check.interval.ms
    offsets_retention_check_interval_ms: int = 600_000
    #: offset.metadata.max.bytes
    offset_metadata_max_bytes: int = 4096
    #: offsets.topic.num.partitions
    offsets_topic_num_partitions: int = 50
    #: group.consumer.session.timeout.ms (KIP-848 groups)
    consumer_group_session_timeout_ms: int = 45_000
    #: group.consumer.heartbeat.interval.ms
    consumer_group_heartbeat_interval_ms: int = 5_000
    #: group.consumer.max.size
    consumer_group_max_size: int = 2**31 - 1
    #: group.consumer.assignors: the server-side assignors by name, the default first
    consumer_group_assignors: tuple[str, ...] = ("uniform", "range")
    #: group.consumer.migration.policy (ConsumerGroupMigrationPolicy: bidirectional,
    #: upgrade, downgrade or disabled; Kafka reads it case-insensitively, the reference keeps
    #: it lower-case). Kafka's default. Both conversions are modelled (docs/deviations.md)
    consumer_group_migration_policy: str = "bidirectional"
    #: group.consumer.regex.refresh.interval.ms (an internal config, at least 10 s): the
    #: longest a group's resolved regexes go unrefreshed while its members heartbeat
    consumer_group_regex_refresh_interval_ms: int = 600_000
    #: per-group dynamic settings (GroupConfigManager), group id -> its GroupConfig; read
    #: through consumer_session_timeout_ms_of and consumer_heartbeat_interval_ms_of
    group_configs: tuple[tuple[str, GroupConfig], ...] = ()

    def __post_init__(self) -> None:
        for name in (
            "group_min_session_timeout_ms",
            "group_max_session_timeout_ms",
            "group_initial_rebalance_delay_ms",
            "group_new_member_join_timeout_ms",
            "offsets_retention_ms",
            "offset_metadata_max_bytes",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("group_max_size", "offsets_retention_check_interval_ms",
                     "offsets_topic_num_partitions"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("consumer_group_session_timeout_ms", "consumer_group_heartbeat_interval_ms",
                     "consumer_group_max_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.consumer_group_heartbeat_interval_ms >= self.consumer_group_session_timeout_ms:
            # GroupCoordinatorConfig's constructor requires group.consumer.heartbeat.interval.ms
            # < group.consumer.session.timeout.ms (a broker so configured does not start);
            # its min/max bounds on each are not modelled (docs/validator.md)
            raise ValueError(
                "consumer_group_heartbeat_interval_ms "
                f"({self.consumer_group_heartbeat_interval_ms}) must be less than "
                f"consumer_group_session_timeout_ms ({self.consumer_group_session_timeout_ms})"
            )
        if self.consumer_group_regex_refresh_interval_ms < 10_000:
            # GroupCoordinatorConfig: atLeast(10 * 1000)
            raise ValueError("consumer_group_regex_refresh_interval_ms must be >= 10000, got "
                             f"{self.consumer_group_regex_refresh_interval_ms}")
        if not self.consumer_group_assignors:
            raise ValueError("consumer_group_assignors must name at least one assignor")
        from groupspec.assignors.registry import SERVER_ASSIGNOR_NAMES

        for name in self.consumer_group_assignors:
            if name not in SERVER_ASSIGNOR_NAMES:
                raise ValueError(
                    f"consumer_group_assignors: unknown server-side assignor {name!r}; "
                    f"known: {', '.join(SERVER_ASSIGNOR_NAMES)}"
                )
        policy = self.consumer_group_migration_policy
        if not isinstance(policy, str) or policy.lower() not in MIGRATION_POLICIES:
            raise ValueError(
                f"consumer_group_migration_policy: one of {', '.join(MIGRATION_POLICIES)} "
                f"(group.consumer.migration.policy), got {policy!r}"
            )
        if policy != policy.lower():
            object.__setattr__(self, "consumer_group_migration_policy", policy.lower())
        for group_id, gc in self.group_configs:
            if not group_id:
                # GroupConfigManager.updateGroupConfig: InvalidRequestException
                raise ValueError("group_configs: a group config needs a group id")
            for f in dataclasses.fields(gc):
                value = getattr(gc, f.name)
                if value is not None and (not isinstance(value, int) or value < 1):
                    raise ValueError(f"group_configs[{group_id!r}].{f.name} must be >= 1, got {value!r}")
            session, interval = gc.consumer_session_timeout_ms, gc.consumer_heartbeat_interval_ms
            if session is not None and interval is not None and session <= interval:
                # GroupConfig.validateValues (which also compares a value the group sets with
                # the broker's other one: not here, where the broker's may come later, from
                # a trace's header)
                raise ValueError(f"group_configs[{group_id!r}]: consumer.session.timeout.ms ({session}) "
                                 f"must be greater than consumer.heartbeat.interval.ms ({interval})")
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ValueError(
                "group_min_session_timeout_ms "
                f"({self.group_min_session_timeout_ms}) > group_max_session_timeout_ms "
                f"({self.group_max_session_timeout_ms})"
            )

    def group_config(self, group_id: str) -> GroupConfig | None:
        """GroupConfigManager.groupConfig: the group's settings, if it has any."""
        for gid, gc in self.group_configs:
            if gid == group_id:
                return gc
        return None

    def consumer_session_timeout_ms_of(self, group_id: str) -> int:
        """GroupMetadataManager.consumerGroupSessionTimeoutMs: the group's setting, else the
        broker's group.consumer.session.timeout.ms."""
        gc = self.group_config(group_id)
        if gc is None or gc.consumer_session_timeout_ms is None:
            return self.consumer_group_session_timeout_ms
        return gc.consumer_session_timeout_ms

    def consumer_heartbeat_interval_ms_of(self, group_id: str) -> int:
        """GroupMetadataManager.consumerGroupHeartbeatIntervalMs."""
        gc = self.group_config(group_id)
        if gc is None or gc.consumer_heartbeat_interval_ms is None:
            return self.consumer_group_heartbeat_interval_ms
        return gc.consumer_heartbeat_interval_ms

    def with_group_config(self, group_id: str, config: GroupConfig | None) -> CoordinatorConfig:
        """GroupConfigManager.updateGroupConfig: the group's settings replaced whole (what it
        does not set is the broker's again); None removes them."""
        rest = tuple((gid, gc) for gid, gc in self.group_configs if gid != group_id)
        return dataclasses.replace(self, group_configs=rest if config is None else (*rest, (group_id, config)))

    def with_broker_settings(self, settings: Mapping[str, object], keep: bool = False) -> CoordinatorConfig:
        """This configuration with broker settings by Kafka's names (:data:`BROKER_SETTINGS`;
        ``{"group.max.size": 3}``, values ints or their text). With ``keep``, a setting this
        configuration already gives (not Kafka's default) is kept: a value given on the
        command line wins over a trace header's. An unknown name, a value that is not an
        integer, or an impossible configuration raises ValueError naming the setting."""
        default = CoordinatorConfig()
        changes: dict[str, int] = {}
        for name, value in settings.items():
            if name not in BROKER_SETTINGS:
                raise ValueError(f"unknown broker setting {name!r}; known: {', '.join(BROKER_SETTINGS)}")
            field, factor = BROKER_SETTINGS[name]
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                raise ValueError(f"broker setting {name}: not an integer: {value!r}")
            try:
                number = int(value)
            except ValueError:
                raise ValueError(f"broker setting {name}: not an integer: {value!r}") from None
            if keep and getattr(self, field) != getattr(default, field):
                continue
            changes[field] = number * factor
        if not changes:
            return self
        try:
            return dataclasses.replace(self, **changes)  # type: ignore[arg-type]
        except ValueError as e:
            names = {f: n for n, (f, factor) in BROKER_SETTINGS.items() if factor == 1}
            text = str(e)
            for field_name, kafka_name in names.items():
                text = text.replace(field_name, kafka_name)
            raise ValueError(f"broker settings: {text}") from None

    @property
    def online_upgrade_enabled(self) -> bool:
        """ConsumerGroupMigrationPolicy.isUpgradeEnabled."""
        return MIGRATION_POLICIES[self.consumer_group_migration_policy][0]

    @property
    def online_downgrade_enabled(self) -> bool:
        """ConsumerGroupMigrationPolicy.isDowngradeEnabled."""
        return MIGRATION_POLICIES[self.consumer_group_migration_policy][1]


def broker_setting(text: str) -> tuple[str, str]:
    """``NAME=VALUE``, one of :data:`BROKER_SETTINGS` with an integer value, as (name,
    value); ValueError naming what is wrong otherwise."""
    name, eq, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not eq or not name:
        raise ValueError(f"expected NAME=VALUE, got {text!r}")
    CoordinatorConfig().with_broker_settings({name: value})
    return name, value
