"""The import hook's bytecode cache: ``__pycache__/<mod>.<cache tag>.inliner-<version>.pyc``.

It lives next to the interpreter's own ``.pyc`` (and follows ``sys.pycache_prefix``),
under a name that cannot collide with it. A cached entry is only as good as the
text and the engine that produced it, so its header holds two keys:

- a hash of the source bytes (as in a checked hash-based ``.pyc``, PEP 552), so
  any edit is seen, even one that keeps the file's mtime and size;
- a fingerprint of the engine: inliner's version and a hash of every module of the
  package but its surfaces (the engine, this hook, the runtime; not the command line
  or the language server). pytest's rewrite cache carries only its version, in the
  file name; that is not enough here, as a ``git pull`` or a reinstall of a changed
  inliner keeps the number. It is computed once per process, from the files (about
  200 kB, hashed like the source). The versions of libcst and black, which the
  engine uses, are not part of it.

An entry holds the code and the warning to repeat, so a cache hit never loads the
engine (libcst, black). Writes are atomic and their failures ignored: a read-only
tree just imports a little slower. Where the engine's files cannot be read, nothing
is cached.
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
from inliner.project_sources import unchanged

TAG = f"inliner-{__version__}"
_FORMAT = 3  # bump when the header or payload layout changes
_HEADER = struct.Struct("<4sI8s8s")  # Python's magic, _FORMAT, source hash, engine fingerprint

#: (message, line) of the warning to repeat on every import of the module, or None
CachedWarning = tuple[str, int] | None

_UNSET = object()
_fingerprint: object = _UNSET  # bytes once computed; None when the engine's files cannot be read


def cache_path(source_path: str) -> str | None:
    """Where the rewritten code of ``source_path`` is cached (None: no cache for this Python)."""
    try:
        normal = importlib.util.cache_from_source(source_path)
    except (NotImplementedError, ValueError):  # sys.implementation.cache_tag is None
        return None
    return f"{normal[: -len('.pyc')]}.{TAG}.pyc"


def engine_fingerprint() -> bytes | None:
    """inliner's version and the contents of its modules but the surfaces', hashed (once per process)."""
    global _fingerprint
    if _fingerprint is _UNSET:
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        _fingerprint = _compute_fingerprint(package)
    return _fingerprint  # type: ignore[return-value]


#: sub-packages whose code never reaches a cached entry
_NOT_FINGERPRINTED = frozenset({"cli", "lsp", "__pycache__"})


def _module_files(directory: str) -> list[str]:
    """The ``.py`` files under ``directory`` (relative, ``/``-separated, sorted), surfaces left out."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not (root == directory and d in _NOT_FINGERPRINTED) and d != "__pycache__"]
        relative = os.path.relpath(root, directory).replace(os.sep, "/")
        found += [name if relative == "." else f"{relative}/{name}" for name in files if name.endswith(".py")]
    return sorted(found)


def _compute_fingerprint(directory: str) -> bytes | None:
    parts = [__version__.encode()]
    try:
        names = _module_files(directory)
        for name in names:
            with open(os.path.join(directory, *name.split("/")), "rb") as f:
                data = f.read()
            parts += [name.encode(), str(len(data)).encode(), data]
    except OSError:  # e.g. installed without its sources: better no cache than a stale one
        return None
    if not names:
        return None
    # CPython's own hash for checked .pyc files: cheap, and always loaded already
    return importlib.util.source_hash(b"\0".join(parts))


def key(source: bytes, settings: bytes = b"") -> bytes | None:
    """The header an entry for these source bytes, from this engine, starts with (None: do not cache).

    ``settings``: what else the engine was told (the project's ``[tool.inliner] compile``
    table), hashed with the source so that editing the table rewrites again."""
    fingerprint = engine_fingerprint()
    if fingerprint is None:
        return None
    hashed = source + b"\0inliner-settings\0" + settings if settings else source
    return _HEADER.pack(importlib.util.MAGIC_NUMBER, _FORMAT, importlib.util.source_hash(hashed), fingerprint)


def read(path: str, header: bytes) -> tuple[CachedWarning, CodeType] | None:
    """The cached (warning, code) if the entry exists, starts with ``header``, and the other
    modules of the project the engine read for it are unchanged; else None."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if not data.startswith(header):
        return None
    try:
        warning, code, read_files = marshal.loads(memoryview(data)[len(header) :])
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(read_files, dict) or not unchanged(read_files):
        return None
    if not isinstance(code, CodeType):
        return None
    if warning is not None and not (isinstance(warning, tuple) and len(warning) == 2):
        return None
    return warning, code


def write(
    path: str, header: bytes, source_path: str, warning: CachedWarning, code: CodeType, read_files: dict[str, str]
) -> None:
    """Write the entry atomically (temp file + rename), with the source's mode; any failure is
    ignored. ``read_files``: the project's other modules the engine read, by digest."""
    try:
        mode = os.stat(source_path).st_mode
    except OSError:
        return
    payload = marshal.dumps((warning, code, read_files))
    write_atomically(path, header + payload, (mode | 0o200) & 0o666)  # like a .pyc


def write_atomically(path: str, payload: bytes, mode: int | None = None) -> None:
    """``payload`` at ``path`` through a temp file and a rename, so a reader never sees half
    of it; nothing under ``PYTHONDONTWRITEBYTECODE``, and any failure is ignored (a cache)."""
    if sys.dont_write_bytecode:
        return
    try:
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except (OSError, ValueError):
        pass
