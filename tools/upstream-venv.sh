#!/usr/bin/env bash
# Create (or refresh) the separate virtualenv that holds upstream OpenStack
# Placement 16.0.0, for the compatibility tests in tests/compat. Upstream is
# never a dependency of our package: it lives only here, at
# ${OSC_PLACEMENT_UPSTREAM_VENV:-.venv-upstream}, pinned by
# tests/compat/upstream-constraints.txt. Re-running is cheap: the install is
# skipped while the requirements and the pins are unchanged.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
venv=${OSC_PLACEMENT_UPSTREAM_VENV:-$top/.venv-upstream}
python=${PYTHON:-python3}
constraints="$top/tests/compat/upstream-constraints.txt"
# What upstream needs to serve and migrate every database the tests use.
requirements=(openstack-placement==16.0.0 gunicorn psycopg2-binary PyMySQL)

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi

stamp="$venv/.upstream-installed"
want=$( { printf '%s\n' "${requirements[@]}"; cat "$constraints"; } \
       | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log="$venv/install.log"
    echo "Installing upstream Placement 16.0.0 into $venv"
    if ! "$venv/bin/python" -m pip install -c "$constraints" \
            "${requirements[@]}" > "$log" 2>&1; then
        tail -30 "$log"
        echo "Installation failed; the whole log is in $log" >&2
        exit 1
    fi
    echo "$want" > "$stamp"
fi
