# SPDX-License-Identifier: Apache-2.0
"""Several API hosts on one replicated database, for real.

Server processes (placement-server, two workers each, schema from
placement-manage db sync) on a three-node MariaDB Galera cluster started
for the test (one server per node), or two on one PostgreSQL database;
benchmarks/replicated_writes.py's writers claim, move and delete over all
of them at once. The assertions are its verification: no provider over
capacity, every consumer as its last accepted write left it on every
node (and every refused claim absent), usages from every server equal to
the SQL sums, no 5xx; and the servers' logs show conflicts retried. On
Galera, a node whose two peers then vanish loses the quorum, and its
server answers 503 with Retry-After (MariaDB's 1047), never 500.

Each case runs in the pass of its database, as the rest of the suite:

    OSC_PLACEMENT_TEST_DB_URL=postgresql+psycopg://postgres@127.0.0.1/ \\
        .venv/bin/python -m testtools.run tests.server.test_replicated_writes
    OSC_PLACEMENT_TEST_DB_URL=mysql+pymysql://root@127.0.0.1/ \\
        .venv/bin/python -m testtools.run tests.server.test_replicated_writes

The Galera case needs /usr/sbin/mariadbd and
/usr/lib/galera/libgalera_smm.so (Debian's mariadb-server and galera-4),
not the MariaDB server of the URL: it starts its own nodes on free
loopback ports.
"""

import json
import os
import time
import unittest
import urllib.error
import urllib.request

import fixtures
import testtools
from testtools import content

from benchmarks import replicated_run
from benchmarks import replicated_writes
from tests.server import fixtures as api_fixtures

# Short runs: the cluster takes ~15 s to start, the writers this long.
WRITE_SECONDS = 15
# Galera's own timeouts decide when a node alone gives up the quorum.
QUORUM_LOSS_SECONDS = 60
THREADS = 12
PROVIDERS = 12


class ReplicatedWritesMixin:

    def run_writers(self, mode, then=None, **kwargs):
        """The writers' result and report; ``then(directory, urls)`` runs
        after them, with everything still up."""
        directory = self.useFixture(fixtures.TempDir()).path
        with replicated_run.replicated(mode, directory, **kwargs) as (
                urls, db_urls, logs):
            result = replicated_writes.run(
                urls, db_urls, logs, providers=PROVIDERS, threads=THREADS,
                seconds=WRITE_SECONDS)
            report = replicated_writes.format_result(result, urls, db_urls)
            self.addDetail('figures', content.text_content(report))
            if then is not None:
                then(directory, urls)
        return result, report

    def assert_verified(self, result, report):
        self.assertEqual([], result.problems, report)
        fives = sum(n for (_, answer), n in result.answers.items()
                    if answer == '5xx')
        self.assertEqual(0, fives, report)
        # Writes were accepted and refused for capacity on every run: the
        # providers were really filled and the checks had rows to check.
        self.assertGreater(result.accepted, 0, report)
        self.assertTrue(any(answer == '409 capacity'
                            for _, answer in result.answers), report)
        # Conflicts happened and were retried by the servers.
        self.assertGreater(sum(result.retries_per_log.values()), 0, report)


class TestGalera(ReplicatedWritesMixin, testtools.TestCase):

    def setUp(self):
        super().setUp()
        if not replicated_run.galera_available():
            self.skipTest('needs %s and %s' % (
                replicated_run.MARIADBD, replicated_run.GALERA_PROVIDER))

    def test_three_nodes_one_server_each(self):
        result, report = self.run_writers(
            'galera', then=self.assert_node_alone_unavailable)
        self.assert_verified(result, report)
        # Galera refuses a commit certified against another node's with a
        # deadlock error, which the server retried.
        self.assertIn('deadlock (MySQL 1213)', result.retry_reasons, report)

    def assert_node_alone_unavailable(self, directory, urls):
        """A node whose peers vanished has no quorum and refuses every
        statement (MariaDB 1047, "WSREP has not yet prepared node"): its
        server answers 503 with Retry-After, never 500."""
        replicated_run.kill_galera_nodes(directory, (1, 2))
        seen = []
        deadline = time.monotonic() + QUORUM_LOSS_SECONDS
        while time.monotonic() < deadline:
            status, headers, body = _get(urls[2] + '/resource_providers')
            seen.append(status)
            if status == 503:
                break
            time.sleep(0.2)
        self.assertEqual(503, seen[-1], seen)
        self.assertEqual({200}, set(seen[:-1]) or {200}, seen)
        self.assertIsNotNone(headers.get('Retry-After'))
        [error] = body['errors']
        self.assertEqual(503, error['status'])
        # The pool was renewed and the node is still alone: the next
        # request, on a new connection, is refused the same way.
        self.assertEqual(503, _get(urls[2] + '/resource_providers')[0])


class TestTwoServersOnPostgreSQL(ReplicatedWritesMixin, testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.server_url = os.environ[api_fixtures.DB_URL_ENV]
        if not replicated_run.postgresql_answers(self.server_url):
            self.skipTest('no PostgreSQL at %s' % self.server_url)

    def test_two_servers_one_database(self):
        result, report = self.run_writers('postgresql',
                                          pg_url=self.server_url)
        self.assert_verified(result, report)


def _get(url):
    """(status, headers, JSON body) of a GET at the newest microversion,
    whatever the status."""
    request = urllib.request.Request(
        url, headers={'OpenStack-API-Version': 'placement latest',
                      'Accept': 'application/json',
                      # The servers' noauth2: the admin's token.
                      'X-Auth-Token': 'admin'})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, error.headers, json.load(error)


def load_tests(loader, standard_tests, pattern):
    """Each case in its database's pass of the suite only (the Galera
    case in the MariaDB/MySQL pass, the PostgreSQL case in the
    PostgreSQL pass), none in the SQLite pass."""
    wanted = {'mysql': TestGalera,
              'postgresql': TestTwoServersOnPostgreSQL}.get(
                  api_fixtures.backend_name())
    suite = unittest.TestSuite()
    if wanted is not None:
        suite.addTests(loader.loadTestsFromTestCase(wanted))
    return suite
