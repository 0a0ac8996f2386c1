# SPDX-License-Identifier: Apache-2.0
"""``openstack resource provider aggregate list/set``."""

import uuid

from tests.functional import base


class AggregateTests:
    """The same flows below 1.19 (a bare list) and from 1.19 (with the
    provider generation)."""

    def setUp(self):
        super().setUp()
        self.rp = self.create_provider()['uuid']

    def generation_args(self):
        return []

    def aggregate_set(self, *aggregates, **kwargs):
        command = ['resource', 'provider', 'aggregate', 'set', self.rp]
        for aggregate in aggregates:
            command += ['--aggregate', aggregate]
        return self.openstack(command + self.generation_args(), **kwargs)

    def aggregate_list(self, rp=None):
        return self.openstack('resource provider aggregate list '
                              + (rp or self.rp), use_json=True)

    def test_set_list_clear(self):
        self.assertEqual([], self.aggregate_list())
        agg1, agg2 = sorted(str(uuid.uuid4()) for _ in range(2))
        rows = self.aggregate_set(agg1, agg2, use_json=True)
        self.assertEqual([{'uuid': agg1}, {'uuid': agg2}],
                         sorted(rows, key=lambda r: r['uuid']))
        self.assertEqual(rows, self.aggregate_list())
        # A table has the single column uuid.
        table = self.openstack('resource provider aggregate list ' + self.rp)
        self.assertEqual(['uuid'], [cell.strip() for cell in
                                    table.splitlines()[1].split('|')[1:-1]])
        # Set replaces; no --aggregate clears.
        agg3 = str(uuid.uuid4())
        self.assertEqual([{'uuid': agg3}],
                         self.aggregate_set(agg3, use_json=True))
        self.assertEqual([{'uuid': agg3}], self.aggregate_list())
        self.assertEqual([], self.aggregate_set(use_json=True))
        self.assertEqual([], self.aggregate_list())
        # Another provider was never touched.
        self.assertEqual([], self.aggregate_list(
            self.create_provider()['uuid']))

    def test_invalid_aggregate_uuid(self):
        result = self.assertCommandFails(
            ['resource', 'provider', 'aggregate', 'set', self.rp,
             '--aggregate', 'not-a-uuid'] + self.generation_args(),
            "is not a 'uuid'")
        self.assertIn('(HTTP 400)', result.stderr)
        self.assertEqual([], self.aggregate_list())

    def test_unknown_provider(self):
        missing = str(uuid.uuid4())
        self.assertCommandFails(
            'resource provider aggregate list ' + missing,
            'No resource provider with uuid %s found (HTTP 404)' % missing)
        self.assertCommandFails(
            ['resource', 'provider', 'aggregate', 'set', missing,
             '--aggregate', str(uuid.uuid4())] + self.generation_args(),
            'No resource provider with uuid %s found (HTTP 404)' % missing)


class TestAggregate_1_1(AggregateTests, base.FunctionalTestCase):
    VERSION = '1.1'

    def test_body_is_a_list_and_generation_unchanged(self):
        calls = self.record_requests()
        self.aggregate_set(str(uuid.uuid4()))
        self.assertEqual([('PUT', '/resource_providers/%s/aggregates'
                           % self.rp, 'placement 1.1')], calls)
        # Before 1.19 an aggregate write does not bump the generation.
        self.assertEqual(0, self.provider_generation(self.rp))

    def test_generation_option_gate(self):
        self.assertCommandFails(
            ['resource', 'provider', 'aggregate', 'set', self.rp,
             '--generation', '0'], base.GATE % ('1.1', '1.19'))
        self.assertCommandFails(
            ['resource', 'provider', 'aggregate', 'set', self.rp,
             '--generation', '0'], base.GATE % ('1.18', '1.19'),
            version='1.18')


class TestAggregate_1_19(AggregateTests, base.FunctionalTestCase):
    VERSION = '1.19'

    def generation_args(self):
        return ['--generation', str(self.provider_generation(self.rp))]

    def test_generation_bumps_and_stale_generation_fails(self):
        self.openstack(['resource', 'provider', 'aggregate', 'set', self.rp,
                        '--aggregate', str(uuid.uuid4()),
                        '--generation', '0'])
        self.assertEqual(1, self.provider_generation(self.rp))
        before = self.aggregate_list()
        self.assertCommandFails(
            ['resource', 'provider', 'aggregate', 'set', self.rp,
             '--aggregate', str(uuid.uuid4()), '--generation', '0'],
            "Resource provider's generation already changed. Please update "
            "the generation and try again. (HTTP 409)")
        self.assertEqual(before, self.aggregate_list())

    def test_generation_is_required(self):
        result = self.assertCommandFails(
            ['resource', 'provider', 'aggregate', 'set', self.rp,
             '--aggregate', str(uuid.uuid4())],
            'A generation must be specified.')
        self.assertEqual('A generation must be specified.',
                         result.stderr.strip())
        self.assertCommandFails(
            ['resource', 'provider', 'aggregate', 'set', self.rp,
             '--generation', 'one'],
            "argument --generation: invalid int value: 'one'", code=2)


class TestAggregateBelowMinimum(base.FunctionalTestCase):
    VERSION = '1.0'

    def test_commands_need_1_1(self):
        rp = self.create_provider()['uuid']
        self.assertCommandFails('resource provider aggregate list ' + rp,
                                base.GATE % ('1.0', '1.1'))
        self.assertCommandFails(
            'resource provider aggregate set %s --aggregate %s'
            % (rp, uuid.uuid4()), base.GATE % ('1.0', '1.1'))


class TestAggregateNegotiated(base.FunctionalTestCase):

    def test_negotiated_version_needs_generation(self):
        rp = self.create_provider()['uuid']
        agg = str(uuid.uuid4())
        self.assertCommandFails(
            'resource provider aggregate set %s --aggregate %s' % (rp, agg),
            'A generation must be specified.')
        rows = self.openstack(
            'resource provider aggregate set %s --aggregate %s '
            '--generation 0' % (rp, agg), use_json=True)
        self.assertEqual([{'uuid': agg}], rows)
        # Providers are found by aggregate through the list command too.
        self.assertEqual([rp], [p['uuid'] for p in self.openstack(
            'resource provider list --member-of ' + agg, use_json=True)])
