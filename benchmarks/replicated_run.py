# SPDX-License-Identifier: Apache-2.0
"""Set up several API hosts on one replicated database, run
benchmarks/replicated_writes.py against them, tear everything down.

    python -m benchmarks.replicated_run galera [--seconds 30]
    python -m benchmarks.replicated_run postgresql [--seconds 30]

(``tools/replicated-run.sh`` runs this.) ``galera``: a three-node MariaDB
Galera cluster from tools/galera-cluster.sh, one server process per node.
``postgresql``: a fresh database on PostgreSQL (127.0.0.1:5432, user
postgres, or ``--pg-url``) and two server processes on it. Each server is
``placement-server --config-file`` with its own placement.conf and log
file, two workers; the schema comes from ``placement-manage db sync``.
The functions are what tests/server/test_replicated_writes.py uses too.
"""

import argparse
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

import sqlalchemy as sa

from benchmarks import databases
from benchmarks import local_server
from benchmarks import replicated_writes

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GALERA_TOOL = os.path.join(TOP, 'tools', 'galera-cluster.sh')
MARIADBD = '/usr/sbin/mariadbd'
GALERA_PROVIDER = '/usr/lib/galera/libgalera_smm.so'
PG_SERVER_URL = 'postgresql+psycopg://postgres@127.0.0.1:5432/'
GALERA_CLIENT_PORTS = (13306, 13307, 13308)
SERVER_START_SECONDS = 90


def galera_available():
    return os.path.exists(MARIADBD) and os.path.exists(GALERA_PROVIDER)


def postgresql_answers(server_url=PG_SERVER_URL):
    url = sa.engine.make_url(server_url)
    try:
        socket.create_connection((url.host, url.port or 5432), 2).close()
        return True
    except OSError:
        return False


def _port_free(port):
    with socket.socket() as s:
        try:
            s.bind(('127.0.0.1', port))
            return True
        except OSError:
            return False


def galera_base_ports():
    """A client base port and group base port with all of their ports
    free (3 client; group, IST and SST ports of 3 nodes): the defaults
    when free, else a random spot, so a run never joins another cluster."""
    def all_free(client, group):
        ports = [client + i for i in range(3)]
        ports += [group + i + offset for i in range(3)
                  for offset in (0, 10, 20)]
        return all(_port_free(p) for p in ports)
    candidates = [(GALERA_CLIENT_PORTS[0], 14567)]
    rng = random.Random()
    candidates += [(rng.randrange(20000, 30000, 10),
                    rng.randrange(30000, 40000, 100)) for _ in range(20)]
    for client, group in candidates:
        if all_free(client, group):
            return client, group
    raise RuntimeError('no free ports for a Galera cluster')


@contextlib.contextmanager
def galera_cluster(directory, database):
    """Three nodes started, ``database`` created; yields one SQLAlchemy
    URL per node. The cluster is stopped on the way out."""
    client, group = galera_base_ports()
    # Run as root, a joining node's rsync daemon works as "nobody", who
    # must be able to pass through the (mkdtemp, 0700) directory above.
    parent = os.path.dirname(os.path.abspath(directory))
    os.chmod(parent, os.stat(parent).st_mode | 0o111)
    env = dict(os.environ, GALERA_CLIENT_PORT=str(client),
               GALERA_GROUP_PORT=str(group))
    try:
        subprocess.run(['bash', GALERA_TOOL, 'start', directory], env=env,
                       check=True, stdout=subprocess.PIPE)
        urls = ['mysql+pymysql://root@127.0.0.1:%d/%s' % (client + i,
                                                          database)
                for i in range(3)]
        databases.create(urls[0], None, name=database)
        yield urls
    finally:
        subprocess.run(['bash', GALERA_TOOL, 'stop', directory], env=env,
                       stdout=subprocess.DEVNULL)


def kill_galera_nodes(directory, nodes):
    """SIGKILL nodes of the cluster ``replicated('galera', directory)``
    started (numbered from 1): they vanish without leaving the cluster, as
    in a crash or a network partition, and a node left alone loses the
    quorum (the primary component)."""
    for node in nodes:
        pidfile = os.path.join(directory, 'galera', 'node%d' % node,
                               'mysqld.pid')
        with open(pidfile) as f:
            os.kill(int(f.read().strip()), signal.SIGKILL)


@contextlib.contextmanager
def postgresql_database(database, server_url=PG_SERVER_URL):
    """A fresh database; yields its URL (once, both servers use it)."""
    url = databases.create(server_url, None, name=database)
    try:
        yield url
    finally:
        databases.drop(url)


def write_config(directory, name, db_url, port):
    """A placement.conf of upstream's format for one server process."""
    path = os.path.join(directory, name + '.conf')
    with open(path, 'w') as conf:
        conf.write('[DEFAULT]\nlog_file = %s\n\n'
                   '[api]\nauth_strategy = noauth2\n\n'
                   '[placement_database]\nconnection = %s\n'
                   'max_pool_size = 8\nmax_overflow = 0\n\n'
                   '[server]\nhost = 127.0.0.1\nport = %d\nworkers = 2\n'
                   % (os.path.join(directory, name + '.log'), db_url, port))
    return path


def _command(name):
    """A console script of the environment running this module."""
    return os.path.join(os.path.dirname(sys.executable), name)


def db_sync(config):
    subprocess.run([_command('placement-manage'), '--config-file', config,
                    'db', 'sync'], check=True)


@contextlib.contextmanager
def servers(directory, db_urls):
    """One server process (2 workers) per database URL; yields
    ``(urls, log paths)``. Stopped with SIGTERM on the way out."""
    procs, urls, logs = [], [], []
    try:
        for index, db_url in enumerate(db_urls, 1):
            port = local_server.free_port()
            name = 'server%d' % index
            config = write_config(directory, name, db_url, port)
            if index == 1:
                db_sync(config)
            procs.append(subprocess.Popen(
                [_command('placement-server'), '--config-file', config],
                stdout=subprocess.DEVNULL,
                stderr=open(os.path.join(directory, name + '.err'), 'w')))
            urls.append('http://127.0.0.1:%d' % port)
            logs.append(os.path.join(directory, name + '.log'))
        for proc, url in zip(procs, urls):
            _wait_answering(proc, url)
        yield urls, logs
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_answering(proc, url):
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError('server for %s exited with %s'
                               % (url, proc.returncode))
        try:
            urllib.request.urlopen(url + '/', timeout=2).read()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError('server at %s did not answer' % url)


@contextlib.contextmanager
def replicated(mode, directory, pg_url=PG_SERVER_URL):
    """Everything up for ``mode``; yields (server URLs, database URLs to
    check, log files)."""
    database = 'placement_repl_%s' % uuid.uuid4().hex[:8]
    if mode == 'galera':
        cluster = galera_cluster(os.path.join(directory, 'galera'),
                                 database)
    else:
        cluster = postgresql_database(database, pg_url)
    with cluster as db:
        # Galera: a server per node. PostgreSQL: two on the one database.
        db_urls = db if mode == 'galera' else [db, db]
        with servers(directory, db_urls) as (urls, logs):
            yield urls, sorted(set(db_urls)), logs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('mode', choices=('galera', 'postgresql'))
    parser.add_argument('--seconds', type=float, default=30.0)
    parser.add_argument('--threads', type=int, default=16)
    parser.add_argument('--providers', type=int, default=20)
    parser.add_argument('--pg-url', default=PG_SERVER_URL)
    parser.add_argument('--keep', action='store_true',
                        help='Keep the working directory (logs, configs).')
    args = parser.parse_args(argv)
    directory = tempfile.mkdtemp(prefix='replicated-%s-' % args.mode)
    try:
        with replicated(args.mode, directory, args.pg_url) as (
                urls, db_urls, logs):
            print('%s: servers %s' % (args.mode, ' '.join(urls)))
            result = replicated_writes.run(
                urls, db_urls, logs, providers=args.providers,
                threads=args.threads, seconds=args.seconds)
        print(replicated_writes.format_result(result, urls, db_urls))
    finally:
        if args.keep:
            print('working directory kept: %s' % directory)
        else:
            shutil.rmtree(directory, ignore_errors=True)
    failed = result.problems or any(a == '5xx' for (_, a) in result.answers)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
