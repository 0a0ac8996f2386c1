# SPDX-License-Identifier: Apache-2.0
"""The bulk SQL loader (benchmarks/sql_cloud.py) builds the cloud the HTTP
population builds: a server on either database answers the same.

On SQLite unless OSC_PLACEMENT_TEST_DB_URL names a database server: the
loader writes with COPY on PostgreSQL and with multi-row INSERTs
elsewhere, so both paths need the check.
"""

import io
import os
import threading
from wsgiref import simple_server

import fixtures
import testtools

from benchmarks import candidates
from benchmarks import client as http_client
from benchmarks import sql_cloud
from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from tests.server import schema_compare

NODES = 20
SEED = 1


class _QuietHandler(simple_server.WSGIRequestHandler):

    def log_message(self, *args):
        pass


class TestSqlCloud(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.created = {}

    def database(self, name):
        """The URL of the test's database ``name``: created on the
        database server of OSC_PLACEMENT_TEST_DB_URL on first use (and
        dropped after the test), or a SQLite file."""
        if name not in self.created:
            self.created[name] = self.useFixture(
                schema_compare.ScratchDatabase('sql_cloud_' + name)).url
        return self.created[name]

    def serve(self, connection):
        """A client of a real HTTP server on ``connection`` (the app
        creates the schema if it is missing)."""
        app = app_mod.make_app(conf_mod.make_conf(
            connection, enforce_new_defaults=False))
        server = simple_server.make_server('127.0.0.1', 0, app,
                                           handler_class=_QuietHandler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        return http_client.Client('http://127.0.0.1:%d' % server.server_port)

    def load_over_sql(self):
        state = os.path.join(self.tmp, 'sql.json')
        output = io.StringIO()
        with fixtures.MonkeyPatch('sys.stdout', output):
            self.assertEqual(0, sql_cloud.main([
                '--database-connection', self.database('sql'),
                '--nodes', str(NODES), '--seed', str(SEED),
                '--state', state]))
        return candidates.load_cloud(state), output.getvalue()

    def load_over_http(self):
        client = self.serve(self.database('http'))
        # populate reports its progress on stdout and stderr.
        with fixtures.MonkeyPatch('sys.stdout', io.StringIO()), \
                fixtures.MonkeyPatch('sys.stderr', io.StringIO()):
            cloud, _ = candidates.populate(client, NODES, 1, SEED)
        return client, cloud

    def test_answers_match_a_cloud_populated_over_http(self):
        http_side, http_cloud = self.load_over_http()
        sql_cloud_state, _ = self.load_over_sql()
        sql_side = self.serve(self.database('sql'))
        self.assertEqual(vars(http_cloud), vars(sql_cloud_state))
        for name, params in candidates.query_shapes(http_cloud).items():
            answer = http_side.get('/allocation_candidates', params).json()
            # Every shape finds some: equal empty answers would say little.
            self.assertTrue(answer['allocation_requests'], name)
            self.assertEqual(
                answer,
                sql_side.get('/allocation_candidates', params).json(), name)
        self.assertEqual(http_side.get('/resource_providers').json(),
                         sql_side.get('/resource_providers').json())

    def test_output_says_it_is_a_bulk_sql_loader(self):
        _, output = self.load_over_sql()
        self.assertIn('bulk SQL loader', output)
