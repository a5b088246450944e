import torch


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3]"):
        l_x_ = L_x_
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_x_, non_differentiable_idx = [], saved_for_backward_idx = []);  fwd_body_0 = bwd_body_0 = l_x_ = None
        getitem: "f32[3]" = autograd_function_apply[0];  autograd_function_apply = None
        return (getitem,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, l_x_: "f32[3]"):
            scale = self.scale
            mul: "f32[3]" = l_x_ * scale
            return ((mul,), ())

    class bwd_body_0(torch.nn.Module):
        def forward(self, g: "f32[3]"):
            return (g,)


def scenario_unrelated():
    x = torch.randn(3, requires_grad=True)
    return [x], x * 2
