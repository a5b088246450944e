"""torch 2.9.1 dumps of Functions that read a module-level tensor W (a lifted operand, with no
gradient slot of its own): backward bodies returning one tensor, a 1-tuple and a 2-tuple."""
import torch

W = torch.full((3,), 0.5, requires_grad=True)


class OneInGraph(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", G_W_: "f32[3]"):
        l_x_ = L_x_
        g_w_ = G_W_

         # File: /work/model.py:64 in f_one_in, code: def f_one_in(x): return OneIn.apply(x)
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply: "f32[3]" = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_x_, g_w_, args_tensor_mask = [True], non_differentiable_idx = []);  fwd_body_0 = bwd_body_0 = l_x_ = g_w_ = None
        return (autograd_function_apply,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, x: "f32[3]", g_w_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

             # File: /work/model.py:42 in forward, code: return x * W
            mul: "f32[3]" = x * g_w_;  g_w_ = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul, [x])

    class bwd_body_0(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, g: "f32[3]", x: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

             # File: /work/model.py:46 in backward, code: return g * x * 3
            mul: "f32[3]" = g * x;  g = x = None
            mul_1: "f32[3]" = mul * 3;  mul = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return mul_1



class OneInTupleGraph(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", G_W_: "f32[3]"):
        l_x_ = L_x_
        g_w_ = G_W_

         # File: /work/model.py:65 in f_one_in_tuple, code: def f_one_in_tuple(x): return OneInTuple.apply(x)
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_x_, g_w_, args_tensor_mask = [True], non_differentiable_idx = []);  fwd_body_0 = bwd_body_0 = l_x_ = g_w_ = None
        getitem: "f32[3]" = autograd_function_apply[0]
        getitem_1: "f32[3]" = autograd_function_apply[1];  autograd_function_apply = None
        return (getitem, getitem_1)

    class fwd_body_0(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, x: "f32[3]", g_w_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

             # File: /work/model.py:51 in forward, code: return x * W, x.cos()
            mul: "f32[3]" = x * g_w_;  g_w_ = None
            cos: "f32[3]" = x.cos();  x = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return ((mul, cos), [])

    class bwd_body_0(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, g: "f32[3]", h: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

             # File: /work/model.py:54 in backward, code: return (g * 3 + h,)
            mul: "f32[3]" = g * 3;  g = None
            add: "f32[3]" = mul + h;  mul = h = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (add,)



class TwoInGraph(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", L_y_: "f32[3]", G_W_: "f32[3]"):
        l_x_ = L_x_
        l_y_ = L_y_
        g_w_ = G_W_

         # File: /work/model.py:63 in f_two_in, code: def f_two_in(x, y): return TwoIn.apply(x, y)
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply: "f32[3]" = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_x_, l_y_, g_w_, args_tensor_mask = [True, True], non_differentiable_idx = []);  fwd_body_0 = bwd_body_0 = l_x_ = l_y_ = g_w_ = None
        return (autograd_function_apply,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, x: "f32[3]", y: "f32[3]", g_w_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

             # File: /work/model.py:32 in forward, code: return x * y * W
            mul: "f32[3]" = x * y
            mul_1: "f32[3]" = mul * g_w_;  mul = g_w_ = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1, [y, x])

    class bwd_body_0(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, g: "f32[3]", y: "f32[3]", x: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

             # File: /work/model.py:36 in backward, code: return g * y * 3, g * x * 5
            mul: "f32[3]" = g * y;  y = None
            mul_1: "f32[3]" = mul * 3;  mul = None
            mul_2: "f32[3]" = g * x;  g = x = None
            mul_3: "f32[3]" = mul_2 * 5;  mul_2 = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1, mul_3)



def scenario_one_tensor():
    x = torch.randn(3, requires_grad=True)
    return [x, W], OneInGraph()(x, W)


def scenario_one_tuple():
    x = torch.randn(3, requires_grad=True)
    return [x, W], OneInTupleGraph()(x, W)


def scenario_two_tuple():
    x = torch.randn(3, requires_grad=True)
    y = torch.randn(3, requires_grad=True)
    return [x, y, W], TwoInGraph()(x, y, W)
