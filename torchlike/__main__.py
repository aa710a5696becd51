"""`python -m torchlike run|compare|coverage|env ...` (`--help` on each): see docs/compat_tools.md."""

import sys

from torchlike._cli import main

if __name__ == "__main__":
    sys.exit(main())
