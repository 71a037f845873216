"""``python -m bgbot.cli``: the ``bgbot`` command."""

from bgbot.cli.main import main

raise SystemExit(main())
