"""The sans-IO classic group coordinator: requests and ``now_ms`` in, responses and records out."""
