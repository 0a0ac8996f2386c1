# SPDX-License-Identifier: Apache-2.0
"""Concurrent writers through the application: the provider generation
(objects/generation.py) lets exactly one win (server/objects)."""

import threading
import uuid as uuidlib

import testtools

from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from tests.server import fixtures as api_fixtures
from tests.server.webob_requests import request as _request


class TestConcurrency(testtools.TestCase):
    """Concurrent writers on the test database (SQLite, or the server named
    by OSC_PLACEMENT_TEST_DB_URL): exactly one wins, the rest get 409."""

    def setUp(self):
        super().setUp()
        db = api_fixtures.database()
        api_fixtures.reset_database(db)
        self.app = app_mod.make_app(conf_mod.make_conf(
            'unused://', enforce_new_defaults=False), db=db)
        resp = _request(self.app, 'POST', '/resource_providers',
                        '{"name": "raced"}')
        self.uuid = resp.json['uuid']

    def _race(self, method, path, bodies):
        statuses = []

        def writer(body):
            statuses.append(_request(self.app, method, path,
                                     body).status_int)
        threads = [threading.Thread(target=writer, args=(body,))
                   for body in bodies]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return sorted(statuses)

    def _generation(self):
        return _request(self.app, 'GET', '/resource_providers/' +
                        self.uuid).json['generation']

    def test_inventory_race(self):
        body = ('{"resource_provider_generation": 0, "inventories": '
                '{"VCPU": {"total": %d}, "DISK_GB": {"total": 9}}}')
        statuses = self._race(
            'PUT', '/resource_providers/%s/inventories' % self.uuid,
            [body % n for n in range(1, 7)])
        self.assertEqual([200] + [409] * 5, statuses)
        self.assertEqual(1, self._generation())

    def test_trait_race(self):
        body = ('{"resource_provider_generation": 0, "traits": '
                '["HW_CPU_X86_SSE%s"]}')
        statuses = self._race(
            'PUT', '/resource_providers/%s/traits' % self.uuid,
            [body % n for n in ('', '2', '3', '41', '42')])
        self.assertEqual([200] + [409] * 4, statuses)
        self.assertEqual(1, self._generation())

    def test_aggregate_race_creates_each_aggregate_once(self):
        agg = '"%s"' % uuidlib.uuid4()
        body = ('{"resource_provider_generation": 0, "aggregates": [%s]}'
                % agg)
        statuses = self._race(
            'PUT', '/resource_providers/%s/aggregates' % self.uuid,
            [body] * 5)
        self.assertEqual([200] + [409] * 4, statuses)

    def test_create_race_on_one_name(self):
        statuses = self._race('POST', '/resource_providers',
                              ['{"name": "same"}'] * 5)
        self.assertEqual([200] + [409] * 4, statuses)
