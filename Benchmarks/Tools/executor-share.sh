#!/usr/bin/env bash
# The executor's share of a framework server's CPU, per route and executor choice, from a
# perf profile: how much any executor could gain on that route. Each choice's server (a
# framework section's nested package, Benchmarks/HummingbirdServer or, with FRAMEWORK=vapor,
# Benchmarks/VaporServer, built in release mode) is loaded by wrk on 127.0.0.1 (1 thread,
# 32 connections) while perf samples it with call graphs.
#
# The executor's part is its worker loop without the jobs it runs, plus its enqueue path:
#   Swift's default executor: _dispatch_worker_thread − swift_job_run + swift_task_enqueueGlobalImpl
#   Bolts pool installed:     worker_main − swift_job_run + enqueue_hook
# (inclusive percentages of the server's samples). Where the server's CPU bounds its requests/s,
# an executor whose part cost nothing would serve at most 1 ÷ (1 − the default's share) times the
# default's requests/s, at no less than (1 − share) times its CPU per request.
#
# Usage: [FRAMEWORK=hummingbird|vapor] Benchmarks/Tools/executor-share.sh [seconds] [route...]
# (default: 5 seconds; routes fanout plain). Needs perf (Debian: linux-perf) and wrk, and root
# or kernel.perf_event_paranoid ≤ 0.
set -euo pipefail
seconds=${1:-5}
shift || true
routes=("$@")
[ ${#routes[@]} -gt 0 ] || routes=(fanout plain)
root=$(cd "$(dirname "$0")/../.." && pwd)
case "${FRAMEWORK:-hummingbird}" in
    hummingbird) product=HummingbirdServer ;;
    vapor) product=VaporServer ;;
    *) echo "FRAMEWORK must be hummingbird or vapor" >&2; exit 64 ;;
esac
package="$root/Benchmarks/$product"
swift build -c release --package-path "$package" --product "$product" >&2
server="$(swift build -c release --package-path "$package" --show-bin-path)/$product"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
# The server's jobs last about 3 µs here, as in the benchmark's section (xorshift rounds).
job_rounds=${JOB_ROUNDS:-1500}

# The inclusive percentage of symbol $2 in perf report $1 (0 when absent).
inclusive() {
    awk -v s="$2" '$0 !~ /^#/ && NF >= 4 && $4 == s { gsub("%", "", $1); print $1; found = 1; exit }
        END { if (!found) print 0 }' "$1"
}

echo "| route | executor | requests/s | executor's share of the server's CPU | jobs' own work | ceiling if it cost nothing |"
echo "| --- | --- | ---: | ---: | ---: | ---: |"
for route in "${routes[@]}"; do
    for arm in default bolts; do
        # The server stops when its standard input closes: a fifo held open by this script.
        mkfifo "$work/in-$arm-$route"
        "$server" "$arm" --port 0 --job-rounds "$job_rounds" <"$work/in-$arm-$route" >"$work/port" 2>/dev/null &
        pid=$!
        exec 7>"$work/in-$arm-$route"
        for _ in $(seq 100); do grep -q '^port ' "$work/port" 2>/dev/null && break; sleep 0.05; done
        port=$(awk '/^port / { print $2 }' "$work/port")
        url="http://127.0.0.1:$port/$route"
        wrk -t1 -c32 -d2s "$url" >/dev/null # warm-up
        wrk -t1 -c32 -d"$((seconds + 2))"s "$url" >"$work/wrk" &
        load=$!
        sleep 1
        perf record -q -F 2000 -g -p "$pid" -o "$work/perf.data" -- sleep "$seconds" >/dev/null 2>&1
        wait "$load"
        exec 7>&-
        wait "$pid" 2>/dev/null || true
        perf report -i "$work/perf.data" --children --sort sym -g none --percent-limit 0 2>/dev/null >"$work/report"
        if [ "$arm" = default ]; then
            loop=$(inclusive "$work/report" _dispatch_worker_thread)
            enqueue=$(inclusive "$work/report" swift_task_enqueueGlobalImpl)
            title="Swift's default executor"
        else
            loop=$(inclusive "$work/report" worker_main)
            enqueue=$(inclusive "$work/report" enqueue_hook)
            title="Bolts pool installed"
        fi
        jobs_run=$(inclusive "$work/report" swift_job_run)
        work_share=$(awk '$0 !~ /^#/ && /22BenchmarkServerSupport3JobO4work/ { gsub("%", "", $2); print $2; exit }' "$work/report")
        requests=$(awk '/Requests\/sec/ { print $2 }' "$work/wrk")
        awk -v r="/$route" -v t="$title" -v q="$requests" -v l="$loop" -v j="$jobs_run" -v e="$enqueue" \
            -v w="${work_share:-0}" 'BEGIN {
                share = (l - j + e) / 100
                printf "| %s | %s | %.0f | %.1f %% | %.1f %% | %.3f× requests/s, %.3f× CPU |\n",
                    r, t, q, 100 * share, w, 1 / (1 - share), 1 - share
            }'
        rm -f "$work/perf.data" "$work/port"
    done
done
