"""``python -m contextwise_reference``: the command line of :mod:`contextwise_reference.cli`."""

import sys

from contextwise_reference.cli import main

sys.exit(main())
