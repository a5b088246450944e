"""Run the tracer matrix (original vs rewritten) over the golden cases and print it as Markdown.

Rows are tracers, columns the original and the rewritten code; a cell counts the
drivers (tests/support/tracer_cases.py: one per golden case, a few cases have two) that
pass, and names the commonest failure reasons. The thunder rows run in this
interpreter when lightning-thunder imports, else in ``--thunder-python`` (the venv
that scripts/thunder_env.sh builds), else they are reported as not run.

Usage:
  python scripts/tracer_matrix.py [--thunder-python /tmp/thunder-venv/bin/python]
                                  [--rows compile_capture,export] [--update-docs]
  python scripts/tracer_matrix.py --json --rows thunder_jit,thunderfx   (machine-readable)
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: the page the matrix lives in, between START and END
PAGE = ROOT / "docs" / "tracers.md"
START, END = "<!-- tracer-matrix:start -->", "<!-- tracer-matrix:end -->"

ROW_LABELS = {
    "eager": "eager (outputs and gradients)",
    "compile_capture": "`torch.compile`, capturing backend: no `torch.ops.higher_order`, one call node",
    "compile_fullgraph": '`torch.compile(backend="aot_eager", fullgraph=True)`: outputs, gradients',
    "compile_aot_eager": '`torch.compile(backend="aot_eager")`, three calls: outputs, gradients, side-effect log',
    "compile_inductor": "`torch.compile` (inductor), three calls: outputs, gradients, side-effect log",
    "func_grad": "`torch.func.grad`",
    "func_vjp": "`torch.func.vjp`",
    "func_jacrev": "`torch.func.jacrev`",
    "vmap": "`torch.vmap`: values and per-sample gradients (`vmap(grad)`)",
    "fx_symbolic_trace": "`torch.fx.symbolic_trace`: leaf node, custom backward kept",
    "export": "`torch.export.export` (non-strict)",
    "export_strict": "`torch.export.export(strict=True)`",
    "thunder_jit": "`thunder.jit`: gradients, forward spelled out, no `autograd_function_apply`",
    "thunderfx": "`thunderfx`: gradients, no `autograd_function_apply` reaches thunder",
}
# Why the rewrite fails where it does (measured; see the tests for the pinned reasons).
WHY = {
    ("fx_symbolic_trace", "amp_decorators/autocast"): "fx does not record the autocast context manager; not applicable",
    ("vmap", "mark_dirty"): "torch generates no vmap rule for a Function with `mark_dirty`",
    ("vmap", "hop_dump_dirty"): "same as `mark_dirty`",
    ("vmap", "list_and_nontensor_outputs/WithInt"): "vmap needs `out_dims=None` for an int output; not applicable",
    ("thunder_jit", "materialize_grads"): "thunder has no None gradients (an unused output's grad is zeros), so "
    "the flat callable refuses with a message instead of running a backward that tests `g is None`",
    **{
        (row, d): "thunder cannot make a dirtied input (possibly a view of a larger tensor) take the custom "
        "backward, so the flat callable refuses with a message"
        for row in ("thunder_jit", "thunderfx")
        for d in ("mark_dirty", "hop_dump_dirty")
    },
    ("thunder_jit", "amp_decorators/autocast"): "thunder cannot run the autocast context around the call",
    **{
        ("thunder_jit", d): "a trace takes tensors, numbers and other values thunder can make a proxy of: the "
        "flat callable refuses a module or a function with a message naming the Function (a dataclass is "
        "laid out flat; thunderfx runs these calls)"
        for d in (
            "compile_lambda_argument",
            "compile_module_argument/LinearOfModule",
            "compile_module_argument/RunModule",
        )
    },
    **{
        ("thunder_jit", d): "thunder runs a Python function only as a `torch.library` custom op with a fake "
        "implementation; thunder's error gets a note naming the Function (thunderfx runs these calls)"
        for d in ("compile_numpy_body", "compile_rejects_fake_tensors")
    },
    ("thunder_jit", "data_dependent_forward/ClipLarge"): "thunder traces one program for all inputs and has no "
    "data-dependent control flow; thunder's error gets a note naming the Function (thunderfx runs the call)",
    ("thunderfx", "list_and_nontensor_outputs/WithInt"): "a call returning an int: thunder's splitter fails on the "
    "region unpacking it",
    **{
        (row, "record_callable_on_ctx/Recompute"): "a checkpoint-style backward calls `requires_grad_` and "
        "`autograd.grad`, which torch.func forbids inside a transform and thunder does not implement"
        for row in ("func_grad", "func_jacrev", "vmap", "thunder_jit", "thunderfx")
    },
}
TORCH_ROWS = [r for r in ROW_LABELS if not r.startswith("thunder")]
THUNDER_ROWS = ["thunder_jit", "thunderfx"]


def _category(reason: str) -> str:
    """A short, stable label for a failure reason."""
    table = [
        ("runs eagerly under torch.compile", "an eager island: a graph break at the call, by design"),
        ("side-effect log after", "side effects differ from eager"),
        ("autograd_function_apply reaches thunder", "`autograd_function_apply` reaches thunder"),
        ("torch.ops.higher_order.autograd_function_apply", "graph holds `autograd_function_apply`"),
        ("must override the setup_context", "combined style rejected by torch.func"),
        ("does not have vmap support", "no vmap rule"),
        ("marked as dirty during the forward", "vmap: `mark_dirty` unsupported"),
        ("must only return Tensors", "vmap: a non-tensor output"),
        ("custom backward dropped", "custom backward dropped"),
        ("gradients differ", "wrong gradients"),
        ("outputs differ", "wrong outputs"),
        ("has 2 proxies but expected 1", "thunder 0.2.6 takes one-output Functions only"),
        ("autocast_exit", "thunder: autocast around a Function"),
        ("object has no attribute 'replace_name'", "thunder: a non-tensor output"),
        ("Trying to add the name grad_", "thunder: one tensor returned twice"),
        ("duplicate argument", "thunder: one tensor passed for two parameters"),
        ("is an object of type", "thunder: an object argument, refused by name"),
        ("casting a TensorProxy to a Python boolean", "thunder: a branch on a tensor's value"),
        ("automatic registration for numpy", "thunder: numpy in a body"),
        ("automatic registration for tolist", "thunder: `.tolist()` in a body"),
        ("duplicate tensor input", "dynamo: one tensor passed for two parameters"),
        ("Cycle detected in swap map", "thunder: in-place on an input"),
        ("UnboundLocalError", "thunder: a tensor kept as a ctx attribute"),
        ("AttributeError: mark_dirty", "thunder: no `ctx.mark_dirty`"),
        ("AttributeError: set_materialize_grads", "thunder: no `ctx.set_materialize_grads`"),
        ("AttributeError: mark_non_differentiable", "thunder: no `ctx.mark_non_differentiable`"),
        ("AttributeError: needs_input_grad", "thunder: no `ctx.needs_input_grad`"),
        ("AttributeError: exp", "thunder: setup_context style"),
        ("backward or vjp method", "thunder: `vjp` spelling"),
        ("Expected dtype thunder.dtypes.bfloat16", "thunder: autocast dtype"),
        ("KeyError: 'autograd_function_apply'", "thunder: `autograd_function_apply` KeyError"),
        ("BackendCompilerFailed", "thunder backend failed"),
        ("set_materialize_grads(False)", "thunder: no None grads, refused"),
        ("modifies an input in place (mark_dirty)", "thunder: `mark_dirty`, refused"),
        ("Placeholder node not found", "dynamo: placeholder error"),
        ("Observed exception", "dynamo: setup_context defaults not filled"),
        ("Length mismatch when unpacking", "dynamo: setup_context defaults not filled"),
        ("Unsupported custom vjp", "dynamo: `vjp` spelling"),
        ("context `mark_dirty`", "dynamo: `mark_dirty` unsupported"),
        ("Proxy object cannot be iterated", "fx: autocast region"),
        ("being transformed by a functorch transform", "torch.func: `requires_grad_` in backward"),
        ("Unknown attribute requires_grad_", "thunder: `requires_grad_` in backward"),
        ("is being overwritten this is not allowed", "thunder: a trace variable written twice"),
        ("AttributeError: save_for_forward", "thunder: no `ctx.save_for_forward`"),
        ("expected m1 and m2 to have the same dtype", "fx: autocast not recorded"),
        ("mark_dirty can only accept variables", "fx: `mark_dirty` on a proxy"),
        ("mark_non_differentiable only accepts variable", "fx: `mark_non_differentiable` on a proxy"),
    ]
    for needle, label in table:
        if needle in reason:
            return label
    text = re.sub(r"<[^>]*>", "", reason)
    return text.split(":")[0] + ": " + ":".join(text.split(":")[1:]).strip()[:50] if ":" in text else text[:60]


def collect(rows: list[str]) -> dict[str, dict[str, dict[str, dict]]]:
    """{row: {driver: {"original"|"rewritten": {"ok", "reason", "na"}}}}."""
    from tests.support import tracer_cases as tc

    results: dict[str, dict[str, dict[str, dict]]] = {}
    for row in rows:
        results[row] = {}
        for driver in sorted(tc.DRIVERS):
            cell = {}
            for side, rewritten in (("original", False), ("rewritten", True)):
                outcome = tc.run(row, driver, rewritten)
                cell[side] = {"ok": outcome.ok, "reason": outcome.reason, "na": outcome.na}
            results[row][driver] = cell
            print(f"  {row:18} {driver:36} {cell['original']['ok']!s:5} {cell['rewritten']['ok']!s:5}", file=sys.stderr)
    return results


def _cell(per_driver: dict[str, dict], side: str) -> str:
    outcomes = [v[side] for v in per_driver.values() if not v[side]["na"]]
    if not outcomes:
        return "n/a"
    passed = sum(o["ok"] for o in outcomes)
    text = f"{passed}/{len(outcomes)}"
    if passed == len(outcomes):
        return f"**{text}**"
    reasons = collections.Counter(_category(o["reason"]) for o in outcomes if not o["ok"])
    listed = "; ".join(f"{n}× {r}" for r, n in reasons.most_common(3))
    more = "" if len(reasons) <= 3 else "; …"
    return f"{text} (fails: {listed}{more})"


def render(results: dict, versions: dict[str, str], not_driven: dict[str, str]) -> str:
    lines = [
        "Measured by `python scripts/tracer_matrix.py` over the executable golden cases "
        f"(one driver per case, a few cases have two; {versions['drivers']} drivers). "
        "A cell counts the drivers that pass; the original column counts only drivers whose "
        "original is an `autograd.Function` (not a dumped `autograd_function_apply` graph). "
        f"torch rows: torch {versions['torch']}; thunder rows: {versions.get('thunder', 'not run')}. "
        "Each rewritten-column claim is a test: tests/tracers/test_tracers.py (torch rows, torch 2.13; on torch "
        "2.9.1, 37 of its rows fail, none on a wrong value: graph breaks where a ctx record or replayed "
        "decorators stay islands there, or where 2.9's original breaks too (a forward effect), the original's "
        "outcomes pinned for 2.13, errors exporting numpy-bodied records, object arguments and `@torch.compile` "
        "bodies, and torch messages worded differently) and tests/tracers/test_thunder.py (marker `thunder`; `bash scripts/thunder_env.sh` builds its "
        "venv). Regenerate with `python scripts/tracer_matrix.py --thunder-python /tmp/thunder-venv/bin/python "
        "--update-docs`.",
        "",
        "| tracer | original | rewritten |",
        "| --- | --- | --- |",
    ]
    for row, label in ROW_LABELS.items():
        if row not in results:
            lines.append(f"| {label} | not run | not run |")
            continue
        lines.append(f"| {label} | {_cell(results[row], 'original')} | {_cell(results[row], 'rewritten')} |")
    failures = [
        (row, driver, cell["rewritten"]["reason"])
        for row, per in results.items()
        for driver, cell in per.items()
        if not cell["rewritten"]["ok"]
    ]
    if failures:
        lines += [
            "",
            "Where the rewrite fails (each pinned with its measured reason in tests/tracers/test_tracers.py or "
            "tests/tracers/test_thunder.py; the original fails these too unless marked *original passes*):",
            "",
        ]
        for row, driver, reason in failures:
            cell = results[row][driver]["original"]
            note = " — *original passes*" if cell["ok"] else ("" if not cell["na"] else " — no Function original")
            why = WHY.get((row, driver), "")
            lines.append(f"- {row}, `{driver}`: {_category(reason)}{note}{'. ' + why if why else ''}")
    lines += _thunder_beside_original(results)
    if not_driven:
        lines += [
            "",
            f"Not traced ({len(not_driven)}): "
            + ", ".join(f"`{k}`" for k in sorted(not_driven))
            + " (left untouched by the engine, or no gradient to compare).",
        ]
    return "\n".join(lines) + "\n"


THUNDER_LABELS = {"thunder_jit": "`thunder.jit`", "thunderfx": "`thunderfx`"}


def _thunder_cell(outcome: dict) -> str:
    if outcome["na"]:
        return "n/a"
    return "runs" if outcome["ok"] else f"fails: {_category(outcome['reason'])}"


def _thunder_beside_original(results: dict) -> list[str]:
    """Per driver, thunder on the original beside thunder on the rewrite (the drivers where
    both run under every thunder row are counted, not listed): where the rewrite goes
    beyond thunder's own support for ``autograd.Function``."""
    rows = [r for r in THUNDER_ROWS if r in results]
    if not rows:
        return []
    lines = ["", "thunder on the original beside thunder on the rewrite:", ""]
    for row in rows:
        cells = [c for c in results[row].values() if not c["original"]["na"]]
        beyond = sum(not c["original"]["ok"] and c["rewritten"]["ok"] for c in cells)
        both = sum(c["original"]["ok"] and c["rewritten"]["ok"] for c in cells)
        neither = sum(not c["original"]["ok"] and not c["rewritten"]["ok"] for c in cells)
        worse = sum(c["original"]["ok"] and not c["rewritten"]["ok"] for c in cells)
        lines.append(
            f"- {THUNDER_LABELS[row]}: fails the original and runs the rewrite on {beyond} of {len(cells)} drivers "
            f"with a Function original; runs both on {both}; fails both on {neither}; runs only the original on {worse}."
        )
    header = " | ".join(f"{THUNDER_LABELS[r]} on the original | {THUNDER_LABELS[r]} on the rewrite" for r in rows)
    lines += ["", f"| driver | {header} |", "| --- |" + " --- | --- |" * len(rows)]
    drivers = sorted({d for r in rows for d in results[r]})
    listed = 0
    for driver in drivers:
        cells = [results[r].get(driver) for r in rows]
        if all(c is not None and c["original"]["ok"] and c["rewritten"]["ok"] for c in cells):
            continue
        listed += 1
        text = " | ".join(
            "not run | not run" if c is None else f"{_thunder_cell(c['original'])} | {_thunder_cell(c['rewritten'])}"
            for c in cells
        )
        lines.append(f"| `{driver}` | {text} |")
    lines += ["", f"The other {len(drivers) - listed} drivers run under every thunder row, original and rewrite."]
    return lines


def update_page(text: str, page: Path = PAGE) -> None:
    """Replace the matrix between the page's markers, leaving the rest of the page as it is."""
    old = page.read_text()
    start, end = old.index(START) + len(START), old.index(END)
    page.write_text(old[:start] + "\n" + text + old[end:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=",".join(TORCH_ROWS + THUNDER_ROWS))
    parser.add_argument("--thunder-python", help="a python with lightning-thunder, for the thunder rows")
    parser.add_argument("--json", action="store_true", help="print the raw results as JSON")
    parser.add_argument("--update-docs", action="store_true", help="write the matrix into docs/tracers.md")
    parser.add_argument("--save", help="also write the raw results (JSON) to this file")
    parser.add_argument("--load", help="render results saved with --save instead of running")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")

    import torch

    from tests.support import tracer_cases as tc

    rows = [r for r in args.rows.split(",") if r]
    versions = {"torch": torch.__version__, "drivers": str(len(tc.DRIVERS))}
    if args.load:
        saved = json.loads(Path(args.load).read_text())
        text = render(saved["results"], saved["versions"], tc.NOT_DRIVEN)
        print(text)
        if args.update_docs:
            update_page(text)
        return 0
    local = [r for r in rows if r not in THUNDER_ROWS or tc.thunder_available()]
    results = collect(local)
    thunder_wanted = [r for r in rows if r in THUNDER_ROWS and r not in local]
    if tc.thunder_available() and any(r in THUNDER_ROWS for r in rows):
        import thunder

        versions["thunder"] = f"lightning-thunder {thunder.__version__}, torch {torch.__version__}"
    elif thunder_wanted and args.thunder_python:
        proc = subprocess.run(
            [args.thunder_python, __file__, "--json", "--rows", ",".join(thunder_wanted)],
            capture_output=True,
            text=True,
            check=True,
        )
        remote = json.loads(proc.stdout.strip().splitlines()[-1])  # progress lines come first
        results.update(remote["results"])
        versions["thunder"] = remote["versions"]["thunder"]
    if args.save:
        Path(args.save).write_text(json.dumps({"results": results, "versions": versions}))
    if args.json:
        print(json.dumps({"results": results, "versions": versions}))
        return 0
    text = render(results, versions, tc.NOT_DRIVEN)
    print(text)
    if args.update_docs:
        update_page(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
