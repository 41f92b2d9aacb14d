#!/bin/sh
# The shm provider without process_vm_writev (HOP_SHM_CMA=0): large writes
# are copied through the rings in chunks.
prog="${top_builddir:-.}/tests/integration/prov_test"
[ -x "$prog" ] || { echo "SKIP: $prog not built"; exit 77; }
rc=0
for n in 2 4; do
	HOP_SHM_CMA=0 "$prog" shm $n writes sends order oob kill || rc=1
done
exit $rc
