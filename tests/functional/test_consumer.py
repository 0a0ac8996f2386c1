# SPDX-License-Identifier: Apache-2.0
"""``openstack resource provider consumer list`` through the real shell."""

import json
import uuid

from tests.functional import base
from tests.functional import tree_helpers

ALL_COLUMNS = ['consumer_uuid', 'resources', 'project_id', 'user_id',
               'consumer_generation', 'consumer_type']


class HeldNumaHost(tree_helpers.NumaGpuHost):
    """The NUMA/GPU host with three consumers on it.

    ``spanning`` holds the host and both NUMA nodes, ``migration`` numa1
    and the GPU (consumer type MIGRATION), ``small`` numa0 only and has no
    type.
    """

    def setUp(self):
        super().setUp()
        self.rps = self.build_numa_gpu_host()
        self.rp = {name: provider['uuid']
                   for name, provider in self.rps.items()}
        self.spanning, self.migration, self.small = sorted(
            str(uuid.uuid4()) for _ in range(3))
        self.allocate(self.spanning, {
            self.rp['host']: {'DISK_GB': 20},
            self.rp['numa0']: {'VCPU': 2, 'MEMORY_MB': 512},
            self.rp['numa1']: {'VCPU': 2, 'MEMORY_MB': 256}},
            self.project, self.user, consumer_type='INSTANCE')
        self.allocate(self.migration, {
            self.rp['numa1']: {'VCPU': 4, 'MEMORY_MB': 1024},
            self.rp['gpu']: {'VGPU': 1}},
            self.project, self.user, consumer_type='MIGRATION')
        self.allocate(self.small, {self.rp['numa0']: {'VCPU': 1}},
                      self.project, self.user)

    def consumers(self, provider, *options, **kwargs):
        return self.openstack(
            ['resource', 'provider', 'consumer', 'list', provider]
            + list(options), use_json=True, **kwargs)

    def held(self, consumer, resources, consumer_type, generation=1):
        return {'consumer_uuid': consumer, 'resources': resources,
                'project_id': self.project, 'user_id': self.user,
                'consumer_generation': generation,
                'consumer_type': consumer_type}


class TestConsumerList(HeldNumaHost, base.FunctionalTestCase):

    def test_one_provider_by_name(self):
        rows = self.consumers(self.rps['numa0']['name'])
        self.assertEqual([
            self.held(self.spanning, 'MEMORY_MB=512,VCPU=2', 'INSTANCE'),
            self.held(self.small, 'VCPU=1', 'unknown'),
        ], sorted(rows, key=lambda row: row['consumer_uuid']))
        self.assertEqual(ALL_COLUMNS, list(rows[0]))

    def test_one_provider_by_uuid_in_value_format(self):
        text = self.openstack(['resource', 'provider', 'consumer', 'list',
                               self.rp['numa0'], '-f', 'value',
                               '-c', 'consumer_uuid', '-c', 'resources'])
        self.assertEqual(['%s MEMORY_MB=512,VCPU=2' % self.spanning,
                          '%s VCPU=1' % self.small], text.splitlines())

    def test_tree_sums_over_the_providers(self):
        rows = self.consumers(self.rps['gpu']['name'], '--tree')
        self.assertEqual(ALL_COLUMNS[:2] + ['providers'] + ALL_COLUMNS[2:],
                         list(rows[0]))
        names = {key: provider['name'] for key, provider in self.rps.items()}
        expected = [
            dict(self.held(self.spanning,
                           'DISK_GB=20,MEMORY_MB=768,VCPU=4', 'INSTANCE'),
                 providers=','.join(sorted([names['host'], names['numa0'],
                                            names['numa1']]))),
            dict(self.held(self.migration,
                           'MEMORY_MB=1024,VCPU=4,VGPU=1', 'MIGRATION'),
                 providers=','.join(sorted([names['numa1'],
                                            names['gpu']]))),
            dict(self.held(self.small, 'VCPU=1', 'unknown'),
                 providers=names['numa0']),
        ]
        self.assertEqual(expected, rows)

    def test_tree_table(self):
        table = self.openstack('resource provider consumer list --tree '
                               + self.rp['host'])
        cells = [[cell.strip() for cell in line.split('|')[1:-1]]
                 for line in table.splitlines() if line.startswith('|')]
        self.assertEqual(ALL_COLUMNS[:2] + ['providers'] + ALL_COLUMNS[2:],
                         cells[0])
        self.assertEqual(
            [self.migration, 'MEMORY_MB=1024,VCPU=4,VGPU=1',
             ','.join(sorted([self.rps['numa1']['name'],
                              self.rps['gpu']['name']])),
             self.project, self.user, '1', 'MIGRATION'], cells[2])

    def test_migration_left_behind(self):
        rows = self.consumers(self.rp['host'], '--tree',
                              '--consumer-type', 'MIGRATION')
        self.assertEqual([self.migration],
                         [row['consumer_uuid'] for row in rows])
        self.assertEqual([], self.consumers(self.rp['numa0'],
                                            '--consumer-type', 'MIGRATION'))

    def test_untyped_consumers(self):
        rows = self.consumers(self.rp['host'], '--tree',
                              '--consumer-type', 'unknown')
        self.assertEqual([self.small], [row['consumer_uuid'] for row in rows])

    def test_sorted_by_cliff(self):
        # Sorting is cliff's --sort-column, as for every list command.
        text = self.openstack(['resource', 'provider', 'consumer', 'list',
                               self.rp['host'], '--tree', '--sort-column',
                               'consumer_type', '--sort-descending',
                               '-f', 'value', '-c', 'consumer_type'])
        self.assertEqual(['unknown', 'MIGRATION', 'INSTANCE'],
                         text.splitlines())

    def test_no_consumers(self):
        lonely = self.create_provider()
        self.assertEqual([], self.consumers(lonely['name']))


class TestConsumerListVersions(HeldNumaHost, base.FunctionalTestCase):

    def columns_at(self, ver, *options):
        return list(self.consumers(self.rp['numa0'], *options,
                                   version=ver)[0])

    def test_columns_follow_the_version(self):
        self.assertEqual(ALL_COLUMNS[:2], self.columns_at('1.11'))
        self.assertEqual(ALL_COLUMNS[:4], self.columns_at('1.12'))
        self.assertEqual(ALL_COLUMNS[:5], self.columns_at('1.37'))
        self.assertEqual(ALL_COLUMNS, self.columns_at('1.38'))

    def test_old_version_sends_no_request_per_consumer(self):
        calls = self.record_requests()
        self.consumers(self.rp['numa0'], version='1.11')
        self.assertEqual([], [url for _method, url, _version in calls
                              if '/allocations/' in url])

    def test_consumers_are_read_once_each(self):
        calls = self.record_requests()
        self.consumers(self.rp['host'], '--tree')
        read = sorted(url.rsplit('/', 1)[-1] for _method, url, _version
                      in calls if '/allocations/' in url)
        self.assertEqual(sorted([self.spanning, self.migration, self.small]),
                         read)

    def test_tree_needs_1_14(self):
        self.assertCommandFails(
            'resource provider consumer list --tree ' + self.rp['host'],
            base.GATE % ('1.13', '1.14'), version='1.13')

    def test_consumer_type_needs_1_38(self):
        self.assertCommandFails(
            'resource provider consumer list --consumer-type MIGRATION '
            + self.rp['host'], base.GATE % ('1.37', '1.38'), version='1.37')

    def test_negotiated_with_an_old_server(self):
        self.pretend_server_max('1.13')
        self.assertCommandFails(
            'resource provider consumer list --tree ' + self.rp['host'],
            base.GATE % ('1.13', '1.14'))
        rows = self.consumers(self.rp['numa0'])
        self.assertEqual(ALL_COLUMNS[:4], list(rows[0]))


class TestConsumerListErrors(base.FunctionalTestCase):

    def test_unknown_provider(self):
        for missing in (self.unique('no-such-host'), str(uuid.uuid4())):
            self.assertCommandFails(
                'resource provider consumer list --tree ' + missing,
                "No resource provider with a name or UUID of '%s' exists."
                % missing)


class TestDeletingAHeldHost(base.FunctionalTestCase):
    """The operator's flow: delete refused, who holds it, free, delete."""

    def test_delete_after_removing_the_holders(self):
        host = self.create_provider(self.unique('host'))
        self.openstack(['resource', 'provider', 'inventory', 'set',
                        host['uuid'], '--resource', 'VCPU=8'])
        instance, migration = str(uuid.uuid4()), str(uuid.uuid4())
        self.allocate(instance, {host['uuid']: {'VCPU': 2}},
                      consumer_type='INSTANCE')
        self.allocate(migration, {host['uuid']: {'VCPU': 1}},
                      consumer_type='MIGRATION')

        self.assertCommandFails(
            'resource provider delete ' + host['uuid'],
            'Unable to delete resource provider %s: Resource provider has '
            'allocations. (HTTP 409)' % host['uuid'])

        rows = self.openstack('resource provider consumer list '
                              + host['name'], use_json=True)
        self.assertEqual({instance: 'INSTANCE', migration: 'MIGRATION'},
                         {row['consumer_uuid']: row['consumer_type']
                          for row in rows})
        for row in rows:
            self.openstack('resource provider allocation delete '
                           + row['consumer_uuid'])
        self.assertEqual([], self.openstack(
            'resource provider consumer list ' + host['name'],
            use_json=True))

        self.openstack('resource provider delete ' + host['uuid'])
        self.assertCommandFails(
            'resource provider consumer list ' + host['uuid'],
            "No resource provider with a name or UUID of '%s' exists."
            % host['uuid'])


class SeededCloud:
    """Hosts in two aggregates, the consumers an operator looks for.

    Aggregate ``a``: ``a1`` (NUMA children ``a1-numa0``, ``a1-numa1``),
    ``a2`` and a sharing disk; aggregate ``b``: ``b1`` (NUMA children)
    and ``b2``. Consumers: ``m1`` (MIGRATION, on b2) and ``m2`` (MIGRATION,
    on a1-numa1 only: no member of the aggregate), ``i1`` (a2) and ``i2``
    (b1-numa0 and b1's disk), ``d1`` doubled across a2 and b1-numa1,
    ``d2`` doubled across a1-numa0 and a2, ``s1`` on a1-numa0 and the
    sharing disk (one tree), ``u1`` on b2 without a type. None of the
    commands below names a host.
    """

    def build_seeded_cloud(self):
        self.agg = {'a': str(uuid.uuid4()), 'b': str(uuid.uuid4())}
        self.rp = {}
        for agg, host, numa in (('a', 'a1', True), ('a', 'a2', False),
                                ('b', 'b1', True), ('b', 'b2', False)):
            self.add_host(agg, host, numa)
        disk = self.create_provider(self.unique('shared-disk'))
        self.set_inventory(disk['uuid'], {'DISK_GB': 1000})
        self.set_provider_traits(disk['uuid'], ['MISC_SHARES_VIA_AGGREGATE'])
        self.set_provider_aggregates(disk['uuid'], [self.agg['a']])
        self.rp['disk'] = disk
        self.consumer = {}
        for name, consumer_type, holds in (
                ('m1', 'MIGRATION', {'b2': {'VCPU': 2}}),
                ('m2', 'MIGRATION', {'a1-numa1': {'VCPU': 1}}),
                ('i1', 'INSTANCE', {'a2': {'VCPU': 1, 'DISK_GB': 10}}),
                ('i2', 'INSTANCE', {'b1-numa0': {'VCPU': 1},
                                    'b1': {'DISK_GB': 5}}),
                ('d1', 'INSTANCE', {'a2': {'VCPU': 1},
                                    'b1-numa1': {'VCPU': 1}}),
                ('d2', 'INSTANCE', {'a1-numa0': {'VCPU': 1},
                                    'a2': {'VCPU': 1}}),
                ('s1', 'INSTANCE', {'a1-numa0': {'VCPU': 2},
                                    'disk': {'DISK_GB': 20}}),
                ('u1', None, {'b2': {'VCPU': 1}})):
            self.consumer[name] = str(uuid.uuid4())
            self.allocate(self.consumer[name],
                          {self.rp[key]['uuid']: amounts
                           for key, amounts in holds.items()},
                          self.project, self.user, consumer_type=consumer_type)
        self.name_of = {uuid_: name for name, uuid_ in self.consumer.items()}

    def add_host(self, agg, host, numa):
        self.rp[host] = root = self.create_provider(self.unique(host))
        self.set_inventory(root['uuid'], {'VCPU': 8, 'DISK_GB': 100})
        self.set_provider_aggregates(root['uuid'], [self.agg[agg]])
        if numa:
            for cell in ('numa0', 'numa1'):
                child = self.create_provider(root['name'] + '-' + cell,
                                             parent=root['uuid'])
                self.set_inventory(child['uuid'], {'VCPU': 8})
                self.rp[host + '-' + cell] = child

    def cloud_consumers(self, *options, **kwargs):
        """The rows of ``consumer list`` without a provider, by the names
        of this test's consumers (the URL modes share one database)."""
        rows = self.openstack(
            ['resource', 'provider', 'consumer', 'list'] + list(options),
            use_json=True, **kwargs)
        return {self.name_of[row['consumer_uuid']]: row for row in rows
                if row['consumer_uuid'] in self.name_of}


class TestConsumerListCloud(SeededCloud, base.FunctionalTestCase):

    def setUp(self):
        super().setUp()
        self.build_seeded_cloud()

    def test_migrations_left_anywhere(self):
        rows = self.cloud_consumers('--consumer-type', 'migration')
        self.assertEqual({'m1', 'm2'}, set(rows))
        self.assertEqual(
            {'consumer_uuid': self.consumer['m2'], 'resources': 'VCPU=1',
             'providers': self.rp['a1-numa1']['name'], 'trees': 1,
             'project_id': self.project, 'user_id': self.user,
             'consumer_generation': 1, 'consumer_type': 'MIGRATION'},
            rows['m2'])

    def test_the_whole_cloud_is_exact_for_a_project(self):
        # The project is this test's own, so nothing else can match.
        rows = self.openstack(['resource', 'provider', 'consumer', 'list',
                               '--project', self.project, '--consumer-type',
                               'MIGRATION', '-f', 'value',
                               '-c', 'consumer_uuid'])
        self.assertEqual(sorted([self.consumer['m1'], self.consumer['m2']]),
                         rows.split())

    def test_doubled_across_compute_trees(self):
        rows = self.cloud_consumers('--doubled')
        self.assertEqual({'d1', 'd2'}, set(rows))
        self.assertEqual(2, rows['d1']['trees'])
        self.assertEqual(','.join(sorted([self.rp['a2']['name'],
                                          self.rp['b1-numa1']['name']])),
                         rows['d1']['providers'])

    def test_a_sharing_disk_is_not_a_second_tree(self):
        rows = self.cloud_consumers()
        self.assertEqual(set(self.consumer), set(rows))
        self.assertEqual(
            {'m1': 1, 'm2': 1, 'i1': 1, 'i2': 1, 'd1': 2, 'd2': 2, 's1': 1,
             'u1': 1},
            {name: row['trees'] for name, row in rows.items()})
        self.assertEqual('DISK_GB=20,VCPU=2', rows['s1']['resources'])

    def test_aggregate_takes_the_trees_of_its_members(self):
        rows = self.cloud_consumers('--aggregate', self.agg['a'])
        # m2 holds only a NUMA node of a1, which is no member itself.
        self.assertEqual({'m2', 'i1', 'd1', 'd2', 's1'}, set(rows))
        # What d1 holds in the aggregate, and both of its trees.
        self.assertEqual(('VCPU=1', self.rp['a2']['name'], 2),
                         (rows['d1']['resources'], rows['d1']['providers'],
                          rows['d1']['trees']))
        self.assertEqual({'m1', 'i2', 'd1', 'u1'}, set(self.cloud_consumers(
            '--aggregate', self.agg['b'])))

    def test_aggregate_with_filters(self):
        self.assertEqual({'d1'}, set(self.cloud_consumers(
            '--aggregate', self.agg['b'], '--doubled')))
        self.assertEqual({'m2'}, set(self.cloud_consumers(
            '--aggregate', self.agg['a'], '--consumer-type', 'Migration')))

    def test_untyped_and_by_user(self):
        self.assertEqual({'u1'}, set(self.cloud_consumers(
            '--consumer-type', 'unknown')))
        self.assertEqual(set(), set(self.cloud_consumers(
            '--user', str(uuid.uuid4()))))

    def test_unknown_consumer_type_fails(self):
        result = self.assertCommandFails(
            'resource provider consumer list --consumer-type BOGUS',
            "Unknown consumer type 'BOGUS': no consumer in the cloud has "
            "it (the types held there: ")
        self.assertEqual('', result.stdout)
        result = self.assertCommandFails(
            'resource provider consumer list --consumer-type migraton',
            "Unknown consumer type 'MIGRATON'")
        self.assertIn('Did you mean MIGRATION?', result.stderr)

    def test_invalid_consumer_type_fails_before_reading(self):
        calls = self.record_requests()
        self.assertCommandFails(
            ['resource', 'provider', 'consumer', 'list', '--consumer-type',
             'live-migration'],
            "Invalid consumer type 'live-migration'")
        self.assertEqual([], [call for call in calls
                              if 'allocations' in call[1]])

    def test_a_project_lacking_the_type_reads_no_provider(self):
        calls = self.record_requests()
        lonely = str(uuid.uuid4())
        self.assertCommandFails(
            ['resource', 'provider', 'consumer', 'list', '--project',
             self.project, '--consumer-type', 'BOGUS'],
            "Unknown consumer type 'BOGUS': no consumer in project %s has "
            "it (the types held there: INSTANCE, MIGRATION, unknown)."
            % self.project)
        result = self.openstack(
            ['resource', 'provider', 'consumer', 'list', '--project',
             lonely, '--consumer-type', 'MIGRATION', '-f', 'value'],
            may_fail=True)
        self.assertEqual((0, ''), (result.code, result.stdout))
        self.assertIn('No consumer in the cloud matches: consumer type '
                      'MIGRATION, project %s.' % lonely, result.stderr)
        self.assertEqual([], [call for call in calls
                              if 'allocations' in call[1]])

    def test_nothing_matches_is_said(self):
        result = self.openstack(
            ['resource', 'provider', 'consumer', 'list', '--project',
             str(uuid.uuid4()), '--consumer-type', 'INSTANCE', '-f', 'json'],
            may_fail=True)
        self.assertEqual((0, []), (result.code, json.loads(result.stdout)))
        self.assertIn('No consumer in the cloud matches: consumer type '
                      'INSTANCE, project ', result.stderr)

    def test_details_only_when_needed(self):
        calls = self.record_requests()
        rows = self.openstack(['resource', 'provider', 'consumer', 'list',
                               '--doubled', '-f', 'value',
                               '-c', 'consumer_uuid', '-c', 'trees'])
        self.assertIn('%s 2' % self.consumer['d1'], rows.splitlines())
        paths = [call[1].split('?')[0] for call in calls]
        self.assertEqual([], [path for path in paths
                              if path.startswith('/allocations/')])
        read = [path for path in paths if path.endswith('/allocations')]
        self.assertEqual(len(read), len(set(read)))
        self.assertLessEqual({'/resource_providers/%s/allocations' % rp['uuid']
                              for rp in self.rp.values()}, set(read))

    def test_doubled_reads_only_the_doubled_consumers(self):
        calls = self.record_requests()
        rows = self.cloud_consumers('--doubled')
        self.assertEqual({'d1', 'd2'}, set(rows))
        self.assertEqual(self.project, rows['d1']['project_id'])
        read = {call[1].rsplit('/', 1)[-1] for call in calls
                if call[1].startswith('/allocations/')}
        self.assertEqual({'d1', 'd2'},
                         {self.name_of[uuid_] for uuid_ in read
                          if uuid_ in self.name_of})

    def test_a_consumer_deleted_meanwhile_is_left_out(self):
        b2 = '/resource_providers/%s/allocations' % self.rp['b2']['uuid']

        def delete_m1(send):
            send('DELETE', '/allocations/' + self.consumer['m1'])

        with self.meanwhile('GET', b2, delete_m1):
            rows = self.cloud_consumers('--consumer-type', 'MIGRATION')
        self.assertEqual({'m2'}, set(rows))

    def test_a_server_error_on_a_consumer_is_retried(self):
        path = '/allocations/' + self.consumer['m2']
        seen = []

        def hook(environ):
            if environ['PATH_INFO'] != path:
                return None
            seen.append(path)
            if len(seen) > 1:
                return None
            return ('503 Service Unavailable',
                    [('Content-Type', 'text/html')],
                    b'<html><h1>Service Unavailable</h1></html>')

        self.hook_server(hook)
        self.useFixture(base.fixtures.MonkeyPatch(
            'osc_placement.resources.common.SERVER_ERROR_BACKOFF', 0.001))
        self.assertEqual({'m1', 'm2'}, set(self.cloud_consumers(
            '--consumer-type', 'MIGRATION')))
        self.assertEqual(2, len(seen))

    def test_provider_form_takes_any_case(self):
        rows = self.openstack(['resource', 'provider', 'consumer', 'list',
                               self.rp['b2']['name'], '--consumer-type',
                               'migration', '-f', 'value',
                               '-c', 'consumer_uuid'])
        self.assertEqual([self.consumer['m1']], rows.split())
        self.assertCommandFails(
            ['resource', 'provider', 'consumer', 'list',
             self.rp['b2']['name'], '--consumer-type', 'BOGUS'],
            "Unknown consumer type 'BOGUS': no consumer in '%s' has it"
            % self.rp['b2']['name'])

    def test_options_of_the_other_form(self):
        self.assertCommandFails(
            ['resource', 'provider', 'consumer', 'list',
             self.rp['b2']['name'], '--doubled'],
            '--doubled lists consumers without a provider')
        self.assertCommandFails(
            'resource provider consumer list --tree',
            '--tree needs a provider')
        self.assertCommandFails(
            'resource provider consumer list --aggregate not-a-uuid',
            "Invalid aggregate 'not-a-uuid'")
        lonely = str(uuid.uuid4())
        self.assertCommandFails(
            'resource provider consumer list --aggregate ' + lonely,
            'No resource provider is in aggregate %s.' % lonely)

    def test_gates_and_columns_by_version(self):
        self.assertCommandFails('resource provider consumer list --doubled',
                                base.GATE % ('1.17', '1.18'), version='1.17')
        self.assertCommandFails(
            'resource provider consumer list --aggregate ' + self.agg['a'],
            base.GATE % ('1.13', '1.14'), version='1.13')
        rows = self.cloud_consumers(version='1.17')
        self.assertEqual(['consumer_uuid', 'resources', 'providers',
                          'project_id', 'user_id'], list(rows['d1']))
        self.assertEqual(set(self.consumer), set(rows))
