# SPDX-License-Identifier: Apache-2.0
"""``GET /resource_providers?resources=`` keeps a plan that scales.

Once psycopg prepares a statement, PostgreSQL may plan it generically,
without the values of its parameters. For the capacity filter such a plan
guessed that one inventory passes and joined every provider in nested
loops: 26 s instead of 0.2 s at 10,000 providers. The class and the amount
are therefore written into the statement; this test holds that, on
whichever database the suite runs.
"""

import testtools

from osc_placement.server.objects import provider_list
from osc_placement.server.objects import resource_class
from tests.server import fixtures


class TestCapacityFilterStatement(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.db = fixtures.database()
        fixtures.reset_database(self.db)

    def test_class_and_amount_are_part_of_the_statement(self):
        vcpu = resource_class.STANDARD_IDS['VCPU']
        with fixtures.recorded_statements(self.db.engine) as statements:
            with self.db.read() as conn:
                provider_list.matching(conn, resources={vcpu: 98765})
        listed = [s for s in statements if 'FROM inventories' in s]
        self.assertEqual(1, len(listed), statements)
        self.assertIn('98765', listed[0])
        self.assertIn('resource_class_id = %d' % vcpu, listed[0])
