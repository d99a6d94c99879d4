# MLPerf training image_segmentation/pytorch/model/{unet3d,layers}.py re-typed (instancenorm, relu defaults)
import torch, torch.nn as nn, sys
sys.path.insert(0, '/tmp/derive')
from common import *
def cb(i, o, k=3, s=1, p=1, t="regular", norm=True, act=True):
    conv = (nn.ConvTranspose3d if t == "transpose" else nn.Conv3d)(i, o, kernel_size=k, stride=s, padding=p, bias=not norm)
    return nn.Sequential(conv, nn.InstanceNorm3d(o, affine=True) if norm else nn.Identity(), nn.ReLU() if act else nn.Identity())
class Down(nn.Module):
    def __init__(s, i, o): super().__init__(); s.c1 = cb(i, o, s=2); s.c2 = cb(o, o)
    def forward(s, x): return s.c2(s.c1(x))
class Up(nn.Module):
    def __init__(s, i, o):
        super().__init__(); s.u = cb(i, o, k=2, s=2, p=0, t="transpose", norm=False, act=False)
        s.c1 = cb(2*o, o); s.c2 = cb(o, o)
    def forward(s, x, skip): return s.c2(s.c1(torch.cat((s.u(x), skip), 1)))
class Inp(nn.Module):
    def __init__(s, i, o): super().__init__(); s.c1 = cb(i, o); s.c2 = cb(o, o)
    def forward(s, x): return s.c2(s.c1(x))
class Unet3D(nn.Module):
    def __init__(s, ic=1, nc=3):
        super().__init__(); f = [32, 64, 128, 256, 320]
        s.inp = Inp(ic, f[0]); s.down = nn.ModuleList([Down(i, o) for i, o in zip(f[:-1], f[1:])])
        s.bott = Down(f[-1], f[-1])
        ups = [Up(f[-1], f[-1])] + [Up(i, o) for i, o in zip(reversed(f[1:]), reversed(f[:-1]))]
        s.up = nn.ModuleList(ups); s.out = cb(f[0], nc, k=1, p=0, norm=False, act=False)
    def forward(s, x):
        x = s.inp(x); outs = [x]
        for d in s.down: x = d(x); outs.append(x)
        x = s.bott(x)
        for u, sk in zip(s.up, reversed(outs)): x = u(x, sk)
        return s.out(x)
m = Unet3D(); m.train()
print("params", f"{count_params(m):,}")
MiB = 2**20
for P in (128,):
    x = torch.randn(1, 1, P, P, P)
    mc = MacCounter(m)
    with torch.no_grad(): m(x)
    print(P, "MACs %.2fG FLOPs %.1fG" % (mc.macs/1e9, 2*mc.macs/1e9)); mc.close()
    b, _ = saved_bytes(m, (x,))
    print(P, "saved %.1f MiB" % (b/MiB))
