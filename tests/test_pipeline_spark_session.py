"""The settings a Spark session is started with: the local JVM runs with the C1 compiler
alone unless the user configured the driver's JVM, the work is the JVM's, or the JVM is not
ours to start (spark-submit). The session the tests share is started by the same code, so
its JVM's own arguments show that the option reaches the JVM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from groupspec.pipeline.spark import LIGHT_JVM_OPTIONS, session_conf

KEY = "spark.driver.extraJavaOptions"


@pytest.fixture(autouse=True)
def _no_user_spark_config(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PYSPARK_GATEWAY_PORT", "PYSPARK_SUBMIT_ARGS", "SPARK_CONF_DIR", "SPARK_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("master", ["local[1]", "local[*]", None])
def test_a_local_jvm_this_process_starts_gets_the_light_options(master: str | None) -> None:
    conf = session_conf(master, {"spark.ui.enabled": "false"})
    assert conf[KEY] == LIGHT_JVM_OPTIONS
    assert conf["spark.ui.enabled"] == "false" and conf["spark.ui.showConsoleProgress"] == "false"


def test_the_options_are_left_alone_when_they_do_not_apply(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    assert KEY not in session_conf("local[2]", light_jvm=False)  # --reader parquet: the JVM decodes
    assert KEY not in session_conf("spark://host:7077")  # executors elsewhere
    assert session_conf("local[2]", {KEY: "-Xmx2g"})[KEY] == "-Xmx2g"  # the caller's own options
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", f"--conf {KEY}=-Xss4m pyspark-shell")
    assert KEY not in session_conf("local[2]")
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS")
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "41234")  # spark-submit started the JVM
    assert KEY not in session_conf("local[2]")
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT")
    (tmp_path / "spark-defaults.conf").write_text(f"spark.master local[2]\n{KEY}   -Xss4m\n", encoding="utf-8")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert KEY not in session_conf("local[2]")
    (tmp_path / "spark-defaults.conf").write_text("spark.master local[2]\n", encoding="utf-8")
    assert session_conf("local[2]")[KEY] == LIGHT_JVM_OPTIONS


def test_the_shared_session_s_jvm_runs_with_the_light_options(spark: Any) -> None:
    jvm = spark.sparkContext._jvm
    args = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert LIGHT_JVM_OPTIONS in args
