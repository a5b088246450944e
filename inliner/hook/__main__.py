"""``python -m inliner.hook install-pth | uninstall-pth``: the start-up line, by hand."""

import sys

from inliner.hook._pth import main

if __name__ == "__main__":
    sys.exit(main())
