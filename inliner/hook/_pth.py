"""The start-up line that turns ``INLINER_HOOK=pkg,... python ...`` into an installed hook.

Python runs ``import`` lines of ``*.pth`` files in site-packages at start-up, which
is how coverage measures subprocesses. Ours costs an environment lookup when
``INLINER_HOOK`` is unset: only when it is set does it import inliner.

The wheel ships the line as ``inliner-hook.pth`` at its root (``setup.py``'s build step
writes ``PTH_LINE`` there), so ``pip install`` puts it in site-packages and ``pip
uninstall`` removes it; an editable install gets it too. Environments that strip
``.pth`` files from packages (some image builders and bundlers do) get the same line,
as ``inliner_hook.pth``, from an explicit command:

    python -m inliner.hook install-pth [--user | --dir DIR]
    python -m inliner.hook uninstall-pth [--user | --dir DIR]

When both files are there the hook is still installed once. A line the command left
behind after inliner is uninstalled prints one message when ``INLINER_HOOK`` is set
and does nothing otherwise.
"""

from __future__ import annotations

import argparse
import os
import site
import sysconfig
import tempfile
from pathlib import Path

PTH_NAME = "inliner_hook.pth"  # written by install-pth
SHIPPED_PTH_NAME = "inliner-hook.pth"  # in the wheel (setup.py); owned by pip
_START = (
    "try:\n"
    " import inliner.hook._startup\n"
    "except Exception as exc:\n"
    " sys.stderr.write(f'inliner: INLINER_HOOK is set but the import hook did not start: {exc!r}\\n')\n"
)
PTH_LINE = f'import os, sys; exec({_START!r}) if os.environ.get("INLINER_HOOK") else None\n'


def default_directory(user: bool = False) -> Path:
    """This interpreter's site-packages (the venv's in a venv), or the user site with ``user``."""
    return Path(site.getusersitepackages() if user else sysconfig.get_paths()["purelib"])


def install_pth(directory: str | os.PathLike[str] | None = None, *, user: bool = False) -> Path:
    """Write ``inliner_hook.pth`` (atomically) into ``directory``; return its path."""
    target = Path(directory) if directory is not None else default_directory(user)
    target.mkdir(parents=True, exist_ok=True)
    path = target / PTH_NAME
    fd, tmp = tempfile.mkstemp(prefix=PTH_NAME + ".", suffix=".tmp", dir=target)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(PTH_LINE)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def uninstall_pth(directory: str | os.PathLike[str] | None = None, *, user: bool = False) -> Path | None:
    """Remove ``inliner_hook.pth`` from ``directory``; return its path, or None if it was not there."""
    path = (Path(directory) if directory is not None else default_directory(user)) / PTH_NAME
    try:
        path.unlink()
    except FileNotFoundError:
        return None
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m inliner.hook",
        description="Install or remove the start-up line that makes INLINER_HOOK=pkg,... work.",
    )
    parser.add_argument("command", choices=["install-pth", "uninstall-pth"])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--dir", help="the site-packages directory (default: this interpreter's)")
    where.add_argument("--user", action="store_true", help="the user site-packages directory")
    args = parser.parse_args(argv)
    try:
        if args.command == "install-pth":
            path = install_pth(args.dir, user=args.user)
            print(f"wrote {path}; INLINER_HOOK=pkg,... now flattens those packages at import")
        else:
            removed = uninstall_pth(args.dir, user=args.user)
            print(f"removed {removed}" if removed else "no inliner_hook.pth there")
    except OSError as exc:
        print(f"inliner: {exc} (try --user, or --dir with a writable site directory)")
        return 1
    return 0
