#!/usr/bin/env bash
# Start the embedded Placement server on SQLite, build a small cloud with
# the standalone `placement` command, and show the commands this client
# adds: tree show, capacity list --fit, allocation candidate explain (a
# host that is not a candidate, then the funnel) and consumer list, of a
# host and of the whole cloud. Each command is printed before its output;
# the server is stopped at the end.
#
#   bash tools/demo.sh
#
# Installs only what it runs, osc-placement with the server extra, into a
# virtualenv of its own (${OSC_PLACEMENT_DEMO_VENV:-.venv-demo}); a second
# run reuses it. Needs only Python 3.11+ ($PYTHON, default python3).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
venv=${OSC_PLACEMENT_DEMO_VENV:-$top/.venv-demo}
python=${PYTHON:-python3}

install_demo_venv() {
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    local stamp="$venv/.osc-placement-demo-installed" want
    want=$(cat "$top/setup.cfg" "$top/requirements.txt" | sha256sum | cut -d' ' -f1)
    [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && return
    echo "# Installing osc-placement[server] into $venv"
    # pbr needs a version; a shallow or tag-less clone has none. Not
    # byte-compiled here: the demo imports a small part of what it installs.
    if ! PBR_VERSION=${PBR_VERSION:-0.0.1} "$venv/bin/python" -m pip install \
            --disable-pip-version-check --no-compile -e "$top[server]" \
            > "$venv/install.log" 2>&1; then
        tail -30 "$venv/install.log"
        echo "Installation failed; the whole log is in $venv/install.log" >&2
        exit 1
    fi
    echo "$want" > "$stamp"
}

install_demo_venv
export PATH="$venv/bin:$PATH"
# The first run byte-compiles what the demo imports, for the next ones.
unset PYTHONDONTWRITEBYTECODE

state=$(mktemp -d)
port=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
endpoint="http://127.0.0.1:$port"
# A configuration file of its own, so no /etc/placement or ~/.placement
# file changes what the demo runs.
cat > "$state/placement.conf" <<EOF
[api]
auth_strategy = noauth2
[placement_database]
connection = sqlite:///$state/placement.sqlite
sync_on_startup = true
EOF
placement-server --config-file "$state/placement.conf" \
    --host 127.0.0.1 --port "$port" > "$state/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$state"' EXIT

for _ in $(seq 150); do
    python -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=1)" "$endpoint/" 2>/dev/null && break
    kill -0 $server 2>/dev/null || { cat "$state/server.log"; exit 1; }
    sleep 0.2
done

# `placement` finds the server from these, as `openstack` would; nothing
# else from the caller's environment (OS_CLOUD, OS_AUTH_URL...) applies.
for name in $(env | sed -n 's/^\(OS_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$name"; done
export OS_AUTH_TYPE=admin_token OS_TOKEN=admin OS_ENDPOINT=$endpoint

show() {
    echo "\$ placement $*"
    placement "$@"
}
# explain exits 3 when no host named is a candidate: the answer, here.
show_explain() {
    echo "\$ placement $*"
    placement "$@" || [ $? -eq 3 ]
}
# A set-up step: the command, without its output.
quietly() {
    echo "\$ placement $*"
    placement "$@" > /dev/null
}
# Create a provider (name, then options); its UUID goes in $uuid.
create() {
    echo "\$ placement resource provider create $*"
    uuid=$(placement resource provider create "$@" -f value -c uuid)
}

read -r rack project user instance1 instance2 instance3 migration < <(
    python -c 'import uuid; print(*(uuid.uuid4() for _ in range(7)))')

cat <<EOF
# The embedded Placement server is on $endpoint (SQLite in $state).
#   export OS_AUTH_TYPE=admin_token OS_TOKEN=admin OS_ENDPOINT=$endpoint
#
# A small cloud: compute-1 with its CPUs and memory on two NUMA children,
# compute-2 and compute-3 (disabled, as Nova marks a disabled compute
# service), all three in the aggregate of the shared storage pool
# shared-disk-a; compute-4, outside it, has no disk at all.

EOF
# A new provider's generation is 0: it joins the aggregate first.
create compute-1
compute1=$uuid
quietly resource provider aggregate set "$compute1" --aggregate "$rack" --generation 0
quietly resource provider inventory set "$compute1" --resource DISK_GB=2000
for cell in 0 1; do
    create "compute-1-numa$cell" --parent-provider "$compute1"
    [ "$cell" = 1 ] || numa0=$uuid
    quietly resource provider inventory set "$uuid" \
        --resource VCPU=16 --resource MEMORY_MB=65536
done
for host in compute-2 compute-3 compute-4; do
    create "$host"
    [ "$host" != compute-2 ] || compute2=$uuid
    [ "$host" != compute-3 ] || compute3=$uuid
    [ "$host" = compute-4 ] ||
        quietly resource provider aggregate set "$uuid" --aggregate "$rack" --generation 0
    quietly resource provider inventory set "$uuid" \
        --resource VCPU=16 --resource MEMORY_MB=65536
done
quietly resource provider trait set "$compute3" --trait COMPUTE_STATUS_DISABLED
create shared-disk-a
disk=$uuid
quietly resource provider aggregate set "$disk" --aggregate "$rack" --generation 0
quietly resource provider inventory set "$disk" --resource DISK_GB=10000
quietly resource provider trait set "$disk" --trait MISC_SHARES_VIA_AGGREGATE

echo
echo "# Three instances and a migration take their share."
allocate() {
    quietly resource provider allocation set "$@" \
        --project-id "$project" --user-id "$user"
}
allocate "$instance1" --allocation "rp=$numa0,VCPU=8,MEMORY_MB=16384" \
    --allocation "rp=$compute1,DISK_GB=80" --consumer-type INSTANCE
allocate "$instance2" --allocation "rp=$compute2,VCPU=8,MEMORY_MB=16384" \
    --allocation "rp=$disk,DISK_GB=80" --consumer-type INSTANCE
allocate "$instance3" --allocation "rp=$compute2,VCPU=4,MEMORY_MB=8192" \
    --allocation "rp=$disk,DISK_GB=40" --consumer-type INSTANCE
allocate "$migration" --allocation "rp=$compute2,VCPU=2,MEMORY_MB=4096" \
    --allocation "rp=$disk,DISK_GB=40" --consumer-type MIGRATION

flavor=(--resource VCPU=4 --resource MEMORY_MB=8192 --resource DISK_GB=40)

echo
echo "# A host's whole tree, with used/capacity per class."
show resource provider tree show compute-1

echo
echo "# How many more instances of 4 VCPU, 8 GiB and 40 GB fit, per host."
show resource provider capacity list --fit VCPU=4,MEMORY_MB=8192,DISK_GB=40

echo
echo "# The same count as Nova would place: disabled hosts left out."
show resource provider capacity list --fit VCPU=4,MEMORY_MB=8192,DISK_GB=40 \
    --forbidden COMPUTE_STATUS_DISABLED

echo
echo "# Why are compute-2, compute-3 and compute-4 not candidates for that"
echo "# flavor, asked as Nova asks (without disabled hosts)?"
show_explain allocation candidate explain "${flavor[@]}" \
    --forbidden COMPUTE_STATUS_DISABLED \
    --resource-provider compute-2 --resource-provider compute-3 \
    --resource-provider compute-4

echo
echo "# The same request over the whole cloud: what each criterion leaves."
show allocation candidate explain "${flavor[@]}" \
    --forbidden COMPUTE_STATUS_DISABLED

echo
echo "# Who holds compute-2 (a host that will not empty or delete)."
show resource provider consumer list compute-2

echo
echo "# What migrations left behind anywhere in the cloud, no host named."
show resource provider consumer list --consumer-type migration
