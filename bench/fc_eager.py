"""The suite's FC model in PyTorch eager Python (Debian python3-torch, the
same LibTorch the runner links), trained by the usual Python loop, for
bench/fidelity.py. Same model, data, loss and optimizer as the runner's fc
family; `steps` steps timed as one interval after `warmup` steps.

usage: /usr/bin/python3 fc_eager.py LAYER NODE INPUT OUTPUT BATCH WARMUP STEPS THREADS
prints {"examples_per_sec": ..., "seconds_per_step": ...}
"""
import json
import sys
import time

import torch


def main(argv):
    layer, node, inp, out, batch, warmup, steps, threads = (int(a) for a in argv[1:9])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    layers = []
    width = inp
    for _ in range(layer):
        layers += [torch.nn.Linear(width, node), torch.nn.ReLU()]
        width = node
    layers.append(torch.nn.Linear(width, out))
    model = torch.nn.Sequential(*layers)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=0.1, alpha=0.9, momentum=0.9, eps=1.0)
    x = torch.rand(batch, inp) - 0.5
    y = torch.randint(0, out, (batch,))

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    for _ in range(warmup):
        step().item()
    start = time.perf_counter()
    for _ in range(steps):
        loss = step()
    loss.item()
    seconds = time.perf_counter() - start
    print(json.dumps({"examples_per_sec": batch * steps / seconds, "seconds_per_step": seconds / steps}))


if __name__ == "__main__":
    main(sys.argv)
