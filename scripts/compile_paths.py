"""Census of compile paths: which path ``torch.compile`` gives each flattened Function.

Runs the engine over the Python files under the given directories (default: the
installed torch package), reads the keywords of every emitted ``custom_vjp(...)`` call,
and asks the runtime's own choice (``inliner.runtime._dynamo.compile_path``) what dynamo
will make of it: *graph*, *split* or *island*. Prints the counts per path and the
islands by reason. Nothing is imported from the scanned files.

Usage: python scripts/compile_paths.py [DIR ...] [--list]
"""

from __future__ import annotations

import argparse
import ast
import collections
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from inliner import flatten

_MARKERS = ("autograd.Function", "Function)", "autograd_function_apply")


def spec_of(call: ast.Call) -> types.SimpleNamespace:
    """What ``compile_path`` reads of a ``Spec``, from the emitted keywords."""
    keywords = {k.arg: k.value for k in call.keywords if k.arg}

    def literal(name: str, default: object) -> object:
        node = keywords.get(name)
        if node is None:
            return default
        try:
            return ast.literal_eval(node)
        except ValueError:
            return "<code>"

    kind = literal("compile_kind", "traceable")
    backward_nones = literal("backward_nones", None)
    return types.SimpleNamespace(
        compile_kind=kind,
        compile_reason=literal("compile_reason", None),
        backward_kind=literal("backward_kind", kind),
        backward_nones=None if backward_nones is None else frozenset(backward_nones),
        dirty=literal("dirty_idx", ()),
        materialize_grads=literal("materialize_grads", True),
        jvp=keywords.get("jvp"),
        record=literal("ctx_record", False),
        decorated=("forward_decorators" in keywords or "backward_decorators" in keywords) or None,
        saved_on_demand=literal("saved_on_demand", False),
        fwd_needs_input_grad=literal("fwd_needs_input_grad", False),
        fill_defaults=literal("fill_defaults", False),
        name=literal("name", "?"),
    )


def paths_in(source: str, path: str) -> list[tuple[str, str, str]]:
    """(name, path, why an island) per flattened Function of one file."""
    from inliner.runtime._dynamo import compile_path

    result = flatten(source, path=path)
    if not result.flattened:
        return []
    found = []
    for node in ast.walk(ast.parse(result.source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "").endswith("custom_vjp"):
            spec = spec_of(node)
            chosen, fallback = compile_path(spec)
            why = ""
            if chosen == "island":
                why = fallback or _engine_reason(spec)
            found.append((spec.name, chosen, why))
    return found


def _engine_reason(spec: types.SimpleNamespace) -> str:
    if spec.compile_kind == "side_effecting":
        return "forward side effect"
    if spec.backward_kind != "traceable" and spec.backward_nones is None:
        return "backward not traceable, None gradients not known statically"
    return "engine kind"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*")
    parser.add_argument("--list", action="store_true", help="print every Function with its path")
    args = parser.parse_args(argv)
    import torch

    roots = [Path(d) for d in args.dirs] or [Path(torch.__file__).parent]
    counts: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    for root in roots:
        for file in sorted(root.rglob("*.py")):
            try:
                source = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if not any(m in source for m in _MARKERS):
                continue
            try:
                found = paths_in(source, str(file))
            except Exception as exc:  # an engine failure is reported, not fatal
                print(f"{file}: engine failed: {exc!r}", file=sys.stderr)
                continue
            for name, chosen, why in found:
                counts[chosen] += 1
                if why:
                    reasons[why.split(" (")[0]] += 1
                if args.list:
                    print(f"{file}: {name}: {chosen}{' (' + why + ')' if why else ''}")
    total = sum(counts.values())
    print(f"{total} flattened: " + ", ".join(f"{p} {counts[p]}" for p in ("graph", "split", "island")))
    for why, n in reasons.most_common():
        print(f"  island: {n:4}  {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
