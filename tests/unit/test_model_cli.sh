#!/bin/bash
# hop-model end to end: predict at up to 65536 ranks (one pick per size, CSV
# consistent with the table) and on a host with fewer cores than ranks,
# predict and sim for placements on hosts (two link classes),
# route on a topology where store-and-forward and pipelining disagree, and
# the exit status and message of bad input.
set -u
bin="${top_builddir:-.}/tools/hop-model"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # name, condition...
	local name=$1; shift
	if "$@"; then echo "ok: $name"; else echo "FAIL: $name"; fail=1; fi
}
status() { # expected status, command...
	local want=$1; shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	[ $? = "$want" ]
}

status 0 "$bin" predict --nranks 2,65536 --sizes 8:256M:8 --collective all --provider verbs
check "predict all collectives at 65536 ranks" [ $? = 0 ]
check "a pick on every size line" [ "$(grep -cE '^ +[0-9]+ ' "$tmp/out")" = \
	"$(grep -cE '^ +[0-9]+ .*  [a-z]+( k=[0-9]+ \([0-9]+ B chunks\))?$' "$tmp/out")" ]
check "24 tables (12 collectives x 2 N)" [ "$(grep -c '^# [a-z]*, N = ' "$tmp/out")" = 24 ]

status 0 "$bin" predict --nranks 8 --sizes 1K,1M,64M --csv --provider tcp
check "csv runs" [ $? = 0 ]
check "csv header" [ "$(head -1 "$tmp/out")" = "collective,nranks,bytes,algo,chunks,chunk_bytes,seconds,picked" ]
check "one pick per size" [ "$(awk -F, 'NR > 1 && $8 == 1' "$tmp/out" | wc -l)" = 3 ]
check "the pick is the fastest" awk -F, 'NR > 1 { if (!($3 in best) || $7 < best[$3]) best[$3] = $7; if ($8 == 1) pick[$3] = $7 }
	END { for (s in best) if (pick[s] != best[s]) exit 1 }' "$tmp/out"

# --cores: with more ranks than cores, every prediction is that of the link
# a communicator uses there, written out by hand (built-in tcp: alpha 17 us,
# beta 1.5 GB/s; 4 ranks on 2 cores, 2 per core: alpha 3 x 17 = 51 us,
# beta 0.75 GB/s)
status 0 "$bin" predict --nranks 2,4 --sizes 8,64K,16M --csv --provider tcp --cores 2
cp "$tmp/out" "$tmp/cores.csv"
status 0 "$bin" predict --nranks 4 --sizes 8,64K,16M --csv --provider tcp --alpha-us 51 --beta-GBps 0.75
check "--cores: N = 4 on 2 cores is the adjusted link" [ "$(awk -F, '$2 == 4' "$tmp/cores.csv")" = "$(awk -F, '$2 == 4' "$tmp/out")" ]
status 0 "$bin" predict --nranks 2 --sizes 8,64K,16M --csv --provider tcp
check "--cores: N = 2 on 2 cores is left alone" [ "$(awk -F, '$2 == 2' "$tmp/cores.csv")" = "$(awk -F, '$2 == 2' "$tmp/out")" ]
status 2 "$bin" predict --nranks 4 --sizes 1K --cores 0
check "--cores 0: status 2" [ $? = 0 ]

# --eager: a rendezvous costs 3 alphas. Recursive doubling at N = 2 moves
# one message of m, both ways at once: with tcp's built-in link (alpha
# 17 us, beta 1.5 GB/s, duplex 1.6, gamma 0.1 ns/B) 64 KiB takes
# 3 x 17 + 65536 x 1.6 / 1500 + 6.5536 = 127.4587 us above an 8 KiB eager
# size, 93.4587 us with none (as printed: %.9g seconds)
status 0 "$bin" predict --nranks 2 --sizes 64K --csv --provider tcp --eager 8192
check "--eager 8192: recursive doubling pays the rendezvous" grep -q '^allreduce,2,65536,rd,1,65536,0.000127458667,' "$tmp/out"
status 0 "$bin" predict --nranks 2 --sizes 64K --csv --provider tcp --eager 0
check "--eager 0: one alpha" grep -q '^allreduce,2,65536,rd,1,65536,9.34586667e-05,' "$tmp/out"
status 2 "$bin" predict --nranks 2 --sizes 64K --eager -1
check "--eager -1: status 2, named" grep -q -- '--eager' "$tmp/err"

cat >"$tmp/t.topo" <<'TOPO'
hop-topo 1
# one slow direct link, three fast ones around it
link 0 1 1 1
default 1 2.5
link 0 2
link 2 3
link 3 1
TOPO
status 0 "$bin" route --topo "$tmp/t.topo" --from 0 --to 1 --size 64M
check "route runs" [ $? = 0 ]
check "the two modes disagree: two routes" grep -q 'best store-and-forward route' "$tmp/out"
check "store-and-forward path" grep -q 'path: 0 -> 1  (1 hop)' "$tmp/out"
check "pipelined path" grep -q 'path: 0 -> 2 -> 3 -> 1  (3 hops' "$tmp/out"
check "equal links report T*" grep -q 'equal links: k\* = sqrt' "$tmp/out"

printf 'hop-topo 1\nlink 0 1 1\n' >"$tmp/bad.topo"
status 1 "$bin" route --topo "$tmp/bad.topo" --from 0 --to 1 --size 1M
check "bad topology: status 1" [ $? = 0 ]
check "bad topology: file, line, field" grep -q "bad.topo:2: link: expected" "$tmp/err"
status 1 "$bin" route --topo "$tmp/t.topo" --from 0 --to 9 --size 1M
check "rank out of range: status 1" [ $? = 0 ]
status 2 "$bin" predict --sizes 1K
check "missing --nranks: status 2" [ $? = 0 ]
status 2 "$bin" predict --nranks 4 --sizes 1K --collective allscatter
check "unknown collective: status 2" [ $? = 0 ]
status 2 "$bin" predict --nranks 4 --sizes 1K --provider tcp --profile x.json
check "profile and provider: status 2" [ $? = 0 ]
status 1 "$bin" predict --nranks 4 --sizes 1K --profile "$tmp/none.json"
check "missing profile: status 1" [ $? = 0 ]
check "missing profile: named" grep -q "none.json" "$tmp/err"
status 2 "$bin" predict --nranks 0 --sizes 1K
check "0 ranks: status 2" [ $? = 0 ]

# placements on two link classes: 4 hosts x 2 ranks on a 1 Gbit/s inter
# link: the hierarchical AllReduce from 4 MiB, its phases named; all on one
# host: flat; a two-class profile gives each class its pairs
g1="--inter-alpha-us 50 --inter-beta-GBps 0.125"
status 0 "$bin" predict --hosts 4 --ppn 2 --sizes 8,4M --csv $g1
check "placement: csv header" [ "$(head -1 "$tmp/out")" = "collective,nranks,hosts,max_ppn,bytes,flat_algo,flat_seconds,hier_intra,hier_inter,hier_seconds,picked,picked_seconds,every_flat" ]
check "placement: 4 MiB picks hier (ring inside)" grep -qE '^allreduce,8,4,2,4194304,[a-z]+,[0-9.e-]+,ring,[a-z]+,[0-9.e-]+,hier,' "$tmp/out"
status 0 "$bin" predict --hosts 1 --ppn 8 --sizes 4M --csv $g1
check "placement: one host is flat" grep -qE '^allreduce,8,1,8,4194304,[a-z]+,[0-9.e-]+,auto,auto,nan,[a-z]+,' "$tmp/out"
check "placement: one host not hier" [ "$(grep -c ",hier," "$tmp/out")" = 0 ]
status 0 "$bin" predict --ppn 3,1,2 --map cyclic --sizes 1M --collective all $g1
check "placement: uneven 3+1+2" grep -q "6 ranks on 3 hosts (up to 3 per host, cyclic)" "$tmp/out"
printf 'hop-link-profile 2\nprovider tcp\nnranks 4\npair 0 1 shm 0.7 9 - - intra\npair 0 2 tcp 40 0.1 - - inter\nend\n' >"$tmp/two.prof"
status 0 "$bin" predict --hosts 2 --ppn 2 --sizes 1M --profile "$tmp/two.prof"
check "two-class profile: intra" grep -q "link: intra: alpha 0.70 us, beta 9.000 GB/s" "$tmp/out"
check "two-class profile: inter" grep -q "link: inter: alpha 40.00 us, beta 0.100 GB/s" "$tmp/out"
status 0 "$bin" sim --coll allreduce --algo ring --hosts 2 --ppn 2 --map cyclic --bytes 64K --csv $g1
check "sim on two classes: exact" grep -qE '^allreduce,ring,4,65536,.*,exact,0$' "$tmp/out"
status 2 "$bin" predict --hosts 2 --sizes 1K
check "--hosts without --ppn: status 2" [ $? = 0 ]
status 2 "$bin" predict --hosts 2 --ppn 1,2,3 --sizes 1K
check "--hosts against a --ppn list: status 2" [ $? = 0 ]
status 2 "$bin" predict --hosts 2 --ppn 2 --map ring --sizes 1K
check "--map ring: status 2" [ $? = 0 ]
status 2 "$bin" predict --hosts 2 --ppn 2 --sizes 1K --intra-provider ib
check "--intra-provider ib: status 2" [ $? = 0 ]
exit $fail
