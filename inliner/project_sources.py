"""The other modules of a file's project, read by dotted name.

The engine reads one module at a time; a decorator imported from another module of the
project decides whether the call takes the split path under ``torch.compile``
(``inliner/engine/analysis/foreign.py``). The surfaces hand ``flatten`` one of these as
``sources``: it reads ``pkg/mod.py`` (or ``pkg/mod/__init__.py``) under the directory
the file's top-level package sits in, the directory ``import pkg.mod`` resolves from,
and nothing outside it (an installed package is not the project's).

It remembers what it read, with a digest of each file (or that there was none), so that
a cache of the result (the import hook's) is used again only while those files are
unchanged.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

from inliner.subclassed import package_root


class ProjectSources:
    """``flatten(..., sources=ProjectSources(root))``: a module's source by its dotted name."""

    def __init__(self, root: str) -> None:
        self.root = root
        #: each file asked for -> the sha256 of its bytes ("" where there was no file)
        self.read: dict[str, str] = {}

    @classmethod
    def of_file(cls, path: str | os.PathLike[str], module: str | None) -> ProjectSources | None:
        """The reader for the file ``path`` of module ``module`` (None without a module)."""
        if not module:
            return None
        file = Path(path).resolve()
        package = package_root(file, module)  # where ``import pkg`` resolves from: its parent
        return cls(str(package[0].parent if package is not None else file.parent))

    def __call__(self, module: str) -> str | None:
        parts = module.split(".")
        if not all(part.isidentifier() for part in parts):
            return None
        base = os.path.join(self.root, *parts)
        for candidate in (os.path.join(base, "__init__.py"), base + ".py"):  # as the import system looks
            try:
                with open(candidate, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            self.read[candidate] = digest(data)
            try:
                return importlib.util.decode_source(data)
            except (SyntaxError, UnicodeDecodeError, LookupError):
                return None
        self.read[base + ".py"] = ""  # none: a module written later changes the answer
        return None

    def __reduce__(self):  # what the command line's worker processes get: the root only
        return (ProjectSources, (self.root,))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def unchanged(read: dict[str, str]) -> bool:
    """Whether every file in ``read`` (a ``ProjectSources.read``) still has that digest."""
    for path, expected in read.items():
        try:
            with open(path, "rb") as f:
                found = digest(f.read())
        except OSError:
            found = ""
        if found != expected:
            return False
    return True
