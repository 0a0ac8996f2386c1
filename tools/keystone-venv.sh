#!/usr/bin/env bash
# Create (or refresh) the separate virtualenv that holds OpenStack Keystone,
# for the tests that serve Placement behind a real identity service
# (tests/keystone). Keystone is never a dependency of our package: it lives
# only here, at ${OSC_PLACEMENT_KEYSTONE_VENV:-.venv-keystone}. Re-running
# is cheap: the install is skipped while the requirements are unchanged.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
venv=${OSC_PLACEMENT_KEYSTONE_VENV:-$top/.venv-keystone}
python=${PYTHON:-python3}
# Keystone and the WSGI server that serves it in the tests.
requirements=(keystone==30.0.0 gunicorn)

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi

stamp="$venv/.keystone-installed"
want=$(printf '%s\n' "${requirements[@]}" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log="$venv/install.log"
    echo "Installing Keystone into $venv"
    if ! "$venv/bin/python" -m pip install "${requirements[@]}" \
            > "$log" 2>&1; then
        tail -30 "$log"
        echo "Installation failed; the whole log is in $log" >&2
        exit 1
    fi
    echo "$want" > "$stamp"
fi
