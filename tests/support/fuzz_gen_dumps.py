"""Random dumped graphs of chained ``autograd_function_apply`` calls, for differential fuzzing.

A dump is what ``print_readable()`` (torch 2.13) or a thunderfx reproducer (torch
2.9) prints for a function that applies custom Functions one after another: a
``GraphModule`` / ``DynamoModule`` whose ``forward`` calls the op once per Function,
each call's result feeding the next, on nested ``fwd_body_<i>`` / ``bwd_body_<i>``
classes. The printed graph is not runnable as the original (torch 2.9's op form is
not torch 2.13's), so every generated case comes in two texts with the same
``scenario_*()`` functions (``tests/support/harness.py``):

- ``source``: the dump, calling ``GraphModule()(...)``: what the engine flattens;
- ``reference``: the eager ``torch.autograd.Function`` classes the dump stands for.

The oracle (``fuzz_oracle.check_dump``) compares the flattened dump with the
reference. Both are built from one description of each Function (a few tensor ops
in single-assignment form), so they run the same operations in the same order and
agree bit for bit. Every backward is deliberately not the derivative of its forward.

Draws go through the same ``Chooser`` as ``tests/support/fuzz_gen.py`` (0 = the simplest choice).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from tests.support.fuzz_gen import Chooser, RandomChooser, ReplayChooser

SHAPE = (3,)
FUNCTION_NAMES = ["Scale", "Sine", "Mix", "Shift", "Gate", "Warp"]
CONSTANTS = ["2.0", "0.5", "3.0", "-1.5"]
GRAD_FACTORS = ["3", "5", "7", "11", "0.25"]

#: (op, arity): unary ops on one value, binary ops on two, ``*c`` / ``+c`` with a literal
#: and ``*k`` with the Function's non-tensor argument (a literal in the dump).
_OPS = [("sin", 1), ("cos", 1), ("tanh", 1), ("mulc", 1), ("addc", 1), ("mulk", 1), ("mul", 2), ("add", 2), ("sub", 2)]
_DUMP_NAME = {
    "sin": "sin",
    "cos": "cos",
    "tanh": "tanh",
    "mulc": "mul",
    "addc": "add",
    "mulk": "mul",
    "mul": "mul",
    "add": "add",
    "sub": "sub",
}


@dataclass
class DumpGenerated:
    source: str  # the dumped graph (flattened by the engine) and its scenarios
    reference: str  # the eager Functions it stands for, with the same scenarios
    n_calls: int
    features: set[str] = field(default_factory=set)
    draws: list[int] = field(default_factory=list)


@dataclass
class _Step:
    op: str
    args: tuple[int, ...]  # value indices
    constant: str | None = None


@dataclass
class _Term:
    grad: int  # which output's gradient
    saved: int | None  # index into the saved values, or None
    factor: str


@dataclass
class _FunctionSpec:
    name: str
    n_tensors: int  # tensor arguments (values 0 .. n_tensors - 1)
    constant: str | None  # a float argument after the tensors (baked into the dump)
    lifted: str | None  # torch 2.9: a module-level tensor the forward reads (a lifted operand)
    steps: list[_Step]
    outputs: list[int]  # value indices
    saved: list[int]  # value indices, in save order
    grads: list[list[_Term]]  # per tensor argument
    local_return: bool  # the dump's fwd body returns its saved values through a local

    @property
    def n_inputs(self) -> int:  # values that exist before the steps
        return self.n_tensors + (1 if self.lifted else 0)


def _expr(step: _Step, names: list[str], k: str) -> str:
    a = names[step.args[0]]
    b = names[step.args[1]] if len(step.args) > 1 else ""
    return {
        "sin": f"{a}.sin()",
        "cos": f"{a}.cos()",
        "tanh": f"torch.tanh({a})",
        "mulc": f"{a} * {step.constant}",
        "addc": f"{a} + {step.constant}",
        "mulk": f"{a} * {k}",
        "mul": f"{a} * {b}",
        "add": f"{a} + {b}",
        "sub": f"{a} - {b}",
    }[step.op]


class _Namer:
    """Dynamo's node names: ``mul``, ``mul_1``, ... per body."""

    def __init__(self, taken: Sequence[str] = ()) -> None:
        self.taken = set(taken)

    def __call__(self, base: str) -> str:
        name, n = base, 0
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name


def _function_spec(ch: Chooser, name: str, abi: str, lifted: str | None, features: set[str]) -> _FunctionSpec:
    n_tensors = ch.int(1, 2)
    constant = ch.choice(CONSTANTS) if ch.bool(30) else None
    if constant is not None:
        features.add("constant_argument")
    n_inputs = n_tensors + (1 if lifted else 0)
    steps: list[_Step] = []
    for _ in range(ch.int(1, 3)):
        n_values = n_inputs + len(steps)
        op, arity = ch.choice([o for o in _OPS if o[0] != "mulk" or constant is not None])
        args = tuple(ch.draw(n_values) for _ in range(arity))
        if not steps:
            args = (ch.draw(n_tensors),) + args[1:]  # the first step reads a tensor argument
        steps.append(_Step(op, args, ch.choice(CONSTANTS) if op in ("mulc", "addc") else None))
    if lifted and not any(n_tensors in s.args for s in steps):
        steps.append(_Step("mul", (n_inputs + len(steps) - 1, n_tensors)))  # the lifted value is read
    last = n_inputs + len(steps) - 1
    outputs = [last]
    computed = [v for v in range(n_inputs, last)]
    if computed and ch.bool(30):
        outputs.append(ch.choice(computed))
        features.add("two_outputs")
    pool = list(range(n_tensors)) + list(range(n_inputs, last + 1))  # lifted values are not saved
    saved = ch.sample(pool, ch.int(0, 2))
    grads = []
    for _ in range(n_tensors):
        terms = []
        for o in range(len(outputs)):
            if o > 0 and ch.bool(30):
                continue  # this input's gradient ignores that output
            s = ch.draw(len(saved) + 1) if saved else 0
            terms.append(_Term(o, s - 1 if s else None, ch.choice(GRAD_FACTORS)))
        grads.append(terms)
    local_return = ch.bool(15)
    if local_return:
        features.add("local_return")
    return _FunctionSpec(name, n_tensors, constant, lifted, steps, outputs, saved, grads, local_return)


# -- the eager reference -------------------------------------------------------------


def _eager_class(spec: _FunctionSpec) -> list[str]:
    params = [f"x{i}" for i in range(spec.n_tensors)] + (["k"] if spec.constant else [])
    names = [f"x{i}" for i in range(spec.n_tensors)] + ([spec.lifted] if spec.lifted else [])
    lines = [
        f"class {spec.name}(torch.autograd.Function):",
        "    @staticmethod",
        f"    def forward(ctx, {', '.join(params)}):",
    ]
    for i, step in enumerate(spec.steps):
        names.append(f"h{i}")
        lines.append(f"        h{i} = {_expr(step, names, 'k')}")
    if spec.saved:
        lines.append(f"        ctx.save_for_backward({', '.join(names[v] for v in spec.saved)})")
    lines.append(f"        return {', '.join(names[v] for v in spec.outputs)}")
    grad_names = ["g"] + [f"g_{j}" for j in range(1, len(spec.outputs))]
    lines += ["", "    @staticmethod", f"    def backward(ctx, {', '.join(grad_names)}):"]
    saved_names = [f"s{i}" for i in range(len(spec.saved))]
    if spec.saved:
        lines.append(f"        {', '.join(saved_names)}{',' if len(saved_names) == 1 else ''} = ctx.saved_tensors")
    body, returned = _backward_lines(spec, grad_names, saved_names, _Namer([*grad_names, *saved_names]))
    lines += [f"        {target} = {expr}" for target, expr, _ in body]
    if spec.constant:
        returned.append("None")
    lines.append(f"        return {', '.join(returned)}")
    return lines


def _backward_lines(
    spec: _FunctionSpec, grad_names: list[str], saved_names: list[str], namer: _Namer
) -> tuple[list[tuple[str, str, set[str]]], list[str]]:
    """The gradient arithmetic, single-assignment, shared by the eager and the dumped backward:
    (target, expression, names it reads) per statement, and the returned names."""
    lines: list[tuple[str, str, set[str]]] = []
    returned = []
    for terms in spec.grads:
        parts = []
        for term in terms:
            value = grad_names[term.grad]
            if term.saved is not None:
                product = namer("mul")
                lines.append((product, f"{value} * {saved_names[term.saved]}", {value, saved_names[term.saved]}))
                value = product
            scaled = namer("mul")
            lines.append((scaled, f"{value} * {term.factor}", {value}))
            parts.append(scaled)
        total = parts[0]
        for part in parts[1:]:
            added = namer("add")
            lines.append((added, f"{total} + {part}", {total, part}))
            total = added
        returned.append(total)
    return lines, returned


# -- the dump ------------------------------------------------------------------------


def _fwd_body(spec: _FunctionSpec, i: int, abi: str, operands: list[str]) -> tuple[list[str], list[str]]:
    """The nested forward class; its placeholders are named after the operands (deduplicated)."""
    unique = _Namer()
    params = [unique(o) for o in operands]
    ann = f'"f32[{SHAPE[0]}]"'
    ctx = "ctx : torch.autograd.function.Function, " if abi == "2.9" else ""
    lines = [
        f"    class fwd_body_{i}(torch.nn.Module):",
        f"        def forward(self, {ctx}{', '.join(f'{p}: {ann}' for p in params)}):",
    ]
    lines += [
        "            # No stacktrace found for following nodes",
        "            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None",
        "",
    ]
    names = list(params)
    namer = _Namer(params)
    body: list[tuple[str, set[str]]] = []
    for step in spec.steps:
        name = namer(_DUMP_NAME[step.op])
        body.append((f"{name}: {ann} = {_expr(step, names, spec.constant or '')}", {names[a] for a in step.args}))
        names.append(name)
    outputs = [names[v] for v in spec.outputs]
    saved = [names[v] for v in spec.saved]
    kept = set(outputs) | set(saved)
    lines += _with_releases(body, kept, "            ")
    out_text, saved_text = _return_texts(abi, outputs, saved)
    if spec.local_return:  # not what dynamo prints: a hand-written body's shape (bound once, read once)
        lines.append(f"            saved = {saved_text}")
        saved_text = "saved"
    lines += [
        "",
        "            # No stacktrace found for following nodes",
        "            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None",
        f"            return ({out_text}, {saved_text})",
    ]
    return lines, saved


def _return_texts(abi: str, outputs: list[str], saved: list[str]) -> tuple[str, str]:
    if abi == "2.9":
        out_text = outputs[0] if len(outputs) == 1 else f"({', '.join(outputs)})"
        saved_text = f"[{', '.join(saved)}]"
    else:
        out_text = f"({', '.join(outputs)},)" if len(outputs) == 1 else f"({', '.join(outputs)})"
        saved_text = f"({', '.join(saved)}{',' if len(saved) == 1 else ''})"
    return out_text, saved_text


def _bwd_body(spec: _FunctionSpec, i: int, abi: str, saved: list[str]) -> list[str]:
    """The nested backward class: ``(grads..., saved...)`` in, one gradient per tensor operand out."""
    ann = f'"f32[{SHAPE[0]}]"'
    ctx = "ctx : torch.autograd.function.Function, " if abi == "2.9" else ""
    grad_names = ["g"] + [f"g_{j}" for j in range(1, len(spec.outputs))]
    params = [*grad_names, *saved]
    lines = [
        f"    class bwd_body_{i}(torch.nn.Module):",
        f"        def forward(self, {ctx}{', '.join(f'{p}: {ann}' for p in params)}):",
    ]
    lines += [
        "            # No stacktrace found for following nodes",
        "            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None",
        "",
    ]
    body, returned = _backward_lines(spec, grad_names, saved, _Namer(params))
    statements = [(f"{target}: {ann} = {expr}", used) for target, expr, used in body]
    lines += _with_releases(statements, set(returned), "            ")
    lines += [
        "",
        "            # No stacktrace found for following nodes",
        "            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None",
    ]
    if abi == "2.9" and len(returned) == 1:
        lines.append(f"            return {returned[0]}")
    else:
        lines.append(f"            return ({', '.join(returned)}{',' if len(returned) == 1 else ''})")
    return lines


def _with_releases(statements: list[tuple[str, set[str]]], kept: set[str], indent: str) -> list[str]:
    """Dynamo's ``;  a = b = None`` after each value's last use."""
    last_use: dict[str, int] = {}
    for j, (_, used) in enumerate(statements):
        for name in used:
            last_use[name] = j
    out = []
    for j, (text, _) in enumerate(statements):
        freed = sorted((n for n, last in last_use.items() if last == j and n not in kept), key=text.find)
        out.append(indent + text + (f";  {' = '.join(freed)} = None" if freed else ""))
    return out


def generate_dump(ch: Chooser) -> DumpGenerated:
    """One module of 2..4 chained op calls, in the torch 2.9 or the torch 2.13 form."""
    features: set[str] = set()
    abi = ch.choice(["2.13", "2.9"])
    features.add(f"abi_{abi}")
    repro = abi == "2.9" and ch.bool(50)  # a thunderfx reproducer's DynamoModule
    instantiated = ch.bool(30) or repro
    annotated = abi == "2.9" and ch.bool(40)
    for flag, on in (
        ("thunderfx_repro", repro),
        ("instantiated_bodies", instantiated),
        ("annotated_results", annotated),
    ):
        if on:
            features.add(flag)
    n_calls = ch.int(2, 4)
    features.add(f"calls_{n_calls}")
    graph_inputs = ["x", "w"][: ch.int(1, 2)]
    names = ch.sample(FUNCTION_NAMES, n_calls)
    lifted_globals: list[str] = []
    specs = []
    for i in range(n_calls):
        lifted = None
        if abi == "2.9" and ch.bool(15):
            lifted = f"W{len(lifted_globals)}"
            lifted_globals.append(lifted)
            features.add("lifted_operand")
        specs.append(_function_spec(ch, names[i], abi, lifted, features))

    # -- which values each call takes: the previous result first, then graph inputs / earlier results
    eager_values = list(graph_inputs)  # what `f` has in hand, eager names
    call_args: list[list[int]] = []
    for i, spec in enumerate(specs):
        args = [len(eager_values) - 1] if i else [0]
        for _ in range(spec.n_tensors - 1):
            args.append(ch.draw(len(eager_values)))
        call_args.append(args)
        for o in range(len(spec.outputs)):
            eager_values.append(f"a{i}" if len(spec.outputs) == 1 else f"a{i}_{o}")
    last_outputs = list(range(len(eager_values) - len(specs[-1].outputs), len(eager_values)))
    returned = list(last_outputs)
    earlier = [v for v in range(len(graph_inputs), last_outputs[0])]
    if earlier and ch.bool(30):
        returned.append(ch.choice(earlier))
        features.add("returns_earlier_result")

    nested = _nested_code(specs, graph_inputs, eager_values, call_args) if repro and returned == last_outputs else None
    if nested is not None and ch.bool(60):
        features.add("one_nested_comment")
    else:
        nested = None
    reference = _reference_text(specs, graph_inputs, eager_values, call_args, returned, lifted_globals)
    source = _dump_text(
        specs,
        abi,
        repro,
        instantiated,
        annotated,
        graph_inputs,
        eager_values,
        call_args,
        returned,
        lifted_globals,
        nested,
    )
    source = _flags_for_both_generations(ch, source, abi, features)  # drawn last: older draws replay as before
    scenarios = _scenarios(graph_inputs, lifted_globals)
    return DumpGenerated(
        source=source + scenarios,
        reference=reference + scenarios,
        n_calls=n_calls,
        features=features,
        draws=list(getattr(ch, "record", [])),
    )


_OLD_FLAGS = re.compile(r"args_tensor_mask = \[(?P<mask>[^\]]*)\], non_differentiable_idx = \[\]")


def _flags_for_both_generations(ch: Chooser, source: str, abi: str, features: set[str]) -> str:
    """A torch 2.9 call spelled as code written for both generations spells it: the mask
    computed from literals, and the flags only 2.10+ reads passed too (2.9 ignores them,
    so must the rewrite: ``dirty_idx = [0]`` marks nothing)."""
    if abi != "2.9" or not ch.bool(30):
        return source
    features.add("flags_for_both_generations")

    def respell(match: re.Match) -> str:
        mask = match["mask"].split(", ")
        trues = mask.count("True")
        computed = f"[True] * {trues}" + (" + [False]" if "False" in mask else "")
        return (
            f"args_tensor_mask = {computed}, non_differentiable_idx = [], "
            "saved_for_backward_idx = None, dirty_idx = [0]"
        )

    return _OLD_FLAGS.sub(respell, source)


def _globals_text(lifted_globals: list[str]) -> list[str]:
    return [f"{g} = torch.full({SHAPE!r}, {0.5 + 0.25 * i}, requires_grad=True)" for i, g in enumerate(lifted_globals)]


def _reference_text(specs, graph_inputs, eager_values, call_args, returned, lifted_globals) -> str:
    lines = ["import torch", "", *_globals_text(lifted_globals), ""]
    for spec in specs:
        lines += ["", *_eager_class(spec), "", ""]
    lines.append(f"def run({', '.join(graph_inputs)}):")
    produced = len(graph_inputs)
    for i, spec in enumerate(specs):
        args = [eager_values[a] for a in call_args[i]] + ([spec.constant] if spec.constant else [])
        targets = eager_values[produced : produced + len(spec.outputs)]
        produced += len(spec.outputs)
        lines.append(f"    {', '.join(targets)} = {spec.name}.apply({', '.join(args)})")
    lines.append(f"    return ({', '.join(eager_values[v] for v in returned)},)")
    return "\n".join(lines) + "\n"


def _nested_code(specs, graph_inputs, eager_values, call_args) -> str | None:
    """``C.apply(B.apply(A.apply(x, w)), 3.0)`` when the calls nest (each single result is
    the next call's first operand and nothing else reads it), else None."""
    produced = len(graph_inputs)
    text = None
    for i, spec in enumerate(specs):
        if len(spec.outputs) != 1:
            return None
        args = [eager_values[a] for a in call_args[i]] + ([spec.constant] if spec.constant else [])
        if i:
            if call_args[i][0] != produced - 1 or (produced - 1) in call_args[i][1:]:
                return None
            args[0] = text
        elif any(a >= len(graph_inputs) for a in call_args[i]):
            return None
        text = f"{spec.name}.apply({', '.join(args)})"
        produced += 1
    return text


def _dump_text(
    specs,
    abi,
    repro,
    instantiated,
    annotated,
    graph_inputs,
    eager_values,
    call_args,
    returned,
    lifted_globals,
    nested=None,
) -> str:
    """``nested``: thunderfx's layout for one line of nested applies: that line's comment,
    then every ``fwd_body_<i> = self.fwd_body_<i>()``, then the calls."""
    ann = f'"f32[{SHAPE[0]}]"'
    module = "DynamoModule" if repro else "GraphModule"
    placeholders = [f"l_{n}_" for n in graph_inputs] + [f"g_{g.lower()}_" for g in lifted_globals]
    if repro:
        head = [f"    def forward(self, {', '.join(f'{p}: {ann}' for p in placeholders)}):"]
    else:
        outer = [f"L_{n}_" for n in graph_inputs] + [f"G_{g}_" for g in lifted_globals]
        head = [f"    def forward(self, {', '.join(f'{p}: {ann}' for p in outer)}):"]
        head += [f"        {p} = {o}" for p, o in zip(placeholders, outer)]
    outer_names = [f"l_{n}_" for n in graph_inputs]  # dump name of each eager value
    statements: list[tuple[str, set[str]]] = []
    comments: dict[int, str] = {}
    bodies: list[str] = []
    result_namer = _Namer()
    getitem_namer = _Namer()
    lifted_iter = iter(placeholders[len(graph_inputs) :])
    line_no = 30
    for i, spec in enumerate(specs):
        operands = [outer_names[a] for a in call_args[i]]
        if spec.lifted:
            operands.append(next(lifted_iter))
        eager_args = [eager_values[a] for a in call_args[i]] + ([spec.constant] if spec.constant else [])
        produced = len(outer_names)
        targets = eager_values[produced : produced + len(spec.outputs)]
        call_parens = "()" if instantiated else ""
        if nested is None:
            comments[len(statements)] = (
                f"        # File: /work/model.py:{line_no + i} in f, code: {', '.join(targets)} = {spec.name}.apply({', '.join(eager_args)})"
            )
            statements.append((f"fwd_body_{i} = self.fwd_body_{i}{call_parens}", set()))
            statements.append((f"bwd_body_{i} = self.bwd_body_{i}{call_parens}", set()))
        elif i == 0:
            comments[0] = f"         # File: /work/model.py:{line_no} in f, code: return {nested}"
            for j in range(len(specs)):
                statements.append((f"fwd_body_{j} = self.fwd_body_{j}{call_parens}", set()))
                statements.append((f"bwd_body_{j} = self.bwd_body_{j}{call_parens}", set()))
        if abi == "2.9":
            mask = ["True"] * spec.n_tensors + (["False"] if spec.constant else [])
            flags = f"args_tensor_mask = [{', '.join(mask)}], non_differentiable_idx = []"
        else:
            flags = f"non_differentiable_idx = [], saved_for_backward_idx = [{', '.join(str(j) for j in range(len(spec.saved)))}]"
        result = result_namer("autograd_function_apply")
        annotation = f": {ann}" if annotated and len(spec.outputs) == 1 else ""
        call = f"torch.ops.higher_order.autograd_function_apply(fwd_body_{i}, bwd_body_{i}, {', '.join(operands)}, {flags})"
        statements.append((f"{result}{annotation} = {call}", {f"fwd_body_{i}", f"bwd_body_{i}", *operands}))
        if abi == "2.9" and len(spec.outputs) == 1:
            outer_names.append(result)
        else:
            for o in range(len(spec.outputs)):
                item = getitem_namer("getitem")
                statements.append((f"{item}: {ann} = {result}[{o}]", {result}))
                outer_names.append(item)
        fwd_lines, saved_names = _fwd_body(spec, i, abi, operands)
        bodies += ["", *fwd_lines, "", *_bwd_body(spec, i, abi, saved_names)]
    final = [outer_names[v] for v in returned]
    body_lines = _with_releases(statements, set(final), "        ")
    lines = ["import torch", "", *_globals_text(lifted_globals), "", "", f"class {module}(torch.nn.Module):", *head]
    for j, text in enumerate(body_lines):
        if j in comments:
            lines += ["", comments[j]]
        lines.append(text)
    lines.append(f"        return ({', '.join(final)},)")
    lines += bodies
    lines += [
        "",
        "",
        f"def run({', '.join(graph_inputs)}):",
        f"    return {module}()({', '.join([*graph_inputs, *lifted_globals])})",
    ]
    return "\n".join(lines) + "\n"


def _scenarios(graph_inputs: list[str], lifted_globals: list[str]) -> str:
    shape = repr(SHAPE)
    args = ", ".join(graph_inputs)
    leaves = ", ".join([*graph_inputs, *lifted_globals])
    made = [f"    {n} = torch.randn({shape}, requires_grad=True)" for n in graph_inputs]
    lines = ["", ""]
    lines += ["def scenario_all():", *made, f"    return [{leaves}], run({args})", "", ""]
    lines += ["def scenario_first_input_only():"]
    lines += [
        f"    {n} = torch.randn({shape}{', requires_grad=True' if j == 0 else ''})" for j, n in enumerate(graph_inputs)
    ]
    lines += [f"    return [{graph_inputs[0]}], run({args})", "", ""]
    lines += ["def scenario_no_grad():", *made, "    with torch.no_grad():", f"        out = run({args})"]
    lines += [f"    return [{leaves}], out", "", ""]
    lines += ["def scenario_double():", *made, f"    out = run({args})"]
    lines += [
        f"    grads = torch.autograd.grad(sum(o.sum() for o in out), [{args}], create_graph=True, allow_unused=True)",
        f"    return [{args}], grads",
    ]
    return "\n".join(lines) + "\n"


def generate_dump_from_seed(seed: int) -> DumpGenerated:
    return generate_dump(RandomChooser(seed))


def generate_dump_from_draws(draws: Sequence[int]) -> DumpGenerated:
    return generate_dump(ReplayChooser(draws))
