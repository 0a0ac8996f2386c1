#!/usr/bin/env bash
# A three-node MariaDB Galera cluster on this machine's loopback, for the
# replicated-writes run and its test.
#
#   tools/galera-cluster.sh start DIR    create (first time) and start 3 nodes
#   tools/galera-cluster.sh status DIR   the cluster size each node reports
#   tools/galera-cluster.sh stop DIR     stop every node (nothing running: ok)
#
# Each node lives in DIR/nodeN (datadir, socket, pid, error log, my.cnf)
# and runs as the current user. Ports (change them with the environment):
#   client  GALERA_CLIENT_PORT + 0..2   (default 13306-13308)
#   group   GALERA_GROUP_PORT + 0..2    (default 14567-14569, replication)
#   IST     group port + 10             (incremental state transfer)
#   SST     group port + 20             (full state transfer, rsync)
# The ports are written to DIR/ports so that stop and status find them.
# The nodes read only their own my.cnf (--defaults-file): the system
# MariaDB on 3306, its /etc/mysql configuration and its socket are never
# touched. Connect as root without a password over 127.0.0.1.
set -euo pipefail

MARIADBD=${MARIADBD:-/usr/sbin/mariadbd}
GALERA_PROVIDER=${GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}
NODES="1 2 3"
START_TIMEOUT=${GALERA_START_TIMEOUT:-120}

usage() {
    echo "usage: $0 start|stop|status DIR" >&2
    exit 2
}

[ $# -eq 2 ] || usage
action=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)

client_port() { echo $((CLIENT_BASE + $1 - 1)); }
group_port() { echo $((GROUP_BASE + $1 - 1)); }

load_ports() {
    if [ -f "$dir/ports" ]; then
        # shellcheck disable=SC1091
        . "$dir/ports"
    else
        CLIENT_BASE=${GALERA_CLIENT_PORT:-13306}
        GROUP_BASE=${GALERA_GROUP_PORT:-14567}
    fi
}

# rsync is the simplest state transfer and needs no account on the donor;
# mariabackup is the fallback when rsync is not installed.
sst_method() {
    if command -v rsync >/dev/null; then
        echo rsync
    elif command -v mariabackup >/dev/null; then
        echo mariabackup
    else
        echo "neither rsync nor mariabackup is installed: a joining node" \
             "could not receive the cluster's data" >&2
        exit 1
    fi
}

# As root, the joining node's rsync daemon (started by the state transfer
# script) drops to the user "nobody" (rsyncd's default uid), which then
# cannot write a root-owned datadir: SST fails with "mkdir ... Permission
# denied". Give the empty datadirs of nodes 2 and 3 to nobody, and let
# nobody through DIR; mariadbd, as root, uses the files it receives.
datadir_for_root_rsync() {
    local n=$1 node=$dir/node$1
    [ "$(id -u)" -eq 0 ] && [ "$n" -ne 1 ] || return 0
    [ "$(sst_method)" = rsync ] || return 0
    chmod o+x "$dir" "$node"
    [ -d "$node/data/mysql" ] || chown nobody "$node/data"
}

# mariadbd refuses to run as root unless told which user to be.
user_option() {
    if [ "$(id -u)" -eq 0 ]; then
        echo "user=root"
    fi
}

write_config() {
    local n=$1 node=$dir/node$1 gport
    gport=$(group_port "$n")
    local members=127.0.0.1:$(group_port 1),127.0.0.1:$(group_port 2),127.0.0.1:$(group_port 3)
    cat > "$node/my.cnf" <<EOF
[mysqld]
$(user_option)
datadir = $node/data
socket = $node/mysqld.sock
pid-file = $node/mysqld.pid
log-error = $node/error.log
port = $(client_port "$n")
bind-address = 127.0.0.1
skip-name-resolve
max_connections = 300
innodb_buffer_pool_size = 64M
innodb_log_file_size = 32M
# Durability comes from the other nodes here; flushing each commit to
# disk would only slow a test machine.
innodb_flush_log_at_trx_commit = 0
# Galera replicates row events and cannot certify interleaved
# auto-increment locks: both settings are required.
binlog_format = ROW
innodb_autoinc_lock_mode = 2
default_storage_engine = InnoDB
# With binary logging on, MariaDB refuses CREATE TRIGGER / FUNCTION from
# an account without SUPER unless this is set; placement's migrations
# create triggers as an ordinary account.
log_bin_trust_function_creators = 1
wsrep_on = ON
wsrep_provider = $GALERA_PROVIDER
wsrep_cluster_name = placement_test_$(basename "$dir")
wsrep_cluster_address = gcomm://$members
wsrep_node_name = node$n
wsrep_node_address = 127.0.0.1:$gport
wsrep_provider_options = "base_host=127.0.0.1;base_port=$gport;ist.recv_addr=127.0.0.1:$((gport + 10));gcache.size=64M"
wsrep_sst_receive_address = 127.0.0.1:$((gport + 20))
wsrep_sst_method = $(sst_method)
EOF
}

# The system tables, created once on node 1; nodes 2 and 3 start from
# an empty datadir and receive node 1's whole state as they join.
initialise_node() {
    local n=$1 node=$dir/node$1
    mkdir -p "$node/data"
    write_config "$n"
    datadir_for_root_rsync "$n"
    if [ "$n" -eq 1 ] && [ ! -d "$node/data/mysql" ]; then
        mariadb-install-db --defaults-file="$node/my.cnf" \
            --auth-root-authentication-method=normal \
            --skip-test-db >"$node/install.log" 2>&1 || {
            cat "$node/install.log" >&2
            exit 1
        }
    fi
}

node_running() {
    local pidfile=$dir/node$1/mysqld.pid
    [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

query() {
    mariadb --no-defaults -h 127.0.0.1 -P "$(client_port "$1")" -u root \
        -N -B -e "$2" 2>/dev/null
}

wsrep_status() {
    query "$1" "SHOW STATUS LIKE '$2'" | awk '{print $2}'
}

# Synced and seeing all three members: ready for writes.
# A node that exits (a port taken, a failed state transfer) fails at once.
wait_node_synced() {
    local n=$1 pid=$2 deadline=$((SECONDS + START_TIMEOUT))
    while [ $SECONDS -lt $deadline ]; do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "node $n exited while starting; its log:" >&2
            tail -30 "$dir/node$n/error.log" >&2
            return 1
        fi
        if [ "$(wsrep_status "$n" wsrep_local_state_comment)" = Synced ] \
            && [ "$(wsrep_status "$n" wsrep_ready)" = ON ]; then
            return 0
        fi
        sleep 1
    done
    echo "node $n did not reach Synced in ${START_TIMEOUT}s; its log:" >&2
    tail -30 "$dir/node$n/error.log" >&2
    return 1
}

start_node() {
    local n=$1 extra=${2:-}
    if node_running "$n"; then
        return 0
    fi
    # shellcheck disable=SC2086
    setsid "$MARIADBD" --defaults-file="$dir/node$n/my.cnf" $extra \
        >>"$dir/node$n/stdout.log" 2>&1 < /dev/null &
    wait_node_synced "$n" $!
}

# Node 1 creates the cluster, unless another node is already running
# (a restart of one node): then it joins like the others.
bootstrap_option() {
    local n
    for n in $NODES; do
        node_running "$n" && return 0
    done
    echo --wsrep-new-cluster
}

start() {
    load_ports
    printf 'CLIENT_BASE=%s\nGROUP_BASE=%s\n' "$CLIENT_BASE" "$GROUP_BASE" \
        > "$dir/ports"
    local n
    for n in $NODES; do
        initialise_node "$n"
    done
    start_node 1 "$(bootstrap_option)"
    start_node 2
    start_node 3
    local size
    size=$(wsrep_status 1 wsrep_cluster_size)
    if [ "$size" != 3 ]; then
        echo "cluster size is ${size:-unknown}, not 3" >&2
        exit 1
    fi
    echo "galera cluster of 3 on 127.0.0.1 ports" \
        "$(client_port 1) $(client_port 2) $(client_port 3)"
}

stop_node() {
    local n=$1 pidfile=$dir/node$1/mysqld.pid pid
    node_running "$n" || return 0
    pid=$(cat "$pidfile")
    kill -TERM "$pid"
    local deadline=$((SECONDS + 60))
    while kill -0 "$pid" 2>/dev/null; do
        if [ $SECONDS -ge $deadline ]; then
            kill -KILL "$pid" 2>/dev/null || true
            break
        fi
        sleep 0.5
    done
}

stop() {
    load_ports
    local n
    # The joiners first, the first node last: it then holds the latest
    # state and can bootstrap the cluster again.
    for n in 3 2 1; do
        stop_node "$n"
    done
    # A clean shutdown leaves safe_to_bootstrap on the last node; make
    # node 1 bootstrappable whatever order the nodes went down in.
    if [ -f "$dir/node1/data/grastate.dat" ]; then
        sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' \
            "$dir/node1/data/grastate.dat"
    fi
    echo "galera cluster in $dir stopped"
}

status() {
    load_ports
    local n rc=0
    for n in $NODES; do
        if node_running "$n"; then
            echo "node $n port $(client_port "$n"):" \
                "$(wsrep_status "$n" wsrep_local_state_comment)," \
                "cluster size $(wsrep_status "$n" wsrep_cluster_size)"
        else
            echo "node $n port $(client_port "$n"): not running"
            rc=3
        fi
    done
    return $rc
}

case "$action" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) usage ;;
esac
