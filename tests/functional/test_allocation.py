# SPDX-License-Identifier: Apache-2.0
"""``resource provider allocation set/unset/show/delete`` against our server.

The same tests run at every microversion that changes these commands:
1.0 (allocations as a list), 1.8 (project and user required), 1.12
(allocations as a dict; project and user shown; unset exists), 1.28
(consumer generations), 1.38 (consumer types) and 1.39 (the maximum);
then the negotiated default, which stops at 1.37 for these commands unless
``--consumer-type`` is given.
"""

import json
import uuid

from osc_placement import version
from tests.functional import base

REQUIRED = ('allocation set: error: the '
            'following arguments are required: ')
USER_WARNING = ('--project-id and --user-id options do not affect '
                'allocation for --os-placement-api-version less than 1.8')
TYPE_WARNING = ('--consumer-type option does not affect allocation for '
                '--os-placement-api-version less than 1.38')
NO_ALLOCATIONS = "No allocations for consumer '%s'"
CAPACITY = ("Unable to allocate inventory: Unable to create allocation for "
            "'%s' on resource provider '%s'. The requested amount would "
            "exceed the capacity. (HTTP 409)")
GENERATION_CONFLICT = ('consumer generation conflict - expected %s but '
                       'got %s (HTTP 409)')


def columns_at(ver):
    columns = ['resource_provider', 'generation', 'resources']
    if version.at_least(ver, '1.12'):
        columns += ['project_id', 'user_id']
    if version.at_least(ver, '1.38'):
        columns.append('consumer_type')
    return columns


class AllocationTests:
    """Mixed into a FunctionalTestCase with an explicit VERSION."""

    def setUp(self):
        super().setUp()
        self.consumer = str(uuid.uuid4())
        # Generation 1 after the inventory.
        self.rp1 = self.compute_node(vcpu=8, memory=4096)
        self.rp2 = self.create_provider(self.unique('disk'))['uuid']
        self.set_inventory(self.rp2, {'DISK_GB': 100})

    def alloc_cmd(self, *allocations, **kwargs):
        """``allocation set`` argv at VERSION with what VERSION requires."""
        cmd = ['resource', 'provider', 'allocation', 'set',
               kwargs.get('consumer', self.consumer)]
        for alloc in allocations:
            cmd += ['--allocation', alloc]
        if version.at_least(self.VERSION, '1.8'):
            cmd += ['--project-id', self.project, '--user-id', self.user]
        if version.at_least(self.VERSION, '1.38'):
            cmd += ['--consumer-type', kwargs.get('consumer_type',
                                                  'INSTANCE')]
        return cmd

    def set_both(self):
        return self.openstack(self.alloc_cmd(
            'rp=%s,VCPU=2,MEMORY_MB=512' % self.rp1,
            'rp=%s,DISK_GB=10' % self.rp2), use_json=True)

    def expected_row(self, rp, generation, **resources):
        row = {'resource_provider': rp, 'generation': generation,
               'resources': resources, 'project_id': self.project,
               'user_id': self.user, 'consumer_type': 'INSTANCE'}
        return {column: row[column] for column in columns_at(self.VERSION)}

    def assertRows(self, expected, rows):
        for row in rows:
            self.assertEqual(columns_at(self.VERSION), list(row))
        key = (lambda row: row['resource_provider'])
        self.assertEqual(sorted(expected, key=key), sorted(rows, key=key))

    def show(self):
        return self.openstack(['resource', 'provider', 'allocation', 'show',
                               self.consumer], use_json=True)

    def unset(self, *options, **kwargs):
        return self.openstack(
            ['resource', 'provider', 'allocation', 'unset', self.consumer]
            + list(options), use_json=True, **kwargs)

    def test_set_and_show(self):
        rows = self.set_both()
        expected = [self.expected_row(self.rp1, 2, VCPU=2, MEMORY_MB=512),
                    self.expected_row(self.rp2, 2, DISK_GB=10)]
        self.assertRows(expected, rows)
        self.assertRows(expected, self.show())
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 512},
                         self.provider_usages(self.rp1))
        self.assertEqual({'DISK_GB': 10}, self.provider_usages(self.rp2))

    def test_set_requests(self):
        cmd = self.alloc_cmd('rp=%s,VCPU=1' % self.rp1)
        calls = self.record_requests()
        result = self.openstack(cmd, may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        path = '/allocations/' + self.consumer
        expected = [('PUT', path), ('GET', path)]
        if version.at_least(self.VERSION, '1.28'):
            # The consumer generation is read first.
            expected.insert(0, ('GET', path))
        self.assertEqual(expected, [sent.request for sent in calls])
        self.assertEqual([self.VERSION] * len(expected),
                         [sent.version for sent in calls])
        [body] = [sent.body for sent in calls if sent.body is not None]
        if version.at_least(self.VERSION, '1.12'):
            allocations = {self.rp1: {'resources': {'VCPU': 1}}}
        else:
            allocations = [{'resource_provider': {'uuid': self.rp1},
                            'resources': {'VCPU': 1}}]
        expected_body = {'allocations': allocations}
        if version.at_least(self.VERSION, '1.8'):
            expected_body.update(project_id=self.project, user_id=self.user)
        if version.at_least(self.VERSION, '1.28'):
            expected_body['consumer_generation'] = None
        if version.at_least(self.VERSION, '1.38'):
            expected_body['consumer_type'] = 'INSTANCE'
        self.assertEqual(expected_body, body)

    def test_strings_for_one_provider_are_merged(self):
        rows = self.openstack(self.alloc_cmd(
            'rp=%s,VCPU=1' % self.rp1, 'rp=%s,MEMORY_MB=64,VCPU=1' % self.rp1),
            use_json=True)
        self.assertRows([self.expected_row(self.rp1, 2, VCPU=1,
                                           MEMORY_MB=64)], rows)

    def test_set_replaces_all_allocations(self):
        self.set_both()
        rows = self.openstack(self.alloc_cmd('rp=%s,DISK_GB=20' % self.rp2),
                              use_json=True)
        self.assertRows([self.expected_row(self.rp2, 3, DISK_GB=20)], rows)
        self.assertEqual({'VCPU': 0, 'MEMORY_MB': 0},
                         self.provider_usages(self.rp1))
        self.assertEqual({'DISK_GB': 20}, self.provider_usages(self.rp2))

    def test_consumer_options(self):
        plain = ['resource', 'provider', 'allocation', 'set', self.consumer,
                 '--allocation', 'rp=%s,VCPU=1' % self.rp1]
        who = ['--project-id', self.project, '--user-id', self.user]
        typed = ['--consumer-type', 'INSTANCE']
        if not version.at_least(self.VERSION, '1.8'):
            result = self.openstack(plain + who + typed, may_fail=True)
            self.assertEqual(0, result.code, result.stderr)
            self.assertIn(USER_WARNING, result.stderr)
            self.assertIn(TYPE_WARNING, result.stderr)
            self.assertRows([self.expected_row(self.rp1, 2, VCPU=1)],
                            self.show())
            return
        if version.at_least(self.VERSION, '1.38'):
            self.assertCommandFails(
                plain, REQUIRED + '--project-id, --user-id, --consumer-type',
                code=2)
            self.assertCommandFails(plain + who, REQUIRED + '--consumer-type',
                                    code=2)
            self.assertEqual([], self.show())
            return
        self.assertCommandFails(plain, REQUIRED + '--project-id, --user-id',
                                code=2)
        self.assertCommandFails(plain + ['--project-id', self.project],
                                REQUIRED + '--user-id', code=2)
        result = self.openstack(plain + who + typed, may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        self.assertNotIn(USER_WARNING, result.stderr)
        self.assertIn(TYPE_WARNING, result.stderr)
        self.assertRows([self.expected_row(self.rp1, 2, VCPU=1)],
                        self.show())

    def test_show_unknown_consumer_is_empty(self):
        self.assertEqual([], self.show())

    def test_delete(self):
        self.set_both()
        self.assertEqual('', self.openstack(
            ['resource', 'provider', 'allocation', 'delete', self.consumer]))
        self.assertEqual([], self.show())
        self.assertEqual({'DISK_GB': 0}, self.provider_usages(self.rp2))
        self.assertCommandFails(
            ['resource', 'provider', 'allocation', 'delete', self.consumer],
            NO_ALLOCATIONS % self.consumer + ' (HTTP 404)')
        # The deleted consumer can start anew. DELETE bumped no provider
        # generation (as upstream), so rp2 goes from 2 to 3.
        rows = self.openstack(self.alloc_cmd('rp=%s,DISK_GB=1' % self.rp2),
                              use_json=True)
        self.assertRows([self.expected_row(self.rp2, 3, DISK_GB=1)], rows)

    def test_set_errors(self):
        self.assertCommandFails(
            self.alloc_cmd('rp=%s,VCPU=9' % self.rp1),
            CAPACITY % ('VCPU', self.rp1))
        self.assertCommandFails(
            self.alloc_cmd('rp=%s,VCPU=1,DISK_GB=1' % self.rp1),
            "Unable to allocate inventory: Inventory for 'DISK_GB' on "
            "resource provider '%s' invalid. (HTTP 409)" % self.rp1)
        missing = str(uuid.uuid4())
        self.assertCommandFails(
            self.alloc_cmd('rp=%s,VCPU=1' % missing),
            "Allocation for resource provider '%s' that does not exist. "
            "(HTTP 400)" % missing)
        self.assertEqual([], self.show())
        self.assertEqual({'VCPU': 0, 'MEMORY_MB': 0},
                         self.provider_usages(self.rp1))


def _json(text):
    return json.loads(text)


class UnsetTests:
    """``allocation unset`` exists from 1.12."""

    def test_unset(self):
        self.set_both()
        # Every provider the write names gets a new generation.
        rows = self.unset('--resource-class', 'MEMORY_MB')
        self.assertRows([self.expected_row(self.rp1, 3, VCPU=2),
                         self.expected_row(self.rp2, 3, DISK_GB=10)], rows)
        rows = self.unset('--provider', self.rp2)
        self.assertRows([self.expected_row(self.rp1, 4, VCPU=2)], rows)
        self.assertEqual({'DISK_GB': 0}, self.provider_usages(self.rp2))
        # Names that are not there are ignored.
        rows = self.unset('--provider', self.rp2, '--resource-class', 'VGPU')
        self.assertRows([self.expected_row(self.rp1, 5, VCPU=2)], rows)
        calls = self.record_requests()
        result = self.openstack(
            ['resource', 'provider', 'allocation', 'unset',
             self.consumer, '--provider', self.rp1, '--resource-class',
             'VCPU', '-f', 'json'], may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([], _json(result.stdout))
        path = '/allocations/' + self.consumer
        # Below 1.28 an empty set cannot be written: the client deletes.
        write = ('PUT' if version.at_least(self.VERSION, '1.28')
                 else 'DELETE')
        self.assertEqual([('GET', path), (write, path), ('GET', path)],
                         [sent.request for sent in calls])
        self.assertEqual([], self.show())
        self.assertEqual({'VCPU': 0, 'MEMORY_MB': 0},
                         self.provider_usages(self.rp1))

    def test_unset_everything(self):
        self.set_both()
        self.assertEqual([], self.unset())
        self.assertEqual([], self.show())
        # The consumer is gone with its allocations: it can start anew
        # (at 1.28+ the client reads a null consumer generation).
        rows = self.set_both()
        self.assertEqual({self.rp1, self.rp2},
                         {row['resource_provider'] for row in rows})

    def test_unset_unknown_consumer(self):
        cmd = ['resource', 'provider', 'allocation', 'unset', self.consumer]
        if version.at_least(self.VERSION, '1.28'):
            # Said by the client: a PUT would fail schema validation.
            result = self.assertCommandFails(
                cmd, NO_ALLOCATIONS % self.consumer)
            self.assertNotIn('HTTP', result.stderr)
        else:
            self.assertCommandFails(
                cmd, NO_ALLOCATIONS % self.consumer + ' (HTTP 404)')


class UnsetGateTests:

    def test_unset_needs_1_12(self):
        self.assertCommandFails(
            ['resource', 'provider', 'allocation', 'unset', self.consumer],
            base.GATE % (self.VERSION, '1.12'))


class ConsumerGenerationTests:
    """From 1.28 the consumer generation read is sent back."""

    def start_consumer(self):
        self.openstack(self.alloc_cmd('rp=%s,VCPU=1,MEMORY_MB=64'
                                      % self.rp1), use_json=True)

    def concurrent_writer(self, send):
        # Another client replaces the allocations between our read and
        # our write, with the generation it read (1).
        body = {'allocations': {self.rp1: {'resources': {'VCPU': 3}}},
                'consumer_generation': 1, 'project_id': self.project,
                'user_id': self.user}
        send('PUT', '/allocations/' + self.consumer, json=body,
             version='1.28')

    def assertConcurrentWinner(self, generation=3, consumer_type='INSTANCE'):
        row = self.expected_row(self.rp1, generation, VCPU=3)
        if 'consumer_type' in row:
            # Written at 1.28: a new consumer gets no type.
            row['consumer_type'] = consumer_type
        self.assertRows([row], self.show())
        self.assertEqual({'VCPU': 3, 'MEMORY_MB': 0},
                         self.provider_usages(self.rp1))

    def test_set_after_concurrent_change_is_refused(self):
        self.start_consumer()
        path = '/allocations/' + self.consumer
        with self.meanwhile('GET', path, self.concurrent_writer):
            self.assertCommandFails(
                self.alloc_cmd('rp=%s,VCPU=2' % self.rp1),
                GENERATION_CONFLICT % (2, 1))
        self.assertConcurrentWinner()

    def test_unset_after_concurrent_change_is_refused(self):
        self.start_consumer()
        path = '/allocations/' + self.consumer
        with self.meanwhile('GET', path, self.concurrent_writer):
            self.assertCommandFails(
                ['resource', 'provider', 'allocation', 'unset',
                 self.consumer, '--resource-class', 'MEMORY_MB'],
                GENERATION_CONFLICT % (2, 1))
        self.assertConcurrentWinner()

    def test_new_consumer_created_meanwhile_is_refused(self):
        path = '/allocations/' + self.consumer

        def create(send):
            body = {'allocations': {self.rp1: {'resources': {'VCPU': 3}}},
                    'consumer_generation': None, 'project_id': self.project,
                    'user_id': self.user}
            send('PUT', path, json=body, version='1.28')

        with self.meanwhile('GET', path, create):
            self.assertCommandFails(
                self.alloc_cmd('rp=%s,VCPU=2' % self.rp1),
                GENERATION_CONFLICT % (1, 'None'))
        self.assertConcurrentWinner(generation=2, consumer_type='unknown')


class NoConsumerGenerationTests:
    """Before 1.28 nothing guards the read-modify-write of unset."""

    def test_unset_overwrites_a_concurrent_change(self):
        self.openstack(self.alloc_cmd('rp=%s,VCPU=1,MEMORY_MB=64'
                                      % self.rp1), use_json=True)
        path = '/allocations/' + self.consumer

        def concurrent(send):
            body = {'allocations': {self.rp1: {'resources': {'VCPU': 3}}},
                    'project_id': self.project, 'user_id': self.user}
            send('PUT', path, json=body, version='1.12')

        with self.meanwhile('GET', path, concurrent):
            rows = self.unset('--resource-class', 'MEMORY_MB')
        # The other writer's VCPU=3 is lost: last writer wins.
        self.assertRows([self.expected_row(self.rp1, 4, VCPU=1)], rows)


class ConsumerTypeTests:
    """From 1.38 consumers have a type; untyped ones read ``unknown``."""

    def test_type_is_shown_and_changed_by_set(self):
        rows = self.openstack(self.alloc_cmd('rp=%s,VCPU=1' % self.rp1,
                                             consumer_type='MIGRATION'),
                              use_json=True)
        self.assertEqual(['MIGRATION'], [r['consumer_type'] for r in rows])
        rows = self.openstack(self.alloc_cmd('rp=%s,VCPU=1' % self.rp1),
                              use_json=True)
        self.assertEqual(['INSTANCE'], [r['consumer_type'] for r in rows])

    def test_untyped_consumer_stays_untyped_on_unset(self):
        # Written without a type, as before 1.38.
        self.allocate(self.consumer,
                      {self.rp1: {'VCPU': 2, 'MEMORY_MB': 64},
                       self.rp2: {'DISK_GB': 1}}, self.project, self.user)
        self.assertEqual(['unknown', 'unknown'],
                         [r['consumer_type'] for r in self.show()])
        calls = self.record_requests()
        result = self.openstack(
            ['resource', 'provider', 'allocation', 'unset',
             self.consumer, '--provider', self.rp2, '-f', 'json'],
            may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        path = '/allocations/' + self.consumer
        self.assertEqual([('GET', path), ('PUT', path), ('GET', path)],
                         [sent.request for sent in calls])
        # The write is made at 1.37 so that no type is invented.
        self.assertEqual([self.VERSION, '1.37', self.VERSION],
                         [sent.version for sent in calls])
        rows = _json(result.stdout)
        self.assertEqual(
            [dict(self.expected_row(self.rp1, 3, VCPU=2, MEMORY_MB=64),
                  consumer_type='unknown')], rows)
        rows = self.unset('--resource-class', 'MEMORY_MB',
                          '--consumer-type', 'MIGRATION')
        self.assertEqual(
            [dict(self.expected_row(self.rp1, 4, VCPU=2),
                  consumer_type='MIGRATION')], rows)

    def test_unset_keeps_the_type(self):
        self.set_both()
        rows = self.unset('--provider', self.rp1)
        self.assertRows([self.expected_row(self.rp2, 3, DISK_GB=10)], rows)


class TestAllocation1_0(UnsetGateTests, AllocationTests,
                        base.FunctionalTestCase):
    VERSION = '1.0'


class TestAllocation1_8(UnsetGateTests, AllocationTests,
                        base.FunctionalTestCase):
    VERSION = '1.8'


class TestAllocation1_12(NoConsumerGenerationTests, UnsetTests,
                         AllocationTests, base.FunctionalTestCase):
    VERSION = '1.12'


class TestAllocation1_28(ConsumerGenerationTests, UnsetTests,
                         AllocationTests,
                         base.FunctionalTestCase):
    VERSION = '1.28'


class TestAllocation1_38(ConsumerTypeTests, ConsumerGenerationTests,
                         UnsetTests, AllocationTests,
                         base.FunctionalTestCase):
    VERSION = '1.38'


class TestAllocation1_39(ConsumerTypeTests, ConsumerGenerationTests,
                         UnsetTests, AllocationTests,
                         base.FunctionalTestCase):
    VERSION = '1.39'


class TestAllocationNegotiated(base.FunctionalTestCase):
    """The default version against our 1.39 server: 1.37 for allocations
    unless --consumer-type asks for more."""

    def setUp(self):
        super().setUp()
        self.consumer = str(uuid.uuid4())
        self.rp = self.compute_node()
        self.path = '/allocations/' + self.consumer

    def run_recorded(self, *argv):
        """Rows, (method, path) and microversion of each request sent."""
        calls = self.record_requests()
        result = self.openstack(list(argv) + ['-f', 'json'], may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        return (_json(result.stdout), [sent.request for sent in calls],
                [sent.version for sent in calls])

    def test_set_needs_project_and_user_but_no_type(self):
        result = self.assertCommandFails(
            ['resource', 'provider', 'allocation', 'set', self.consumer,
             '--allocation', 'rp=%s,VCPU=1' % self.rp],
            REQUIRED + '--project-id, --user-id', code=2)
        self.assertNotIn('--consumer-type', result.stderr.splitlines()[-1])

    def test_set_show_unset_stay_at_1_37(self):
        rows, requests, versions = self.run_recorded(
            'resource', 'provider', 'allocation', 'set', self.consumer,
            '--allocation', 'rp=%s,VCPU=2,MEMORY_MB=64' % self.rp,
            '--project-id', self.project, '--user-id', self.user)
        self.assertEqual([('GET', '/'), ('GET', self.path),
                          ('PUT', self.path), ('GET', self.path)], requests)
        self.assertEqual(['1.39', '1.37', '1.37', '1.37'], versions)
        expected = {'resource_provider': self.rp, 'generation': 2,
                    'resources': {'VCPU': 2, 'MEMORY_MB': 64},
                    'project_id': self.project, 'user_id': self.user}
        self.assertEqual([expected], rows)
        rows, requests, versions = self.run_recorded(
            'resource', 'provider', 'allocation', 'show', self.consumer)
        self.assertEqual([expected], rows)
        self.assertEqual(['1.39', '1.37'], versions)
        rows, requests, versions = self.run_recorded(
            'resource', 'provider', 'allocation', 'unset', self.consumer,
            '--resource-class', 'MEMORY_MB')
        self.assertEqual(
            [dict(expected, generation=3, resources={'VCPU': 2})], rows)
        self.assertEqual(['1.39', '1.37', '1.37', '1.37'], versions)
        self.assertEqual('unknown', self.show_allocations(
            self.consumer, version='1.38')[0]['consumer_type'])

    def test_consumer_type_lifts_the_ceiling(self):
        rows, requests, versions = self.run_recorded(
            'resource', 'provider', 'allocation', 'set', self.consumer,
            '--allocation', 'rp=%s,VCPU=1' % self.rp,
            '--project-id', self.project, '--user-id', self.user,
            '--consumer-type', 'INSTANCE')
        self.assertEqual(['1.39'] * 4, versions)
        self.assertEqual('INSTANCE', rows[0]['consumer_type'])
        rows, requests, versions = self.run_recorded(
            'resource', 'provider', 'allocation', 'unset', self.consumer,
            '--consumer-type', 'MIGRATION', '--resource-class', 'MEMORY_MB')
        self.assertEqual(['1.39'] * 4, versions)
        self.assertEqual([{'resource_provider': self.rp, 'generation': 3,
                           'resources': {'VCPU': 1},
                           'project_id': self.project, 'user_id': self.user,
                           'consumer_type': 'MIGRATION'}], rows)

    def test_writes_keep_the_consumer_type(self):
        self.allocate(self.consumer, {self.rp: {'VCPU': 1}}, self.project,
                      self.user, 'MIGRATION')
        # At 1.37 a write does not mention the type, so it stays.
        self.openstack(['resource', 'provider', 'allocation', 'set',
                        self.consumer, '--allocation',
                        'rp=%s,VCPU=2,MEMORY_MB=8' % self.rp,
                        '--project-id', self.project, '--user-id', self.user])
        self.openstack(['resource', 'provider', 'allocation', 'unset',
                        self.consumer, '--resource-class', 'MEMORY_MB'])
        self.assertEqual(
            [{'resource_provider': self.rp, 'generation': 4,
              'resources': {'VCPU': 2}, 'project_id': self.project,
              'user_id': self.user, 'consumer_type': 'MIGRATION'}],
            self.show_allocations(self.consumer, version='1.38'))

    def test_help_sends_nothing(self):
        calls = self.record_requests()
        for command in ('set', 'unset', 'show', 'delete'):
            result = self.openstack(
                ['resource', 'provider', 'allocation', command, '--help'],
                may_fail=True)
            self.assertEqual(0, result.code, result.stderr)
            self.assertIn('usage: ', result.stdout)
            self.assertEqual([], calls)

    def test_delete_is_not_capped(self):
        self.allocate(self.consumer, {self.rp: {'VCPU': 1}}, self.project,
                      self.user, 'INSTANCE')
        calls = self.record_requests()
        result = self.openstack(
            ['resource', 'provider', 'allocation', 'delete', self.consumer],
            may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([('GET', '/'), ('DELETE', self.path)],
                         [sent.request for sent in calls])
        self.assertEqual(['1.39', '1.39'], [sent.version for sent in calls])
        self.assertEqual([], self.show_allocations(self.consumer))


class TestAllocationClientErrors(base.FunctionalTestCase):
    """Errors the client finds itself; nothing is written."""

    VERSION = '1.39'

    def test_allocation_strings(self):
        consumer = str(uuid.uuid4())
        rp = str(uuid.uuid4())
        cmd = ['resource', 'provider', 'allocation', 'set', consumer,
               '--project-id', self.project, '--user-id', self.user,
               '--consumer-type', 'INSTANCE']
        cases = [
            ([], 'At least one resource allocation must be specified'),
            (['rp=%s' % rp], 'Incorrect allocation string format'),
            (['VCPU=1,MEMORY_MB=2'], 'Resource provider parameter is '
             'required for allocation string'),
            (['rp=%s,VCPU=x' % rp], "Incorrect allocation string format: "
             "the amount of VCPU must be an integer, not 'x'"),
            (['rp=%s,VCPU=1=2' % rp], "Incorrect allocation string format: "
             "'VCPU=1=2' is not of the form <key>=<value>"),
            (['rp=%s,VCPU=1' % rp, 'rp=%s,VCPU=2' % rp],
             'Conflict detected for resource provider %s resource class '
             'VCPU' % rp),
        ]
        for strings, message in cases:
            argv = list(cmd)
            for text in strings:
                argv += ['--allocation', text]
            result = self.assertCommandFails(argv, message)
            self.assertEqual(message, result.stderr.strip().splitlines()[-1])
        self.assertEqual([], self.show_allocations(consumer))

    def test_table_shows_dicts_as_python(self):
        rp = self.compute_node()
        consumer = str(uuid.uuid4())
        self.allocate(consumer, {rp: {'VCPU': 2, 'MEMORY_MB': 512}},
                      self.project, self.user, 'INSTANCE')
        table = self.openstack(['resource', 'provider', 'allocation',
                                'show', consumer])
        lines = table.splitlines()
        self.assertEqual(
            ['resource_provider', 'generation', 'resources', 'project_id',
             'user_id', 'consumer_type'],
            [cell.strip() for cell in lines[1].strip('|').split('|')])
        self.assertEqual(
            [rp, '2', "{'VCPU': 2, 'MEMORY_MB': 512}", self.project,
             self.user, 'INSTANCE'],
            [cell.strip() for cell in lines[3].strip('|').split('|')])
        value = self.openstack(['resource', 'provider', 'allocation',
                                'show', consumer, '-f', 'value', '-c',
                                'resources'])
        self.assertEqual("{'VCPU': 2, 'MEMORY_MB': 512}\n", value)

    def test_unset_consumer_type_gate(self):
        self.assertCommandFails(
            ['resource', 'provider', 'allocation', 'unset', str(uuid.uuid4()),
             '--consumer-type', 'INSTANCE'],
            base.GATE % ('1.37', '1.38'), version='1.37')


class TestAllocationAgainstOlderServer(base.FunctionalTestCase):
    """The default version against servers older than the client: the
    406 answer's max_version is used, and gates, required options,
    requests and columns follow it."""

    def setUp(self):
        super().setUp()
        self.consumer = str(uuid.uuid4())
        self.rp = self.compute_node()
        self.path = '/allocations/' + self.consumer

    def run_debug(self, *argv):
        """Rows, the --debug log, and (method, path) and microversion of
        each request sent."""
        calls = self.record_requests()
        result = self.openstack(['--debug'] + list(argv) + ['-f', 'json'],
                                may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        return (json.loads(result.stdout), result.stderr,
                [sent.request for sent in calls],
                [sent.version for sent in calls])

    def test_server_at_1_7(self):
        self.pretend_server_max('1.7')
        rows, stderr, requests, versions = self.run_debug(
            'resource', 'provider', 'allocation', 'set', self.consumer,
            '--allocation', 'rp=%s,VCPU=2' % self.rp)
        self.assertEqual([{'resource_provider': self.rp, 'generation': 2,
                           'resources': {'VCPU': 2}}], rows)
        self.assertEqual([('GET', '/'), ('PUT', self.path),
                          ('GET', self.path)], requests)
        self.assertEqual(['1.39', '1.7', '1.7'], versions)
        self.assertIn('Microversion 1.39 not supported in server. Falling '
                      'back to microversion 1.7', stderr)
        self.assertCommandFails(
            ['resource', 'provider', 'allocation', 'unset', self.consumer],
            base.GATE % ('1.7', '1.12'))
        self.assertCommandFails(
            ['allocation', 'candidate', 'list', '--resource', 'VCPU=1'],
            base.GATE % ('1.7', '1.10'))
        result = self.openstack(
            ['resource', 'provider', 'allocation', 'set', self.consumer,
             '--allocation', 'rp=%s,VCPU=1' % self.rp, '--project-id',
             self.project, '--user-id', self.user], may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        self.assertIn(USER_WARNING, result.stderr)

    def test_server_at_1_17(self):
        self.pretend_server_max('1.17')
        self.assertCommandFails(
            ['resource', 'provider', 'allocation', 'set', self.consumer,
             '--allocation', 'rp=%s,VCPU=2' % self.rp],
            REQUIRED + '--project-id, --user-id', code=2)
        rows, stderr, requests, versions = self.run_debug(
            'resource', 'provider', 'allocation', 'set', self.consumer,
            '--allocation', 'rp=%s,VCPU=2,MEMORY_MB=8' % self.rp,
            '--project-id', self.project, '--user-id', self.user,
            '--consumer-type', 'INSTANCE')
        # No consumer generation to read before 1.28.
        self.assertEqual([('GET', '/'), ('PUT', self.path),
                          ('GET', self.path)], requests)
        self.assertEqual(['1.39', '1.17', '1.17'], versions)
        self.assertIn(TYPE_WARNING, stderr)
        expected = {'resource_provider': self.rp, 'generation': 2,
                    'resources': {'VCPU': 2, 'MEMORY_MB': 8},
                    'project_id': self.project, 'user_id': self.user}
        self.assertEqual([expected], rows)
        rows, stderr, requests, versions = self.run_debug(
            'resource', 'provider', 'allocation', 'unset', self.consumer,
            '--resource-class', 'MEMORY_MB')
        self.assertEqual([dict(expected, generation=3,
                               resources={'VCPU': 2})], rows)
        self.assertEqual(['1.39', '1.17', '1.17', '1.17'],
                         versions)
        self.assertCommandFails(
            ['allocation', 'candidate', 'list', '--resource', 'VCPU=1',
             '--member-of', str(uuid.uuid4())],
            base.GATE % ('1.17', '1.21'))

    def test_server_at_1_38(self):
        self.pretend_server_max('1.38')
        rows, stderr, requests, versions = self.run_debug(
            'resource', 'provider', 'allocation', 'set', self.consumer,
            '--allocation', 'rp=%s,VCPU=1' % self.rp,
            '--project-id', self.project, '--user-id', self.user)
        self.assertEqual(['1.39', '1.37', '1.37', '1.37'],
                         versions)
        self.assertNotIn('consumer_type', rows[0])
        rows, stderr, requests, versions = self.run_debug(
            'resource', 'provider', 'allocation', 'unset', self.consumer,
            '--consumer-type', 'MIGRATION')
        self.assertEqual([], rows)
        self.assertEqual(['1.39', '1.38', '1.38', '1.38'],
                         versions)
        self.assertCommandFails(
            ['allocation', 'candidate', 'list', '--resource', 'VCPU=1',
             '--required', 'HW_CPU_X86_AVX,HW_CPU_X86_SSE'],
            base.GATE % ('1.38', '1.39'))
