"""Tensor-parallel mappings with ONNX symbolics (single process: the collectives are stand-ins)."""

import torch


def _reduce(input_):
    return input_ * 1.0


class _CopyToModelParallelRegion(torch.autograd.Function):
    """Pass the input to the model-parallel region."""

    @staticmethod
    def symbolic(graph, input_):
        return input_

    @staticmethod
    def forward(ctx, input_):
        return input_

    @staticmethod
    def backward(ctx, grad_output):
        return _reduce(grad_output) * 2


class _ReduceFromModelParallelRegion(torch.autograd.Function):
    """All-reduce the input from the model-parallel region."""

    @staticmethod
    def symbolic(graph, input_):
        return graph.op("Identity", input_)

    @staticmethod
    def forward(ctx, input_):
        return _reduce(input_) + 1

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 3


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
