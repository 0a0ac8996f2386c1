#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""``resource provider list`` on a big cloud: our client against upstream's.

Writes benchmarks/cloud.py's cloud into an empty database with
``benchmarks.sql_cloud`` (10,000 nodes make 13,500 providers), starts the
embedded server on it, then runs, as whole processes against that one
server::

    openstack --os-auth-type admin_token --os-token admin \\
        --os-endpoint URL --os-placement-api-version 1.39 \\
        resource provider list -f FORMAT

for FORMAT in table, json, value, csv and yaml, with our client (the
``openstack`` beside this interpreter), upstream osc-placement's (the
``openstack`` of another virtualenv, ``--upstream-openstack``) and our
standalone ``placement`` command, interleaved run by run (ours, upstream,
placement, ours, ...) so that load on a shared machine hits all three
alike. ``resource class list -f value`` (a short answer) shows start-up.
It prints one table: median wall time of each, median CPU time (user +
system of the client process) and the ratios of the medians; before
timing it checks that the three print the same bytes::

    python -m benchmarks.client_list \\
        --database-connection sqlite:////tmp/client10k.sqlite --nodes 10000 \\
        --upstream-openstack .venv-upstream-client/bin/openstack

``--no-populate --state FILE`` serves a database populated earlier;
``--url`` times a running (populated) server instead.

Before timing, our package is compiled to ``.pyc`` files as pip compiles
an installed one (upstream's virtualenv has them): an editable install run
with ``PYTHONDONTWRITEBYTECODE`` set would otherwise compile our modules
from source in every process, a cost no installed client pays.
``--no-compile`` leaves that out.
"""

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import time

from benchmarks import front_door
from benchmarks import local_server
from benchmarks import operator_commands

FORMATS = ('table', 'json', 'value', 'csv', 'yaml')
MICROVERSION = '1.39'
CLIENTS = ('ours', 'upstream', 'placement')


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--database-connection',
                        help='an empty database to populate and serve')
    parser.add_argument('--nodes', type=int, default=10000,
                        help='compute nodes (default 10,000: 13,500 '
                             'providers)')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--no-populate', action='store_true',
                        help='the database is populated already')
    parser.add_argument('--state', help='where to write the cloud '
                        'description (benchmarks.sql_cloud --state)')
    parser.add_argument('--url', help='time this running server instead')
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--formats', default=','.join(FORMATS),
                        help='comma-separated (default: %(default)s)')
    parser.add_argument('--openstack',
                        default=front_door.shell_path('openstack'),
                        help="our client's openstack command")
    parser.add_argument('--placement',
                        default=front_door.shell_path('placement'))
    parser.add_argument('--no-compile', action='store_true',
                        help='do not compile our package to .pyc first')
    parser.add_argument('--upstream-openstack', required=True,
                        help="the openstack command of a virtualenv with "
                             "upstream osc-placement")
    return parser.parse_args(argv)


def shapes(formats):
    """``(label, command words)``: the provider list in each format, then
    a short answer for start-up."""
    found = [('provider list -f %s' % fmt,
              ['resource', 'provider', 'list', '-f', fmt])
             for fmt in formats]
    return found + [('class list -f value (start-up)',
                     ['resource', 'class', 'list', '-f', 'value'])]


def commands(args, url, words):
    """The argv of each client for the same command words."""
    auth = ['--os-auth-type', 'admin_token', '--os-token', 'admin',
            '--os-endpoint', url, '--os-placement-api-version', MICROVERSION]
    shells = {'ours': args.openstack, 'upstream': args.upstream_openstack,
              'placement': args.placement}
    return {name: [shells[name]] + auth + words for name in CLIENTS}


def compile_our_package():
    import osc_placement
    compileall.compile_dir(os.path.dirname(osc_placement.__file__),
                           quiet=1)


def clean_environment():
    # Neither client may pick up modules from this checkout or from a
    # PYTHONPATH meant for something else: each runs from its own venv.
    env = dict(os.environ)
    env.pop('PYTHONPATH', None)
    return env


def measured_run(argv, env):
    """``(wall seconds, CPU seconds, stdout bytes)`` of one whole process.

    CPU is the user + system time of the finished child, read from this
    process's children totals: less disturbed by other jobs than wall
    time, and the server (a child that has not exited) is not in it.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, cwd='/')
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit('%s failed:\n%s' % (
            ' '.join(argv), done.stderr.decode(errors='replace')[-2000:]))
    cpu = (after.ru_utime - before.ru_utime
           + after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def check_same_output(label, argvs, env):
    """One untimed run of each (it also warms caches and the server);
    stops the benchmark when the clients disagree."""
    outputs = {name: measured_run(argv, env)[2]
               for name, argv in argvs.items()}
    differing = [name for name in CLIENTS
                 if outputs[name] != outputs['upstream']]
    if differing:
        raise SystemExit('%s: %s print other bytes than upstream'
                         % (label, ', '.join(differing)))
    return len(outputs['upstream'])


def time_interleaved(argvs, runs, env):
    """``{client: [(wall, cpu), ...]}``, one run of each client in turn."""
    samples = {name: [] for name in CLIENTS}
    for _ in range(runs):
        for name in CLIENTS:
            wall, cpu, _ = measured_run(argvs[name], env)
            samples[name].append((wall, cpu))
    return samples


def medians(samples):
    return (statistics.median(wall for wall, _ in samples),
            statistics.median(cpu for _, cpu in samples))


HEADER = ('%-32s %9s %9s %9s %7s %7s   %-21s %s'
          % ('command (median of N)', 'ours', 'upstream', 'placement',
             'ours/up', 'plc/up', 'CPU ours/up/plc', 'bytes'))


def row(label, samples, size):
    (ours, ours_cpu), (up, up_cpu), (plc, plc_cpu) = (
        medians(samples[name]) for name in CLIENTS)
    return ('%-32s %8.2fs %8.2fs %8.2fs %7.2f %7.2f   %5.2f/%5.2f/%5.2f s  %d'
            % (label, ours, up, plc, ours / up, plc / up, ours_cpu, up_cpu,
               plc_cpu, size))


def main(argv=None):
    args = parse_args(argv)
    server = None
    url = args.url
    if not url:
        if not args.database_connection:
            raise SystemExit('give --database-connection or --url')
        if not args.no_populate:
            operator_commands.populate(args)
        server, url = local_server.start(args.database_connection)
    env = clean_environment()
    if not args.no_compile:
        compile_our_package()
    try:
        print('%d runs each, interleaved ours, upstream, placement; '
              'wall and CPU are medians; PYTHONUNBUFFERED=%s, our package '
              '%s' % (args.runs, env.get('PYTHONUNBUFFERED', ''),
                      'not compiled' if args.no_compile else 'compiled'))
        print(HEADER, flush=True)
        for label, words in shapes(args.formats.split(',')):
            argvs = commands(args, url, words)
            size = check_same_output(label, argvs, env)
            samples = time_interleaved(argvs, args.runs, env)
            print(row(label, samples, size), flush=True)
    finally:
        local_server.stop(server)


if __name__ == '__main__':
    main()
