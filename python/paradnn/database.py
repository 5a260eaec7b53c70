"""A coordinator's SQLite file read directly, read-only, for notebooks without one.

The rows are rebuilt as the coordinator's messages, with the queries of
db/result_store.cc (ResultStore::Query), db/sweep_store.cc (SweepFromRow)
and db/worker_store.cc (WorkerStore::List), and go through the same frame
functions as the client's, so both give the same columns and numbers. What
only a running coordinator knows is not here: a sweep's model_seconds_left
(0) and a worker's live state (busy, current job).
"""

from __future__ import annotations

import sqlite3
import time
import urllib.parse
from pathlib import Path
from typing import Any, Iterable, Union

import pandas as pd

from paradnn import analysis, frames
from paradnn.v1 import coordinator_pb2, metrics_pb2

# db/migrations.cc: the oldest schema with every column read here (13:
# results.harness, results.reused_from_job_id).
MIN_SCHEMA = 13

_RESULTS_QUERY = """
SELECT j.id, j.sweep_id, j.state, j.config, j.attempts, r.id, r.measurement,
       r.worker_id, r.attempt_id, p.fingerprint, j.repeat, pr.details,
       COALESCE(r.reused_from_job_id, 0), COALESCE(r.harness, '')
  FROM jobs j LEFT JOIN results r ON r.job_id = j.id
  LEFT JOIN platforms p ON p.id = r.platform_id
  LEFT JOIN predictions pr ON pr.job_id = j.id
 WHERE j.sweep_id = ? ORDER BY COALESCE(j.expansion_index, j.id), j.id
"""

_JOB_COUNT_FIELDS = {
    coordinator_pb2.JOB_PENDING: "pending_jobs",
    coordinator_pb2.JOB_LEASED: "leased_jobs",
    coordinator_pb2.JOB_DONE: "done_jobs",
    coordinator_pb2.JOB_FAILED: "failed_jobs",
    coordinator_pb2.JOB_CANCELLED: "cancelled_jobs",
    coordinator_pb2.JOB_HELD: "held_jobs",
    coordinator_pb2.JOB_PREDICTED: "predicted_jobs",
}


def open_db(path: Union[str, Path]) -> "Database":
    """The database file at `path`, opened read-only (it is never changed)."""
    return Database(path)


class Database:
    """Read-only views of one paradnn database file. Use `with` or close()."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.path = str(path)
        if not Path(self.path).is_file():
            raise FileNotFoundError(f"no database file at '{self.path}'")
        uri = f"file:{urllib.parse.quote(str(Path(self.path).resolve()))}?mode=ro"
        self._db = sqlite3.connect(uri, uri=True)
        self._db.execute("PRAGMA busy_timeout = 5000")  # a coordinator may be writing
        try:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.Error as error:
            self._db.close()
            # A WAL file is read through its -shm file, which SQLite creates beside it.
            raise ValueError(f"cannot read '{self.path}' read-only: {error} (a paradnn "
                             "database needs its folder writable for SQLite's -shm file; else "
                             "copy it)") from None
        if version < MIN_SCHEMA:
            self._db.close()
            raise ValueError(f"'{self.path}' has schema {version}, older than this reader's "
                             f"{MIN_SCHEMA}; a current paradnn-coordinator --db migrates it")

    def __enter__(self) -> "Database":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    # ---- DataFrames ----------------------------------------------------------

    def sweeps(self) -> pd.DataFrame:
        """One row per sweep, as Client.sweeps."""
        return frames.sweeps_frame(self.sweep_statuses())

    def results(self, sweep_ids: Union[int, Iterable[int]],
                include_samples: bool = False) -> pd.DataFrame:
        """One row per job of the sweeps, as Client.results."""
        rows = self.result_rows(sweep_ids, include_samples)
        return frames.result_frame(rows, self.platforms(), samples=include_samples)

    def workers(self) -> pd.DataFrame:
        """One row per worker as last recorded (state idle or disconnected)."""
        return frames.workers_frame(self.worker_infos())

    # ---- messages ------------------------------------------------------------

    def sweep_statuses(self) -> list[coordinator_pb2.SweepStatus]:
        now_ms = int(time.time() * 1000)
        rows = self._db.execute(
            "SELECT id, name, family, device, state, spec, created_unix_ms, finished_unix_ms "
            "FROM sweeps WHERE state != 0 ORDER BY id").fetchall()
        return [self._sweep_status(row, now_ms) for row in rows]

    def _sweep_status(self, row: tuple, now_ms: int) -> coordinator_pb2.SweepStatus:
        sweep_id, name, family, device, state, spec, created, finished = row
        status = coordinator_pb2.SweepStatus(
            sweep_id=sweep_id, name=name, family=family, device=device, state=state,
            created_unix_ms=created, finished_unix_ms=finished or 0)
        status.spec.ParseFromString(spec)
        end = status.finished_unix_ms if status.finished_unix_ms > 0 else now_ms
        status.elapsed_seconds = max(0, end - created) / 1000.0
        for job_state, count in self._db.execute(
                "SELECT state, COUNT(*) FROM jobs WHERE sweep_id = ? GROUP BY state", (sweep_id,)):
            status.total_jobs += count
            if job_state in _JOB_COUNT_FIELDS:
                setattr(status, _JOB_COUNT_FIELDS[job_state], count)
        status.ok_results, status.reused_results = self._db.execute(
            "SELECT COUNT(*), COUNT(r.reused_from_job_id) FROM results r "
            "JOIN jobs j ON j.id = r.job_id WHERE j.sweep_id = ? AND r.outcome = ?",
            (sweep_id, metrics_pb2.OK)).fetchone()
        self._fill_budget_end(status)
        return status

    def _fill_budget_end(self, status: coordinator_pb2.SweepStatus) -> None:
        """A budgeted sweep ends its budget after its first lease (db/sweep_store.cc)."""
        budget_seconds = status.spec.run.budget_seconds
        if not budget_seconds > 0:
            return
        (first_start,) = self._db.execute(
            "SELECT COALESCE(MIN(a.started_unix_ms), 0) FROM attempts a "
            "JOIN jobs j ON j.id = a.job_id WHERE j.sweep_id = ?", (status.sweep_id,)).fetchone()
        if first_start > 0:
            status.budget_ends_unix_ms = first_start + int(budget_seconds * 1000)

    def result_rows(self, sweep_ids: Union[int, Iterable[int]],
                    include_samples: bool = False) -> list[coordinator_pb2.ResultRow]:
        """The ResultRow messages QueryResults would send for the sweeps."""
        rows: list[coordinator_pb2.ResultRow] = []
        for sweep_id in analysis.sweep_id_list(sweep_ids):
            known = self._db.execute("SELECT 1 FROM sweeps WHERE id = ?", (sweep_id,)).fetchone()
            if known is None:
                raise LookupError(f"sweep {sweep_id} not found in '{self.path}'")
            for record in self._db.execute(_RESULTS_QUERY, (sweep_id,)).fetchall():
                rows.append(self._result_row(record, include_samples))
        return rows

    def _result_row(self, record: tuple, include_samples: bool) -> coordinator_pb2.ResultRow:
        (job_id, sweep_id, state, config, attempts, result_id, measurement, worker_id,
         attempt_id, fingerprint, repeat, prediction, reused_from, harness) = record
        row = coordinator_pb2.ResultRow(job_id=job_id, sweep_id=sweep_id, state=state,
                                        attempts=attempts, repeat=repeat)
        row.config.ParseFromString(config)
        if prediction is not None:
            row.prediction.SetInParent()  # present even when every field is 0
            row.prediction.ParseFromString(prediction)
            row.platform_fingerprint = row.prediction.platform_fingerprint
        if result_id is None:
            return row  # no result yet: measurement unset
        row.measurement.SetInParent()
        row.measurement.ParseFromString(measurement)
        row.worker_id, row.attempt_id = worker_id, attempt_id
        row.platform_fingerprint = fingerprint or ""
        row.reused_from_job_id, row.harness = reused_from, harness
        if include_samples:
            row.measurement.step_seconds.extend(s for (s,) in self._db.execute(
                "SELECT seconds FROM samples WHERE result_id = ? ORDER BY step", (result_id,)))
        return row

    def platforms(self) -> dict[str, metrics_pb2.Platform]:
        """Fingerprint -> Platform of every platform the file records."""
        platforms = {}
        for fingerprint, details in self._db.execute("SELECT fingerprint, details FROM platforms"):
            platforms[fingerprint] = metrics_pb2.Platform.FromString(details)
        return platforms

    def worker_infos(self) -> list[coordinator_pb2.WorkerInfo]:
        workers = []
        for (worker_id, device_kind, hostname, connected, connected_ms, last_seen_ms, platform,
             jobs_done) in self._db.execute(
                "SELECT w.id, w.device_kind, w.hostname, w.connected, w.connected_unix_ms, "
                "w.last_seen_unix_ms, p.details, "
                "(SELECT COUNT(*) FROM results r WHERE r.worker_id = w.id) "
                "FROM workers w LEFT JOIN platforms p ON p.id = w.platform_id ORDER BY w.id"):
            info = coordinator_pb2.WorkerInfo(
                worker_id=worker_id, device_kind=device_kind, hostname=hostname,
                connected=bool(connected), state="idle" if connected else "disconnected",
                worker_state=(coordinator_pb2.WORKER_IDLE if connected
                              else coordinator_pb2.WORKER_DISCONNECTED),
                connected_unix_ms=connected_ms, last_seen_unix_ms=last_seen_ms, jobs_done=jobs_done)
            if platform is not None:
                info.platform.SetInParent()
                info.platform.ParseFromString(platform)
            workers.append(info)
        return workers
