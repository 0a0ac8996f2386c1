#!/usr/bin/env bash
# Make sure Prometheus and promtool are on this machine, then print their
# paths, one per line: "prometheus PATH" and "promtool PATH".
#
#   tools/prometheus.sh
#
# When promtool is missing, installs Debian's prometheus package (which
# brings both) with apt-get, as root or through sudo. The package's
# service is never started: the tests run their own instances, each on a
# free port with its own data directory, and a system Prometheus would
# take port 9090 and scrape on its own. apt-get asks policy-rc.d before
# starting a service; when the machine has none, a refusing one is put in
# place for the install and removed after it.
set -euo pipefail

policy=/usr/sbin/policy-rc.d

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    else
        sudo "$@"
    fi
}

# 101 is "action forbidden by policy": invoke-rc.d then starts nothing.
refuse_service_starts() {
    [ -e "$policy" ] && return 1
    as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy \
        && chmod 755 $policy"
}

install_prometheus() {
    local placed=no
    if refuse_service_starts; then
        placed=yes
    fi
    # The web console's JavaScript is all the recommends bring that the
    # tests could use, and they do not; node-exporter would be a second
    # service.
    local status=0
    as_root env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends prometheus \
        >&2 || status=$?
    if [ "$status" -ne 0 ]; then
        # The package lists may be stale on a fresh machine.
        as_root apt-get update -q >&2
        status=0
        as_root env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -q --no-install-recommends prometheus \
            >&2 || status=$?
    fi
    if [ "$placed" = yes ]; then
        as_root rm -f "$policy"
    fi
    return "$status"
}

if ! command -v promtool >/dev/null || ! command -v prometheus >/dev/null
then
    install_prometheus
fi
echo "prometheus $(command -v prometheus)"
echo "promtool $(command -v promtool)"
