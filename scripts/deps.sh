#!/usr/bin/env bash
# Installs the Debian packages that building and testing gpupool need, when any is missing.
# As root it runs apt-get itself; otherwise it prints the exact command to run and fails.
set -euo pipefail

packages=(
    build-essential cmake pkg-config
    libcmocka-dev   # unit-test harness
    libjansson-dev  # JSON
    libyaml-dev     # YAML
    libsqlite3-dev  # the store
    libpq-dev       # the store's PostgreSQL backend (libpq)
    postgresql-15   # the PostgreSQL the store's tests start (initdb, pg_ctl) and store.url names
    libmicrohttpd-dev    # HTTP server of gpupoold (built with GnuTLS: HTTPS)
    libcurl4-openssl-dev # HTTP client of the agent and the tests, and of the CLI for https://
    libevent-dev    # evhttp: the CLI's HTTP client for plain http:// (libevent_core + _extra)
    libssl-dev      # libcrypto: API token randomness and SHA-256; libssl: a TLS client in a test
    openssl         # makes the self-signed certificate of the TLS unit test
    clang           # the sanitizer build (ASan + UBSan)
    libclang-rt-14-dev  # sanitizer and libFuzzer runtimes of clang
    binutils        # nm, for the purity check of libgpcore
    python3         # result-table generators in bench/, controller integration tests
    procps          # pgrep, in the end-to-end test of the agents
    libxlsxwriter-dev   # XLSX usage reports (gpupool usage -o xlsx)
    prometheus          # promtool (metrics and rules checks) and the scrape integration test
    prometheus-alertmanager  # the alert notifier's integration test
    chromium            # the web dashboard's browser tests
    python3-torch       # torchrun (gloo on the CPU) in the distributed launch test
    openmpi-bin         # mpirun over a gang's hostfile in the distributed launch test
    podman              # every replica runs in a podman sandbox (gpupool-run); the CDI test
    conmon              # podman's container monitor
    runc                # the OCI runtime on cgroup v1 and hybrid hosts
    crun                # the OCI runtime on unified cgroup v2 hosts
    catatonit           # the sandbox's init (--init): SIGTERM to the job, orphans reaped
    skopeo              # image sizes for the pull's progress
    docker-registry     # a real OCI registry on 127.0.0.1 in the sandbox tests
    busybox-static      # the images the sandbox tests and `make demo` build
    jupyter-notebook    # the notebook test's image is built from these installed packages
    python3-ipykernel   #   (Jupyter and its Python kernel)
    dash                #   (its /bin/sh)
    wrk                 # the HTTP load of the services benchmark (bench/services.sh)
    slirp4netns         # the own network of notebooks, services and network: private sandboxes
)

# The web dashboard (web/) is built with Node.js and npm. Machines often have a newer Node.js on
# PATH than Debian's (nodesource, nvm, a tarball); Debian's nodejs and npm are added only when
# `node` or `npm` is missing, so they never shadow or replace one already there.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "deps.sh: missing packages: ${missing[*]}" >&2
    echo "deps.sh: run as root: apt-get update && $cmd" >&2
    exit 1
fi
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
$cmd >/dev/null
