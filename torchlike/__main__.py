"""`python -m torchlike run|compare|coverage ...`: see torchlike/compat and docs/compat_tools.md."""

import sys

from torchlike.compat._cli import main

if __name__ == "__main__":
    sys.exit(main())
