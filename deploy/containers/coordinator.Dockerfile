# paradnn-coordinator (and the paradnn CLI) on Debian bookworm-slim: gRPC,
# protobuf, Abseil, SQLite, spdlog — no LibTorch. Build from the repository root:
#   docker build -f deploy/containers/coordinator.Dockerfile -t paradnn-coordinator .
FROM debian:bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config nodejs npm \
      libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev \
      libsqlite3-dev libzip-dev libspdlog-dev libfmt-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev \
      libboost-dev libboost-system-dev libeigen3-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The whole source tree (.dockerignore leaves out build trees and installed
# packages), so that a new source folder needs no line here.
COPY . .
# The dashboard's Vega builds, embedded into the coordinator at build time
# (server/CMakeLists.txt), pinned by dashboard/package-lock.json.
RUN cd dashboard && npm ci --omit=dev --no-audit --no-fund --loglevel=error
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DPARADNN_BUILD_RUNNER=OFF -DPARADNN_BUILD_TESTS=OFF \
    && cmake --build build --target paradnn-coordinator paradnn \
    && install -D -m 0755 build/bin/paradnn-coordinator /out/usr/local/bin/paradnn-coordinator \
    && install -D -m 0755 build/bin/paradnn /out/usr/local/bin/paradnn

FROM debian:bookworm-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 libre2-9 libc-ares2 libssl3 \
      libsqlite3-0 libzip4 libspdlog1.10 libfmt9 libyaml-cpp0.7 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd -g 65532 paradnn && useradd -u 65532 -g paradnn -d /var/lib/paradnn -M paradnn \
    && install -d -o paradnn -g paradnn -m 0750 /var/lib/paradnn
COPY --from=build /out/ /
USER 65532:65532
WORKDIR /var/lib/paradnn
ENV PARADNN_DB=/var/lib/paradnn/paradnn.db
EXPOSE 7070 9464
# Settings: flags, PARADNN_* variables, or --config FILE (docs/deployment.md).
ENTRYPOINT ["/usr/local/bin/paradnn-coordinator"]
