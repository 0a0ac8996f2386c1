#!/usr/bin/env bash
# Run openstacksdk's own Placement functional tests against OUR server.
#
#   bash tools/openstacksdk-functional.sh [stestr filter...]
#
# openstacksdk (openstack.placement.v1) is how Watcher and many tools talk
# to Placement. Its functional tests under
# openstack/tests/functional/placement/v1 are taken from the source release
# on PyPI of exactly the version installed, and run with stestr against
# this checkout's server, started here on a SQLite file behind Keystone.
#
# The SDK and the test tools live in a virtualenv of their own
# (${OSC_PLACEMENT_OPENSTACKSDK_VENV:-.venv-openstacksdk}); the server runs
# from the project's virtualenv (${OSC_PLACEMENT_VENV:-.venv}, see
# tools/venv.sh) with this checkout first on the path. The release is
# pinned, so that a new one cannot turn CI red overnight; set
# OSC_PLACEMENT_OPENSTACKSDK_VERSION to try another.
#
# Three of the tests read the caller's user and project ids from its
# Keystone token (current_user_id), which only a Keystone identity plugin
# answers, and the tests' base class finds services in the catalog. So a
# real Keystone (from PyPI, in the same virtualenv, on SQLite with fernet
# tokens, served by gunicorn) fronts our server here, in
# auth_strategy = keystone, with our server in its catalog as the
# placement service. The four clouds the base class opens (devstack,
# devstack-alt, devstack-admin, devstack-system-admin) are all Keystone's
# bootstrap admin in its admin project; the placement tests use only the
# operator one. The clouds say they have no compute or image service, so
# the base class picks no flavor or image, and no test skips itself for
# want of placement. Two tests expect what devstack has: the allocation
# candidate test a compute node with VCPU inventory, the usage test an
# instance of the admin project. Without one, openstacksdk reads the
# empty "usages" of microversion 1.38 as one pre-1.38 entry without a
# consumer type, and the test fails on upstream Placement 16.0.0 as on
# ours. Both are made before the run.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
venv=${OSC_PLACEMENT_OPENSTACKSDK_VENV:-$top/.venv-openstacksdk}
server_venv=${OSC_PLACEMENT_VENV:-$top/.venv}
python=${PYTHON:-python3}
sdk_version=${OSC_PLACEMENT_OPENSTACKSDK_VERSION:-4.22.0}
keystone_version=30.0.0
password=secret-$RANDOM$RANDOM

install_sdk_venv() {
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    local want=("openstacksdk${sdk_version:+==$sdk_version}" oslotest stestr
                "keystone==$keystone_version" gunicorn)
    if [ "$(cat "$venv/.installed" 2>/dev/null)" != "${want[*]}" ]; then
        echo "Installing ${want[*]} into $venv"
        "$venv/bin/python" -m pip install --quiet --upgrade "${want[@]}"
        echo "${want[*]}" > "$venv/.installed"
    fi
}

installed_sdk_version() {
    "$venv/bin/python" -c 'from importlib import metadata
print(metadata.version("openstacksdk"))'
}

# The tests of the installed release, copied as the package `sdk_tests`
# (their own package, openstack.tests, would shadow the installed SDK or
# mix with it) and rewritten to import themselves from there.
fetch_sdk_tests() {
    local version=$1 dest=$2
    "$venv/bin/python" -m pip download --quiet --no-deps --no-binary :all: \
        -d "$work" "openstacksdk==$version"
    tar xzf "$work/openstacksdk-$version.tar.gz" -C "$work"
    local src="$work/openstacksdk-$version/openstack/tests"
    mkdir -p "$dest/sdk_tests/functional"
    cp "$src/__init__.py" "$src/base.py" "$src/fixtures.py" \
        "$dest/sdk_tests/"
    cp "$src/functional/__init__.py" "$src/functional/base.py" \
        "$dest/sdk_tests/functional/"
    cp -r "$src/functional/placement" "$dest/sdk_tests/functional/"
    find "$dest/sdk_tests" -name '*.py' -exec \
        sed -i 's/openstack\.tests\b/sdk_tests/g' {} +
}

free_port() {
    "$venv/bin/python" -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Wait until $1 answers HTTP (any status) while process $2 lives.
wait_for() {
    local url=$1 pid=$2 log=$3 _
    for _ in $(seq 300); do
        if "$venv/bin/python" -c 'import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(sys.argv[1], timeout=1)
except urllib.error.HTTPError:
    pass' "$url" 2>/dev/null; then
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    tail -40 "$log"
    echo "$url did not answer" >&2
    return 1
}

start_keystone() {
    local port=$1 dir="$work/keystone"
    mkdir -p "$dir"
    cat > "$dir/keystone.conf" <<CONF
[database]
connection = sqlite:///$dir/keystone.sqlite
[fernet_tokens]
key_repository = $dir/fernet-keys
[fernet_receipts]
key_repository = $dir/fernet-receipts
[credential]
key_repository = $dir/credential-keys
CONF
    local manage=("$venv/bin/keystone-manage"
                  --config-file "$dir/keystone.conf")
    local owner=(--keystone-user "$(id -un)" --keystone-group "$(id -gn)")
    {
        "${manage[@]}" db_sync
        "${manage[@]}" fernet_setup "${owner[@]}"
        "${manage[@]}" credential_setup "${owner[@]}"
        "${manage[@]}" bootstrap --bootstrap-password "$password" \
            --bootstrap-public-url "http://127.0.0.1:$port/v3" \
            --bootstrap-internal-url "http://127.0.0.1:$port/v3" \
            --bootstrap-region-id RegionOne
    } > "$dir/setup.log" 2>&1 || { tail -40 "$dir/setup.log"; return 1; }
    # Keystone parses the process's own arguments as its options, so
    # gunicorn takes its settings from ./gunicorn.conf.py instead.
    cat > "$dir/gunicorn.conf.py" <<CONF
wsgi_app = 'keystone.wsgi.api:application'
bind = '127.0.0.1:$port'
workers = 1
control_socket_disable = True
CONF
    (cd "$dir" && OS_KEYSTONE_CONFIG_FILES="$dir/keystone.conf" \
        exec "$venv/bin/gunicorn" > "$dir/server.log" 2>&1) &
    keystone=$!
    wait_for "http://127.0.0.1:$port/v3" "$keystone" "$dir/server.log"
}

start_placement() {
    local port=$1 auth_url=$2
    cat > "$work/placement.conf" <<CONF
[api]
auth_strategy = keystone
[keystone_authtoken]
www_authenticate_uri = $auth_url
auth_url = $auth_url
auth_type = password
username = admin
password = $password
project_name = admin
user_domain_name = Default
project_domain_name = Default
[placement_database]
connection = sqlite:///$work/placement.sqlite
sync_on_startup = true
CONF
    PYTHONPATH="$top${PYTHONPATH:+:$PYTHONPATH}" \
        "$server_venv/bin/placement-server" \
        --config-file "$work/placement.conf" \
        --host 127.0.0.1 --port "$port" > "$work/placement.log" 2>&1 &
    placement=$!
    wait_for "http://127.0.0.1:$port/" "$placement" "$work/placement.log"
}

write_clouds_yaml() {
    local auth_url=$1 name
    echo "clouds:" > "$work/clouds.yaml"
    for name in devstack devstack-alt devstack-admin devstack-system-admin
    do
        cat >> "$work/clouds.yaml" <<CONF
  $name:
    auth:
      auth_url: $auth_url
      username: admin
      password: $password
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    has_compute: false
    has_image: false
CONF
    done
}

# Our server in Keystone's catalog, and what devstack would have: a
# compute node (a provider with VCPU inventory) running an instance of the
# admin project.
register_placement_and_compute_node() {
    "$venv/bin/python" - "$1" <<'PY' && return
import sys
import uuid

import openstack

conn = openstack.connect(cloud='devstack-admin')
service = conn.identity.create_service(type='placement', name='placement')
conn.identity.create_endpoint(
    service_id=service.id, interface='public', url=sys.argv[1],
    region_id='RegionOne')
# A new token, whose catalog holds the endpoint just added.
conn = openstack.connect(cloud='devstack-admin')
node = conn.placement.create_resource_provider(name='compute-node')
conn.placement.create_resource_provider_inventory(
    node, resource_class='VCPU', total=8)
conn.placement.update_allocation(
    str(uuid.uuid4()), allocations={node.id: {'resources': {'VCPU': 1}}},
    project_id=conn.current_project_id, user_id=conn.current_user_id,
    consumer_generation=None, consumer_type='INSTANCE')
PY
    tail -40 "$work/placement.log"
    return 1
}

stop_servers() {
    local pid
    for pid in ${placement:-} ${keystone:-}; do
        kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    done
    rm -rf "$work"
}

install_sdk_venv
version=$(installed_sdk_version)
echo "openstacksdk $version's Placement functional tests, our server"
work=$(mktemp -d)
trap stop_servers EXIT
fetch_sdk_tests "$version" "$work/run"

# Only the clouds.yaml written here: nothing from the caller's environment
# (OS_CLOUD, OS_AUTH_URL...) or ~/.config/openstack may choose the cloud.
for name in $(env | sed -n 's/^\(OS_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$name"
done
export OS_CLIENT_CONFIG_FILE="$work/clouds.yaml"
keystone_port=$(free_port)
start_keystone "$keystone_port"
placement_port=$(free_port)
start_placement "$placement_port" "http://127.0.0.1:$keystone_port/v3"
write_clouds_yaml "http://127.0.0.1:$keystone_port/v3"
register_placement_and_compute_node "http://127.0.0.1:$placement_port"

export OS_CLOUD=devstack-admin
cd "$work/run"
# One test at a time, as openstacksdk's own functional job runs them.
"$venv/bin/stestr" --test-path ./sdk_tests/functional/placement \
    --top-dir ./ run --serial "$@"
