import torch


def run(fwd, bwd, x):
    return torch.ops.higher_order.autograd_function_apply(
        fwd, bwd, x, non_differentiable_idx=[], saved_for_backward_idx=[]
    )


def scenario_unrelated():
    x = torch.randn(3, requires_grad=True)
    return [x], x * 2
