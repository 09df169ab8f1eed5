"""The consumer (group member) model: sans-IO, eager / cooperative / static."""
