"""The import hook's bytecode cache: ``__pycache__/<mod>.<cache tag>.inliner-<version>.pyc``.

It lives next to the interpreter's own ``.pyc`` (and follows ``sys.pycache_prefix``),
under a name that cannot collide with it and that a new inliner version does not
reuse, because a cached entry is only as good as the engine that produced it.
An entry is valid while the source's mtime (in ns) and size are unchanged, like a
timestamp ``.pyc``. It holds the code and the warning to repeat, so a cache hit
never loads the engine (libcst, black). Writes are atomic and their failures
ignored: a read-only tree just imports a little slower.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import struct
import sys
import tempfile
from types import CodeType

from inliner import __version__

TAG = f"inliner-{__version__}"
_FORMAT = 1  # bump when the payload layout changes
_HEADER = struct.Struct("<4sIQQ")  # Python's magic, _FORMAT, source mtime_ns, source size

#: (message, line) of the warning to repeat on every import of the module, or None
CachedWarning = tuple[str, int] | None


def cache_path(source_path: str) -> str | None:
    """Where the rewritten code of ``source_path`` is cached (None: no cache for this Python)."""
    try:
        normal = importlib.util.cache_from_source(source_path)
    except (NotImplementedError, ValueError):  # sys.implementation.cache_tag is None
        return None
    return f"{normal[: -len('.pyc')]}.{TAG}.pyc"


def _header(st: os.stat_result) -> bytes:
    return _HEADER.pack(importlib.util.MAGIC_NUMBER, _FORMAT, st.st_mtime_ns, st.st_size)


def read(path: str, st: os.stat_result) -> tuple[CachedWarning, CodeType] | None:
    """The cached (warning, code) if the entry exists and matches the source; else None."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    header = _header(st)
    if not data.startswith(header):
        return None
    try:
        warning, code = marshal.loads(memoryview(data)[len(header) :])
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(code, CodeType):
        return None
    if warning is not None and not (isinstance(warning, tuple) and len(warning) == 2):
        return None
    return warning, code


def write(path: str, st: os.stat_result, warning: CachedWarning, code: CodeType) -> None:
    """Write the entry atomically (temp file + rename); any failure is ignored."""
    if sys.dont_write_bytecode:
        return
    try:
        payload = _header(st) + marshal.dumps((warning, code))
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
            os.chmod(tmp, (st.st_mode | 0o200) & 0o666)  # like a .pyc: the source's mode
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except (OSError, ValueError):
        pass
