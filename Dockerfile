# gpuattr's container image, for running it inside a cluster (docs/deploy.md). Build it from the
# repository root:
#   docker build -t gpuattr:0.1.0 --build-arg REVISION=$(git rev-parse --short=12 HEAD) .
# No container engine runs where this project is developed and tested, so CI never builds this
# image; its build stage runs the same scripts CI runs (scripts/install-deps.sh, scripts/build.sh),
# and a test keeps the runtime packages below in step with the libraries build/gpuattr loads.

# --- build: Debian 12 with the project's own dependency script, only the gpuattr target.
FROM debian:12 AS build
WORKDIR /src
# The dependency layer is rebuilt only when the script changes.
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN scripts/install-deps.sh build && rm -rf /var/lib/apt/lists/*
COPY . .
# The revision for gpuattr_build_info and --version (.git is not in the build context).
ARG REVISION=unknown
RUN GPUATTR_BUILD_DIR=build GPUATTR_TARGETS=gpuattr CCACHE_DISABLE=1 scripts/build.sh \
      -DCMAKE_BUILD_TYPE=Release -DGPUATTR_TESTS=OFF -DGPUATTR_BENCH=OFF \
      -DGPUATTR_REVISION_OVERRIDE="${REVISION}" \
 && strip build/gpuattr \
 && build/gpuattr --version

# --- runtime: debian:12-slim with only the shared libraries gpuattr loads (ldd build/gpuattr,
# mapped to packages with dpkg -S), and CA certificates for apiservers reached with a kubeconfig
# that names no CA. In a pod, the service account's CA is used.
FROM debian:12-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
# runtime-packages:begin (tests/unit/deploy_manifests_test.cc reads this list)
      libc6 libgcc-s1 libstdc++6 libssl3 zlib1g libyaml-cpp0.7 libboost-program-options1.74.0 \
      libcpp-httplib0.11 libbrotli1 libcrypt1 ca-certificates \
# runtime-packages:end
 && apt-get clean && rm -rf /var/lib/apt/lists/*
# The same fixed non-root user as the manifests (runAsUser/runAsGroup 65532). The state folder
# belongs to it; in a pod a volume is mounted there (the root filesystem is read-only).
RUN groupadd --system --gid 65532 gpuattr \
 && useradd --system --uid 65532 --gid 65532 --home-dir /var/lib/gpuattr --no-create-home \
      --shell /usr/sbin/nologin gpuattr \
 && install -d -o 65532 -g 65532 -m 0750 /var/lib/gpuattr
COPY --from=build /src/build/gpuattr /usr/local/bin/gpuattr
USER 65532:65532
EXPOSE 9787
ENTRYPOINT ["/usr/local/bin/gpuattr"]
# Defaults for `docker run`; the manifests set their own arguments.
CMD ["--web.listen-address=0.0.0.0:9787", "--state.file=/var/lib/gpuattr/state.json"]
