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
    libmicrohttpd-dev    # HTTP server of gpupoold (built with GnuTLS: HTTPS)
    libcurl4-openssl-dev # HTTP client of the CLI, the agent and the tests
    libssl-dev      # libcrypto: API token randomness and SHA-256
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
    podman              # containers: the CDI test runs real containers given GPU devices
    runc                # podman's OCI runtime on hybrid-cgroup hosts (crun refuses them)
    busybox-static      # the CDI test's image (imported with podman, nothing pulled)
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
