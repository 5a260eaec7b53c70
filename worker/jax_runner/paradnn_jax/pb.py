"""The generated protobuf modules (protoc --python_out, built by CMake into
build/python/paradnn/v1/), found on sys.path (paradnn_jax_runner.py puts
build/python there)."""
from paradnn.v1 import metrics_pb2  # noqa: F401
from paradnn.v1 import sweep_pb2  # noqa: F401
