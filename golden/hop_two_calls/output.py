import torch
from inliner.runtime import custom_vjp


def save_inputs_fwd(l_x_: "f32[3]", l_w_: "f32[3]"):
    outs: "f32[3]" = l_x_ * l_w_
    return ((outs,), (l_w_, l_x_))


def save_inputs_bwd(residuals, g: "f32[3]"):
    l_w_, l_x_ = residuals
    mul: "f32[3]" = g * l_w_
    mul_1: "f32[3]" = mul * 3
    mul_2: "f32[3]" = g * l_x_
    mul_3: "f32[3]" = mul_2 * 5
    return (mul_1, mul_3)


SaveInputs = custom_vjp(
    save_inputs_fwd, save_inputs_bwd, name="SaveInputs", saved_for_backward_idx=(0, 1)
)


def save_intermediate_fwd(l_x_: "f32[3]"):
    y: "f32[3]" = l_x_.sin()

    outs: "f32[3]" = y * 2
    return ((outs,), (y,))


def save_intermediate_bwd(residuals, g: "f32[3]"):
    (y,) = residuals
    mul: "f32[3]" = g * y
    mul_1: "f32[3]" = mul * 7
    return (mul_1,)


SaveIntermediate = custom_vjp(
    save_intermediate_fwd,
    save_intermediate_bwd,
    name="SaveIntermediate",
    saved_for_backward_idx=(0,),
)


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", L_w_: "f32[3]"):
        l_x_ = L_x_
        l_w_ = L_w_

        # File: /work/model.py:22 in f, code: return (SaveInputs.apply(x, w) + SaveIntermediate.apply(x)).sum()
        save_inputs = SaveInputs(l_x_, l_w_);  l_w_ = None
        getitem: "f32[3]" = save_inputs[0];  save_inputs = None
        save_intermediate = SaveIntermediate(l_x_);  l_x_ = None
        getitem_1: "f32[3]" = save_intermediate[0];  save_intermediate = None
        add: "f32[3]" = getitem + getitem_1;  getitem = getitem_1 = None
        sum_1: "f32[]" = add.sum();  add = None
        return (sum_1,)


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], GraphModule()(x, w)
