#!/usr/bin/env bash
# Run upstream osc-placement's own functional suite with OUR client.
#
#   bash tools/upstream-client-functional.sh [stestr filter...]
#
# Upstream's tests (osc-placement 4.9.1, taken from its source release on
# PyPI) drive the real `openstack` shell against upstream Placement 16.0.0,
# served in process by upstream's PlacementFixture. Here the client those
# tests import is this checkout's osc_placement, so every command, option,
# column, exit code and error text they assert is checked on ours.
#
# Everything lives in a virtualenv of its own
# (${OSC_PLACEMENT_CLIENT_FUNCTIONAL_VENV:-.venv-upstream-client}): upstream
# Placement with its pinned dependencies, oslotest and stestr, and this
# checkout installed without dependencies. Upstream's test files are copied
# into a work directory as the package `upstream_client_tests`, since their
# own package name is ours.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
venv=${OSC_PLACEMENT_CLIENT_FUNCTIONAL_VENV:-$top/.venv-upstream-client}
python=${PYTHON:-python3}
constraints="$top/tests/compat/upstream-constraints.txt"
client_version=4.9.1

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
stamp="$venv/.installed"
want=$(cat "$constraints" "$top/requirements.txt" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "Installing upstream Placement 16.0.0 and the test tools into $venv"
    "$venv/bin/python" -m pip install --quiet -c "$constraints" \
        openstack-placement==16.0.0 python-openstackclient oslotest stestr \
        wsgi-intercept -r "$top/requirements.txt"
    echo "$want" > "$stamp"
fi
PBR_VERSION=${PBR_VERSION:-0.0.1} "$venv/bin/python" -m pip install --quiet \
    --no-deps -e "$top"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$venv/bin/python" -m pip download --quiet --no-deps --no-binary :all: \
    -d "$work" "osc-placement==$client_version"
tar xzf "$work"/osc_placement-$client_version.tar.gz -C "$work"
mkdir -p "$work/run/upstream_client_tests"
cp -r "$work/osc_placement-$client_version/osc_placement/tests/functional" \
    "$work/run/upstream_client_tests/"
touch "$work/run/upstream_client_tests/__init__.py"
sed -i 's/osc_placement\.tests\.functional/upstream_client_tests.functional/' \
    "$work"/run/upstream_client_tests/functional/*.py
# test_plugin runs `openstack` from PATH: this venv's, with our plugin.
export PATH="$venv/bin:$PATH"
# Upstream's aggregate inventory tests replace classes across an aggregate
# without confirming and read upstream's dry-run rows; our client asks
# first and shows each change unless told to behave as upstream's.
export OSC_PLACEMENT_BULK_EDITS=upstream
# One request at a time, as upstream's client sends them: upstream's
# PlacementFixture serves an in-memory SQLite database in the calling
# thread, and concurrent writes from our client's threads can undo each
# other there (a lost inventory update, seen once in CI).
export OSC_PLACEMENT_CONCURRENCY=1
cd "$work/run"
"$venv/bin/stestr" --test-path ./upstream_client_tests/functional \
    --top-dir ./ run "$@"
