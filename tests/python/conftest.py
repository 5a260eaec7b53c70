"""A real coordinator and worker with one small finished sweep, shared by the tests.

The binaries come from $PARADNN_BIN_DIR (set by run_python_tests.sh), else
<source>/build/bin (open_db's coordinator too, through
$PARADNN_COORDINATOR_BIN); without them the tests that need them are skipped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import pytest

SOURCE_DIR = Path(os.environ.get("PARADNN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BIN_DIR = Path(os.environ.get("PARADNN_BIN_DIR", SOURCE_DIR / "build" / "bin"))
# open_db's coordinator: the one under test, not one on $PATH.
os.environ.setdefault("PARADNN_COORDINATOR_BIN", str(BIN_DIR / "paradnn-coordinator"))

# A cut-down examples/quick.yaml: 3 widths x 2 batch sizes, a second each.
SWEEP_YAML = """\
name: python-client
family: fc
device: cpu
params:
  layer: 2
  node: {values: [32, 64, 128]}
  input: 200
  output: 20
  batch: {values: [16, 64]}
precision: float32
optimizer: rmsprop
run: {ci: 0.05, max_seconds: 1, warmup_steps: 2}
"""
SWEEP_JOBS = 6


def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    """Polls `condition` until true; fails naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        time.sleep(0.05)


class Process:
    """A child with its output in a log file; stop() SIGTERMs it and waits."""

    def __init__(self, argv: list[str], log: Path) -> None:
        self.log = log
        with open(log, "wb") as out:
            self.popen = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)

    def stop(self) -> Optional[int]:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=40)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        return self.popen.returncode


def start_coordinator(directory: Path, db: Path,
                      extra: tuple[str, ...] = ()) -> tuple[Process, str]:
    """paradnn-coordinator on 127.0.0.1:0; returns it and the address it bound."""
    address_file = directory / f"{db.stem}.addr"
    coordinator = Process([str(BIN_DIR / "paradnn-coordinator"), "--db", str(db),
                           "--listen", "127.0.0.1:0", "--address-file", str(address_file),
                           "--heartbeat-ms", "500", *extra], directory / f"{db.stem}.log")
    wait_for(lambda: address_file.exists() and address_file.read_text().strip() != ""
             or coordinator.popen.poll() is not None, 30, "the coordinator's address file")
    assert coordinator.popen.poll() is None, coordinator.log.read_text()
    return coordinator, address_file.read_text().strip()


@dataclass
class Cluster:
    address: str
    db: Path
    sweep_id: int
    directory: Path

    def cli(self, *args: str) -> str:
        """Runs `paradnn --coordinator ADDRESS ARGS...`; its stdout."""
        result = subprocess.run([str(BIN_DIR / "paradnn"), "--coordinator", self.address, *args],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout


def need_binaries() -> None:
    names = ("paradnn", "paradnn-coordinator", "paradnn-worker", "paradnn-runner")
    missing = [name for name in names if not (BIN_DIR / name).is_file()]
    if missing and "PARADNN_BIN_DIR" in os.environ:
        pytest.fail(f"missing in {BIN_DIR}: {', '.join(missing)}")
    if missing:
        pytest.skip(f"needs the built binaries in {BIN_DIR} (missing {', '.join(missing)})")


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    """A coordinator, one worker and a finished 6-job sweep."""
    need_binaries()
    directory = tmp_path_factory.mktemp("cluster")
    coordinator, address = start_coordinator(directory, directory / "sweeps.db")
    worker = Process([str(BIN_DIR / "paradnn-worker"), "--coordinator", address,
                      "--worker-id", "python-test-cpu", "--device", "cpu", "--calibrate", "never",
                      "--max-backoff-ms", "500"], directory / "worker.log")
    try:
        sweep_file = directory / "sweep.yaml"
        sweep_file.write_text(SWEEP_YAML)
        cluster = Cluster(address, directory / "sweeps.db", 0, directory)
        cluster.sweep_id = int(cluster.cli("submit", str(sweep_file), "-q").strip())
        cluster.cli("watch", str(cluster.sweep_id))
        yield cluster
    finally:
        worker_status = worker.stop()
        coordinator_status = coordinator.stop()
    assert worker_status == 0, worker.log.read_text()
    assert coordinator_status == 0, coordinator.log.read_text()
