# SPDX-License-Identifier: BSD-3-Clause
# t/vm/guest-lib.sh - sourced by the guest's checks in the rxe VM: where the
# host side (t/vm/softnic-server) is, and how to ask it for an action.
R=/run/results
SERVER=10.77.0.1

# Fails the check when the host side (t/vm/softnic-server) never got
# ready: its log is host.log in the results.
need_server() {
    [ -f "$R/server.ready" ] || { echo "no softnic server on the host"; exit 1; }
}

# ask_host NAME [ARGS...]: asks the host side for action NAME with ARGS
# and waits (at most 120 s) for its answer; prints what the action
# printed and returns its exit status (1 when no answer came).
ask_host() {
    ask=$1
    shift
    rm -f "$R/$ask.rc"
    echo "$*" >"$R/req.$ask.tmp" && mv "$R/req.$ask.tmp" "$R/req.$ask"
    for _ in $(seq 1200); do
        [ -f "$R/$ask.rc" ] && break
        sleep 0.1
    done
    sed "s/^/  host $ask: /" "$R/host-$ask.log" 2>/dev/null
    [ -f "$R/$ask.rc" ] || { echo "ask_host: no answer to $ask"; return 1; }
    return "$(cat "$R/$ask.rc")"
}

# A tally that check() counts into: check STATUS DESCRIPTION.
passed=0 failed=0
check() {
    if [ "$1" -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok: $2"
    else
        failed=$((failed + 1))
        echo "FAIL: $2"
    fi
}
tally() {
    echo "tally: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
