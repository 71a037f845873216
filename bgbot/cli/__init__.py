"""The ``bgbot`` command."""
