# paradnn-worker and paradnn-runner for CPU hosts, with Debian's LibTorch and
# OpenBLAS (pthreads). Build from the repository root:
#   docker build -f deploy/containers/worker-cpu.Dockerfile -t paradnn-worker-cpu .
FROM debian:bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config nodejs npm \
      libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev \
      libsqlite3-dev libzip-dev libspdlog-dev libfmt-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev \
      libboost-dev libboost-system-dev libeigen3-dev libtorch-dev libgloo-dev libopenblas0-pthread \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The whole source tree (.dockerignore leaves out build trees and installed
# packages), so that a new source folder needs no line here.
COPY . .
# The dashboard's Vega builds, embedded into the coordinator at build time
# (server/CMakeLists.txt), pinned by dashboard/package-lock.json.
RUN cd dashboard && npm ci --omit=dev --no-audit --no-fund --loglevel=error
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPARADNN_BUILD_TESTS=OFF \
    && cmake --build build --target paradnn-worker paradnn-runner \
    && install -D -m 0755 build/bin/paradnn-worker /out/usr/local/bin/paradnn-worker \
    && install -D -m 0755 build/bin/paradnn-runner /out/usr/local/bin/paradnn-runner

FROM debian:bookworm-slim
# libtorch1.13 brings LibTorch's own dependencies. libopenblas0-pthread has
# the highest libblas.so.3 alternative priority, so it is the BLAS LibTorch
# calls (the reference BLAS is an order of magnitude slower).
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 libre2-9 libc-ares2 libssl3 \
      libspdlog1.10 libfmt9 libtorch1.13 libopenblas0-pthread ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd -g 65532 paradnn && useradd -u 65532 -g paradnn -d /var/lib/paradnn-worker -M paradnn \
    && install -d -o paradnn -g paradnn -m 0750 /var/lib/paradnn-worker
COPY --from=build /out/ /
USER 65532:65532
ENV PARADNN_STATE_DIR=/var/lib/paradnn-worker PARADNN_DEVICE=cpu
ENTRYPOINT ["/usr/local/bin/paradnn-worker"]
