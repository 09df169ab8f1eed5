"""Shared fixtures."""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from groupspec.brokers import KafkaBroker, TansuBroker


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as from a terminal, for the tests that interrupt a real process: a run started in
    the background by a non-interactive shell has SIGINT ignored, an ignored signal stays
    ignored across exec, and a Python child then installs no KeyboardInterrupt handler (the
    interrupted command runs on). A handled signal is reset to its default across exec."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


#: Session fixtures too costly to set up on both of ci/test's two workers (a Spark JVM, a
#: Kafka broker): under ``-n 2 --dist loadgroup`` every test that uses one, directly or through
#: another fixture, runs on one worker, as one unit (pytest-xdist's ``xdist_group``). A test
#: that reaches such a fixture through ``request.getfixturevalue`` carries the mark itself
#: (tests/test_brokers_live.py). A test that uses any other fixture wider than a test (a TLC
#: state graph, a cross-check report, a generated collection, a conformance run of the CLI:
#: module or session scope) is grouped with its module, so that the fixture is made once and
#: no two copies of it run at once; every other test goes to whichever worker is free (the TLC models of
#: tests/test_spec_models.py, half an hour in all, spread over both). A plain ``pytest`` run is
#: serial and ignores the marks.
SHARED_FIXTURES: dict[str, str] = {
    "spark": "spark",
    "kafka_broker": "brokers",
    "tansu_broker": "brokers",
}


def _uses_a_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    definitions = getattr(info, "name2fixturedefs", {})
    # ours only: pytest's own (tmp_path_factory and the like) have an empty baseid
    return any(d.scope != "function" and d.baseid for ds in definitions.values() for d in ds)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        names = getattr(item, "fixturenames", ())
        group = next((g for f, g in SHARED_FIXTURES.items() if f in names), None)
        if group is None and _uses_a_module_fixture(item):
            group = item.nodeid.split("::")[0]
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local SparkSession for the whole test run: two cores, few shuffle partitions, no
    UI. Spark failing to start is a test failure, never a skip (CI must run these tests)."""
    from groupspec.pipeline.spark import spark_session

    session = spark_session(
        "local[2]",
        {
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.driver.memory": "1g",
        },
        app_name="groupspec-tests",
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[KafkaBroker]:
    """One Apache Kafka broker (KRaft, loopback) for the whole run, shared by the live
    broker tests and the conformance suite. A broker that cannot start fails the tests
    that need it (never a skip): ci/setup.d/30-brokers.sh fills the cache."""
    from groupspec.brokers import KafkaBroker

    with KafkaBroker() as broker:
        yield broker


@pytest.fixture(scope="session")
def tansu_broker() -> Iterator[TansuBroker]:
    """One Tansu broker for the whole run (see kafka_broker)."""
    from groupspec.brokers import TansuBroker

    with TansuBroker() as broker:
        yield broker


class Rendered:
    """A page as headless Chromium drew it: the screenshot and the DOM after rendering."""

    def __init__(self, png: Path, dom: str) -> None:
        self.png, self.dom = png, dom

    def colours(self) -> dict[tuple[int, int, int], int]:
        """Pixel count per RGB colour of the screenshot."""
        from PIL import Image

        with Image.open(self.png) as img:
            rgb = img.convert("RGB")
            counts = rgb.getcolors(maxcolors=rgb.width * rgb.height) or []
        return {c: n for n, c in counts}  # type: ignore[misc]


@pytest.fixture
def render_in_browser(tmp_path: Path) -> Callable[[Path, tuple[int, int]], Rendered]:
    """Render an HTML file in Debian's chromium (ci/setup.d/50-chromium.sh installs it),
    headless, with a fresh profile and nothing fetched from the network. A missing chromium
    fails the test (CI must look at the pages), never skips it."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail("chromium is not installed: run ci/setup.d/50-chromium.sh (apt-get install -y chromium)")

    def render(page: Path, size: tuple[int, int] = (1280, 2400)) -> Rendered:
        profile = Path(tempfile.mkdtemp(prefix="chromium-", dir=tmp_path))
        png = tmp_path / f"{page.stem}.png"
        common = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
                  "--hide-scrollbars"]
        url = page.resolve().as_uri()
        shot = subprocess.run([*common, f"--screenshot={png}", url], capture_output=True, text=True,
                              timeout=90, check=False)
        assert shot.returncode == 0 and png.is_file(), f"chromium failed to draw {page}: {shot.stderr[-2000:]}"
        dom = subprocess.run([*common, "--dump-dom", url], capture_output=True, text=True, timeout=90, check=False)
        assert dom.returncode == 0, f"chromium failed to load {page}: {dom.stderr[-2000:]}"
        return Rendered(png, dom.stdout)

    return render


@pytest.fixture(scope="session")
def kip848_paused_trace() -> bytes:
    """KIP-848 members under a broker whose consumer session timeout is 10 s (not Kafka's
    45 s): one member pauses past it and is fenced."""
    import io
    import json

    from groupspec.cli.simulate import bundled_scenarios
    from groupspec.sim.render import write_trace
    from groupspec.sim.runner import simulate
    from groupspec.sim.scenario import apply_overrides, parse_scenario

    data = apply_overrides(json.loads(bundled_scenarios()["default"]), group_protocol="consumer",
                           members=3, until_ms=60_000, replace_faults=True,
                           faults=[{"at_ms": 20_000, "kind": "pause", "member": "c2", "duration_ms": 15_000}])
    data["coordinator"] = {**data.get("coordinator", {}), "consumer_group_session_timeout_ms": 10_000,
                           "consumer_group_heartbeat_interval_ms": 3_000}
    out = io.StringIO()
    write_trace(simulate(parse_scenario(data, "paused")), out)
    return out.getvalue().encode()
