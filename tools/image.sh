#!/usr/bin/env bash
# Builds the agent-operator container image without Docker, from Debian packages only:
# a distroless-style root filesystem (the release binary, the shared libraries it links,
# CA certificates, /etc/passwd with the non-root user 65532) in one layer, written as an
# OCI image layout by umoci. The result runs under any OCI runtime and is pushed with
# skopeo (README, "The container image").
#
#   tools/image.sh [--binary PATH] [--output DIR] [--tag TAG] [--source URL] [--no-setup]
#   tools/image.sh --rootfs DIR --binary PATH    # only assemble the root filesystem
#
# --binary     the agent-operator to ship (default: build the release preset's, with
#              tools/setup.sh); version and revision labels are read from its --version
# --output     OCI image layout directory (default build/image; replaced)
# --tag        image tag inside the layout (default: the binary's version)
# --source     org.opencontainers.image.source (default: the git remote "origin" when it
#              is a URL; left out otherwise)
# --no-setup   do not run tools/setup.sh (which installs missing Debian packages: umoci,
#              binutils, ca-certificates and the build's)
# --rootfs     assemble the root filesystem into DIR and stop; deploy/Dockerfile uses this
#              so that both images have the same contents
#
# The image is reproducible: file times, the layer's order and ownership, and the
# "created" time come from SOURCE_DATE_EPOCH, else the commit time of the binary's
# revision, so one commit gives one image digest.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
binary=""
output="$root/build/image"
tag=""
source_url=""
setup=1
rootfs_only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --source) source_url=$2; shift 2 ;;
    --no-setup) setup=0; shift ;;
    --rootfs) rootfs_only=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "image.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

fail() { echo "image.sh: $*" >&2; exit 1; }

# The numeric user the image runs as (distroless's "nonroot"); deploy/base/deployment.yaml's
# runAsUser/runAsGroup and deploy/Dockerfile's USER match it (tests/deploy checks).
uid=65532
entrypoint=/usr/local/bin/agent-operator

# ---- the root filesystem -----------------------------------------------------------------

# assemble_rootfs BINARY DIR: the binary (stripped), every shared library it links and its
# program interpreter, CA certificates and the files glibc reads for users and host names.
# Nothing else: no shell, no package manager. Times zone data is not needed: the operator
# logs and computes in UTC. Merged-/usr layout as Debian 12: /lib and /lib64 are symlinks.
assemble_rootfs() {
  local bin=$1 dir=$2
  for tool in ldd readelf strip; do
    command -v "$tool" >/dev/null || fail "$tool not found (Debian: libc-bin, binutils)"
  done
  [ -f /etc/ssl/certs/ca-certificates.crt ] ||
    fail "/etc/ssl/certs/ca-certificates.crt not found (Debian: ca-certificates)"
  if ldd "$bin" | grep -q "not found"; then
    ldd "$bin" | grep "not found" >&2
    fail "$bin links libraries this machine lacks"
  fi
  mkdir -p "$dir"
  [ -z "$(ls -A "$dir")" ] || fail "$dir is not empty"
  mkdir -p "$dir"/usr/local/bin "$dir"/usr/lib "$dir"/usr/lib64 "$dir"/etc/ssl/certs \
    "$dir"/usr/lib/ssl "$dir"/home/nonroot "$dir"/tmp
  ln -s usr/lib "$dir/lib"
  ln -s usr/lib64 "$dir/lib64"
  install -m 0755 "$bin" "$dir$entrypoint"
  strip --strip-unneeded "$dir$entrypoint"

  # Shared libraries by the path the loader found them at, and the interpreter by the
  # path the binary names; copied as files (not symlinks) under /usr.
  local interp libs lib dest
  interp=$(readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  [ -n "$interp" ] || fail "$bin has no program interpreter (not a dynamic executable?)"
  libs=$(ldd "$bin" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p')
  for lib in $interp $libs; do
    case "$lib" in
      /usr/*) dest=$lib ;;
      *) dest=/usr$lib ;;
    esac
    mkdir -p "$dir$(dirname "$dest")"
    cp -L "$lib" "$dir$dest"
    chmod 0755 "$dir$dest"
  done

  # CA certificates: Debian's bundle, where OpenSSL (OPENSSLDIR /usr/lib/ssl) looks.
  install -m 0644 /etc/ssl/certs/ca-certificates.crt "$dir/etc/ssl/certs/ca-certificates.crt"
  ln -s /etc/ssl/certs "$dir/usr/lib/ssl/certs"
  ln -s /etc/ssl/certs/ca-certificates.crt "$dir/usr/lib/ssl/cert.pem"

  printf '%s\n' "root:x:0:0:root:/root:/sbin/nologin" \
    "nonroot:x:$uid:$uid:nonroot:/home/nonroot:/sbin/nologin" >"$dir/etc/passwd"
  printf '%s\n' "root:x:0:" "nonroot:x:$uid:" >"$dir/etc/group"
  # Host names from /etc/hosts (the kubelet writes it), then DNS; glibc 2.36 has both
  # services built in, so no libnss_* is needed.
  printf '%s\n' "passwd: files" "group: files" "hosts: files dns" >"$dir/etc/nsswitch.conf"
  chmod 0644 "$dir"/etc/passwd "$dir"/etc/group "$dir"/etc/nsswitch.conf
  chmod 1777 "$dir/tmp"
  chmod 0755 "$dir/home/nonroot"
}

if [ -n "$rootfs_only" ]; then
  [ -n "$binary" ] || fail "--rootfs needs --binary"
  assemble_rootfs "$binary" "$rootfs_only"
  exit 0
fi

# ---- packages and the binary -------------------------------------------------------------

# tools/setup.sh installs what the build and this script need (umoci, binutils,
# ca-certificates are in its package list) and is quiet when nothing is missing.
if [ "$setup" -eq 1 ]; then
  "$root/tools/setup.sh" --no-build
fi
command -v umoci >/dev/null || fail "umoci not found (Debian: umoci)"

if [ -z "$binary" ]; then
  if [ "$setup" -eq 1 ]; then
    "$root/tools/setup.sh" --preset release --target agent-operator
  fi
  binary="$root/build/release/bin/agent-operator"
fi
[ -x "$binary" ] || fail "$binary is not an executable (build it, or pass --binary)"

# "agent-operator 0.1.0 (revision <commit>)"
version_line=$("$binary" --version)
version=$(sed -n 's/^agent-operator \([^ ]*\) (revision \([^)]*\))$/\1/p' <<<"$version_line")
revision=$(sed -n 's/^agent-operator \([^ ]*\) (revision \([^)]*\))$/\2/p' <<<"$version_line")
[ -n "$version" ] && [ -n "$revision" ] || fail "unexpected --version output: $version_line"
[ -n "$tag" ] || tag=$version

if [ -z "$source_url" ] && command -v git >/dev/null; then
  origin=$(git -C "$root" remote get-url origin 2>/dev/null || true)
  case "$origin" in
    https://*|http://*) source_url=${origin%.git} ;;
    git@*:*) host=${origin#git@}; source_url="https://${host%%:*}/${host#*:}"; source_url=${source_url%.git} ;;
  esac
fi

epoch=${SOURCE_DATE_EPOCH:-}
if [ -z "$epoch" ] && [ "$revision" != unknown ] && command -v git >/dev/null; then
  epoch=$(git -C "$root" show -s --format=%ct "$revision" 2>/dev/null || true)
fi
[ -n "$epoch" ] || epoch=$(date +%s)
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)

case "$(dpkg --print-architecture)" in
  amd64) arch=amd64 ;;
  arm64) arch=arm64 ;;
  armhf) arch=arm ;;
  ppc64el) arch=ppc64le ;;
  s390x) arch=s390x ;;
  *) fail "unsupported architecture $(dpkg --print-architecture)" ;;
esac

# ---- the image ----------------------------------------------------------------------------

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
assemble_rootfs "$binary" "$work/rootfs"
find "$work/rootfs" -exec touch -h -d "@$epoch" {} +
tar --create --file "$work/layer.tar" --directory "$work/rootfs" --sort=name \
  --owner=0 --group=0 --numeric-owner --mtime="@$epoch" --format=gnu .

rm -rf "$output"
mkdir -p "$(dirname "$output")"
image="$output:$tag"
umoci init --layout "$output"
umoci new --image "$image"
history=(--history.created "$created" --history.created_by "tools/image.sh")
umoci raw add-layer --image "$image" "${history[@]}" \
  --history.comment "agent-operator $version, its shared libraries, CA certificates" \
  "$work/layer.tar"

annotations=(
  "org.opencontainers.image.title=agent-operator"
  "org.opencontainers.image.description=Kubernetes operator for Grafana Agent and telegraf deployments"
  "org.opencontainers.image.version=$version"
  "org.opencontainers.image.revision=$revision"
  "org.opencontainers.image.created=$created"
)
[ -z "$source_url" ] || annotations+=("org.opencontainers.image.source=$source_url")
config=(--created "$created" --os linux --architecture "$arch" --no-history
  --config.user "$uid:$uid" --config.entrypoint "$entrypoint" --config.workingdir /
  --config.exposedports 8080/tcp --config.exposedports 8081/tcp)
for a in "${annotations[@]}"; do
  config+=(--config.label "$a" --manifest.annotation "$a")
done
# umoci new's default configuration carries a shell-oriented PATH; the image has none.
umoci config --image "$image" --clear=config.env "${config[@]}"
umoci gc --layout "$output"

layer_bytes=$(du -sb "$work/rootfs" | cut -f1)
blob_bytes=$(du -sb "$output/blobs" | cut -f1)
digest=$(sed -n 's/.*"digest":"\(sha256:[0-9a-f]*\)".*/\1/p' "$output/index.json" | head -n1)
echo "image.sh: $image ($digest)"
echo "image.sh: $((layer_bytes / 1024)) KiB unpacked, $((blob_bytes / 1024)) KiB in the layout"
[ -n "$source_url" ] || echo "image.sh: no --source and no git remote URL: the source label is left out"
echo "image.sh: push with: skopeo copy oci:$image docker://REGISTRY/agent-operator:$tag"
