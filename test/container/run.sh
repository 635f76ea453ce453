#!/usr/bin/env bash
# The real image, built and run in a real Docker engine: starts an engine if none runs (Debian's
# docker.io, without a bridge or iptables, as a CI machine allows), makes the Node base image where no
# registry is reachable (../shared/tools/container-base.sh beside the repository), builds the
# Dockerfile and runs test/container/image.test.ts against it.
#
#   test/container/run.sh REPORT.json      (vitest's JSON report goes there)
#
# Exit: vitest's status; 3 when it could not run here (no engine could start, or no base image could
# be had), after saying why. The caller decides whether that is a failure (.ci/run: EXPECT_DOCKER=1).
# An engine this script started is stopped again when it ends.
set -uo pipefail
cd "$(dirname "$0")/../.."
report=${1:?usage: test/container/run.sh REPORT.json}
base_version=${TAU_GATEWAY_NODE_MAJOR:-24}
base="node:${base_version}-bookworm-slim"
image="tau-gateway:ci-$$"
work=$(mktemp -d)
started_engine=""

cannot_run() {
  echo "container check: not run: $*"
  exit 3
}

cleanup() {
  docker image rm -f "$image" >/dev/null 2>&1 || true
  if [ -n "$started_engine" ]; then
    kill "$started_engine" 2>/dev/null
    for _ in $(seq 1 300); do kill -0 "$started_engine" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# Root's commands run as they are; others through sudo (which hands our signals on to them).
as_root=""
if [ "$(id -u)" -ne 0 ]; then as_root="sudo -n"; fi

if ! docker info >/dev/null 2>&1; then
  if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
    echo "container check: installing docker.io and debootstrap"
    { $as_root apt-get update && $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker.io debootstrap; } >"$work/apt.log" 2>&1 \
      || { tail -20 "$work/apt.log"; echo "container check: FAILED: docker.io could not be installed"; exit 1; }
  fi
  # No bridge and no iptables rules: containers use the host's network (the tests give each its own port).
  $as_root dockerd --iptables=false --ip-forward=false --bridge=none >"$work/dockerd.log" 2>&1 &
  started_engine=$!
  for _ in $(seq 1 300); do
    docker info >/dev/null 2>&1 && break
    kill -0 "$started_engine" 2>/dev/null || break
    sleep 0.2
  done
  if ! docker info >/dev/null 2>&1; then
    tail -20 "$work/dockerd.log"
    started_engine=""
    cannot_run "no Docker engine could start on this machine (dockerd's last lines above)"
  fi
fi
echo "container check: Docker engine $(docker version --format '{{.Server.Version}}' 2>/dev/null)"

# The base: already in the engine, or made from Debian packages and the npm registry's Node binary
# (machines that reach no container registry), or pulled.
make_base=../shared/tools/container-base.sh
if docker image inspect "$base" >/dev/null 2>&1; then
  echo "container check: base $base is in the engine"
elif [ -f "$make_base" ]; then
  echo "container check: making $base with $make_base (a few minutes)"
  bash "$make_base" "$base_version" || cannot_run "$make_base could not make $base"
elif docker pull "$base"; then
  :
else
  cannot_run "no $base image: none in the engine, $make_base is not beside the repository, and it cannot be pulled"
fi

echo "container check: building $image"
docker build --network host --build-arg "NODE_IMAGE=$base" -t "$image" . >"$work/build.log" 2>&1 || {
  tail -40 "$work/build.log"
  echo "container check: FAILED: docker build"
  exit 1
}
docker image ls "$image" --format 'container check: image {{.Repository}}:{{.Tag}} {{.Size}}'

TAU_GATEWAY_IMAGE="$image" TAU_GATEWAY_BASE_IMAGE="$base" npx vitest run test/container --maxWorkers=1 \
  --reporter=default --reporter=json --outputFile.json="$report"
