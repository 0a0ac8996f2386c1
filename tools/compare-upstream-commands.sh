#!/usr/bin/env bash
# Run placement-manage and placement-status of upstream Placement 16.0.0
# and ours side by side on the same inputs and compare exit codes and
# output. Upstream lives in its own venv (never a dependency of ours),
# the one tools/upstream-venv.sh builds:
#
#   bash tools/upstream-venv.sh
#   tools/compare-upstream-commands.sh
#
# Each side gets its own SQLite database. Differences that are expected
# are normalised before comparing: the version string, and Python
# tracebacks (upstream lets oslo.config's errors escape as tracebacks;
# ours prints the same message as one line; both exit 1). Exits non-zero
# when anything else differs.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ours=${OSC_PLACEMENT_VENV:-$top/.venv}/bin
theirs=${OSC_PLACEMENT_UPSTREAM_VENV:-$top/.venv-upstream}/bin
[ -x "$theirs/placement-manage" ] || { echo "no upstream venv at $theirs"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ours" "$work/theirs" "$work/home"
echo '{}' > "$work/policy.json"
for side in ours theirs; do
    printf '[placement_database]\nconnection = sqlite:///%s/%s/p.db\n' "$work" "$side" \
        > "$work/$side/placement.conf"
    cp "$work/$side/placement.conf" "$work/$side/json.conf"
    printf '[oslo_policy]\npolicy_file = %s/policy.json\n' "$work" >> "$work/$side/json.conf"
done

cases=(
    "placement-manage db version"
    "placement-manage --config-file CONF db version"
    "placement-manage --config-file CONF db sync"
    "placement-manage --config-file CONF db version"
    "placement-manage --config-file CONF db stamp 422ece571366"
    "placement-manage --config-file CONF db version"
    "placement-manage --config-file CONF db stamp head"
    "placement-manage --config-file CONF db version"
    "placement-manage --config-file CONF db stamp pony"
    "placement-manage --config-file CONF db sync"
    "placement-manage --config-file CONF db online_data_migrations"
    "placement-manage --config-file CONF db online_data_migrations --max-count 0"
    "placement-manage --config-file CONF db online_data_migrations --max-count pony"
    "placement-manage --config-file CONF db online_data_migrations --max-count 5"
    "placement-manage --config-file CONF db"
    "placement-manage --config-file CONF db stamp"
    "placement-manage --config-file CONF db pony"
    "placement-manage --config-file CONF"
    "placement-manage --config-file /nonexistent db version"
    "placement-status upgrade check"
    "placement-status --config-file CONF upgrade check"
    "placement-status --config-file CONF upgrade --json check"
    "placement-status --config-file JSONCONF upgrade check"
    "placement-status --config-file CONF"
    "placement-status --config-file CONF upgrade"
)

normalise() {
    # Versions, tracebacks (with their chained causes), per-side paths,
    # log lines.
    sed -E -e "s#$work/(ours|theirs)#WORK#g" \
        -e 's/^(oslo_config\.cfg\.[A-Za-z]+: |placement-(manage|status): |alembic\.util\.exc\.CommandError: )/ERROR: /' \
        | grep -v -E '^(Traceback|  File |    |[0-9]{4}-[0-9]{2}-[0-9]{2} |alembic\.script\.revision\.ResolutionError: |The above exception was the direct cause|$)' || true
}

differ=0
for case in "${cases[@]}"; do
    for side in ours theirs; do
        bin=$ours; [ "$side" = theirs ] && bin=$theirs
        cmd=${case//JSONCONF/$work/$side/json.conf}
        cmd=${cmd//CONF/$work/$side/placement.conf}
        (cd "$work/home" && HOME="$work/home" "$bin"/$cmd) > "$work/$side.out" 2>&1
        echo "exit $?" >> "$work/$side.out"
        normalise < "$work/$side.out" > "$work/$side.norm"
    done
    if diff -u "$work/theirs.norm" "$work/ours.norm" > "$work/diff"; then
        echo "same:   $case ($(tail -1 "$work/ours.norm"))"
    else
        differ=1
        echo "DIFFER: $case"
        sed 's/^/    /' "$work/diff"
    fi
done
exit $differ
