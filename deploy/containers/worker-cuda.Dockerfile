# paradnn-worker and paradnn-runner for NVIDIA GPUs: the runner is built
# against the CUDA LibTorch that PyTorch's pip wheel bundles (Debian's
# libtorch is CPU-only). Build from the repository root:
#   docker build -f deploy/containers/worker-cuda.Dockerfile -t paradnn-worker-cuda .
# Pick CUDA and the wheel's index to match (cu126 wheels need a CUDA 12.6+
# driver on the host). Ubuntu 24.04 has the gRPC 1.51 / Abseil / protobuf
# generation the code is written against (Debian bookworm's). Runs with the NVIDIA container toolkit / device plugin.
ARG CUDA_IMAGE=nvidia/cuda:12.6.3-cudnn-devel-ubuntu24.04
ARG CUDA_RUNTIME_IMAGE=nvidia/cuda:12.6.3-cudnn-runtime-ubuntu24.04
ARG TORCH_INDEX=https://download.pytorch.org/whl/cu126
ARG TORCH_VERSION=2.7.1

FROM ${CUDA_IMAGE} AS build
ARG TORCH_INDEX
ARG TORCH_VERSION
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config nodejs npm python3 python3-pip \
      libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev \
      libsqlite3-dev libzip-dev libspdlog-dev libfmt-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev \
      libboost-dev libboost-system-dev libeigen3-dev \
    && rm -rf /var/lib/apt/lists/* \
    && pip3 install --no-cache-dir --break-system-packages --index-url "${TORCH_INDEX}" "torch==${TORCH_VERSION}"
WORKDIR /src
# The whole source tree (.dockerignore leaves out build trees and installed
# packages), so that a new source folder needs no line here.
COPY . .
# The dashboard's Vega builds, embedded into the coordinator at build time
# (server/CMakeLists.txt), pinned by dashboard/package-lock.json.
RUN cd dashboard && npm ci --omit=dev --no-audit --no-fund --loglevel=error
RUN torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)') \
    && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPARADNN_BUILD_TESTS=OFF \
         -DCMAKE_PREFIX_PATH="${torch_prefix}" \
    && cmake --build build --target paradnn-worker paradnn-runner \
    && install -D -m 0755 build/bin/paradnn-worker /out/usr/local/bin/paradnn-worker \
    && install -D -m 0755 build/bin/paradnn-runner /out/usr/local/bin/paradnn-runner \
    && mkdir -p /out/opt/libtorch \
    && cp -a "$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')/lib" /out/opt/libtorch/lib

FROM ${CUDA_RUNTIME_IMAGE}
# The -dev packages only for their runtime libraries (exact runtime package
# names differ between Ubuntu releases; the image is dominated by CUDA and
# LibTorch anyway).
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libgrpc++-dev libprotobuf-dev libabsl-dev libspdlog-dev libgomp1 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd -g 65532 paradnn && useradd -u 65532 -g paradnn -d /var/lib/paradnn-worker -M paradnn \
    && install -d -o paradnn -g paradnn -m 0750 /var/lib/paradnn-worker
COPY --from=build /out/ /
ENV LD_LIBRARY_PATH=/opt/libtorch/lib PARADNN_STATE_DIR=/var/lib/paradnn-worker PARADNN_DEVICE=cuda:0
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/paradnn-worker"]
