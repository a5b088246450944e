import torch
from inliner.runtime import custom_vjp


def h_fwd(l_x_: "f32[3]"):
    sin: "f32[3]" = l_x_.sin()
    mul: "f32[3]" = sin * 2.0
    return (mul, [l_x_])


def h_bwd(residuals, g: "f32[3]"):
    (l_x_,) = residuals
    cos: "f32[3]" = l_x_.cos()
    mul: "f32[3]" = g * cos
    mul_1: "f32[3]" = mul * 7
    return mul_1


H = custom_vjp(h_fwd, h_bwd, name="H")


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3]"):
        l_x_ = L_x_

        # File: /work/t.py:17 in f, code: return H.apply(x, 2.0).sum()
        h = H(l_x_);  l_x_ = None
        sum_1: "f32[]" = h.sum();  h = None
        return (sum_1,)


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    return [x], GraphModule()(x)
