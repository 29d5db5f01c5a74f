"""``python -m shedproto.clients.cli``: the same as the ``shedproto`` console script."""

import sys

from . import main

sys.exit(main())
