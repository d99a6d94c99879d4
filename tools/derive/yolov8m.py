# YOLOv8m detection model re-typed from ultralytics/cfg/models/v8/yolov8.yaml (scale m: depth 0.67, width 0.75, max_channels 768)
# and ultralytics/nn/modules/{conv,block,head}.py (Conv = Conv2d(bias=False)+BN+SiLU; C2f; SPPF; Detect with reg_max 16)
import torch, torch.nn as nn, sys, math
sys.path.insert(0, '/tmp/derive')
from common import *
class Conv(nn.Module):
    def __init__(s, c1, c2, k=1, st=1):
        super().__init__(); s.conv = nn.Conv2d(c1, c2, k, st, k // 2, bias=False); s.bn = nn.BatchNorm2d(c2, eps=0.001, momentum=0.03); s.act = nn.SiLU()
    def forward(s, x): return s.act(s.bn(s.conv(x)))
class Bottleneck(nn.Module):
    def __init__(s, c1, c2, sc=True):
        super().__init__(); s.cv1 = Conv(c1, c2, 3); s.cv2 = Conv(c2, c2, 3); s.add = sc and c1 == c2
    def forward(s, x): return x + s.cv2(s.cv1(x)) if s.add else s.cv2(s.cv1(x))
class C2f(nn.Module):
    def __init__(s, c1, c2, n=1, sc=False):
        super().__init__(); s.c = int(c2 * 0.5); s.cv1 = Conv(c1, 2 * s.c, 1); s.cv2 = Conv((2 + n) * s.c, c2, 1)
        s.m = nn.ModuleList(Bottleneck(s.c, s.c, sc) for _ in range(n))
    def forward(s, x):
        y = list(s.cv1(x).chunk(2, 1)); y.extend(m(y[-1]) for m in s.m); return s.cv2(torch.cat(y, 1))
class SPPF(nn.Module):
    def __init__(s, c1, c2, k=5):
        super().__init__(); c_ = c1 // 2; s.cv1 = Conv(c1, c_, 1); s.cv2 = Conv(c_ * 4, c2, 1); s.m = nn.MaxPool2d(k, 1, k // 2)
    def forward(s, x):
        y = [s.cv1(x)]; y.extend(s.m(y[-1]) for _ in range(3)); return s.cv2(torch.cat(y, 1))
class Detect(nn.Module):
    def __init__(s, nc, ch):
        super().__init__(); c2 = max(16, ch[0] // 4, 64); c3 = max(ch[0], min(nc, 100))
        s.cv2 = nn.ModuleList(nn.Sequential(Conv(x, c2, 3), Conv(c2, c2, 3), nn.Conv2d(c2, 64, 1)) for x in ch)
        s.cv3 = nn.ModuleList(nn.Sequential(Conv(x, c3, 3), Conv(c3, c3, 3), nn.Conv2d(c3, nc, 1)) for x in ch)
        s.dfl = nn.Conv2d(16, 1, 1, bias=False); s.dfl.requires_grad_(False)
    def forward(s, xs): return [torch.cat((a(x), b(x)), 1) for a, b, x in zip(s.cv2, s.cv3, xs)]  # training-mode output
def ch(c): return math.ceil(min(c, 768) * 0.75 / 8) * 8
def n(k): return max(round(k * 0.67), 1)
class YOLOv8m(nn.Module):
    def __init__(s, nc=80):
        super().__init__()
        s.b0 = Conv(3, ch(64), 3, 2); s.b1 = Conv(ch(64), ch(128), 3, 2); s.b2 = C2f(ch(128), ch(128), n(3), True)
        s.b3 = Conv(ch(128), ch(256), 3, 2); s.b4 = C2f(ch(256), ch(256), n(6), True)
        s.b5 = Conv(ch(256), ch(512), 3, 2); s.b6 = C2f(ch(512), ch(512), n(6), True)
        s.b7 = Conv(ch(512), ch(1024), 3, 2); s.b8 = C2f(ch(1024), ch(1024), n(3), True); s.b9 = SPPF(ch(1024), ch(1024))
        s.up = nn.Upsample(scale_factor=2, mode='nearest')
        s.h12 = C2f(ch(1024) + ch(512), ch(512), n(3)); s.h15 = C2f(ch(512) + ch(256), ch(256), n(3))
        s.h16 = Conv(ch(256), ch(256), 3, 2); s.h18 = C2f(ch(256) + ch(512), ch(512), n(3))
        s.h19 = Conv(ch(512), ch(512), 3, 2); s.h21 = C2f(ch(512) + ch(1024), ch(1024), n(3))
        s.det = Detect(nc, (ch(256), ch(512), ch(1024)))
    def forward(s, x):
        x = s.b2(s.b1(s.b0(x))); p3 = s.b4(s.b3(x)); p4 = s.b6(s.b5(p3)); p5 = s.b9(s.b8(s.b7(p4)))
        h12 = s.h12(torch.cat((s.up(p5), p4), 1)); h15 = s.h15(torch.cat((s.up(h12), p3), 1))
        h18 = s.h18(torch.cat((s.h16(h15), h12), 1)); h21 = s.h21(torch.cat((s.h19(h18), p5), 1))
        return s.det([h15, h18, h21])
m = YOLOv8m(); m.train()
print("params", f"{count_params(m):,}", "channels", [ch(c) for c in (64,128,256,512,1024)], "depths", [n(3), n(6)])
MiB = 2**20
x = torch.randn(1, 3, 640, 640)
mc = MacCounter(m)
with torch.no_grad(): m(x)
print("MACs %.2fG FLOPs %.1fG" % (mc.macs/1e9, 2*mc.macs/1e9)); mc.close()
b, _ = saved_bytes(m, (x,))
print("saved %.1f MiB" % (b/MiB))
