"""``python -m hyperslab``: the ``hyperslab`` command (:mod:`hyperslab.tools.cli`)."""

import sys

from hyperslab.tools.cli import main

if __name__ == "__main__":
    sys.exit(main())
