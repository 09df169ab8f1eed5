"""The discrete-event simulator: a reference coordinator, N consumers, a network, a clock,
and a fault schedule."""
