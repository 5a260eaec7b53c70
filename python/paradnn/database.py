"""A coordinator's SQLite file, read through a private read-only coordinator.

open_db(path) starts `paradnn-coordinator --read-only --db PATH` on a Unix
socket in a fresh temporary folder, as `paradnn results --db` and `paradnn
analyze --db` do (client/coordinator_source.cc), and asks it over gRPC with
the package's Client: the same queries, the same messages, the same frames
as a running coordinator's, and no SQL of its own. The file is never
changed, and its own coordinator may be running meanwhile. What only the
coordinator that runs the fleet knows is not here: a worker's live state
(every worker reads as disconnected), a sweep's model_seconds_left (0).

The coordinator binary is `coordinator=`, else $PARADNN_COORDINATOR_BIN,
else paradnn-coordinator on $PATH.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Union

import grpc
import pandas as pd

from paradnn.client import MAX_RECEIVE_BYTES, Client, ClosedByWith, CoordinatorError
from paradnn.v1 import analysis_pb2, coordinator_pb2, metrics_pb2

COORDINATOR_BIN_ENV = "PARADNN_COORDINATOR_BIN"
COORDINATOR_NAME = "paradnn-coordinator"
# As the CLI's PrivateCoordinatorOptions: how long it may take to listen, and
# to stop before it is killed.
STARTUP_SECONDS = 30.0
STOP_SECONDS = 10.0

SweepIds = Union[int, Iterable[int]]


def open_db(path: Union[str, Path], coordinator: Optional[str] = None,
            timeout: float = 60.0) -> "Database":
    """The database file at `path`, read-only (it is never changed); `timeout` is each
    call's deadline in seconds. Use `with` or close()."""
    return Database(path, coordinator, timeout)


def find_coordinator(coordinator: Optional[str] = None) -> str:
    """The paradnn-coordinator to start: `coordinator`, $PARADNN_COORDINATOR_BIN, or on
    $PATH. FileNotFoundError naming the three when none is an executable file."""
    for candidate, origin in ((coordinator, "coordinator="),
                              (os.environ.get(COORDINATOR_BIN_ENV), f"${COORDINATOR_BIN_ENV}")):
        if candidate:
            if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
                raise FileNotFoundError(f"{origin}: '{candidate}' is not an executable file")
            return candidate
    found = shutil.which(COORDINATOR_NAME)
    if found is None:
        raise FileNotFoundError(
            f"open_db needs {COORDINATOR_NAME} (it reads the file): give coordinator=PATH, "
            f"set ${COORDINATOR_BIN_ENV}, or put the build's bin folder on $PATH")
    return found


# A Unix socket's path has at most 107 bytes (sun_path); a long $TMPDIR
# would not fit, /tmp does.
_MAX_SOCKET_PATH = 107


def _private_folder() -> str:
    folder = tempfile.mkdtemp(prefix="paradnn-open-db-")
    if len(os.path.join(folder, "coordinator.sock")) <= _MAX_SOCKET_PATH:
        return folder
    os.rmdir(folder)
    return tempfile.mkdtemp(prefix="paradnn-open-db-", dir="/tmp")


class _ReadOnlyCoordinator:
    """The private coordinator process and its temporary folder (socket, log).

    The coordinator runs with --exit-with-stdin on a pipe whose write end only
    this process holds: when this process ends, however it ends (and whichever
    of its threads started it), the pipe closes and the coordinator stops."""

    def __init__(self, binary: str, db_path: str) -> None:
        self.folder = _private_folder()
        self.process: Optional[subprocess.Popen] = None
        self.log = os.path.join(self.folder, "coordinator.log")
        address_file = os.path.join(self.folder, "address")
        argv = [binary, "--read-only", "--exit-with-stdin", "--db", db_path,
                "--listen", "unix:" + os.path.join(self.folder, "coordinator.sock"),
                "--address-file", address_file, "--log-level", "warn"]
        try:
            with open(self.log, "wb") as log:
                self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=log,
                                                stderr=subprocess.STDOUT)
            self.address = self._wait_for_address(address_file, db_path)
        except BaseException:
            # A failed start or a Ctrl-C while waiting leaves no process or folder.
            self.stop()
            raise

    def _wait_for_address(self, address_file: str, db_path: str) -> str:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if os.path.exists(address_file):
                with open(address_file, encoding="utf-8") as f:
                    address = f.read().strip()
                if address:
                    return address
            if self.process.poll() is not None:
                tail = self.log_tail()
                self.stop()
                # The coordinator's own words: a missing file, another schema, damage.
                raise ValueError(f"cannot read '{db_path}': {tail}")
            if time.monotonic() > deadline:
                tail = self.log_tail()
                self.stop()
                raise TimeoutError(f"{COORDINATOR_NAME} did not listen within "
                                   f"{STARTUP_SECONDS:g} s; its log ends: {tail}")
            time.sleep(0.02)

    def log_tail(self) -> str:
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return f.read()[-2000:].strip()
        except OSError:
            return ""

    def stop(self) -> None:
        """Closes the coordinator's stdin (it stops as on SIGTERM); SIGTERM, then
        SIGKILL, after STOP_SECONDS each; removes the folder. Idempotent."""
        process = self.process
        if process is not None and process.poll() is None:
            with contextlib.suppress(OSError):
                process.stdin.close()
            for end in (lambda: None, process.terminate, process.kill):
                end()
                try:
                    process.wait(timeout=STOP_SECONDS)
                    break
                except subprocess.TimeoutExpired:
                    continue
        elif process is not None and process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class Database(ClosedByWith):
    """Read-only views of one paradnn database file, the client's frames and messages
    from a private read-only coordinator. Use `with` or close()."""

    def __init__(self, path: Union[str, Path], coordinator: Optional[str] = None,
                 timeout: float = 60.0) -> None:
        self.path = str(path)
        if not Path(self.path).is_file():
            raise FileNotFoundError(f"no database file at '{self.path}'")
        self._reader = _ReadOnlyCoordinator(find_coordinator(coordinator),
                                            str(Path(self.path).resolve()))
        # Stopped with this object even when close() is never called.
        self._finalizer = weakref.finalize(self, self._reader.stop)
        # The private coordinator needs no token or TLS, whatever $PARADNN_TOKEN says.
        channel = grpc.insecure_channel(
            self._reader.address, options=[("grpc.max_receive_message_length", MAX_RECEIVE_BYTES)])
        self._client = Client(self._reader.address, channel, None, timeout)

    def close(self) -> None:
        """Stops the private coordinator. Idempotent."""
        self._client.close()
        self._finalizer()

    # ---- DataFrames ----------------------------------------------------------

    def sweeps(self) -> pd.DataFrame:
        """One row per sweep, as Client.sweeps."""
        return self._client.sweeps()

    def results(self, sweep_ids: SweepIds, include_samples: bool = False) -> pd.DataFrame:
        """One row per job of the sweeps, as Client.results."""
        with self._sweeps_named():
            return self._client.results(sweep_ids, include_samples)

    def workers(self) -> pd.DataFrame:
        """One row per worker as last recorded (state disconnected: none is connected here)."""
        return self._client.workers()

    def fleet(self, sweep_id: int = 0, window_seconds: float = 0.0) -> pd.DataFrame:
        """Goodput per device kind and the total, as Client.fleet."""
        return self._client.fleet(sweep_id, window_seconds)

    # ---- messages ------------------------------------------------------------

    def analyze(self, kind: str, sweep_ids: SweepIds,
                **fields: Any) -> analysis_pb2.AnalyzeResponse:
        """One analysis of the file's results, as Client.analyze (`paradnn analyze --db`)."""
        return self._client.analyze(kind, sweep_ids, **fields)

    def sweep_statuses(self) -> list[coordinator_pb2.SweepStatus]:
        return self._client.sweep_statuses()

    def result_rows(self, sweep_ids: SweepIds,
                    include_samples: bool = False) -> list[coordinator_pb2.ResultRow]:
        """The ResultRow messages QueryResults sends for the sweeps."""
        with self._sweeps_named():
            return self._client.result_rows(sweep_ids, include_samples)

    def platforms(self) -> dict[str, metrics_pb2.Platform]:
        """Fingerprint -> Platform of the file's workers, as Client.platforms."""
        return self._client.platforms()

    def worker_infos(self) -> list[coordinator_pb2.WorkerInfo]:
        return self._client.worker_infos()

    @contextlib.contextmanager
    def _sweeps_named(self) -> Iterator[None]:
        """A sweep the file lacks is a LookupError naming the file, as open_db always said."""
        try:
            yield
        except CoordinatorError as error:
            if error.code != grpc.StatusCode.NOT_FOUND:
                raise
            details = str(error).removeprefix(f"{error.code.name}: ")
            raise LookupError(f"{details} in '{self.path}'") from None
