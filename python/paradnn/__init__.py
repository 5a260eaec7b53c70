"""paradnn's sweeps, results and analyses as pandas DataFrames.

    import paradnn
    client = paradnn.connect("127.0.0.1:7070")
    df = client.results(1)      # one row per job, as `paradnn results --format csv` prints
    heatmap = paradnn.frame(client.analyze("heatmap", 1, metric="gflops", x="node", y="batch"))
    offline = paradnn.open_db("paradnn.db").results(1)

The generated protobuf and gRPC modules are paradnn.v1 (made from
proto/paradnn/v1 when the package is built).
"""

# paradnn.v1's modules are attributes of the package once it is imported.
from paradnn.v1 import analysis_pb2, coordinator_pb2, coordinator_pb2_grpc  # noqa: F401
from paradnn.v1 import metrics_pb2, sweep_pb2  # noqa: F401
from paradnn.analysis import KINDS, build_request, frame, response_frame
from paradnn.client import Client, CoordinatorError, connect
from paradnn.database import Database, open_db
from paradnn.frames import result_frame, sweeps_frame, workers_frame

__all__ = [
    "KINDS", "Client", "CoordinatorError", "Database", "build_request", "connect", "frame",
    "open_db", "response_frame", "result_frame", "sweeps_frame", "workers_frame",
]
