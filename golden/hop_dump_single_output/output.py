import torch
from inliner.runtime import custom_vjp


def one_fwd(l_x_: "f32[3]"):
    outs: "f32[3]" = l_x_.exp()
    return ((outs,), (l_x_,))


def one_bwd(residuals, g: "f32[3]"):
    (l_x_,) = residuals
    mul: "f32[3]" = g * l_x_
    mul_1: "f32[3]" = mul * 3
    return (mul_1,)


One = custom_vjp(one_fwd, one_bwd, name="One", saved_for_backward_idx=(0,))


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3]"):
        l_x_ = L_x_

        # File: /tmp/hop/gen2.py:23 in f_one, code: return One.apply(x).sum()
        one = One(l_x_);  l_x_ = None
        getitem: "f32[3]" = one[0];  one = None
        sum_1: "f32[]" = getitem.sum();  getitem = None
        return (sum_1,)


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    return [x], GraphModule()(x)
