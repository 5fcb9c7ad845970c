# Sourced by the comparison scripts, not run. On a virtual machine whose
# kernel hands the memory it frees back to the host at once (free page
# reporting: /sys/module/page_reporting/parameters/min_free_ms 0), the
# first write into a new page-cache or tmpfs page after that costs a trip
# to the host, and writes into memory run at about a fifth of their speed.
# Which tool of a pair meets that memory depends on what ran just before
# it, not on the tool (docs/hpc.md, "Memory the host took back"), so the
# comparisons keep freed memory in the guest for a minute while they run
# and put the setting back at the end.
#
# Memory freed more than a minute before, or never touched since boot, is
# still the host's: before each run of either tool the scripts write a few
# GiB into a file in /dev/shm and remove it, so that the run's new pages are
# pages the guest touched a moment ago. Without that, the tool whose own
# processes took more of the memory freed just before (fsbench's ranks are
# about 35 MiB each, mdtest's about 14) wrote its files into the host's
# pages more often (benchmarks/records/hpc-io500.md, "mdtest's names on the disk").
#
#   hold_freed_memory    # sets min_free_ms to 60000 when it can, prints what it did
#   release_freed_memory # puts the old value back, removes a warming's file
#                        # (call it from the EXIT trap)
#   warm_free_memory [MIB] # while freed memory is held: writes MIB MiB (3072,
#                          # at most half the memory available) into /dev/shm
#                          # and frees it
#   available_mib N D      # prints N/D of the memory available (MemAvailable), in MiB

page_reporting=/sys/module/page_reporting/parameters/min_free_ms
page_reporting_was=
warm_dir=/dev/shm warm_file=

hold_freed_memory() {
	[ -w "$page_reporting" ] || return 0
	page_reporting_was=$(cat "$page_reporting")
	if echo 60000 >"$page_reporting" 2>/dev/null; then
		echo "# freed memory kept in the guest for 60 s while this runs (free page reporting's min_free_ms was $page_reporting_was)" >&2
	else
		page_reporting_was=
	fi
}

release_freed_memory() {
	if [ -n "$warm_file" ]; then rm -f "$warm_file"; fi
	[ -n "$page_reporting_was" ] || return 0
	# Should the kernel refuse the old value, 1 ms is the nearest to 0.
	echo "$page_reporting_was" >"$page_reporting" 2>/dev/null || echo 1 >"$page_reporting" 2>/dev/null || true
	page_reporting_was=
}

warm_free_memory() {
	[ -n "$page_reporting_was" ] || return 0
	local mib=${1:-3072} avail
	avail=$(available_mib 1 2)
	if [ "$mib" -gt "$avail" ]; then mib=$avail; fi
	warm_file=$(mktemp "$warm_dir/fsbench-warm.XXXXXX") || return 0
	dd if=/dev/zero of="$warm_file" bs=1M count="$mib" status=none || true
	rm -f "$warm_file"
	warm_file=
}

available_mib() {
	awk -v n="$1" -v d="$2" '$1 == "MemAvailable:" {print int($2 * n / d / 1024)}' /proc/meminfo
}
