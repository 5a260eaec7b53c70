#!/usr/bin/env python3
"""Trains a small PyTorch MLP on CPU and records its goodput events with
paradnn.goodput.Recorder, through a simulated preemption and restore.

    /usr/bin/python3 examples/goodput_train.py --out goodput-events.jsonl
    paradnn fleet ingest goodput-events.jsonl

The job, as a preemptible fleet would run it: submitted, requested and granted
one cpu device; initialization, TorchScript compilation, steps with a data
wait before each and a checkpoint every --checkpoint-every steps. After step
--preempt-at the scheduler takes the device away (preempted, released). A
second incarnation, with its own Recorder on the same file as a restarted
process would have, waits a moment in the queue, is granted the device again,
initializes, compiles, restores the last checkpoint and trains from the step
after it to --steps, then ends completed. The steps between that checkpoint
and the preemption ran twice: the first time they are lost progress.

The network is the ParaDnn FC family (docs/models.md) with RMSProp as its
runner trains it, so `model` and `model_params` let the report use paradnn's
own FLOP and byte counts. Labels come from a fixed random teacher rather than
being random, so that the loss falls; a step costs the same. Steps are
numbered from 1: step n is the n-th update, a checkpoint of step n holds it.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
import uuid
from pathlib import Path

import torch
from torch import nn

try:
    from paradnn.goodput import Recorder
except ImportError:
    # A checkout without the package installed: the module needs only the
    # standard library, so load it from the source tree.
    _SOURCE = Path(__file__).resolve().parents[1] / "python" / "paradnn" / "goodput.py"
    _spec = importlib.util.spec_from_file_location("paradnn_goodput", _SOURCE)
    _goodput = importlib.util.module_from_spec(_spec)
    sys.modules[_spec.name] = _goodput
    _spec.loader.exec_module(_goodput)
    Recorder = _goodput.Recorder

# ParaDnn FC: input -> [Linear(node) + ReLU] x layer -> Linear(output).
SHAPE = {"layer": 2, "node": 128, "input": 200, "output": 20, "batch": 64}
DEVICE_KIND = "cpu"
# How long the preempted job waits in the queue before its device comes back:
# short, so that the example runs in seconds.
QUEUE_WAIT_SECONDS = 0.05


def forward_macs_per_example(shape: dict[str, int]) -> int:
    """Multiply-accumulates of one example's forward pass: the matrix products only
    (docs/models.md "Counting work")."""
    return (shape["input"] * shape["node"] + (shape["layer"] - 1) * shape["node"] ** 2
            + shape["node"] * shape["output"])


def flops_per_step(shape: dict[str, int]) -> int:
    """Model FLOPs of one step: 6 x forward MACs x batch (2 FLOPs per MAC, and the
    backward pass twice the forward), the convention of ParaDnn and of MFU."""
    return 6 * forward_macs_per_example(shape) * shape["batch"]


def build_model(shape: dict[str, int], seed: int) -> tuple[nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    width = shape["input"]
    for _ in range(shape["layer"]):
        layers += [nn.Linear(width, shape["node"]), nn.ReLU()]
        width = shape["node"]
    layers.append(nn.Linear(width, shape["output"]))
    model = nn.Sequential(*layers)
    # The ParaDnn runner's RMSProp for FC (docs/models.md "Shared").
    optimizer = torch.optim.RMSprop(model.parameters(), lr=0.1, alpha=0.9, eps=1.0,
                                    momentum=0.9)
    return model, optimizer


class SyntheticBatches:
    """Batch n is a function of (seed, n) alone, so a restored job sees the same data
    for a step as the run it replaces."""

    def __init__(self, shape: dict[str, int], seed: int) -> None:
        self.shape = shape
        self.seed = seed
        teacher = torch.Generator().manual_seed(seed + 1)
        self.teacher = torch.randn(shape["input"], shape["output"], generator=teacher)

    def batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        generator = torch.Generator().manual_seed(self.seed * 1_000_003 + step)
        inputs = torch.rand(self.shape["batch"], self.shape["input"], generator=generator) - 0.5
        return inputs, (inputs @ self.teacher).argmax(dim=1)


def train(recorder: Recorder, args: argparse.Namespace, batches: SyntheticBatches,
          checkpoints: Path, preempt_at: int) -> tuple[int, float]:
    """One incarnation of the job, from its grant: trains from the last checkpoint in
    `checkpoints` (or from scratch) to --steps, or to `preempt_at` where the device is
    taken away. Returns the last step it ran and its loss."""
    time.sleep(QUEUE_WAIT_SECONDS)  # in the queue, holding nothing
    recorder.granted(1)
    recorder.started()
    with recorder.init():
        model, optimizer = build_model(SHAPE, args.seed)
        loss_function = nn.CrossEntropyLoss()
    with recorder.compile():
        model = torch.jit.script(model)
    saved = sorted(checkpoints.glob("step-*.pt"), key=lambda path: int(path.stem[5:]))
    last_step = 0
    if saved:
        checkpoint_step = int(saved[-1].stem[5:])
        with recorder.checkpoint_restore(checkpoint_step):
            state = torch.load(saved[-1])
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
        last_step = checkpoint_step
    elif recorder.resumed:
        # Nothing saved: back to the initial state, step 0, which the model already is.
        with recorder.checkpoint_restore(0):
            pass
    flops = flops_per_step(SHAPE)
    loss = float("nan")
    for step in range(last_step + 1, args.steps + 1):
        with recorder.data_wait():
            inputs, labels = batches.batch(step)
        with recorder.step(step, examples=SHAPE["batch"], flops=flops):
            optimizer.zero_grad()
            loss_tensor = loss_function(model(inputs), labels)
            loss_tensor.backward()
            optimizer.step()
            loss = loss_tensor.item()
        if step % args.checkpoint_every == 0:
            with recorder.checkpoint_save(step):
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()},
                           checkpoints / f"step-{step}.pt")
        if step == preempt_at:
            recorder.preempted()
            recorder.released(1)
            return step, loss
    recorder.released(1)
    return args.steps, loss


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="goodput-events.jsonl",
                        help="the JSON Lines file to append to (default %(default)s)")
    parser.add_argument("--job", default=None,
                        help="the job id, unique in the fleet (default goodput-train-<random>)")
    parser.add_argument("--steps", type=int, default=200, help="training steps (default 200)")
    parser.add_argument("--preempt-at", type=int, default=140,
                        help="preempt after this step; 0: never (default 140)")
    parser.add_argument("--checkpoint-every", type=int, default=25,
                        help="save a checkpoint every K steps (default 25)")
    parser.add_argument("--seed", type=int, default=0, help="data and weights seed (default 0)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default torch's)")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error("--steps must be >= 1")
    if args.checkpoint_every < 1:
        parser.error("--checkpoint-every must be >= 1")
    if not 0 <= args.preempt_at < args.steps:
        parser.error("--preempt-at must be 0 (never) or a step before the last")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    job = args.job or f"goodput-train-{uuid.uuid4().hex[:12]}"
    attributes = {"framework": f"pytorch {torch.__version__}", "model": "fc",
                  "workload": "training", "model_params": SHAPE}
    batches = SyntheticBatches(SHAPE, args.seed)
    with tempfile.TemporaryDirectory(prefix="goodput-train-") as directory:
        checkpoints = Path(directory)
        with Recorder(args.out, job, **attributes) as recorder:
            recorder.requested(DEVICE_KIND, 1)
            last_step, loss = train(recorder, args, batches, checkpoints, args.preempt_at)
            if last_step == args.steps:
                recorder.ended("completed")
        if last_step < args.steps:
            print(f"preempted after step {last_step} (loss {loss:.3f})")
            # The restarted process: a new Recorder on the same file resumes the job.
            with Recorder(args.out, job, **attributes) as recorder:
                last_step, loss = train(recorder, args, batches, checkpoints, preempt_at=0)
                recorder.ended("completed")
    print(f"job {job}: {last_step} steps, loss {loss:.3f}; events in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
