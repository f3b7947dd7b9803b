# Sourced by the tools that measure a checkout's C core on its own (block-cost.sh,
# paced-handoff.sh). build_core CHECKOUT OUTPUT PROGRAM.c: compiles the core's sources
# (all but the Swift Concurrency hooks) of CHECKOUT with PROGRAM.c into OUTPUT, with
# release flags.
build_core() {
    local rt="$1/CSupport/CBoltsRuntime"
    local src="$rt/job.c $rt/task.c $rt/token.c $(ls "$rt"/pool*.c | tr '\n' ' ')"
    [ -f "$rt/diagnostics.c" ] && src="$src $rt/diagnostics.c"
    clang -std=gnu11 -O2 -DNDEBUG -I"$rt/include" -I"$rt" -o "$2" $src "$3" \
        -lurcu-memb -lurcu-common -lurcu-cds -lpthread -lm
}
