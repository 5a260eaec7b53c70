"""The suite's convolutional models in PyTorch eager Python (Debian
python3-torch and python3-torchvision, the same LibTorch the runner links),
trained by the loop a tuned CPU user writes: model and images in
channels_last (or contiguous), torch.optim.RMSprop with the runner's
settings, cross-entropy on random labels. For bench/vision_fidelity.py.

usage: /usr/bin/python3 vision_eager.py MODEL PRECISION FORMAT BATCH WARMUP SECONDS THREADS
  MODEL: cnn (ParaDnn bottleneck, block 1, filter 16, image 224) | resnet50 | densenet121 |
         mobilenet_v1 | squeezenet1_0
prints {"examples_per_sec": ..., "seconds_per_step": ..., "steps": ...}
"""
import json
import statistics
import sys
import time

import torch
from torch import nn


class Bottleneck(nn.Module):
    """The runner's cnn block_fn bottleneck (worker/runner/models/cnn.cc)."""

    def __init__(self, cin, width, stride, projection):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(cin, width, 1, bias=False),
                                    nn.Conv2d(width, width, 3, stride, 1, bias=False),
                                    nn.Conv2d(width, 4 * width, 1, bias=False)])
        self.bns = nn.ModuleList([nn.BatchNorm2d(width), nn.BatchNorm2d(width),
                                  nn.BatchNorm2d(4 * width)])
        self.shortcut = (nn.Sequential(nn.Conv2d(cin, 4 * width, 1, stride, bias=False),
                                       nn.BatchNorm2d(4 * width)) if projection else None)

    def forward(self, x):
        y = x
        for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):
            y = bn(conv(y))
            if i + 1 < len(self.convs):
                y = torch.relu_(y)
        s = self.shortcut(x) if self.shortcut is not None else x
        return torch.relu_(y + s)


class ParaDnnCnn(nn.Module):
    def __init__(self, filters=16, blocks=1, image=224, output=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, filters, 7, 2, 3, bias=False),
                                  nn.BatchNorm2d(filters), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, 2, 1))
        layers, c = [], filters
        for g in range(4):
            for j in range(blocks):
                layers.append(Bottleneck(c, filters << g, 2 if (j == 0 and g > 0) else 1, j == 0))
                c = 4 * (filters << g)
        self.blocks = nn.Sequential(*layers)
        side = (image + 2 * 3 - 7) // 2 + 1
        for _ in range(4):
            side = (side + 2 - 3) // 2 + 1
        pooled = side - 7 + 1
        self.head = nn.Linear(c * pooled * pooled, output)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.head(nn.functional.avg_pool2d(x, 7, 1).flatten(1))


def mobilenet_v1(output=1000):
    def dw(cin, cout, stride):
        return nn.Sequential(nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False),
                             nn.BatchNorm2d(cin), nn.ReLU(inplace=True),
                             nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True))
    spec = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
            (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]
    layers, c = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(True)], 32
    for cout, stride in spec:
        layers.append(dw(c, cout, stride))
        c = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, output))


def build(name):
    if name == "cnn":
        return ParaDnnCnn()
    if name == "mobilenet_v1":
        return mobilenet_v1()
    import torchvision
    return getattr(torchvision.models, name)(num_classes=1000)


def main(argv):
    name, precision, fmt = argv[1], argv[2], argv[3]
    batch, warmup = int(argv[4]), int(argv[5])
    seconds, threads = float(argv[6]), int(argv[7])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    layout = torch.channels_last if fmt == "channels_last" else torch.contiguous_format
    dtype = torch.bfloat16 if precision == "bfloat16" else torch.float32
    model = build(name).to(dtype=dtype, memory_format=layout).train()
    optimizer = torch.optim.RMSprop(model.parameters(), lr=0.1, alpha=0.9, momentum=0.9, eps=1.0)
    x = torch.rand(batch, 3, 224, 224).to(dtype=dtype).contiguous(memory_format=layout)
    y = torch.randint(0, 1000, (batch,))

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    for _ in range(warmup):
        step()
    times = []
    start = time.perf_counter()
    while len(times) < 5 or time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    median = statistics.median(times)
    print(json.dumps({"examples_per_sec": batch / median, "seconds_per_step": median,
                      "steps": len(times)}))


if __name__ == "__main__":
    main(sys.argv)
