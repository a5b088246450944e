"""Which files to process: recursion, include/exclude regexes, .gitignore, symlinks.

Rules (black's, with two safety additions):

* A file named on the command line is always processed, unless it matches
  ``--force-exclude``.
* Inside a directory, a file is processed when its path relative to the project
  root (``/pkg/mod.py``; directories end in ``/``) matches ``--include`` and
  matches neither ``--exclude``, ``--extend-exclude``, ``--force-exclude`` nor a
  ``.gitignore`` (the one in the project root and every one on the way down).
  ``.gitignore`` files are not read when ``--exclude`` is given, as with black.
  When a directory named on the command line is itself excluded (``inliner build``)
  its contents are matched relative to it, so naming it still processes it.
* A symlink found while walking a directory is followed only when it resolves
  inside that directory, and a path named on the command line only when it
  resolves inside the project root; others are skipped (said with ``-v``). Files
  and directories are visited once (by real path). Writes go to the resolved
  file, so symlinks stay symlinks.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_INCLUDE = r"\.py$"
DEFAULT_EXCLUDE = (
    r"/(\.direnv|\.eggs|\.git|\.hg|\.mypy_cache|\.nox|\.pytest_cache|\.ruff_cache|\.svn|\.tox"
    r"|\.venv|venv|__pycache__|__pypackages__|_build|buck-out|build|dist|node_modules)/"
)


class PathError(Exception):
    """A path on the command line does not exist (a usage error)."""


def compile_regex(pattern: str, option: str) -> re.Pattern[str]:
    """Compile a user regex; multi-line ones are verbose (black's convention)."""
    if "\n" in pattern:
        pattern = "(?x)" + pattern
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression for {option}: {pattern!r}: {exc}") from None


# --- .gitignore --------------------------------------------------------------------


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def _glob_segment(seg: str) -> str:
    out: list[str] = []
    i, n = 0, len(seg)
    while i < n:
        c = seg[i]
        if c == "*":
            while i + 1 < n and seg[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(seg[i]))
        elif c == "[":
            j = i + 1
            if j < n and seg[j] in "!^":
                j += 1
            if j < n and seg[j] == "]":
                j += 1
            while j < n and seg[j] != "]":
                j += 1
            if j >= n:  # no closing bracket: a literal "["
                out.append(re.escape(c))
            else:
                body = seg[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\").replace("[", "\\[") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _compile_gitignore_line(line: str) -> _Rule | None:
    line = line.rstrip("\n").rstrip("\r")
    # trailing spaces are ignored unless escaped
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    if not line or line.startswith("#"):
        return None
    negate = False
    if line.startswith("!"):
        negate, line = True, line[1:]
    elif line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    segments = line.split("/")
    parts: list[str] = []
    last = len(segments) - 1
    for idx, seg in enumerate(segments):
        if seg == "**":
            parts.append(".+" if idx == last else "(?:.*/)?")
        else:
            parts.append(_glob_segment(seg) + ("/" if idx < last else ""))
    body = "".join(parts)
    prefix = "^" if anchored else "^(?:.*/)?"
    return _Rule(re.compile(prefix + body + "$", re.DOTALL), negate, dir_only)


@dataclass(frozen=True)
class GitIgnore:
    """The rules of one .gitignore file; paths are matched relative to its directory."""

    base: str  # absolute directory
    rules: tuple[_Rule, ...]

    @classmethod
    def parse(cls, base: str, text: str) -> GitIgnore:
        rules = tuple(r for r in map(_compile_gitignore_line, text.splitlines()) if r is not None)
        return cls(base, rules)

    @classmethod
    def load(cls, directory: str) -> GitIgnore | None:
        path = os.path.join(directory, ".gitignore")
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            return None
        spec = cls.parse(directory, text)
        return spec if spec.rules else None

    def verdict(self, abspath: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a ``!`` rule, None: no rule matches."""
        rel = os.path.relpath(abspath, self.base)
        if rel.startswith(".."):
            return None
        rel = rel.replace(os.sep, "/")
        result: bool | None = None
        for rule in self.rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(rel):
                result = not rule.negate
        return result


def gitignored(specs: tuple[GitIgnore, ...], abspath: str, is_dir: bool) -> bool:
    """Deeper .gitignore files override higher ones; later lines override earlier ones."""
    result = False
    for spec in specs:
        verdict = spec.verdict(abspath, is_dir)
        if verdict is not None:
            result = verdict
    return result


# --- discovery ----------------------------------------------------------------------


@dataclass(frozen=True)
class Filters:
    include: re.Pattern[str]
    exclude: re.Pattern[str]
    extend_exclude: re.Pattern[str] | None = None
    force_exclude: re.Pattern[str] | None = None
    use_gitignore: bool = True


@dataclass(frozen=True, order=True)
class SourceFile:
    display: str  # the path as the user sees it (argument joined with the names below it)
    real: str  # the resolved file: read from and written to


@dataclass(frozen=True)
class Skipped:
    display: str
    reason: str


@dataclass
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def match_string(abspath: str, base: str, is_dir: bool) -> str:
    rel = os.path.relpath(abspath, base).replace(os.sep, "/")
    rel = "" if rel == "." else rel
    return "/" + rel + ("/" if is_dir and rel else "")


def discover(paths: list[str], root: Path, filters: Filters) -> Discovery:
    """Expand ``paths`` (files and directories; not ``-``) into the files to process."""
    found = Discovery()
    seen: set[str] = set()
    root_s = os.path.abspath(root)
    real_root = os.path.realpath(root_s)
    candidates: list[SourceFile] = []
    for arg in paths:
        abspath = os.path.abspath(arg)
        if not os.path.exists(abspath):
            raise PathError(f"{arg}: no such file or directory")
        is_dir = os.path.isdir(abspath)
        real = os.path.realpath(abspath)
        if not _within(real, real_root):
            found.skipped.append(Skipped(arg, f"resolves to {real}, outside the project root {root_s}"))
            continue
        if filters.force_exclude is not None and filters.force_exclude.search(match_string(abspath, root_s, is_dir)):
            found.skipped.append(Skipped(arg, "matches --force-exclude"))
            continue
        if not is_dir:
            candidates.append(SourceFile(arg, real))
            continue
        base = root_s
        as_dir = match_string(abspath, root_s, True)
        if any(r is not None and r.search(as_dir) for r in (filters.exclude, filters.extend_exclude)):
            base = abspath  # the user named an excluded directory: match below it
        specs: tuple[GitIgnore, ...] = ()
        if filters.use_gitignore:
            chain = [abspath] if not _within(abspath, root_s) else _chain(root_s, abspath)
            specs = tuple(s for s in map(GitIgnore.load, chain) if s is not None)
        _walk(os.path.normpath(arg), abspath, real, base, specs, filters, candidates, found, {real})
    for src in sorted(candidates):
        if src.real in seen:
            continue
        seen.add(src.real)
        found.files.append(src)
    return found


def _chain(root: str, directory: str) -> list[str]:
    """``root`` and every directory from it down to ``directory``, inclusive."""
    out = [directory]
    while directory != root:
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
        out.append(directory)
    return out[::-1]


def _walk(
    display: str,
    abspath: str,
    real_root: str,
    base: str,
    specs: tuple[GitIgnore, ...],
    filters: Filters,
    out: list[SourceFile],
    found: Discovery,
    visited: set[str],
) -> None:
    try:
        entries = sorted(os.scandir(abspath), key=lambda e: e.name)
    except OSError as exc:
        found.skipped.append(Skipped(display, f"cannot list directory: {exc.strerror or exc}"))
        return
    for entry in entries:
        child_display = entry.name if display == os.curdir else os.path.join(display, entry.name)
        child_abs = os.path.join(abspath, entry.name)
        try:
            is_dir = entry.is_dir()
            is_file = entry.is_file()
            is_link = entry.is_symlink()
        except OSError:
            continue
        real = os.path.realpath(child_abs)
        if is_link:
            if not os.path.exists(real):
                found.skipped.append(Skipped(child_display, "broken symbolic link"))
                continue
            if not _within(real, real_root):
                found.skipped.append(Skipped(child_display, f"symbolic link to {real}, outside {display}"))
                continue
        if specs and gitignored(specs, child_abs, is_dir):
            found.skipped.append(Skipped(child_display, "ignored by .gitignore"))
            continue
        match = match_string(child_abs, base, is_dir)
        reason = _excluded(match, filters)
        if reason:
            found.skipped.append(Skipped(child_display, reason))
            continue
        if is_dir:
            if real in visited:
                found.skipped.append(Skipped(child_display, "directory already visited (symlink loop)"))
                continue
            child_specs = specs
            if filters.use_gitignore:
                spec = GitIgnore.load(child_abs)
                if spec is not None:
                    child_specs = specs + (spec,)
            _walk(child_display, child_abs, real_root, base, child_specs, filters, out, found, visited | {real})
        elif is_file:
            if filters.include.search(match):
                out.append(SourceFile(child_display, real))


def _excluded(match: str, filters: Filters) -> str | None:
    if filters.exclude.search(match):
        return "matches --exclude"
    if filters.extend_exclude is not None and filters.extend_exclude.search(match):
        return "matches --extend-exclude"
    if filters.force_exclude is not None and filters.force_exclude.search(match):
        return "matches --force-exclude"
    return None
