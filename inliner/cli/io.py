"""Reading and writing source files without changing anything we were not asked to.

A file is decoded with the encoding Python itself would use (PEP 263 cookie, UTF-8
BOM, else UTF-8) and without newline translation, so the engine sees ``\\r\\n`` as
``\\r\\n`` and hands it back unchanged. Writing encodes with the same codec (the
``utf-8-sig`` codec puts the BOM back) and replaces the file atomically: a temporary
file in the same directory, the original permission bits, then ``os.replace``.
"""

from __future__ import annotations

import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass


class SourceError(Exception):
    """The file cannot be read, decoded, encoded or written; the message says why."""


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str  # a codec name; "utf-8-sig" when the file starts with a BOM


def decode(data: bytes) -> Decoded:
    """Decode ``data`` like the interpreter would, keeping every newline as it is."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # unknown codec in the cookie, BOM + non-UTF-8 cookie
        raise SourceError(f"cannot detect the encoding: {exc}") from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise SourceError(f"cannot decode as {encoding}: {exc}") from None
    return Decoded(text, encoding)


def encode(text: str, encoding: str) -> bytes:
    try:
        return text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise SourceError(f"the new text cannot be encoded as {encoding}: {exc}") from None


@dataclass(frozen=True)
class Snapshot:
    """What was read, and enough of the file's state to notice a concurrent change."""

    data: bytes
    decoded: Decoded
    mtime_ns: int
    size: int


def read(path: str) -> Snapshot:
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            data = f.read()
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    return Snapshot(data, decode(data), st.st_mtime_ns, st.st_size)


def write_atomic(path: str, data: bytes, *, expect: Snapshot | None = None) -> None:
    """Replace the contents of ``path`` (a real file, not a symlink) with ``data``.

    The file keeps its permission bits (and owner, when we may set it). With
    ``expect``, refuse when the file changed on disk since it was read.
    """
    try:
        st = os.stat(path)
    except OSError as exc:
        raise SourceError(f"cannot write: {exc.strerror or exc}") from None
    if expect is not None and (st.st_mtime_ns, st.st_size) != (expect.mtime_ns, expect.size):
        raise SourceError("the file changed on disk while it was being processed; not written")
    directory, name = os.path.split(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".inliner-tmp", dir=directory or ".")
    except OSError as exc:
        raise SourceError(f"cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        if hasattr(os, "chown") and (st.st_uid, st.st_gid) != _owner(tmp):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except OSError:
                pass  # not allowed to give the file away; it stays ours
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise SourceError(f"cannot write: {exc.strerror or exc}") from None
        raise


def _owner(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_uid, st.st_gid
