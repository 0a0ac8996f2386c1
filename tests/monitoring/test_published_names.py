# SPDX-License-Identifier: Apache-2.0
"""The metric reference (doc/source/server/monitoring.rst) and the live
server's GET /metrics name the same families, with the same types and
labels: a metric added, renamed or dropped in the code alone fails here.

The server runs with per-provider and per-aggregate series on, after a
request of each kind that makes a labelled family appear (a family with
labels has no series until a first value, and prometheus_client's
multi-process mode publishes nothing for it until then)."""

import concurrent.futures
import re
import time
import uuid

import testtools

from osc_placement.server.db import engine as db_engine
from osc_placement.server import metrics
from tests.monitoring import placement_run
from tests.monitoring import reference
from tests.monitoring import shipped

# How long to keep racing trait creations for a write to be re-run.
RACE_SECONDS = 30
RACERS = 8
REASON_VALUE = re.compile(r'\breason="([^"]*)"')


def published(families):
    """{served name: Metric(name, type, labels)} of parsed families: a
    counter under its name with _total, as it is served and documented;
    labels without a histogram's "le"."""
    metrics = {}
    for family in families.values():
        name = family.name + ('_total' if family.type == 'counter' else '')
        labels = frozenset(label for sample in family.samples
                           for label in sample.labels) - {'le'}
        metrics[name] = reference.Metric(name, family.type, labels)
    return metrics


class TestPublishedNamesAreDocumented(testtools.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.server = placement_run.PlacementRun(
            workers=2, metrics={'per_provider': 'true',
                                'per_aggregate': 'true'})
        try:
            cls.server.setUp()
            cls.uuids = placement_run.build_cloud(cls.server)
            cls._request_each_kind()
            # Each worker writes its request counts every FLUSH_SECONDS:
            # the worker that does not answer the scrape may lag by that.
            time.sleep(2 * metrics.FLUSH_SECONDS)
            cls.families = cls.server.families()
        except BaseException:
            cls.server.cleanUp()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanUp()
        super().tearDownClass()

    @classmethod
    def _request_each_kind(cls):
        server = cls.server
        # Candidates returned and cut by the limit; an empty answer.
        server.call('GET', '/allocation_candidates?resources=VCPU:1&limit=1')
        server.call('GET', '/allocation_candidates?resources=VCPU:100000')
        # A 409: a provider's name taken.
        status, _ = server.request('POST', '/resource_providers',
                                   {'name': 'cn1'})
        assert status == 409, status
        cls._race_trait_creations()

    @classmethod
    def _race_trait_creations(cls):
        """The same new trait created by several clients at once, until
        one loses the race for the name and is re-run (the two workers
        write concurrently)."""
        deadline = time.monotonic() + RACE_SECONDS
        with concurrent.futures.ThreadPoolExecutor(RACERS) as pool:
            while time.monotonic() < deadline:
                path = '/traits/CUSTOM_RACE_%s' % uuid.uuid4().hex.upper()
                list(pool.map(lambda _: cls.server.request('PUT', path),
                              range(RACERS)))
                if 'placement_write_retries' in cls.server.families():
                    return

    def test_every_published_family_is_documented(self):
        documented = reference.documented_metrics()
        served = published(self.families)
        self.assertEqual([], sorted(set(served) - set(documented)))

    def test_every_documented_metric_is_published(self):
        documented = reference.documented_metrics()
        served = published(self.families)
        self.assertEqual([], sorted(set(documented) - set(served)))

    def test_types_and_labels_as_documented(self):
        documented = reference.documented_metrics()
        for name, metric in published(self.families).items():
            if name in documented:
                self.assertEqual(documented[name], metric)

    def test_label_values_the_rules_use(self):
        # etc/prometheus's rules and their tests name a route template
        # and a re-run reason: the server's own values.
        requests = self.families['placement_http_request_duration_seconds']
        self.assertIn('/allocation_candidates',
                      {s.labels['route'] for s in requests.samples})
        self.assertIn('/resource_providers/{uuid}/inventories',
                      {s.labels['route'] for s in requests.samples})
        retries = self.families['placement_write_retries']
        self.assertIn(db_engine.DUPLICATE_KEY,
                      {s.labels['reason'] for s in retries.samples})

    def test_rule_tests_use_the_servers_reasons(self):
        # A generation race is too rare to provoke here; the reasons the
        # rule tests name must be among those the engine counts.
        reasons = {db_engine.GENERATION_CONFLICT, db_engine.DUPLICATE_KEY,
                   db_engine.DEADLOCK, db_engine.LOCK_WAIT_TIMEOUT,
                   db_engine.SERIALIZATION_FAILURE}
        tests = shipped.load_yaml(shipped.RULE_TESTS)
        named = set()
        for test in tests['tests']:
            for item in test['input_series']:
                named.update(REASON_VALUE.findall(item['series']))
        self.assertTrue(named)
        self.assertEqual(set(), named - reasons)
