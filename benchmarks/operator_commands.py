#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time the operator commands on a big cloud: capacity list and explain.

It writes benchmarks/cloud.py's cloud (compute hosts, every tenth with two
NUMA children and a VGPU child, a sharing DISK_GB provider per aggregate of
20 hosts, allocations filling about half of each host's memory) straight
into an empty database with ``benchmarks.sql_cloud``, starts the embedded
server on it, then runs the real ``openstack`` command in a subprocess,
``--runs`` times per shape, and prints the median wall time of the whole
process, the median CPU time of the client process and of the server (its
processes, from /proc), and the number of HTTP requests the command sent
(counted from one extra ``--debug`` run, not timed):

    python -m benchmarks.operator_commands \\
        --database-connection sqlite:////tmp/cap1000.sqlite --nodes 741

741 nodes make 1,000 providers, 7,407 nodes 10,000. ``--no-populate
--state FILE`` serves a database populated by an earlier run; ``--url``
times a server that is already running (and populated) instead;
``--only capacity`` or ``--only explain`` times one family of shapes.

``--upstream-venv .venv-upstream`` (tools/upstream-venv.sh) also starts
upstream Placement 16.0.0 on the same database (gunicorn,
``--upstream-workers`` x ``--upstream-threads``), times every shape against
it too, each server in turn, and prints the ratio of the medians
(upstream's over ours). The commands only read, so the two servers share
the database. ``--baseline-tree DIR`` also times the client of another
checkout (``git archive``), against our server; ``--also-threads N`` also
times a second server of ours with N threads per worker (``--threads``
sets the first's). The sides run in turn,
run by run, so that a busy machine weighs on each alike.
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks import local_server

FIT = 'VCPU=4,MEMORY_MB=8192,DISK_GB=40'
# A flavor as Nova asks for it, from a host that is not disabled.
FLAVOR = ['--resource', 'VCPU=4', '--resource', 'MEMORY_MB=8192',
          '--resource', 'DISK_GB=40', '--forbidden', 'COMPUTE_STATUS_DISABLED']
# More than any host has: every host fails, and explain names helpers.
TOO_BIG = ['--resource', 'VCPU=1000', '--resource', 'DISK_GB=40']
CAPACITY = ['resource', 'provider', 'capacity', 'list']
EXPLAIN = ['allocation', 'candidate', 'explain']


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--database-connection',
                        help='an empty database to populate and serve')
    parser.add_argument('--nodes', type=int, default=741,
                        help='compute nodes (default 741: 1,000 providers)')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--no-populate', action='store_true',
                        help='the database is populated already (give the '
                             'same --state)')
    parser.add_argument('--url', help='time this running server instead')
    parser.add_argument('--state', help='the cloud description '
                        '(benchmarks.sql_cloud --state); names an aggregate')
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--only', choices=['capacity', 'explain'],
                        help='time only this family of shapes')
    parser.add_argument('--workers', type=int, default=1,
                        help='server worker processes (default 1)')
    parser.add_argument('--threads', type=int,
                        help="threads per server worker (default: the "
                             "server's)")
    parser.add_argument('--also-threads', type=int,
                        help='also time a second server of ours with this '
                             'many threads per worker, on the same database')
    parser.add_argument('--openstack', default=_default_openstack())
    parser.add_argument('--upstream-venv',
                        help='also time upstream Placement 16.0.0 from this '
                             'virtualenv, on the same database')
    parser.add_argument('--baseline-tree',
                        help='also time the client of this checkout (an '
                             'older commit, say) against our server')
    parser.add_argument('--upstream-workers', type=int, default=2)
    parser.add_argument('--upstream-threads', type=int, default=4)
    return parser.parse_args(argv)


def _default_openstack():
    beside = os.path.join(os.path.dirname(sys.executable), 'openstack')
    return beside if os.path.exists(beside) else shutil.which('openstack')


def command(args, url, words, debug=False, formatter='value'):
    argv = [args.openstack, '--os-auth-type', 'admin_token', '--os-token',
            'admin', '--os-endpoint', url]
    if debug:
        argv.append('--debug')
    return argv + words + ['-f', formatter]


# explain --resource-provider exits 3 when no tree named is a candidate.
NOT_A_CANDIDATE = 3


def run(argv, env=None, accepted=None):
    """``(wall seconds, finished process, client CPU seconds)``; exit
    statuses other than ``accepted`` fail the benchmark."""
    if accepted is None:
        accepted = (0, NOT_A_CANDIDATE) if EXPLAIN[-1] in argv else (0,)
    before = _children_cpu()
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    elapsed = time.monotonic() - started
    if done.returncode not in accepted:
        raise SystemExit('%s failed:\n%s' % (' '.join(argv),
                                             done.stderr[-2000:]))
    return elapsed, done, _children_cpu() - before


def server_cpu(pid):
    """CPU seconds of the process ``pid`` and its children so far (the
    server's workers), from /proc; None where /proc is not Linux's."""
    if pid is None or not os.path.exists('/proc/%d/stat' % pid):
        return None
    ticks = os.sysconf('SC_CLK_TCK')
    total = 0
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        # After the name: state, ppid, ..., utime and stime at 12 and 13.
        if int(entry) == pid or int(fields[1]) == pid:
            total += int(fields[11]) + int(fields[12])
    return total / ticks


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def requests_and_rows(args, url, options, env=None):
    """One untimed ``--debug`` run (it also warms the server up)."""
    done = run(command(args, url, options, debug=True), env)[1]
    sent = sum(1 for line in done.stderr.splitlines()
               if line.startswith('REQ: curl'))
    return sent, len(done.stdout.splitlines())


def shapes(args):
    """``(family, name, command words)`` of every shape timed."""
    found = [('capacity', 'capacity rows', CAPACITY),
             ('capacity', '--fit', CAPACITY + ['--fit', FIT]),
             ('explain', 'explain funnel', EXPLAIN + FLAVOR)]
    if args.state:
        from benchmarks import candidates
        cloud = candidates.load_cloud(args.state)
        found += [
            ('capacity', '--aggregate (20 hosts) --fit',
             CAPACITY + ['--aggregate', cloud.aggregates[0], '--fit', FIT]),
            # The first host has NUMA children and a GPU, and a shared disk.
            ('explain', 'explain a host (candidate)',
             EXPLAIN + FLAVOR + ['--resource-provider', cloud.hosts[0]]),
            ('explain', 'explain a host (fails)',
             EXPLAIN + TOO_BIG + ['--resource-provider', cloud.hosts[0]]),
            ('explain', 'explain a shared disk',
             EXPLAIN + FLAVOR + ['--resource-provider', cloud.sharing[0]]),
        ]
    return [(name, words) for family, name, words in found
            if args.only in (None, family)]


def populate(args):
    from benchmarks import sql_cloud
    if not args.state:
        args.state = os.path.join(tempfile.mkdtemp(), 'cloud.json')
    sql_cloud.main(['--database-connection', args.database_connection,
                    '--nodes', str(args.nodes), '--seed', str(args.seed),
                    '--state', args.state])


def measure(args, sides, options):
    """``{side: (median, min, requests, rows, median client CPU, median
    server CPU)}`` of one shape; ``sides``: ``{side: (url, environment,
    server pid)}``, run in turn so that a busy machine weighs on each
    alike."""
    counted = {side: requests_and_rows(args, url, options, env)
               for side, (url, env, _) in sides.items()}
    runs = {side: [] for side in sides}
    for _ in range(args.runs):
        for side, (url, env, pid) in sides.items():
            before = server_cpu(pid)
            wall, _, cpu = run(command(args, url, options), env)
            after = server_cpu(pid)
            served = None if before is None else after - before
            runs[side].append((wall, cpu, served))
    figures = {}
    for side, done in runs.items():
        times = [wall for wall, _, _ in done]
        served = [s for _, _, s in done if s is not None]
        figures[side] = (statistics.median(times), min(times)) \
            + counted[side] + (statistics.median(c for _, c, _ in done),
                               statistics.median(served) if served
                               else float('nan'))
    return figures


def client_environment(tree):
    """The environment that runs the client of the checkout ``tree``."""
    return dict(os.environ, PYTHONPATH=os.path.abspath(tree))


def report(name, side, figures, runs):
    median, fastest, sent, rows, cpu, served = figures
    print('%-32s %-8s median %6.2f s  min %6.2f s  client CPU %5.2f s  '
          'server CPU %5.2f s  %6d requests  %d rows  (%d runs)'
          % (name, side, median, fastest, cpu, served, sent, rows, runs),
          flush=True)


def start_upstream(args):
    from benchmarks import upstream_server
    process, url, _ = upstream_server.start(
        args.database_connection, args.upstream_venv,
        workers=args.upstream_workers, threads=args.upstream_threads)
    return process, url


def main(argv=None):
    args = parse_args(argv)
    servers = []
    url = args.url
    for option in ('upstream_venv', 'also_threads'):
        if getattr(args, option) and not args.database_connection:
            raise SystemExit('--%s needs --database-connection'
                             % option.replace('_', '-'))
    try:
        if not url:
            if not args.database_connection:
                raise SystemExit('give --database-connection or --url')
            if not args.no_populate:
                populate(args)
            server, url = local_server.start(
                args.database_connection, args.workers, threads=args.threads)
            servers.append(server)
        upstream_url = None
        if args.upstream_venv:
            process, upstream_url = start_upstream(args)
            servers.append(process)
        ours_pid = servers[0].pid if servers and not args.url else None
        sides = {'ours': (url, None, ours_pid)}
        if args.baseline_tree:
            sides['before'] = (url, client_environment(args.baseline_tree),
                               ours_pid)
        if upstream_url:
            sides['upstream'] = (upstream_url, None, servers[-1].pid)
        if args.also_threads:
            other, other_url = local_server.start(
                args.database_connection, args.workers,
                threads=args.also_threads)
            servers.append(other)
            sides['%d threads' % args.also_threads] = (other_url, None,
                                                       other.pid)
        for name, options in shapes(args):
            figures = measure(args, sides, options)
            for side, figure in figures.items():
                report(name, side, figure, args.runs)
            for other in figures:
                if other != 'ours':
                    print('%-32s %-8s %.2fx the median of ours'
                          % (name, other, figures[other][0]
                             / figures['ours'][0]), flush=True)
    finally:
        for process in servers:
            local_server.stop(process)


if __name__ == '__main__':
    main()
