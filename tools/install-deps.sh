#!/usr/bin/env bash
# Installs the Debian packages dejavu builds against, only those that are missing.
set -euo pipefail
packages=(cmake g++ make pkg-config
  libyaml-cpp-dev libboost-graph-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libsimgrid-dev libprotobuf-dev protobuf-compiler libeigen3-dev pybind11-dev libglpk-dev
  clang-format universal-ctags)  # the format and function-length checks (make format-check)
# --with-browser: also Chromium, which the HTML report's test renders the report in.
[ "${1:-}" = "--with-browser" ] && packages+=(chromium)
# --with-fuzz: clang and its runtimes, for the libFuzzer targets (make fuzz).
[ "${1:-}" = "--with-fuzz" ] && packages+=(clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
