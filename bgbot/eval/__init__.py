"""Evaluation: network inputs, networks and their loading, evaluators ``(N, 26) -> (N, 5)``, bear-off, pubeval."""
