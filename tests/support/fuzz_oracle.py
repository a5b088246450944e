"""The differential oracle for generated modules (see ``tests/support/fuzz_gen.py``).

``check(source, classes, probes)`` runs the engine once and returns an ``Outcome``:
the classes flattened / refused (with their codes) and a list of ``failures``, each
a short text naming what differed. A failure is any of:

- the engine raised, reported a parse error, or left a generated Function neither
  flattened nor refused;
- a refused class whose text is not kept byte-for-byte, or with no diagnostic naming
  it; a file with nothing flattened that is not byte-identical;
- the output does not compile, or a second engine run changes it;
- any harness-observable difference between the original and the rewrite (outputs,
  dtypes, ``requires_grad``, view/identity relations, backward node names,
  gradients under seeded cotangents, errors and their messages; scenarios cover
  version-counter errors, double backward, a second backward, ``no_grad``,
  keywords, omitted defaults and autocast);
- ``torch.func.vjp`` (and vjp-of-vjp where the backward is differentiable) of the
  rewrite disagreeing with eager autograd of the original on a probe function; for a
  keyword probe (``Probe.errors_match``), also an error of the eager original (keyword
  binding, gradient count) that the rewrite does not raise the same under torch.func.
"""

from __future__ import annotations

import ast
import re
import traceback
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from inliner.engine import flatten
from inliner.engine.codes import INTERNAL_CODES, Code
from tests.support import fuzz_compiled
from tests.support.golden import side_effects
from tests.support.harness import assert_same, load_module, run_all_safe


@dataclass
class Outcome:
    failures: list[str] = field(default_factory=list)
    flattened: tuple[str, ...] = ()
    refused: dict[str, str] = field(default_factory=dict)  # class -> diagnostic code
    output: str = ""

    @property
    def kinds(self) -> set[str]:
        return {f.split(":", 1)[0] for f in self.failures}


def _class_segment(source: str, name: str) -> str | None:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return ast.get_source_segment(source, node)
    return None


def _first_difference(original, rewritten, where: str) -> str | None:
    try:
        assert_same(original, rewritten, where)
    except AssertionError as exc:
        text = str(exc)
        return text if len(text) < 600 else text[:600] + "..."
    return None


def check(
    source: str,
    classes: Sequence[str],
    probes: Sequence = (),
    *,
    func: bool = True,
    compile_kinds: dict[str, tuple[str, str]] | None = None,
    compiled: bool | None = None,
) -> Outcome:
    """``compiled``: run the compiled comparison (tests/support/fuzz_compiled.py); None
    leaves it to that module's deterministic share."""
    outcome = Outcome()
    result = flatten(source, path="fuzz_case.py")  # never raises: an engine bug is an INL002 diagnostic
    outcome.output = result.source
    outcome.flattened = tuple(result.flattened)
    internal = [d.format() for d in result.diagnostics if d.code in INTERNAL_CODES]
    outcome.failures.extend(f"engine-raised: {text}" for text in internal)
    if result.error:
        if not internal:
            outcome.failures.append(f"engine-error: {result.error}")
        return outcome
    for name in result.refused:
        codes = [d.code for d in result.diagnostics if d.name == name and d.code != "INL001" and name in d.message]
        outcome.refused[name] = codes[0] if codes else "?"
        if not codes:
            outcome.failures.append(f"refusal-without-diagnostic: {name}")
        segment = _class_segment(source, name)
        if segment is None or segment not in result.source:
            outcome.failures.append(f"refused-class-changed: {name}")
    for name in classes:
        if name not in result.flattened and name not in result.refused:
            outcome.failures.append(f"class-not-reported: {name} neither flattened nor refused")
    outcome.failures.extend(_compile_kind_failures(result, compile_kinds or {}))
    if not result.flattened:
        if result.source != source or result.changed:
            outcome.failures.append("unchanged-file-differs: nothing flattened but the text changed")
        return outcome
    try:
        compile(result.source, "<rewritten>", "exec")
    except SyntaxError as exc:
        outcome.failures.append(f"output-does-not-compile: {exc}")
        return outcome
    again = flatten(result.source, path="fuzz_case.py")
    if again.source != result.source:
        outcome.failures.append("not-idempotent: a second engine run changed the output")
    outcome.failures.extend(
        f"engine-raised-on-output: {d.format()}" for d in again.diagnostics if d.code == Code.INTERNAL_ERROR
    )

    # -- execute both ---------------------------------------------------------
    original_mod = rewritten_mod = None
    errors = []
    for label, text in (("original", source), ("rewritten", result.source)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mod = load_module(text, f"fuzz_{label}")
        except Exception as exc:
            errors.append((label, type(exc).__name__, str(exc)))
            mod = None
        if label == "original":
            original_mod = mod
        else:
            rewritten_mod = mod
    if errors:
        if len(errors) == 1 or errors[0][1:] != errors[1][1:]:
            outcome.failures.append(f"import-differs: {errors}")
        return outcome
    original_runs = run_all_safe(original_mod)
    rewritten_runs = run_all_safe(rewritten_mod)
    for scenario in original_runs:
        diff = _first_difference(original_runs[scenario], rewritten_runs.get(scenario), scenario)
        if diff is not None:
            outcome.failures.append(f"behaviour-differs[{scenario}]: {diff}")
    logs = [side_effects(m) for m in (original_mod, rewritten_mod)]
    if logs[0] is not None and logs[1] is not None:
        diff = _first_difference(logs[0][1](), logs[1][1](), "side_effect_log()")
        if diff is not None:
            outcome.failures.append(f"side-effects-differ: {diff}")
    if compiled or (compiled is None and fuzz_compiled.takes_compiled(source)):
        outcome.failures.extend(fuzz_compiled.compiled_failures(original_mod, rewritten_mod, result.source))
    if not torch.is_grad_enabled():  # what ran left grad mode off: every later case would differ
        torch.set_grad_enabled(True)
        outcome.failures.append("grad-mode-left-off: grad mode was off after the runs")
    if func and not result.refused:  # a refused class stays a ctx-style Function, which torch.func refuses
        for probe in probes:
            if not probe.func_ok:
                continue
            for problem in func_check(original_mod, rewritten_mod, probe):
                outcome.failures.append(f"func-differs[{probe.name}]: {problem}")
    return outcome


# -- torch.func against eager autograd ---------------------------------------------


def _zeros_for_none(grads, like):
    return [torch.zeros_like(p) if g is None else g.detach() for g, p in zip(grads, like)]


def _eager(fn, primals, cots, cots2, second: bool):
    """Eager autograd of ``fn``: (outputs, first-order grads, second-order grads or None)."""
    leaves = [p.clone().requires_grad_() for p in primals]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = fn(*leaves)
        pairs = [(o, c) for o, c in zip(outs, cots) if o.requires_grad]
        if not pairs:
            zeros = [torch.zeros_like(p) for p in primals]
            return [o.detach() for o in outs], zeros, (zeros if second else None)
        grads = torch.autograd.grad(
            [o for o, _ in pairs], leaves, [c for _, c in pairs], allow_unused=True, create_graph=second
        )
        first = _zeros_for_none(grads, primals)
        second_grads = None
        if second:
            pairs2 = [(g, c) for g, c in zip(grads, cots2) if g is not None and g.requires_grad]
            if pairs2:
                g2 = torch.autograd.grad([g for g, _ in pairs2], leaves, [c for _, c in pairs2], allow_unused=True)
                second_grads = _zeros_for_none(g2, primals)
            else:
                second_grads = [torch.zeros_like(p) for p in primals]
    return [o.detach() for o in outs], first, second_grads


def _functional(fn, primals, cots, cots2, second: bool):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs, vjp_fn = torch.func.vjp(fn, *primals)
        first = list(vjp_fn(tuple(cots)))
        second_grads = None
        if second:

            def first_order(*p):
                _, inner = torch.func.vjp(fn, *p)
                return inner(tuple(cots))

            _, vjp2 = torch.func.vjp(first_order, *primals)
            second_grads = list(vjp2(tuple(cots2)))
    return [o.detach() for o in outs], [g.detach() for g in first], second_grads


def func_check(original_mod, rewritten_mod, probe) -> list[str]:
    problems: list[str] = []
    generator = torch.Generator().manual_seed(7)
    primals = [torch.randn(probe.shape, generator=generator) for _ in range(probe.n_tensors)]
    fn_orig = getattr(original_mod, probe.name)
    fn_new = getattr(rewritten_mod, probe.name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shapes_out = fn_orig(*[p.clone().requires_grad_() for p in primals])
    except Exception as exc:
        if probe.errors_match:
            problems.extend(_same_error_under_func(fn_new, primals, exc))
        return problems  # the original raises on its own; the harness compares that
    if len({id(o) for o in shapes_out}) < len(shapes_out):
        # the same tensor returned twice: eager autograd routes its gradient to the last
        # slot only (docs/semantics.md §15), torch.func to both; not a property of the rewrite
        return problems
    cots = [torch.randn(o.shape, generator=generator, dtype=o.dtype) for o in shapes_out]
    cots2 = [torch.randn(probe.shape, generator=generator) for _ in primals]

    expected_error = None
    try:
        expected = _eager(fn_orig, primals, cots, cots2, probe.second_order)
    except Exception as exc:
        expected_error = f"{type(exc).__name__}: {exc}"
    try:
        got = _functional(fn_new, primals, cots, cots2, probe.second_order and expected_error is None)
    except Exception as exc:
        if expected_error is None:
            problems.append(
                f"RAISES {type(exc).__name__}: {str(exc)[:300]} (torch.func on the rewrite; eager original ran)"
            )
        elif probe.errors_match:
            problems.extend(_same_backward_error(fn_orig, primals, cots, cots2, exc))
        return problems
    if expected_error is not None:
        # eager original fails (e.g. second order through once_differentiable): retry first order only
        try:
            expected = _eager(fn_orig, primals, cots, cots2, False)
        except Exception:
            return problems
        got = (got[0], got[1], None)
    labels = ("outputs", "vjp", "vjp-of-vjp")
    for label, e, g in zip(labels, expected, got):
        if e is None or g is None:
            continue
        diff = _first_difference(list(e), list(g), label)
        if diff is not None:
            problems.append(diff)
    return problems


def _error_text(exc: BaseException) -> str:
    # torch.func names a Function's backward node <Name>GeneratedBackward, eager <Name>Backward
    return f"{type(exc).__name__}: {exc}".replace("GeneratedBackward", "Backward")


def _same_error(got: BaseException, expected: BaseException) -> list[str]:
    if _error_text(got) == _error_text(expected):
        return []
    eager = _error_text(expected)[:300]
    return [f"ERROR {_error_text(got)[:300]} (torch.func on the rewrite; eager original: {eager})"]


def _same_error_under_func(fn_new, primals, expected: BaseException) -> list[str]:
    """The eager original raised calling the Function (keyword binding, forward): the
    rewrite must raise the same under torch.func, not torch.func's own error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.func.vjp(fn_new, *primals)
    except Exception as exc:
        return _same_error(exc, expected)
    return [f"NO ERROR under torch.func on the rewrite (eager original: {_error_text(expected)[:300]})"]


def _same_backward_error(fn_orig, primals, cots, cots2, got: BaseException) -> list[str]:
    """torch.func's first-order vjp of the rewrite raised and eager autograd of the original
    raised too (maybe only at second order): first order must raise the same."""
    try:
        _eager(fn_orig, primals, cots, cots2, False)
    except Exception as exc:
        return _same_error(got, exc)
    return [f"RAISES {_error_text(got)[:300]} (torch.func on the rewrite; eager original ran at first order)"]


# -- signatures and shrinking (used by scripts/fuzz_long.py) --------------------------


def signature(failure: str) -> str:
    """A coarse bucket for a failure: its kind, with the scenario's flag suffix dropped."""
    kind = failure.split(":", 1)[0]
    for suffix in ("_true]", "_false]"):
        kind = kind.replace(suffix, "]")
    if kind.startswith("func-differs") and ": RAISES " in failure:
        message = failure.split(": RAISES ", 1)[1]
        return "func-raises:" + re.sub(r"[^A-Za-z ]", "", message)[:60].strip()
    if kind.startswith("func-differs") and (": ERROR " in failure or ": NO ERROR " in failure):
        message = failure.split(": ", 1)[1]
        return "func-error:" + re.sub(r"[^A-Za-z ]", "", message)[:60].strip()
    if kind == "engine-raised" or kind == "engine-raised-on-output":
        names = re.findall(r"internal error \((\w+): ", failure)  # the INL002 message names the exception
        kind += ":" + (names[-1] if names else "?")
    return kind


def check_generated(gen, *, func: bool = True, compiled: bool | None = None) -> Outcome:
    return check(
        gen.source,
        gen.classes,
        gen.probes,
        func=func,
        compile_kinds=getattr(gen, "compile_kinds", None),
        compiled=compiled,
    )


_RANK = {"traceable": 0, "opaque": 1, "side_effecting": 2}


def _compile_kind_failures(result, expected: dict[str, tuple[str, str]]) -> list[str]:
    """The engine's kind (and the emitted ``custom_vjp`` keywords) for each flattened class
    must be the one the generator built."""
    failures = []
    decided = dict(result.compile_kinds)
    emitted = _emitted_kinds(result.source) if result.flattened else {}
    records = {name for name, keywords in emitted.items() if keywords.pop("ctx_record", False)}
    for name, (kind, reason) in expected.items():
        if name not in result.flattened:
            continue
        got = decided.get(name)
        if got is not None and _RANK[got.kind] > _RANK[kind]:
            # more conservative than built (a ctx record's state, a kept class's own helpers, a
            # replayed wrapper): an eager island, which is always the original's behaviour
            continue
        if got is not None and got.kind == kind and name in records:
            # a ctx record: backward's writes to it are effects the generator does not model,
            # and the engine may name one of those first; the kind is what must agree
            pass
        elif got is None or (got.kind, got.reason) != (kind, reason):
            failures.append(
                f"compile-kind-differs: {name}: built {(kind, reason)}, engine {got and (got.kind, got.reason)}"
            )
            continue
        wanted = {} if kind == "traceable" else _kind_keywords(got)
        if emitted.get(name) != wanted:
            failures.append(f"compile-kind-not-emitted: {name}: {emitted.get(name)} instead of {wanted}")
    return failures


def _kind_keywords(kind: Any) -> dict[str, str]:
    """The keywords the emitter gives a kind: the forward's as ``compile_kind``, the
    backward's apart where it differs (not after a side-effecting forward, unless its
    effects are writes into its arguments alone, which may take the split path)."""
    forward, backward = kind.part("forward"), kind.part("backward")
    keywords = {}
    if forward.kind != "traceable":
        keywords.update(compile_kind=forward.kind, compile_reason=forward.reason)
    if (forward.kind != "side_effecting" or getattr(forward, "argument_writes", ())) and backward.kind != forward.kind:
        keywords["backward_kind"] = backward.kind
        if backward.kind != "traceable":
            keywords["backward_reason"] = backward.reason
    return keywords


def _emitted_kinds(source: str) -> dict[str, dict[str, str]]:
    out = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "custom_vjp":
            keywords = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
            out[keywords.get("name")] = {
                k: v
                for k, v in keywords.items()
                if k in ("compile_kind", "compile_reason", "backward_kind", "backward_reason", "ctx_record")
            }
    return out


def shrink(
    draws: list[int], wanted: str, *, budget: int = 400, log=None, avoid: frozenset[str] = frozenset()
) -> list[int]:
    """Greedy minimisation of a draw list so that the generated module still fails with ``wanted``.

    Draws read as 0 past the end and 0 is always the simplest choice, so the passes
    are: cut the tail, zero single draws, lower them, delete them.
    """
    from tests.support.fuzz_gen import generate_from_draws

    runs = [0]

    def fails(candidate: list[int]) -> bool:
        if runs[0] >= budget:
            return False
        runs[0] += 1
        gen = generate_from_draws(candidate, avoid)
        compiled = True if wanted.startswith("compiled") else None  # the share moves with the text
        outcome = check_generated(gen, func=wanted.startswith("func-"), compiled=compiled)
        return any(signature(f) == wanted for f in outcome.failures)

    best = list(draws)

    def key(c: list[int]) -> tuple:
        return (sum(1 for d in c if d), len(c), sum(c))

    def accept(candidate: list[int]) -> bool:
        return key(candidate) < key(best) and fails(candidate)

    improved = True
    while improved and runs[0] < budget:
        improved = False
        # cut the tail (halving)
        cut = len(best) // 2
        while cut >= 1 and runs[0] < budget:
            candidate = best[: len(best) - cut]
            if accept(candidate):
                best = candidate
                improved = True
            else:
                cut //= 2
        for i in range(len(best)):
            if runs[0] >= budget:
                break
            if i >= len(best) or best[i] == 0:
                continue
            candidate = best[:i] + [0] + best[i + 1 :]
            if accept(candidate):
                best = candidate
                improved = True
                continue
            if best[i] > 1:
                candidate = best[:i] + [best[i] // 2] + best[i + 1 :]
                if accept(candidate):
                    best = candidate
                    improved = True
                    continue
            candidate = best[:i] + best[i + 1 :]
            if accept(candidate):
                best = candidate
                improved = True
        while best and best[-1] == 0:
            best.pop()
        if log:
            log(f"shrink: {runs[0]} runs, {len(best)} draws, {sum(1 for d in best if d)} non-zero")
    return best


# -- dumped graphs of chained op calls (see tests/support/fuzz_gen_dumps.py) ------------------


def check_dump(gen) -> Outcome:
    """Flatten a generated dump and compare it with the eager Functions it stands for.

    Every call must be flattened (the generator only writes shapes the engine supports),
    no op call or nested body class may be left, the output must compile and a second
    run must change nothing; then every harness scenario of the rewrite must agree with
    the reference, backward node names included (the dump's comments name the Functions).
    """
    outcome = Outcome()
    try:
        result = flatten(gen.source, path="fuzz_dump.py")
    except Exception:
        outcome.failures.append("engine-raised: " + traceback.format_exc(limit=3))
        return outcome
    outcome.output = result.source
    outcome.flattened = tuple(result.flattened)
    if result.error:
        outcome.failures.append(f"engine-error: {result.error}")
        return outcome
    for d in result.diagnostics:
        if d.code != "INL001":
            outcome.refused[d.name or "?"] = d.code
            outcome.failures.append(f"call-refused: {d.format()}")
    if len(result.flattened) != gen.n_calls:
        outcome.failures.append(f"calls-not-flattened: {len(result.flattened)} of {gen.n_calls}")
    if "autograd_function_apply(" in result.source or "fwd_body_" in result.source:
        outcome.failures.append("op-left: the rewrite still calls the op or holds a body class")
    try:
        compile(result.source, "<rewritten>", "exec")
    except SyntaxError as exc:
        outcome.failures.append(f"output-does-not-compile: {exc}")
        return outcome
    try:
        if flatten(result.source, path="fuzz_dump.py").source != result.source:
            outcome.failures.append("not-idempotent: a second engine run changed the output")
    except Exception:
        outcome.failures.append("engine-raised-on-output: " + traceback.format_exc(limit=3))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reference = load_module(gen.reference, "fuzz_reference")
            rewritten = load_module(result.source, "fuzz_dump_rewritten")
    except Exception as exc:
        outcome.failures.append(f"import-failed: {type(exc).__name__}: {exc}")
        return outcome
    expected = run_all_safe(reference)
    got = run_all_safe(rewritten)
    for scenario in expected:
        diff = _first_difference(expected[scenario], got.get(scenario), scenario)
        if diff is not None:
            outcome.failures.append(f"behaviour-differs[{scenario}]: {diff}")
    return outcome
