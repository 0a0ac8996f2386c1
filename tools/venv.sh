#!/usr/bin/env bash
# Create (or refresh) the project's virtualenv in .venv and install the
# project with everything the tests, the embedded server and the docs need,
# and packaging/osc-placement-server (upstream's command names
# placement-manage and placement-status, which the server tests run).
# Needs only a Python 3.11+ interpreter ($PYTHON, default python3).
# Re-running is cheap: the install is skipped while the requirement files
# are unchanged.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
venv=${OSC_PLACEMENT_VENV:-$top/.venv}
python=${PYTHON:-python3}

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
fi

stamp="$venv/.osc-placement-installed"
want=$(cat "$top/setup.cfg" "$top/packaging/osc-placement-server/pyproject.toml" \
           "$top/requirements.txt" \
           "$top/test-requirements.txt" "$top/doc/requirements.txt" \
       | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    # pbr needs a version; a shallow or tag-less clone has none.
    export PBR_VERSION=${PBR_VERSION:-0.0.1}
    log="$venv/install.log"
    echo "Installing osc-placement and its test dependencies into $venv"
    if ! "$venv/bin/python" -m pip install \
            -e "$top[server]" \
            "$top/packaging/osc-placement-server" \
            -r "$top/test-requirements.txt" \
            -r "$top/doc/requirements.txt" > "$log" 2>&1; then
        tail -30 "$log"
        echo "Installation failed; the whole log is in $log" >&2
        exit 1
    fi
    echo "$want" > "$stamp"
fi
