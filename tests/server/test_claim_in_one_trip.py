# SPDX-License-Identifier: Apache-2.0
"""The one-round-trip claim's compare-and-swap, against a writer that
comes between its two statements (PostgreSQL: the only database the
claim takes one round trip on).

The server sends the locks and the claim's statement back to back; the
test sends them apart, to put other writers in the gap deterministically.

In the suite's PostgreSQL pass only (``load_tests``)::

    OSC_PLACEMENT_TEST_DB_URL=postgresql+psycopg://postgres@127.0.0.1/ \\
        .venv/bin/python -m testtools.run tests.server.test_claim_in_one_trip
"""

import threading
import uuid as uuidlib

from osc_placement.server.db import pipeline
from osc_placement.server.objects import allocation as alloc_obj
from tests.server import fixtures as server_fixtures
from tests.server import test_allocations


def _statements(conn, write):
    """The one-trip claim's (lock, claim) statements for ``write``."""
    return alloc_obj._one_trip_statements(conn, [write],
                                          list(write.allocations))


class TestUnlockedProvider(test_allocations.AllocationTestCase):

    def write(self, consumer, provider):
        return alloc_obj.ConsumerWrite(
            uuid=consumer, project_id='p', user_id='u',
            allocations={provider: {'VCPU': 1}}, generation=None,
            consumer_type='INSTANCE')

    def test_a_claim_that_took_no_lock_loses_its_swap(self):
        """A claim of an existing consumer takes no lock; the consumer is
        deleted before its statement, which then finds nothing against
        it, while another claim takes the provider's last unit: the
        swap fails, nothing is inserted, and the provider stays within
        its capacity."""
        full = self.provider('full', {'VCPU': {'total': 1}})
        other = self.provider('other', {'VCPU': {'total': 1}})
        existing = str(uuidlib.uuid4())
        self.assertEqual(204, self.claim({other: {'VCPU': 1}}, existing)[0])
        late, first = self.db.engine.connect(), self.db.engine.connect()
        self.addCleanup(late.close)
        self.addCleanup(first.close)
        late.begin()
        first.begin()
        late_lock, late_claim = _statements(late, self.write(existing, full))
        first_lock, first_claim = _statements(
            first, self.write(str(uuidlib.uuid4()), full))
        pipeline.run(late, [late_lock])
        self.assertEqual(204, self.call('DELETE',
                                        '/allocations/' + existing)[0])
        _, [(claimed, swapped)] = pipeline.run(first, [first_lock,
                                                       first_claim])
        self.assertEqual((True, True), (claimed, swapped))
        answers = []
        waiting = threading.Thread(target=lambda: answers.append(
            pipeline.run(late, [late_claim], commit=True)))
        waiting.start()
        # The late claim's update waits for the first claim's lock.
        waiting.join(0.5)
        self.assertTrue(waiting.is_alive())
        pipeline.run(first, [], commit=True)
        waiting.join(30)
        [[[(claimed, swapped)]]] = answers
        self.assertEqual((True, False), (claimed, swapped))
        _, usages = self.call('GET', '/resource_providers/%s/usages' % full)
        self.assertEqual({'VCPU': 1}, usages['usages'])
        _, allocations = self.call('GET', '/allocations/' + existing)
        self.assertEqual({}, allocations['allocations'])


def load_tests(loader, standard_tests, pattern):
    return server_fixtures.on_postgresql_only(standard_tests)
