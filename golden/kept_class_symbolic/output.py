"""Tensor-parallel mappings with ONNX symbolics (single process: the collectives are stand-ins)."""

import torch
from inliner.runtime import FlatClass, custom_vjp


def _reduce(input_):
    return input_ * 1.0


def copy_to_model_parallel_region_fwd(input_):
    return input_, ()


def copy_to_model_parallel_region_bwd(residuals, grad_output):
    return _reduce(grad_output) * 2


class _CopyToModelParallelRegion(FlatClass):
    """Pass the input to the model-parallel region."""

    @staticmethod
    def symbolic(graph, input_):
        return input_

    apply = staticmethod(
        custom_vjp(
            copy_to_model_parallel_region_fwd,
            copy_to_model_parallel_region_bwd,
            name="_CopyToModelParallelRegion",
            symbolic=symbolic,
        )
    )


def reduce_from_model_parallel_region_fwd(input_):
    return _reduce(input_) + 1, ()


def reduce_from_model_parallel_region_bwd(residuals, grad_output):
    return grad_output * 3


class _ReduceFromModelParallelRegion(FlatClass):
    """All-reduce the input from the model-parallel region."""

    @staticmethod
    def symbolic(graph, input_):
        return graph.op("Identity", input_)

    apply = staticmethod(
        custom_vjp(
            reduce_from_model_parallel_region_fwd,
            reduce_from_model_parallel_region_bwd,
            name="_ReduceFromModelParallelRegion",
            symbolic=symbolic,
        )
    )


def copy_to_tensor_model_parallel_region(input_):
    return _CopyToModelParallelRegion.apply(input_)


def reduce_from_tensor_model_parallel_region(input_):
    return _ReduceFromModelParallelRegion.apply(input_)


def scenario_mappings():
    x = torch.randn(4, requires_grad=True)
    y = copy_to_tensor_model_parallel_region(x)
    return [x], (y, reduce_from_tensor_model_parallel_region(y * 2))


def scenario_symbolic_reachable():
    x = torch.randn(4, requires_grad=True)
    return [x], _CopyToModelParallelRegion.symbolic(None, x)
