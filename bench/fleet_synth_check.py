#!/usr/bin/env python3
"""Re-derives a synthetic fleet's goodput from its events and compares it with
the generator's known answers (bench/fleet_synth.py).

A deliberately plain implementation of docs/fleet-events.md, sharing no code
with the generator: every line is validated against the format's tables,
repeated events are dropped, each job's lines are sorted by time, holding
time is swept from `granted`/`released`, steps are judged kept or lost by the
doc's two sentences taken literally (each step against every later restore
and save), and every instant of holding time is given the first cause of the
doc's priority list by a sweep over all span boundaries. The fleet's
aggregates are then recomputed from these per-job figures. Where the doc
leaves a choice open, the check follows the conventions the answers file
names (and says so), and it counts the jobs that exercise each of them.

Slow (a few microseconds a line, everything in memory): for the small fleets
of the tests, not for the 10-million-step benchmark.

usage:
  bench/fleet_synth_check.py --events events.jsonl --answers answers.json --roofs roofs.json
                             [--bad-report bad.json] [--quiet]
Exit status 0 when every figure matches within the answers' tolerance.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import unicodedata
from datetime import datetime, timezone

# ---- the format (docs/fleet-events.md, "Lines") --------------------------------

POINT = {
    "submitted": {"framework": ("text256", False), "model": ("text256", False),
                  "workload": ("text256", False), "size": ("text256", False),
                  "model_params": ("numbers", False)},
    "requested": {"device_kind": ("text1-64", True), "devices": ("int>=1", True)},
    "granted": {"devices": ("int>=1", True)},
    "released": {"devices": ("int>=1", True)},
    "started": {},
    "preempted": {},
    "failed": {"reason": ("text", False)},
    "ended": {"status": ("status", True)},
}
SPAN = {
    "init": {},
    "compile": {},
    "step": {"step": ("int>=0", True), "examples": ("int>=0", True),
             "flops": ("number>=0", False), "bytes": ("number>=0", False)},
    "data_wait": {},
    "checkpoint_save": {"step": ("int>=0", True)},
    "checkpoint_restore": {"step": ("int>=0", True)},
}
STATUSES = ("completed", "failed", "cancelled", "preempted")


class Invalid(Exception):
    def __init__(self, field, message):
        super().__init__(message)
        self.field = field


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_value(kind, value):
    """None if `value` is a valid `kind`, else what is wrong."""
    if kind in ("text", "text256", "text1-64", "job"):
        if not isinstance(value, str):
            return "not a string"
        low, high = {"text": (0, math.inf), "text256": (0, 256), "text1-64": (1, 64),
                     "job": (1, 256)}[kind]
        if not low <= len(value) <= high:
            return f"{len(value)} characters, not {low}-{high}"
        if kind == "job" and any(unicodedata.category(c) == "Cc" for c in value):
            return "a control character"
        return None
    if kind.startswith("int>="):
        if not isinstance(value, int) or isinstance(value, bool):
            return "not an integer"
        return None if value >= int(kind[5:]) else "below " + kind[5:]
    if kind == "number>=0":
        if not is_number(value):
            return "not a number"
        return None if value >= 0 else "negative"
    if kind == "numbers":
        if not isinstance(value, dict) or not all(is_number(v) for v in value.values()):
            return "not an object of numbers"
        return None
    if kind == "status":
        return None if value in STATUSES else "not a status"
    raise AssertionError(kind)


def reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def parse_line(text):
    """The event of one line, or Invalid naming the field (None: the line)."""
    try:
        event = json.loads(text, parse_constant=reject_constant)
    except ValueError as error:
        raise Invalid(None, f"not JSON: {error}") from None
    if not isinstance(event, dict):
        raise Invalid(None, "not a JSON object")
    for field in ("v", "job", "event"):
        if field not in event:
            raise Invalid(field, f"{field} is required")
    if event["v"] != 1 or isinstance(event["v"], bool):
        raise Invalid("v", "version must be 1")
    problem = check_value("job", event["job"])
    if problem:
        raise Invalid("job", problem)
    kind = event["event"]
    if kind not in POINT and kind not in SPAN:
        raise Invalid("event", f"unknown event {kind!r}")
    times = ("time",) if kind in POINT else ("start", "end")
    own = (POINT if kind in POINT else SPAN)[kind]
    for field in event:
        if field not in ("v", "job", "event", *times, *own):
            raise Invalid(field, f"{field!r} is not a field of {kind}")
    for field in times:
        if field not in event:
            raise Invalid(field, f"{field} is required")
        if check_value("number>=0", event[field]):
            raise Invalid(field, "not a number >= 0")
    for field, (value_kind, required) in own.items():
        if field not in event:
            if required:
                raise Invalid(field, f"{field} is required")
            continue
        problem = check_value(value_kind, event[field])
        if problem:
            raise Invalid(field, problem)
    if kind in SPAN and event["end"] < event["start"]:
        raise Invalid("end", "end before start")
    return event


def identity(event):
    """What makes two lines the same event (the doc: job, kind, time or span, step)."""
    return (event["job"], event["event"], event.get("time"), event.get("start"),
            event.get("end"), event.get("step"))


# ---- the decomposition (docs/fleet-events.md, "The decomposition") -------------

PRIORITY = ("data_loading", "checkpointing", "compilation", "initialization", "productive",
            "lost_progress")
SPAN_CAUSE = {"data_wait": "data_loading", "checkpoint_save": "checkpointing",
              "checkpoint_restore": "checkpointing", "compile": "compilation",
              "init": "initialization"}
BADPUT = ("initialization", "compilation", "data_loading", "checkpointing", "lost_progress",
          "other")


def event_time(event):
    return event["time"] if "time" in event else event["start"]


def fc_model_flops(params):
    """docs/fleet-events.md: paradnn's model FLOPs, 6*B*(I*N + (L-1)*N^2 + N*O)."""
    layer, node = params["layer"], params["node"]
    inp, out, batch = params["input"], params["output"], params["batch"]
    macs = inp * node + (layer - 1) * node * node + node * out
    return 6 * macs * batch


def holding_intervals(events, requested, begin, end):
    """Where the running sum of granted minus released is at least `requested`."""
    changes = {}
    for e in events:
        if e["event"] in ("granted", "released"):
            sign = 1 if e["event"] == "granted" else -1
            changes[e["time"]] = changes.get(e["time"], 0) + sign * e["devices"]
    held, since, intervals = 0, None, []
    for when in sorted(changes):
        held += changes[when]
        if held >= requested and since is None:
            since = when
        elif held < requested and since is not None:
            intervals.append((since, when))
            since = None
    if since is not None:
        intervals.append((since, end))
    clipped = [(max(a, begin), min(b, end)) for a, b in intervals]
    return [(a, b) for a, b in clipped if b > a]


def derive_job(events, roofs, program_basis):
    """One job's figures from its (deduplicated, sorted) events."""
    by_kind = {}
    for e in events:
        by_kind.setdefault(e["event"], []).append(e)
    submitted = by_kind["submitted"][0]
    requested = by_kind["requested"][0]
    devices = requested["devices"]
    ended = by_kind.get("ended", [None])[0]
    begin = submitted["time"]
    end = ended["time"] if ended else max(e.get("end", e.get("time")) for e in events)
    status = ended["status"] if ended else None
    holding = holding_intervals(events, devices, begin, end)

    # Kept or lost, each step by the doc's two sentences.
    saves = by_kind.get("checkpoint_save", [])
    restores = by_kind.get("checkpoint_restore", [])
    kept, lost = [], []
    for step in by_kind.get("step", []):
        n, done = step["step"], step["end"]
        gone = any(r["start"] >= done and r["step"] < n for r in restores)
        if not gone and status != "completed":
            gone = not any(s["start"] >= done and s["step"] >= n for s in saves)
        (lost if gone else kept).append(step)

    # Every instant of holding time: the first cause that applies.
    intervals = [("holding", a, b) for a, b in holding]
    for e in events:
        if e["event"] in SPAN_CAUSE:
            intervals.append((SPAN_CAUSE[e["event"]], e["start"], e["end"]))
    intervals += [("productive", s["start"], s["end"]) for s in kept]
    intervals += [("lost_progress", s["start"], s["end"]) for s in lost]
    deltas = {}
    for cause, a, b in intervals:
        deltas.setdefault(a, []).append((cause, 1))
        deltas.setdefault(b, []).append((cause, -1))
    active = dict.fromkeys(("holding", *PRIORITY), 0)
    seconds = dict.fromkeys(("productive", *BADPUT), 0.0)
    points = sorted(deltas)
    for here, following in zip(points, points[1:] + [None]):
        for cause, change in deltas[here]:
            active[cause] += change
        if following is None or not active["holding"]:
            continue
        cause = next((c for c in PRIORITY if active[c]), "other")
        seconds[cause] += following - here
    holding_seconds = sum(b - a for a, b in holding)

    # Program goodput over the kept steps.
    model = submitted.get("model")
    params = submitted.get("model_params") or {}
    is_fc = model == "fc" and all(k in params for k in ("layer", "node", "input", "output",
                                                         "batch"))
    roof = roofs.get(requested["device_kind"])
    ideal, blank = 0.0, None
    notes = set()
    if holding_seconds == 0:
        blank = "no holding time"
    elif roof is None:
        blank = f"no roof for device_kind {requested['device_kind']}"
    elif not kept:
        blank = "no kept steps"
    for step in kept:
        if blank:
            break
        if is_fc:
            flops = fc_model_flops(params)
            nbytes = 0.0  # compute-bound by construction (checked just below)
            if "flops" in step and step["flops"] != flops:
                notes.add("fc-flops-replaced")
            if "bytes" in step and step["bytes"] / (devices * roof["bytes_per_sec"]) > \
                    flops / (devices * roof["flops_per_sec"]):
                raise AssertionError(f"{submitted['job']}: an fc job that is not compute-bound")
        elif "flops" in step:
            flops, nbytes = step["flops"], step.get("bytes", 0.0)
        else:
            blank = "no FLOPs"
            break
        ideal += max(flops / (devices * roof["flops_per_sec"]),
                     nbytes / (devices * roof["bytes_per_sec"]))
    kept_step_seconds = sum(s["end"] - s["start"] for s in kept)
    program_seconds = seconds["productive"] if program_basis == "productive" else kept_step_seconds

    scheduling = holding_seconds / (end - begin)
    runtime = seconds["productive"] / holding_seconds if holding_seconds else None
    program = None if blank else ideal / program_seconds
    mpg = None if program is None else scheduling * runtime * program

    # Which of the answers' conventions this job exercises.
    for step in kept:
        if any(o["event"] in ("data_wait", "compile") and step["start"] <= o["start"]
               and o["end"] <= step["end"] for o in events):
            notes.add("span-inside-kept-step")
            break
    if any(e["event"] == "granted" for e in events) and \
            any(e["event"] == "granted" and e["devices"] < devices for e in events):
        notes.add("partial-grant")
    if ended and any(event_time(e) > ended["time"] for e in events):
        notes.add("line-after-ended")
    if any(r["step"] == 0 for r in restores):
        notes.add("restore-to-step-0")
    if any(e["event"] == "preempted" for e in events):
        notes.add("preempted")
    if status != "completed" and kept and lost:
        notes.add("unsaved-steps-lost-at-end")

    return {
        "job": submitted["job"], "device_kind": requested["device_kind"], "devices": devices,
        "framework": submitted.get("framework"), "workload": submitted.get("workload"),
        "window": datetime.fromtimestamp(math.floor(begin / 86400) * 86400,
                                         timezone.utc).strftime("%Y-%m-%d"),
        "elapsed_seconds": end - begin, "holding_seconds": holding_seconds,
        "productive_seconds": seconds["productive"],
        "badput_seconds": {part: seconds[part] for part in BADPUT},
        "kept_steps": len(kept), "lost_steps": len(lost),
        "kept_step_seconds": kept_step_seconds,
        "ideal_seconds": None if blank else ideal,
        "program_denominator_seconds": program_seconds,
        "scheduling_goodput": scheduling, "runtime_goodput": runtime,
        "program_goodput": program, "program_blank_reason": blank, "mpg": mpg,
        "notes": notes,
    }


def size_of(devices):
    return "1" if devices == 1 else "2-8" if devices <= 8 else "9-64" if devices <= 64 else "65+"


def aggregate(jobs):
    """The doc's "Aggregates": each job weighted by devices x the share's denominator."""
    def total(value):
        return sum(job["devices"] * value(job) for job in jobs)
    with_program = [job for job in jobs if job["program_goodput"] is not None]
    elapsed = total(lambda j: j["elapsed_seconds"])
    holding = total(lambda j: j["holding_seconds"])
    productive = total(lambda j: j["productive_seconds"])
    ideal = sum(j["devices"] * j["ideal_seconds"] for j in with_program)
    measured = sum(j["devices"] * j["program_denominator_seconds"] for j in with_program)
    scheduling = holding / elapsed if elapsed else None
    runtime = productive / holding if holding else None
    program = ideal / measured if measured else None
    shares = (scheduling, runtime, program)
    return {
        "jobs": len(jobs), "program_jobs": len(with_program),
        "device_seconds": {"elapsed": elapsed, "holding": holding, "productive": productive,
                           "program_denominator": measured, "ideal": ideal},
        "badput_device_seconds": {part: total(lambda j, p=part: j["badput_seconds"][p])
                                  for part in BADPUT},
        "scheduling_goodput": scheduling, "runtime_goodput": runtime, "program_goodput": program,
        "mpg": None if None in shares else scheduling * runtime * program,
    }


# ---- comparing ------------------------------------------------------------------


class Comparison:
    def __init__(self, relative, absolute):
        self.relative, self.absolute = relative, absolute
        self.failures = []
        self.compared = 0

    def same(self, where, got, want):
        """Records a mismatch of two figures (numbers, None, text or nested dicts)."""
        if isinstance(want, dict):
            for key in want:
                self.same(f"{where}.{key}", got.get(key) if isinstance(got, dict) else None,
                          want[key])
            return
        self.compared += 1
        if isinstance(want, (int, float)) and isinstance(got, (int, float)) \
                and not isinstance(want, bool):
            if abs(got - want) <= max(self.absolute, self.relative * abs(want)):
                return
        elif got == want:
            return
        self.failures.append(f"{where}: derived {got!r}, answers say {want!r}")


JOB_FIELDS = ("device_kind", "devices", "framework", "workload", "window", "elapsed_seconds",
              "holding_seconds", "productive_seconds", "badput_seconds", "kept_steps",
              "lost_steps", "kept_step_seconds", "ideal_seconds", "program_denominator_seconds",
              "scheduling_goodput", "runtime_goodput", "program_goodput",
              "program_blank_reason", "mpg")


def read_events(path, errors):
    """Valid events by job (duplicates dropped); invalid lines into `errors`."""
    by_job, seen, duplicates = {}, set(), 0
    with open(path, encoding="utf-8") as lines:
        for number, text in enumerate(lines, 1):
            try:
                event = parse_line(text)
            except Invalid as invalid:
                errors[number] = (invalid.field, str(invalid))
                continue
            key = identity(event)
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            event["_line"] = number
            by_job.setdefault(event["job"], []).append(event)
    # A job is known from its `submitted` line; `requested` must come first.
    for job in list(by_job):
        kinds = {e["event"] for e in by_job[job]}
        if "submitted" not in kinds or "requested" not in kinds:
            for e in by_job.pop(job):
                errors[e["_line"]] = ("job", "no submitted or requested line for this job")
    return by_job, duplicates


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", required=True)
    parser.add_argument("--answers", required=True)
    parser.add_argument("--roofs", required=True)
    parser.add_argument("--bad-report", help="the generator's list of malformed lines")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)

    with open(args.answers, encoding="utf-8") as f:
        answers = json.load(f)
    with open(args.roofs, encoding="utf-8") as f:
        roofs = json.load(f)["roofs"]
    check = Comparison(answers["tolerance"]["relative"], answers["tolerance"]["absolute"])

    errors = {}
    by_job, duplicates = read_events(args.events, errors)
    bad = {}
    if args.bad_report:
        with open(args.bad_report, encoding="utf-8") as f:
            bad = {entry["line"]: entry for entry in json.load(f)["lines"]}
    for number in sorted(set(errors) | set(bad)):
        if number not in errors:
            check.failures.append(f"line {number}: listed as bad ({bad[number]['problem']}) "
                                  "but valid")
        elif number not in bad:
            check.failures.append(f"line {number}: invalid ({errors[number][1]}) but not listed")
        elif errors[number][0] != bad[number]["field"]:
            check.failures.append(f"line {number}: invalid in {errors[number][0]!r}, the report "
                                  f"says {bad[number]['field']!r}")
    if duplicates:
        check.failures.append(f"{duplicates} repeated events (the generator writes none)")

    derived = {}
    for job, events in by_job.items():
        events.sort(key=lambda e: (event_time(e), e["_line"]))
        derived[job] = derive_job(events, roofs, answers["program_basis"])
    wanted = {job["job"]: job for job in answers["jobs"]}
    if set(derived) != set(wanted):
        check.failures.append(f"jobs: derived {len(derived)}, answers have {len(wanted)}; "
                              f"only derived {sorted(set(derived) - set(wanted))[:5]}, "
                              f"only in answers {sorted(set(wanted) - set(derived))[:5]}")
    for name in sorted(set(derived) & set(wanted)):
        for field in JOB_FIELDS:
            check.same(f"job {name!r} {field}", derived[name][field], wanted[name][field])
        parts = sum(derived[name]["badput_seconds"].values()) + derived[name]["productive_seconds"]
        check.same(f"job {name!r} parts sum to holding", parts, derived[name]["holding_seconds"])

    jobs = [derived[name] for name in sorted(derived)]
    check.same("fleet", aggregate(jobs), answers["fleet"])
    for section, key in (("by_device_kind", "device_kind"), ("by_framework", "framework"),
                         ("by_workload", "workload"), ("by_window", "window"),
                         ("by_size", None)):
        groups = {}
        for job in jobs:
            groups.setdefault(size_of(job["devices"]) if key is None else job[key], []).append(job)
        check.same(section, {value: aggregate(group) for value, group in groups.items()},
                   answers[section])
        if set(groups) != set(answers[section]):
            check.failures.append(f"{section}: groups {sorted(groups)} != "
                                  f"{sorted(answers[section])}")

    notes = {}
    for job in jobs:
        for note in job["notes"]:
            notes[note] = notes.get(note, 0) + 1
    steps = sum(job["kept_steps"] + job["lost_steps"] for job in jobs)
    if not args.quiet:
        print(f"fleet_synth_check: {len(jobs)} jobs, {steps} steps, {len(errors)} invalid lines, "
              f"{check.compared} figures compared (relative {check.relative:g}, "
              f"absolute {check.absolute:g}), program basis {answers['program_basis']}")
        print("  conventions exercised (jobs): " +
              ", ".join(f"{note} {count}" for note, count in sorted(notes.items())))
    for failure in check.failures[:50]:
        print("MISMATCH " + failure)
    if len(check.failures) > 50:
        print(f"... and {len(check.failures) - 50} more")
    if check.failures:
        print(f"fleet_synth_check: FAILED, {len(check.failures)} mismatches")
        return 1
    if not args.quiet:
        print("fleet_synth_check: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
