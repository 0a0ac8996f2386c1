#!/usr/bin/env bash
# Install osc-placement, start the embedded Placement server on SQLite, and
# drive a short operator scenario through the real `openstack` client,
# printing each command and the client's own output. Stops the server at
# the end. Needs only Python 3.11+.
#
#   bash tools/demo.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tools/venv.sh"
venv=${OSC_PLACEMENT_VENV:-$top/.venv}
export PATH="$venv/bin:$PATH"

state=$(mktemp -d)
port=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
endpoint="http://127.0.0.1:$port"

python -m osc_placement.server --database-connection "sqlite:///$state/placement.sqlite" \
    --host 127.0.0.1 --port "$port" > "$state/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$state"' EXIT

for _ in $(seq 100); do
    python -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=1)" "$endpoint/" 2>/dev/null && break
    kill -0 $server 2>/dev/null || { cat "$state/server.log"; exit 1; }
    sleep 0.2
done
echo "# Embedded Placement server on $endpoint (SQLite in $state)"

osc() {
    echo
    echo "\$ openstack $*"
    openstack --os-auth-type admin_token --os-token admin \
        --os-endpoint "$endpoint" "$@"
}
value() {
    openstack --os-auth-type admin_token --os-token admin \
        --os-endpoint "$endpoint" "$@" -f value
}

# A compute host with two NUMA cells and a GPU.
osc resource provider create compute-1
host=$(value resource provider show "$(value resource provider list --name compute-1 -c uuid)" -c uuid)
osc resource provider create compute-1-numa0 --parent-provider "$host"
osc resource provider create compute-1-numa1 --parent-provider "$host"
osc resource provider create compute-1-gpu --parent-provider "$host"
numa0=$(value resource provider list --name compute-1-numa0 -c uuid)
gpu=$(value resource provider list --name compute-1-gpu -c uuid)

osc resource provider inventory set "$host" --resource DISK_GB=2000
for cell in compute-1-numa0 compute-1-numa1; do
    osc resource provider inventory set "$(value resource provider list --name $cell -c uuid)" \
        --resource VCPU=32 --resource VCPU:allocation_ratio=4.0 --resource MEMORY_MB=131072
done
osc resource provider inventory set "$gpu" --resource VGPU=8

osc trait create CUSTOM_DEMO_RACK_1
osc resource provider trait set "$host" --trait HW_CPU_X86_AVX2 --trait CUSTOM_DEMO_RACK_1
aggregate=$(python -c 'import uuid; print(uuid.uuid4())')
generation=$(value resource provider show "$host" -c generation)
osc resource provider aggregate set "$host" --aggregate "$aggregate" --generation "$generation"

osc resource provider list
osc resource provider list --in-tree "$host" --required HW_CPU_X86_AVX2
osc resource provider inventory list "$numa0"
osc resource provider trait list "$host"
osc resource provider aggregate list "$host"
osc resource provider set "$host" --name compute-1.example.org
osc resource provider show "$host"

# Schedule an instance: ask for candidates, claim one, look at usage.
osc allocation candidate list --resource VCPU=2 --resource MEMORY_MB=4096 \
    --resource DISK_GB=20 --limit 3
instance=$(python -c 'import uuid; print(uuid.uuid4())')
project=$(python -c 'import uuid; print(uuid.uuid4())')
user=$(python -c 'import uuid; print(uuid.uuid4())')
osc resource provider allocation set "$instance" \
    --allocation "rp=$numa0,VCPU=2,MEMORY_MB=4096" \
    --allocation "rp=$host,DISK_GB=20" \
    --project-id "$project" --user-id "$user"
osc resource provider allocation show "$instance"
osc resource provider usage show "$numa0"
osc resource usage show "$project"
osc resource provider inventory list "$numa0"

# A provider in use cannot be deleted; freeing it first makes it possible.
osc resource provider delete "$numa0" || true
osc resource provider allocation delete "$instance"
osc resource provider delete "$numa0"
osc resource provider list
