"""Per-case drivers for the tracer matrix (shared by tests/tracers/test_tracers.py and scripts/tracer_matrix.py).

A golden case's ``scenario_*()`` functions build their tensors and differentiate
eagerly, which is what tests/engine/test_golden.py needs. A tracer needs something else: a
pure function of tensors that it can capture, and the Functions it calls created
*outside* the traced region. A :class:`Driver` supplies that for one case:

- ``resolve(module, rewritten)`` returns the callables the case exercises, by name:
  ``Name.apply`` of the original class, or the flat callable of the rewrite (the
  default looks the names up at module level);
- ``inputs()`` builds the tensor arguments (seeded); those with ``requires_grad``
  are the ones whose gradients are compared;
- ``call(fns, *tensors)`` is the traced body: it calls the Functions through the
  same spelling the case uses (constants such as ``0.5`` are baked in).

Every rewritten case either has a driver or a reason in :data:`NOT_DRIVEN`, and
``flat_callables(module)`` lets the test check that a driver covers every flat
callable the rewrite defines at module level.

The outcome of one tracer row on one case and one side (original / rewritten) is an
:class:`Outcome`; the ``check_*`` functions below compute it and never raise for a
tracer failure (they record it), so the script can tabulate and the test can assert.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from inliner.runtime import _first_object_type
from tests.support import compile_checks
from tests.support.golden import GOLDEN
from tests.support.harness import load_module, scenarios

# --------------------------------------------------------------------------- drivers


def _by_name(*names: str) -> Callable[[Any, bool], dict[str, Callable]]:
    def resolve(module: Any, rewritten: bool) -> dict[str, Callable]:
        out = {}
        for name in names:
            obj = getattr(module, name)
            out[name] = obj if rewritten else obj.apply
        return out

    return resolve


def _randn(*shape: int, grad: bool = True) -> torch.Tensor:
    return torch.randn(*shape).requires_grad_(grad)


@dataclass(frozen=True)
class Driver:
    case: str
    resolve: Callable[[Any, bool], dict[str, Callable]]
    inputs: Callable[[], tuple]
    call: Callable[..., Any]
    # A case may have several drivers; ``label`` tells them apart ("case" or "case/label").
    label: str = ""
    # The rewrite's flat callables this driver exercises (by module-level name); checked
    # against the module so that a new Function in a case cannot go unnoticed.
    names: tuple[str, ...] = ()
    # In how many graph nodes each flat callable should appear under fx / dynamo.
    calls_per_trace: int = 1
    # Tolerance of the non-exact comparisons (compiled kernels may reorder float ops).
    rtol: float = 1e-5
    atol: float = 1e-6
    # The traced body reaches each Function as ``f[name].apply(...)`` through the module's
    # class: the original's, or the class a rewrite keeps (``runtime.FlatClass``), so the
    # tracer itself resolves ``Cls.apply``. ``resolve`` still gives the flat callables.
    via_class: bool = False
    # Whether the call passes objects (a module, a dataclass, a function) besides tensors.
    objects: bool = False

    @property
    def id(self) -> str:
        return f"{self.case}/{self.label}" if self.label else self.case


def _driver(case: str, names: tuple[str, ...], inputs: Callable[[], tuple], call: Callable, **kw: Any) -> Driver:
    return Driver(case=case, resolve=_by_name(*names), inputs=inputs, call=call, names=names, **kw)


def _nested_resolve(module: Any, rewritten: bool) -> dict[str, Callable]:
    # make()/other() return ``Pow.apply`` in the original and the flat callable in the rewrite.
    return {"make2": module.make(2), "other": module.other()}


def _autocast_mm(f: dict, a: torch.Tensor, b: torch.Tensor) -> Any:
    # custom_fwd(cast_inputs=float32) casts the bf16 input back and runs forward with
    # autocast off; custom_bwd replays that state in backward.
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return f["Mm"](a.bfloat16(), b)


DRIVERS: dict[str, Driver] = {
    d.id: d
    for d in [
        _driver("aliases_and_module", ("Clamp",), lambda: (_randn(4) * 1.5,), lambda f, x: f["Clamp"](x)),
        _driver(
            "amp_decorators",
            ("Mm",),
            lambda: (_randn(3, 3), _randn(3, 3)),
            lambda f, a, b: f["Mm"](a, b),
        ),
        _driver(
            "amp_decorators",
            ("Mm",),
            lambda: (_randn(3, 3), _randn(3, 3)),
            _autocast_mm,
            label="autocast",
            # inductor rounds the bf16 matmul differently (the same for original and rewrite)
            rtol=1e-2,
            atol=1e-2,
        ),
        _driver("attrs_and_rebinding", ("Scale",), lambda: (_randn(4),), lambda f, x: f["Scale"](x, 3.0)),
        # the same AMP decorators reached through module-level aliases (a partial, a plain name)
        _driver(
            "decorator_amp_aliases",
            ("Mm",),
            lambda: (_randn(3, 3), _randn(3, 3)),
            _autocast_mm,
            label="Mm",
            rtol=1e-2,
            atol=1e-2,
        ),
        _driver("decorator_amp_aliases", ("Scale",), lambda: (_randn(3),), lambda f, x: f["Scale"](x), label="Scale"),
        # an alias bound in each branch of an `if` to torch's custom_fwd (megatron-core's)
        _driver(
            "decorator_amp_aliases",
            ("Picked",),
            lambda: (_randn(3), _randn(3)),
            lambda f, x, w: f["Picked"](x, w),
            label="Picked",
        ),
        _driver(
            "basic_linear",
            ("MyLinear",),
            lambda: (_randn(3, 4), _randn(5, 4)),
            lambda f, x, w: f["MyLinear"](x, w, 0.5),
        ),
        _driver("defaults_and_kwargs", ("Affine",), lambda: (_randn(3),), lambda f, x: f["Affine"](x)),
        _driver("double_backward", ("Cube",), lambda: (_randn(3),), lambda f, x: f["Cube"](x)),
        _driver(
            "early_return_group",
            ("Maybe",),
            lambda: (_randn(3),),
            lambda f, x: (f["Maybe"](x, True), f["Maybe"](x, False)),
            calls_per_trace=2,
        ),
        _driver(
            "import_spellings",
            ("A", "B", "C", "D"),
            lambda: (_randn(3),),
            lambda f, x: f["A"](x) + f["B"](x) + f["C"](x) + f["D"](x),
        ),
        # mark_dirty needs a non-leaf input; the in-place add happens on x * 1.
        _driver("mark_dirty", ("AddOneInplace",), lambda: (_randn(3),), lambda f, x: f["AddOneInplace"](x * 1)),
        # Only the first output is used, so the second grad is None where materialize
        # is off: the custom backward's ``g2 is None`` branch is what must run.
        _driver("materialize_grads", ("TwoOut",), lambda: (_randn(3),), lambda f, x: f["TwoOut"](x)[0]),
        _driver("multi_output_nondiff", ("SortTop",), lambda: (_randn(5),), lambda f, x: f["SortTop"](x)),
        _driver(
            "needs_input_grad",
            ("Mul",),
            lambda: (_randn(3), _randn(3)),
            lambda f, a, b: f["Mul"](a, b),
        ),
        Driver(
            case="nested_in_function",
            resolve=_nested_resolve,
            inputs=lambda: (_randn(3),),
            call=lambda f, x: f["make2"](x) + f["other"](x),
        ),
        # made outside the traced call (tests/runtime/test_factory_decorators.py calls the
        # factory inside a compiled one)
        Driver(
            case="factory_decorators",
            resolve=lambda module, rewritten: {"Scale": module.make(2.0)},
            inputs=lambda: (_randn(3),),
            call=lambda f, x: f["Scale"](x),
            names=("Scale",),
        ),
        _driver("once_differentiable", ("Cube",), lambda: (_randn(3),), lambda f, x: f["Cube"](x)),
        # one tensor for several parameters: auto drivers would pass a copy per position
        _driver("repeated_inputs", ("Mul",), lambda: (_randn(3),), lambda f, x: f["Mul"](x, x), label="Mul"),
        _driver(
            "repeated_inputs",
            ("Attend",),
            lambda: (_randn(4, 3),),
            lambda f, x: f["Attend"](x, x, x, 0.5),
            label="Attend",
        ),
        _driver(
            "repeated_inputs",
            ("Attend",),
            lambda: (_randn(4, 3), _randn(4, 3)),
            lambda f, q, x: f["Attend"](q, x, x, 0.5),
            label="AttendKeysAreValues",
        ),
        _driver(
            "repeated_inputs",
            ("KeepFirst",),
            lambda: (_randn(3),),
            lambda f, x: f["KeepFirst"](x, x),
            label="KeepFirst",
        ),
        _driver("return_input", ("ScaleGrad",), lambda: (_randn(3),), lambda f, x: f["ScaleGrad"](x, 0.25) * 1),
        _driver(
            "setup_context_style",
            ("Exp",),
            lambda: (_randn(3),),
            lambda f, x: (f["Exp"](x), f["Exp"](x, 0.5)),
            calls_per_trace=2,
        ),
        _driver("vjp_and_self", ("Square",), lambda: (_randn(3),), lambda f, x: f["Square"](x)),
    ]
}


def _auto_resolve(name: str) -> Callable[[Any, bool], dict[str, Callable]]:
    def resolve(module: Any, rewritten: bool) -> dict[str, Callable]:
        obj = getattr(module, name, None)
        if rewritten:
            return {name: obj.apply if isinstance(obj, type) else obj}
        if isinstance(obj, type) and issubclass(obj, torch.autograd.Function):
            return {name: obj.apply}
        return {name: None}

    return resolve


def _detached(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, (list, tuple)):
        return type(value)(_detached(v) for v in value)
    return value


def _record_calls(case: str) -> dict[str, tuple[tuple, dict]]:
    """The first call of each module-level flat callable that the rewrite's scenarios make."""
    _, rewritten = modules(case)
    flats = flat_callables(rewritten)
    calls: dict[str, tuple[tuple, dict]] = {}
    kept = {name: vars(rewritten)[name].__dict__["apply"] for name in flats if isinstance(vars(rewritten)[name], type)}

    def recorder(name: str, flat: Callable) -> Callable:
        def record(*args: Any, **kwargs: Any) -> Any:
            if name not in calls and any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
                calls[name] = (_detached(args), _detached(kwargs))
            return flat(*args, **kwargs)

        return record

    try:
        for name, flat in flats.items():
            if name in kept:  # a kept class: its `apply` records
                getattr(rewritten, name).apply = staticmethod(recorder(name, flat))
            else:
                setattr(rewritten, name, recorder(name, flat))
        for scenario in scenarios(rewritten):
            torch.manual_seed(0)
            try:
                with quiet():
                    getattr(rewritten, scenario)()
            except Exception:
                pass
    finally:
        for name, flat in flats.items():
            if name in kept:
                getattr(rewritten, name).apply = kept[name]
            else:
                setattr(rewritten, name, flat)
    return calls


def _auto_driver(case: str, name: str, label: str, args: tuple, kwargs: dict, via_class: bool = False) -> Driver:
    slots = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
    # decided now, not from the traced value (an fx proxy cannot answer requires_grad)
    copied = {i for i in slots if args[i].requires_grad}

    def inputs() -> tuple:
        return tuple(_detached(args[i]) for i in slots)

    def call(f: dict, *tensors: Any) -> Any:
        full = list(args)
        for i, t in zip(slots, tensors):
            # a non-leaf copy, as a scenario passes (mark_dirty refuses leaves)
            full[i] = t * 1 if i in copied else t
        return (f[name].apply if via_class else f[name])(*full, **kwargs)

    objects = _first_object_type(args, kwargs) is not None
    return Driver(
        case=case,
        resolve=_auto_resolve(name),
        inputs=inputs,
        call=call,
        names=(name,),
        label=label,
        via_class=via_class,
        objects=objects,
    )


def _auto_drivers() -> tuple[dict[str, Driver], dict[str, str]]:
    """Drivers recorded from the scenarios of every golden case without a hand-written one."""
    drivers: dict[str, Driver] = {}
    not_driven: dict[str, str] = {}
    hand_written = {d.case for d in DRIVERS.values()}
    for case in all_cases():
        if case in hand_written:
            continue
        if (GOLDEN / case / "output.py").read_text() == (GOLDEN / case / "input.py").read_text():
            not_driven[case] = "left untouched by the engine (refused, or not a Function): nothing to trace"
            continue
        calls = _record_calls(case)
        if not calls:
            not_driven[case] = "no scenario calls a module-level flat callable with a grad-requiring tensor"
            continue
        _, rewritten = modules(case)
        for name in flat_callables(rewritten):
            if name not in calls:
                not_driven[f"{case}/{name}"] = "no scenario calls it with a grad-requiring tensor"
        for name, (args, kwargs) in sorted(calls.items()):
            label = "" if len(calls) == 1 else name
            driver = _auto_driver(case, name, label, args, kwargs, via_class=isinstance(getattr(rewritten, name), type))
            try:
                with quiet():
                    outputs = driver.call({name: getattr(rewritten, name)}, *driver.inputs())
            except Exception as exc:
                not_driven[f"{case}/{name}"] = f"replaying the recorded call raises in eager ({_short(exc)[:80]})"
                continue
            if not any(t.requires_grad for t in flat_tensors(outputs)):
                not_driven[f"{case}/{name}"] = (
                    "no output carries a gradient in eager (e.g. a list output): nothing to compare"
                )
                continue
            drivers[driver.id] = driver
    return drivers, not_driven


def is_setup_context_style(cls: type) -> bool:
    return cls.setup_context is not torch.autograd.Function.setup_context


def flat_callables(module: Any) -> dict[str, Callable]:
    """Module-level objects that look like a flat callable (they carry ``.fwd`` and ``.bwd``),
    and the ``apply`` of each class the rewrite kept (``runtime.FlatClass``), by name."""
    out = {}
    for name, obj in vars(module).items():
        flat = obj.__dict__.get("apply") if isinstance(obj, type) else obj
        flat = flat.__func__ if isinstance(flat, staticmethod) else flat
        if callable(flat) and hasattr(flat, "fwd") and hasattr(flat, "bwd") and getattr(flat, "__name__", None) == name:
            out[name] = flat
    return out


@functools.cache
def modules(case: str) -> tuple[Any, Any]:
    """(original module, rewritten module), loaded once per process."""
    original = load_module((GOLDEN / case / "input.py").read_text(), f"{case}_tracer_original", GOLDEN / case)
    rewritten = load_module((GOLDEN / case / "output.py").read_text(), f"{case}_tracer_rewritten", GOLDEN / case)
    return original, rewritten


@functools.cache
def functions(driver: str, rewritten: bool) -> dict[str, Callable]:
    """The callables a driver exercises; cached, so every row sees the same objects."""
    original, new = modules(DRIVERS[driver].case)
    return DRIVERS[driver].resolve(new if rewritten else original, rewritten)


# --------------------------------------------------------------------------- outcomes


@dataclass
class Outcome:
    ok: bool
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    # True when the row does not apply (e.g. the original is a dumped graph, not a Function).
    na: bool = False

    def __bool__(self) -> bool:  # pragma: no cover - Outcome is inspected explicitly
        raise TypeError("use .ok")


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = re.sub(r"\s+", " ", text)
    return f"{type(exc).__name__}: {text[:300]}"


def flat_tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flat_tensors(v)]
    return []


def make_inputs(driver: str) -> tuple:
    torch.manual_seed(0)
    return tuple(
        t.detach().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t
        for t in DRIVERS[driver].inputs()
    )


def fresh(inputs: tuple) -> tuple:
    return tuple(
        t.detach().clone().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t for t in inputs
    )


def cotangents(outputs: Any) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    return [
        torch.randn(t.shape, generator=generator, dtype=t.dtype) for t in flat_tensors(outputs) if t.is_floating_point()
    ]


def scalar_loss(outputs: Any, cots: list[torch.Tensor]) -> torch.Tensor:
    floats = [t for t in flat_tensors(outputs) if t.is_floating_point()]
    return sum((t * c).sum() for t, c in zip(floats, cots))


def grads_of(fn: Callable, inputs: tuple) -> tuple[Any, list]:
    """(outputs, gradients of the seeded loss w.r.t. the inputs that require grad)."""
    inputs = fresh(inputs)
    outputs = fn(*inputs)
    cots = cotangents(outputs)
    loss = scalar_loss(outputs, cots)
    leaves = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    grads = torch.autograd.grad(loss, leaves, allow_unused=True)
    return outputs, [None if g is None else g.detach() for g in grads]


def body(driver: str, rewritten: bool) -> Callable:
    fns = functions(driver, rewritten)
    call = DRIVERS[driver].call
    if DRIVERS[driver].via_class:
        module = modules(DRIVERS[driver].case)[1 if rewritten else 0]
        fns = {name: getattr(module, name) for name in fns}

    def f(*tensors: Any) -> Any:
        return call(fns, *tensors)

    return f


@functools.cache
def reference(driver: str) -> tuple[Any, list]:
    """Eager outputs and gradients of the ORIGINAL: what every tracer row must reproduce.

    A case whose original is not an ``autograd.Function`` (a dumped graph calling
    ``autograd_function_apply``) has no original to call here; its reference is the
    rewrite's eager result, which tests/engine/test_golden.py compares with the eager
    Functions the dump came from.
    """
    return grads_of(body(driver, rewritten=not has_original(driver)), make_inputs(driver))


def has_original(driver: str) -> bool:
    return bool(functions(driver, False)) and all(fn is not None for fn in functions(driver, False).values())


@functools.cache
def true_derivative(driver: str, loss: str = "cotangents") -> list:
    """Gradients obtained by differentiating through the forward bodies (ignoring every custom backward).

    Computed from the rewrite's ``fwd`` functions, which are the original forward bodies.
    A tracer that drops the custom backward produces these instead of :func:`reference`.
    ``loss="weighted"``: of compile_checks' loss instead of the seeded cotangents.
    """
    fns = functions(driver, rewritten=True)

    def through_fwd(flat: Callable) -> Callable:
        def run(*args: Any, **kwargs: Any) -> Any:
            if "needs_input_grad" in inspect.signature(flat.fwd).parameters:  # a ctx record's fwd
                kwargs["needs_input_grad"] = tuple(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
            return flat.fwd(*args, **kwargs)[0]

        return run

    call = DRIVERS[driver].call
    plain: dict[str, Any] = {name: through_fwd(flat) for name, flat in fns.items()}
    if DRIVERS[driver].via_class:  # the body spells `f[name].apply(...)`
        plain = {name: type(name, (), {"apply": staticmethod(run)}) for name, run in plain.items()}
    if loss == "weighted":
        return compile_checks.call_and_differentiate(lambda *t: call(plain, *t), make_inputs(driver))[1]
    return grads_of(lambda *t: call(plain, *t), make_inputs(driver))[1]


def same(a: Any, b: Any, exact: bool, rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if exact:
            return bool(torch.equal(a, b))
        return bool(torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y, exact, rtol, atol) for x, y in zip(a, b))
    return a == b


def compare_grads(driver: str, got: list, exact: bool = False, none_is_zero: bool = False) -> Outcome:
    """``none_is_zero``: torch.func returns zeros where autograd returns None (an input the
    backward gives no gradient)."""
    expected = reference(driver)[1]
    if none_is_zero:
        expected = [
            torch.zeros_like(g) if e is None and isinstance(g, torch.Tensor) else e for e, g in zip(expected, got)
        ]
    tol = {"rtol": DRIVERS[driver].rtol, "atol": DRIVERS[driver].atol}
    if same(got, expected, exact, **tol):
        return Outcome(True)
    if same(got, true_derivative(driver), False, **tol):
        return Outcome(False, "custom backward dropped (grad = true derivative)")
    return Outcome(False, "gradients differ from eager")


@contextlib.contextmanager
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def fixed_arity(fn: Callable, n: int) -> Callable:
    """``fn(*args)`` as a function with ``n`` named parameters (fx does not trace ``*args``)."""
    names = [f"t{i}" for i in range(n)]
    src = f"def traced({', '.join(names)}):\n    return __fn({', '.join(names)})\n"
    namespace: dict[str, Any] = {"__fn": fn}
    exec(src, namespace)
    return namespace["traced"]


# --------------------------------------------------------------------------- rows


def check_eager(driver: str, rewritten: bool) -> Outcome:
    try:
        _, got = grads_of(body(driver, rewritten), make_inputs(driver))
    except Exception as exc:
        return Outcome(False, _short(exc))
    return compare_grads(driver, got, exact=True)


def _has_hop(gm: torch.fx.GraphModule) -> bool:
    for module in gm.modules():
        if isinstance(module, torch.fx.GraphModule):
            for node in module.graph.nodes:
                if isinstance(node.target, torch._ops.HigherOrderOperator):
                    return True
    return "torch.ops.higher_order" in gm.code


def check_capture(driver: str, rewritten: bool) -> Outcome:
    """torch.compile with a backend that keeps every graph dynamo hands it (fullgraph)."""
    import torch._dynamo

    graphs: list[torch.fx.GraphModule] = []

    def capture(gm: torch.fx.GraphModule, example_inputs: Any) -> Callable:
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    try:
        compiled = torch.compile(body(driver, rewritten), backend=capture, fullgraph=True)
        _, got = grads_of(compiled, make_inputs(driver))
    except Exception as exc:
        return Outcome(False, _short(exc), {"error": str(exc)})
    finally:
        torch._dynamo.reset()
    hop = any(_has_hop(gm) for gm in graphs)
    fns = functions(driver, rewritten)
    call_nodes = {
        # the node is the flat callable's ``call`` (itself, or what a custom_fwd(cast_inputs)
        # wrapper calls after casting)
        name: sum(
            1
            for gm in graphs
            for n in gm.graph.nodes
            if n.op == "call_function"
            and (n.target in (getattr(fn, "call", fn), getattr(fn, "objects_call", None)) or _attaches_for(n, fn))
        )
        for name, fn in fns.items()
    }
    grads = compare_grads(driver, got)
    details = {
        "graphs": len(graphs),
        "hop": hop,
        "call_nodes": call_nodes,
        "grads_ok": grads.ok,
        "code": [gm.code for gm in graphs],
    }
    if hop:
        return Outcome(False, "graph contains torch.ops.higher_order.autograd_function_apply", details)
    grads.details = details
    return grads


def _attaches_for(node: torch.fx.Node, fn: Any) -> bool:
    """A split-path call of ``fn`` in dynamo's graph: ``inliner::attach`` with one of its layouts."""
    if compile_path(fn) != "split" or node.target is not torch.ops.inliner.attach.default:
        return False
    from inliner.runtime import _split

    return _split._LAYOUTS[node.args[4]].spec.name == fn.__name__


def side_effect_log(driver: str, rewritten: bool) -> list | None:
    """The golden module's ``SIDE_EFFECT_LOG`` (the list its bodies append their Python
    side effects to, by convention), or None."""
    original, new = modules(DRIVERS[driver].case)
    return getattr(new if rewritten else original, "SIDE_EFFECT_LOG", None)


@functools.cache
def eager_three_calls(driver: str) -> tuple[list, list | None]:
    """Three eager calls of the original (of the rewrite, for a dumped graph): outputs and
    gradients per call, and the side-effect log they leave."""
    side = not has_original(driver)
    return compile_checks.eager_calls(body(driver, side), lambda: make_inputs(driver), side_effect_log(driver, side))


def check_backend(driver: str, rewritten: bool, backend: str) -> Outcome:
    """Three calls of ``torch.compile(body, backend=backend)``: outputs, custom gradients
    and the side-effect log equal three eager calls of the original."""
    expected, expected_log = eager_three_calls(driver)
    tol = {"rtol": DRIVERS[driver].rtol, "atol": DRIVERS[driver].atol}
    result = compile_checks.compiled_calls(
        body(driver, rewritten),
        lambda: make_inputs(driver),
        backend,
        expected,
        side_effect_log(driver, rewritten),
        expected_log,
        **tol,
    )
    if "grads" in result.details and same(result.details["grads"], true_derivative(driver, "weighted"), False, **tol):
        return Outcome(False, "custom backward dropped (grad = true derivative)")
    return Outcome(result.ok, result.reason, result.details)


def check_inductor(driver: str, rewritten: bool, fullgraph: bool) -> Outcome:
    """Three calls of ``torch.compile(body, backend="inductor", fullgraph=fullgraph)``:
    outputs (values, ``requires_grad``), custom gradients and the side-effect log equal three
    eager calls of the original; ``details`` has the graph breaks dynamo counted and the
    higher-order ops of every graph (``compile_checks.inductor_calls``)."""
    expected, expected_log = eager_three_calls(driver)
    tol = {"rtol": DRIVERS[driver].rtol, "atol": DRIVERS[driver].atol}
    result = compile_checks.inductor_calls(
        body(driver, rewritten),
        lambda: make_inputs(driver),
        expected,
        fullgraph,
        log=side_effect_log(driver, rewritten),
        expected_log=expected_log,
        **tol,
    )
    if "grads" in result.details and same(result.details["grads"], true_derivative(driver, "weighted"), False, **tol):
        return Outcome(False, "custom backward dropped (grad = true derivative)", result.details)
    return Outcome(result.ok, result.reason, result.details)


def check_fullgraph(driver: str, rewritten: bool) -> Outcome:
    """``torch.compile(body, backend="aot_eager", fullgraph=True)``: outputs and custom
    gradients equal eager; a failure keeps dynamo's message in ``details["error"]``."""
    expected, _ = eager_three_calls(driver)
    tol = {"rtol": DRIVERS[driver].rtol, "atol": DRIVERS[driver].atol}
    result = compile_checks.fullgraph(body(driver, rewritten), lambda: make_inputs(driver), expected[0], **tol)
    return Outcome(result.ok, result.reason, result.details)


def islands(driver: str) -> list[str]:
    """The driver's flat callables that are eager islands under torch.compile."""
    return [name for name, fn in functions(driver, True).items() if compile_path(fn) == "island"]


def compile_path(fn: Any) -> str:
    """``graph``, ``split`` or ``island``: how dynamo sees the flat callable ``fn``
    (``inliner.runtime._dynamo.compile_path``; set once dynamo is loaded)."""
    import torch._dynamo  # noqa: F401  (registers the flat callables made before it)

    return getattr(fn, "compile_path", "graph")


def check_graph_breaks(driver: str, rewritten: bool) -> Outcome:
    """One compiled call (aot_eager graphs kept, no fullgraph): the graph breaks dynamo
    counts (``details["breaks"]``), and, for the rewrite, no higher-order op in dynamo's
    graphs or AOTAutograd's forward and backward graphs."""
    result = compile_checks.graphs_and_breaks(body(driver, rewritten), lambda: make_inputs(driver))
    if not result.ok:
        return Outcome(False, result.reason, result.details)
    breaks = sum(result.details["breaks"].values())
    hops = compile_checks.higher_order_ops(result.details["graphs"])
    details = {"breaks": breaks, "reasons": result.details["breaks"], "hops": hops}
    if rewritten and hops:
        return Outcome(False, f"higher-order ops in the graphs: {sorted(set(hops))}", details)
    return Outcome(True, "", details)


def _func_loss(driver: str, rewritten: bool, inputs: tuple) -> tuple[Callable, tuple[int, ...]]:
    f = body(driver, rewritten)
    cots = cotangents(reference(driver)[0])
    argnums = tuple(i for i, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.requires_grad)

    def loss(*tensors: Any) -> torch.Tensor:
        return scalar_loss(f(*tensors), cots)

    return loss, argnums


def _plain(inputs: tuple) -> tuple:
    return tuple(t.detach().clone() if isinstance(t, torch.Tensor) else t for t in inputs)


def _check_loss_transform(transform: Callable, driver: str, rewritten: bool) -> Outcome:
    """``transform(loss, argnums=...)`` (torch.func.grad or jacrev of the scalar loss) against eager."""
    inputs = make_inputs(driver)
    loss, argnums = _func_loss(driver, rewritten, inputs)
    try:
        got = transform(loss, argnums=argnums)(*_plain(inputs))
    except Exception as exc:
        return Outcome(False, _short(exc))
    return compare_grads(driver, list(got), none_is_zero=True)


def check_func_grad(driver: str, rewritten: bool) -> Outcome:
    return _check_loss_transform(torch.func.grad, driver, rewritten)


def check_func_vjp(driver: str, rewritten: bool) -> Outcome:
    """torch.func.vjp of the floating-point outputs (vjp rejects integer outputs such as sort indices)."""
    inputs = make_inputs(driver)
    f = body(driver, rewritten)
    argnums = [i for i, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.requires_grad]

    def floating(*tensors: Any) -> tuple:
        return tuple(t for t in flat_tensors(f(*tensors)) if t.is_floating_point())

    try:
        outputs, vjp_fn = torch.func.vjp(floating, *_plain(inputs))
        got = vjp_fn(tuple(cotangents(outputs)))
    except Exception as exc:
        return Outcome(False, _short(exc))
    return compare_grads(driver, [got[i] for i in argnums], none_is_zero=True)


def check_func_jacrev(driver: str, rewritten: bool) -> Outcome:
    return _check_loss_transform(torch.func.jacrev, driver, rewritten)


def check_vmap(driver: str, rewritten: bool) -> Outcome:
    """vmap over a batch of 2 of every input: the values, and the per-sample gradients
    (``vmap(grad(loss))``, when every input is a float tensor), against a Python loop of
    eager calls of the original (of the rewrite, for a dumped graph with no original;
    the eager row already ties it to its reference)."""
    inputs = _plain(make_inputs(driver))
    batched = tuple(torch.stack([t, t * 2]) for t in inputs)
    f = body(driver, rewritten)
    reference_f = body(driver, rewritten=not has_original(driver))
    tol = {"rtol": DRIVERS[driver].rtol, "atol": DRIVERS[driver].atol}
    try:
        got = torch.vmap(f)(*batched)
    except Exception as exc:
        return Outcome(False, _short(exc))
    rows = [reference_f(*(b[i] for b in batched)) for i in range(2)]
    expected = torch.utils._pytree.tree_map(lambda *ts: torch.stack(ts), *rows)
    if not same(flat_tensors(got), flat_tensors(expected), False, **tol):
        return Outcome(False, "values differ")
    if not all(isinstance(t, torch.Tensor) and t.is_floating_point() for t in inputs):
        return Outcome(True, details={"per_sample_grads": False})

    def loss_of(fn: Callable) -> Callable:
        def loss(*tensors: Any) -> torch.Tensor:
            floats = [t for t in flat_tensors(fn(*tensors)) if t.is_floating_point()]
            return sum((t * (k + 1.5)).sum() for k, t in enumerate(floats))

        return loss

    argnums = tuple(range(len(inputs)))
    try:
        got_grads = torch.vmap(torch.func.grad(loss_of(f), argnums=argnums))(*batched)
    except Exception as exc:
        return Outcome(False, "vmap(grad): " + _short(exc))
    per_sample = []
    for i in range(2):
        xs = [b[i].detach().clone().requires_grad_() for b in batched]
        grads = torch.autograd.grad(loss_of(reference_f)(*xs), xs, allow_unused=True)
        per_sample.append([torch.zeros_like(x) if g is None else g for x, g in zip(xs, grads)])
    expected_grads = [torch.stack([per_sample[0][k], per_sample[1][k]]) for k in range(len(inputs))]
    if not same(list(got_grads), expected_grads, False, **tol):
        return Outcome(False, "per-sample gradients differ")
    return Outcome(True, details={"per_sample_grads": True})


def check_fx(driver: str, rewritten: bool) -> Outcome:
    """torch.fx.symbolic_trace: a leaf node per flat callable; the traced module keeps the custom backward."""
    inputs = make_inputs(driver)
    fns = functions(driver, rewritten)
    try:
        gm = torch.fx.symbolic_trace(fixed_arity(body(driver, rewritten), len(inputs)))
        _, got = grads_of(gm, inputs)
    except Exception as exc:
        return Outcome(False, _short(exc))
    leaf_nodes = {
        name: sum(
            1 for n in gm.graph.nodes if n.op == "call_function" and getattr(n.target, "inliner_flat", n.target) is fn
        )
        for name, fn in fns.items()
    }
    details = {"leaf_nodes": leaf_nodes, "code": gm.code}
    outcome = compare_grads(driver, got)
    outcome.details = details
    return outcome


def check_export(driver: str, rewritten: bool, strict: bool = False) -> Outcome:
    """torch.export.export of a module that runs the driver; the exported module must reproduce eager outputs."""
    inputs = make_inputs(driver)
    f = body(driver, rewritten)

    class Wrapper(torch.nn.Module):
        def forward(self, *tensors: Any) -> Any:
            return f(*tensors)

    try:
        ep = torch.export.export(Wrapper(), _plain(inputs), strict=strict)
        got = ep.module()(*_plain(inputs))
    except Exception as exc:
        return Outcome(False, _short(exc))
    expected = reference(driver)[0]
    tol = {"rtol": DRIVERS[driver].rtol, "atol": DRIVERS[driver].atol}
    if not same([t.detach() for t in flat_tensors(got)], [t.detach() for t in flat_tensors(expected)], False, **tol):
        return Outcome(False, "exported module's outputs differ from eager")
    code = ep.graph_module.code
    return Outcome(True, details={"graph": code, "hop": "higher_order" in code})


ROWS: dict[str, Callable[[str, bool], Outcome]] = {
    "eager": check_eager,
    "compile_capture": check_capture,
    "compile_aot_eager": lambda driver, rewritten: check_backend(driver, rewritten, "aot_eager"),
    "compile_inductor": lambda driver, rewritten: check_backend(driver, rewritten, "inductor"),
    "compile_fullgraph": check_fullgraph,
    "compile_graph_breaks": check_graph_breaks,
    "func_grad": check_func_grad,
    "func_vjp": check_func_vjp,
    "func_jacrev": check_func_jacrev,
    "vmap": check_vmap,
    "fx_symbolic_trace": check_fx,
    "export": check_export,
    "export_strict": lambda driver, rewritten: check_export(driver, rewritten, strict=True),
}


def run(row: str, driver: str, rewritten: bool) -> Outcome:
    if not rewritten and not has_original(driver):
        return Outcome(False, "n/a: the original is not an autograd.Function", na=True)
    with quiet():
        return ROWS[row](driver, rewritten)


def all_cases() -> list[str]:
    return sorted(p.name for p in GOLDEN.iterdir() if (p / "input.py").is_file())


__all__ = [
    "AUTO",
    "DRIVERS",
    "HAND_WRITTEN",
    "NOT_DRIVEN",
    "ROWS",
    "Driver",
    "Outcome",
    "all_cases",
    "flat_callables",
    "functions",
    "has_original",
    "modules",
    "reference",
    "run",
    "true_derivative",
]


# --------------------------------------------------------------------------- thunder rows


def _thunder_traces_text(traces: Any) -> str:
    return "\n".join(str(t) for t in traces)


def _thunder_program(driver: str, jitted: Callable) -> str:
    """ "ok" if the initial computation trace of ``jitted``, run as a program (under
    ``thunder.jit``, tests/support/thunder_programs.py), gives the original's eager outputs, and
    its body (without the ``no_grad`` decorator) the original's gradients; else why not."""
    from tests.support.thunder_programs import run_initial_trace

    try:
        out = run_initial_trace(jitted, *fresh(make_inputs(driver)))
        _, grads = grads_of(lambda *t: run_initial_trace(jitted, *t, decorators=False), make_inputs(driver))
    except Exception as exc:
        return _short(exc)
    tol = {"rtol": DRIVERS[driver].rtol, "atol": DRIVERS[driver].atol}
    expected = [t.detach() for t in flat_tensors(reference(driver)[0])]
    if not same(flat_tensors(out), expected, False, **tol):
        return "the program's outputs differ from eager"
    outcome = compare_grads(driver, grads)
    return "ok" if outcome.ok else f"the program's gradients: {outcome.reason}"


def check_thunder_jit(driver: str, rewritten: bool) -> Outcome:
    """thunder.jit: gradients equal eager, no autograd_function_apply, the forward spelled out.

    "Spelled out": every call of a flat callable is a bound symbol named after the
    original (``Name``, ``Name_1`` for a second Function of that name) whose subsymbols
    are the forward's operations.

    Recorded in the details, asserted by tests/tracers/test_thunder.py: ``unresolved``, the names
    a trace's program calls that its ``python_ctx()`` does not bind (per trace), and
    ``program``, whether the initial trace run as a program reproduces eager.
    """
    import thunder

    from tests.support.thunder_programs import unresolved_by_trace

    f = body(driver, rewritten)
    try:
        jf = thunder.jit(f)
        _, got = grads_of(jf, make_inputs(driver))
        traces = thunder.last_traces(jf)
        backward = thunder.last_backward_traces(jf)
    except Exception as exc:
        return Outcome(False, _short(exc))
    text = _thunder_traces_text(list(traces) + list(backward))
    names = {getattr(fn, "__name__", "") for fn in functions(driver, rewritten).values()}
    if not rewritten:
        names = {getattr(fn, "__self__", fn).__name__ for fn in functions(driver, rewritten).values()}
    spelled = {}
    for name in names:
        bsyms = [b for b in traces[0].bound_symbols if re.fullmatch(rf"{name}(_\d+)*", b.sym.name)]
        spelled[name] = bool(bsyms) and all(b.subsymbols for b in bsyms)
    details = {
        "spelled_out": spelled,
        "trace": str(traces[0]),
        "symbols": [b.sym.name for b in traces[0].bound_symbols if b.sym.name.startswith(tuple(names))],
        "unresolved": unresolved_by_trace(list(traces) + list(backward)),
        "program": _thunder_program(driver, jf),
    }
    if "autograd_function_apply" in text:
        return Outcome(False, "autograd_function_apply in a thunder trace", details)
    if not all(spelled.values()):
        return Outcome(False, "the forward is not spelled out in the trace", details)
    outcome = compare_grads(driver, got)
    outcome.details = details
    return outcome


def _thunderfx_programs(driver: str, compiled: Any) -> str:
    """ "ok" if the initial trace of every graph thunderfx handed thunder, run as a program
    (under ``thunder.jit``) on inputs made from the graph's example-input metadata, gives
    the outputs of that graph run eagerly, and its body (without ``no_grad``) the graph's
    eager gradients; else why not."""
    tol = {"rtol": DRIVERS[driver].rtol, "atol": DRIVERS[driver].atol}
    for info in compiled._backend.subgraph_infos:
        graphs = [gm for gm, fn in info.submodule_to_compiled_functions.items() if str(fn.compiler).endswith("THUNDER")]
        for gm, jitted, metas in zip(graphs, info.thunder_compiled_fns, info.thunder_compiled_fns_example_inputs):
            try:
                reason = _thunderfx_program(gm, jitted, metas, tol)
            except Exception as exc:
                reason = _short(exc)
            if reason != "ok":
                return reason
    return "ok"


def _thunderfx_program(gm: Any, jitted: Any, metas: list, tol: dict) -> str:
    from thunder.dynamo.utils import example_input_meta_to_input

    from tests.support.thunder_programs import run_initial_trace

    torch.manual_seed(0)
    inputs = tuple(example_input_meta_to_input(m) for m in metas)
    out = run_initial_trace(jitted, *fresh(inputs))
    if not same(flat_tensors(out), [t.detach() for t in flat_tensors(gm(*fresh(inputs)))], False, **tol):
        return "a program's outputs differ from its graph's"

    def loss_and_leaves(fn: Callable) -> tuple[torch.Tensor, list]:
        # one cotangent per floating-point output position, used where the output requires
        # grad: thunder marks an output computed under no_grad as requiring grad (with a
        # zero gradient), where eager does not, and the other outputs keep their cotangents
        args = fresh(inputs)
        floats = [t for t in flat_tensors(fn(*args)) if t.is_floating_point()]
        used = [(t, c) for t, c in zip(floats, cotangents(floats)) if t.requires_grad]
        leaves = [t for t in args if isinstance(t, torch.Tensor) and t.requires_grad]
        return scalar_loss([t for t, _ in used], [c for _, c in used]), leaves

    loss, leaves = loss_and_leaves(lambda *a: run_initial_trace(jitted, *a, decorators=False))
    eager_loss, eager_leaves = loss_and_leaves(gm)
    if not leaves or not isinstance(eager_loss, torch.Tensor):
        return "ok"  # nothing to differentiate
    got = torch.autograd.grad(loss, leaves, allow_unused=True)
    want = torch.autograd.grad(eager_loss, eager_leaves, allow_unused=True)
    got = [torch.zeros_like(x) if g is None else g for g, x in zip(got, leaves)]
    want = [torch.zeros_like(x) if g is None else g for g, x in zip(want, leaves)]
    return "ok" if same(got, want, False, **tol) else "a program's gradients differ from its graph's"


def check_thunderfx(driver: str, rewritten: bool) -> Outcome:
    """thunderfx (torch.compile with thunder's backend): gradients equal eager and no
    autograd_function_apply in any graph handed to thunder."""
    import thunder
    import torch._dynamo
    from thunder.dynamo import thunderfx

    from tests.support.thunder_programs import unresolved_by_trace

    torch._dynamo.reset()
    try:
        cf = thunderfx(body(driver, rewritten))
        _, got = grads_of(cf, make_inputs(driver))
        infos = cf._backend.subgraph_infos
        thunder_graphs = [
            gm.code
            for info in infos
            for gm, compiled in info.submodule_to_compiled_functions.items()
            if str(getattr(compiled, "compiler", "")).endswith("THUNDER")
        ]
        # every trace of every thunder graph (cf.last_traces holds each graph's last only)
        thunder_traces = [
            trace
            for info in infos
            for fn in info.thunder_compiled_fns
            for trace in (*thunder.last_traces(fn), *thunder.last_backward_traces(fn))
        ]
        text = _thunder_traces_text(thunder_traces)
        program = _thunderfx_programs(driver, cf) if rewritten else None
    except Exception as exc:
        return Outcome(False, _short(exc))
    finally:
        torch._dynamo.reset()
    split_reasons = [str(r.info) for info in infos for r in (info.split_reasons or [])]
    # flat callables thunder's splitter sent to its fallback instead of running them itself
    names = sorted({getattr(fn, "__name__", "") for fn in functions(driver, rewritten).values()}) if rewritten else []
    split_out = [n for n in names if any(f"target: <function {n} at" in r for r in split_reasons)]
    details = {
        "thunder_graphs": len(thunder_graphs),
        "split_reasons": split_reasons,
        "split_out": split_out,
        "unresolved": unresolved_by_trace(thunder_traces),
        "program": program,
    }
    if any("autograd_function_apply" in code for code in thunder_graphs) or "autograd_function_apply" in text:
        outcome = compare_grads(driver, got)
        return Outcome(False, "autograd_function_apply reaches thunder", {**details, "grads_ok": outcome.ok})
    # thunder returns zeros where eager autograd leaves an unused input's grad None
    outcome = compare_grads(driver, got, none_is_zero=True)
    outcome.details = details
    return outcome


THUNDER_ROWS: dict[str, Callable[[str, bool], Outcome]] = {
    "thunder_jit": check_thunder_jit,
    "thunderfx": check_thunderfx,
}
ROWS.update(THUNDER_ROWS)


def thunder_available() -> bool:
    try:
        with quiet():
            import thunder  # noqa: F401
    except Exception:
        return False
    return True


# Every golden case without a hand-written driver gets drivers recorded from its scenarios.
HAND_WRITTEN: frozenset[str] = frozenset(DRIVERS)
_auto, NOT_DRIVEN = _auto_drivers()
DRIVERS.update(_auto)
AUTO: frozenset[str] = frozenset(_auto)
del _auto
