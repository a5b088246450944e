"""Differential fuzzing, bounded CI profile (issue 8).

- ``test_generated_functions_behave_like_originals``: hypothesis drives
  ``tests/support/fuzz_gen.py`` to write random but valid ``torch.autograd.Function``
  modules; ``tests/support/fuzz_oracle.py`` runs the engine and compares the original
  with the rewrite (harness scenarios, torch.func vjp / vjp-of-vjp, refusals left
  byte-identical and named, output compiles, second run changes nothing). Known
  engine bugs (``fuzz_gen.KNOWN_BUGS``, each pinned by an xfail in
  ``tests/fuzz/test_fuzz_regressions.py``) are steered around; delete the entry from
  ``KNOWN_BUGS`` once its bug is fixed.
- ``test_oracle_catches_an_ignored_backward``: the comparison would notice a runtime
  that differentiates through ``fwd`` instead of calling ``bwd``.
- ``test_arbitrary_python_*``: structure-only properties on hypothesmith programs.

Fixed seed (``derandomize=True``), no example database: CI is reproducible. The long
profile is ``scripts/fuzz_long.py``.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import inliner.runtime
from inliner import flatten
from tests.support.fuzz_gen import KNOWN_BUGS, DataChooser, generate, generate_from_seed
from tests.support.fuzz_oracle import check_generated

CI_AVOID = frozenset(KNOWN_BUGS)

_SETTINGS = dict(
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)

pytestmark = pytest.mark.filterwarnings("ignore")


def _report(gen, outcome) -> str:
    failures = "\n\n".join(outcome.failures)
    return f"{failures}\n\n--- generated module ---\n{gen.source}\n--- rewrite ---\n{outcome.output}"


@settings(max_examples=1200, **_SETTINGS)
@given(st.data())
def test_generated_functions_behave_like_originals(data):
    gen = generate(DataChooser(data), CI_AVOID)
    outcome = check_generated(gen)
    assert not outcome.failures, _report(gen, outcome)


def _differentiate_through_fwd(fwd, bwd, *, name, **spec):
    """A deliberately wrong runtime: ignores bwd and lets autograd trace fwd."""

    def flat(*args, **kwargs):
        if spec.get("fwd_needs_input_grad"):
            kwargs["needs_input_grad"] = tuple(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
        return fwd(*args, **kwargs)[0]

    flat.apply = flat
    return flat


def test_oracle_catches_a_wrong_compile_kind(monkeypatch):
    """An engine that calls every Function traceable is caught on the generated side effects."""
    import inliner.engine.analysis.compile_context
    from inliner.engine.analysis.compile_kind import CompileKind

    monkeypatch.setattr(inliner.engine.analysis.compile_context, "classify", lambda *args, **kwargs: CompileKind())
    for seed in range(60):
        gen = generate_from_seed(seed, CI_AVOID)
        if all(kind == "traceable" for kind, _ in gen.compile_kinds.values()):
            continue
        outcome = check_generated(gen, func=False)
        if any(name in outcome.flattened and kind != "traceable" for name, (kind, _) in gen.compile_kinds.items()):
            assert "compile-kind-differs" in outcome.kinds, outcome.failures
            return
    raise AssertionError("no generated module with a non-traceable Function in 60 seeds")


def test_oracle_catches_an_ignored_backward(monkeypatch):
    """Every generated backward is deliberately wrong, so skipping it must show up."""
    checked = 0
    for seed in range(40):
        gen = generate_from_seed(seed, CI_AVOID)
        with monkeypatch.context() as patch:
            honest = check_generated(gen, func=False)
            if not honest.flattened or honest.failures:
                continue
            patch.setattr(inliner.runtime, "custom_vjp", _differentiate_through_fwd)
            broken = check_generated(gen, func=False)
        checked += 1
        assert any(f.startswith("behaviour-differs") for f in broken.failures), gen.source
        if checked == 12:
            break
    assert checked == 12, "too few generated modules were flattened"


@pytest.mark.engine_bug
def test_oracle_reports_an_engine_internal_error(monkeypatch):
    """flatten does not raise: an engine bug is an INL002 refusal, which the oracle must not take for a refusal."""
    import inliner.engine.function_class.lower_class
    from tests.support.fuzz_oracle import check, signature

    real = inliner.engine.function_class.lower_class.lower_function_class

    def lowering(node, **kwargs):
        if node.name.value == "Twice":
            raise KeyError("boom")
        return real(node, **kwargs)

    monkeypatch.setattr(inliner.engine.function_class.lower_class, "lower_function_class", lowering)
    outcome = check(FUNCTION, ["Twice"], func=False)
    assert [signature(f) for f in outcome.failures] == ["engine-raised:KeyError"]


# -- structure-only properties on arbitrary Python --------------------------------------

try:
    import hypothesmith
except ImportError:  # pragma: no cover - the behavioural tests above still run
    hypothesmith = None

needs_hypothesmith = pytest.mark.skipif(hypothesmith is None, reason="pip install hypothesmith")


def _programs():
    return hypothesmith.from_grammar() if hypothesmith is not None else st.just("pass\n")


def _flatten_quietly(source: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return flatten(source, path="arbitrary.py")


@needs_hypothesmith
@settings(max_examples=300, **_SETTINGS)
@given(_programs())
def test_arbitrary_python_without_functions_is_byte_identical(source):
    # The comment defeats the cheap textual pre-filter, so the file is really parsed.
    source = "# autograd Function\n" + source
    result = _flatten_quietly(source)
    assert result.source == source
    assert not result.changed and not result.flattened
    assert _flatten_quietly(result.source).source == result.source


FUNCTION = """\
import torch


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * 3


"""


@needs_hypothesmith
@settings(max_examples=100, **_SETTINGS)
@given(_programs(), st.booleans())
def test_arbitrary_python_around_a_function_never_breaks(source, before):
    """Random statements next to a Function: no exception, output compiles, second run is a no-op."""
    text = source + "\n\n" + FUNCTION if before else FUNCTION + source
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(text, "<joined>", "exec")
        except SyntaxError:
            return  # e.g. a `from __future__` import that is no longer first
    result = _flatten_quietly(text)
    if not result.flattened:
        assert result.source == text
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compile(result.source, "<rewritten>", "exec")
    assert _flatten_quietly(result.source).source == result.source


def _split_bwd_at_trace_time(grads, ins, saved, numbers, key):
    """A deliberately wrong split path: a side-effecting bwd traced into the graph (its
    effects run once, when AOTAutograd traces it) instead of the opaque op run each backward."""
    from inliner.runtime import _split

    return _split._run_bwd(key, grads, saved, numbers)


def _first_compiled_seed(feature_prefix: str) -> int:
    for seed in range(200):
        if any(f.startswith(feature_prefix) for f in generate_from_seed(seed, CI_AVOID).features):
            return seed
    raise AssertionError(f"no {feature_prefix} module in 200 seeds")


def test_oracle_catches_a_split_backward_run_at_trace_time(monkeypatch):
    """Eager is untouched by the break, so only the compiled comparison can see it."""
    from inliner.runtime import _split

    gen = generate_from_seed(_first_compiled_seed("flow_numpy_bwd_counter"), CI_AVOID)
    assert not check_generated(gen, func=False, compiled=True).failures
    monkeypatch.setattr(_split, "call_bwd", _split_bwd_at_trace_time)
    broken = check_generated(gen, func=False, compiled=True)
    assert "compiled-differs[flow]" in broken.kinds, broken.failures


def test_oracle_catches_a_wrong_split_gradient(monkeypatch):
    from inliner.runtime import _split

    real = _split._run_bwd

    def doubled(*args):
        return [None if g is None else g * 2 for g in real(*args)]

    gen = generate_from_seed(_first_compiled_seed("flow_callable"), CI_AVOID)
    monkeypatch.setattr(_split, "_run_bwd", doubled)
    broken = check_generated(gen, func=False, compiled=True)
    assert "compiled-differs[flow]" in broken.kinds, broken.failures
    assert not any(f.startswith("behaviour-differs") for f in broken.failures), "eager must not see it"
