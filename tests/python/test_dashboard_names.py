"""The dashboard names every sweep, job and worker state as the CLI does.

common/state_names.cc names a state by its enum value without the enum's
prefix ("running", "pending", "idle"), and every *_STATE_UNSPECIFIED value
"unspecified". dashboard/src/app.js's stateName() is run here under node on
every value the proto has, so a new state cannot be shown differently.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from paradnn.v1 import coordinator_pb2

_PREFIXES = {"SweepState": "SWEEP_", "JobState": "JOB_", "WorkerState": "WORKER_"}


def _cli_name(enum: str, value: str) -> str:
    """common/state_names.cc's name of `value`."""
    if value.endswith("_STATE_UNSPECIFIED"):
        return "unspecified"
    return value[len(_PREFIXES[enum]):].lower()


@pytest.mark.skipif(shutil.which("node") is None,
                    reason="node is installed by scripts/install-deps.sh")
def test_state_names_match_the_cli() -> None:
    source_dir = Path(os.environ.get("PARADNN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
    app = (source_dir / "dashboard" / "src" / "app.js").read_text(encoding="utf-8")
    function = re.search(r"^function stateName\(state\) \{.*?^\}", app, flags=re.M | re.S)
    assert function, "stateName() not found in dashboard/src/app.js"
    values = [(enum, value.name) for enum in _PREFIXES
              for value in coordinator_pb2.DESCRIPTOR.enum_types_by_name[enum].values]
    script = (function.group(0) + "\nconsole.log(JSON.stringify(" + json.dumps(values)
              + ".map(([, v]) => stateName(v)).concat([stateName(undefined)])));")
    shown = json.loads(subprocess.run(["node", "-e", script], check=True, capture_output=True,
                                      text=True).stdout)
    for (enum, value), name in zip(values, shown):
        assert name == _cli_name(enum, value), f"{enum}.{value}"
    assert shown[-1] == "unspecified", "a state the JSON left out (zero)"
