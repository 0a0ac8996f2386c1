#!/usr/bin/env bash
# Run every test suite and print one closing line "N passed, N failed,
# N skipped". Exits non-zero if anything failed.
#
#   tools/run-tests.sh                 all suites, every reachable database
#   tools/run-tests.sh unit            one suite: unit | server | functional |
#                                      compat | keystone | packaging |
#                                      monitoring | upstream-client |
#                                      openstacksdk | nova | lint | docs
#   OSC_PLACEMENT_DATABASES="sqlite postgresql" tools/run-tests.sh server
#
# Server and functional suites run once per database: SQLite always, and
# PostgreSQL (127.0.0.1:5432, user postgres) and MariaDB/MySQL
# (127.0.0.1:3306, user root) when they answer. Each run exports
# OSC_PLACEMENT_TEST_DB_URL (empty for SQLite) to the tests.
#
# The compat suite runs upstream Placement 16.0.0 beside ours on each
# database; upstream is installed by tools/upstream-venv.sh into a
# virtualenv of its own (.venv-upstream), never into .venv.
#
# The keystone suite runs once, on SQLite: ours and upstream 16.0.0 behind
# a real Keystone, which tools/keystone-venv.sh installs into a virtualenv
# of its own (.venv-keystone). One Keystone serves the whole suite, so it
# runs with one worker.
#
# The packaging suite runs once, whatever the databases: it builds a
# virtualenv of its own in a temporary directory with upstream Placement
# 16.0.0 and a client-only install of ours (tests/packaging).
#
# The monitoring suite runs once too: the shipped alert rules and Grafana
# dashboard against promtool and a real Prometheus (tests/monitoring),
# from Debian's prometheus package, which tools/prometheus.sh installs
# when promtool is missing.
#
# The nova suite runs once too: tests/nova inside Nova 34.0.0's own
# functional test world with our Placement fixture, in the Nova
# virtualenv tools/nova-tests.sh builds (.nova-functional/venv-ours).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
"$top/tools/venv.sh" || { echo "0 passed, 1 failed"; exit 1; }
venv=${OSC_PLACEMENT_VENV:-$top/.venv}
export PATH="$venv/bin:$PATH"
export PYTHONDONTWRITEBYTECODE=1

passed=0 failed=0 skipped=0

database_url() {
    case "$1" in
        sqlite) echo "" ;;
        postgresql) echo "${OSC_PLACEMENT_PG_URL:-postgresql+psycopg://postgres@127.0.0.1:5432/}" ;;
        mysql) echo "${OSC_PLACEMENT_MYSQL_URL:-mysql+pymysql://root@127.0.0.1:3306/}" ;;
    esac
}

database_answers() {
    case "$1" in
        sqlite) return 0 ;;
        postgresql) port=5432 ;;
        mysql) port=3306 ;;
    esac
    python - "$port" <<'PY'
import socket, sys
try:
    socket.create_connection(('127.0.0.1', int(sys.argv[1])), 2).close()
except OSError:
    sys.exit(1)
PY
}

has_tests() {
    [ -n "$(find "$1" \( -name 'test_*.py' -o -name '*.yaml' \) -print -quit 2>/dev/null)" ]
}

# Run one stestr suite and add its counts to the totals.
run_suite() {
    local label=$1 path=$2
    run_counted "$label" stestr --test-path "$path" --top-dir ./ run \
        ${STESTR_ARGS:-}
}

# Run a command that ends with stestr's summary; add its counts.
run_counted() {
    local label=$1
    shift
    echo "=== $label"
    local log
    log=$(mktemp)
    # No "|| true" here: it would replace PIPESTATUS with its own, and a
    # command that failed before printing a summary would count as passed.
    "$@" 2>&1 | tee "$log" \
        | grep -E '^(FAIL|ERROR)|^ - (Passed|Failed|Skipped)|^Ran |Traceback'
    local status=${PIPESTATUS[0]}
    local p f s
    p=$(sed -n 's/^ - Passed: \([0-9]*\).*/\1/p' "$log" | tail -1)
    f=$(sed -n 's/^ - Failed: \([0-9]*\).*/\1/p' "$log" | tail -1)
    s=$(sed -n 's/^ - Skipped: \([0-9]*\).*/\1/p' "$log" | tail -1)
    if [ -z "$p" ] && [ "$status" -ne 0 ]; then
        tail -40 "$log"
        f=1   # the suite did not even load: count it as a failure
    fi
    if [ "${f:-0}" -gt 0 ]; then
        # The details of each failure, so a red CI log says what broke:
        # stestr's own report of them, from the run's output.
        sed -n '/^{[0-9]*} .*\.\.\. FAILED/,/^======$/p' "$log" | head -300
    fi
    passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
    skipped=$((skipped + ${s:-0}))
    if [ "$status" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
        # Say which suite, and how it ended: no test failed in it.
        echo "=== $label: exit status $status without a failed test" \
             "(counted as one failure); its last lines:"
        tail -15 "$log"
        failed=$((failed + 1))
    fi
    rm -f "$log"
}

# neutron-lib for the server suite's tests of its PlacementAPIClient,
# beside .venv rather than in it: installed there, its flake8 plugin
# needs hacking and stops the lint. Without its dependencies: those the
# client needs are in .venv, bar oslo.db and pecan.
neutron_lib_path() {
    local dir="$top/.neutron-lib"
    if [ ! -d "$dir/neutron_lib" ]; then
        python -m pip install -q --no-deps --target "$dir" \
            'neutron-lib==5.0.1' 'oslo.db' 'pecan' >/dev/null || return 1
    fi
    echo "$dir"
}

run_on_databases() {
    local suite=$1
    has_tests "tests/$suite" || { echo "=== $suite: no tests yet"; return; }
    local extra_path=""
    if [ "$suite" = server ]; then
        # A failed install shows as the tests' failures, not as a skip.
        extra_path=$(neutron_lib_path) || extra_path=""
    fi
    for db in ${OSC_PLACEMENT_DATABASES:-sqlite postgresql mysql}; do
        if ! database_answers "$db"; then
            echo "=== $suite on $db: SKIPPED, no $db server on 127.0.0.1"
            continue
        fi
        OSC_PLACEMENT_TEST_DB_URL=$(database_url "$db") \
            PYTHONPATH="${extra_path}${PYTHONPATH:+:$PYTHONPATH}" \
            run_suite "$suite on $db" "./tests/$suite"
    done
}

# flake8, then the checks flake8 cannot make (tools/check_*.py); each
# counts as one test.
run_lint() {
    echo "=== lint (flake8)"
    local paths
    paths=$(ls -d osc_placement tests benchmarks tools 2>/dev/null)
    count_check flake8 $paths
    echo "=== lint (commit subjects)"
    count_check python tools/check_commit_subjects.py
    echo "=== lint (license headers)"
    count_check python tools/check_license_headers.py
}

count_check() {
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
}

# The documentation and release notes build without a warning: a broken
# heading or a dangling reference fails the run like a failing test.
run_docs() {
    echo "=== docs (sphinx -W)"
    local out
    out=$(mktemp -d)
    if sphinx-build -W --keep-going -q -b html doc/source "$out/doc" \
        && sphinx-build -W --keep-going -q -b html releasenotes/source \
            "$out/releasenotes"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
    rm -rf "$out"
}

# Upstream 16.0.0 in its own virtualenv, then the compat suite on every
# reachable database (its tests create their own databases there).
run_compat() {
    if ! "$top/tools/upstream-venv.sh"; then
        echo "=== compat: upstream's virtualenv failed to install (a failure)"
        failed=$((failed + 1))
        return
    fi
    run_on_databases compat
}

# Keystone and upstream 16.0.0 in their virtualenvs, then the suite. A
# failed install counts as a failure, never as a skip.
run_keystone() {
    if ! "$top/tools/keystone-venv.sh" || ! "$top/tools/upstream-venv.sh"
    then
        echo "=== keystone: a virtualenv failed to install (a failure)"
        failed=$((failed + 1))
        return
    fi
    STESTR_ARGS="--serial ${STESTR_ARGS:-}" \
        run_suite keystone ./tests/keystone
}

# Upstream osc-placement's own functional suite, run with our client against
# upstream Placement (tools/upstream-client-functional.sh): the drop-in
# promise, checked on every run.
run_upstream_client() {
    run_counted "upstream osc-placement functional suite, our client" \
        bash "$top/tools/upstream-client-functional.sh"
}

# openstacksdk's own Placement functional tests, of the release installed,
# against our server behind a real Keystone
# (tools/openstacksdk-functional.sh): the SDK Watcher and tools use.
run_openstacksdk() {
    run_counted "openstacksdk placement functional tests, our server" \
        bash "$top/tools/openstacksdk-functional.sh"
}

# Our tests in Nova's functional world (tools/nova-tests.sh builds Nova's
# tree and virtualenv first): the leaks and stale providers the audit
# commands judge, made by Nova itself.
run_nova() {
    run_counted "nova (tests/nova, Nova's functional world)" \
        bash "$top/tools/nova-tests.sh"
}

# Prometheus and promtool first (installed when missing), then the suite.
run_monitoring() {
    if ! "$top/tools/prometheus.sh" >/dev/null; then
        echo "=== monitoring: Prometheus failed to install (a failure)"
        failed=$((failed + 1))
        return
    fi
    run_suite monitoring ./tests/monitoring
}

suites=${*:-lint docs unit packaging monitoring server functional compat
    keystone upstream-client openstacksdk nova}
for suite in $suites; do
    case "$suite" in
        lint) run_lint ;;
        docs) run_docs ;;
        unit) run_suite unit ./tests/unit ;;
        server|functional) run_on_databases "$suite" ;;
        compat) run_compat ;;
        keystone) run_keystone ;;
        upstream-client) run_upstream_client ;;
        openstacksdk) run_openstacksdk ;;
        nova) run_nova ;;
        monitoring) run_monitoring ;;
        # One virtualenv for every test of the suite: one worker.
        packaging) STESTR_ARGS="--serial ${STESTR_ARGS:-}" \
            run_suite packaging ./tests/packaging ;;
        *) echo "unknown suite $suite (unit, server, functional, compat, keystone, packaging, monitoring, upstream-client, openstacksdk, nova, lint, docs)"; exit 2 ;;
    esac
done

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
