# SPDX-License-Identifier: Apache-2.0
"""``benchmarks.compare`` against a real HTTP server on the test database:
every shape and the scheduler loop measured on both sides, in turns."""

import io
import json
import os
import threading
import types
from wsgiref import simple_server

import fixtures
import testtools

from benchmarks import candidates
from benchmarks import client as http_client
from benchmarks import compare
from benchmarks import scale
from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from tests.server import fixtures as api_fixtures


class _QuietHandler(simple_server.WSGIRequestHandler):

    def log_message(self, *args):
        pass


class TestCompare(testtools.TestCase):

    def setUp(self):
        super().setUp()
        db = api_fixtures.database()
        api_fixtures.reset_database(db)
        app = app_mod.make_app(conf_mod.make_conf(
            'unused://', enforce_new_defaults=False), db=db)
        server = simple_server.make_server('127.0.0.1', 0, app,
                                           handler_class=_QuietHandler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.url = 'http://127.0.0.1:%d' % server.server_port
        self.tmp = self.useFixture(fixtures.TempDir()).path
        cloud, _ = candidates.populate(http_client.Client(self.url), 8, 1, 1)
        self.state = os.path.join(self.tmp, 'cloud.json')
        candidates.save_cloud(self.state, cloud)

    def _sides_of_each_request(self, clients):
        """The index of the client of each request sent, in order."""
        sides = []
        real_get = http_client.Client.get

        def get(client, path, params=None, expect=(200,)):
            sides.append(clients.index(client))
            return real_get(client, path, params, expect)
        self.useFixture(fixtures.MonkeyPatch(
            'benchmarks.client.Client.get', get))
        return sides

    def test_both_sides_measured_in_turns(self):
        clients = [http_client.Client(self.url), http_client.Client(self.url)]
        sides = self._sides_of_each_request(clients)
        cloud = candidates.load_cloud(self.state)
        queries = compare.alternate_queries(clients, [cloud, cloud], 3)
        shapes = set(candidates.query_shapes(cloud)) | {
            'GET /resource_providers'}
        self.assertEqual(shapes, set(queries))
        for mine, theirs in queries.values():
            self.assertEqual(3, len(mine))
            self.assertEqual(3, len(theirs))
        # Per shape: a warm-up to each side, then three turns each.
        self.assertEqual([0, 1] * 4 * len(shapes), sides)

    def test_turns_of_several_requests(self):
        clients = [http_client.Client(self.url), http_client.Client(self.url)]
        sides = self._sides_of_each_request(clients)
        cloud = candidates.load_cloud(self.state)
        # Five samples in turns of two: rounded up to three turns each.
        queries = compare.alternate_queries(clients, [cloud, cloud], 5,
                                            turn=2)
        for mine, theirs in queries.values():
            self.assertEqual(6, len(mine))
            self.assertEqual(6, len(theirs))
        per_shape = [0, 1] + [0, 0, 1, 1] * 3
        self.assertEqual(per_shape * len(queries), sides)

    def test_counts_are_at_least_one(self):
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', io.StringIO()))
        common = ['--url', self.url, '--state', self.state,
                  '--reference-url', self.url, '--reference-state',
                  self.state]
        for option in ('--turn', '--samples'):
            for bad in ('0', '-2', 'two', '1.5'):
                self.assertRaises(SystemExit, compare.parse_args,
                                  common + [option, bad])
        args = compare.parse_args(common + ['--turn', '3', '--samples', '4'])
        self.assertEqual((3, 4), (args.turn, args.samples))

    def test_against_upstream_one_by_one_and_in_turns(self):
        """benchmarks.scale's comparison with upstream, here between two
        clients of one server: one by one at every size, in turns and the
        scheduler loop at the reference's."""
        cloud = candidates.load_cloud(self.state)
        ours, theirs = (types.SimpleNamespace(
            client=http_client.Client(self.url), cloud=cloud, nodes=8,
            label=label) for label in ('ours', 'upstream'))
        args = types.SimpleNamespace(samples=3, upstream_samples=2,
                                     upstream_turn=2, threads=1,
                                     loop_seconds=0.3)
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', io.StringIO()))
        shapes = set(candidates.query_shapes(cloud)) | {
            'GET /resource_providers'}
        reference = scale.measure_upstream(ours, theirs, args, loop=True)
        self.assertEqual(shapes, set(reference['queries']))
        self.assertEqual(shapes, set(reference['queries_in_turns']))
        # Three samples in turns of two: two turns, four requests.
        self.assertEqual((3, 2, 4), (reference['samples'], reference['turn'],
                                     reference['samples_in_turns']))
        self.assertEqual(2, len(reference['loop']))
        larger = scale.measure_upstream(ours, theirs, args, loop=False)
        self.assertEqual(2, larger['samples'])
        self.assertEqual({'nodes', 'queries', 'samples'}, set(larger))

    def test_main_reports_every_shape_and_the_loop(self):
        out = os.path.join(self.tmp, 'figures.json')
        self.assertEqual(0, compare.main([
            '--url', self.url, '--state', self.state,
            '--reference-url', self.url, '--reference-state', self.state,
            '--samples', '2', '--turn', '2', '--threads', '1',
            '--loop-seconds', '0.3', '--loop-rounds', '2', '--json', out]))
        with open(out) as f:
            figures = json.load(f)
        loop = figures.pop('scheduler loop')
        self.assertEqual(2, len(loop['runs'][0]))
        self.assertGreater(loop['claims_per_second'], 0)
        self.assertGreater(loop['reference_claims_per_second'], 0)
        for name, shape in figures.items():
            self.assertGreater(shape['median_ms'], 0, name)
            self.assertEqual((2, 2), (shape['samples'], shape['turn']), name)
            # The same ratio, but for the rounding of the figures.
            ratio = shape['reference_median_ms'] / shape['median_ms']
            self.assertAlmostEqual(1, ratio / shape['times_faster'],
                                   delta=0.03, msg=name)
