import torch
from inliner.runtime import custom_vjp


def f_fwd(l_x_: "f32[3]", l_w_: "f32[3]"):
    y: "f32[3]" = l_x_ * l_w_

    sin: "f32[3]" = y.sin()
    out: "f32[3]" = sin * 3.0
    out_1: "i64[]" = y.argmax()
    return ((out, out_1), (y, l_w_, l_x_))


def f_bwd(residuals, g: "f32[3]", gi: "i64[]"):
    y, l_w_, l_x_ = residuals
    cos: "f32[3]" = y.cos()
    mul: "f32[3]" = g * cos
    mul_1: "f32[3]" = mul * 3.0
    mul_2: "f32[3]" = mul_1 * 7
    mul_3: "f32[3]" = mul_2 * l_w_
    mul_4: "f32[3]" = g * l_x_
    mul_5: "f32[3]" = mul_4 * 3
    return (mul_3, mul_5)


F = custom_vjp(f_fwd, f_bwd, name="F", saved_for_backward_idx=(0, 2))


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", L_w_: "f32[3]"):
        l_x_ = L_x_
        l_w_ = L_w_

        # File: /tmp/hop/gen.py:16 in f, code: a, i = F.apply(x, w, 3.0)
        f = F(l_x_, l_w_);  l_x_ = l_w_ = None
        getitem: "f32[3]" = f[0]
        getitem_1: "i64[]" = f[1];  f = None

        # File: /tmp/hop/gen.py:17 in f, code: return a.sum() + i
        sum_1: "f32[]" = getitem.sum();  getitem = None
        add: "f32[]" = sum_1 + getitem_1;  sum_1 = getitem_1 = None
        return (add,)


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], GraphModule()(x, w)
