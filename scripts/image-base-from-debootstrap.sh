#!/usr/bin/env bash
# Makes the Dockerfile's base images, debian:12 and debian:12-slim, in buildah's local storage from
# a debootstrap root, for a machine that reaches Debian's mirror but no container registry (as
# where this project is developed). `buildah bud` then finds both and pulls nothing (docs/deploy.md).
#   scripts/image-base-from-debootstrap.sh [MIRROR]        (default: debootstrap's own)
# Needs root, debootstrap and buildah (apt-get install debootstrap buildah); vfs storage, as the
# image test (tests/e2e/image_build_test.cc). Both tags name one minbase root: "slim" only in name
# (it keeps /usr/share/doc, the man pages and the locales, which Docker's debian:12-slim drops).
set -euo pipefail
storage=(--storage-driver vfs)
root=$(mktemp -d /var/tmp/gpuattr-base.XXXXXX)
ctr=
cleanup() {
  [ -z "$ctr" ] || buildah "${storage[@]}" rm "$ctr" >/dev/null 2>&1 || true
  rm -rf "$root"
}
trap cleanup EXIT

debootstrap --variant=minbase bookworm "$root" "$@" >&2
mirror=$(awk '$1 == "deb" { print $2; exit }' "$root/etc/apt/sources.list")
# The sources of Docker's debian:12: the release, its updates and the security archive (beside the
# mirror's debian/, as on Debian's own).
rm -f "$root/etc/apt/sources.list"
cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*

ctr=$(buildah "${storage[@]}" from scratch)
mnt=$(buildah "${storage[@]}" mount "$ctr")
tar -C "$root" -c . | tar -C "$mnt" -x
buildah "${storage[@]}" umount "$ctr" >/dev/null
buildah "${storage[@]}" config --cmd bash \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$ctr"
buildah "${storage[@]}" commit -q "$ctr" docker.io/library/debian:12 >/dev/null
buildah "${storage[@]}" tag docker.io/library/debian:12 docker.io/library/debian:12-slim
buildah "${storage[@]}" images --filter reference=docker.io/library/debian
