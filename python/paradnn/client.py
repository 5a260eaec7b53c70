"""A client of the coordinator's gRPC API that answers in pandas DataFrames.

Credentials work as the CLI's (common/auth.cc): a token from `token_file`
(exactly one token; a file readable by every user is refused) or else
$PARADNN_TOKEN, sent as `authorization: Bearer <token>` with every call;
TLS when `tls_ca` names the CA that signed the coordinator's certificate.
"""

from __future__ import annotations

import os
import stat
from typing import Any, Iterable, Optional, TypeVar, Union

import grpc
import pandas as pd

from paradnn import analysis, frames
from paradnn.v1 import analysis_pb2, coordinator_pb2, coordinator_pb2_grpc

DEFAULT_ADDRESS = "127.0.0.1:7070"  # common/address.h
ADDRESS_ENV = "PARADNN_COORDINATOR"
TOKEN_ENV = "PARADNN_TOKEN"
# Results with per-step samples exceed gRPC's 4 MiB default (client/commands.cc).
MAX_RECEIVE_BYTES = 256 << 20

SweepIds = Union[int, Iterable[int]]


class CoordinatorError(RuntimeError):
    """A call the coordinator refused or did not answer; `code` is the grpc.StatusCode."""

    def __init__(self, message: str, code: grpc.StatusCode) -> None:
        super().__init__(message)
        self.code = code


def connect(address: Optional[str] = None, token_file: Optional[str] = None,
            tls_ca: Optional[str] = None, tls_cert: Optional[str] = None,
            tls_key: Optional[str] = None, timeout: float = 30.0) -> "Client":
    """A client of the coordinator at `address` (default $PARADNN_COORDINATOR, else
    127.0.0.1:7070; HOST:PORT or unix:PATH). `timeout` is each call's deadline in seconds."""
    address = address or os.environ.get(ADDRESS_ENV) or DEFAULT_ADDRESS
    token = read_token(token_file)
    options = [("grpc.max_receive_message_length", MAX_RECEIVE_BYTES)]
    if tls_ca is None:
        if tls_cert or tls_key:
            raise ValueError("tls_cert/tls_key need tls_ca (the CA that signed the coordinator's "
                             "certificate)")
        channel = grpc.insecure_channel(address, options=options)
    else:
        channel = grpc.secure_channel(address, _tls_credentials(tls_ca, tls_cert, tls_key), options)
    return Client(address, channel, token, timeout)


def read_token(token_file: Optional[str]) -> Optional[str]:
    """The token to send: token_file's one token, else $PARADNN_TOKEN, else None."""
    if token_file is not None:
        tokens = _read_token_file(token_file)
        if len(tokens) != 1:
            raise ValueError(f"token_file: '{token_file}' holds {len(tokens)} tokens; a client "
                             "sends exactly one")
        return tokens[0]
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        return None
    if not _is_token_text(token):
        raise ValueError(f"${TOKEN_ENV} is not a token (printable ASCII without spaces)")
    return token


def _read_token_file(path: str) -> list[str]:
    """One token per line, whitespace trimmed, blank and '#' lines ignored."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        raise ValueError(f"token_file: cannot read '{path}'") from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"token_file: '{path}' is not a regular file")
    if mode & stat.S_IROTH:
        raise ValueError(f"token_file: '{path}' is readable by every user; it holds a secret "
                         "(chmod o-r, e.g. 600)")
    tokens = []
    with open(path, encoding="latin-1") as lines:
        for number, line in enumerate(lines, start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if not _is_token_text(line):
                # The line itself is not echoed: it may be a secret.
                raise ValueError(f"token_file: line {number} of '{path}' is not a token "
                                 "(printable ASCII without spaces)")
            tokens.append(line)
    if not tokens:
        raise ValueError(f"token_file: '{path}' holds no token (one per line; blank lines and "
                         "# comments are ignored)")
    return tokens


def _is_token_text(token: str) -> bool:
    # What an HTTP/2 header value can carry after "Bearer ".
    return bool(token) and all(0x20 < ord(c) < 0x7F for c in token)


def _tls_credentials(ca: str, cert: Optional[str], key: Optional[str]) -> grpc.ChannelCredentials:
    if (cert is None) != (key is None):
        raise ValueError("tls_cert and tls_key go together (a client certificate and its "
                         "private key)")

    def read(path: Optional[str], field: str) -> Optional[bytes]:
        if path is None:
            return None
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError:
            raise ValueError(f"{field}: cannot read '{path}'") from None

    return grpc.ssl_channel_credentials(read(ca, "tls_ca"), read(key, "tls_key"),
                                        read(cert, "tls_cert"))


_Closing = TypeVar("_Closing", bound="ClosedByWith")


class ClosedByWith:
    """`with obj:` closes obj when the block ends, whether it returns or raises."""

    def __enter__(self: _Closing) -> _Closing:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        raise NotImplementedError


class Client(ClosedByWith):
    """Calls of one coordinator; every call has a deadline. Use `with` or close()."""

    def __init__(self, address: str, channel: grpc.Channel, token: Optional[str],
                 timeout: float) -> None:
        self.address = address
        self.timeout = timeout
        self.stub = coordinator_pb2_grpc.CoordinatorStub(channel)
        self._channel = channel
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()

    def close(self) -> None:
        self._channel.close()

    # ---- DataFrames ----------------------------------------------------------

    def sweeps(self) -> pd.DataFrame:
        """One row per sweep (ListSweeps)."""
        return frames.sweeps_frame(self.sweep_statuses())

    def results(self, sweep_ids: SweepIds, include_samples: bool = False) -> pd.DataFrame:
        """One row per job of the sweeps, as `paradnn results --format csv` prints them, plus
        sweep_id and the platform_* columns of each row's platform (ListWorkers)."""
        rows = self.result_rows(sweep_ids, include_samples)
        return frames.result_frame(rows, self.platforms(), samples=include_samples)

    def workers(self) -> pd.DataFrame:
        """One row per worker the coordinator knows, with its platform."""
        return frames.workers_frame(self.worker_infos())

    def fleet(self, sweep_id: int = 0, window_seconds: float = 0.0) -> pd.DataFrame:
        """Goodput per device kind and the total (FleetGoodput); sweep_id 0 = the whole fleet."""
        request = coordinator_pb2.FleetGoodputRequest(sweep_id=sweep_id,
                                                      window_seconds=window_seconds)
        return frames.goodput_frame(self._call(self.stub.FleetGoodput, request))

    # ---- messages ------------------------------------------------------------

    def analyze(self, kind: str, sweep_ids: SweepIds,
                **fields: Any) -> analysis_pb2.AnalyzeResponse:
        """One analysis of stored results (every kind of paradnn.KINDS but bisect, which
        `paradnn bisect` drives); see paradnn.analysis.build_request for the fields and
        paradnn.frame for a DataFrame."""
        request = analysis.build_request(kind, sweep_ids, **fields)
        return self._call(self.stub.Analyze, request)

    def result_rows(self, sweep_ids: SweepIds,
                    include_samples: bool = False) -> list[coordinator_pb2.ResultRow]:
        """The ResultRow messages of the sweeps, in the order the coordinator sends them."""
        rows: list[coordinator_pb2.ResultRow] = []
        for sweep_id in analysis.sweep_id_list(sweep_ids):
            request = coordinator_pb2.QueryResultsRequest(sweep_id=sweep_id,
                                                          include_samples=include_samples)
            rows += self._call(lambda r, **kw: list(self.stub.QueryResults(r, **kw)), request)
        return rows

    def platforms(self) -> dict[str, Any]:
        """Fingerprint -> Platform of the workers (the first worker's, by id, when shared)."""
        platforms: dict[str, Any] = {}
        for worker in self.worker_infos():
            fingerprint = worker.platform.fingerprint
            if worker.HasField("platform") and fingerprint and fingerprint not in platforms:
                platforms[fingerprint] = worker.platform
        return platforms

    def sweep_statuses(self) -> list[coordinator_pb2.SweepStatus]:
        """The SweepStatus of every sweep (ListSweeps)."""
        response = self._call(self.stub.ListSweeps, coordinator_pb2.ListSweepsRequest())
        return list(response.sweeps)

    def worker_infos(self) -> list[coordinator_pb2.WorkerInfo]:
        """The WorkerInfo of every worker the coordinator knows (ListWorkers)."""
        return list(self._call(self.stub.ListWorkers, coordinator_pb2.ListWorkersRequest()).workers)

    def _call(self, method: Any, request: Any) -> Any:
        try:
            return method(request, timeout=self.timeout, metadata=self._metadata)
        except grpc.RpcError as error:
            raise self._explain(error) from None

    def _explain(self, error: grpc.RpcError) -> CoordinatorError:
        """What the CLI says for the same status (client/commands.cc Annotate)."""
        code, details = error.code(), error.details()
        if code == grpc.StatusCode.UNAVAILABLE:
            message = f"cannot reach the coordinator at {self.address}: {details}"
        elif code == grpc.StatusCode.DEADLINE_EXCEEDED:
            message = (f"the coordinator at {self.address} did not answer within "
                       f"{self.timeout:g} s (timeout=)")
        elif code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
            message = (f"the coordinator at {self.address} refused the call: {details} (give a "
                       f"client token with token_file= or ${TOKEN_ENV})")
        else:
            message = f"{code.name}: {details}"
        return CoordinatorError(message, code)
