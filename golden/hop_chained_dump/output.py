"""A torch 2.13 dynamo graph (print_readable) of three chained Functions: each result feeds the next call."""
import torch
from inliner.runtime import custom_vjp


def save_inputs_fwd(l_x_: "f32[4]", l_w_: "f32[4]"):
    outs: "f32[4]" = l_x_ * l_w_
    return ((outs,), (l_w_, l_x_))


def save_inputs_bwd(residuals, g: "f32[4]"):
    l_w_, l_x_ = residuals
    mul: "f32[4]" = g * l_w_
    mul_1: "f32[4]" = mul * 3
    mul_2: "f32[4]" = g * l_x_
    mul_3: "f32[4]" = mul_2 * 5
    return (mul_1, mul_3)


SaveInputs = custom_vjp(
    save_inputs_fwd, save_inputs_bwd, name="SaveInputs", saved_for_backward_idx=(0, 1)
)


def save_intermediate_fwd(getitem: "f32[4]"):
    y: "f32[4]" = getitem.sin()

    outs: "f32[4]" = y * 2
    return ((outs,), (y,))


def save_intermediate_bwd(residuals, g: "f32[4]"):
    (y,) = residuals
    mul: "f32[4]" = g * y
    mul_1: "f32[4]" = mul * 7
    return (mul_1,)


SaveIntermediate = custom_vjp(
    save_intermediate_fwd,
    save_intermediate_bwd,
    name="SaveIntermediate",
    saved_for_backward_idx=(0,),
)


def save_inputs_1_fwd(getitem_1: "f32[4]", l_w_: "f32[4]"):
    outs: "f32[4]" = getitem_1 * l_w_
    return ((outs,), (l_w_, getitem_1))


def save_inputs_1_bwd(residuals, g: "f32[4]"):
    l_w_, getitem_1 = residuals
    mul: "f32[4]" = g * l_w_
    mul_1: "f32[4]" = mul * 3
    mul_2: "f32[4]" = g * getitem_1
    mul_3: "f32[4]" = mul_2 * 5
    return (mul_1, mul_3)


SaveInputs_1 = custom_vjp(
    save_inputs_1_fwd,
    save_inputs_1_bwd,
    name="SaveInputs_1",
    saved_for_backward_idx=(0, 1),
)


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[4]", L_w_: "f32[4]"):
        l_x_ = L_x_
        l_w_ = L_w_

        # File: /work/model.py:6 in f, code: a1 = SaveInputs.apply(x, w)
        save_inputs = SaveInputs(l_x_, l_w_);  l_x_ = None
        getitem: "f32[4]" = save_inputs[0];  save_inputs = None

        # File: /work/model.py:7 in f, code: a2 = SaveIntermediate.apply(a1)
        save_intermediate = SaveIntermediate(getitem);  getitem = None
        getitem_1: "f32[4]" = save_intermediate[0];  save_intermediate = None

        # File: /work/model.py:8 in f, code: a3 = SaveInputs.apply(a2, w)
        save_inputs_1 = SaveInputs_1(getitem_1, l_w_);  getitem_1 = l_w_ = None
        getitem_2: "f32[4]" = save_inputs_1[0];  save_inputs_1 = None
        return (getitem_2,)


def scenario_graph():
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [x, w], GraphModule()(x, w)


def scenario_graph_x_only():
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4)
    return [x], GraphModule()(x, w)
