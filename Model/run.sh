#!/usr/bin/env bash
# Model-checks the C core's task state machine (Model/task.pml), token registration list
# (Model/token.pml), thread pool parking protocol (Model/pool.pml) and the pool's blocked-worker
# monitor (Model/monitor.pml) with spin, exhaustively,
# for small bounds. See Model/README.md.
#
#   Model/run.sh                       # every check at the default bounds (4-8 minutes here)
#   TASK_ADDERS=4 TOKEN_REGS=3 Model/run.sh
#   MODEL_ONLY=token Model/run.sh      # only the checks whose name contains "token"
#
# Environment (all optional):
#   TASK_ADDERS       adders in the task checks that race one or two completers      (default 3)
#   TASK_COMPLETERS   completers racing trySet/trySet/tryCancel in task-race           (default 3)
#   TOKEN_REGS        registrations in the token checks                              (default 2)
#   MODEL_LTL         1: also run the liveness (LTL, weak fairness) checks            (default 1)
#   MODEL_LTL_FULL    1: run the token liveness check at TOKEN_REGS with dispose too  (default 0;
#                     about a minute at TOKEN_REGS=2)
#   MODEL_POOL_FULL   1: also the pool check with two submitters and one extra scan    (default 0;
#                     about 80 s and 3.5 GB here, 6e7 states), and the shutdown check
#                     with two jobs (about 60 s and 2.8 GB, 5e7 states)
#   MODEL_MUTANTS     1: also check that deliberately broken variants are caught      (default 1)
#   MODEL_KNOWN_OK    1: the open findings listed in Model/FINDINGS.md (KNOWN below) are
#                     reported but do not fail the run                                (default 0)
#   MODEL_ONLY        run only the checks whose name contains this string
#   MODEL_SHARD       K/N: run only every N-th check, starting with the K-th (0-based), so
#                     that N processes can share the checks (.ci/run runs 0/2 and 1/2 at once)
#   MODEL_MEMORY_MB   memory limit of each verifier (pan -DMEMLIM)                     (default 4096)
#   MODEL_MA          store states in a minimized automaton (pan -DMA=<this many bytes, at
#                     least the "State-vector" size pan prints; 320 fits both models):
#                     about 4x less memory than the default (-DCOLLAPSE), about 10x slower;
#                     still exhaustive. For bounds that exhaust MODEL_MEMORY_MB.
#   MODEL_BITSTATE    1: bitstate hashing (pan -DBITSTATE -w33, 1 GB): covers huge state
#                     spaces but is NOT exhaustive; a pass is then evidence, not proof
#   MODEL_TIMEOUT     seconds allowed per check                                      (default 900)
#   MODEL_WORK_DIR    where to build verifiers and keep trails (default: a new temporary directory)
#
# Exit status: 0 when every check ended as expected (properties hold; each mutant is caught);
# 1 otherwise, after printing the counterexample trail of each failure. An incomplete search
# (depth or memory limit reached) counts as a failure.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
adders="${TASK_ADDERS:-3}"
completers="${TASK_COMPLETERS:-3}"
regs="${TOKEN_REGS:-2}"
ltl="${MODEL_LTL:-1}"
ltl_full="${MODEL_LTL_FULL:-0}"
pool_full="${MODEL_POOL_FULL:-0}"
mutants="${MODEL_MUTANTS:-1}"
known_ok="${MODEL_KNOWN_OK:-0}"
only="${MODEL_ONLY:-}"
shard="${MODEL_SHARD:-0/1}"
shard_k="${shard%/*}"
shard_n="${shard#*/}"
[[ "$shard_k" =~ ^[0-9]+$ && "$shard_n" =~ ^[1-9][0-9]*$ && "$shard_k" -lt "$shard_n" ]] ||
    { echo "MODEL_SHARD must be K/N with 0 <= K < N (got $shard)"; exit 1; }
check_index=0
memory="${MODEL_MEMORY_MB:-4096}"
ma="${MODEL_MA:-}"
bitstate="${MODEL_BITSTATE:-0}"
limit="${MODEL_TIMEOUT:-900}"
work="${MODEL_WORK_DIR:-$(mktemp -d -t bolts-model.XXXXXX)}"
mkdir -p "$work"

command -v spin >/dev/null || { echo "Model/run.sh: spin is not installed (apt-get install spin)"; exit 1; }
# The C compiler for the verifiers and the regression programs: $CC, else gcc, cc or clang.
cc="${CC:-}"
if [ -z "$cc" ]; then
    for candidate in gcc cc clang; do
        if command -v "$candidate" >/dev/null; then cc="$candidate"; break; fi
    done
fi
[ -n "$cc" ] || { echo "Model/run.sh: no C compiler (apt-get install gcc, or set CC)"; exit 1; }
[ "$adders" -ge 1 ] && [ "$adders" -le 5 ] || { echo "TASK_ADDERS must be 1..5"; exit 1; }
[ "$completers" -ge 1 ] && [ "$completers" -le 5 ] || { echo "TASK_COMPLETERS must be 1..5"; exit 1; }
[ "$regs" -ge 1 ] && [ "$regs" -le 3 ] || { echo "TOKEN_REGS must be 1..3"; exit 1; }

# Checks that reproduce an open finding of Model/FINDINGS.md (name -> finding). F1 and F2
# were fixed in 5bacbf8; their checks now pass and stay as regressions.
declare -A KNOWN=()

failures=0
known_failures=0
summary=()
total_start=$(date +%s)

# selected NAME: whether this run (MODEL_ONLY, MODEL_SHARD) takes the check called NAME.
selected() {
    if [ -n "$only" ] && [[ "$1" != *"$only"* ]]; then return 1; fi
    local index=$check_index
    check_index=$((check_index + 1))
    [ $((index % shard_n)) -eq "$shard_k" ]
}

# check NAME MODEL EXPECT MODE DEFINES...
#   EXPECT: pass (no error) | fail (a mutant: an error is expected)
#   MODE:   safety | ltl:<claim name>
check() {
    local name="$1" model="$2" expect="$3" mode="$4"
    shift 4
    local defines=("$@")
    selected "$name" || return 0
    local dir="$work/$name"
    rm -rf "$dir" && mkdir -p "$dir" && cp "$here/$model" "$dir/"
    # A mutant's search ends at its first error, within a few seconds at most: compiling
    # its verifier unoptimized saves more than the slower search costs.
    local optimize=-O2
    [ "$expect" = fail ] && optimize=-O0
    local cflags=(-w "$optimize" "-DMEMLIM=$memory")
    local runflags=(-m200000)
    if [ "$bitstate" = 1 ]; then
        cflags+=(-DBITSTATE)
        runflags+=(-w33)
    elif [ -n "$ma" ]; then
        cflags+=("-DMA=$ma")
    else
        cflags+=(-DCOLLAPSE)
    fi
    if [ "$mode" = safety ]; then
        cflags+=(-DSAFETY -DNOCLAIM)
    else
        cflags+=(-DNFAIR=4)
        runflags+=(-a -f -N "${mode#ltl:}")
    fi
    local start end out errors states status
    start=$(date +%s.%N)
    (
        cd "$dir" &&
        spin "${defines[@]}" -a "$model" > spin.log 2>&1 &&
        "$cc" "${cflags[@]}" -o pan pan.c > gcc.log 2>&1 &&
        timeout "$limit" ./pan "${runflags[@]}" > pan.log 2>&1
    )
    status=$?
    end=$(date +%s.%N)
    out="$dir/pan.log"
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$out" 2>/dev/null | tail -1)
    states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$out" 2>/dev/null | tail -1)
    local secs
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    local incomplete=""
    if grep -qE "max search depth too small|out of memory|reached -DMEMLIM" "$out" 2>/dev/null; then
        incomplete="incomplete search"
    fi
    local verdict
    if [ -z "$errors" ]; then
        verdict="BROKEN"   # did not build or did not finish
    elif [ "$expect" = pass ] && [ "$errors" = 0 ] && [ -z "$incomplete" ]; then
        verdict="ok"
    elif [ "$expect" = fail ] && [ "$errors" != 0 ]; then
        verdict="caught"
    elif [ "$expect" = fail ]; then
        verdict="MISSED"
    elif [ -n "$incomplete" ]; then
        verdict="INCOMPLETE"
    else
        verdict="VIOLATED"
    fi
    local finding="${KNOWN[$name]:-}"
    local line
    line=$(printf "%-34s %-11s %12s states %7s s   %s" "$name" "$verdict" "${states:-?}" "$secs" "${defines[*]}")
    if [ "$verdict" = VIOLATED ] && [ -n "$finding" ]; then
        line="$line   [open finding $finding]"
    fi
    echo "$line"
    summary+=("$line")
    case "$verdict" in
        ok | caught) ;;
        VIOLATED)
            grep -E "^pan:|error|violated|invalid end state|acceptance cycle" "$out" | head -5 | sed 's/^/    /'
            if [ -f "$dir/$model.trail" ]; then
                (cd "$dir" && spin "${defines[@]}" -t -p "$model" > trail.txt 2>&1)
                echo "    counterexample (last 25 steps; full trail: $dir/trail.txt):"
                grep -E "^ *[0-9]+:[[:space:]]+proc" "$dir/trail.txt" | tail -25 | sed 's/^ */      /'
            fi
            if [ -n "$finding" ] && [ "$known_ok" = 1 ]; then
                known_failures=$((known_failures + 1))
            else
                failures=$((failures + 1))
            fi
            ;;
        *)
            echo "    $verdict: see $dir (spin.log, gcc.log, pan.log)"
            tail -5 "$out" 2>/dev/null | sed 's/^/    /'
            failures=$((failures + 1))
            ;;
    esac
}

echo "== task.pml: state word, continuation stack, waiter (work dir: $work)"
check task-adders             task.pml pass safety -DNADD="$adders" -DSEQ=1 -DNCOMP=1 -DWAITER=0
check task-adders-race        task.pml pass safety -DNADD="$adders" -DSEQ=1 -DNCOMP=2 -DWAITER=0
check task-race               task.pml pass safety -DNADD=1 -DSEQ=0 -DNCOMP="$completers" -DWAITER=1
check task-waiter             task.pml pass safety -DNADD=2 -DSEQ=0 -DNCOMP=1 -DWAITER=1
check task-timed-waiter       task.pml pass safety -DNADD=2 -DSEQ=0 -DNCOMP=2 -DWAITER=2
check task-abandoned          task.pml pass safety -DNADD=2 -DSEQ=0 -DNCOMP=0 -DWAITER=2
check task-late-order         task.pml pass safety -DNADD=1 -DSEQ=1 -DNCOMP=1 -DWAITER=0 -DSPURIOUS=0
check task-deep-waiter        task.pml pass safety -DNADD=1 -DSEQ=0 -DNCOMP=1 -DWAITER=1 -DDEEP=1
if [ "$ltl" = 1 ]; then
    for claim in wake allrun visible order; do
        check "task-ltl-$claim"   task.pml pass "ltl:$claim" -DNADD=2 -DSEQ=0 -DNCOMP=1 -DWAITER=1 -DSPURIOUS=0
    done
    check task-ltl-wake-deep  task.pml pass ltl:wake -DNADD=1 -DSEQ=0 -DNCOMP=1 -DWAITER=1 -DSPURIOUS=0 -DDEEP=1
fi

echo "== token.pml: registration list under RCU"
check token-dispose           token.pml pass safety -DNREG="$regs" -DDISPOSE=1
check token-self-dispose      token.pml pass safety -DNREG="$regs" -DDISPOSE=0 -DHANDLER=1
check token-handler-disposes  token.pml pass safety -DNREG="$regs" -DDISPOSE=0 -DHANDLER=2
check token-handler-reenters  token.pml pass safety -DNREG="$regs" -DDISPOSE=0 -DHANDLER=3
check token-two-cancellers    token.pml pass safety -DNREG="$regs" -DDISPOSE=0 -DCANCEL2=1
check token-dispose-vs-cancel token.pml pass safety -DNREG="$regs" -DDISPOSE=0 -DTDISPOSE=1
check token-no-cancel         token.pml pass safety -DNREG="$regs" -DDISPOSE=1 -DCANCEL=0 -DTDISPOSE=1
if [ "$ltl" = 1 ]; then
    check token-ltl-nohang    token.pml pass ltl:nohang -DNREG=1 -DDISPOSE=1 -DCANCEL2=1
    if [ "$ltl_full" = 1 ]; then
        check token-ltl-nohang-full token.pml pass ltl:nohang -DNREG="$regs" -DDISPOSE=1 -DCANCEL2=1
    fi
fi

echo "== pool.pml: run queues, searching count, parking (submitter link stores in a TSO store buffer)"
check pool-two-submitters     pool.pml pass safety -DNSUB=2 -DNJOBS=2 -DSPIN=0
check pool-one-submitter-two-jobs pool.pml pass safety -DNSUB=1 -DNJOBS=2 -DSPIN=0
check pool-longer-spin        pool.pml pass safety -DNSUB=1 -DNJOBS=1 -DSPIN=2
check pool-shutdown           pool.pml pass safety -DSHUTDOWN=1 -DNSUB=1 -DNJOBS=1 -DSPIN=0
check pool-compensation      pool.pml pass safety -DBLOCKING=1 -DNSUB=1 -DNJOBS=2 -DSPIN=0
check pool-compensation-spin pool.pml pass safety -DBLOCKING=1 -DNSUB=2 -DNJOBS=2 -DSPIN=1
check pool-compensation-twice pool.pml pass safety -DBLOCKING=1 -DNSUB=1 -DNJOBS=4 -DSPIN=0
# F4's notify in the blocking hook, removed (MUTANT=11): no longer a mutant since the fix
# of F6 (see pool.pml's header); checked to pass, so that the day it fails again is seen.
check pool-compensation-twice-without-f4-notify pool.pml pass safety -DMUTANT=11 -DBLOCKING=1 -DNSUB=1 -DNJOBS=4 -DSPIN=0
check pool-ramp-up            pool.pml pass safety -DRAMP=1 -DNSUB=1 -DNJOBS=2 -DSPIN=0
check pool-ramp-up-spin       pool.pml pass safety -DRAMP=1 -DNSUB=1 -DNJOBS=2 -DSPIN=1
echo "== monitor.pml: the blocked-worker monitor (I12): its count, its sleep, the I6 flag, spares that exit"
check monitor                 monitor.pml pass safety
if [ "$pool_full" = 1 ]; then
    check pool-two-submitters-spin pool.pml pass safety -DNSUB=2 -DNJOBS=2 -DSPIN=1
    check pool-shutdown-two-jobs  pool.pml pass safety -DSHUTDOWN=1 -DNSUB=1 -DNJOBS=2 -DSPIN=0
fi

# regress NAME SOURCE: a counterexample replayed on the real C code (Model/regress/NAME.c,
# compiled with task.c and job.c); exit status 0 = the bug is gone.
regress() {
    local name="$1" source="$2"
    selected "$name" || return 0
    local dir="$work/$name" start end secs verdict status
    mkdir -p "$dir"
    start=$(date +%s.%N)
    if "$cc" -O1 -pthread -D_Nullable= -D_Nonnull= -o "$dir/test" "$here/regress/$source" \
        "$here/../CSupport/CBoltsRuntime/task.c" "$here/../CSupport/CBoltsRuntime/job.c" > "$dir/gcc.log" 2>&1; then
        timeout 60 "$dir/test" > "$dir/run.log" 2>&1
        status=$?
    else
        status=2
    fi
    end=$(date +%s.%N)
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    case "$status" in
        0) verdict=ok ;;
        1) verdict=VIOLATED ;;
        *) verdict=BROKEN ;;
    esac
    local finding="${KNOWN[$name]:-}" line
    line=$(printf "%-34s %-11s %12s        %7s s   %s" "$name" "$verdict" "" "$secs" "regress/$source")
    if [ "$verdict" = VIOLATED ] && [ -n "$finding" ]; then line="$line   [open finding $finding]"; fi
    echo "$line"
    summary+=("$line")
    sed 's/^/    /' "$dir/run.log" 2>/dev/null | tail -3
    case "$verdict" in
        ok) ;;
        VIOLATED)
            if [ -n "$finding" ] && [ "$known_ok" = 1 ]; then known_failures=$((known_failures + 1));
            else failures=$((failures + 1)); fi ;;
        *) sed 's/^/    /' "$dir/gcc.log" | tail -5; failures=$((failures + 1)) ;;
    esac
}

echo "== regressions: counterexamples replayed on the C code"
regress regress-deep-wait deep_wait.c

if [ "$mutants" = 1 ]; then
    echo "== self-test: broken variants must be caught"
    check mutant-task-1-link-after-dispatch task.pml fail safety -DMUTANT=1 -DNADD=2 -DSEQ=0 -DNCOMP=2 -DWAITER=2
    check mutant-task-2-relaxed-cas-failure task.pml fail safety -DMUTANT=2 -DNADD=2 -DSEQ=0 -DNCOMP=2 -DWAITER=2
    check mutant-task-3-waiter-single-owner task.pml fail safety -DMUTANT=3 -DNADD=2 -DSEQ=0 -DNCOMP=2 -DWAITER=2
    check mutant-task-4-claim-without-cas   task.pml fail safety -DMUTANT=4 -DNADD=2 -DSEQ=0 -DNCOMP=2 -DWAITER=2
    check mutant-task-5-destroy-no-drop     task.pml fail safety -DMUTANT=5 -DNADD=2 -DSEQ=0 -DNCOMP=0 -DWAITER=2
    check mutant-task-6-no-dispatching      task.pml fail safety -DMUTANT=6 -DNADD=1 -DSEQ=1 -DNCOMP=1 -DWAITER=0
    check mutant-task-7-waiter-dispatches   task.pml fail safety -DMUTANT=7 -DNADD=1 -DSEQ=0 -DNCOMP=1 -DWAITER=1 -DDEEP=1
    check mutant-pool-1-notify-before-enqueue pool.pml fail safety -DMUTANT=1 -DNSUB=2 -DNJOBS=2 -DSPIN=0
    check mutant-pool-2-check-before-publish  pool.pml fail safety -DMUTANT=2 -DNSUB=2 -DNJOBS=2 -DSPIN=0
    check mutant-pool-3-empty-by-head-link    pool.pml fail safety -DMUTANT=3 -DNSUB=2 -DNJOBS=2 -DSPIN=0
    check mutant-pool-4-no-state-reread       pool.pml fail safety -DMUTANT=4 -DSHUTDOWN=1 -DNSUB=1 -DNJOBS=1 -DSPIN=0
    check mutant-pool-5-shutdown-no-wake      pool.pml fail safety -DMUTANT=5 -DSHUTDOWN=1 -DNSUB=1 -DNJOBS=1 -DSPIN=0
    check mutant-pool-6-close-no-wake-all     pool.pml fail safety -DMUTANT=6 -DSHUTDOWN=1 -DNSUB=1 -DNJOBS=1 -DSPIN=0
    check mutant-pool-9-block-no-decrement    pool.pml fail safety -DMUTANT=9 -DBLOCKING=1 -DNSUB=1 -DNJOBS=2 -DSPIN=0
    check mutant-pool-10-end-no-increment pool.pml fail safety -DMUTANT=10 -DBLOCKING=1 -DNSUB=1 -DNJOBS=2 -DSPIN=0
    check mutant-pool-12-park-drops-searching pool.pml fail safety -DMUTANT=12 -DRAMP=1 -DNSUB=1 -DNJOBS=2 -DSPIN=0
    check mutant-pool-13-no-ramp-recheck   pool.pml fail safety -DMUTANT=13 -DRAMP=1 -DNSUB=1 -DNJOBS=2 -DSPIN=0
    check mutant-monitor-1-no-resume         monitor.pml fail safety -DMUTANT=1
    check mutant-monitor-2-undo-without-exchange monitor.pml fail safety -DMUTANT=2
    check mutant-monitor-3-check-before-flag monitor.pml fail safety -DMUTANT=3
    check mutant-monitor-4-stall-writes-blocked monitor.pml fail safety -DMUTANT=4
    check mutant-monitor-5-spare-exit-store  monitor.pml fail safety -DMUTANT=5
    check mutant-token-1-no-grace-period    token.pml fail safety -DMUTANT=1 -DNREG=2 -DDISPOSE=0 -DHANDLER=2
    check mutant-token-2-dispose-no-wait    token.pml fail safety -DMUTANT=2 -DNREG=2 -DDISPOSE=1
    check mutant-token-3-no-recheck         token.pml fail safety -DMUTANT=3 -DNREG=2 -DDISPOSE=1
    check mutant-token-4-no-wake            token.pml fail safety -DMUTANT=4 -DNREG=2 -DDISPOSE=0 -DCANCEL2=1
    check mutant-token-5-cancel-after-dispose token.pml fail safety -DMUTANT=5 -DNREG=2 -DDISPOSE=0 -DTDISPOSE=1
fi

total=$(( $(date +%s) - total_start ))
echo
echo "== summary (${total} s; trails and logs in $work)"
for line in "${summary[@]}"; do echo "$line"; done
if [ "$failures" -gt 0 ]; then
    echo "FAILED: $failures check(s) did not end as expected"
    exit 1
fi
if [ "$known_failures" -gt 0 ]; then
    echo "passed, except $known_failures check(s) reproducing open findings (MODEL_KNOWN_OK=1; see Model/FINDINGS.md)"
fi
exit 0
