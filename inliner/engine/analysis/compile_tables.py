"""What the compile-kind classifier knows about the code a body calls: torch, builtins, stdlib.

Each table answers one question about a *qualified* name (``numpy.sin``,
``torch.cuda.nvtx.range_push``, ``builtins.print``) or a method name, and nothing is
known by default: a name none of them lists is opaque. ``inliner/compile_kind.py``
walks the bodies and asks; this module holds no logic beyond prefix matching.

The torch lists were checked against torch 2.13: what AOTAutograd cannot run on fake
tensors, or what it would run once at trace time where the original ran it on every
call (``print`` and NVTX ranges, RNG seeding, collectives, I/O).
"""

from __future__ import annotations

from inliner.engine.analysis._tensor_methods import TENSOR_METHODS

TRACEABLE, OPAQUE, SIDE_EFFECTING = "traceable", "opaque", "side_effecting"

# -- torch ------------------------------------------------------------------------

#: torch callables whose effect the original had on every call (qualified-name prefixes).
TORCH_SIDE_EFFECTING = (
    "torch.save",
    "torch.cuda.nvtx",
    "torch.profiler",
    "torch.autograd.profiler",
    *(
        f"torch.distributed.{name}"
        for name in [
            "all_reduce",
            "all_gather",
            "all_gather_into_tensor",
            "all_gather_object",
            "all_to_all",
            "all_to_all_single",
            "reduce",
            "reduce_scatter",
            "reduce_scatter_tensor",
            "broadcast",
            "broadcast_object_list",
            "scatter",
            "gather",
            "send",
            "recv",
            "isend",
            "irecv",
            "batch_isend_irecv",
            "barrier",
            "monitored_barrier",
            "_all_gather_base",
            "_reduce_scatter_base",
        ]
    ),
    "torch.manual_seed",
    "torch.seed",
    "torch.set_rng_state",
    "torch.random.manual_seed",
    "torch.random.seed",
    "torch.random.set_rng_state",
    "torch.random.fork_rng",
    "torch.cuda.manual_seed",
    "torch.cuda.manual_seed_all",
    "torch.cuda.seed",
    "torch.cuda.seed_all",
    "torch.cuda.set_rng_state",
    "torch.cuda.set_rng_state_all",
    "torch.cuda.synchronize",
    "torch.cuda.empty_cache",
    "torch.set_default_dtype",
    "torch.set_default_device",
    "torch.set_default_tensor_type",
    "torch.set_printoptions",
    "torch.set_num_threads",
    "torch.set_float32_matmul_precision",
    "torch.use_deterministic_algorithms",
)

#: Of those, the ones a *forward* may call on the split path (``inliner/runtime/_split.py``):
#: measured on torch 2.13 (aot_eager, three calls), dynamo treats the rewrite's call exactly
#: as it treats the original's: traced into the graph (the tensor collectives), or a graph
#: break after which the call runs for real (``broadcast``, ``barrier``, ``manual_seed``...),
#: with the original's outputs, gradients and effects on every call and no more graph breaks.
#: Left out, and so kept eager: what dynamo gets wrong for the original too (object
#: collectives and ``monitored_barrier`` crash it, ``torch.seed`` is run once at trace time,
#: ``record_function`` is dropped), and what could not be measured here (point-to-point
#: sends need two ranks, NVTX a CUDA build).
TORCH_TRACED_IN_FORWARD = (
    *(
        f"torch.distributed.{name}"
        for name in [
            "all_reduce",
            "all_gather",
            "all_gather_into_tensor",
            "all_to_all",
            "all_to_all_single",
            "reduce",
            "reduce_scatter",
            "reduce_scatter_tensor",
            "broadcast",
            "scatter",
            "gather",
            "barrier",
            "_all_gather_base",
            "_reduce_scatter_base",
        ]
    ),
    "torch.manual_seed",
    "torch.random.manual_seed",
    "torch.cuda.manual_seed",
)

#: torch callables fake tensors cannot run, or whose output shape depends on data.
TORCH_OPAQUE = (
    "torch.load",
    "torch.from_numpy",
    "torch.from_dlpack",
    "torch.utils.dlpack",
    "torch.utils.cpp_extension",
    "torch.autograd.grad",
    "torch.autograd.backward",
    "torch.autograd.Function",
    "torch.autograd.function",
    "torch.jit",
    "torch.library",
    "torch._dynamo",
    "torch.compile",
    "torch.compiler.disable",
    "torch.nonzero",
    "torch.argwhere",
    "torch.masked_select",
    "torch.unique",
    "torch.unique_consecutive",
    "torch.bincount",
    "torch.cuda",
    "torch._C",
    "torch.ops",
    "torch.distributed",
)

#: exceptions to TORCH_OPAQUE (longest prefix wins).
TORCH_TRACEABLE = (
    "torch.cuda.amp",
    "torch.cuda.is_available",
    "torch.cuda.device_count",
    "torch.cuda.current_device",
    "torch.cuda.get_device_capability",
    "torch.cuda.is_bf16_supported",
    "torch._C._nn",
    "torch._C._linalg",
    "torch._C._fft",
    "torch._C._special",
    "torch._C._nested",
    "torch._C._VariableFunctions",
    "torch._C._set_grad_enabled",
    "torch._C._get_tracing_state",
    "torch.ops.aten",
    "torch.ops.prims",
    "torch.ops.higher_order",
    "torch.ops._c10d_functional",
    "torch.compiler.is_compiling",
    "torch.compiler.is_dynamo_compiling",
    "torch.jit.is_scripting",
    "torch.jit.is_tracing",
    "torch._dynamo.is_compiling",
    # the same answer on every call of a process: a traced call may keep it
    "torch.distributed.get_rank",
    "torch.distributed.get_world_size",
    "torch.distributed.is_initialized",
    "torch.distributed.is_available",
    "torch.distributed.get_backend",
    "torch.distributed._functional_collectives",
)

#: torch calls that only read metadata: a branch on them is not a branch on tensor data.
TORCH_METADATA = (
    "torch.is_tensor",
    "torch.is_grad_enabled",
    "torch.is_inference_mode_enabled",
    "torch.is_floating_point",
    "torch.is_complex",
    "torch.is_autocast_enabled",
    "torch.is_autocast_cpu_enabled",
    "torch.get_autocast_dtype",
    "torch.get_autocast_gpu_dtype",
    "torch.get_autocast_cpu_dtype",
    "torch.get_default_dtype",
    "torch.numel",
    "torch.are_deterministic_algorithms_enabled",
    "torch.cuda.is_available",
    "torch.compiler.is_compiling",
    "torch.compiler.is_dynamo_compiling",
    "torch.jit.is_scripting",
    "torch.jit.is_tracing",
    "torch.finfo",
    "torch.iinfo",
    "torch.Size",
)

#: tensor methods fake tensors cannot run (a Python value of the data, a data pointer,
#: a data-dependent shape, a Python callable per element, a storage resized or swapped:
#: torch's own CrossMapLRN2d resizes a ``.new()`` tensor, which AOTAutograd's fake
#: tensors refuse, where dynamo breaks the graph for the original).
TENSOR_OPAQUE = frozenset(
    {
        "resize_",
        "resize_as_",
        "set_",
        "item",
        "tolist",
        "numpy",
        "data_ptr",
        "storage",
        "untyped_storage",
        "nonzero",
        "argwhere",
        "masked_select",
        "unique",
        "unique_consecutive",
        "bincount",
        "apply_",
        "map_",
        "map2_",
        "pin_memory",
        "share_memory_",
    }
)

#: tensor methods whose effect goes beyond the returned value (hooks, autograd, streams).
TENSOR_SIDE_EFFECTING = frozenset(
    {
        "backward",
        "register_hook",
        "register_post_accumulate_grad_hook",
        "retain_grad",
        "record_stream",
    }
)

#: tensor methods that only read metadata (a branch on them is not data-dependent).
TENSOR_METADATA = frozenset(
    {
        "size",
        "dim",
        "ndimension",
        "numel",
        "nelement",
        "stride",
        "storage_offset",
        "element_size",
        "is_contiguous",
        "is_floating_point",
        "is_complex",
        "is_signed",
        "is_inference",
        "is_set_to",
        "is_shared",
        "is_pinned",
        "get_device",
        "has_names",
        "type",
        "dim_order",
    }
)

# -- builtins -----------------------------------------------------------------------

BUILTINS_PURE = frozenset(
    [
        "abs",
        "all",
        "any",
        "ascii",
        "bin",
        "bool",
        "bytearray",
        "bytes",
        "callable",
        "chr",
        "complex",
        "dict",
        "dir",
        "divmod",
        "enumerate",
        "float",
        "format",
        "frozenset",
        "getattr",
        "hasattr",
        "hash",
        "hex",
        "id",
        "int",
        "isinstance",
        "issubclass",
        "iter",
        "len",
        "list",
        "max",
        "min",
        "next",
        "object",
        "oct",
        "ord",
        "pow",
        "range",
        "repr",
        "reversed",
        "round",
        "set",
        "slice",
        "sorted",
        "str",
        "sum",
        "tuple",
        "type",
        "zip",
        "filter",
        "map",
        "NotImplemented",
        "Ellipsis",
    ]
)
#: builtins that call a function they are given (``key=`` or a positional callable).
BUILTINS_CALLING = frozenset({"filter", "map", "sorted", "min", "max"})
#: builtins that turn a tensor into a Python number (a data-dependent value).
BUILTINS_CONVERTING = frozenset({"int", "float", "bool", "complex", "range", "round"})
BUILTINS_SIDE_EFFECTING = frozenset(
    {"print", "open", "input", "breakpoint", "exit", "quit", "help", "setattr", "delattr"}
)
#: of those, what a forward may call on the split path: dynamo breaks the graph at ``print``
#: as it does in the original's forward, and the call runs for real (see TORCH_TRACED_IN_FORWARD)
BUILTINS_TRACED_IN_FORWARD = frozenset({"print"})


def is_exception_name(name: str) -> bool:
    """``ValueError``, ``RuntimeWarning``...: constructing one has no effect of its own."""
    return name.endswith(("Error", "Exception", "Warning")) or name in {
        "StopIteration",
        "KeyboardInterrupt",
        "SystemExit",
        "GeneratorExit",
        "BaseException",
    }


# -- the rest of the standard library -------------------------------------------------

#: pure functions on Python values.
STDLIB_PURE = (
    "math.",
    "operator.",
    "cmath.",
    "numbers.",
    "typing.",
    "functools.reduce",
    "itertools.",
    "dataclasses.fields",
    "contextlib.nullcontext",  # enters to its argument; dynamo traces it
)
#: what the original did on every call: output, logging, global Python state.
STDLIB_SIDE_EFFECTING = (
    "logging.",
    "warnings.warn",
    "sys.stdout",
    "sys.stderr",
    "traceback.print",
    "pdb.",
    "random.",
    "numpy.random.",
    "time.sleep",
    "os.environ",
    "os.system",
    "subprocess.",
    "shutil.",
    "pickle.dump",
    "json.dump",
)
#: of those, what a forward may call on the split path: dynamo breaks the graph at a
#: logging call or ``warnings.warn`` as it does in the original's forward, and the call runs
#: for real on every call (see TORCH_TRACED_IN_FORWARD); it reads ``os.environ.get`` as it
#: read it in the original's forward (one graph, no break: measured on torch 2.13)
STDLIB_TRACED_IN_FORWARD = ("logging.", "warnings.warn", "os.environ.get")

# -- containers -------------------------------------------------------------------------

#: methods that mutate a list, dict, set or deque, with how a reason says it.
# what a ctx record answers as ctx did: calls the carrier replays on the real ctx
CTX_METHODS = frozenset(
    {
        "save_for_backward",
        "save_for_forward",
        "mark_dirty",
        "mark_non_differentiable",
        "set_materialize_grads",
    }
)

MUTATING_METHODS = {
    "append": "appends to",
    "extend": "extends",
    "insert": "inserts into",
    "pop": "pops from",
    "remove": "removes from",
    "clear": "clears",
    "update": "updates",
    "setdefault": "updates",
    "popitem": "pops from",
    "add": "adds to",
    "discard": "discards from",
    "sort": "sorts",
    "reverse": "reverses",
    "appendleft": "appends to",
    "extendleft": "extends",
    "popleft": "pops from",
    "rotate": "rotates",
    "put": "puts into",
    "write": "writes to",
}
#: methods of builtin containers and strings that only read.
READING_METHODS = frozenset(
    {
        "get",
        "keys",
        "values",
        "items",
        "copy",
        "index",
        "count",
        "startswith",
        "endswith",
        "split",
        "join",
        "strip",
        "lower",
        "upper",
        "format",
        "replace",
    }
)


def _longest_prefix(name: str, prefixes: tuple[str, ...]) -> int:
    best = -1
    for prefix in prefixes:
        if name == prefix or name.startswith(prefix + ".") or (prefix.endswith(".") and name.startswith(prefix)):
            best = max(best, len(prefix))
    return best


def torch_kind(qualified: str) -> str:
    """The kind of calling the torch callable ``qualified`` (``torch.``-prefixed)."""
    if qualified.startswith("torch.Tensor."):
        return tensor_method_kind(qualified.rsplit(".", 1)[-1]) or TRACEABLE
    side = _longest_prefix(qualified, TORCH_SIDE_EFFECTING)
    opaque = _longest_prefix(qualified, TORCH_OPAQUE)
    fine = _longest_prefix(qualified, TORCH_TRACEABLE)
    if side >= 0 and side >= fine:
        return SIDE_EFFECTING
    if opaque > fine:
        return OPAQUE
    return TRACEABLE


def traced_in_forward(qualified: str) -> bool:
    """Whether a forward's call of the side-effecting ``qualified`` (``torch.``-prefixed or
    not) is one dynamo treats as it treats the original's: the split path may take it."""
    if qualified.startswith("torch."):
        return _longest_prefix(qualified, TORCH_TRACED_IN_FORWARD) >= 0
    return _longest_prefix(qualified, STDLIB_TRACED_IN_FORWARD) >= 0


def tensor_method_kind(method: str) -> str | None:
    """OPAQUE / SIDE_EFFECTING for a tensor method torch cannot trace; None for any other name."""
    if method in TENSOR_SIDE_EFFECTING:
        return SIDE_EFFECTING
    if method in TENSOR_OPAQUE:
        return OPAQUE
    return None


def is_tensor_method(method: str) -> bool:
    return method in TENSOR_METHODS


def stdlib_kind(qualified: str) -> str:
    """The kind of calling a non-torch, non-builtin qualified name (numpy, an extension...)."""
    if _longest_prefix(qualified, STDLIB_SIDE_EFFECTING) >= 0:
        return SIDE_EFFECTING
    if _longest_prefix(qualified, STDLIB_PURE) >= 0:
        return TRACEABLE
    return OPAQUE


def is_torch_metadata(qualified: str) -> bool:
    return _longest_prefix(qualified, TORCH_METADATA) >= 0
