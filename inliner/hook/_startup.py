"""Imported by the ``inliner_hook.pth`` start-up line only when ``INLINER_HOOK`` is set."""

from inliner.hook import install_from_env

install_from_env()
