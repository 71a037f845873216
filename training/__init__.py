"""Self-play TD(lambda) training for bgbot networks (imports bgbot; bgbot never imports this)."""
