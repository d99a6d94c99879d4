# SDXL base 1.0 UNet re-typed from the diffusers UNet2DConditionModel config
# (block_out_channels [320,640,1280], layers_per_block 2, transformer_layers_per_block [1,2,10],
#  attention_head_dim [5,10,20] (= number of heads; head dim 64), cross_attention_dim 2048,
#  addition_embed_type text_time, projection_class_embeddings_input_dim 2816, use_linear_projection true,
#  down: DownBlock2D, CrossAttnDownBlock2D, CrossAttnDownBlock2D; up: CrossAttnUpBlock2D x2, UpBlock2D)
# Attention is a custom autograd Function that keeps only q, k, v, out, lse for backward
# (what SDPA/flash/xformers memory-efficient kernels keep) instead of the N x N probabilities.
import torch, torch.nn as nn, torch.nn.functional as F, sys, math
sys.path.insert(0, '/tmp/derive')
from common import *
ATT_MACS = [0]
class MEAttn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v):
        s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        lse = torch.logsumexp(s, -1)
        out = torch.softmax(s, -1) @ v
        ctx.save_for_backward(q, k, v, out, lse)
        return out
    @staticmethod
    def backward(ctx, g): raise NotImplementedError
class Attention(nn.Module):
    def __init__(s, d, heads, ctx_dim=None):
        super().__init__(); cd = ctx_dim or d; s.h = heads
        s.to_q = nn.Linear(d, d, bias=False); s.to_k = nn.Linear(cd, d, bias=False); s.to_v = nn.Linear(cd, d, bias=False)
        s.to_out = nn.Linear(d, d)
    def forward(s, x, ctx=None):
        c = x if ctx is None else ctx
        B, N, D = x.shape; M = c.shape[1]; hd = D // s.h
        q = s.to_q(x).view(B, N, s.h, hd).transpose(1, 2); k = s.to_k(c).view(B, M, s.h, hd).transpose(1, 2); v = s.to_v(c).view(B, M, s.h, hd).transpose(1, 2)
        ATT_MACS[0] += 2 * B * s.h * N * M * hd
        o = MEAttn.apply(q, k, v)
        return s.to_out(o.transpose(1, 2).reshape(B, N, D))
class GEGLU(nn.Module):
    def __init__(s, d, inner): super().__init__(); s.proj = nn.Linear(d, inner * 2)
    def forward(s, x): a, g = s.proj(x).chunk(2, -1); return a * F.gelu(g)
class Block(nn.Module):
    def __init__(s, d, heads):
        super().__init__(); s.n1 = nn.LayerNorm(d); s.a1 = Attention(d, heads); s.n2 = nn.LayerNorm(d); s.a2 = Attention(d, heads, 2048)
        s.n3 = nn.LayerNorm(d); s.ff = nn.Sequential(GEGLU(d, 4 * d), nn.Linear(4 * d, d))
    def forward(s, x, ctx):
        x = s.a1(s.n1(x)) + x; x = s.a2(s.n2(x), ctx) + x; return s.ff(s.n3(x)) + x
class T2D(nn.Module):
    def __init__(s, c, depth):
        super().__init__(); s.norm = nn.GroupNorm(32, c, eps=1e-6); s.pi = nn.Linear(c, c); s.blocks = nn.ModuleList(Block(c, c // 64) for _ in range(depth)); s.po = nn.Linear(c, c)
    def forward(s, x, ctx):
        B, C, H, W = x.shape; r = x
        h = s.norm(x).permute(0, 2, 3, 1).reshape(B, H * W, C); h = s.pi(h)
        for b in s.blocks: h = b(h, ctx)
        h = s.po(h).reshape(B, H, W, C).permute(0, 3, 1, 2)
        return h + r
class Res(nn.Module):
    def __init__(s, ci, co):
        super().__init__(); s.n1 = nn.GroupNorm(32, ci, eps=1e-5); s.c1 = nn.Conv2d(ci, co, 3, 1, 1); s.t = nn.Linear(1280, co)
        s.n2 = nn.GroupNorm(32, co, eps=1e-5); s.c2 = nn.Conv2d(co, co, 3, 1, 1); s.sc = nn.Conv2d(ci, co, 1) if ci != co else None
    def forward(s, x, temb):
        h = s.c1(F.silu(s.n1(x))); h = h + s.t(F.silu(temb))[:, :, None, None]; h = s.c2(F.silu(s.n2(h)))
        return (s.sc(x) if s.sc is not None else x) + h
class UNet(nn.Module):
    def __init__(s):
        super().__init__()
        s.time = nn.Sequential(nn.Linear(320, 1280), nn.SiLU(), nn.Linear(1280, 1280))
        s.add = nn.Sequential(nn.Linear(2816, 1280), nn.SiLU(), nn.Linear(1280, 1280))
        s.conv_in = nn.Conv2d(4, 320, 3, 1, 1)
        s.d0 = nn.ModuleList([Res(320, 320), Res(320, 320)]); s.ds0 = nn.Conv2d(320, 320, 3, 2, 1)
        s.d1 = nn.ModuleList([Res(320, 640), Res(640, 640)]); s.d1a = nn.ModuleList([T2D(640, 2), T2D(640, 2)]); s.ds1 = nn.Conv2d(640, 640, 3, 2, 1)
        s.d2 = nn.ModuleList([Res(640, 1280), Res(1280, 1280)]); s.d2a = nn.ModuleList([T2D(1280, 10), T2D(1280, 10)])
        s.m1 = Res(1280, 1280); s.ma = T2D(1280, 10); s.m2 = Res(1280, 1280)
        s.u0 = nn.ModuleList([Res(2560, 1280), Res(2560, 1280), Res(1920, 1280)]); s.u0a = nn.ModuleList([T2D(1280, 10) for _ in range(3)]); s.us0 = nn.Conv2d(1280, 1280, 3, 1, 1)
        s.u1 = nn.ModuleList([Res(1920, 640), Res(1280, 640), Res(960, 640)]); s.u1a = nn.ModuleList([T2D(640, 2) for _ in range(3)]); s.us1 = nn.Conv2d(640, 640, 3, 1, 1)
        s.u2 = nn.ModuleList([Res(960, 320), Res(640, 320), Res(640, 320)])
        s.no = nn.GroupNorm(32, 320, eps=1e-5); s.conv_out = nn.Conv2d(320, 4, 3, 1, 1)
    def forward(s, x, tproj, addin, ctx):
        temb = s.time(tproj) + s.add(addin)
        h = s.conv_in(x); sk = [h]
        for r in s.d0: h = r(h, temb); sk.append(h)
        h = s.ds0(h); sk.append(h)
        for r, a in zip(s.d1, s.d1a): h = a(r(h, temb), ctx); sk.append(h)
        h = s.ds1(h); sk.append(h)
        for r, a in zip(s.d2, s.d2a): h = a(r(h, temb), ctx); sk.append(h)
        h = s.m2(s.ma(s.m1(h, temb), ctx), temb)
        for r, a in zip(s.u0, s.u0a): h = a(r(torch.cat((h, sk.pop()), 1), temb), ctx)
        h = s.us0(F.interpolate(h, scale_factor=2.0, mode='nearest'))
        for r, a in zip(s.u1, s.u1a): h = a(r(torch.cat((h, sk.pop()), 1), temb), ctx)
        h = s.us1(F.interpolate(h, scale_factor=2.0, mode='nearest'))
        for r in s.u2: h = r(torch.cat((h, sk.pop()), 1), temb)
        return s.conv_out(F.silu(s.no(h)))
dev = sys.argv[1] if len(sys.argv) > 1 else 'meta'
m = UNet().to(dev); m.train()
print("params", f"{count_params(m):,}")
MiB = 2**20
args = (torch.randn(1, 4, 128, 128, device=dev), torch.randn(1, 320, device=dev), torch.randn(1, 2816, device=dev), torch.randn(1, 77, 2048, device=dev))
mc = MacCounter(m); ATT_MACS[0] = 0
with torch.no_grad(): m(*args)
macs = mc.macs + ATT_MACS[0]; mc.close()
print("MACs %.1fG (attention matmuls %.1fG) FLOPs %.1fG" % (macs/1e9, ATT_MACS[0]/1e9, 2*macs/1e9))
b, _ = saved_bytes(m, args)
print("saved %.1f MiB" % (b/MiB))
