import torch
from inliner.runtime import custom_vjp

W = torch.full((3,), 0.5, requires_grad=True)


def free_fwd(l_x_: "f32[3]", g_w_: "f32[3]"):
    mul: "f32[3]" = l_x_ * g_w_
    return (mul, [])


def free_bwd(residuals, g: "f32[3]"):
    mul: "f32[3]" = g * 3
    return (mul, None)


Free = custom_vjp(free_fwd, free_bwd, name="Free")


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", G_W_: "f32[3]"):
        l_x_ = L_x_
        g_w_ = G_W_

        # File: /work/t.py:19 in f, code: return Free.apply(x).sum()
        free = Free(l_x_, g_w_);  l_x_ = g_w_ = None
        sum_1: "f32[]" = free.sum();  free = None
        return (sum_1,)


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    return [x, W], GraphModule()(x, W)
