#!/bin/busybox sh
# Stage 1 of a softroce-cluster VM: PID 1 of the tiny initramfs. Loads the virtio, 9p and
# overlay modules, mounts the HOST's / read-only over virtio-9p (mount_tag hostroot), puts a
# tmpfs overlay on top and switch_roots into the stage-2 script named by hop_stage2= on the
# kernel command line, run by the host's /bin/sh. Markers go to the console (ttyS0).
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
fail() { echo "[stage1] $* HOP_NODE_STATUS=FAIL"; poweroff -f; }
echo "[stage1] uptime=$(cut -d' ' -f1 /proc/uptime)s loading modules"
for m in $(cat /mods/order); do insmod /mods/$m || echo "[stage1] insmod $m failed"; done
STAGE2=
for a in $(cat /proc/cmdline); do case $a in hop_stage2=*) STAGE2=${a#hop_stage2=};; esac; done
[ -n "$STAGE2" ] || fail "no hop_stage2= on the kernel command line"
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /lower ||
	fail "9p mount of the host root failed"
mount -t tmpfs -o size=75% tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
	fail "overlay mount failed"
[ -f "/newroot$STAGE2" ] || fail "stage 2 script $STAGE2 not visible in the guest"
mkdir -p /newroot/proc /newroot/sys /newroot/dev
mount --move /dev /newroot/dev
umount /sys; umount /proc
echo "[stage1] switch_root -> $STAGE2"
exec switch_root /newroot /bin/sh "$STAGE2"
