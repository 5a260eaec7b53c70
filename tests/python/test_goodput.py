"""paradnn.goodput.Recorder against docs/fleet-events.md, and the example that trains
with it (examples/goodput_train.py) through a preemption and a restore."""

from __future__ import annotations

import importlib.util
import io
import json
import math
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from conftest import SOURCE_DIR

try:
    from paradnn import goodput
except ImportError:
    # A checkout without the package installed (paradnn/__init__ needs the generated
    # modules): the module is standard library only, so test the source file.
    _spec = importlib.util.spec_from_file_location(
        "paradnn_goodput_under_test", SOURCE_DIR / "python" / "paradnn" / "goodput.py")
    goodput = importlib.util.module_from_spec(_spec)
    sys.modules[_spec.name] = goodput
    _writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        _spec.loader.exec_module(goodput)  # no __pycache__ in the source tree
    finally:
        sys.dont_write_bytecode = _writes_bytecode

Recorder = goodput.Recorder
EXAMPLE = SOURCE_DIR / "examples" / "goodput_train.py"


# ---- an independent reading of docs/fleet-events.md ----------------------------

def integer(minimum: int) -> Callable[[Any], bool]:
    return lambda v: type(v) is int and v >= minimum


def number(minimum: float) -> Callable[[Any], bool]:
    return lambda v: type(v) in (int, float) and math.isfinite(v) and v >= minimum


def text(shortest: int, longest: int) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, str) and shortest <= len(v) <= longest


def numbers_object(value: Any) -> bool:
    return isinstance(value, dict) and all(number(-math.inf)(v) for v in value.values())


# kind -> (times, {field: (valid, required)})
SCHEMA: dict[str, tuple[tuple[str, ...], dict[str, tuple[Callable[[Any], bool], bool]]]] = {
    "submitted": (("time",), {name: (text(0, 256), False)
                              for name in ("framework", "model", "workload", "size")}
                  | {"model_params": (numbers_object, False)}),
    "requested": (("time",), {"device_kind": (text(1, 64), True), "devices": (integer(1), True)}),
    "granted": (("time",), {"devices": (integer(1), True)}),
    "released": (("time",), {"devices": (integer(1), True)}),
    "started": (("time",), {}),
    "preempted": (("time",), {}),
    "failed": (("time",), {"reason": (lambda v: isinstance(v, str), False)}),
    "ended": (("time",), {"status": (lambda v: v in ("completed", "failed", "cancelled",
                                                       "preempted"), True)}),
    "init": (("start", "end"), {}),
    "compile": (("start", "end"), {}),
    "step": (("start", "end"), {"step": (integer(0), True), "examples": (integer(0), True),
                                "flops": (number(0), False), "bytes": (number(0), False)}),
    "data_wait": (("start", "end"), {}),
    "checkpoint_save": (("start", "end"), {"step": (integer(0), True)}),
    "checkpoint_restore": (("start", "end"), {"step": (integer(0), True)}),
}


def check_line(raw: str) -> dict[str, Any]:
    """One line, parsed; AssertionError naming what breaks the format."""
    assert raw.endswith("\n"), raw
    event = json.loads(raw)
    assert event["v"] == 1 and type(event["v"]) is int, raw
    job = event["job"]
    assert text(1, 256)(job) and not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in job)
    times, fields = SCHEMA[event["event"]]
    allowed = {"v", "job", "event", *times, *fields}
    assert set(event) <= allowed, f"{raw}: fields beyond {sorted(allowed)}"
    for name in times:
        assert number(0)(event[name]), f"{raw}: {name}"
    if "start" in times:
        assert event["start"] <= event["end"], raw
    for name, (valid, required) in fields.items():
        if name in event:
            assert valid(event[name]), f"{raw}: {name}"
        else:
            assert not required, f"{raw}: {name} is missing"
    return event


def read_events(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as lines:
        return [check_line(raw) for raw in lines]


class FakeClock:
    """1000.0, 1001.0, ...: one second per reading."""

    def __init__(self, start: float = 1000.0) -> None:
        self.next = start

    def __call__(self) -> float:
        self.next += 1.0
        return self.next - 1.0


def lines(out: io.StringIO) -> list[str]:
    return out.getvalue().splitlines(keepends=True)


# ---- the recorder ----------------------------------------------------------------

def test_a_job_gives_exactly_these_lines() -> None:
    out = io.StringIO()
    rec = Recorder(out, "run-1", framework="pytorch", model="fc",
                   model_params={"layer": 2, "node": 128}, clock=FakeClock())
    rec.requested("cpu", 2)
    rec.granted(2)
    rec.started()
    with rec.init():
        pass
    with rec.compile():
        pass
    with rec.data_wait():
        pass
    with rec.step(1, 64, flops=1.5e9, bytes=2e6):
        pass
    with rec.checkpoint_save(1):
        pass
    rec.preempted()
    rec.released(2)
    rec.granted(2)
    with rec.checkpoint_restore(1):
        pass
    rec.failed("NaN loss")
    rec.ended("failed")
    assert lines(out) == [
        '{"v":1,"job":"run-1","event":"submitted","time":1000.0,"framework":"pytorch",'
        '"model":"fc","workload":"training","model_params":{"layer":2,"node":128}}\n',
        '{"v":1,"job":"run-1","event":"requested","time":1001.0,"device_kind":"cpu","devices":2}\n',
        '{"v":1,"job":"run-1","event":"granted","time":1002.0,"devices":2}\n',
        '{"v":1,"job":"run-1","event":"started","time":1003.0}\n',
        '{"v":1,"job":"run-1","event":"init","start":1004.0,"end":1005.0}\n',
        '{"v":1,"job":"run-1","event":"compile","start":1006.0,"end":1007.0}\n',
        '{"v":1,"job":"run-1","event":"data_wait","start":1008.0,"end":1009.0}\n',
        '{"v":1,"job":"run-1","event":"step","start":1010.0,"end":1011.0,"step":1,"examples":64,'
        '"flops":1500000000.0,"bytes":2000000.0}\n',
        '{"v":1,"job":"run-1","event":"checkpoint_save","start":1012.0,"end":1013.0,"step":1}\n',
        '{"v":1,"job":"run-1","event":"preempted","time":1014.0}\n',
        '{"v":1,"job":"run-1","event":"released","time":1015.0,"devices":2}\n',
        '{"v":1,"job":"run-1","event":"granted","time":1016.0,"devices":2}\n',
        '{"v":1,"job":"run-1","event":"checkpoint_restore","start":1017.0,"end":1018.0,"step":1}\n',
        '{"v":1,"job":"run-1","event":"failed","time":1019.0,"reason":"NaN loss"}\n',
        '{"v":1,"job":"run-1","event":"ended","time":1020.0,"status":"failed"}\n',
    ]
    for raw in lines(out):
        check_line(raw)


def test_optional_fields_are_left_out_and_given_times_are_kept() -> None:
    out = io.StringIO()
    rec = Recorder(out, "j", workload=None, size="large", submitted_at=5, clock=FakeClock())
    rec.requested("tpu-v5e", 8, time=6)
    rec.granted(8, time=7.25)
    rec.span("step", 8, 9.5, step=0, examples=0)
    rec.failed()
    with rec.step(2, 10) as step:
        step.set(examples=7, flops=3)
    assert lines(out) == [
        '{"v":1,"job":"j","event":"submitted","time":5,"size":"large"}\n',
        '{"v":1,"job":"j","event":"requested","time":6,"device_kind":"tpu-v5e","devices":8}\n',
        '{"v":1,"job":"j","event":"granted","time":7.25,"devices":8}\n',
        '{"v":1,"job":"j","event":"step","start":8,"end":9.5,"step":0,"examples":0}\n',
        '{"v":1,"job":"j","event":"failed","time":1000.0}\n',
        '{"v":1,"job":"j","event":"step","start":1001.0,"end":1002.0,"step":2,"examples":7,'
        '"flops":3}\n',
    ]


def test_numpy_numbers_are_written_as_plain_numbers() -> None:
    np = pytest.importorskip("numpy")
    out = io.StringIO()
    rec = Recorder(out, "j", model_params={"node": np.int64(3)}, clock=FakeClock())
    with rec.step(np.int64(4), np.int32(64), flops=np.float32(2.0)):
        pass
    assert [json.loads(raw) for raw in lines(out)][1] == {
        "v": 1, "job": "j", "event": "step", "start": 1001.0, "end": 1002.0, "step": 4,
        "examples": 64, "flops": 2.0}


def recorder() -> Recorder:
    rec = Recorder(io.StringIO(), "j", clock=FakeClock())
    rec.requested("cpu", 1)
    return rec


@pytest.mark.parametrize("call, message", [
    (lambda: Recorder(io.StringIO(), ""), r"submitted: job must be a string of 1 to 256 "
                                          r"characters without control characters, not ''"),
    (lambda: Recorder(io.StringIO(), "j" * 257), r"submitted: job must be .* 1 to 256"),
    (lambda: Recorder(io.StringIO(), "a\tb"), r"submitted: job .*without control characters"),
    (lambda: Recorder(io.StringIO(), "a\x85b"), r"submitted: job .*without control characters"),
    (lambda: Recorder(io.StringIO(), 7), r"submitted: job must be a string"),
    (lambda: Recorder(io.StringIO(), "j", framework="f" * 257),
     r"submitted: framework must be a string of 0 to 256 characters"),
    (lambda: Recorder(io.StringIO(), "j", model_params={"node": "128"}),
     r"submitted: model_params must be an object of numbers \('node' is not a finite number\)"),
    (lambda: Recorder(io.StringIO(), "j", model_params=[1]),
     r"submitted: model_params must be an object of numbers, not \[1\]"),
    (lambda: Recorder(io.StringIO(), "j", submitted_at=-1),
     r"submitted: time must be a finite number >= 0, not -1"),
    (lambda: recorder().requested("", 1), r"requested: device_kind must be a string of 1 to 64"),
    (lambda: recorder().requested("c" * 65, 1), r"requested: device_kind must be .* 1 to 64"),
    (lambda: recorder().requested("cpu", 0), r"requested: devices must be an integer >= 1, not 0"),
    (lambda: recorder().granted(1.5), r"granted: devices must be an integer >= 1, not 1.5"),
    (lambda: recorder().granted(True), r"granted: devices must be an integer >= 1, not True"),
    (lambda: recorder().released(None), r"released: devices is required"),
    (lambda: recorder().ended("done"),
     r"ended: status must be one of completed, failed, cancelled, preempted, not 'done'"),
    (lambda: recorder().failed(3), r"failed: reason must be a string, not 3"),
    (lambda: recorder().started(time=float("nan")), r"started: time must be a finite number"),
    (lambda: recorder().step(-1, 1), r"step: step must be an integer >= 0, not -1"),
    (lambda: recorder().step(1, -1), r"step: examples must be an integer >= 0, not -1"),
    (lambda: recorder().step(1, 1, flops=-2), r"step: flops must be a finite number >= 0, not -2"),
    (lambda: recorder().step(1, 1, bytes=float("inf")), r"step: bytes must be a finite number"),
    (lambda: recorder().step(1, 1).set(byte=3),
     r"step: 'byte' is not a field; allowed: v, job, event, start, end, step, examples, flops, "
     r"bytes"),
    (lambda: recorder().checkpoint_save(-1), r"checkpoint_save: step must be an integer >= 0"),
    (lambda: recorder().checkpoint_restore("3"), r"checkpoint_restore: step must be an integer"),
    (lambda: recorder().span("step", 5, 4, step=1, examples=1),
     r"step: end \(4\) is before start \(5\)"),
    (lambda: recorder().span("started", 1, 2), r"event must be one of init, compile, step"),
    (lambda: Recorder(io.StringIO(), "j").granted(1),
     r"granted: the job has no requested line before it"),
])
def test_bad_arguments_name_the_field_and_what_is_allowed(call, message) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_check_event_refuses_what_the_format_refuses() -> None:
    good = {"v": 1, "job": "j", "event": "started", "time": 1}
    assert goodput.check_event(good) == good
    for bad, message in [({**good, "v": 2}, "started: v must be 1, not 2"),
                         ({**good, "event": "begun"}, "event must be one of submitted, "),
                         ({**good, "start": 1}, "started: 'start' is not a field"),
                         ({"v": 1, "job": "j", "event": "started"}, "started: time is required")]:
        with pytest.raises(ValueError, match=message):
            goodput.check_event(bad)


def test_nothing_follows_ended() -> None:
    rec = recorder()
    rec.ended("cancelled")
    with pytest.raises(ValueError, match="job 'j' has ended"):
        rec.started()


def test_a_step_whose_block_raises_is_not_written_but_waits_are() -> None:
    out = io.StringIO()
    rec = Recorder(out, "j", clock=FakeClock())
    with pytest.raises(StopIteration):
        with rec.data_wait():
            next(iter([]))
    with pytest.raises(RuntimeError):
        with rec.step(1, 8):
            raise RuntimeError("out of memory")
    with pytest.raises(OSError):
        with rec.checkpoint_save(1):
            raise OSError("disk full")
    assert [json.loads(raw)["event"] for raw in lines(out)] == ["submitted", "data_wait"]


def test_an_exception_leaving_the_recorder_is_a_failure_but_not_an_end(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    with pytest.raises(RuntimeError):
        with Recorder(path, "j", clock=FakeClock()):
            raise RuntimeError("CUDA error")
    with pytest.raises(KeyboardInterrupt):
        with Recorder(path, "j", clock=FakeClock(2000)):
            raise KeyboardInterrupt
    assert [(e["event"], e.get("reason")) for e in read_events(path)] == [
        ("submitted", None), ("failed", "RuntimeError: CUDA error")]


def test_a_restarted_process_continues_the_file(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    first = Recorder(path, "j", clock=FakeClock(1000))
    first.requested("cpu", 1)
    first.granted(1)
    first.close()
    assert not first.resumed
    # Another job's lines and a line torn by a kill, as a shared file may hold.
    other = Recorder(path, "other", clock=FakeClock(1100))
    other.close()
    with open(path, "a") as torn:
        torn.write('{"v":1,"job":"j","event":"st')
    second = Recorder(path, "j", clock=FakeClock(2000))
    assert second.resumed
    second.granted(1)  # its requested line is in the file
    second.ended("completed")
    second.close()
    raw = path.read_text().splitlines(keepends=True)
    assert raw[4] == '{"v":1,"job":"j","event":"st\n'
    events = [check_line(line) for line in raw[:4] + raw[5:]]
    assert [(e["job"], e["event"]) for e in events] == [
        ("j", "submitted"), ("j", "requested"), ("j", "granted"), ("other", "submitted"),
        ("j", "granted"), ("j", "ended")]
    with pytest.raises(ValueError, match=r"job: 'j' has already ended in .*give a new run"):
        Recorder(path, "j")


def test_threads_write_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    with Recorder(path, "j") as rec:
        def steps(first: int) -> None:
            for n in range(first, first + 200):
                with rec.step(n, 1):
                    pass
        threads = [threading.Thread(target=steps, args=(1000 * i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    events = read_events(path)
    assert sorted(e["step"] for e in events[1:]) == sorted(
        n for i in range(4) for n in range(1000 * i, 1000 * i + 200))


def test_the_default_clock_is_unix_seconds_and_steady() -> None:
    import time

    rec = Recorder(io.StringIO(), "j")
    readings = [rec.now() for _ in range(1000)]
    assert readings == sorted(readings)
    assert abs(readings[-1] - time.time()) < 1.0


# ---- the example ---------------------------------------------------------------

def run_example(tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    pytest.importorskip("torch")
    out = tmp_path / "events.jsonl"
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--out", str(out), "--job", "example", "--seed", "3",
         "--threads", "1", *args],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert result.returncode == 0, result.stderr
    return read_events(out)


def flops_per_step(params: dict[str, int]) -> int:
    """6 x forward MACs x batch of ParaDnn's FC (docs/models.md)."""
    macs = (params["input"] * params["node"] + (params["layer"] - 1) * params["node"] ** 2
            + params["node"] * params["output"])
    return 6 * macs * params["batch"]


def test_the_example_loses_the_steps_after_its_last_checkpoint(tmp_path: Path) -> None:
    events = run_example(tmp_path, "--steps", "40", "--preempt-at", "27",
                         "--checkpoint-every", "10")
    assert {e["job"] for e in events} == {"example"}
    # One writer with a steady clock: each line is written when it happens (a span at
    # its end), so the file is in time order.
    moments = [e.get("time", e.get("end")) for e in events]
    assert moments == sorted(moments)
    kinds = [e["event"] for e in events]
    assert kinds.count("submitted") == 1 and kinds[0] == "submitted"
    assert kinds[1] == "requested" and kinds[-1] == "ended"
    assert events[-1]["status"] == "completed"
    assert kinds.count("granted") == 2 and kinds.count("started") == 2
    assert kinds.count("init") == 2 and kinds.count("compile") == 2
    preempted = kinds.index("preempted")
    assert (events[preempted + 1]["event"], events[preempted + 1]["devices"]) == ("released", 1)
    held = sum(e["devices"] for e in events if e["event"] == "granted")
    assert held == sum(e["devices"] for e in events if e["event"] == "released") == 2

    submitted = events[0]
    assert submitted["model"] == "fc" and submitted["framework"].startswith("pytorch")
    params = submitted["model_params"]
    steps = [e for e in events if e["event"] == "step"]
    assert all(s["examples"] == params["batch"] for s in steps)
    assert all(s["flops"] == flops_per_step(params) for s in steps)
    assert kinds.count("data_wait") == len(steps)

    restores = [e for e in events if e["event"] == "checkpoint_restore"]
    assert len(restores) == 1 and restores[0]["step"] == 20
    restore = restores[0]
    before = [s["step"] for s in steps if s["end"] <= restore["start"]]
    after = [s["step"] for s in steps if s["start"] >= restore["end"]]
    assert before == list(range(1, 28))
    assert after == list(range(restore["step"] + 1, 41))
    saves = [e["step"] for e in events if e["event"] == "checkpoint_save"]
    assert saves == [10, 20, 30, 40]
    # Lost progress, by the doc's rule: steps a later restore returned below.
    lost = [n for n in before if n > restore["step"]]
    assert lost == list(range(21, 28))


def test_a_preemption_before_any_checkpoint_restarts_from_step_0(tmp_path: Path) -> None:
    events = run_example(tmp_path, "--steps", "12", "--preempt-at", "5",
                         "--checkpoint-every", "10")
    restores = [e["step"] for e in events if e["event"] == "checkpoint_restore"]
    steps = [e["step"] for e in events if e["event"] == "step"]
    assert restores == [0]
    assert steps == [1, 2, 3, 4, 5] + list(range(1, 13))
    assert events[-1]["event"] == "ended" and events[-1]["status"] == "completed"
