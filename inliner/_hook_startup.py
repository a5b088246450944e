"""The start-up module an ``inliner_hook.pth`` written before the hook became a package imports.

``python -m inliner.hook install-pth`` now writes a line importing ``inliner.hook._startup``;
a line installed by an older version still names this module, and must keep starting the hook.
"""

import inliner.hook._startup  # noqa: F401
