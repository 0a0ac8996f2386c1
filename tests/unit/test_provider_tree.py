# SPDX-License-Identifier: Apache-2.0
"""The pure shaping of ``tree show`` and ``consumer list`` output."""

from osc_lib import exceptions
import testtools

from osc_placement import provider_rules
from osc_placement.resources import common
from osc_placement.resources import consumer
from osc_placement.resources import provider_tree


def inventory(total, reserved=0, ratio=1.0):
    return {'total': total, 'reserved': reserved, 'allocation_ratio': ratio,
            'min_unit': 1, 'max_unit': total, 'step_size': 1}


def provider(uuid, name, parent=None, generation=1):
    return {'uuid': uuid, 'name': name, 'generation': generation,
            'parent_provider_uuid': parent}


def details(inventories=None, usages=None, traits=(), aggregates=()):
    return {'inventories': inventories or {}, 'usages': usages or {},
            'traits': list(traits), 'aggregates': list(aggregates)}


class TestCapacity(testtools.TestCase):

    def test_reserved_then_ratio_truncated(self):
        self.assertEqual(135, provider_rules.capacity(inventory(100, 10, 1.5)))
        # 3 * 1.33 = 3.99: Placement truncates, so does the capacity.
        self.assertEqual(3, provider_rules.capacity(inventory(3, 0, 1.33)))
        self.assertEqual(0, provider_rules.capacity(inventory(4, 4, 16.0)))

    def test_summary_and_text(self):
        summary = provider_tree.resources_summary(
            {'VCPU': inventory(8, 0, 4.0), 'MEMORY_MB': inventory(4096, 512)},
            {'VCPU': 3})
        self.assertEqual(['MEMORY_MB', 'VCPU'], list(summary))
        self.assertEqual({'used': 3, 'capacity': 32, 'total': 8,
                          'reserved': 0, 'allocation_ratio': 4.0},
                         summary['VCPU'])
        self.assertEqual(0, summary['MEMORY_MB']['used'])
        self.assertEqual('MEMORY_MB=0/3584,VCPU=3/32',
                         common.used_of_capacity_text(summary))

    def test_no_inventory(self):
        self.assertEqual('', common.used_of_capacity_text(
            provider_tree.resources_summary({}, {})))


class TestBuildTree(testtools.TestCase):

    # Listed child before parent, and children out of name order.
    PROVIDERS = [
        provider('g', 'gpu', parent='n1'),
        provider('n1', 'numa1', parent='h'),
        provider('h', 'host'),
        provider('n0', 'numa0', parent='h'),
    ]
    DETAILS = {
        'h': details({'DISK_GB': inventory(100, 10, 1.5)}, {'DISK_GB': 20},
                     traits=['B', 'A'], aggregates=['agg']),
        'n0': details({'VCPU': inventory(8, 0, 4.0)}),
        'n1': details({'VCPU': inventory(8, 0, 4.0)}, {'VCPU': 4}),
        'g': details({'VGPU': inventory(4)}, {'VGPU': 1}, traits=['T']),
    }

    def tree(self):
        return provider_tree.build_tree(self.PROVIDERS, self.DETAILS)

    def test_nested_and_sorted_by_name(self):
        root = self.tree()
        self.assertEqual('h', root['uuid'])
        self.assertEqual(['n0', 'n1'],
                         [child['uuid'] for child in root['children']])
        self.assertEqual(['g'], [child['uuid'] for child in
                                 root['children'][1]['children']])
        self.assertEqual(['A', 'B'], root['traits'])
        self.assertEqual(list(provider_tree.NODE_KEYS), list(root))

    def test_rows_depth_first_and_indented(self):
        self.assertEqual([
            ('host', 'h', 1, 'DISK_GB=20/135', 2, 1),
            ('  numa0', 'n0', 1, 'VCPU=0/32', 0, 0),
            ('  numa1', 'n1', 1, 'VCPU=4/32', 0, 0),
            ('    gpu', 'g', 1, 'VGPU=1/4', 1, 0),
        ], provider_tree.tree_rows(self.tree()))

    def test_a_lone_root(self):
        root = provider_tree.build_tree([provider('h', 'host')],
                                        {'h': details()})
        self.assertEqual([('host', 'h', 1, '', 0, 0)],
                         provider_tree.tree_rows(root))

    def test_two_roots_are_refused(self):
        self.assertRaises(ValueError, provider_tree.build_tree,
                          [provider('a', 'a'), provider('b', 'b')],
                          {'a': details(), 'b': details()})


class TestHoldings(testtools.TestCase):

    def test_summed_per_class_over_providers(self):
        held = consumer.holdings([
            ('numa1', {'c1': {'resources': {'VCPU': 2, 'MEMORY_MB': 512}},
                       'c2': {'resources': {'VCPU': 1}}}),
            ('gpu', {'c1': {'resources': {'VGPU': 1}}}),
            ('numa0', {'c1': {'resources': {'VCPU': 2}}}),
        ])
        self.assertEqual({
            'c1': {'resources': {'MEMORY_MB': 512, 'VCPU': 4, 'VGPU': 1},
                   'providers': ['gpu', 'numa0', 'numa1']},
            'c2': {'resources': {'VCPU': 1}, 'providers': ['numa1']},
        }, held)
        self.assertEqual('MEMORY_MB=512,VCPU=4,VGPU=1',
                         common.amounts_text(held['c1']['resources']))

    def test_nothing_held(self):
        self.assertEqual({}, consumer.holdings([('rp', {})]))


class TestConsumerRows(testtools.TestCase):

    def test_columns_by_version_and_tree(self):
        self.assertEqual(('consumer_uuid', 'resources'),
                         consumer.consumer_columns('1.11', tree=False))
        self.assertEqual(('consumer_uuid', 'resources', 'project_id',
                          'user_id'),
                         consumer.consumer_columns('1.14', tree=False))
        self.assertEqual(('consumer_uuid', 'resources', 'providers',
                          'project_id', 'user_id', 'consumer_generation',
                          'consumer_type'),
                         consumer.consumer_columns('1.38', tree=True))

    def test_row_from_the_consumer_read(self):
        detail = {'allocations': {}, 'project_id': 'p', 'user_id': 'u',
                  'consumer_generation': 3, 'consumer_type': 'MIGRATION'}
        entry = {'resources': {'VCPU': 1}, 'providers': ['a', 'b']}
        columns = consumer.consumer_columns('1.38', tree=True)
        self.assertEqual(('c', 'VCPU=1', 'a,b', 'p', 'u', 3, 'MIGRATION'),
                         consumer.consumer_row('c', entry, detail, columns))


class TestConsumerFilters(testtools.TestCase):

    def detail(self, consumer_type=None, project='p'):
        return {'allocations': {'rp': {'resources': {'VCPU': 1}}},
                'project_id': project, 'user_id': 'u',
                'consumer_type': consumer_type or 'unknown'}

    def test_types_in_any_case(self):
        self.assertEqual('MIGRATION',
                         consumer.normalized_consumer_type('migration'))
        self.assertEqual('unknown',
                         consumer.normalized_consumer_type('Unknown'))
        self.assertEqual('CUSTOM_9',
                         consumer.normalized_consumer_type('custom_9'))
        self.assertIsNone(consumer.normalized_consumer_type(None))

    def test_invalid_types_refused(self):
        for value in ('live-migration', '', 'X' * 256, 'MIGRATION '):
            self.assertRaises(exceptions.CommandError,
                              consumer.normalized_consumer_type, value)

    def test_a_type_nobody_holds_is_refused_unless_nova_writes_it(self):
        gone = dict(self.detail('GONE'), allocations={})
        held = consumer.types_held(
            [self.detail('INSTANCE'), None, self.detail(), gone])
        self.assertEqual({'INSTANCE', 'unknown'}, held)
        consumer.check_type_is_held('MIGRATION', held, 'the cloud')
        consumer.check_type_is_held('INSTANCE', held, 'the cloud')
        error = self.assertRaises(exceptions.CommandError,
                                  consumer.check_type_is_held, 'BOGUS',
                                  held, 'the cloud')
        self.assertEqual("Unknown consumer type 'BOGUS': no consumer in the "
                         "cloud has it (the types held there: INSTANCE, "
                         "unknown).", str(error))
        self.assertIn('Did you mean MIGRATION?',
                      consumer.type_guess_note('MIGRATON'))
        self.assertIsNone(consumer.type_guess_note('unknown'))

    def test_matches(self):
        wanted = {'consumer_type': 'MIGRATION', 'project_id': 'p',
                  'user_id': None}
        self.assertTrue(consumer.matches(self.detail('MIGRATION'), wanted))
        self.assertFalse(consumer.matches(self.detail('INSTANCE'), wanted))
        self.assertFalse(consumer.matches(
            self.detail('MIGRATION', project='q'), wanted))
        gone = dict(self.detail('MIGRATION'), allocations={})
        self.assertFalse(consumer.matches(gone, wanted))
        self.assertTrue(consumer.matches(None, {'consumer_type': None}))


class TestComputeTrees(testtools.TestCase):

    def test_sharing_providers_are_no_tree(self):
        root_of = {'n0': 'h1', 'n1': 'h1', 'h1': 'h1', 'h2': 'h2'}
        self.assertEqual({'h1'}, consumer.compute_trees(
            ['n0', 'n1', 'h1', 'disk'], root_of, {'disk'}))
        self.assertEqual({'h1', 'h2'}, consumer.compute_trees(
            ['n0', 'h2', 'disk'], root_of, {'disk'}))
        # A provider created meanwhile is its own tree.
        self.assertEqual({'new'}, consumer.compute_trees(['new'], {}, set()))

    def test_trees_of_the_members(self):
        listed = [provider('h1', 'h1'),
                  dict(provider('n0', 'n0', parent='h1'),
                       root_provider_uuid='h1'),
                  provider('h2', 'h2'), provider('disk', 'disk')]
        self.assertEqual(['h1', 'n0', 'disk'], [
            rp['uuid'] for rp in consumer.in_trees_of(
                listed, [listed[0], listed[3]])])


class TestWorkers(testtools.TestCase):

    def test_no_more_threads_than_pooled_connections(self):
        # More would make urllib3 warn "Connection pool is full" on stderr
        # (seen with 16 against a real server: the functional test
        # test_nothing_on_stderr in OSC_PLACEMENT_FUNCTIONAL_SERVER=process).
        from requests import adapters
        self.assertLessEqual(common.WORKERS,
                             adapters.DEFAULT_POOLSIZE)
