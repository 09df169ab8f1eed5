"""Partition assignors behind one interface (see :mod:`groupspec.assignors.base`)."""
