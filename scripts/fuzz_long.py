"""Long differential-fuzzing profile: generate Functions by seed, run the oracle, report every failure.

Usage:
    python scripts/fuzz_long.py [--count 20000] [--start 0] [--workers N]
                                [--out DIR] [--shrink] [--no-func]
                                [--avoid all|KNOB,...] [--engine-root DIR]

Each seed makes one module (``tests/support/fuzz_gen.py``) that the oracle
(``tests/support/fuzz_oracle.py``) checks: engine refusals must leave the class text
alone and name it, rewrites must behave like the original under the harness and
under ``torch.func``. Progress (examples/s, failures, refusals per code) is
printed every few seconds; every failing module is written to ``--out``:
``<bucket>/seed_<n>.py`` (the original), ``seed_<n>.rewritten.py`` and
``seed_<n>.txt`` (what differed, plus the draw list to replay it). With
``--shrink`` the first failure of each bucket is minimised at the end and written
as ``<bucket>/minimal.py``. ``summary.json`` holds the counts.

``--avoid all`` steers the generator around the still-open bugs listed in
``fuzz_gen.KNOWN_BUGS`` so a run keeps finding new ones. ``--engine-root`` imports
``inliner`` from a snapshot (``git archive HEAD inliner | tar -x -C DIR``) instead of
the work tree, so edits made during a long run do not mix engine versions.

Replay one seed: ``python scripts/fuzz_long.py --replay SEED [--avoid ...]``.

``--dumps`` fuzzes dumped graphs of chained ``autograd_function_apply`` calls instead
(``tests/support/fuzz_gen_dumps.py``, checked by ``fuzz_oracle.check_dump`` against the eager
Functions they stand for, written next to each failure as ``seed_<n>.reference.py``);
``--shrink``, ``--avoid`` and the torch.func comparison do not apply to them.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _use_engine_from(root: str) -> None:
    """Import ``inliner`` from ``root`` (e.g. a ``git archive`` snapshot) instead of the editable install.

    Other people edit the work tree while a long run goes on; a snapshot keeps the
    run about one engine version.
    """
    sys.meta_path[:] = [
        f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "") and "__editable__" not in repr(f)
    ]
    sys.path.insert(0, root)


if "--engine-root" in sys.argv:  # before anything imports inliner
    _use_engine_from(sys.argv[sys.argv.index("--engine-root") + 1])

MAX_FILES_PER_BUCKET = 10

from tests.support.fuzz_gen import AVOIDABLE, KNOWN_BUGS  # noqa: E402


def _init_worker() -> None:
    import warnings

    import torch

    torch.set_num_threads(1)
    warnings.simplefilter("ignore")


def _run(args: tuple) -> dict:
    seed, func, avoid, *mode = args
    if mode and mode[0] == "dumps":
        return _run_dump(seed)
    from tests.support.fuzz_gen import generate_from_seed
    from tests.support.fuzz_oracle import check_generated, signature

    start = time.perf_counter()
    try:
        gen = generate_from_seed(seed, avoid)
    except Exception as exc:  # a generator bug, not an engine bug
        return {"seed": seed, "generator_error": f"{type(exc).__name__}: {exc}", "elapsed": 0.0}
    outcome = check_generated(gen, func=func)
    return {
        "seed": seed,
        "elapsed": time.perf_counter() - start,
        "flattened": list(outcome.flattened),
        "refused": dict(outcome.refused),
        "failures": [(signature(f), f) for f in outcome.failures],
        "features": sorted(gen.features),
        "draws": gen.draws,
        "source": gen.source if outcome.failures else None,
        "output": outcome.output if outcome.failures else None,
    }


def _run_dump(seed: int) -> dict:
    from tests.support.fuzz_gen_dumps import generate_dump_from_seed
    from tests.support.fuzz_oracle import check_dump, signature

    start = time.perf_counter()
    try:
        gen = generate_dump_from_seed(seed)
    except Exception as exc:  # a generator bug, not an engine bug
        return {"seed": seed, "generator_error": f"{type(exc).__name__}: {exc}", "elapsed": 0.0}
    outcome = check_dump(gen)
    return {
        "seed": seed,
        "elapsed": time.perf_counter() - start,
        "flattened": list(outcome.flattened),
        "refused": dict(outcome.refused),
        "failures": [(signature(f), f) for f in outcome.failures],
        "features": sorted(gen.features),
        "draws": gen.draws,
        "source": gen.source if outcome.failures else None,
        "reference": gen.reference if outcome.failures else None,
        "output": outcome.output if outcome.failures else None,
    }


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")[:80] or "failure"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=20000, help="number of generated Functions")
    parser.add_argument("--start", type=int, default=0, help="first seed")
    parser.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2)))
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "inliner-fuzz")
    parser.add_argument("--shrink", action="store_true", help="minimise the first failure of every bucket at the end")
    parser.add_argument("--no-func", action="store_true", help="skip the torch.func comparison")
    parser.add_argument("--every", type=float, default=30.0, help="seconds between progress lines")
    parser.add_argument(
        "--avoid",
        default="",
        help="comma-separated known bugs to steer around, or 'all' for the open ones: " + ", ".join(AVOIDABLE),
    )
    parser.add_argument("--engine-root", help="import inliner from this folder (a snapshot of the engine)")
    parser.add_argument("--replay", type=int, help="print one seed's module, rewrite and failures, then exit")
    parser.add_argument(
        "--dumps", action="store_true", help="fuzz dumped graphs of chained op calls instead of Functions"
    )
    parser.add_argument(
        "--compiled",
        choices=("share", "always", "never"),
        default="share",
        help="the compiled comparison (tests/support/fuzz_compiled.py): on its share of modules, on all, on none",
    )
    args = parser.parse_args(argv)
    if args.compiled != "share":  # read by every worker's oracle
        os.environ["INLINER_FUZZ_COMPILE"] = "1" if args.compiled == "always" else "0"
    avoid = frozenset(KNOWN_BUGS) if args.avoid == "all" else frozenset(a for a in args.avoid.split(",") if a)
    unknown = avoid - set(AVOIDABLE)
    if unknown:
        parser.error(f"unknown --avoid entries: {sorted(unknown)}")

    if args.replay is not None:
        _init_worker()
        result = _run((args.replay, not args.no_func, avoid, "dumps" if args.dumps else "functions"))
        from inliner import flatten
        from tests.support.fuzz_gen import generate_from_seed
        from tests.support.fuzz_gen_dumps import generate_dump_from_seed

        gen = generate_dump_from_seed(args.replay) if args.dumps else generate_from_seed(args.replay, avoid)
        print(gen.source)
        print("# ---- rewrite ----")
        print(flatten(gen.source).source)
        for sig, text in result.get("failures", []):
            print(f"# FAILURE [{sig}]\n{text}\n")
        return 1 if result.get("failures") else 0

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    refusals: collections.Counter = collections.Counter()
    buckets: collections.Counter = collections.Counter()
    first_draws: dict[str, list[int]] = {}
    feature_total: collections.Counter = collections.Counter()
    feature_refused: collections.Counter = collections.Counter()
    examples = flattened = refused_modules = failing_modules = generator_errors = 0
    started = last = time.time()

    def progress(final: bool = False) -> None:
        elapsed = time.time() - started
        rate = examples / elapsed if elapsed else 0.0
        print(
            f"[{elapsed:7.0f}s] {examples} examples, {rate:.2f}/s; flattened {flattened}, refused {refused_modules}, "
            f"failing {failing_modules}; refusals {dict(refusals.most_common())}; buckets {dict(buckets.most_common())}"
            + (" (final)" if final else ""),
            flush=True,
        )

    seeds = range(args.start, args.start + args.count)
    work = ((seed, not args.no_func, avoid, "dumps" if args.dumps else "functions") for seed in seeds)
    print(
        f"seeds {args.start}..{args.start + args.count - 1}, {args.workers} workers, avoid {sorted(avoid)}", flush=True
    )
    pool = multiprocessing.Pool(args.workers, initializer=_init_worker, maxtasksperchild=500)
    try:
        for result in pool.imap_unordered(_run, work, chunksize=4):
            examples += 1
            if "generator_error" in result:
                generator_errors += 1
                print(f"GENERATOR ERROR seed {result['seed']}: {result['generator_error']}", flush=True)
                continue
            if result["flattened"]:
                flattened += 1
            if result["refused"]:
                refused_modules += 1
            for code in result["refused"].values():
                refusals[str(code)] += 1
            for feature in result["features"]:
                feature_total[feature] += 1
                if result["refused"]:
                    feature_refused[feature] += 1
            if result["failures"]:
                failing_modules += 1
                seen_here = set()
                for sig, text in result["failures"]:
                    if sig in seen_here:
                        continue
                    seen_here.add(sig)
                    buckets[sig] += 1
                    first_draws.setdefault(sig, result["draws"])
                    print(f"FAILURE seed {result['seed']} [{sig}] {text.splitlines()[0][:300]}", flush=True)
                    folder = out / _slug(sig)
                    if buckets[sig] <= MAX_FILES_PER_BUCKET:
                        folder.mkdir(parents=True, exist_ok=True)
                        stem = folder / f"seed_{result['seed']}"
                        stem.with_suffix(".py").write_text(result["source"])
                        stem.with_suffix(".rewritten.py").write_text(result["output"] or "")
                        if result.get("reference"):
                            stem.with_suffix(".reference.py").write_text(result["reference"])
                        report = "\n\n".join(f"[{s}]\n{t}" for s, t in result["failures"])
                        stem.with_suffix(".txt").write_text(f"{report}\n\ndraws = {result['draws']!r}\n")
            if time.time() - last >= args.every:
                last = time.time()
                progress()
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        pool.terminate()
    else:
        pool.close()
    pool.join()
    progress(final=True)
    import inliner

    print(f"engine: {inliner.__file__}", flush=True)

    shrunk = {}
    if args.shrink and first_draws and not args.dumps:
        _init_worker()
        from tests.support.fuzz_gen import generate_from_draws
        from tests.support.fuzz_oracle import shrink

        for sig, draws in first_draws.items():
            print(f"shrinking [{sig}] ...", flush=True)
            best = shrink(draws, sig, budget=400, avoid=avoid)
            gen = generate_from_draws(best, avoid)
            folder = out / _slug(sig)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "minimal.py").write_text(gen.source)
            (folder / "minimal.draws").write_text(repr(best) + "\n")
            shrunk[sig] = str(folder / "minimal.py")

    elapsed = time.time() - started
    summary = {
        "examples": examples,
        "seconds": round(elapsed, 1),
        "rate_per_second": round(examples / elapsed, 3) if elapsed else None,
        "flattened_modules": flattened,
        "refused_modules": refused_modules,
        "failing_modules": failing_modules,
        "generator_errors": generator_errors,
        "refusals_by_code": dict(refusals.most_common()),
        "failure_buckets": dict(buckets.most_common()),
        "refusal_rate_by_feature": {
            f: round(feature_refused[f] / feature_total[f], 3) for f in sorted(feature_total) if feature_total[f]
        },
        "feature_counts": dict(feature_total.most_common()),
        "avoided": sorted(avoid),
        "engine": args.engine_root or "work tree",
        "minimal": shrunk,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 1 if failing_modules else 0


if __name__ == "__main__":
    raise SystemExit(main())
