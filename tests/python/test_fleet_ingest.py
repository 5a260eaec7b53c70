"""`paradnn fleet ingest` and `paradnn fleet report` against a real coordinator
(docs/fleet-events.md): a synthetic fleet of known answers (bench/fleet_synth.py)
with bad lines, ingested twice, reported and compared figure by figure; and the
Recorder's example (examples/goodput_train.py) end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BIN_DIR, SOURCE_DIR, need_binaries, start_coordinator


def run_cli(address: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN_DIR / "paradnn"), "--coordinator", address, *args],
                          input=stdin, capture_output=True, text=True, timeout=300)


@pytest.fixture()
def coordinator(tmp_path: Path):
    need_binaries()
    process, address = start_coordinator(tmp_path, tmp_path / "fleet.db")
    yield address
    assert process.stop() == 0, process.log.read_text()


def close(actual: float, known: float, tolerance: dict) -> bool:
    return abs(actual - known) <= tolerance["absolute"] + tolerance["relative"] * abs(known)


def test_a_synthetic_fleet_reports_its_known_answers(coordinator: str, tmp_path: Path) -> None:
    events, answers, roofs = tmp_path / "events.jsonl", tmp_path / "answers.json", tmp_path / "roofs.json"
    bad = tmp_path / "bad.json"
    subprocess.run([sys.executable, str(SOURCE_DIR / "bench" / "fleet_synth.py"), "--jobs", "60",
                    "--steps-per-job", "40", "--seed", "11", "--shuffle", "--bad-lines", "8",
                    "--bad-report", str(bad), "--out", str(events), "--answers", str(answers),
                    "--roofs", str(roofs)], check=True, capture_output=True)
    lines = events.read_text().count("\n")

    first = run_cli(coordinator, "fleet", "ingest", str(events))
    assert first.returncode == 1, first.stderr  # bad lines: named, the rest stored
    bad_lines = json.loads(bad.read_text())["lines"]
    assert f"{lines} lines, {lines - len(bad_lines)} events stored, 0 already stored, " \
           f"{len(bad_lines)} bad lines" in first.stdout
    for entry in bad_lines:
        if entry["field"] is None or entry.get("whole_intake"):
            continue
        assert f"{events}:{entry['line']}: {entry['field']}" in first.stderr, entry

    # Standard input too: its first lines again, stored already.
    head = "".join(events.read_text().splitlines(keepends=True)[:10])
    again = run_cli(coordinator, "fleet", "ingest", "-", stdin=head)
    assert again.returncode == 0, again.stderr
    assert "-: 10 lines, 0 events stored, 10 already stored, 0 bad lines" in again.stdout
    second = run_cli(coordinator, "fleet", "ingest", str(events))
    assert f"0 events stored, {lines - len(bad_lines)} already stored" in second.stdout

    report = run_cli(coordinator, "fleet", "report", "--roofs", str(roofs), "--jobs",
                     "--format", "json")
    assert report.returncode == 0, report.stderr
    got = json.loads(report.stdout)
    known = json.loads(answers.read_text())
    tolerance = known["tolerance"]
    for share, name in (("scheduling", "scheduling_goodput"), ("runtime", "runtime_goodput"),
                        ("program", "program_goodput"), ("mpg", "mpg")):
        assert close(got["fleet"][share], known["fleet"][name], tolerance), share
    by_job = {job["job"]: job for job in got["jobs"]}
    assert len(by_job) == len(known["jobs"])
    for job in known["jobs"]:
        mine = by_job[job["job"]]
        assert close(mine.get("holding_s", 0), job["holding_seconds"], tolerance), job["job"]
        if job["program_goodput"] is None:
            assert "program" not in mine, job["job"]
        else:
            assert close(mine["program"], job["program_goodput"], tolerance), job["job"]
    # The largest badput first, each with the jobs behind it.
    device_s = [source.get("device_s", 0) for source in got["badput"]]
    assert device_s == sorted(device_s, reverse=True)
    assert got["badput"][0]["top_jobs"]

    figure = tmp_path / "fleet.svg"
    table = run_cli(coordinator, "fleet", "report", "--roofs", str(roofs), "--plot", str(figure))
    assert table.returncode == 0 and "by device kind" in table.stdout
    assert "largest badput" in table.stdout
    svg = figure.read_text()
    assert "waiting for devices" in svg and "lost progress" in svg and "h100" in svg
    refused = run_cli(coordinator, "fleet", "report", "--plot", str(tmp_path / "fleet.pdf"))
    assert refused.returncode != 0 and "--plot" in refused.stderr


def test_the_recorders_example_end_to_end(coordinator: str, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    events = tmp_path / "example.jsonl"
    subprocess.run([sys.executable, str(SOURCE_DIR / "examples" / "goodput_train.py"), "--out",
                    str(events), "--job", "example-1", "--steps", "60", "--preempt-at", "44",
                    "--checkpoint-every", "20", "--threads", "1"],
                   check=True, capture_output=True, timeout=300)
    assert run_cli(coordinator, "fleet", "ingest", str(events)).returncode == 0
    roofs = tmp_path / "roofs.json"
    roofs.write_text(json.dumps({"roofs": {"cpu": {"flops_per_sec": 1e11,
                                                   "bytes_per_sec": 1e10}}}))
    report = run_cli(coordinator, "fleet", "report", "--roofs", str(roofs), "--jobs",
                     "--format", "json")
    assert report.returncode == 0, report.stderr
    job = json.loads(report.stdout)["jobs"][0]
    assert job["job"] == "example-1" and job["status"] == "completed"
    assert job["kept_steps"] == "60" and job["lost_steps"] == "4"  # 41..44, after save 40
    parts = job["parts"]
    assert parts["lost_progress_s"] > 0 and parts["checkpointing_s"] > 0
    assert parts["initialization_s"] > 0
    assert job["flops_source"] == "paradnn counts (fc)"
    assert 0 < job["scheduling"] < 1 and 0 < job["runtime"] < 1 and 0 < job["program"] < 1


def test_the_report_sets_paradnns_own_result_beside_a_job(cluster, tmp_path: Path) -> None:
    """The Recorder's example trains the cluster sweep's FC (node 128, batch 64) on
    `cpu`: the report names the sweep's result of that configuration and the
    program goodput it reaches."""
    pytest.importorskip("torch")
    events = tmp_path / "reference.jsonl"
    subprocess.run([sys.executable, str(SOURCE_DIR / "examples" / "goodput_train.py"), "--out",
                    str(events), "--job", "reference-1", "--steps", "30", "--preempt-at", "0",
                    "--threads", "1"], check=True, capture_output=True, timeout=300)
    assert run_cli(cluster.address, "fleet", "ingest", str(events)).returncode == 0
    roofs = tmp_path / "roofs.json"
    roofs.write_text(json.dumps({"roofs": {"cpu": {"flops_per_sec": 1e11}}}))
    report = run_cli(cluster.address, "fleet", "report", "--roofs", str(roofs), "--format", "json")
    assert report.returncode == 0, report.stderr
    references = [r for r in json.loads(report.stdout).get("references", [])
                  if r["job"] == "reference-1"]
    assert len(references) == 1, report.stdout
    reference = references[0]
    assert "node=128" in reference["model"] and "batch=64" in reference["model"]
    assert reference["paradnn_step_s"] > 0 and int(reference["result_job_id"]) > 0
    assert 0 < reference["paradnn_program"] and 0 < reference["job_program"]
    table = run_cli(cluster.address, "fleet", "report", "--roofs", str(roofs))
    assert "paradnn's fastest result of the same configuration" in table.stdout

    # Four devices at batch 256: one device's share is the sweep's batch 64.
    params = {"layer": 2, "node": 128, "input": 200, "output": 20, "batch": 256}
    lines = [{"event": "submitted", "time": 0, "model": "fc", "model_params": params},
             {"event": "requested", "time": 0, "device_kind": "cpu", "devices": 4},
             {"event": "granted", "time": 0, "devices": 4},
             {"event": "step", "start": 0, "end": 1, "step": 1, "examples": 256},
             {"event": "ended", "time": 1, "status": "completed"}]
    four = tmp_path / "four.jsonl"
    four.write_text("".join(json.dumps({"v": 1, "job": "reference-4", **line}) + "\n"
                            for line in lines))
    assert run_cli(cluster.address, "fleet", "ingest", str(four)).returncode == 0
    report = run_cli(cluster.address, "fleet", "report", "--roofs", str(roofs), "--format", "json")
    by_job = {r["job"]: r for r in json.loads(report.stdout)["references"]}
    assert "batch=64" in by_job["reference-4"]["model"], by_job
    assert by_job["reference-4"]["result_job_id"] == by_job["reference-1"]["result_job_id"]
