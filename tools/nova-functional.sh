#!/usr/bin/env bash
# Run a selection of Nova's own functional tests twice: with upstream's
# PlacementFixture (openstack-placement) and with ours swapped in by the
# one-line import change a project would make. Not part of the default
# suite: it builds two virtualenvs and runs for minutes.
#
#   bash tools/nova-functional.sh [setup|setup-ours|upstream|ours|both|together] [filter...]
#
# setup     build both venvs and both Nova trees (idempotent)
# setup-ours  build only Nova's tree and venv with our fixture (what
#           tools/nova-tests.sh needs)
# upstream  run the selection with openstack-placement's fixture
# ours      run it with osc_placement.server.fixture (openstack-placement
#           is not installed in that venv)
# both      (default) setup, then upstream, then ours
# together  setup, then upstream and ours at the same time (on a shared
#           machine the load then falls on both alike)
#
# Filters are stestr's (regular expressions, any may match); @FILE reads
# them from FILE, one a line (tools/nova-functional-full.txt: the
# placement-heavy selection). Without filters the selection is
# $NOVA_SELECTION (default: the report client, the provider-tree tests
# and a few placement-heavy test_servers classes: 117 tests).
# Environment: NOVA_FUNCTIONAL_DIR (work directory, default
# .nova-functional in the worktree), NOVA_VERSION (34.0.0),
# PLACEMENT_VERSION (16.0.0), NOVA_WORKERS (stestr concurrency, default 2),
# PYTHON (python3).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
work=${NOVA_FUNCTIONAL_DIR:-$top/.nova-functional}
nova_version=${NOVA_VERSION:-34.0.0}
placement_version=${PLACEMENT_VERSION:-16.0.0}
workers=${NOVA_WORKERS:-2}
python=${PYTHON:-python3}
default_selection='nova\.tests\.functional\.(test_report_client|test_servers_provider_tree|test_servers\.(ServerMovingTests|TraitsBasedSchedulingTest|ConsumerGenerationConflictTest|ServerRescheduleTests|VolumeBackedServerTest)\.)'
selection=${NOVA_SELECTION:-$default_selection}

# Nova's warnings fixture turns a SQLAlchemy 2.1 deprecation into an
# error (with either fixture), so both venvs stay on 2.0.x.
sqlalchemy_pin='SQLAlchemy>=2.0,<2.1'

# The import Nova's functional fixtures make, and ours in its place.
upstream_import='from placement.tests.functional.fixtures import placement as placement_fixtures'
ours_import='from osc_placement.server import fixture as placement_fixtures'

nova_tree() {  # nova_tree DIR: an unpacked Nova source tree in DIR
    local dir=$1
    [ -d "$dir/nova" ] && return
    mkdir -p "$work/download"
    if [ ! -f "$work/download/nova-$nova_version.tar.gz" ]; then
        "$python" -m pip download --quiet --no-deps --no-binary :all: \
            -d "$work/download" "nova==$nova_version"
    fi
    mkdir -p "$dir"
    tar xzf "$work/download/nova-$nova_version.tar.gz" -C "$dir" \
        --strip-components=1
}

make_venv() {  # make_venv VENV TREE EXTRA_REQUIREMENT...
    local venv=$1 tree=$2
    shift 2
    [ -f "$venv/.ready" ] && return
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    echo "Installing Nova $nova_version and its test requirements into $venv"
    PBR_VERSION=$nova_version "$venv/bin/python" -m pip install \
        -e "$tree" -r "$tree/test-requirements.txt" "$sqlalchemy_pin" \
        "$@" > "$venv/install.log" 2>&1 || {
            tail -30 "$venv/install.log"; exit 1; }
    touch "$venv/.ready"
}

swap_imports() {  # the change a project makes to use our fixture
    local tree=$1
    grep -q "$ours_import" "$tree/nova/tests/functional/fixtures.py" && return
    sed -i "s/^$upstream_import\$/$ours_import/" \
        "$tree/nova/tests/functional/fixtures.py"
    grep -q "$ours_import" "$tree/nova/tests/functional/fixtures.py"
    # One regression test builds the database itself from placement's
    # conf and Database fixture; ours has the same two names.
    sed -i \
        -e 's/^from placement import conf as placement_conf$/from osc_placement.server import conf as placement_conf/' \
        -e 's/^from placement.tests import fixtures as placement_db$/from osc_placement.server import fixture as placement_db/' \
        "$tree/nova/tests/functional/regressions/test_bug_1679750.py"
}

setup_ours() {
    nova_tree "$work/nova-ours"
    swap_imports "$work/nova-ours"
    make_venv "$work/venv-ours" "$work/nova-ours"
    # Again when setup.cfg changed since: its entry points (the commands
    # the placement shell loads) are read at install time.
    if [ ! -f "$work/venv-ours/.ours" ] ||
       [ "$top/setup.cfg" -nt "$work/venv-ours/.ours" ]; then
        # Editable, so the runs see this worktree's server; pbr needs a
        # version in a tag-less clone.
        PBR_VERSION=${PBR_VERSION:-0.0.1} "$work/venv-ours/bin/python" -m \
            pip install --quiet -e "$top[server,test-fixture]" \
            "$sqlalchemy_pin" > "$work/venv-ours/install-ours.log" 2>&1 || {
                tail -30 "$work/venv-ours/install-ours.log"; exit 1; }
        touch "$work/venv-ours/.ours"
    fi
    if "$work/venv-ours/bin/python" -c 'import placement' 2>/dev/null; then
        echo "openstack-placement must not be in $work/venv-ours" >&2
        exit 1
    fi
}

setup() {
    nova_tree "$work/nova-upstream"
    make_venv "$work/venv-upstream" "$work/nova-upstream" \
        "openstack-placement==$placement_version"
    setup_ours
}

run() {  # run upstream|ours FILTER...
    local side=$1
    shift
    local tree=$work/nova-$side venv=$work/venv-$side
    local log=$work/$side.log
    local filters=("$@")
    [ ${#filters[@]} -eq 0 ] && filters=("$selection")
    if [ "${filters[0]:0:1}" = @ ]; then
        # @FILE: the filters in FILE, one a line ('#' starts a comment).
        mapfile -t filters < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' \
                                   "${filters[0]:1}")
    fi
    echo "== $side: stestr run --concurrency $workers ${filters[*]}"
    local start end status=0
    start=$(date +%s)
    (cd "$tree" && rm -rf .stestr &&
     PATH=$venv/bin:$PATH OS_NOVA_DISABLE_EVENTLET_PATCHING=False \
     NOVA_RAISE_ON_GREENLET_LEAK=True \
     "$venv/bin/stestr" --test-path=./nova/tests/functional run \
         --concurrency "$workers" "${filters[@]}") > "$log" 2>&1 \
        || status=$?
    end=$(date +%s)
    grep -E '^ - (Passed|Failed|Skipped|Expected Fail|Unexpected Success)' \
        "$log" || tail -20 "$log"
    echo "$side: wall time $((end - start)) s, stestr exit $status, log $log"
    return $status
}

action=${1:-both}
[ $# -gt 0 ] && shift
case $action in
    setup) setup ;;
    setup-ours) setup_ours ;;
    upstream|ours) setup; run "$action" "$@" ;;
    both)
        setup
        rc=0
        run upstream "$@" || rc=1
        run ours "$@" || rc=1
        exit $rc ;;
    together)
        setup
        run upstream "$@" > "$work/upstream.summary" &
        upstream_pid=$!
        run ours "$@" > "$work/ours.summary" &
        ours_pid=$!
        rc=0
        wait $upstream_pid || rc=1
        wait $ours_pid || rc=1
        cat "$work/upstream.summary" "$work/ours.summary"
        exit $rc ;;
    *) sed -n 2,29p "$0"; exit 2 ;;
esac
