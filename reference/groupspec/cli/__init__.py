"""The ``groupspec`` command line: one small module per command group."""
