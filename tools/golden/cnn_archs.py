"""Quantizable CNN architectures written without torchvision, for torch versions Debian's torchvision does
not serve (PyPI's torchvision wheels need CUDA torch): ResNet18, MobileNetV2, MobileNetV3-Large and
ShuffleNetV2 x1.0 with the layer structure of torchvision's quantizable models (torchvision.models.quantization:
QuantStub / DeQuantStub, FloatFunctional adds / muls / cats, ReLU in place of ReLU6 in MobileNetV2, the
fusion lists of their fuse_model). Random weights: what tools/golden/torch2_models.py exports only needs the
structure, the operators and realistic activation ranges.

Each builder returns a float model with .fuse_model() (eager-mode fusion).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.ao.nn.quantized import FloatFunctional
from torch.ao.quantization import DeQuantStub, QuantStub, fuse_modules


def _divisible(v, divisor=8):
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


def conv_bn(cin, cout, k, stride=1, groups=1, act=nn.ReLU):
    """[Conv2d (no bias), BatchNorm2d, activation or nothing] as an nn.Sequential named 0, 1, 2."""
    layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


def _fuse_features(features):
    """Fuses a features Sequential of conv_bn blocks and blocks with their own fuse_model."""
    for m in features:
        if isinstance(m, nn.Sequential):
            _fuse_conv_bn(m, True)
        else:
            m.fuse_model()


def _fuse_conv_bn(seq, fuse_act):
    """Fuses a conv_bn Sequential: conv + bn (+ ReLU when it is one)."""
    names = ["0", "1"] + (["2"] if fuse_act and len(seq) > 2 and type(seq[2]) is nn.ReLU else [])
    fuse_modules(seq, names, inplace=True)


# ---------------------------------------------------------------------------------------------------------
# ResNet18

class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                           if stride != 1 or cin != cout else None)
        self.add_relu = FloatFunctional()

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.add_relu.add_relu(out, identity)

    def fuse_model(self):
        fuse_modules(self, [["conv1", "bn1", "relu"], ["conv2", "bn2"]], inplace=True)
        if self.downsample is not None:
            fuse_modules(self.downsample, ["0", "1"], inplace=True)


class ResNet18(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.quant, self.dequant = QuantStub(), DeQuantStub()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        cfg, cin = [], 64
        for i, c in enumerate([64, 128, 256, 512]):
            cfg.append(nn.Sequential(BasicBlock(cin, c, 1 if i == 0 else 2), BasicBlock(c, c, 1)))
            cin = c
        self.layer1, self.layer2, self.layer3, self.layer4 = cfg
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.quant(x)
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.dequant(self.fc(x))

    def fuse_model(self):
        fuse_modules(self, ["conv1", "bn1", "relu"], inplace=True)
        for m in self.modules():
            if isinstance(m, BasicBlock):
                m.fuse_model()


# ---------------------------------------------------------------------------------------------------------
# MobileNetV2 (ReLU, as torchvision's quantizable version)

class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = int(round(cin * expand))
        self.use_res = stride == 1 and cin == cout
        layers = [conv_bn(cin, hidden, 1)] if expand != 1 else []
        layers += [conv_bn(hidden, hidden, 3, stride, groups=hidden), conv_bn(hidden, cout, 1, act=None)]
        self.conv = nn.Sequential(*layers)
        self.skip_add = FloatFunctional()

    def forward(self, x):
        return self.skip_add.add(x, self.conv(x)) if self.use_res else self.conv(x)

    def fuse_model(self):
        for m in self.conv:
            _fuse_conv_bn(m, True)


class MobileNetV2(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.quant, self.dequant = QuantStub(), DeQuantStub()
        layers, cin = [conv_bn(3, 32, 3, 2)], 32
        for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                           (6, 160, 3, 2), (6, 320, 1, 1)]:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers.append(conv_bn(cin, 1280, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))

    def forward(self, x):
        x = self.features(self.quant(x))
        x = torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1)
        return self.dequant(self.classifier(x))

    def fuse_model(self):
        _fuse_features(self.features)


# ---------------------------------------------------------------------------------------------------------
# MobileNetV3-Large (Hardswish, squeeze-excitation with Hardsigmoid and a FloatFunctional mul)

class SqueezeExcitation(nn.Module):
    def __init__(self, channels, squeeze):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.relu = nn.ReLU()
        self.fc2 = nn.Conv2d(squeeze, channels, 1)
        self.scale_activation = nn.Hardsigmoid()
        self.skip_mul = FloatFunctional()

    def forward(self, x):
        s = self.scale_activation(self.fc2(self.relu(self.fc1(self.avgpool(x)))))
        return self.skip_mul.mul(s, x)

    def fuse_model(self):
        fuse_modules(self, ["fc1", "relu"], inplace=True)


class V3Block(nn.Module):
    def __init__(self, cin, k, exp, cout, se, act, stride):
        super().__init__()
        self.use_res = stride == 1 and cin == cout
        layers = [conv_bn(cin, exp, 1, act=act)] if exp != cin else []
        layers.append(conv_bn(exp, exp, k, stride, groups=exp, act=act))
        if se:
            layers.append(SqueezeExcitation(exp, _divisible(exp // 4)))
        layers.append(conv_bn(exp, cout, 1, act=None))
        self.block = nn.Sequential(*layers)
        self.skip_add = FloatFunctional()

    def forward(self, x):
        return self.skip_add.add(self.block(x), x) if self.use_res else self.block(x)

    def fuse_model(self):
        for m in self.block:
            if isinstance(m, SqueezeExcitation):
                m.fuse_model()
            else:
                _fuse_conv_bn(m, True)


class MobileNetV3Large(nn.Module):
    CONFIG = [(3, 16, 16, False, "RE", 1), (3, 64, 24, False, "RE", 2), (3, 72, 24, False, "RE", 1),
              (5, 72, 40, True, "RE", 2), (5, 120, 40, True, "RE", 1), (5, 120, 40, True, "RE", 1),
              (3, 240, 80, False, "HS", 2), (3, 200, 80, False, "HS", 1), (3, 184, 80, False, "HS", 1),
              (3, 184, 80, False, "HS", 1), (3, 480, 112, True, "HS", 1), (3, 672, 112, True, "HS", 1),
              (5, 672, 160, True, "HS", 2), (5, 960, 160, True, "HS", 1), (5, 960, 160, True, "HS", 1)]

    def __init__(self, num_classes=1000):
        super().__init__()
        self.quant, self.dequant = QuantStub(), DeQuantStub()
        layers, cin = [conv_bn(3, 16, 3, 2, act=nn.Hardswish)], 16
        for k, exp, cout, se, act, s in self.CONFIG:
            layers.append(V3Block(cin, k, exp, cout, se, nn.ReLU if act == "RE" else nn.Hardswish, s))
            cin = cout
        layers.append(conv_bn(cin, 960, 1, act=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(960, 1280), nn.Hardswish(), nn.Dropout(0.2),
                                        nn.Linear(1280, num_classes))

    def forward(self, x):
        x = self.avgpool(self.features(self.quant(x)))
        return self.dequant(self.classifier(torch.flatten(x, 1)))

    def fuse_model(self):
        _fuse_features(self.features)


# ---------------------------------------------------------------------------------------------------------
# ShuffleNetV2 x1.0 (chunk, cat, channel shuffle by view / transpose, mean over [2, 3])

def channel_shuffle(x, groups):
    n, c, h, w = x.size()
    x = x.view(n, groups, c // groups, h, w)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(n, -1, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.stride = stride
        half = cout // 2
        if stride > 1:
            self.branch1 = nn.Sequential(conv_bn(cin, cin, 3, stride, groups=cin, act=None), conv_bn(cin, half, 1))
        else:
            self.branch1 = nn.Sequential()
        bin_ = cin if stride > 1 else half
        self.branch2 = nn.Sequential(conv_bn(bin_, half, 1), conv_bn(half, half, 3, stride, groups=half, act=None),
                                     conv_bn(half, half, 1))
        self.cat = FloatFunctional()

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = self.cat.cat([x1, self.branch2(x2)], dim=1)
        else:
            out = self.cat.cat([self.branch1(x), self.branch2(x)], dim=1)
        return channel_shuffle(out, 2)

    def fuse_model(self):
        for seq in list(self.branch1) + list(self.branch2):
            _fuse_conv_bn(seq, True)


class ShuffleNetV2(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.quant, self.dequant = QuantStub(), DeQuantStub()
        self.conv1 = conv_bn(3, 24, 3, 2)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        cin, stages = 24, []
        for repeats, cout in [(4, 116), (8, 232), (4, 464)]:
            stages.append(nn.Sequential(*[ShuffleUnit(cin if i == 0 else cout, cout, 2 if i == 0 else 1)
                                          for i in range(repeats)]))
            cin = cout
        self.stage2, self.stage3, self.stage4 = stages
        self.conv5 = conv_bn(cin, 1024, 1)
        self.fc = nn.Linear(1024, num_classes)

    def forward(self, x):
        x = self.maxpool(self.conv1(self.quant(x)))
        x = self.conv5(self.stage4(self.stage3(self.stage2(x))))
        return self.dequant(self.fc(x.mean([2, 3])))

    def fuse_model(self):
        _fuse_conv_bn(self.conv1, True)
        _fuse_conv_bn(self.conv5, True)
        for m in self.modules():
            if isinstance(m, ShuffleUnit):
                m.fuse_model()


ARCHITECTURES = [("resnet18", ResNet18), ("mobilenet_v2", MobileNetV2), ("mobilenet_v3_large", MobileNetV3Large),
                 ("shufflenet_v2_x1_0", ShuffleNetV2)]
