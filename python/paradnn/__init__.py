"""paradnn's sweeps, results and analyses as pandas DataFrames.

    import paradnn
    client = paradnn.connect("127.0.0.1:7070")
    df = client.results(1)      # one row per job, as `paradnn results --format csv` prints
    heatmap = paradnn.frame(client.analyze("heatmap", 1, metric="gflops", x="node", y="batch"))
    offline = paradnn.open_db("paradnn.db").results(1)

The generated protobuf and gRPC modules are paradnn.v1 (made from
proto/paradnn/v1 when the package is built).
"""

# Loaded on first use (PEP 562), so that `import paradnn.goodput` in a
# training job needs neither gRPC, protobuf nor pandas.
_LAZY = {
    "KINDS": "paradnn.analysis", "build_request": "paradnn.analysis",
    "frame": "paradnn.analysis", "response_frame": "paradnn.analysis",
    "Client": "paradnn.client", "CoordinatorError": "paradnn.client", "connect": "paradnn.client",
    "Database": "paradnn.database", "open_db": "paradnn.database",
    "result_frame": "paradnn.frames", "sweeps_frame": "paradnn.frames",
    "workers_frame": "paradnn.frames",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name == "v1":  # the generated modules, as attributes of paradnn.v1
        import importlib

        for generated in ("analysis_pb2", "coordinator_pb2", "coordinator_pb2_grpc",
                          "metrics_pb2", "sweep_pb2", "fleet_events_pb2"):
            importlib.import_module(f"paradnn.v1.{generated}")
        return globals()["v1"]
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'paradnn' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
