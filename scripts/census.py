"""How much of what public projects write the engine flattens: a re-runnable census.

Downloads pinned releases of public projects that define custom autograd Functions
(tensor-parallel mappings, fused kernels, attention, checkpointing, quantizers,
Gaussian processes, ODE/SDE solvers, geometry and vision libraries) from PyPI, checks
each file against the sha256 PyPI publishes, extracts only the Python sources, and
runs ``python -m inliner --check --output-format json`` over them. Prints, per
project and in total, how many Function classes (and op calls) were flattened and
refused, the refusals by code, and any file the engine failed on. With ``--paths``, also
which path ``torch.compile`` gives each flattened one (graph, split or island, as
``scripts/compile_paths.py`` finds it) and the islands by reason; ``--islands`` lists them.

Nothing is built or imported from the downloads: a pure-Python wheel is taken where
one exists, else the source distribution, else any wheel (its ``.py`` files are the
same). Downloads are kept in ``--cache`` (default ``~/.cache/inliner-census``).

Usage: python scripts/census.py [--cache DIR] [--jobs N] [--show CODE] [--paths [--islands]] [PROJECT ...]
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path, PurePosixPath

import compile_paths

#: (PyPI name, pinned version). Chosen for the Functions they define, not their size.
PROJECTS: tuple[tuple[str, str], ...] = (
    ("bitsandbytes", "0.50.2"),
    ("causal-conv1d", "1.7.0"),
    ("colossalai", "0.5.0"),
    ("deepspeed", "0.19.8"),
    ("fairscale", "0.4.13"),
    ("fla-core", "0.6.0"),
    ("flash-attn", "2.8.3.post2"),
    ("gpytorch", "1.15.2"),
    ("gsplat", "1.5.3"),
    ("kornia", "0.9.0"),
    ("liger-kernel", "0.8.5"),
    ("linear-operator", "0.6.1"),
    ("mamba-ssm", "2.3.2.post1"),
    ("megatron-core", "0.19.2"),
    ("natten", "0.21.7"),
    ("nerfacc", "0.5.3"),
    ("performer-pytorch", "1.1.4"),
    ("pykeops", "2.3"),
    ("timm", "1.0.31"),
    ("torch-geometric", "2.8.1"),
    ("torch-scatter", "2.1.2"),
    ("torchao", "0.18.0"),
    ("torchdiffeq", "0.2.5"),
    ("torchdyn", "1.0.6"),
    ("torchsde", "0.2.6"),
    ("transformer-engine", "2.20.2"),
    ("xformers", "0.0.35"),
)

FLATTENED = "INL001"


def _release_file(name: str, version: str, sdist: bool = False) -> dict:
    """The file to take from PyPI's JSON for this release (see the module docstring).

    ``sdist`` takes the source distribution only: projects ship their tests there.
    """
    index = f"https://pypi.org/pypi/{name}/json"
    with urllib.request.urlopen(index, timeout=60) as response:
        files = json.load(response)["releases"].get(version, [])
    for entry in files:  # a mirror may answer with relative addresses
        entry["url"] = urllib.parse.urljoin(index, entry["url"])
    pure = [f for f in files if f["filename"].endswith("-none-any.whl")]
    sdists = [f for f in files if f["packagetype"] == "sdist"]
    wheels = [f for f in files if f["filename"].endswith(".whl")]
    for choice in (sdists,) if sdist else (pure, sdists, wheels):
        if choice:
            return choice[0]
    raise RuntimeError(f"{name} {version}: PyPI lists no file to take")


def _download(name: str, version: str, cache: Path, sdist: bool = False) -> Path:
    """The release's archive, fetched once and checked against PyPI's sha256."""
    entry = _release_file(name, version, sdist)
    target = cache / entry["filename"]
    if target.exists():
        _check_digest(target.read_bytes(), entry, target)
        return target
    print(f"downloading {entry['filename']} ({entry['size'] // 1024} KB)", file=sys.stderr, flush=True)
    with urllib.request.urlopen(entry["url"], timeout=300) as response:
        data = response.read()
    _check_digest(data, entry, target)  # before anything is written: a bad download is not kept
    partial = target.with_suffix(target.suffix + ".part")
    partial.write_bytes(data)
    os.replace(partial, target)
    return target


def _check_digest(data: bytes, entry: dict, target: Path) -> None:
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry["digests"]["sha256"]:
        target.unlink(missing_ok=True)
        raise RuntimeError(f"{target.name}: sha256 {digest} is not the one PyPI publishes")


def _python_members(archive: Path) -> list[tuple[str, bytes]]:
    """(relative path, bytes) of every ``.py`` file in a wheel, zip or tarball."""
    found: list[tuple[str, bytes]] = []
    if archive.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as bundle:
            for info in bundle.infolist():
                if info.filename.endswith(".py") and not info.is_dir():
                    found.append((info.filename, bundle.read(info)))
    else:
        with tarfile.open(archive) as bundle:
            for member in bundle.getmembers():
                if member.isfile() and member.name.endswith(".py"):
                    handle = bundle.extractfile(member)
                    if handle is not None:
                        found.append((member.name, handle.read()))
    return found


def _extract(archive: Path, into: Path) -> int:
    """Write the archive's Python files under ``into`` (no path may leave it)."""
    count = 0
    for name, data in _python_members(archive):
        parts = [p for p in PurePosixPath(name).parts if p not in ("", ".", "..", "/")]
        path = into.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        count += 1
    return count


class Tally:
    """Outcomes of one project: flattened and refused targets, refusals by code, failures."""

    def __init__(self) -> None:
        self.flattened = 0
        self.refused: collections.Counter[str] = collections.Counter()
        self.failures: list[str] = []
        self.examples: dict[str, list[str]] = collections.defaultdict(list)

    @property
    def total(self) -> int:
        return self.flattened + sum(self.refused.values())

    def add(self, record: dict, root: Path) -> None:
        code = record.get("code", "")
        where = f"{Path(record['path']).relative_to(root)}:{record.get('line')}: {record.get('message', '')}"
        if code == FLATTENED:
            self.flattened += 1
        elif record.get("name"):
            self.refused[code] += 1
            self.examples[code].append(where)
        else:
            self.failures.append(f"{code} {where}")


def _diagnostics(tree: Path, jobs: int) -> tuple[list[dict], str]:
    """Every diagnostic of ``inliner --check`` over the tree, info ones included."""
    command = [sys.executable, "-m", "inliner", "--check", "-v", "--output-format", "json", "-j", str(jobs)]
    command += ["--exclude", r"/(\.git|__pycache__)/", str(tree)]
    proc = subprocess.run(command, capture_output=True, text=True)
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return records, proc.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("projects", nargs="*", help="only these projects (PyPI names)")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "inliner-census")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--show", action="append", default=[], metavar="CODE", help="list the refusals with CODE")
    parser.add_argument("--paths", action="store_true", help="also count the compile paths and islands by reason")
    parser.add_argument("--islands", action="store_true", help="with --paths, list every island and why")
    args = parser.parse_args(argv)

    chosen = [(n, v) for n, v in PROJECTS if not args.projects or n in args.projects]
    args.cache.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="inliner-census-"))
    try:
        for name, version in chosen:
            files = _extract(_download(name, version, args.cache), workdir / name)
            print(f"{name} {version}: {files} Python files", file=sys.stderr, flush=True)
        records: list[dict] = []
        stderr = ""
        for name, _ in chosen:  # one run per project: a project must not see another's modules
            print(f"checking {name}", file=sys.stderr, flush=True)
            found, errors = _diagnostics(workdir / name, args.jobs)
            records += found
            stderr += errors
        tallies = {name: Tally() for name, _ in chosen}
        for record in records:
            project = Path(record["path"]).relative_to(workdir).parts[0]
            tallies[project].add(record, workdir)
        status = _report(chosen, tallies, stderr, args.show)
        if args.paths:
            status |= _report_paths(chosen, tallies, _compile_paths(chosen, workdir), args.islands)
        return status
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _report(chosen: list[tuple[str, str]], tallies: dict[str, Tally], stderr: str, show: list[str]) -> int:
    out = io.StringIO()
    print(f"{'project':28} {'version':12} {'targets':>7} {'flat':>5} {'refused':>7}  refusals", file=out)
    total = Tally()
    for name, version in chosen:
        tally = tallies[name]
        codes = ", ".join(f"{c} {n}" for c, n in sorted(tally.refused.items()))
        refused = sum(tally.refused.values())
        print(f"{name:28} {version:12} {tally.total:7} {tally.flattened:5} {refused:7}  {codes}", file=out)
        total.flattened += tally.flattened
        total.refused.update(tally.refused)
        total.failures += tally.failures
        for code, where in tally.examples.items():
            total.examples[code] += where
    share = 100 * total.flattened / total.total if total.total else 0.0
    print(f"\n{total.flattened} of {total.total} flattened ({share:.1f}%) in {len(chosen)} projects", file=out)
    print("refusals by code: " + (", ".join(f"{c} {n}" for c, n in total.refused.most_common()) or "none"), file=out)
    failed = total.failures + [line for line in stderr.splitlines() if "error:" in line]
    print(f"failures: {len(failed)}", file=out)
    for line in failed:
        print("  " + line, file=out)
    for code in show:
        print(f"\n{code}:", file=out)
        for where in total.examples.get(code, []):
            print("  " + where, file=out)
    sys.stdout.write(out.getvalue())
    return 1 if failed else 0


def _compile_paths(chosen: list[tuple[str, str]], workdir: Path) -> dict[str, compile_paths.Paths]:
    """Each project's compile paths (``scripts/compile_paths.py``), files named from the project."""
    found = {}
    for name, _ in chosen:
        print(f"compile paths: {name}", file=sys.stderr, flush=True)
        found[name] = compile_paths.scan([workdir / name], relative_to=workdir)
    return found


def _report_paths(
    chosen: list[tuple[str, str]], tallies: dict[str, Tally], found: dict[str, compile_paths.Paths], islands: bool
) -> int:
    out = io.StringIO()
    print(f"\n{'project':28} {'flat':>5} {'graph':>5} {'split':>5} {'island':>6}", file=out)
    total = compile_paths.Paths()
    mismatched = []
    for name, _ in chosen:
        paths = found[name]
        counts = paths.counts
        print(f"{name:28} {tallies[name].flattened:5} " + " ".join(f"{counts[p]:5}" for p in ("graph", "split"))
              + f" {counts['island']:6}", file=out)  # fmt: skip
        if sum(counts.values()) != tallies[name].flattened:
            mismatched.append(f"{name}: {tallies[name].flattened} flattened, {sum(counts.values())} with a path")
        total.add(paths)
    print("\n" + compile_paths.summary(total), file=out)
    print("\nislands by reason, per project:", file=out)
    for why, n in total.reasons.most_common():
        per = collections.Counter(f.file.split("/")[0] for f in total.found if f.path == "island" and f.reason == why)
        print(f"  {n:4}  {why}: " + ", ".join(f"{p} {k}" for p, k in per.most_common()), file=out)
    failed = total.failures + mismatched
    print(f"path failures: {len(failed)}", file=out)
    for line in failed:
        print("  " + line, file=out)
    if islands:
        print("\nislands:", file=out)
        print(compile_paths.listing(compile_paths.Paths([f for f in total.found if f.path == "island"])), file=out)
    sys.stdout.write(out.getvalue())
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
