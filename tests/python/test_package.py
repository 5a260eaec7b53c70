"""The installed package and its in-tree build backend."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import zipfile
from pathlib import Path

import pytest

import paradnn
from conftest import SOURCE_DIR

BACKEND = SOURCE_DIR / "python" / "build_backend" / "paradnn_backend.py"


def load_backend():
    spec = importlib.util.spec_from_file_location("paradnn_backend_under_test", BACKEND)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_import_gives_the_generated_modules() -> None:
    assert paradnn.v1.coordinator_pb2.ResultRow.DESCRIPTOR.full_name == "paradnn.v1.ResultRow"
    assert hasattr(paradnn.v1.coordinator_pb2_grpc, "CoordinatorStub")
    assert paradnn.v1.analysis_pb2.AnalyzeRequest is not None
    # Installed, generated at build time: not read from the source tree.
    assert not Path(paradnn.__file__).resolve().is_relative_to(SOURCE_DIR / "python")


def test_wheel_holds_generated_modules_and_a_true_record(tmp_path: Path) -> None:
    backend = load_backend()
    assert backend.get_requires_for_build_wheel() == []
    name = backend.build_wheel(str(tmp_path))
    with zipfile.ZipFile(tmp_path / name) as wheel:
        names = set(wheel.namelist())
        assert {"paradnn/__init__.py", "paradnn/v1/__init__.py", "paradnn/v1/coordinator_pb2.py",
                "paradnn/v1/coordinator_pb2_grpc.py", "paradnn/v1/metrics_pb2.py"} <= names
        dist_info = name.split("-py3")[0] + ".dist-info"
        record = wheel.read(f"{dist_info}/RECORD").decode().splitlines()
        assert len(record) == len(names)
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            if path.endswith("RECORD"):
                continue
            data = wheel.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == "sha256=" + expected.decode() and int(size) == len(data), path
        metadata = wheel.read(f"{dist_info}/METADATA").decode()
    assert "Name: paradnn" in metadata and "Requires-Dist: grpcio" in metadata
    # Nothing generated lands in the source tree.
    assert not (SOURCE_DIR / "python" / "paradnn" / "v1").exists()


def test_missing_protos_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = load_backend()
    monkeypatch.setattr(backend, "PACKAGE_ROOT", tmp_path / "python")
    with pytest.raises(RuntimeError, match="proto files are missing: expected .*/proto/paradnn/v1"):
        backend.build_wheel(str(tmp_path))


def test_token_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from paradnn.client import read_token

    token_file = tmp_path / "token"
    token_file.write_text("\n# a comment\n  abc123  \n")
    os.chmod(token_file, 0o600)
    monkeypatch.setenv("PARADNN_TOKEN", " from-env ")
    assert read_token(str(token_file)) == "abc123"
    assert read_token(None) == "from-env"
    monkeypatch.delenv("PARADNN_TOKEN")
    assert read_token(None) is None
    os.chmod(token_file, 0o644)
    with pytest.raises(ValueError, match="readable by every user"):
        read_token(str(token_file))
    two = tmp_path / "two"
    two.write_text("a\nb\n")
    os.chmod(two, 0o600)
    with pytest.raises(ValueError, match="holds 2 tokens"):
        read_token(str(two))
