"""A training job's events for ML Productivity Goodput, written from its loop.

    from paradnn.goodput import Recorder
    rec = Recorder("events.jsonl", "run-42", framework="pytorch", model="fc",
                   model_params={"layer": 2, "node": 128, "input": 200, "output": 20, "batch": 64})
    rec.requested("cpu", 1)
    rec.granted(1)
    rec.started()
    with rec.init():
        model = build()
    for step in range(first_step, last_step + 1):
        with rec.data_wait():
            batch = next(batches)
        with rec.step(step, examples=len(batch), flops=flops_per_step):
            train(batch)
        if step % 100 == 0:
            with rec.checkpoint_save(step):
                save(step)
    rec.released(1)
    rec.ended("completed")

Each call appends one line of docs/fleet-events.md (format version 1), for
`paradnn fleet ingest`. Lines are flushed one by one, so a process that is
killed loses none, and a file is opened for appending, so a job restarted
after a preemption continues its own file (the Recorder then sees the job's
`submitted` line and does not write another). Every line is checked against
the format before it is written: a bad argument raises ValueError naming the
field and what is allowed, rather than leaving a line the intake refuses.

Standard library only, so a training environment needs nothing else for it.
"""

from __future__ import annotations

import io
import json
import math
import numbers
import os
import threading
import time as _time
import unicodedata
from pathlib import Path
from typing import IO, Any, Callable, Iterator, Mapping, Optional, Union

FORMAT_VERSION = 1
STATUSES = ("completed", "failed", "cancelled", "preempted")
# Spans written even when their block raises: the time was spent waiting,
# compiling or initializing all the same (a data iterator's StopIteration
# ends a data_wait). A step or checkpoint whose block raised did not happen,
# and must not count as progress kept or as a checkpoint to return to.
SPANS_WRITTEN_ON_ERROR = ("init", "compile", "data_wait")


# ---- the format --------------------------------------------------------------


def _integer(minimum: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        # bool is an int to Python, never to the format.
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
            raise _Refused(f"an integer >= {minimum}", value)
        return int(value)  # numpy integers too, which json cannot write
    return check


def _number(minimum: float) -> Callable[[Any], float]:
    def check(value: Any) -> float:
        if (isinstance(value, bool) or not isinstance(value, numbers.Real)
                or not math.isfinite(value) or value < minimum):
            raise _Refused(f"a finite number >= {minimum:g}", value)
        return value if isinstance(value, (int, float)) else float(value)
    return check


def _text(shortest: int, longest: int, controls: bool = True) -> Callable[[Any], str]:
    allowed = f"a string of {shortest} to {longest} characters"
    if not controls:
        allowed += " without control characters"

    def check(value: Any) -> str:
        if not isinstance(value, str) or not shortest <= len(value) <= longest:
            raise _Refused(allowed, value)
        if not controls and any(unicodedata.category(c) == "Cc" for c in value):
            raise _Refused(allowed, value)
        _check_utf8(value, allowed)
        return value
    return check


def _any_text(value: Any) -> str:
    if not isinstance(value, str):
        raise _Refused("a string", value)
    _check_utf8(value, "a string")
    return value


def _check_utf8(value: str, allowed: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no UTF-8 line can hold it
        raise _Refused(allowed + " (valid Unicode)", value) from None


def _status(value: Any) -> str:
    if value not in STATUSES:
        raise _Refused("one of " + ", ".join(STATUSES), value)
    return value


def _numbers_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _Refused("an object of numbers", value)
    numbers_by_name = {}
    for name, number in value.items():
        if not isinstance(name, str):
            raise _Refused("an object of numbers with string names", name)
        try:
            numbers_by_name[name] = _number(-math.inf)(number)
        except _Refused:
            raise _Refused(f"an object of numbers ({name!r} is not a finite number)",
                           number) from None
    return numbers_by_name


class _Refused(Exception):
    """A value a field does not take; check_event adds the event and field."""

    def __init__(self, allowed: str, value: Any) -> None:
        super().__init__(f"must be {allowed}, not {value!r}")


_TIME = _number(0)
_JOB = _text(1, 256, controls=False)
_ATTRIBUTE = _text(0, 256)
_STEP = _integer(0)
_DEVICES = _integer(1)

# Each kind's own fields (beyond v, job, event and its times): name -> (check, required).
POINT_EVENTS: dict[str, dict[str, tuple[Callable[[Any], Any], bool]]] = {
    "submitted": {"framework": (_ATTRIBUTE, False), "model": (_ATTRIBUTE, False),
                  "workload": (_ATTRIBUTE, False), "size": (_ATTRIBUTE, False),
                  "model_params": (_numbers_object, False)},
    "requested": {"device_kind": (_text(1, 64), True), "devices": (_DEVICES, True)},
    "granted": {"devices": (_DEVICES, True)},
    "released": {"devices": (_DEVICES, True)},
    "started": {},
    "preempted": {},
    "failed": {"reason": (_any_text, False)},
    "ended": {"status": (_status, True)},
}
SPAN_EVENTS: dict[str, dict[str, tuple[Callable[[Any], Any], bool]]] = {
    "init": {},
    "compile": {},
    "step": {"step": (_STEP, True), "examples": (_integer(0), True),
             "flops": (_number(0), False), "bytes": (_number(0), False)},
    "data_wait": {},
    "checkpoint_save": {"step": (_STEP, True)},
    "checkpoint_restore": {"step": (_STEP, True)},
}


def check_event(event: Mapping[str, Any]) -> dict[str, Any]:
    """The event as it is written (numpy numbers made plain), if it is a valid line of
    docs/fleet-events.md version 1; else ValueError naming the field and what is allowed."""
    kind = event.get("event")
    if not isinstance(kind, str) or (kind not in POINT_EVENTS and kind not in SPAN_EVENTS):
        raise ValueError(f"event must be one of {', '.join([*POINT_EVENTS, *SPAN_EVENTS])}, "
                         f"not {kind!r}")
    times = ("time",) if kind in POINT_EVENTS else ("start", "end")
    own = {**POINT_EVENTS, **SPAN_EVENTS}[kind]
    fields = {"v": (_version, True), "job": (_JOB, True), "event": (str, True),
              **{name: (_TIME, True) for name in times}, **own}
    for name in event:
        if name not in fields:
            raise ValueError(f"{kind}: {name!r} is not a field; allowed: {', '.join(fields)}")
    line = {}
    for name, (check, required) in fields.items():
        if name not in event or event[name] is None:
            if required:
                raise ValueError(f"{kind}: {name} is required")
            continue
        try:
            line[name] = check(event[name])
        except _Refused as refused:
            raise ValueError(f"{kind}: {name} {refused}") from None
    if kind in SPAN_EVENTS and line["end"] < line["start"]:
        raise ValueError(f"{kind}: end ({line['end']!r}) is before start ({line['start']!r})")
    return line


def _version(value: Any) -> int:
    if isinstance(value, bool) or value != FORMAT_VERSION:
        raise _Refused(str(FORMAT_VERSION), value)
    return FORMAT_VERSION


# ---- the recorder ------------------------------------------------------------


class SteadyUnixClock:
    """Unix seconds that never step back: the wall clock read once, then advanced by
    the monotonic clock, so that an NTP step cannot end a span before it started."""

    def __init__(self) -> None:
        self._unix_origin = _time.time()
        self._steady_origin = _time.perf_counter()

    def __call__(self) -> float:
        return self._unix_origin + (_time.perf_counter() - self._steady_origin)


class Span:
    """One span event being timed; `with` blocks of Recorder yield it. set() changes its
    fields before it is written, for what is known only inside the block (a last,
    smaller batch's examples)."""

    def __init__(self, recorder: "Recorder", kind: str, fields: dict[str, Any]) -> None:
        self.recorder = recorder
        self.event = kind
        self.fields = fields
        self.start: Optional[float] = None
        self.end: Optional[float] = None
        # Refused now, before the block's work, not after it.
        recorder._line(kind, {"start": 0, "end": 0, **fields})

    def set(self, **fields: Any) -> None:
        self.recorder._line(self.event, {"start": 0, "end": 0, **self.fields, **fields})
        self.fields.update(fields)

    def __enter__(self) -> "Span":
        self.start = self.recorder.now()
        return self

    def __exit__(self, error_type: Any, error: Any, traceback: Any) -> None:
        self.end = self.recorder.now()
        if error_type is None or self.event in SPANS_WRITTEN_ON_ERROR:
            try:
                self.recorder.span(self.event, self.start, self.end, **self.fields)
            except ValueError:
                if error_type is None:
                    raise
                # The block's own exception says more than a refused line would.


class Recorder:
    """Appends one job's events to a JSON Lines file (docs/fleet-events.md).

    `out` is a path (opened for appending; created if missing) or an open text or
    binary file (written and flushed, never closed here). `job` is the job's id,
    unique in the fleet. The attributes (framework ... model_params) go into the
    job's `submitted` line, which the constructor writes at `submitted_at` (Unix
    seconds; default now) unless `out` is a path whose file already holds it (a
    process restarted after a preemption): then the job is resumed (`resumed` is
    True) and continues where that file left off.
    A file whose job has `ended` is refused: give a new run a new id.

    `clock` gives Unix seconds (default SteadyUnixClock: the wall clock, never
    stepping back); tests pass a fake one. `fsync=True` also syncs each line to
    disk, for a machine that may vanish with its page cache (a spot VM).

    Used as a context manager, an exception leaving the block writes `failed`
    with the exception as its reason (not `ended`: the job may be retried), and
    the file is closed. Thread-safe: lines are whole and one at a time.
    """

    def __init__(self, out: Union[str, os.PathLike, IO[Any]], job: str, *,
                 framework: Optional[str] = None, model: Optional[str] = None,
                 workload: Optional[str] = "training", size: Optional[str] = None,
                 model_params: Optional[Mapping[str, float]] = None,
                 submitted_at: Optional[float] = None,
                 clock: Optional[Callable[[], float]] = None, fsync: bool = False) -> None:
        self.job = job
        self.clock = clock if clock is not None else SteadyUnixClock()
        self.fsync = fsync
        self._lock = threading.Lock()
        self._requested_at: Optional[float] = None
        self._ended = False
        # Checked before the file is touched; its time is set when it is written.
        submitted = self._line("submitted", {
            "time": submitted_at if submitted_at is not None else 0, "framework": framework,
            "model": model, "workload": workload, "size": size, "model_params": model_params})
        self.resumed = False
        if isinstance(out, (str, os.PathLike)):
            self.path: Optional[Path] = Path(out)
            self._read_earlier_lines(self.path)
            self._file: Any = open(self.path, "ab", buffering=0)
            self._owns_file = True
            self._end_torn_line()
        else:
            self.path = None
            self._file = out
            self._owns_file = False
        if not self.resumed:
            submitted["time"] = self._time(submitted_at, "submitted")
            self._write(submitted)

    # -- point events ----------------------------------------------------------

    def requested(self, device_kind: str, devices: int, *, time: Optional[float] = None) -> None:
        """What the job needs to run: `devices` of `device_kind` (a kind paradnn has
        measured, e.g. "cpu", for program goodput against its roofs)."""
        line = self._point("requested", time, device_kind=device_kind, devices=devices)
        with self._lock:
            if self._requested_at is None or line["time"] < self._requested_at:
                self._requested_at = line["time"]

    def granted(self, devices: int, *, time: Optional[float] = None) -> None:
        """`devices` more are now held (after requested(), as the format requires)."""
        at = self._time(time, "granted")
        if self._requested_at is None or at < self._requested_at:
            raise ValueError("granted: the job has no requested line before it; "
                             "call requested(device_kind, devices) first")
        self._point("granted", at, devices=devices)

    def released(self, devices: int, *, time: Optional[float] = None) -> None:
        """`devices` were given back, or lost (after preempted())."""
        self._point("released", time, devices=devices)

    def started(self, *, time: Optional[float] = None) -> None:
        """The program began on its devices (again after each grant)."""
        self._point("started", time)

    def preempted(self, *, time: Optional[float] = None) -> None:
        """The scheduler took the devices away; say which with released()."""
        self._point("preempted", time)

    def failed(self, reason: Optional[str] = None, *, time: Optional[float] = None) -> None:
        """The program failed; the job may still be retried (ended() says when it is over)."""
        self._point("failed", time, reason=reason)

    def ended(self, status: str, *, time: Optional[float] = None) -> None:
        """The job is over: completed, failed, cancelled or preempted. Steps after its last
        checkpoint count as lost unless it completed. Nothing may follow."""
        self._point("ended", time, status=status)

    # -- spans -----------------------------------------------------------------

    def init(self) -> Span:
        """`with rec.init():` device and program initialization."""
        return Span(self, "init", {})

    def compile(self) -> Span:
        """`with rec.compile():` compilation (XLA, torch.compile, TorchScript)."""
        return Span(self, "compile", {})

    def step(self, step: int, examples: int, *, flops: Optional[float] = None,
             bytes: Optional[float] = None) -> Span:
        """`with rec.step(n, examples, flops=..., bytes=...):` one training step. `flops`
        and `bytes` are per step, all devices. End the block after the step's work is
        done: torch.cuda.synchronize(), jax's block_until_ready(), not at dispatch."""
        return Span(self, "step", {"step": step, "examples": examples, "flops": flops,
                                   "bytes": bytes})

    def data_wait(self) -> Span:
        """`with rec.data_wait():` the loop waiting for input. Inside a step it is still
        counted as data loading, but the step's measured time then includes it."""
        return Span(self, "data_wait", {})

    def checkpoint_save(self, step: int) -> Span:
        """`with rec.checkpoint_save(n):` the blocking part of saving a checkpoint that
        holds step n (its update included), so steps up to n survive a preemption."""
        return Span(self, "checkpoint_save", {"step": step})

    def checkpoint_restore(self, step: int) -> Span:
        """`with rec.checkpoint_restore(n):` the blocking part of returning to step n; the
        steps above n done before count as lost. With steps numbered from 1, a
        restart from scratch is checkpoint_restore(0)."""
        return Span(self, "checkpoint_restore", {"step": step})

    def span(self, event: str, start: float, end: float, **fields: Any) -> None:
        """Writes a span timed elsewhere: `event` from `start` to `end` (Unix seconds)."""
        if event not in SPAN_EVENTS:
            raise ValueError(f"event must be one of {', '.join(SPAN_EVENTS)}, not {event!r}")
        self._write(self._line(event, {"start": start, "end": end, **fields}))

    # -- the file --------------------------------------------------------------

    def now(self) -> float:
        """The clock's time, in Unix seconds."""
        return self.clock()

    def close(self) -> None:
        """Closes a file this Recorder opened; a file passed in stays open."""
        with self._lock:
            if self._owns_file and not self._file.closed:
                self._file.close()

    def __enter__(self) -> "Recorder":
        return self

    def __exit__(self, error_type: Any, error: Any, traceback: Any) -> None:
        try:
            # KeyboardInterrupt and SystemExit are not the program failing.
            if error is not None and isinstance(error, Exception) and not self._ended:
                self.failed(f"{error_type.__name__}: {error}")
        finally:
            self.close()

    def _point(self, kind: str, time: Optional[float], **fields: Any) -> dict[str, Any]:
        line = self._line(kind, {"time": self._time(time, kind), **fields})
        self._write(line)
        return line

    def _time(self, time: Optional[float], kind: str) -> float:
        at = self.now() if time is None else time
        try:
            return _TIME(at)
        except _Refused as refused:
            raise ValueError(f"{kind}: time {refused}") from None

    def _line(self, kind: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        return check_event({"v": FORMAT_VERSION, "job": self.job, "event": kind, **fields})

    def _write(self, line: dict[str, Any]) -> None:
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        data = (text + "\n").encode("utf-8")
        with self._lock:
            if self._ended:
                raise ValueError(f"{line['event']}: job {self.job!r} has ended; "
                                 "nothing may follow its ended line")
            if self._owns_file:
                view = memoryview(data)
                while view:  # one write() per line in practice: appends never interleave
                    view = view[self._file.write(view):]
            elif isinstance(self._file, io.TextIOBase):
                self._file.write(text + "\n")
                self._file.flush()
            else:
                self._file.write(data)
                self._file.flush()
            if self.fsync:
                os.fsync(self._file.fileno())
            self._ended = line["event"] == "ended"

    def _read_earlier_lines(self, path: Path) -> None:
        """Learns, from a file a preempted process left, whether the job was submitted,
        requested or ended. Lines that are not JSON (a line torn by a kill) are skipped."""
        try:
            earlier = open(path, "rb")
        except FileNotFoundError:
            return
        with earlier:
            for raw in earlier:
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(line, dict) or line.get("job") != self.job:
                    continue
                kind = line.get("event")
                if kind == "submitted":
                    self.resumed = True
                elif kind == "requested" and isinstance(line.get("time"), (int, float)):
                    if self._requested_at is None or line["time"] < self._requested_at:
                        self._requested_at = line["time"]
                elif kind == "ended":
                    raise ValueError(f"job: {self.job!r} has already ended in {path}; "
                                     "give a new run a new job id")

    def _end_torn_line(self) -> None:
        # A process killed mid-line leaves no newline; without one, this process's
        # first line would join the torn one and both would be lost.
        if os.fstat(self._file.fileno()).st_size > 0:
            with open(self.path, "rb") as existing:
                existing.seek(-1, os.SEEK_END)
                if existing.read(1) != b"\n":
                    self._file.write(b"\n")
