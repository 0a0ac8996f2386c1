# SPDX-License-Identifier: Apache-2.0
"""Whole-process start-up: ``placement`` against ``openstack``.

Starts the embedded server (SQLite in a temporary directory) on a loopback
port, creates providers, then runs the same command through both shells
as real processes, interleaved so that load on the machine hits both
alike, and prints median, min and max wall time and their ratio.

    python -m benchmarks.front_door --runs 7 --providers 135

Both commands use token/endpoint auth (``--os-auth-type admin_token``) and
must print the same output; the script checks that before timing.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

from benchmarks import client as bench_client
from benchmarks import local_server


def create_providers(url, count):
    api = bench_client.Client(url)
    for index in range(count):
        api.post('/resource_providers',
                 {'name': 'front-door-%04d' % index,
                  'uuid': str(uuid.uuid4())})


def shell_path(name):
    """The console script next to this interpreter, else on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), name)
    return here if os.path.exists(here) else shutil.which(name)


def timed_run(argv):
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError('%s exited %s: %s' % (
            ' '.join(argv), done.returncode, done.stderr))
    return elapsed, done.stdout


def summary(times):
    return 'median %.3f s  min %.3f s  max %.3f s' % (
        statistics.median(times), min(times), max(times))


def compare(label, commands, runs):
    """Time each command ``runs`` times, interleaved; print the ratio."""
    outputs = {name: timed_run(argv)[1] for name, argv in commands.items()}
    if len(set(outputs.values())) != 1:
        raise RuntimeError('%s: the shells print different output' % label)
    times = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            times[name].append(timed_run(argv)[0])
    print('%s (%d runs each)' % (label, runs))
    for name in commands:
        print('  %-10s %s' % (name, summary(times[name])))
    fast, slow = (statistics.median(times[name])
                  for name in ('placement', 'openstack'))
    print('  ratio placement/openstack (medians): %.2f' % (fast / slow))
    return fast / slow


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--runs', type=int, default=7)
    parser.add_argument('--providers', type=int, default=135)
    args = parser.parse_args(argv)

    shells = {name: shell_path(name) for name in ('placement', 'openstack')}
    for name, path in shells.items():
        if not path:
            parser.error('no %s command found' % name)
    state_dir = tempfile.mkdtemp(prefix='front-door-')
    server, url = local_server.start(
        'sqlite:///%s/placement.sqlite' % state_dir)
    try:
        create_providers(url, args.providers)
        auth = ['--os-auth-type', 'admin_token', '--os-token', 'admin',
                '--os-endpoint', url]
        print('%d providers at %s' % (args.providers, url))
        compare('resource provider list', {
            name: [path] + auth + ['resource', 'provider', 'list']
            for name, path in shells.items()}, args.runs)
        compare('resource provider list -f json', {
            name: [path] + auth + ['resource', 'provider', 'list',
                                   '-f', 'json']
            for name, path in shells.items()}, args.runs)
        version_times = {name: [timed_run([path, '--version'])[0]
                                for _ in range(args.runs)]
                         for name, path in shells.items()}
        print('--version, no request (%d runs each)' % args.runs)
        for name, times in version_times.items():
            print('  %-10s %s' % (name, summary(times)))
        python = [timed_run([sys.executable, '-c', 'pass'])[0]
                  for _ in range(args.runs)]
        print('bare python -c pass: %s' % summary(python))
    finally:
        local_server.stop(server)
        shutil.rmtree(state_dir, ignore_errors=True)


if __name__ == '__main__':
    main()
