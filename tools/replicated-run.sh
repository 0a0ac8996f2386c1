#!/usr/bin/env bash
# Several API hosts on one replicated database, in one command:
#
#   tools/replicated-run.sh galera [--seconds 30] [--threads 16] [--keep]
#   tools/replicated-run.sh postgresql [--seconds 30] [--pg-url URL]
#
# galera: a three-node MariaDB Galera cluster on loopback ports
# (tools/galera-cluster.sh), a fresh database on it, one placement-server
# (2 workers) per node. postgresql: a fresh database on 127.0.0.1:5432
# and two placement-server processes on it. The schema comes from
# placement-manage db sync; then benchmarks/replicated_writes.py runs its
# writers over the servers and checks every row. Everything it started is
# stopped and its databases dropped at the end; --keep keeps the working
# directory (placement.conf and log of each server). Prints one table;
# exits non-zero on any violation or 5xx answer.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash tools/venv.sh >&2
venv=${OSC_PLACEMENT_VENV:-$top/.venv}
exec "$venv/bin/python" -m benchmarks.replicated_run "$@"
