"""bench/fleet_synth.py: a small synthetic fleet, its known answers, and the
independent re-derivation in bench/fleet_synth_check.py agreeing with them.

Needs no built tree: the generator and the check are standard-library scripts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
GENERATOR = BENCH / "fleet_synth.py"
CHECK = BENCH / "fleet_synth_check.py"
JOBS, STEPS, BAD = 40, 40, 25  # 25: every malformed kind in the catalog once


def generate(directory: Path, *extra: str, seed: int = 3) -> dict[str, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = {name: directory / f"{name}.{suffix}" for name, suffix in
             (("events", "jsonl"), ("answers", "json"), ("roofs", "json"), ("bad", "json"))}
    subprocess.run([sys.executable, str(GENERATOR), "--out", str(paths["events"]),
                    "--answers", str(paths["answers"]), "--roofs", str(paths["roofs"]),
                    "--jobs", str(JOBS), "--steps-per-job", str(STEPS), "--seed", str(seed),
                    "--bad-lines", str(BAD), "--bad-report", str(paths["bad"]), *extra],
                   check=True, capture_output=True, timeout=60)
    return paths


def run_check(paths: dict[str, Path], answers: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECK), "--events", str(paths["events"]),
                           "--answers", str(answers or paths["answers"]),
                           "--roofs", str(paths["roofs"]), "--bad-report", str(paths["bad"])],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return generate(tmp_path_factory.mktemp("fleet"), "--shuffle")


def test_the_check_rederives_every_answer(fleet):
    done = run_check(fleet)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fleet_synth_check: OK" in done.stdout


def test_productive_basis_checks_out_too(tmp_path):
    paths = generate(tmp_path, "--program-basis", "productive")
    done = run_check(paths)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_check_catches_a_wrong_answer(fleet, tmp_path):
    answers = json.loads(fleet["answers"].read_text())
    job = next(j for j in answers["jobs"] if j["holding_seconds"] > 0)
    job["badput_seconds"]["other"] += 1 / 1024  # one tick
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(answers))
    done = run_check(fleet, wrong)
    assert done.returncode == 1
    assert f"job {job['job']!r} badput_seconds.other" in done.stdout


def test_parts_add_up_to_holding_time(fleet):
    answers = json.loads(fleet["answers"].read_text())
    assert len(answers["jobs"]) == JOBS
    for job in answers["jobs"]:
        parts = sum(job["badput_seconds"].values()) + job["productive_seconds"]
        # Every figure is a whole number of 1/1024 s: the sum is exact.
        assert parts == job["holding_seconds"], job["job"]
        assert 0 <= job["holding_seconds"] <= job["elapsed_seconds"]
    fleet_total = answers["fleet"]
    parts = sum(fleet_total["badput_device_seconds"].values())
    assert parts + fleet_total["device_seconds"]["productive"] == \
        fleet_total["device_seconds"]["holding"]


def test_the_fleet_is_varied(fleet):
    jobs = json.loads(fleet["answers"].read_text())["jobs"]
    assert {j["status"] for j in jobs} == {"completed", "failed", "cancelled", "preempted"}
    assert {j["devices"] for j in jobs} == {1, 4, 16, 128}
    assert {"cpu-epyc", "h100", "tpu-v5e"} <= {j["device_kind"] for j in jobs}
    assert {j["framework"] for j in jobs} == {"pytorch", "jax"}
    assert {j["workload"] for j in jobs} == {"training", "finetune"}
    assert any(j["model"] == "fc" for j in jobs) and any(j["model"] != "fc" for j in jobs)
    assert any(j["restarts"] for j in jobs) and any(j["lost_steps"] for j in jobs)
    assert any(j["program_goodput"] is None for j in jobs)
    assert all(0 < j["program_goodput"] <= 1 for j in jobs if j["program_goodput"] is not None)


def test_same_seed_same_bytes(fleet, tmp_path):
    again = generate(tmp_path / "again", "--shuffle")
    for name in ("events", "answers", "roofs", "bad"):
        assert again[name].read_bytes() == fleet[name].read_bytes(), name
    other = generate(tmp_path / "other", "--shuffle", seed=4)
    assert other["events"].read_bytes() != fleet["events"].read_bytes()


def test_stdout_is_the_same_file(fleet, tmp_path):
    done = subprocess.run([sys.executable, str(GENERATOR), "--out", "-", "--jobs", str(JOBS),
                           "--steps-per-job", str(STEPS), "--seed", "3", "--shuffle",
                           "--bad-lines", str(BAD), "--bad-report", str(tmp_path / "bad.json")],
                          check=True, capture_output=True, timeout=60)
    assert done.stdout == fleet["events"].read_bytes()


def test_bad_lines_are_listed(fleet):
    lines = fleet["events"].read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""  # every line ends with a newline
    lines = lines[:-1]
    report = json.loads(fleet["bad"].read_text(encoding="utf-8"))["lines"]
    assert [entry["line"] for entry in report] == list(range(len(lines) - BAD + 1, len(lines) + 1))
    for entry in report:
        assert lines[entry["line"] - 1] == entry["text"]
        assert entry["problem"]
    fields = {entry["field"] for entry in report}
    assert {"strat", "examples", "v", "event", "time", "end", "devices", "job", "status",
            "model_params", "device_kind", "step", "flops", None} <= fields
