#!/usr/bin/env python3
"""l2hub.py - a small learning Ethernet switch for qemu '-netdev dgram' over AF_UNIX.

softroce-cluster starts it for 3-4 VMs. Each VM runs
    -netdev dgram,id=n0,local.type=unix,local.path=RUN/vmN.dg,remote.type=unix,remote.path=RUN/hub.sock
so every frame a VM sends arrives here as one datagram from RUN/vmN.dg. The hub learns which
port each source MAC sits behind and forwards unicast frames there; broadcast, multicast and
unknown destinations go to every other port. Frames up to 64 KiB (jumbo MTU 9000 passes).
Each port has its own bounded queue and sends are non-blocking, so a slow VM never stalls
the others. No IP networking is involved at all.

Usage: l2hub.py HUB_SOCKET PORT_SOCKET...   (SIGTERM/SIGINT: print counters and exit)
"""
import collections
import errno
import os
import select
import signal
import socket
import sys

QUEUE_MAX = 4096


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    hub_path, ports = sys.argv[1], sys.argv[2:]
    try:
        os.unlink(hub_path)
    except FileNotFoundError:
        pass
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
    sock.bind(hub_path)
    sock.setblocking(False)
    where = {}                                   # MAC -> port socket path
    queues = {p: collections.deque() for p in ports}
    stats = collections.Counter()

    def bye(*_):
        print(f"l2hub: {dict(stats)} macs={len(where)}", flush=True)
        sys.exit(0)
    signal.signal(signal.SIGTERM, bye)
    signal.signal(signal.SIGINT, bye)

    def flush():
        for port, q in queues.items():
            while q:
                try:
                    sock.sendto(q[0], port)
                except (BlockingIOError, InterruptedError):
                    break                        # port busy: retry when writable
                except OSError as e:
                    if e.errno in (errno.ENOENT, errno.ECONNREFUSED):
                        stats["drop_no_port"] += len(q)
                        q.clear()                # VM not up yet or gone
                        break
                    if e.errno == errno.EAGAIN:
                        break
                    raise
                q.popleft()
                stats["tx"] += 1

    print(f"l2hub: {hub_path} ports={ports}", flush=True)
    while True:
        pending = any(queues.values())
        r, _, _ = select.select([sock], [sock] if pending else [], [], 1.0)
        if r:
            for _ in range(256):
                try:
                    frame, src = sock.recvfrom(65536)
                except (BlockingIOError, InterruptedError):
                    break
                stats["rx"] += 1
                if len(frame) < 14 or src not in queues:
                    stats["drop_bad"] += 1
                    continue
                dst_mac, src_mac = frame[0:6], frame[6:12]
                where[src_mac] = src
                out = None if dst_mac[0] & 1 else where.get(dst_mac)
                for port in [out] if out else [p for p in ports if p != src]:
                    if len(queues[port]) < QUEUE_MAX:
                        queues[port].append(frame)
                    else:
                        stats["drop_full"] += 1
        flush()


if __name__ == "__main__":
    main()
