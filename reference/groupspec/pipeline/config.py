"""A sweep's configuration (JSON or TOML): the grid to run, checked before anything runs.

A sweep names the grid's axes, each a list (a single value stands for a list of one)::

    name = "rolling-restart"
    seeds = 3                       # seeds 1..3 per cell, or a list such as [7, 11]
    settle_ms = 30000               # simulated time after the last churn event
    network_delay_ms = 2
    [consumer]                      # consumer settings for every member (ConsumerConfig fields)
    session_timeout_ms = 10000
    [coordinator]                   # broker settings (CoordinatorConfig fields)
    group_initial_rebalance_delay_ms = 3000
    [churn.rolling-restart]         # a churn pattern's settings (defaults: CHURNS)
    downtime_ms = 5000
    [[grid]]                        # one cross product; several [[grid]] tables are joined
    protocol = ["eager", "cooperative", "static-eager", "static-cooperative"]
    assignor = ["range", "cooperative-sticky"]
    group_size = [6]
    partitions = [24]
    churn = ["rolling-restart"]
    delay_ms = [0]                  # KIP-415 scheduled.rebalance.max.delay.ms (optional, [0])
    [report]
    baseline = "eager/range"        # the strategy the report's summary compares against

The protocols ``consumer`` and ``static-consumer`` are KIP-848's: members speak
ConsumerGroupHeartbeat and the broker assigns with the server-side assignor the cell names
(``uniform`` or ``range``); unless ``[coordinator]`` sets ``consumer_group_session_timeout_ms``
and ``consumer_group_heartbeat_interval_ms``, the broker uses the classic members' own
session timeout and heartbeat interval, so protocols are compared like for like
(examples/sweeps/kip848.toml).

Every error names the key, e.g. ``sweep.toml: grid[1].assignor: unknown assignor 'rnage'``.
Cells that cannot exist (a cooperative protocol with an eager-only assignor, a KIP-415 delay
under the eager protocol, a client-side assignor for a KIP-848 group) are not errors: they
are skipped, each kind with its reason.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field, fields, replace
from itertools import product
from pathlib import Path
from typing import Any

from groupspec.assignors.base import RebalanceProtocol
from groupspec.assignors.registry import ASSIGNOR_NAMES, SERVER_ASSIGNOR_NAMES, get_assignor
from groupspec.client.config import ConsumerConfig
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.sim.scenario import MAX_MEMBERS, MAX_PARTITIONS, MAX_SIMULATED_MS


class SweepConfigError(ValueError):
    pass


#: protocol name -> (the rebalance protocol, static membership, what it means)
PROTOCOLS: dict[str, tuple[str, bool, str]] = {
    "eager": ("eager", False, "every member revokes all its partitions before each rebalance"),
    "cooperative": ("cooperative", False, "incremental: only the partitions that move are revoked (KIP-429)"),
    "static-eager": ("eager", True, "eager, every member with a group.instance.id (KIP-345)"),
    "static-cooperative": ("cooperative", True, "cooperative, every member with a group.instance.id"),
    "consumer": ("consumer", False, "KIP-848: ConsumerGroupHeartbeat, the broker assigns, incremental reconciliation"),
    "static-consumer": ("consumer", True, "KIP-848, every member with a group.instance.id"),
}

#: churn pattern -> its settings and their defaults (milliseconds of simulated time, or counts)
CHURNS: dict[str, dict[str, int]] = {
    "rolling-restart": {"start_ms": 30_000, "interval_ms": 15_000, "downtime_ms": 5_000, "jitter_ms": 2_000},
    "crash": {"start_ms": 30_000, "jitter_ms": 2_000},
    "crash-restart": {"start_ms": 30_000, "restart_after_ms": 20_000, "jitter_ms": 2_000},
    "scale-out": {"start_ms": 30_000, "count": 2, "stagger_ms": 1_000, "jitter_ms": 2_000},
    "flapping": {"start_ms": 30_000, "times": 3, "period_ms": 40_000, "pause_ms": 15_000, "jitter_ms": 2_000},
}

CHURN_HELP: dict[str, str] = {
    "rolling-restart": "each member in turn (seeded order) closes cleanly and starts again after downtime_ms; "
                       "one every interval_ms",
    "crash": "one member other than c1 crashes (no LeaveGroup) and stays down",
    "crash-restart": "one member other than c1 crashes and its process starts again after restart_after_ms",
    "scale-out": "count new members join, stagger_ms apart",
    "flapping": "one member other than c1 freezes for pause_ms (longer than the session timeout), "
                "times times, every period_ms",
}

#: settings that must be at least 1 (the others at least 0)
_POSITIVE = {"count", "times", "period_ms", "interval_ms"}

#: consumer settings the sweep sets itself, per member or per cell
_CONSUMER_OWN = {"group_id", "client_id", "group_instance_id", "assignors", "topics", "pattern",
                 "scheduled_rebalance_max_delay_ms"}
CONSUMER_KEYS: tuple[str, ...] = tuple(sorted({f.name for f in fields(ConsumerConfig)} - _CONSUMER_OWN))
COORDINATOR_KEYS: tuple[str, ...] = tuple(sorted(f.name for f in fields(CoordinatorConfig)))

_TOP_KEYS = ("name", "description", "seeds", "settle_ms", "network_delay_ms", "consumer",
             "coordinator", "churn", "grid", "report")
_GRID_KEYS = ("label", "protocol", "assignor", "group_size", "partitions", "churn", "delay_ms")

#: the consumer settings a sweep starts from (shorter than Kafka's defaults, so runs are short)
DEFAULT_CONSUMER: dict[str, Any] = {
    "session_timeout_ms": 10_000,
    "heartbeat_interval_ms": 3_000,
    "max_poll_interval_ms": 30_000,
}


@dataclass(frozen=True, order=True)
class Cell:
    """One point of the grid; each runs once per seed."""

    churn: str
    protocol: str
    assignor: str
    group_size: int
    partitions: int
    delay_ms: int = 0

    @property
    def cell_id(self) -> str:
        return (f"{self.churn}/{self.protocol}/{self.assignor}/n{self.group_size}"
                f"/p{self.partitions}/d{self.delay_ms}")

    @property
    def strategy(self) -> str:
        return f"{self.protocol}/{self.assignor}"

    def skip_reason(self) -> str | None:
        """Why this cell cannot exist, or None."""
        base, _, _ = PROTOCOLS[self.protocol]
        if base == "consumer":
            if self.assignor not in SERVER_ASSIGNOR_NAMES:
                return (f"a KIP-848 group is assigned by the broker ({', '.join(SERVER_ASSIGNOR_NAMES)}), "
                        f"not by the {self.assignor} client assignor")
            if self.delay_ms > 0:
                return "a KIP-415 delay belongs to a client-side assignor, not to a KIP-848 group"
            if self.churn in ("crash", "crash-restart", "flapping") and self.group_size < 2:
                return f"{self.churn} picks a member other than c1, so it needs a group of at least 2"
            return None
        if self.assignor not in ASSIGNOR_NAMES:
            return f"the {self.assignor} assignor runs on the broker (KIP-848 protocols only)"
        supported = get_assignor(self.assignor).supported_protocols
        if base == "cooperative" and RebalanceProtocol.COOPERATIVE not in supported:
            return f"the {self.assignor} assignor supports only the eager protocol"
        if self.delay_ms > 0 and base == "eager":
            return ("a KIP-415 delay (scheduled.rebalance.max.delay.ms) belongs to the cooperative "
                    "protocol (Connect's incremental cooperative assignor)")
        if self.churn in ("crash", "crash-restart", "flapping") and self.group_size < 2:
            return f"{self.churn} picks a member other than c1, so it needs a group of at least 2"
        return None


@dataclass(frozen=True)
class Settings:
    """What every run of a sweep shares."""

    consumer: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_CONSUMER))
    coordinator: dict[str, Any] = field(default_factory=dict)
    churn: dict[str, dict[str, int]] = field(default_factory=lambda: {k: dict(v) for k, v in CHURNS.items()})
    network_delay_ms: int = 2
    settle_ms: int = 30_000


@dataclass(frozen=True)
class RunSpec:
    """One cell with one seed: everything an executor needs, as JSON."""

    cell: Cell
    seed: int
    settings: Settings

    @property
    def run_id(self) -> str:
        return f"{self.cell.cell_id}/s{self.seed}"

    def to_json(self) -> str:
        s = self.settings
        return json.dumps({
            "cell": {f.name: getattr(self.cell, f.name) for f in fields(Cell)},
            "seed": self.seed,
            "settings": {"consumer": s.consumer, "coordinator": s.coordinator, "churn": s.churn,
                         "network_delay_ms": s.network_delay_ms, "settle_ms": s.settle_ms},
        }, sort_keys=True)

    @staticmethod
    def from_json(text: str) -> RunSpec:
        data = json.loads(text)
        return RunSpec(Cell(**data["cell"]), int(data["seed"]), Settings(**data["settings"]))


@dataclass(frozen=True)
class Skip:
    cell: Cell
    reason: str


@dataclass(frozen=True)
class SweepConfig:
    name: str
    description: str
    source: str
    seeds: tuple[int, ...]
    settings: Settings
    cells: tuple[Cell, ...]
    skipped: tuple[Skip, ...]
    baseline: str = "eager/range"

    def runs(self) -> list[RunSpec]:
        return [RunSpec(c, s, self.settings) for c in self.cells for s in self.seeds]

    def with_seeds(self, n: int) -> SweepConfig:
        if n < 1:
            raise SweepConfigError("--seeds: at least one seed is needed")
        if n > MAX_SEEDS:
            raise SweepConfigError(f"--seeds: must be at most {MAX_SEEDS:,}, got {n}")
        return replace(self, seeds=tuple(range(1, n + 1)))

    def skip_lines(self) -> list[str]:
        """One line per reason and (protocol, assignor) pair, with how many cells it skips."""
        counts: dict[tuple[str, str], int] = {}
        for sk in self.skipped:
            key = (f"protocol={sk.cell.protocol} assignor={sk.cell.assignor}"
                   + (f" delay_ms={sk.cell.delay_ms}" if "KIP-415" in sk.reason else "")
                   + (f" churn={sk.cell.churn} group_size={sk.cell.group_size}"
                      if "group of at least" in sk.reason else ""), sk.reason)
            counts[key] = counts.get(key, 0) + 1
        return [f"skipped {n} cell(s) {what}: {why}" for (what, why), n in counts.items()]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


#: limits that bound a sweep's work (docs/pipeline.md): seeds per cell; a cell's group size,
#: partitions and times are bounded as a scenario's are (groupspec.sim.scenario)
MAX_SEEDS = 10_000


def _int(v: Any, where: str, minimum: int, maximum: int = MAX_SIMULATED_MS) -> int:
    if not _is_int(v):
        raise SweepConfigError(f"{where}: expected an integer, got {repr(v)[:40]}")
    if v < minimum:
        raise SweepConfigError(f"{where}: must be >= {minimum}, got {v}")
    if v > maximum:
        shown = str(v) if len(str(v)) <= 30 else f"{str(v)[:12]}... ({len(str(v))} digits)"
        raise SweepConfigError(f"{where}: must be at most {maximum:,}, got {shown}")
    return int(v)


def _axis(raw: dict[str, Any], key: str, where: str, known: tuple[str, ...] | None = None,
          minimum: int = 0, default: list[Any] | None = None,
          maximum: int = MAX_SIMULATED_MS) -> list[Any]:
    if key not in raw:
        if default is not None:
            return default
        raise SweepConfigError(f"{where}.{key}: missing (a grid needs {', '.join(_GRID_KEYS[1:6])})")
    values = raw[key] if isinstance(raw[key], list) else [raw[key]]
    if not values:
        raise SweepConfigError(f"{where}.{key}: empty list")
    out: list[Any] = []
    for i, v in enumerate(values):
        w = f"{where}.{key}[{i}]" if isinstance(raw[key], list) else f"{where}.{key}"
        if known is not None:
            if not isinstance(v, str):
                raise SweepConfigError(f"{w}: expected a name, got {v!r}")
            if v not in known:
                noun = {"protocol": "protocol", "assignor": "assignor", "churn": "churn pattern"}[key]
                raise SweepConfigError(f"{w}: unknown {noun} {v!r}; known: {', '.join(known)}")
            out.append(v)
        else:
            out.append(_int(v, w, minimum, maximum))
    return list(dict.fromkeys(out))


def _table(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise SweepConfigError(f"{where}: {key}: expected a table (object), got {repr(value)[:40]}")
    return value


def _consumer(raw: dict[str, Any], where: str) -> dict[str, Any]:
    unknown = sorted(set(raw) - set(CONSUMER_KEYS))
    if unknown:
        raise SweepConfigError(f"{where}.{unknown[0]}: unknown consumer setting; known: {', '.join(CONSUMER_KEYS)}")
    defaults = {f.name: f.default for f in fields(ConsumerConfig)}
    for k, v in raw.items():
        want = type(defaults[k])
        if (want is bool) != isinstance(v, bool) or not isinstance(v, want):
            raise SweepConfigError(f"{where}.{k}: expected {want.__name__}, got {v!r}")
    values = {**DEFAULT_CONSUMER, **raw}
    try:
        ConsumerConfig(group_id="g", client_id="member", topics=("t",), **values)
    except (TypeError, ValueError) as e:
        raise SweepConfigError(f"{where}: {str(e).removeprefix('member: ')}") from None
    return values


def _coordinator(raw: dict[str, Any], where: str) -> dict[str, Any]:
    unknown = sorted(set(raw) - set(COORDINATOR_KEYS))
    if unknown:
        raise SweepConfigError(f"{where}.{unknown[0]}: unknown coordinator setting; known: {', '.join(COORDINATOR_KEYS)}")
    for k, v in raw.items():
        _int(v, f"{where}.{k}", 0)
    try:
        CoordinatorConfig(**raw)
    except (TypeError, ValueError) as e:
        raise SweepConfigError(f"{where}: {e}") from None
    return dict(raw)


def _churn_settings(raw: dict[str, Any], where: str) -> dict[str, dict[str, int]]:
    out = {k: dict(v) for k, v in CHURNS.items()}
    for name, values in raw.items():
        w = f"{where}.{name}"
        if name not in CHURNS:
            raise SweepConfigError(f"{w}: unknown churn pattern; known: {', '.join(CHURNS)}")
        if not isinstance(values, dict):
            raise SweepConfigError(f"{w}: expected a table of settings")
        for k, v in values.items():
            if k not in CHURNS[name]:
                raise SweepConfigError(f"{w}.{k}: unknown setting of {name}; known: {', '.join(CHURNS[name])}")
            out[name][k] = _int(v, f"{w}.{k}", 1 if k in _POSITIVE else 0)
    return out


def parse_config(data: Any, source: str = "sweep") -> SweepConfig:
    """Check a parsed sweep and expand its grid; SweepConfigError names the bad key."""
    if not isinstance(data, dict):
        raise SweepConfigError(f"{source}: a sweep is a table (JSON object)")
    unknown = sorted(set(data) - set(_TOP_KEYS))
    if unknown:
        raise SweepConfigError(f"{source}: {unknown[0]}: unknown key; known: {', '.join(_TOP_KEYS)}")
    name = data.get("name", Path(source).stem)
    description = data.get("description", "")
    for key, value in (("name", name), ("description", description)):
        if not isinstance(value, str):
            raise SweepConfigError(f"{source}: {key}: expected a string, got {value!r}")
    raw_seeds = data.get("seeds", 1)
    if isinstance(raw_seeds, list):
        if not raw_seeds:
            raise SweepConfigError(f"{source}: seeds: empty list")
        if len(raw_seeds) > MAX_SEEDS:
            raise SweepConfigError(f"{source}: seeds: {len(raw_seeds):,} seeds; the limit is {MAX_SEEDS:,}")
        seeds = tuple(dict.fromkeys(_int(s, f"{source}: seeds[{i}]", 0, 2**63 - 1) for i, s in enumerate(raw_seeds)))
    else:
        seeds = tuple(range(1, _int(raw_seeds, f"{source}: seeds", 1, MAX_SEEDS) + 1))
    settings = Settings(
        consumer=_consumer(_table(data, "consumer", source), f"{source}: consumer"),
        coordinator=_coordinator(_table(data, "coordinator", source), f"{source}: coordinator"),
        churn=_churn_settings(_table(data, "churn", source), f"{source}: churn"),
        network_delay_ms=_int(data.get("network_delay_ms", 2), f"{source}: network_delay_ms", 0),
        settle_ms=_int(data.get("settle_ms", 30_000), f"{source}: settle_ms", 0),
    )
    if "grid" not in data:
        raise SweepConfigError(f"{source}: grid: missing (at least one grid of cells)")
    grids = data["grid"] if isinstance(data["grid"], list) else [data["grid"]]
    if not grids:
        raise SweepConfigError(f"{source}: grid: empty list")
    cells: dict[Cell, None] = {}
    skipped: dict[Cell, str] = {}
    for gi, grid in enumerate(grids):
        where = f"{source}: grid[{gi}]" if isinstance(data["grid"], list) else f"{source}: grid"
        if not isinstance(grid, dict):
            raise SweepConfigError(f"{where}: expected a table (object)")
        bad = sorted(set(grid) - set(_GRID_KEYS))
        if bad:
            raise SweepConfigError(f"{where}.{bad[0]}: unknown key; known: {', '.join(_GRID_KEYS)}")
        if not isinstance(grid.get("label", ""), str):
            raise SweepConfigError(f"{where}.label: expected a string")
        axes = (
            _axis(grid, "churn", where, tuple(CHURNS)),
            _axis(grid, "protocol", where, tuple(PROTOCOLS)),
            _axis(grid, "assignor", where, tuple(dict.fromkeys((*ASSIGNOR_NAMES, *SERVER_ASSIGNOR_NAMES)))),
            _axis(grid, "group_size", where, minimum=1, maximum=MAX_MEMBERS),
            _axis(grid, "partitions", where, minimum=1, maximum=MAX_PARTITIONS),
            _axis(grid, "delay_ms", where, minimum=0, default=[0]),
        )
        for values in product(*axes):
            cell = Cell(*values)
            reason = cell.skip_reason()
            if reason is None:
                cells.setdefault(cell, None)
            else:
                skipped.setdefault(cell, reason)
    if not cells:
        raise SweepConfigError(f"{source}: grid: every cell is impossible, nothing to run "
                               f"(first reason: {next(iter(skipped.values()))})")
    report = _table(data, "report", source)
    bad = sorted(set(report) - {"baseline"})
    if bad:
        raise SweepConfigError(f"{source}: report.{bad[0]}: unknown key; known: baseline")
    baseline = report.get("baseline", "eager/range")
    if not isinstance(baseline, str) or baseline.count("/") != 1:
        raise SweepConfigError(f"{source}: report.baseline: expected PROTOCOL/ASSIGNOR, got {baseline!r}")
    return SweepConfig(
        name=name,
        description=description,
        source=source,
        seeds=seeds,
        settings=settings,
        cells=tuple(cells),
        skipped=tuple(Skip(c, r) for c, r in skipped.items()),
        baseline=baseline,
    )


def load_config_text(text: str, source: str) -> SweepConfig:
    """Parse TOML or JSON (by the file name; TOML unless it ends in .json or starts with '{')."""
    if source.endswith(".json") or text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise SweepConfigError(f"{source}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None
        except (ValueError, RecursionError) as e:  # nested too deep, a number too long
            raise SweepConfigError(f"{source}: not readable JSON: {e}") from None
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SweepConfigError(f"{source}: not valid TOML: {e}") from None
        except (ValueError, RecursionError) as e:
            raise SweepConfigError(f"{source}: not readable TOML: {e}") from None
    return parse_config(data, source)


def bundled_configs() -> dict[str, str]:
    """Bundled sweep name -> its TOML text (shipped inside groupspec.pipeline)."""
    from importlib.resources import files

    root = files("groupspec.pipeline")
    return {
        p.name.removesuffix(".toml"): p.read_text(encoding="utf-8")
        for p in sorted(root.iterdir(), key=lambda p: p.name)
        if p.name.endswith(".toml")
    }


def load_config(name_or_path: str) -> SweepConfig:
    """A bundled sweep by name (``default``) or a JSON / TOML file."""
    path = Path(name_or_path)
    if path.exists():
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise SweepConfigError(f"{path}: cannot read: {e.strerror or e}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            line = raw.count(b"\n", 0, e.start) + 1
            raise SweepConfigError(f"{path}: line {line}: not UTF-8 (byte {e.start})") from None
        return load_config_text(text, str(path))
    bundled = bundled_configs()
    if name_or_path in bundled:
        return load_config_text(bundled[name_or_path], f"{name_or_path}.toml")
    raise SweepConfigError(f"CONFIG: {name_or_path!r} is neither a file nor a bundled sweep "
                           f"({', '.join(bundled)})")
