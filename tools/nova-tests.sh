#!/usr/bin/env bash
# Run tests/nova: our tests inside Nova's own functional test world (its
# API, conductor, scheduler and fake-driver computes in one process, with
# osc_placement.server.fixture as its Placement), in the Nova virtualenv
# tools/nova-functional.sh builds with our fixture (venv-ours only; the
# upstream one is not needed). Prints stestr's summary and the wall time.
#
#   bash tools/nova-tests.sh [filter...]
#
# Filters are stestr's. Environment: NOVA_FUNCTIONAL_DIR (as for
# tools/nova-functional.sh), NOVA_TESTS_WORKERS (stestr concurrency,
# default 2).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
work=${NOVA_FUNCTIONAL_DIR:-$top/.nova-functional}
workers=${NOVA_TESTS_WORKERS:-2}

bash "$top/tools/nova-functional.sh" setup-ours

cd "$top"
start=$(date +%s)
status=0
# Nova's functional base class expects eventlet's patching, as its own
# tox environment sets it.
PATH=$work/venv-ours/bin:$PATH PYTHONPATH=$top \
    OS_NOVA_DISABLE_EVENTLET_PATCHING=False \
    "$work/venv-ours/bin/stestr" --test-path ./tests/nova --top-dir ./ \
    run --concurrency "$workers" "$@" || status=$?
end=$(date +%s)
echo "nova: wall time $((end - start)) s, stestr exit $status"
exit $status
