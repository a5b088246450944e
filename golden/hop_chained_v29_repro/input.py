# A thunderfx reproducer (lightning-thunder 0.2.6, torch 2.9.1) of three nested Function calls;
# thunder's imports are moved into its test function so that the file imports without thunder.
from math import inf
from math import nan
NoneType = type(None)
import torch
from torch import device
import torch.fx._pytree as fx_pytree
import torch.utils._pytree as pytree


class DynamoModule(torch.nn.Module):
    def forward(self, l_h_: "f32[4][1]cpu", l_w_: "f32[4][1]cpu"):
         # File: /work/model.py:9 in f_nested, code: return o.NonTensorAttr.apply(o.SaveIntermediate.apply(o.SaveInputs.apply(h, w)), 3.0)
        fwd_body_0 = self.fwd_body_0()
        bwd_body_0 = self.bwd_body_0()
        fwd_body_1 = self.fwd_body_1()
        bwd_body_1 = self.bwd_body_1()
        fwd_body_2 = self.fwd_body_2()
        bwd_body_2 = self.bwd_body_2()
        autograd_function_apply: "f32[4][1]cpu" = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_h_, l_w_, args_tensor_mask = [True, True], non_differentiable_idx = []);  fwd_body_0 = bwd_body_0 = l_h_ = l_w_ = None
        autograd_function_apply_1: "f32[4][1]cpu" = torch.ops.higher_order.autograd_function_apply(fwd_body_1, bwd_body_1, autograd_function_apply, args_tensor_mask = [True], non_differentiable_idx = []);  fwd_body_1 = bwd_body_1 = autograd_function_apply = None
        autograd_function_apply_2: "f32[4][1]cpu" = torch.ops.higher_order.autograd_function_apply(fwd_body_2, bwd_body_2, autograd_function_apply_1, args_tensor_mask = [True, False], non_differentiable_idx = []);  fwd_body_2 = bwd_body_2 = autograd_function_apply_1 = None
        return autograd_function_apply_2
        
    class fwd_body_0(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, x: "f32[4][1]cpu", w: "f32[4][1]cpu"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None
            
             # File: /work/layers.py:19 in forward, code: return x * w
            mul: "f32[4][1]cpu" = x * w
            
            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul, [w, x])
            
    class bwd_body_0(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, g: "f32[4][1]cpu", w: "f32[4][1]cpu", x: "f32[4][1]cpu"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None
            
             # File: /work/layers.py:24 in backward, code: return g * w * 3, g * x * 5
            mul: "f32[4][1]cpu" = g * w;  w = None
            mul_1: "f32[4][1]cpu" = mul * 3;  mul = None
            mul_2: "f32[4][1]cpu" = g * x;  g = x = None
            mul_3: "f32[4][1]cpu" = mul_2 * 5;  mul_2 = None
            
            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1, mul_3)
            
    class fwd_body_1(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, x: "f32[4][1]cpu"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None
            
             # File: /work/layers.py:30 in forward, code: y = x.sin()
            y: "f32[4][1]cpu" = x.sin();  x = None
            
             # File: /work/layers.py:32 in forward, code: return y * 2
            mul: "f32[4][1]cpu" = y * 2
            
            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul, [y])
            
    class bwd_body_1(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, g: "f32[4][1]cpu", y: "f32[4][1]cpu"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None
            
             # File: /work/layers.py:37 in backward, code: return g * y * 7
            mul: "f32[4][1]cpu" = g * y;  g = y = None
            mul_1: "f32[4][1]cpu" = mul * 7;  mul = None
            
            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return mul_1
            
    class fwd_body_2(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, x: "f32[4][1]cpu"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None
            
             # File: /work/layers.py:44 in forward, code: return x * k
            mul: "f32[4][1]cpu" = x * 3.0;  x = None
            
            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul, [])
            
    class bwd_body_2(torch.nn.Module):
        def forward(self, ctx : torch.autograd.function.Function, g: "f32[4][1]cpu"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None
            
             # File: /work/layers.py:48 in backward, code: return g * ctx.k * 11, None
            mul: "f32[4][1]cpu" = g * 3.0;  g = None
            mul_1: "f32[4][1]cpu" = mul * 11;  mul = None
            
            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_1,)
            
def test_graph0_thunder_0():
    import thunder

    inputs = [
        torch.testing.make_tensor((4,), dtype=torch.float32,  device='cpu', requires_grad=True, low=-2.1787893772125244, high=1.5409960746765137,),
        torch.testing.make_tensor((4,), dtype=torch.float32,  device='cpu', requires_grad=True, low=-1.3985954523086548, high=0.8380263447761536,),
    ]

    model = DynamoModule()
    compiled_model = thunder.jit(model, fusion_type='dataflow',thunderfx_disable_split_autograd=True,)
    from thunder.dynamo.report import run_forward_backward
    fwd_result, grads = run_forward_backward(compiled_model, *inputs)
    eager_fwd_result, eager_grads = run_forward_backward(model, *inputs)
    torch.testing.assert_close(fwd_result, eager_fwd_result)
    torch.testing.assert_close(grads, eager_grads)


if __name__ == "__main__":
    test_graph0_thunder_0()


"""
Environment information get from `torch.utils.collect_env.get_pretty_env_info()`:
CUDA devices:
CUDA version: 12.8
torch==2.9.1

Versions of Thunder related libraries:
lightning-thunder==0.2.6

Split Information:
The original graph is not split, and is entirely run by Thunder.

"""


def scenario_repro():
    h = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [h, w], DynamoModule()(h, w)


def scenario_repro_h_only():
    h = torch.randn(4, requires_grad=True)
    w = torch.randn(4)
    return [h], DynamoModule()(h, w)
