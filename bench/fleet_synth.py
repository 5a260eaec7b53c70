#!/usr/bin/env python3
"""A synthetic fleet of training jobs with known goodput (docs/fleet-events.md).

Writes the JSON Lines that `paradnn fleet ingest` reads, for a seeded,
scripted fleet: jobs of several kinds (device kind, devices 1/4/16/128,
pytorch/jax, training/finetune, the ParaDnn "fc" family or free model names),
each with a queue wait (partial grants included), init, compile, steps with
their own step time, data waits (inside some steps, before others), periodic
checkpoint saves, disruptions (preempted or failed) followed by release,
re-queue, re-grant, init, checkpoint_restore and the lost steps re-executed,
and endings completed, failed, cancelled (running or still queued) or
preempted.

The known answers are accumulated while the timeline is laid out: every
stretch of holding time is given its category by the script that creates it
(the doc's priority rule decides where spans overlap: a data_wait or a
torch.compile inside a step is data loading or compilation, not step time),
and steps move from "pending" to kept at a checkpoint save or completion, or
to lost at a disruption or a non-completed end. Nothing is re-derived from
the lines written, so the answers do not share code with any parser
(bench/fleet_synth_check.py re-derives them from the lines to check both).

Times lie on a grid of 1/1024 s ("ticks") after a UTC midnight: every time
in the file is a decimal that a correctly rounding parser reads exactly
into a double, every difference and every per-job sum is then exact, and
only the final divisions round. The answers name the tolerance to use.

Outputs: the events (one job's lines together, shuffled within the job with
--shuffle, then any --bad-lines); --answers: per job its holding, productive
and six badput seconds, kept/lost steps, ideal and measured step seconds and
the four shares (None where the doc leaves them blank, with the reason), the
fleet's device-time-weighted aggregates and the same by device kind, size,
framework, workload and UTC day, the conventions taken where the doc is open
and the tolerance; --roofs: per device kind, flops_per_sec and bytes_per_sec
of one device; --bad-report: each malformed line's number, text, the field
that is wrong (null: not a JSON object) and how.

usage:
  bench/fleet_synth.py --out events.jsonl --answers answers.json --roofs roofs.json
                       [--jobs 200] [--steps-per-job 1000] [--seed 1] [--shuffle]
                       [--bad-lines K --bad-report bad.json]
                       [--program-basis step-span|productive]
  --out - writes the events to stdout. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time as wallclock
from datetime import datetime, timezone

FORMAT = "paradnn fleet-synth answers v1"
TICKS = 1024  # grid: 1/1024 s, exact in binary and in decimal
# The decimal fraction of i/1024 s, exact, trailing zeros dropped ("" for 0:
# whole seconds are written as integers, which the format allows).
FRACTION = [("." + f"{i * 9765625:010d}".rstrip("0")) if i else "" for i in range(TICKS)]
EPOCH_SECONDS = 1_700_006_400  # 2023-11-15T00:00:00Z, so windows are UTC days
SUBMIT_SPREAD_SECONDS = 3 * 86400  # submissions spread over three days
WINDOW_SECONDS = 86400

# Calibrated roofs per device, not per job (h100's is its float32 matmul
# roof): the ideal of a step whose flops and bytes count all its devices is
# max(flops / (devices * flops_per_sec), bytes / (devices * bytes_per_sec)).
# "a100" is left out on purpose: its jobs have no roof, so no program goodput.
ROOFS = {
    "cpu-epyc": {"flops_per_sec": 2.0e12, "bytes_per_sec": 1.6e11},
    "h100": {"flops_per_sec": 6.0e13, "bytes_per_sec": 3.0e12},
    "tpu-v5e": {"flops_per_sec": 1.97e14, "bytes_per_sec": 8.1e11},
}

# Job kinds: device kind, device counts, frameworks, model, where the step's
# FLOPs come from ("paradnn-fc": the family's own count; "job": flops and
# bytes on the lines; "job-flops-only": no bytes; "none": neither), the base
# step seconds and the relative weight in the fleet.
KINDS = [
    dict(name="fc-cpu", device_kind="cpu-epyc", devices=(1,), frameworks=("pytorch",),
         model="fc", flops="paradnn-fc", weight=2),
    dict(name="fc-h100", device_kind="h100", devices=(1,), frameworks=("pytorch", "jax"),
         model="fc", flops="paradnn-fc", weight=1),
    dict(name="lm-h100", device_kind="h100", devices=(4, 16, 128), frameworks=("pytorch",),
         model=("acme-lm-1b", "acme-lm-7b"), flops="job", step_seconds=(0.08, 0.6), weight=3),
    dict(name="vit-tpu", device_kind="tpu-v5e", devices=(4, 16, 128), frameworks=("jax",),
         model=("acme-vit-l",), flops="job", step_seconds=(0.05, 0.4), weight=2),
    dict(name="ranker-cpu", device_kind="cpu-epyc", devices=(1, 4, 16), frameworks=("pytorch",),
         model=("acme-ranker",), flops="none", step_seconds=(0.05, 0.3), weight=1),
    dict(name="embed-cpu", device_kind="cpu-epyc", devices=(4,), frameworks=("jax",),
         model=("acme-embed",), flops="job-flops-only", step_seconds=(0.05, 0.3), weight=1),
    dict(name="asr-a100", device_kind="a100", devices=(4, 16), frameworks=("pytorch",),
         model=("acme-asr",), flops="job", step_seconds=(0.1, 0.5), weight=1),
]

# ParaDnn FC shapes (layer, node, input, output, batch) for one device of each
# kind: ideal steps of 0.05-1 s, compute-bound by >= 2x even against the
# generous bytes bound below, so paradnn's own bytes count cannot decide them.
FC_SHAPES = {
    "cpu-epyc": [(8, 4096, 4000, 400, 1024), (16, 2048, 8000, 600, 2048),
                 (8, 4096, 2000, 200, 2048)],
    "h100": [(16, 8192, 8000, 1000, 4096), (32, 4096, 4000, 800, 4096),
             (8, 8192, 2000, 200, 2048), (16, 4096, 4000, 1000, 4096)],
}

def fc_macs_per_example(layer, node, inp, out):
    """docs/measurement.md, "Analytic counts": I*N + (L-1)*N^2 + N*O."""
    return inp * node + (layer - 1) * node * node + node * out


def fc_model_flops(layer, node, inp, out, batch):
    """6 * MACs * batch: what a user logs as "the model's FLOPs" (MFU)."""
    return 6 * fc_macs_per_example(layer, node, inp, out) * batch


def fc_bytes_bound(layer, node, inp, out, batch):
    """An upper bound on paradnn's per-step traffic count of the FC model
    (layerwise-traffic-v3, float32: at most 21 passes over the parameters
    with LibTorch's kernel-by-kernel RMSProp): 24 passes over every
    parameter and 16 over every activation (Linear and ReLU outputs)."""
    params = (inp + 1) * node + (layer - 1) * (node + 1) * node + (node + 1) * out
    activations = batch * (inp + 2 * layer * node + 2 * out)
    return 4 * (24 * params + 16 * activations)


def _check_fc_shapes():
    for device_kind, shapes in FC_SHAPES.items():
        roof = ROOFS[device_kind]
        for shape in shapes:
            compute = fc_model_flops(*shape) / roof["flops_per_sec"]
            memory = fc_bytes_bound(*shape) / roof["bytes_per_sec"]
            assert 0.05 <= compute <= 1.0 and compute >= 2 * memory, (device_kind, shape)


_check_fc_shapes()

BADPUT_PARTS = ("initialization", "compilation", "data_loading", "checkpointing",
                "lost_progress", "other")


def size_bucket(devices):
    """The doc's job sizes by requested devices."""
    if devices == 1:
        return "1"
    if devices <= 8:
        return "2-8"
    if devices <= 64:
        return "9-64"
    return "65+"


def stamp(ticks):
    """Ticks since the Unix epoch as exact decimal seconds."""
    return f"{ticks >> 10}{FRACTION[ticks & 1023]}"


def job_name(index, kind_name):
    # A few ids carry non-ASCII text, one a quote and a backslash: the intake
    # must read JSON strings, not split on quotes.
    if index == 7:
        return f'team "q"\\{kind_name}-{index:06d}'
    if index % 53 == 11:
        return f"équipe-ü/{kind_name}-{index:06d}"
    return f"{kind_name}-{index:06d}"


def seconds(ticks):
    return ticks / TICKS


def window_of(unix_seconds):
    """The UTC day a job was submitted in."""
    day = unix_seconds - unix_seconds % WINDOW_SECONDS
    return datetime.fromtimestamp(day, timezone.utc).strftime("%Y-%m-%d")


class Fleet:
    """Lays out the jobs one by one; each job's lines go to `write` as one
    chunk and its answer into self.jobs."""

    def __init__(self, seed, jobs, steps_per_job, shuffle, program_basis):
        self.seed = seed
        self.job_count = jobs
        self.steps_per_job = steps_per_job
        self.shuffle = shuffle
        self.program_basis = program_basis
        self.jobs = []
        self.lines = 0
        self.step_lines = 0
        self.kind_weights = [kind["weight"] for kind in KINDS]

    def step_targets(self, rng):
        """Per-job step targets around the average, in pairs (M+d, M-d)."""
        average = self.steps_per_job
        while True:
            spread = int(average * 0.6 * rng.random())
            yield max(2, average + spread)
            yield max(2, average - spread)

    def generate(self, write):
        fleet_rng = random.Random(self.seed)
        targets = self.step_targets(fleet_rng)
        for index in range(self.job_count):
            kind = fleet_rng.choices(KINDS, self.kind_weights)[0]
            # Jobs that end early execute fewer steps than their target and
            # restarts more: the next job's target makes up the difference so
            # far, so that the fleet has about jobs x M step lines.
            behind = index * self.steps_per_job - self.step_lines
            target = max(2, next(targets) + max(-self.steps_per_job // 2,
                                                min(behind, self.steps_per_job)))
            # Each job its own generator: its script does not depend on the
            # jobs after it.
            rng = random.Random(self.seed * 1_000_003 + index)
            lines, answer = self.job(index, kind, target, rng)
            if self.shuffle:
                rng.shuffle(lines)
            lines.append("")
            write("\n".join(lines))
            self.lines += len(lines) - 1
            self.jobs.append(answer)

    # -- one job -----------------------------------------------------------------

    def job(self, index, kind, total_steps, rng):
        rnd = rng.random
        name = job_name(index, kind["name"])
        device_kind = kind["device_kind"]
        devices = rng.choice(kind["devices"])
        framework = rng.choice(kind["frameworks"])
        workload = "finetune" if rnd() < 0.3 else "training"
        lines = []
        emit = lines.append
        head = '{"v":1,"job":' + json.dumps(name, ensure_ascii=False) + ',"event":"'

        def point(event, ticks, extra=""):
            emit(f'{head}{event}","time":{stamp(ticks)}{extra}}}')

        def span(event, start, end, extra=""):
            emit(f'{head}{event}","start":{stamp(start)},"end":{stamp(end)}{extra}}}')

        # ---- the model and its step's FLOPs, bytes and ideal time ----
        roof = ROOFS.get(device_kind)
        submitted_extra = {"framework": framework, "workload": workload}
        examples = rng.choice((32, 64, 128, 256)) * devices
        flops_field = ""
        flops_source = kind["flops"]
        ideal = None  # ideal seconds of one step, when known
        efficiency = 0.3 + 0.6 * rnd()
        if kind["model"] == "fc":
            layer, node, inp, out, batch = rng.choice(FC_SHAPES[device_kind])
            submitted_extra["model"] = "fc"
            submitted_extra["model_params"] = {"layer": layer, "node": node, "input": inp,
                                               "output": out, "batch": batch}
            examples = batch
            paradnn_flops = fc_model_flops(layer, node, inp, out, batch)
            ideal = paradnn_flops / (devices * roof["flops_per_sec"])
            step_ticks = int(ideal / efficiency * TICKS)
            if rnd() < 0.7:  # the job's own count, which paradnn's replaces
                flops_field = (f',"flops":{fc_model_flops(layer, node, inp, out, batch)}'
                               f',"bytes":{fc_bytes_bound(layer, node, inp, out, batch)}')
        else:
            submitted_extra["model"] = rng.choice(kind["model"])
            low, high = kind["step_seconds"]
            step_ticks = int((low + (high - low) * rnd()) * TICKS)
            if flops_source != "none":
                # Ideal = efficiency x the step's compute; compute- or
                # memory-bound at random, the other term below it.
                target = efficiency * step_ticks / TICKS
                peak_flops = devices * (roof or ROOFS["h100"])["flops_per_sec"]
                peak_bytes = devices * (roof or ROOFS["h100"])["bytes_per_sec"]
                if flops_source == "job-flops-only" or rnd() < 0.6:
                    flops = int(target * peak_flops)
                    nbytes = int(target * peak_bytes * (0.1 + 0.8 * rnd()))
                else:
                    nbytes = int(target * peak_bytes)
                    flops = int(target * peak_flops * (0.1 + 0.8 * rnd()))
                if flops_source == "job-flops-only":
                    flops_field = f',"flops":{flops}'
                    nbytes = 0
                else:
                    flops_field = f',"flops":{flops},"bytes":{nbytes}'
                if roof is not None:
                    ideal = max(flops / (devices * roof["flops_per_sec"]),
                                nbytes / (devices * roof["bytes_per_sec"]))
        if rnd() < 0.5:
            submitted_extra["size"] = rng.choice(("small", "medium", "large"))
        blank_reason = None
        if roof is None:
            blank_reason = f"no roof for device_kind {device_kind}"
        elif ideal is None:
            blank_reason = "no FLOPs"

        # ---- the script's knobs ----
        jitter = max(1, int(step_ticks * 0.1 * rnd()))
        gap_max = rng.choice((0, 1, 3))  # host time between steps: "other"
        wait_style = rng.choice(("none", "inside", "inside", "before"))
        wait_chance = rng.choice((0.02, 0.1, 0.3))
        wait_low, wait_span = 5, max(1, step_ticks // 2)
        every = max(1, total_steps // rng.randint(3, 12))
        save_ticks = rng.randint(1, 30) * TICKS + rng.randrange(TICKS)
        torch_compile = framework == "pytorch" and rnd() < 0.6
        warmup_wait = rnd() < 0.3

        # ---- the ending: completed / failed / cancelled / preempted, with
        # zero to three restarts before it (a queued cancel has none) ----
        r = rnd()
        if r < 0.03:
            ending = "cancelled-queued"
        elif r < 0.12:
            ending = "failed"
        elif r < 0.19:
            ending = "cancelled"
        elif r < 0.25:
            ending = "preempted"
        else:
            ending = "completed"
        restarts = 0 if ending == "cancelled-queued" else rng.choices((0, 1, 2, 3),
                                                                       (55, 25, 13, 7))[0]

        # ---- the tallies (ticks) ----
        init = compile_ = data = checkpointing = other = productive = lost = 0
        holding = 0
        kept_steps = lost_steps = kept_span = 0
        pending_prod = pending_span = pending_steps = 0  # since the last save

        submitted = EPOCH_SECONDS * TICKS + int(rnd() * SUBMIT_SPREAD_SECONDS * TICKS)
        extra = json.dumps(submitted_extra, ensure_ascii=False, separators=(",", ":"))
        point("submitted", submitted, "," + extra[1:-1])
        t = submitted + rng.choice((0, 0, rng.randrange(2 * TICKS)))
        point("requested", t, f',"device_kind":"{device_kind}","devices":{devices}')

        def acquire(t, queue_ticks):
            """Queue, then the grant (in two parts at times): returns the tick
            at which all requested devices are held."""
            t += queue_ticks
            if devices > 1 and rnd() < 0.4:
                first = rng.randint(1, devices - 1)
                point("granted", t, f',"devices":{first}')
                t += rng.randint(1, 300) * TICKS + rng.randrange(TICKS)
                point("granted", t, f',"devices":{devices - first}')
            else:
                point("granted", t, f',"devices":{devices}')
            return t

        if ending == "cancelled-queued":
            # Possibly a partial grant, never the whole: no holding time.
            t += rng.randint(60, 3600) * TICKS
            partial = 0
            if devices > 1 and rnd() < 0.5:
                partial = rng.randint(1, devices - 1)
                point("granted", t, f',"devices":{partial}')
                t += rng.randint(1, 600) * TICKS + rng.randrange(TICKS)
            if partial:
                point("released", t, f',"devices":{partial}')
            point("ended", t, ',"status":"cancelled"')
            end = t
        else:
            t = acquire(t, rng.randint(1, 1200) * TICKS + rng.randrange(TICKS))
            next_step = 1
            last_saved = 0  # step 0: the initial state (steps are numbered from 1)
            attempt = 0
            while True:
                attempt += 1
                hold_start = t
                terminal = attempt > restarts
                # Where this attempt stops: after step `stop` (>= the step it
                # resumed from); the last attempt of a completed job runs on.
                if terminal and ending == "completed":
                    stop = total_steps
                else:
                    stop = rng.randint(next_step - 1, total_steps - 1)

                gap = rng.randint(TICKS // 2, 5 * TICKS)
                other += gap
                t += gap
                point("started", t)
                length = rng.randint(5, 120) * TICKS + rng.randrange(TICKS)
                span("init", t, t + length)
                init += length
                t += length
                if framework == "jax":
                    # XLA compiles before the first step (a warm cache later).
                    length = (rng.randint(10, 200) if attempt == 1 else rng.randint(2, 20)) * TICKS
                    span("compile", t, t + length)
                    compile_ += length
                    t += length
                if attempt > 1:
                    length = rng.randint(1, 60) * TICKS + rng.randrange(TICKS)
                    span("checkpoint_restore", t, t + length, f',"step":{last_saved}')
                    checkpointing += length
                    t += length
                if warmup_wait:
                    length = rng.randint(1, 20) * TICKS
                    span("data_wait", t, t + length)
                    data += length
                    t += length

                step_head = f'{head}step","start":'
                step_tail = f',"examples":{examples}{flops_field}}}'
                compile_in_step = torch_compile
                for n in range(next_step, stop + 1):
                    if gap_max:
                        gap = int(rnd() * (gap_max + 1))
                        other += gap
                        t += gap
                    start = t
                    if wait_style == "before" and rnd() < wait_chance:
                        length = wait_low + int(rnd() * wait_span)
                        span("data_wait", t, t + length)
                        data += length
                        t = start = t + length
                    if wait_style == "inside" and rnd() < wait_chance:
                        length = wait_low + int(rnd() * wait_span)
                        span("data_wait", t, t + length)  # inside the step's span
                        data += length
                        t += length
                    if compile_in_step:
                        # torch.compile runs inside the first step of an attempt.
                        length = rng.randint(10, 60) if attempt == 1 else rng.randint(1, 10)
                        length *= TICKS
                        span("compile", t, t + length)
                        compile_ += length
                        t += length
                        compile_in_step = False
                    work = step_ticks + int(rnd() * jitter)
                    t += work
                    emit(f'{step_head}{stamp(start)},"end":{stamp(t)},"step":{n}{step_tail}')
                    pending_prod += work
                    pending_span += t - start
                    pending_steps += 1
                    if n % every == 0 or (n == total_steps and ending == "completed"):
                        length = save_ticks + rng.randrange(TICKS)
                        span("checkpoint_save", t, t + length, f',"step":{n}')
                        checkpointing += length
                        t += length
                        last_saved = n
                        productive += pending_prod
                        kept_span += pending_span
                        kept_steps += pending_steps
                        pending_prod = pending_span = pending_steps = 0
                self.step_lines += max(0, stop + 1 - next_step)

                if terminal and ending == "completed":
                    # Nothing pending after the final save. Then shut down;
                    # holding ends at the first release or at `ended`.
                    gap = rng.randint(1, 10) * TICKS + rng.randrange(TICKS)
                    other += gap
                    t += gap
                    holding += t - hold_start
                    shape = rnd()
                    if devices > 1 and shape < 0.3:
                        first = rng.randint(1, devices - 1)
                        point("released", t, f',"devices":{first}')
                        t += rng.randint(1, 5) * TICKS
                        point("released", t, f',"devices":{devices - first}')
                        t += rng.choice((0, rng.randint(1, 3) * TICKS))
                        point("ended", t, ',"status":"completed"')
                    elif shape < 0.35:
                        # The scheduler's release is logged after `ended`:
                        # holding stops at `ended`.
                        point("ended", t, ',"status":"completed"')
                        point("released", t + rng.randint(1, 5) * TICKS, f',"devices":{devices}')
                    else:
                        point("released", t, f',"devices":{devices}')
                        t += rng.choice((0, rng.randint(1, 3) * TICKS))
                        point("ended", t, ',"status":"completed"')
                    end = t
                    break

                # A disruption part-way through the step after `stop`.
                interrupted = int(rnd() * step_ticks)
                other += interrupted
                t += interrupted
                lost += pending_prod
                lost_steps += pending_steps
                pending_prod = pending_span = pending_steps = 0
                if terminal:
                    cause = {"failed": "failed", "preempted": "preempted",
                             "cancelled": "cancelled"}[ending]
                else:
                    cause = "preempted" if rnd() < 0.5 else "failed"
                if cause == "preempted":
                    # The scheduler takes the devices at that instant.
                    point("preempted", t)
                else:
                    if cause == "failed":
                        point("failed", t, ',"reason":"NCCL timeout"' if rnd() < 0.5 else "")
                    teardown = rng.randint(1, 30) * TICKS + rng.randrange(TICKS)
                    other += teardown
                    t += teardown
                point("released", t, f',"devices":{devices}')
                holding += t - hold_start
                if terminal:
                    t += rng.choice((0, rng.randint(1, 3) * TICKS))
                    point("ended", t, f',"status":"{ending}"')
                    end = t
                    break
                next_step = last_saved + 1
                t = acquire(t, rng.randint(1, 1800) * TICKS + rng.randrange(TICKS))

        if holding != init + compile_ + data + checkpointing + other + productive + lost:
            raise AssertionError(f"{name}: the script's parts do not add up")  # a generator bug

        elapsed = end - submitted
        ideal_seconds = None if blank_reason else ideal * kept_steps
        answer = {
            "job": name, "kind": kind["name"], "device_kind": device_kind, "devices": devices,
            "size_bucket": size_bucket(devices), "framework": framework, "workload": workload,
            "model": submitted_extra["model"],
            "status": "cancelled" if ending == "cancelled-queued" else ending,
            "restarts": restarts, "submitted": seconds(submitted), "end": seconds(end),
            "window": window_of(submitted // TICKS),
            "elapsed_seconds": seconds(elapsed), "holding_seconds": seconds(holding),
            "productive_seconds": seconds(productive),
            "badput_seconds": {
                "initialization": seconds(init), "compilation": seconds(compile_),
                "data_loading": seconds(data), "checkpointing": seconds(checkpointing),
                "lost_progress": seconds(lost), "other": seconds(other)},
            "kept_steps": kept_steps, "lost_steps": lost_steps,
            "kept_step_seconds": seconds(kept_span),
            "flops_source": flops_source,
            "ideal_step_seconds": ideal, "ideal_seconds": ideal_seconds,
        }
        answer.update(shares(elapsed / TICKS, holding / TICKS, productive / TICKS,
                             ideal_seconds, self.program_denominator(answer), kept_steps,
                             blank_reason))
        if answer["program_goodput"] is None:
            answer["ideal_seconds"] = None
        return lines, answer

    def program_denominator(self, answer):
        if self.program_basis == "productive":
            return answer["productive_seconds"]
        return answer["kept_step_seconds"]


def shares(elapsed, holding, productive, ideal_seconds, program_seconds, kept_steps,
           blank_reason):
    """A job's four shares; blanks (None) where a denominator or a count is
    missing, the first reason of: no holding time, no roof, no kept steps, no
    FLOPs."""
    scheduling = holding / elapsed
    runtime = productive / holding if holding else None
    if holding == 0:
        blank_reason = "no holding time"
    elif kept_steps == 0 and not (blank_reason or "").startswith("no roof"):
        blank_reason = "no kept steps"
    program = None if blank_reason else ideal_seconds / program_seconds
    mpg = None if program is None else scheduling * runtime * program
    return {"scheduling_goodput": scheduling, "runtime_goodput": runtime,
            "program_goodput": program, "program_blank_reason": blank_reason,
            "program_denominator_seconds": program_seconds, "mpg": mpg}


def aggregate(jobs):
    """Device-time-weighted shares of a group of jobs (the doc's "Aggregates")."""
    weight = {"elapsed": 0.0, "holding": 0.0, "productive": 0.0, "ideal": 0.0,
              "program_denominator": 0.0}
    parts = dict.fromkeys(BADPUT_PARTS, 0.0)
    program_jobs = 0
    # Device-seconds are sums of exact tick multiples, so the order of
    # summation does not matter.
    for job in jobs:
        devices = job["devices"]
        weight["elapsed"] += devices * job["elapsed_seconds"]
        weight["holding"] += devices * job["holding_seconds"]
        weight["productive"] += devices * job["productive_seconds"]
        for part in BADPUT_PARTS:
            parts[part] += devices * job["badput_seconds"][part]
        if job["program_goodput"] is not None:
            program_jobs += 1
            weight["ideal"] += devices * job["ideal_seconds"]
            weight["program_denominator"] += devices * job["program_denominator_seconds"]
    scheduling = weight["holding"] / weight["elapsed"] if weight["elapsed"] else None
    runtime = weight["productive"] / weight["holding"] if weight["holding"] else None
    program = (weight["ideal"] / weight["program_denominator"]
               if weight["program_denominator"] else None)
    mpg = None if None in (scheduling, runtime, program) else scheduling * runtime * program
    return {
        "jobs": len(jobs), "program_jobs": program_jobs,
        "device_seconds": {"elapsed": weight["elapsed"], "holding": weight["holding"],
                           "productive": weight["productive"],
                           "program_denominator": weight["program_denominator"],
                           "ideal": weight["ideal"]},
        "badput_device_seconds": parts,
        "scheduling_goodput": scheduling, "runtime_goodput": runtime,
        "program_goodput": program, "mpg": mpg,
    }


def breakdown(jobs, key):
    groups = {}
    for job in jobs:
        groups.setdefault(job[key], []).append(job)
    return {value: aggregate(groups[value]) for value in sorted(groups)}


CONVENTIONS = {
    "steps": "numbered from 1; checkpoint_save/restore step n holds the progress of steps "
             "1..n (step n's update included) and the run resumes at n+1; "
             "checkpoint_restore step 0 is a restart from the initial state",
    "holding": "from the instant the granted devices reach the requested count until the "
               "first release that takes them below it, or `ended` if that comes first",
    "preempted": "the devices are released at the instant of `preempted`",
    "ideal_step": "max(flops / (devices * roof flops_per_sec), bytes / (devices * roof "
                  "bytes_per_sec)): flops and bytes count all devices, roofs are per device; "
                  "a step without bytes has no memory term",
    "fc_family": "model fc with model_params {layer,node,input,output,batch}: FLOPs = paradnn's "
                 "model_flops = 6*B*(I*N+(L-1)*N^2+N*O) (docs/fleet-events.md), batch the "
                 "global batch (these jobs use one device); the lines carry the same or none; "
                 "the jobs are compute-bound by >= 2x against an upper bound of any bytes count",
    "program_blank": "no roof for the device kind, or no FLOPs, or no holding time, or no kept "
                     "steps; mpg is blank where program is; runtime is blank with no holding",
    "aggregates": "scheduling = sum(devices*holding)/sum(devices*elapsed); runtime = "
                  "sum(devices*productive)/sum(devices*holding); program = "
                  "sum(devices*ideal)/sum(devices*program denominator) over the jobs that "
                  "have a program goodput; mpg = the product of the three",
    "windows": "UTC days of the submission time",
}


def bad_line_catalog(job, when):
    """Malformed lines: (text, field, problem). `job` is a real job id, `when`
    a time inside the fleet; each line is wrong in exactly one way."""
    j = json.dumps(job, ensure_ascii=False)
    s = stamp(when)
    e = stamp(when + TICKS)
    return [
        (f'{{"v":1,"job":{j},"event":"step","strat":{s},"end":{e},"step":1,"examples":8}}',
         "strat", "not a field of step (misspelt start)"),
        (f'{{"v":1,"job":{j},"event":"step","start":{s},"end":{e},"step":1}}',
         "examples", "required on step, missing"),
        (f'{{"v":2,"job":{j},"event":"started","time":{s}}}', "v", "version 2, only 1 is read"),
        (f'{{"v":1,"job":{j},"event":"stepped","start":{s},"end":{e}}}',
         "event", "not an event kind"),
        (f'{{"v":1,"job":{j},"event":"granted","time":-1,"devices":4}}',
         "time", "negative"),
        (f'{{"v":1,"job":{j},"event":"compile","start":{e},"end":{s}}}',
         "end", "before start"),
        (f'{{"v":1,"job":{j},"event":"granted","time":{s},"devices":0}}',
         "devices", "must be >= 1"),
        (f'{{"v":1,"job":{j},"event":"requested","time":{s},"device_kind":"h100","devices":1.5}}',
         "devices", "not an integer"),
        (f'{{"v":1,"job":"","event":"started","time":{s}}}', "job", "empty"),
        (f'{{"v":1,"job":"bell\\u0007job","event":"started","time":{s}}}',
         "job", "a control character"),
        ('{"v":1,"job":"' + "x" * 257 + f'","event":"started","time":{s}}}',
         "job", "257 characters, at most 256"),
        (f'{{"v":1,"job":{j},"event":"ended","time":{s},"status":"done"}}',
         "status", "not completed, failed, cancelled or preempted"),
        (f'{{"v":1,"job":{j},"event":"started","time":"{s}"}}', "time", "a string, not a number"),
        (f'{{"v":1,"job":{j},"event":"submitted","time":{s},"model":"fc",'
         f'"model_params":{{"layer":"4"}}}}', "model_params", "a value that is not a number"),
        (f'{{"v":1,"job":{j},"event":"requested","time":{s},"device_kind":"' + "k" * 65 +
         '","devices":1}', "device_kind", "65 characters, at most 64"),
        (f'{{"v":1,"job":{j},"event":"step","start":{s},"end":{e},"step":-1,"examples":8}}',
         "step", "negative"),
        (f'{{"v":1,"job":{j},"event":"step","start":{s},"end":{e},"step":1,"examples":true}}',
         "examples", "a boolean, not an integer"),
        (f'{{"v":1,"job":{j},"event":"step","start":{s},"end":{e},"step":1,"examples":8,'
         f'"flops":-5}}', "flops", "negative"),
        (f'{{"v":1,"job":{j},"event":"step","time":{s},"start":{s},"end":{e},"step":1,'
         f'"examples":8}}', "time", "not a field of a span event"),
        (f'{{"job":{j},"event":"started","time":{s}}}', "v", "required, missing"),
        (f'{{"v":1,"job":{j},"event":"checkpoint_save","start":{s},"end":{e}}}',
         "step", "required on checkpoint_save, missing"),
        (f'{{"v":1,"job":{j},"event":"submitted","time":{s},"framework":"' + "f" * 257 + '"}',
         "framework", "257 characters, at most 256"),
        (f'{{"v":1,"job":{j},"event":"started","time":{s}', None, "not JSON (cut short)"),
        (f'[1,{j},"started",{s}]', None, "JSON, but not an object"),
        # Well formed, but the fleet has no `submitted` line for this job.
        (f'{{"v":1,"job":"ghost-never-submitted","event":"started","time":{s}}}',
         "job", "no submitted line for this job (a check over the whole intake)"),
    ]


def write_bad_lines(count, jobs, first_line, write, rng):
    """Appends `count` malformed lines; returns their report entries."""
    report = []
    for i in range(count):
        victim = jobs[rng.randrange(len(jobs))]
        when = int(victim["submitted"] * TICKS)
        catalog = bad_line_catalog(victim["job"], when)
        text, field, problem = catalog[i % len(catalog)]
        write(text + "\n")
        report.append({"line": first_line + i, "field": field, "problem": problem,
                       "text": text})
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="events file (JSON Lines), - for stdout")
    parser.add_argument("--answers", help="the known answers (JSON)")
    parser.add_argument("--roofs", help="the roof table the answers assume (JSON)")
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--steps-per-job", type=int, default=1000,
                        help="average step lines per job (the fleet's total is within a "
                             "job's worth of jobs x M)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shuffle", action="store_true",
                        help="write each job's lines in a shuffled order")
    parser.add_argument("--bad-lines", type=int, default=0,
                        help="append K malformed lines (needs --bad-report)")
    parser.add_argument("--bad-report", help="what is wrong with each bad line (JSON)")
    parser.add_argument("--program-basis", choices=("step-span", "productive"),
                        default="step-span",
                        help="program goodput's measured time: the kept steps' spans "
                             "(default) or their productive part")
    args = parser.parse_args(argv)
    if args.jobs < 1 or args.steps_per_job < 1:
        parser.error("--jobs and --steps-per-job must be >= 1")
    if args.bad_lines and not args.bad_report:
        parser.error("--bad-lines needs --bad-report")

    began = wallclock.perf_counter()
    fleet = Fleet(args.seed, args.jobs, args.steps_per_job, args.shuffle, args.program_basis)
    if args.out == "-":
        out = sys.stdout
    else:
        out = open(args.out, "w", encoding="utf-8", newline="\n", buffering=1 << 20)
    try:
        fleet.generate(out.write)
        bad = write_bad_lines(args.bad_lines, fleet.jobs, fleet.lines + 1, out.write,
                              random.Random(args.seed - 1))
    finally:
        if out is not sys.stdout:
            out.close()
        else:
            out.flush()
    took = wallclock.perf_counter() - began

    if args.bad_report:
        with open(args.bad_report, "w", encoding="utf-8") as f:
            json.dump({"lines": bad}, f, indent=1, ensure_ascii=False)
            f.write("\n")
    if args.roofs:
        with open(args.roofs, "w", encoding="utf-8") as f:
            json.dump({"per": "device", "roofs": ROOFS}, f, indent=1)
            f.write("\n")
    if args.answers:
        jobs = fleet.jobs
        answers = {
            "format": FORMAT,
            "generator": {"seed": args.seed, "jobs": args.jobs,
                          "steps_per_job": args.steps_per_job, "shuffle": args.shuffle,
                          "bad_lines": args.bad_lines},
            "program_basis": args.program_basis,
            "conventions": CONVENTIONS,
            # Times and seconds are exact (1/1024 s grid); ratios round once
            # per division and sums of ideal seconds once per addition.
            "tolerance": {"relative": 1e-9, "absolute": 1e-9},
            "counts": {"jobs": len(jobs), "lines": fleet.lines, "step_lines": fleet.step_lines,
                       "kept_steps": sum(job["kept_steps"] for job in jobs),
                       "lost_steps": sum(job["lost_steps"] for job in jobs),
                       "bad_lines": len(bad)},
            "fleet": aggregate(jobs),
            "by_device_kind": breakdown(jobs, "device_kind"),
            "by_size": breakdown(jobs, "size_bucket"),
            "by_framework": breakdown(jobs, "framework"),
            "by_workload": breakdown(jobs, "workload"),
            "by_window": breakdown(jobs, "window"),
            "jobs": jobs,
        }
        with open(args.answers, "w", encoding="utf-8") as f:
            json.dump(answers, f, indent=1, ensure_ascii=False)
            f.write("\n")
    print(f"fleet_synth: {args.jobs} jobs, {fleet.lines} lines ({fleet.step_lines} steps)"
          f" + {len(bad)} bad in {took:.1f} s: {fleet.lines / max(took, 1e-9):,.0f} lines/s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
