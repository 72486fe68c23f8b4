#!/usr/bin/env bash
# Installs the Debian 12 packages the project needs to build, test and run.
# Idempotent: does nothing when every package is already installed.
set -euo pipefail

PACKAGES=(
  build-essential cmake ccache pkg-config clang-format git
  libboost-dev libboost-system-dev
  libprotobuf-dev protobuf-compiler
  librocksdb-dev
  libgflags-dev libgoogle-glog-dev
  libgtest-dev libgmock-dev
  libyaml-cpp-dev zlib1g-dev libbenchmark-dev
  libssl-dev munge libmunge-dev
  systemd procps iproute2 util-linux passwd python3 man-db universal-ctags
  clang-14 libfuzzer-14-dev
  libsystemd-dev prometheus-cpp-dev prometheus curl
  libgrpc++-dev protobuf-compiler-grpc etcd-server etcd-client
  libhdf5-dev python3-numpy python3-h5py
  nodejs
  chromium chromium-driver python3-selenium
  python3-nbclient python3-ipykernel python3-nbformat
)

# npm comes with NodeSource's nodejs; Debian's nodejs needs Debian's npm beside it.
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(npm); fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
