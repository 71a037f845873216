"""The engine: n-ply search, cubeful equities money and match, match equity tables, and the ``Engine`` API.

It knows nothing of who calls it (no play, cli or training imports).
"""
