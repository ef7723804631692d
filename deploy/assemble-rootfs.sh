#!/bin/sh
# Gathers the root filesystem deploy/Containerfile copies into the image: the skirmish binary (stripped), every
# shared library it loads as ldd resolves it on this machine (kept at the same path, so the binary's RUNPATH still
# finds the Swift runtime), CA certificates for https collectors, a minimal /etc and bots/.
#
#   deploy/assemble-rootfs.sh BINARY CONTEXT_DIR
#
# CONTEXT_DIR/rootfs is created afresh; build the image with `buildah build -f deploy/Containerfile CONTEXT_DIR`.
set -eu
binary=${1:?usage: assemble-rootfs.sh BINARY CONTEXT_DIR}
context=${2:?usage: assemble-rootfs.sh BINARY CONTEXT_DIR}
repo=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
rootfs="$context/rootfs"

rm -rf "$rootfs"
mkdir -p "$rootfs/skirmish" "$rootfs/etc/ssl/certs" "$rootfs/tmp" "$rootfs/results"
chmod 1777 "$rootfs/tmp" "$rootfs/results" "$rootfs/skirmish"

cp "$binary" "$rootfs/skirmish/skirmish"
strip --strip-unneeded "$rootfs/skirmish/skirmish" 2>/dev/null || true
chmod 0755 "$rootfs/skirmish/skirmish"
cp -R "$repo/bots" "$rootfs/skirmish/bots"

# Every library the dynamic loader resolves, and the loader itself, at their paths on this machine.
ldd "$binary" | awk '/=> \// { print $3 } /^[[:space:]]*\/[^ ]+ \(0x/ { print $1 }' | sort -u |
while read -r library; do
    mkdir -p "$rootfs$(dirname "$library")"
    cp -L "$library" "$rootfs$library"
done
# Debian's /lib is a symlink to /usr/lib: keep that layout so the loader path baked into the binary resolves.
for link in lib lib64; do
    if [ -L "/$link" ] && [ -d "$rootfs/$link" ]; then
        mkdir -p "$rootfs/usr/$link"
        cp -R "$rootfs/$link/." "$rootfs/usr/$link/"
        rm -rf "${rootfs:?}/$link"
        ln -s "usr/$link" "$rootfs/$link"
    fi
done

if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
fi
printf 'root:x:0:0:root:/:/sbin/nologin\nnobody:x:65534:65534:nobody:/skirmish:/sbin/nologin\n' > "$rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$rootfs/etc/group"
printf 'hosts: files dns\n' > "$rootfs/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$rootfs/etc/hosts"
