"""How the training modules' commands (``python -m training.refine|gate|ship``) end on bad input.

A :class:`~bgbot.errors.BgbotError` (a bad config, checkpoint, record or option) is printed as one
line quoting the input, exit status 2, as the ``bgbot`` command does; Ctrl-C is a short message and
status 130. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn

from bgbot.errors import BgbotError


def run(main: Callable[[], object], prog: str) -> NoReturn:
    """Call ``main`` and exit: 0 when it returns, 2 with ``prog: error: ...`` on a BgbotError, 130 on Ctrl-C."""
    try:
        main()
    except BgbotError as exc:
        print(f"{prog}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        sys.exit(130)
    sys.exit(0)
