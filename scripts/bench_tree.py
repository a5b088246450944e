"""Benchmark the command line on a large real tree: a copy of the installed torch package.

Reports, measured side by side in one run (this machine is shared and noisy, so only the
ratios mean anything):

- ``python -m inliner --check`` over the whole tree vs a bare ``libcst.parse_module`` of
  every file (target: at most 0.15);
- the same vs ``black --check`` over a fixed subset of the tree (black on all of torch takes
  about 11 minutes here), scaled per file (target: at most 0.03);
- how many of torch's own Function classes were flattened, refused (by code) or failed.

Usage: python scripts/bench_tree.py [--subset N] [--jobs N] [TREE]
(default TREE: a fresh copy of the installed torch package in a temporary directory)
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _bare_parse(files: list[Path], jobs: int) -> float:
    """Wall time to libcst-parse every file, in ``jobs`` processes (as inliner would spread them)."""
    code = (
        "import sys, libcst\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        libcst.parse_module(open(path, 'rb').read())\n"
        "    except Exception:\n"
        "        pass\n"
    )
    chunks = [files[i::jobs] for i in range(jobs)]
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", code, *map(str, chunk)]) for chunk in chunks if chunk]
    for proc in procs:
        proc.wait()
    return time.perf_counter() - start


def _run(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - start, proc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", nargs="?", help="tree to scan (default: a copy of the installed torch)")
    parser.add_argument("--subset", type=int, default=150, help="files for the black comparison (default 150)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)

    tmp = None
    if args.tree:
        root = Path(args.tree)
    else:
        import torch

        tmp = tempfile.mkdtemp(prefix="inliner-bench-")
        root = Path(tmp) / "torch"
        shutil.copytree(
            Path(torch.__file__).parent,
            root,
            ignore=shutil.ignore_patterns("__pycache__", "*.so*", "lib", "bin", "include"),
        )
    try:
        files = _python_files(root)
        lines = sum(p.read_bytes().count(b"\n") for p in files)
        print(f"tree: {root} ({len(files)} files, {lines:,} lines), jobs={args.jobs}")

        inliner_time, proc = _run([sys.executable, "-m", "inliner", "--check", "--jobs", str(args.jobs), str(root)])
        parse_time = _bare_parse(files, args.jobs)
        subset = files[:: max(1, len(files) // args.subset)][: args.subset]
        black_time, _ = _run(
            [sys.executable, "-m", "black", "--check", "--quiet", "--workers", str(args.jobs), *map(str, subset)]
        )
        black_full_estimate = black_time * len(files) / len(subset)

        codes = collections.Counter(re.findall(r": (INL\d+) ", proc.stderr))
        summary = [line for line in proc.stderr.splitlines() if line.startswith(("All done", "Oh no", "Functions:"))]
        failed = [line for line in proc.stderr.splitlines() if "error:" in line or "failed" in line.lower()]

        print(f"inliner --check            {inliner_time:8.1f} s   (exit {proc.returncode})")
        print(f"bare libcst parse          {parse_time:8.1f} s")
        print(f"black --check ({len(subset)} files) {black_time:8.1f} s   (~{black_full_estimate:.0f} s for the tree)")
        print(f"ratio inliner / libcst parse : {inliner_time / parse_time:.3f}   (target <= 0.15)")
        print(f"ratio inliner / black        : {inliner_time / black_full_estimate:.4f}  (target <= 0.03)")
        for line in summary:
            print(line)
        print("refusals by code:", ", ".join(f"{c} {n}" for c, n in sorted(codes.items()) if c != "INL001") or "none")
        if failed:
            print("FAILURES:")
            for line in failed:
                print("  " + line)
        return 0 if proc.returncode in (0, 1) else 1
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
