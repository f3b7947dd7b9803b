#!/usr/bin/env bash
# Relaxed-memory checks of the C core with Relacy (README.md beside this file): the task
# state word and continuation stack, the trampoline, the whenAll join and the whenAnySuccess
# countdown (task_check.cpp), cancellation with its RCU-protected list (token_check.cpp),
# the pool's submit, park and wake, steal, shutdown, compensation and spares that exit with
# the scan range shrinking (pool_check.cpp), and the pool's blocked-worker monitor, its
# sleep, its accounting and the I6 flag it must leave alone (monitor_check.cpp), each
# run on the project's own C sources as they are in the checkout; then every mutant (one
# weakened order, a missing step or an older version of one, applied by sed to a copy of a
# function or two), each of which must be caught.
#
#   Model/relaxed/run.sh                          # everything (mostly harness builds: one per mutant)
#   RELAXED_ITERATIONS=1000000 Model/relaxed/run.sh
#   RELAXED_ONLY=token Model/relaxed/run.sh       # checks and mutants whose name contains "token"
#
# Environment (optional): RELAXED_ITERATIONS (random-scheduler iterations per check, default
# 200000), RELAXED_POOL_ITERATIONS (the same for the pool checks, whose executions are a
# hundred times longer: workers spin and park; default 20000), RELAXED_MONITOR_ITERATIONS
# (the same for the monitor checks; default 20000: the races two of their mutants need come
# up about once in a thousand iterations), RELAXED_ONLY,
# RELAXED_WORK_DIR (where to build; default a new temporary directory). Exit status 0 only
# when every check passes and every mutant is caught.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
iterations="${RELAXED_ITERATIONS:-200000}"
pool_iterations="${RELAXED_POOL_ITERATIONS:-20000}"
monitor_iterations="${RELAXED_MONITOR_ITERATIONS:-20000}"
only="${RELAXED_ONLY:-}"
work="${RELAXED_WORK_DIR:-$(mktemp -d -t bolts-relaxed.XXXXXX)}"
mkdir -p "$work"

# What the checks need, installed when missing (CI starts with only Swift).
need=""
[ -f /usr/include/relacy/relacy.hpp ] || need="$need relacy-dev"
command -v g++ >/dev/null || need="$need g++"
if [ -n "$need" ]; then
    echo "installing:$need"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq $need >/dev/null; } || { echo "could not install$need"; exit 1; }
fi

# The order of `_Countdown.arrive`'s read-modify-write, read from the Swift source (it has no
# C function to compile): the whenany-countdown check runs with it.
swift_order=$(sed -n 's/.*remaining\.wrappingSubtract(1, ordering: \.\([A-Za-z]*\)).*/\1/p' \
    "$root/Sources/Bolts/Task+WhenAll.swift" | head -n 1)
case "$swift_order" in
    relaxed) when_any=mo_relaxed ;;
    acquiring) when_any=mo_acquire ;;
    releasing) when_any=mo_release ;;
    acquiringAndReleasing) when_any=mo_acq_rel ;;
    sequentiallyConsistent) when_any=mo_seq_cst ;;
    *) echo "run.sh: cannot find _Countdown.arrive's ordering in Task+WhenAll.swift"; exit 1 ;;
esac

# prepare DIR: the runtime's sources, the shim and the harnesses in DIR. The one rewrite:
# `_Atomic T` becomes `_Atomic(T)` (the same C11 type; one macro then maps both spellings).
prepare() {
    rm -rf "$1"
    mkdir -p "$1"
    cp -r "$root/CSupport/CBoltsRuntime/." "$1/"
    sed -i -E 's/_Atomic ([A-Za-z_][A-Za-z0-9_]*)/_Atomic(\1)/g' "$1"/*.c "$1"/*.h "$1"/include/*.h
    cp -r "$here/shim" "$1/"
    cp "$here"/*.cpp "$1/"
}

# build DIR HARNESS [WHEN_ANY_ORDER [OPT]]: -O1 (about five times faster to run than -O0,
# twice the build time) for the checks and for the pool's and the monitor's mutants, whose
# iterations are long and some of which take thousands to be caught; -O0 for the task's and
# the token's mutants, caught within a few short iterations.
build() {
    nice -n 19 g++ -std=gnu++20 "${4:--O1}" -fpermissive -w -I"$1/shim" -I"$1" -I"$1/include" \
        -DWHEN_ANY_ORDER="${3:-$when_any}" -o "$1/$2" "$1/$2.cpp" > "$1/$2.build.log" 2>&1
}

status=0
results=()

# The verdict of one Relacy run from its log: the failure kind Relacy printed, if any.
failure_kind() {
    grep -a -m 1 -E '^[A-Z][A-Z ]+[A-Z]( \(.*\))?$' "$1" ||
        grep -a -m 1 -E 'assertion|RESULT|failed' "$1" || echo "exit status without a Relacy report"
}

base="$work/base"
prepare "$base"
for pair in "task_check token_check" "pool_check monitor_check"; do
    set -- $pair
    build "$base" "$1" & first=$!
    build "$base" "$2" || { echo "build of $2 failed:"; cat "$base/$2.build.log"; exit 1; }
    wait "$first" || { echo "build of $1 failed:"; cat "$base/$1.build.log"; exit 1; }
done

checks=(
    "task_check relaxed-task-adders"
    "task_check relaxed-task-race"
    "task_check relaxed-task-waiter"
    "task_check relaxed-task-waiter-sleep"
    "task_check relaxed-task-timed-waiter"
    "task_check relaxed-task-timed-waiter-sleep"
    "task_check relaxed-task-trampoline"
    "task_check relaxed-whenall-join"
    "task_check relaxed-whenany-countdown"
    "token_check relaxed-token-register-vs-cancel"
    "token_check relaxed-token-dispose"
    "token_check relaxed-token-two-cancellers"
    "token_check relaxed-token-dispose-vs-cancel"
    "pool_check relaxed-pool-one-worker"
    "pool_check relaxed-pool-two-submitters"
    "pool_check relaxed-pool-shutdown-race"
    "pool_check relaxed-pool-compensation"
    "pool_check relaxed-pool-spare-exit"
    "monitor_check relaxed-monitor-hidden-block"
    "monitor_check relaxed-monitor-accounting"
)
# iterations_for HARNESS
iterations_for() {
    case "$1" in
        pool_check) echo "$pool_iterations" ;;
        monitor_check) echo "$monitor_iterations" ;;
        *) echo "$iterations" ;;
    esac
}

# run_check HARNESS NAME: runs one check; prints its report line, and on a failure the
# start of its log.
run_check() {
    local t0
    t0=$(date +%s)
    if nice -n 19 "$base/$1" "$2" "$(iterations_for "$1")" > "$work/$2.log" 2>&1; then
        printf "%-44s %-11s %6s s   %s\n" "$2" ok $(( $(date +%s) - t0 )) "$(grep -a -m 1 '^iterations:' "$work/$2.log")"
    else
        printf "%-44s %-11s %6s s   %s\n" "$2" FAILED $(( $(date +%s) - t0 )) "$(failure_kind "$work/$2.log") (log: $work/$2.log)"
        grep -a -v '^\[' "$work/$2.log" | sed -n '1,20p'
        echo "(the execution history is in the log)"
    fi
}

# Mutants: NAME | FILE | FUNCTION (a line that starts it: the sed is limited to that
# function; several, separated by " ;; ", go with the expressions in turn, the last one
# with the rest) | SED EXPRESSIONS (separated by " ;; ", applied in turn, each of which
# must change the file) | HARNESS | CHECK. Each is the C code with one change; the check
# must fail on it.
mutants=(
    "relaxed-mutant-task-publish-no-release|task.c|^void bolts_task_publish|s/STATE_DISPATCHING, memory_order_acq_rel)/STATE_DISPATCHING, memory_order_acquire)/|task_check|relaxed-task-waiter"
    "relaxed-mutant-task-push-relaxed-cas|task.c|^static bool task_push|s/memory_order_release, memory_order_acquire))/memory_order_relaxed, memory_order_acquire))/|task_check|relaxed-task-adders"
    "relaxed-mutant-task-state-relaxed-load|include/bolts_task.h|^static inline uintptr_t bolts__task_load_state|s/__ATOMIC_ACQUIRE/__ATOMIC_RELAXED/|task_check|relaxed-task-race"
    "relaxed-mutant-join-relaxed-state|include/bolts_task.h|^static inline uintptr_t bolts__task_load_state|s/__ATOMIC_ACQUIRE/__ATOMIC_RELAXED/|task_check|relaxed-whenall-join"
    "relaxed-mutant-whenany-release-only|-|-|mo_release|task_check|relaxed-whenany-countdown"
    "relaxed-mutant-token-cancelled-relaxed|token.c|^bool bolts_token_cancel|s/TOKEN_CANCELLED, memory_order_release/TOKEN_CANCELLED, memory_order_relaxed/|token_check|relaxed-token-register-vs-cancel"
    "relaxed-mutant-token-register-relaxed-load|token.c|^bolts_token_registration_t \*bolts_token_register|s/(\&t->state, memory_order_acquire)/(\&t->state, memory_order_relaxed)/|token_check|relaxed-token-register-vs-cancel"
    "relaxed-mutant-token-ran-relaxed|token.c|^static void token_run_handlers|s/REG_RAN, memory_order_release/REG_RAN, memory_order_relaxed/|token_check|relaxed-token-dispose"
    "relaxed-mutant-pool-park-no-fence|pool_park.c|^bool bolts__pool_park(|s/atomic_thread_fence(memory_order_seq_cst);/(void)0;/|pool_check|relaxed-pool-one-worker"
    "relaxed-mutant-pool-take-release-relaxed|pool_internal.h|^static inline bolts_job_t \*take(|s/(\&slot->consumer, 0, memory_order_release)/(\&slot->consumer, 0, memory_order_relaxed)/|pool_check|relaxed-pool-two-submitters"
    "relaxed-mutant-pool-take-acquire-relaxed|pool_internal.h|^static inline bolts_job_t \*take(|s/(\&slot->consumer, 1, memory_order_acquire)/(\&slot->consumer, 1, memory_order_relaxed)/|pool_check|relaxed-pool-two-submitters"
    "relaxed-mutant-token-dispose-no-grace-period|token.c|^bool bolts_token_registration_dispose|s/token_unref_unlinked(r, after_grace_period)/token_unref_unlinked(r, false)/|token_check|relaxed-token-dispose"
    "relaxed-mutant-monitor-resume-no-fence|pool_monitor.c|^void bolts__pool_monitor_resume|s/atomic_thread_fence(memory_order_seq_cst);/(void)0;/|monitor_check|relaxed-monitor-hidden-block"
    "relaxed-mutant-monitor-sleep-unordered|pool_monitor.c|^static void sleep_while_parked|s/(\&pool->monitor_asleep, 1, memory_order_seq_cst)/(\&pool->monitor_asleep, 1, memory_order_relaxed)/ ;; s/atomic_thread_fence(memory_order_seq_cst);/(void)0;/|monitor_check|relaxed-monitor-hidden-block"
    "relaxed-mutant-monitor-stall-over-load-store|pool_monitor.c|^void bolts__pool_stall_over|s/if (atomic_exchange_explicit(\&slot->stalled, 0, memory_order_relaxed) == 0) return;/if (atomic_load_explicit(\&slot->stalled, memory_order_relaxed) == 0) return; atomic_store_explicit(\&slot->stalled, 0, memory_order_relaxed);/|monitor_check|relaxed-monitor-accounting"
    "relaxed-mutant-monitor-takeover-load-store|pool_compensate.c|^void bolts__pool_blocking_begin|s/if (atomic_exchange_explicit(\&self->stalled, 0, memory_order_relaxed) != 0) {/if (atomic_load_explicit(\&self->stalled, memory_order_relaxed) != 0) { atomic_store_explicit(\&self->stalled, 0, memory_order_relaxed);/|monitor_check|relaxed-monitor-accounting"
    "relaxed-mutant-monitor-stall-writes-blocked|pool_monitor.c|^static void stall( ;; ^void bolts__pool_stall_over|s/atomic_store_explicit(\&slot->stalled, 1, memory_order_relaxed);/&\n    atomic_store_explicit(\&slot->blocked, true, memory_order_relaxed);/ ;; s/if (atomic_exchange_explicit(\&slot->stalled, 0, memory_order_relaxed) == 0) return;/&\n    atomic_store_explicit(\&slot->blocked, false, memory_order_relaxed);/|monitor_check|relaxed-monitor-accounting"
    "relaxed-mutant-pool-spare-exit-store|pool_park.c|^bool bolts__pool_spare_wait|s/if (!atomic_compare_exchange_strong_explicit(\&self->state, \&expected, SLOT_FREE, memory_order_acq_rel,/atomic_store_explicit(\&self->state, SLOT_FREE, memory_order_release); if (0 \&\& !atomic_compare_exchange_strong_explicit(\&self->state, \&expected, SLOT_FREE, memory_order_acq_rel,/|pool_check|relaxed-pool-spare-exit"
    "relaxed-mutant-pool-totals-no-retry|pool_internal.h|^static inline void job_totals(|s/if ((gen \& 1) != 0 .. atomic_load_explicit(\&pool->stats_gen, memory_order_relaxed) != gen) continue;/(void)gen;/|pool_check|relaxed-pool-spare-exit"
)

# run_mutant SPEC: prepares, builds and runs one mutant; prints its report line.
run_mutant() {
    local name file func expr harness check t0 dir order part rest f frest
    IFS='|' read -r name file func expr harness check <<< "$1"
    t0=$(date +%s)
    dir="$work/$name"
    prepare "$dir"
    order="$when_any"
    if [ "$file" = "-" ]; then
        order="$expr" # a Swift ordering: the harness takes it as a macro
    else
        rest="$expr"
        frest="$func"
        f="$func"
        while [ -n "$rest" ]; do
            part="${rest%% ;; *}"
            [ "$part" = "$rest" ] && rest="" || rest="${rest#* ;; }"
            if [ -n "$frest" ]; then
                f="${frest%% ;; *}"
                [ "$f" = "$frest" ] && frest="" || frest="${frest#* ;; }"
            fi
            cp "$dir/$file" "$dir/$file.orig"
            sed -i "\\#${f}#,/^}/ ${part}" "$dir/$file"
            if cmp -s "$dir/$file" "$dir/$file.orig"; then
                printf "%-44s %-11s %6s s   %s\n" "$name" NOT-APPLIED 0 "the sed matched nothing in $file (the code changed: update the mutant)"
                return
            fi
        done
    fi
    local optimize=-O0
    case "$harness" in pool_check | monitor_check) optimize=-O1 ;; esac
    if ! build "$dir" "$harness" "$order" "$optimize"; then
        printf "%-44s %-11s %6s s   %s\n" "$name" BUILD-FAILED $(( $(date +%s) - t0 )) "$dir/$harness.build.log"
        return
    fi
    # The log keeps Relacy's report, not its execution history: that lists the events of
    # every iteration up to the failure, gigabytes for a mutant caught after thousands.
    if nice -n 19 "$dir/$harness" "$check" "$(iterations_for "$harness")" 2>&1 | grep -a -v '^\[' > "$dir/run.log"; then
        printf "%-44s %-11s %6s s   %s\n" "$name" NOT-CAUGHT $(( $(date +%s) - t0 )) "$check passed on the mutant"
    else
        printf "%-44s %-11s %6s s   %s\n" "$name" caught $(( $(date +%s) - t0 )) \
            "$check: $(failure_kind "$dir/run.log"), $(grep -a -m 1 '^iteration:' "$dir/run.log")"
    fi
}

# One queue of checks and mutants, two at a time (one per CPU; each run is
# single-threaded), the pool's and the monitor's first (their iterations are a hundred times
# longer) so that neither CPU is left with a long one at the end; each prints its line as it
# ends, and the summary lists them in the order above.
jobs=()
for c in "${checks[@]}"; do
    set -- $c
    [ -z "$only" ] || [[ "$2" == *"$only"* ]] || continue
    jobs+=("check|$1|$2")
done
for m in "${mutants[@]}"; do
    name="${m%%|*}"
    [ -z "$only" ] || [[ "$name" == *"$only"* ]] || continue
    jobs+=("mutant|$m")
done
order=()
for k in "${!jobs[@]}"; do
    [[ "${jobs[k]}" == *"|pool_check|"* || "${jobs[k]}" == *"|monitor_check|"* ]] && order+=("$k")
done
for k in "${!jobs[@]}"; do [[ " ${order[*]} " == *" $k "* ]] || order+=("$k"); done

echo "== relaxed-memory checks (Relacy, random scheduler, $iterations iterations each; pool: $pool_iterations; monitor: $monitor_iterations), then the mutants (each must be caught); two at a time"
running=0
for k in "${order[@]}"; do
    if [ "$running" -ge 2 ]; then wait -n; running=$((running - 1)); fi
    (
        IFS='|' read -r kind spec <<< "${jobs[k]}"
        if [ "$kind" = check ]; then
            IFS='|' read -r harness name <<< "$spec"
            run_check "$harness" "$name"
        else
            run_mutant "$spec"
        fi > "$work/job-$k.out"
        head -n 1 "$work/job-$k.out" > "$work/job-$k.line"
        cat "$work/job-$k.out"
    ) &
    running=$((running + 1))
done
wait
for k in "${!jobs[@]}"; do
    line=$(cat "$work/job-$k.line" 2>/dev/null || echo "${jobs[k]}: no result")
    results+=("$line")
    if [[ "${jobs[k]}" == check* ]]; then
        [[ "$line" == *" ok "* ]] || status=1
    else
        [[ "$line" == *" caught "* ]] || status=1
    fi
done
echo
echo "== summary"
printf '%s\n' "${results[@]}"
[ "$status" = 0 ] && echo "relaxed-memory checks: all passed, every mutant caught" || echo "relaxed-memory checks: FAILED"
exit $status
