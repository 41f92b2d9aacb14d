#!/bin/bash
# prepare.sh - build (idempotently) the SoftRoCE VM cache used by softroce-cluster:
#   $CACHE/kernel-$KVER/          Debian's kernel .deb unpacked (dpkg -x), depmod run
#   $CACHE/vmlinux-$KVER          uncompressed ELF vmlinux (PVH entry: no XZ decompression under TCG)
#   $CACHE/initramfs-$KVER.cpio.gz static busybox + virtio/9p/overlay modules + init.sh
#   $CACHE/KVER                   the kernel version the cache holds
# The kernel version is the one linux-image-amd64 depends on, looked up with apt-cache now
# (it moves with Debian point releases); when apt-cache cannot tell (no package lists), the
# version already cached is used. Nothing is installed on the host. Safe to run concurrently
# (flock on $CACHE/.lock). Usage: prepare.sh [CACHE]; prints the KVER on stdout's last line.
set -euo pipefail
CACHE=${1:-${HOP_SOFTROCE_DIR:-/var/tmp/hop-softroce}}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "softroce-prepare: $*" >&2; }
die() { echo "softroce-prepare: error: $*" >&2; exit 2; }

for t in qemu-system-x86_64 busybox modprobe depmod cpio gzip dpkg apt-get apt-cache rdma ip flock timeout; do
	command -v "$t" >/dev/null 2>&1 || die "'$t' not found on the host (see docs/softroce.md for the packages)"
done
BUSYBOX=/bin/busybox; [ -x $BUSYBOX ] || BUSYBOX=$(command -v busybox)
! ldd "$BUSYBOX" 2>/dev/null | grep -q '=>' || die "$BUSYBOX is dynamically linked: install busybox-static"
ls /usr/lib/*/libibverbs/librxe-rdmav*.so >/dev/null 2>&1 || die "the rxe verbs provider (ibverbs-providers) is not installed"
PY=/usr/bin/python3; [ -x $PY ] || PY=$(command -v python3) || die "python3 not found"

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock -w 900 9 || die "could not lock $CACHE/.lock within 15 min"

KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}') || true
if [ -z "$KPKG" ]; then
	[ -s "$CACHE/KVER" ] || die "apt-cache does not know linux-image-amd64 (run apt-get update) and nothing is cached"
	KVER=$(cat "$CACHE/KVER"); log "apt-cache gave no kernel; using cached $KVER"
else
	KVER=${KPKG#linux-image-}
fi
KDIR=$CACHE/kernel-$KVER

if [ ! -f "$KDIR/.unpacked" ]; then
	log "fetching $KPKG (apt-get download; not installed on the host)"
	rm -rf "$KDIR" "$CACHE"/dl; mkdir -p "$CACHE/dl"
	( cd "$CACHE/dl" && apt-get download -q -o APT::Sandbox::User=root "$KPKG" >&2 ) || die "apt-get download $KPKG failed (network? apt-get update?)"
	dpkg -x "$CACHE"/dl/"${KPKG}"_*.deb "$KDIR" || die "dpkg -x failed"
	rm -rf "$CACHE/dl"
	[ -f "$KDIR/boot/vmlinuz-$KVER" ] || die "no boot/vmlinuz-$KVER in the package"
	touch "$KDIR/.unpacked"
fi
# the .deb carries no modules.dep: build it for the unpacked tree
[ -f "$KDIR/lib/modules/$KVER/modules.dep" ] || depmod -b "$KDIR" "$KVER"
for m in rdma_rxe ib_uverbs rdma_ucm virtio_net 9p overlay; do
	modprobe -d "$KDIR" -S "$KVER" --show-depends "$m" >/dev/null 2>&1 || die "kernel $KVER has no module $m"
done

# uncompressed vmlinux for PVH boot (~3 s faster than the XZ bzImage under TCG)
VMLINUX=$CACHE/vmlinux-$KVER
if [ ! -s "$VMLINUX" ]; then
	log "extracting vmlinux from the bzImage"
	if ! $PY - "$KDIR/boot/vmlinuz-$KVER" "$VMLINUX.tmp" <<'PY'
import lzma, sys
d = open(sys.argv[1], 'rb').read()
off = d.find(b'\xfd7zXZ\x00')
if off < 0:
    sys.exit("no XZ payload in the bzImage")
out = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(d[off:])
if out[:4] != b'\x7fELF':
    sys.exit("payload is not an ELF vmlinux")
open(sys.argv[2], 'wb').write(out)
PY
	then rm -f "$VMLINUX.tmp"; log "vmlinux extraction failed: the cluster boots the bzImage instead (slower)"
	else mv "$VMLINUX.tmp" "$VMLINUX"; fi
fi

# initramfs: rebuilt when missing or when init.sh changed
INITRD=$CACHE/initramfs-$KVER.cpio.gz
if [ ! -s "$INITRD" ] || [ "$HERE/init.sh" -nt "$INITRD" ]; then
	log "building the initramfs"
	R=$CACHE/initramfs-src.$$
	rm -rf "$R"; mkdir -p "$R"/bin "$R"/proc "$R"/sys "$R"/dev "$R"/lower "$R"/rw "$R"/newroot "$R"/mods
	cp "$BUSYBOX" "$R/bin/busybox"
	: > "$R/mods/order"
	for m in virtio_pci virtio_net 9pnet_virtio 9p overlay; do
		modprobe -d "$KDIR" -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
	done | awk '!seen[$0]++' | while read -r ko; do
		b=$(basename "$ko"); cp "$ko" "$R/mods/$b"; echo "$b" >> "$R/mods/order"
	done
	cp "$HERE/init.sh" "$R/init"; chmod +x "$R/init"
	( cd "$R" && find . | cpio -o -H newc --quiet | gzip -1 ) > "$INITRD.tmp"
	mv "$INITRD.tmp" "$INITRD"
	rm -rf "$R"
fi
echo "$KVER" > "$CACHE/KVER"
echo "$KVER"
