"""Research sweeps: a grid of simulated consumer groups run on Spark, with tables and a report.

``config`` reads and checks a sweep (JSON or TOML) and expands its grid into runs;
``scenarios`` turns one run into a simulator scenario; ``probe`` and ``metrics`` run it and
derive per-rebalance and per-run numbers; ``spark`` fans the runs out to executors and
aggregates; ``tables`` writes Parquet; ``report`` draws the plots and writes the report;
``sweep`` ties it together for ``groupspec pipeline sweep``.
"""
