"""The client and open_db against a real coordinator that ran a small sweep."""

from __future__ import annotations

import io
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import pytest

import paradnn
from conftest import SWEEP_JOBS, Cluster, need_binaries, start_coordinator

CONFIG_COLUMNS = ["batch", "input", "layer", "node", "output", "precision", "optimizer"]
PLATFORM_TEXT = ["platform_fingerprint", "platform_device_kind", "platform_device_name",
                 "platform_hostname", "platform_libtorch_version", "platform_blas_backend"]


@pytest.fixture(scope="module")
def client(cluster: Cluster):
    with paradnn.connect(cluster.address) as client:
        yield client


@pytest.fixture(scope="module")
def results(client: paradnn.Client, cluster: Cluster) -> pd.DataFrame:
    return client.results(cluster.sweep_id)


def cli_csv(cluster: Cluster, *args: str) -> pd.DataFrame:
    """`paradnn results SWEEP --format csv` parsed with every digit kept."""
    text = cluster.cli("results", str(cluster.sweep_id), "--format", "csv", *args)
    return pd.read_csv(io.StringIO(text), float_precision="round_trip", keep_default_na=False,
                       na_values=[""])


def test_results_have_one_row_per_job_and_the_cli_columns(results: pd.DataFrame,
                                                          cluster: Cluster) -> None:
    assert results.shape[0] == SWEEP_JOBS
    csv = cli_csv(cluster)
    assert list(results.columns[: 1 + len(csv.columns)]) == ["sweep_id"] + list(csv.columns)
    assert list(csv.columns[1:8]) == CONFIG_COLUMNS
    assert (results["sweep_id"] == cluster.sweep_id).all()
    assert sorted(zip(results["node"], results["batch"])) == sorted(
        (n, b) for n in (32, 64, 128) for b in (16, 64))
    assert (results["outcome"] == "OK").all(), results[["job_id", "outcome", "error"]]


def test_results_dtypes(results: pd.DataFrame) -> None:
    assert results["job_id"].dtype == np.int64
    for column in ("node", "batch", "steps", "params", "intra_op_threads", "platform_cores"):
        assert results[column].dtype == "Int64", column
    for column in ("examples_per_sec", "step_median_ms", "step_cv", "model_gflops_per_sec"):
        assert results[column].dtype == np.float64, column
    for column in ("outcome", "worker", "stop_reason", "error", "platform_device_name"):
        assert results[column].dtype == object, column


def test_results_equal_the_cli_csv_column_by_column(results: pd.DataFrame,
                                                    cluster: Cluster) -> None:
    csv = cli_csv(cluster)
    for column in csv.columns:
        ours, theirs = results[column], csv[column]
        assert (ours.isna().to_numpy() == theirs.isna().to_numpy()).all(), column
        present = ~theirs.isna().to_numpy()
        if ours.dtype == np.float64:
            np.testing.assert_allclose(ours[present].to_numpy(), theirs[present].to_numpy(),
                                       rtol=1e-12, atol=0, err_msg=column)
        else:
            assert list(ours[present]) == list(theirs[present]), column
    # The frame holds measured numbers, not blanks that compare equal.
    assert results["examples_per_sec"].notna().all() and (results["examples_per_sec"] > 0).all()


def test_platform_columns_are_joined(results: pd.DataFrame, client: paradnn.Client) -> None:
    for column in PLATFORM_TEXT:
        assert results[column].notna().all(), column
    assert (results["platform_cores"] > 0).all()
    workers = client.workers()
    assert list(workers["worker_id"]) == ["python-test-cpu"]
    assert results["platform_fingerprint"].unique().tolist() == [
        workers.loc[0, "platform_fingerprint"]]
    assert (results["platform_hostname"] == workers.loc[0, "platform_hostname"]).all()


def test_samples_give_one_array_per_row_of_steps_length(client: paradnn.Client,
                                                        cluster: Cluster) -> None:
    frame = client.results([cluster.sweep_id], include_samples=True)
    assert frame.columns[-1] == "step_seconds"
    for steps, samples in zip(frame["steps"], frame["step_seconds"]):
        assert isinstance(samples, np.ndarray) and samples.dtype == np.float64
        assert len(samples) == steps > 0
        assert (samples > 0).all()
    # The CLI's samples are the same numbers.
    csv = cli_csv(cluster, "--samples")
    for ours, theirs in zip(frame["step_seconds"], csv["step_seconds"]):
        assert list(ours) == [float(s) for s in theirs.split(" ")]


def test_sweeps_frame(client: paradnn.Client, cluster: Cluster) -> None:
    sweeps = client.sweeps()
    assert len(sweeps) == 1
    sweep = sweeps.iloc[0]
    assert sweep["sweep_id"] == cluster.sweep_id and sweep["name"] == "python-client"
    assert sweep["state"] == "done"
    assert sweep["total_jobs"] == sweep["done_jobs"] == sweep["ok_results"] == SWEEP_JOBS
    assert str(sweeps["created_at"].dtype) == "datetime64[ns, UTC]"
    assert sweep["finished_at"] >= sweep["created_at"]
    assert pd.isna(sweep["budget_ends_at"])


def test_fleet_has_the_cpu_row_and_the_total(client: paradnn.Client, cluster: Cluster) -> None:
    fleet = client.fleet(cluster.sweep_id)
    assert list(fleet["device_kind"]) == ["cpu", "total"]
    assert fleet.loc[1, "jobs"] == SWEEP_JOBS
    assert 0 < fleet.loc[1, "runtime"] <= 1


def test_heatmap_has_a_cell_per_configuration(client: paradnn.Client, cluster: Cluster) -> None:
    response = client.analyze("heatmap", cluster.sweep_id, metric="gflops", x="node", y="batch")
    cells = paradnn.frame(response)
    assert len(cells) == SWEEP_JOBS
    assert list(cells.columns[:4]) == ["panel", "x", "y", "value"]
    assert cells["value"].notna().all() and (cells["ok_results"] == 1).all()
    assert cells.attrs["analysis"] == "heatmap" and cells.attrs["metric"] == "gflops"
    # Each cell's median of one result is that result's GFLOP/s.
    results = client.results(cluster.sweep_id)
    for _, cell in cells.iterrows():
        row = results[(results["node"] == int(cell["x"])) & (results["batch"] == int(cell["y"]))]
        assert cell["value"] == pytest.approx(row["model_gflops_per_sec"].item(), rel=1e-9)


def test_sensitivity_frame(client: paradnn.Client, cluster: Cluster) -> None:
    response = client.analyze("sensitivity", cluster.sweep_id, metric="gflops", log2=True)
    weights = paradnn.frame(response)
    assert sorted(weights["term"]) == ["batch", "node"]
    assert weights.attrs["points"] == SWEEP_JOBS and weights.attrs["log2_features"]


def test_bad_analyze_arguments(client: paradnn.Client, cluster: Cluster) -> None:
    with pytest.raises(ValueError, match="'colour' is not a field; allowed: metric, x, y"):
        client.analyze("heatmap", cluster.sweep_id, metric="gflops", colour="node")
    with pytest.raises(ValueError, match="'heat' is not an analysis; one of heatmap"):
        client.analyze("heat", cluster.sweep_id)
    # What only the coordinator knows (its metrics) comes back as its error.
    with pytest.raises(paradnn.CoordinatorError) as refused:
        client.analyze("heatmap", cluster.sweep_id, metric="no_such_metric", x="node", y="batch")
    assert refused.value.code.name == "INVALID_ARGUMENT"
    assert "no_such_metric" in str(refused.value)


def test_unknown_sweep_is_not_found(client: paradnn.Client, cluster: Cluster) -> None:
    with pytest.raises(paradnn.CoordinatorError, match="not found") as error:
        client.results(cluster.sweep_id + 100)
    assert error.value.code.name == "NOT_FOUND"


def test_open_db_gives_the_client_frames(client: paradnn.Client, cluster: Cluster) -> None:
    with paradnn.open_db(cluster.db) as db:
        offline = db.results(cluster.sweep_id, include_samples=True)
        sweeps = db.sweeps()
        workers = db.workers()
    online = client.results(cluster.sweep_id, include_samples=True)
    assert list(offline.columns) == list(online.columns)
    samples = offline.pop("step_seconds"), online.pop("step_seconds")
    # Every column, the re-run model's included: a coordinator reads the file.
    assert online["rerun_basis"].notna().any()
    pd.testing.assert_frame_equal(offline, online, check_exact=True)
    assert all((a == b).all() for a, b in zip(*samples))
    # model_seconds_left (0 once done) is the only field a running coordinator adds.
    pd.testing.assert_frame_equal(sweeps, client.sweeps(), check_exact=True)
    # A worker's live state (busy, current job) is known to the coordinator alone.
    live = client.workers()
    live_only = ["state", "worker_state", "current_job_id", "connected", "last_seen_at"]
    assert (workers["state"] == "disconnected").all()
    pd.testing.assert_frame_equal(workers.drop(columns=live_only), live.drop(columns=live_only))


def test_open_db_runs_analyses_and_stops_its_coordinator(client: paradnn.Client,
                                                         cluster: Cluster) -> None:
    db = paradnn.open_db(cluster.db)
    reader = db._reader
    offline = paradnn.frame(db.analyze("heatmap", cluster.sweep_id, metric="gflops", x="node",
                                       y="batch"))
    with pytest.raises(LookupError, match=f"sweep {cluster.sweep_id + 100} not found in '"):
        db.results(cluster.sweep_id + 100)
    db.close()
    db.close()  # idempotent
    online = paradnn.frame(client.analyze("heatmap", cluster.sweep_id, metric="gflops", x="node",
                                          y="batch"))
    pd.testing.assert_frame_equal(offline, online, check_exact=True)
    assert reader.process.returncode == 0, reader.log_tail()
    assert not os.path.exists(reader.folder)


def test_open_db_outlives_the_thread_that_opened_it(client: paradnn.Client,
                                                    cluster: Cluster) -> None:
    # A parent-death signal would fire when the opening thread ends; the
    # stdin pipe does not.
    opened = []
    thread = threading.Thread(target=lambda: opened.append(paradnn.open_db(cluster.db)))
    thread.start()
    thread.join()
    with opened[0] as db:
        assert len(db.results(cluster.sweep_id)) == SWEEP_JOBS
        assert db._reader.process.poll() is None


def test_open_db_coordinator_stops_when_its_process_is_killed(cluster: Cluster) -> None:
    script = ("import os, signal, sys, paradnn\n"
              "db = paradnn.open_db(sys.argv[1])\n"
              "print(db._reader.process.pid, db._reader.folder, flush=True)\n"
              "os.kill(os.getpid(), signal.SIGKILL)\n")
    child = subprocess.run([sys.executable, "-c", script, cluster.db], capture_output=True,
                           text=True, timeout=60, env=os.environ.copy())
    assert child.returncode == -signal.SIGKILL, child.stderr
    coordinator_pid, folder = child.stdout.split()
    deadline = time.monotonic() + 20
    while _is_running(int(coordinator_pid)):
        assert time.monotonic() < deadline, "the coordinator outlived its killed process"
        time.sleep(0.05)
    # A killed process cannot remove its private folder: the test does.
    assert not os.path.exists(os.path.join(folder, "coordinator.sock"))
    shutil.rmtree(folder)


def _is_running(pid: int) -> bool:
    """Alive and not a zombie (an orphan is reaped by init, or lingers as one)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_open_db_refuses_a_missing_file(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="no database file"):
        paradnn.open_db(tmp_path / "missing.db")


def test_open_db_says_why_a_file_is_unreadable(tmp_path) -> None:
    need_binaries()
    not_a_database = tmp_path / "notes.db"
    not_a_database.write_text("these are notes, not a paradnn database\n" * 100)
    path = re.escape(str(not_a_database.resolve()))
    with pytest.raises(ValueError, match=f"(?s)cannot read '{path}': .*not an SQLite database"):
        paradnn.open_db(not_a_database)


def test_open_db_names_where_it_looks_for_the_coordinator(tmp_path, monkeypatch) -> None:
    db = tmp_path / "any.db"
    db.write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="coordinator=: '/no/such/coordinator'"):
        paradnn.open_db(db, coordinator="/no/such/coordinator")
    monkeypatch.delenv("PARADNN_COORDINATOR_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="coordinator=PATH.*PARADNN_COORDINATOR_BIN.*PATH"):
        paradnn.open_db(db)


def test_a_wrong_token_is_refused_clearly(tmp_path) -> None:
    need_binaries()

    def secret(name: str, text: str) -> str:
        path = tmp_path / name
        path.write_text(text)
        os.chmod(path, 0o600)
        return str(path)

    tokens = secret("clients.tokens", "right-token\n")
    coordinator, address = start_coordinator(
        tmp_path, tmp_path / "secured.db",
        ("--client-token-file", tokens, "--worker-token-file", secret("workers.tokens", "w\n")))
    try:
        wrong = secret("wrong.token", "# mine\nwrong-token\n")
        with paradnn.connect(address, token_file=wrong) as client:
            with pytest.raises(paradnn.CoordinatorError, match="refused the call.*token_file="):
                client.sweeps()
        with paradnn.connect(address, token_file=tokens) as client:
            sweeps = client.sweeps()
        assert len(sweeps) == 0 and "sweep_id" in sweeps.columns
    finally:
        assert coordinator.stop() == 0, coordinator.log.read_text()
