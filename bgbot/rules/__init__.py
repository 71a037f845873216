"""The rules of backgammon: positions, dice, legal moves and move notation, match and cube state.

Imports nothing above it (no formats, networks, engine or play).
"""
