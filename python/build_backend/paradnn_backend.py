"""A PEP 517 build backend for the paradnn Python package, standard library only.

pip's build isolation would fetch setuptools from an index; with
`requires = []` and this backend, `pip install ./python` works offline.
build_wheel runs protoc (with grpc_python_plugin) on every proto file, so
the generated modules land in the wheel as `paradnn.v1` and never in the
source tree.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from pathlib import Path

NAME = "paradnn"
SUMMARY = "paradnn's sweeps, results and analyses as pandas DataFrames"
# Debian ships these as python3-grpcio, python3-protobuf, python3-pandas and
# python3-numpy; pip sees them in a venv made with --system-site-packages.
REQUIRES = ["grpcio", "protobuf", "pandas", "numpy"]
REQUIRES_PYTHON = ">=3.9"
GRPC_PYTHON_PLUGIN = "/usr/bin/grpc_python_plugin"

PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # python/
WHEEL_TAG = "py3-none-any"


def _version() -> str:
    """The version common/version.h states, or the sdist's PKG-INFO's."""
    header = PACKAGE_ROOT.parent / "common" / "version.h"
    if header.is_file():
        match = re.search(r'kVersion\s*=\s*"([^"]+)"', header.read_text())
        if match:
            return match.group(1)
    pkg_info = PACKAGE_ROOT / "PKG-INFO"
    if pkg_info.is_file():
        match = re.search(r"^Version: (\S+)$", pkg_info.read_text(), re.M)
        if match:
            return match.group(1)
    raise RuntimeError(f"no version: neither {header} nor {pkg_info} states one")


def _proto_dir() -> Path:
    """proto/ of the checkout (python/../proto), or the copy an sdist carries."""
    for candidate in (PACKAGE_ROOT / "proto", PACKAGE_ROOT.parent / "proto"):
        if (candidate / NAME / "v1").is_dir():
            return candidate
    raise RuntimeError(
        f"paradnn's proto files are missing: expected {PACKAGE_ROOT.parent / 'proto'}/paradnn/v1 "
        "(build the package from a paradnn checkout: pip install ./python)"
    )


def _metadata() -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {_version()}",
        f"Summary: {SUMMARY}",
        f"Requires-Python: {REQUIRES_PYTHON}",
    ]
    lines += [f"Requires-Dist: {requirement}" for requirement in REQUIRES]
    return "\n".join(lines) + "\n"


def _dist_info() -> str:
    return f"{NAME}-{_version()}.dist-info"


def _dist_info_files() -> dict[str, str]:
    wheel = (f"Wheel-Version: 1.0\nGenerator: paradnn_backend\nRoot-Is-Purelib: true\n"
             f"Tag: {WHEEL_TAG}\n")
    return {"METADATA": _metadata(), "WHEEL": wheel, "top_level.txt": f"{NAME}\n"}


def _generate(out: Path) -> None:
    """Writes paradnn/v1/*_pb2.py, *_pb2.pyi and *_pb2_grpc.py under `out`."""
    proto_dir = _proto_dir()
    protoc = shutil.which("protoc")
    if protoc is None:
        raise RuntimeError("protoc not found on PATH (Debian: apt-get install protobuf-compiler)")
    if not os.access(GRPC_PYTHON_PLUGIN, os.X_OK):
        raise RuntimeError(
            f"{GRPC_PYTHON_PLUGIN} not found (Debian: apt-get install protobuf-compiler-grpc)"
        )
    sources = (proto_dir / NAME / "v1").glob("*.proto")
    protos = sorted(str(p.relative_to(proto_dir)) for p in sources)
    if not protos:
        raise RuntimeError(f"no .proto files in {proto_dir / NAME / 'v1'}")
    command = [
        protoc,
        f"-I{proto_dir}",
        f"--python_out={out}",
        f"--pyi_out={out}",
        f"--grpc_python_out={out}",
        f"--plugin=protoc-gen-grpc_python={GRPC_PYTHON_PLUGIN}",
        *protos,
    ]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"protoc failed ({' '.join(command)}):\n{result.stderr}")
    init = out / NAME / "v1" / "__init__.py"
    init.write_text('"""Generated from proto/paradnn/v1 by protoc."""\n')


def _package_files() -> dict[str, bytes]:
    """The hand-written modules and the generated ones, by path in the wheel."""
    files = {
        str(path.relative_to(PACKAGE_ROOT)): path.read_bytes()
        for path in sorted((PACKAGE_ROOT / NAME).rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".typed")
    }
    with tempfile.TemporaryDirectory() as tmp:
        _generate(Path(tmp))
        for path in sorted((Path(tmp) / NAME / "v1").iterdir()):
            files[f"{NAME}/v1/{path.name}"] = path.read_bytes()
    return files


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory: str, files: dict[str, bytes]) -> str:
    dist_info = _dist_info()
    for name, text in _dist_info_files().items():
        files[f"{dist_info}/{name}"] = text.encode()
    record_name = f"{dist_info}/RECORD"
    record = "\n".join([_record_line(n, d) for n, d in files.items()] + [f"{record_name},,"]) + "\n"
    files[record_name] = record.encode()
    wheel_name = f"{NAME}-{_version()}-{WHEEL_TAG}.whl"
    with zipfile.ZipFile(Path(wheel_directory) / wheel_name, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            wheel.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return wheel_name


# ---- PEP 517 hooks ------------------------------------------------------------


def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings=None) -> list[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None) -> str:
    target = Path(metadata_directory) / _dist_info()
    target.mkdir(parents=True, exist_ok=True)
    for name, text in _dist_info_files().items():
        (target / name).write_text(text)
    return target.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    return _write_wheel(wheel_directory, _package_files())


def build_sdist(sdist_directory, config_settings=None) -> str:
    """python/ plus a copy of proto/ and PKG-INFO, so the sdist builds on its own."""
    base = f"{NAME}-{_version()}"
    sources = [PACKAGE_ROOT / "pyproject.toml", PACKAGE_ROOT / "build_backend", PACKAGE_ROOT / NAME]
    name = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz") as sdist:
        for source in sources:
            sdist.add(source, f"{base}/{source.name}", filter=_skip_bytecode)
        sdist.add(_proto_dir(), f"{base}/proto", filter=_skip_bytecode)
        pkg_info = _metadata().encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        sdist.addfile(info, io.BytesIO(pkg_info))
    return name


def _skip_bytecode(info: tarfile.TarInfo):
    return None if "__pycache__" in info.name else info
