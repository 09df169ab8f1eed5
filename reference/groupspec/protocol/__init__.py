"""The protocol vocabulary shared by every layer: errors, messages, records, payloads."""
