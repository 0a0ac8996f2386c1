# SPDX-License-Identifier: Apache-2.0
"""``openstack resource provider inventory set/class set/list/show/delete``,
including the bulk ``inventory set --aggregate`` flows."""

import uuid

from osc_placement.resources import inventory as inventory_mod
from tests.functional import base

FIELDS = ['allocation_ratio', 'min_unit', 'max_unit', 'reserved',
          'step_size', 'total']
DEFAULTS = {'allocation_ratio': 1.0, 'min_unit': 1, 'max_unit': 2147483647,
            'reserved': 0, 'step_size': 1}


def row(resource_class, **fields):
    values = dict(DEFAULTS, **fields)
    values['resource_class'] = resource_class
    return values


class InventoryTests:
    """Run at 1.0 (the oldest), 1.5 (delete all) and 1.39 (the newest)."""

    def setUp(self):
        super().setUp()
        self.rp = self.create_provider()['uuid']

    def inventory_set(self, *args, **kwargs):
        return self.openstack(
            ['resource', 'provider', 'inventory', 'set'] + list(args),
            **kwargs)

    def test_set_list_show(self):
        rows = self.inventory_set(
            self.rp, '--resource', 'VCPU=64',
            '--resource', 'VCPU:allocation_ratio=4.0',
            '--resource', 'MEMORY_MB=262144',
            '--resource', 'MEMORY_MB:step_size=128',
            '--resource', 'DISK_GB:total=2000',
            '--resource', 'DISK_GB:reserved=100',
            '--resource', 'DISK_GB:min_unit=10',
            '--resource', 'DISK_GB:max_unit=500', use_json=True)
        expected = [row('VCPU', total=64, allocation_ratio=4.0),
                    row('MEMORY_MB', total=262144, step_size=128),
                    row('DISK_GB', total=2000, reserved=100, min_unit=10,
                        max_unit=500)]
        key = sorted  # the order of classes is the server's
        self.assertEqual(key(map(sorted, (r.items() for r in expected))),
                         key(map(sorted, (r.items() for r in rows))))
        self.assertEqual(['resource_class'] + FIELDS, list(rows[0]))

        listed = self.openstack('resource provider inventory list '
                                + self.rp, use_json=True)
        self.assertEqual(['resource_class'] + FIELDS + ['used'],
                         list(listed[0]))
        self.assertEqual(
            key(map(sorted, (dict(r, used=0).items() for r in expected))),
            key(map(sorted, (r.items() for r in listed))))

        shown = self.openstack('resource provider inventory show %s DISK_GB'
                               % self.rp, use_json=True)
        self.assertEqual(FIELDS + ['used'], list(shown))
        expected_disk = dict(expected[2], used=0)
        del expected_disk['resource_class']
        self.assertEqual(expected_disk, shown)
        # Each inventory write bumped the generation once.
        self.assertEqual(1, self.provider_generation(self.rp))

    def test_set_replaces_and_empty_set_clears(self):
        self.inventory_set(self.rp, '--resource', 'VCPU=8',
                           '--resource', 'MEMORY_MB=1024')
        rows = self.inventory_set(self.rp, '--resource', 'DISK_GB=10',
                                  use_json=True)
        self.assertEqual([row('DISK_GB', total=10)], rows)
        self.assertEqual(['DISK_GB'], [r['resource_class'] for r in
                                       self.openstack(
            'resource provider inventory list ' + self.rp, use_json=True)])
        self.assertEqual([], self.inventory_set(self.rp, use_json=True))
        self.assertEqual([], self.openstack(
            'resource provider inventory list ' + self.rp, use_json=True))

    def test_amend_keeps_other_classes(self):
        self.inventory_set(self.rp, '--resource', 'VCPU=8',
                           '--resource', 'MEMORY_MB=1024')
        rows = self.inventory_set(self.rp, '--amend',
                                  '--resource', 'VCPU:reserved=2',
                                  '--resource', 'DISK_GB=50', use_json=True)
        by_class = {r['resource_class']: r for r in rows}
        self.assertEqual(row('VCPU', total=8, reserved=2), by_class['VCPU'])
        self.assertEqual(row('MEMORY_MB', total=1024), by_class['MEMORY_MB'])
        self.assertEqual(row('DISK_GB', total=50), by_class['DISK_GB'])

    def test_dry_run_writes_nothing(self):
        self.inventory_set(self.rp, '--resource', 'VCPU=8')
        generation = self.provider_generation(self.rp)
        rows = self.inventory_set(self.rp, '--dry-run',
                                  '--resource', 'MEMORY_MB=16',
                                  '--resource', 'MEMORY_MB:reserved=1',
                                  use_json=True)
        # Fields not given show empty: the payload, not a server answer.
        self.assertEqual([{'resource_class': 'MEMORY_MB',
                           'allocation_ratio': '', 'min_unit': '',
                           'max_unit': '', 'reserved': 1, 'step_size': '',
                           'total': 16}], rows)
        amended = self.inventory_set(self.rp, '--dry-run', '--amend',
                                     '--resource', 'VCPU:reserved=1',
                                     use_json=True)
        self.assertEqual([row('VCPU', total=8, reserved=1)], amended)
        self.assertEqual(generation, self.provider_generation(self.rp))
        self.assertEqual(['VCPU'], [r['resource_class'] for r in
                                    self.openstack(
            'resource provider inventory list ' + self.rp, use_json=True)])

    def test_class_set(self):
        self.inventory_set(self.rp, '--resource', 'VCPU=8',
                           '--resource', 'MEMORY_MB=1024')
        shown = self.openstack(
            ['resource', 'provider', 'inventory', 'class', 'set', self.rp,
             'MEMORY_MB', '--total', '4096', '--reserved', '512',
             '--max_unit', '2048', '--min_unit', '256', '--step_size',
             '256', '--allocation_ratio', '1.5'], use_json=True)
        self.assertEqual({'allocation_ratio': 1.5, 'min_unit': 256,
                          'max_unit': 2048, 'reserved': 512,
                          'step_size': 256, 'total': 4096}, shown)
        # Other classes are left alone.
        listed = {r['resource_class']: r for r in self.openstack(
            'resource provider inventory list ' + self.rp, use_json=True)}
        self.assertEqual(['MEMORY_MB', 'VCPU'], sorted(listed))
        self.assertEqual(8, listed['VCPU']['total'])
        # Setting it again replaces the record; missing fields default.
        again = self.openstack(
            ['resource', 'provider', 'inventory', 'class', 'set', self.rp,
             'MEMORY_MB', '--total', '1024'], use_json=True)
        self.assertEqual({'allocation_ratio': 1.0, 'min_unit': 1,
                          'max_unit': 2147483647, 'reserved': 0,
                          'step_size': 1, 'total': 1024}, again)
        self.assertEqual(3, self.provider_generation(self.rp))

    def test_class_set_needs_an_existing_class(self):
        # PUT .../inventories/{class} updates only, as upstream's does.
        self.assertCommandFails(
            'resource provider inventory class set %s DISK_GB --total 1'
            % self.rp,
            'No inventory record with resource class for resource provider '
            '%s: No inventory of class DISK_GB found. (HTTP 400)' % self.rp)

    def test_class_set_errors(self):
        self.assertCommandFails(
            'resource provider inventory class set %s VCPU' % self.rp,
            'the following arguments are required: --total', code=2)
        self.assertCommandFails(
            'resource provider inventory class set %s VCPU --total x'
            % self.rp, "argument --total: invalid int value: 'x'", code=2)
        self.assertCommandFails(
            'resource provider inventory class set %s CUSTOM_NOPE_X '
            '--total 1' % self.rp, 'No such resource class CUSTOM_NOPE_X')
        missing = str(uuid.uuid4())
        self.assertCommandFails(
            'resource provider inventory class set %s VCPU --total 1'
            % missing,
            'No resource provider with uuid %s found (HTTP 404)' % missing)

    def test_delete_one_class(self):
        self.inventory_set(self.rp, '--resource', 'VCPU=8',
                           '--resource', 'MEMORY_MB=1024')
        self.assertEqual('', self.openstack(
            'resource provider inventory delete %s --resource-class VCPU'
            % self.rp))
        self.assertEqual(['MEMORY_MB'], [r['resource_class'] for r in
                                         self.openstack(
            'resource provider inventory list ' + self.rp, use_json=True)])
        self.assertCommandFails(
            'resource provider inventory delete %s --resource-class VCPU'
            % self.rp, 'No inventory of class VCPU found for delete '
            '(HTTP 404)')
        self.assertCommandFails(
            'resource provider inventory show %s VCPU' % self.rp,
            'No inventory of class VCPU for %s (HTTP 404)' % self.rp)

    def test_resource_argument_errors(self):
        calls = self.record_requests()
        for argument, message in (
                ('VCPU', 'Resource argument must have "name=value" format'),
                ('VCPU=1=2',
                 'Resource argument must have "name=value" format'),
                ('VCPU:total:x=1',
                 'Resource argument can contain only one colon'),
                ('VCPU=', 'Name, field and value must be not empty'),
                (':total=1', 'Name, field and value must be not empty'),
                ('VCPU:=1', 'Name, field and value must be not empty'),
                ('VCPU:size=1', 'Unknown inventory field size'),
                ('VCPU=x',
                 'Resource argument VCPU=x: total must be an integer'),
                ('VCPU:allocation_ratio=x', 'Resource argument '
                 'VCPU:allocation_ratio=x: allocation_ratio must be a '
                 'number')):
            # A good --resource first: all are parsed before any request.
            result = self.assertCommandFails(
                ['resource', 'provider', 'inventory', 'set', self.rp,
                 '--resource', 'VCPU=1', '--resource', argument], message)
            self.assertEqual(message, result.stderr.strip())
        self.assertEqual([], calls)
        self.assertEqual(0, self.provider_generation(self.rp))
        self.assertCommandFails(
            ['resource', 'provider', 'inventory', 'class', 'set', self.rp,
             'VCPU', '--total', '1', '--allocation_ratio', 'x'],
            "argument --allocation_ratio: invalid float value: 'x'", code=2)

    def test_server_rejections(self):
        self.assertCommandFails(
            ['resource', 'provider', 'inventory', 'set', self.rp,
             '--resource', 'CUSTOM_NO_SUCH_X=1'],
            'Unknown resource class in inventory for resource provider %s: '
            'No such resource class CUSTOM_NO_SUCH_X. (HTTP 400)' % self.rp)
        missing = str(uuid.uuid4())
        self.assertCommandFails(
            'resource provider inventory set %s --resource VCPU=1' % missing,
            'No resource provider with uuid %s found (HTTP 404)' % missing)
        self.assertCommandFails(
            'resource provider inventory show %s VCPU' % missing,
            'No resource provider with uuid %s found (HTTP 404)' % missing)
        # The list route wraps the lookup error, as upstream does.
        self.assertCommandFails(
            'resource provider inventory list ' + missing,
            'No resource provider with uuid %s found : Resource provider '
            '%s not found (HTTP 404)' % (missing, missing))

    def test_custom_class_and_used(self):
        custom = self.create_resource_class(self.unique_custom())
        self.inventory_set(self.rp, '--resource', 'VCPU=8',
                           '--resource', '%s=4' % custom)
        self.allocate(str(uuid.uuid4()), {self.rp: {'VCPU': 3, custom: 1}})
        listed = {r['resource_class']: r['used'] for r in self.openstack(
            'resource provider inventory list ' + self.rp, use_json=True)}
        self.assertEqual({'VCPU': 3, custom: 1}, listed)
        self.assertEqual(3, self.openstack(
            'resource provider inventory show %s VCPU' % self.rp,
            use_json=True)['used'])
        # A class in use cannot be replaced away, nor deleted.
        self.assertCommandFails(
            ['resource', 'provider', 'inventory', 'set', self.rp,
             '--resource', 'VCPU=8'],
            "Inventory for '%s' on resource provider '%s' in use. (HTTP 409)"
            % (custom, self.rp))
        self.assertCommandFails(
            ['resource', 'provider', 'inventory', 'delete', self.rp,
             '--resource-class', custom],
            "Inventory for '%s' on resource provider '%s' in use. (HTTP 409)"
            % (custom, self.rp))
        # Shrinking below what is used is allowed (upstream warns only).
        self.inventory_set(self.rp, '--amend', '--resource', 'VCPU=2')

    def test_set_retries_a_lost_race(self):
        """Without --aggregate too: the provider changes between the read
        of its generation and the write; the write is redone."""
        self.inventory_set(self.rp, '--resource', 'VCPU=8')
        original = inventory_mod.ProviderInventoryWriter._write
        generations = []

        def racing_write(writer, rp, payload):
            generations.append(payload['resource_provider_generation'])
            if len(generations) == 1:
                self.http('PUT', '/resource_providers/%s/inventories' % rp,
                          {'resource_provider_generation': generations[0],
                           'inventories': {'DISK_GB': {'total': 5}}},
                          expect=200)
            return original(writer, rp, payload)

        self.useFixture(base.fixtures.MonkeyPatch(
            'osc_placement.resources.inventory.ProviderInventoryWriter.'
            '_write', racing_write))
        rows = self.inventory_set(self.rp, '--resource', 'MEMORY_MB=64',
                                  use_json=True)
        self.assertEqual([1, 2], generations)
        # A replacement is a replacement: the concurrent class is gone.
        self.assertEqual([row('MEMORY_MB', total=64)], rows)
        self.assertEqual(3, self.provider_generation(self.rp))

    def test_class_set_retries_a_lost_race(self):
        self.inventory_set(self.rp, '--resource', 'VCPU=8',
                           '--resource', 'MEMORY_MB=64')
        original = inventory_mod.SetClassInventory.get_json
        reads = []

        def racing_read(command, url, **params):
            body = original(command, url, **params)
            reads.append(body['generation'])
            if len(reads) == 1:
                self.http('PUT', '/resource_providers/%s/inventories/VCPU'
                          % self.rp, {'resource_provider_generation':
                                      body['generation'], 'total': 16},
                          expect=200)
            return body

        self.useFixture(base.fixtures.MonkeyPatch(
            'osc_placement.resources.inventory.SetClassInventory.get_json',
            racing_read))
        calls = self.record_requests()
        shown = self.openstack(
            ['resource', 'provider', 'inventory', 'class', 'set', self.rp,
             'MEMORY_MB', '--total', '128'], use_json=True)
        self.assertEqual(128, shown['total'])
        self.assertEqual([1, 2], reads)
        self.assertEqual(['GET', 'PUT', 'GET', 'PUT'],
                         [method for method, _, _ in calls])
        self.assertEqual({'VCPU': 16, 'MEMORY_MB': 128}, {
            r['resource_class']: r['total'] for r in self.openstack(
                'resource provider inventory list ' + self.rp,
                use_json=True)})


class TestInventory_1_0(InventoryTests, base.FunctionalTestCase):
    VERSION = '1.0'

    def test_delete_needs_resource_class_below_1_5(self):
        self.assertCommandFails(
            'resource provider inventory delete ' + self.rp,
            'the following arguments are required: --resource-class',
            code=2)

    def test_aggregate_gate(self):
        self.assertCommandFails(
            'resource provider inventory set %s --aggregate '
            '--resource VCPU=1' % uuid.uuid4(), base.GATE % ('1.0', '1.3'))


class TestInventory_1_5(InventoryTests, base.FunctionalTestCase):
    VERSION = '1.5'

    def test_delete_all_classes(self):
        self.inventory_set(self.rp, '--resource', 'VCPU=8',
                           '--resource', 'MEMORY_MB=1024')
        calls = self.record_requests()
        self.assertEqual('', self.openstack(
            'resource provider inventory delete ' + self.rp))
        self.assertEqual([('DELETE', '/resource_providers/%s/inventories'
                           % self.rp, 'placement 1.5')], calls)
        self.assertEqual([], self.openstack(
            'resource provider inventory list ' + self.rp, use_json=True))


class TestInventory_1_39(InventoryTests, base.FunctionalTestCase):
    VERSION = '1.39'


class TestReservedEqualsTotal(base.FunctionalTestCase):
    """1.26 lets reserved equal total (a provider taken out of use)."""

    def test_boundary(self):
        rp = self.create_provider()['uuid']
        command = ['resource', 'provider', 'inventory', 'set', rp,
                   '--resource', 'VCPU=4', '--resource', 'VCPU:reserved=4']
        self.assertCommandFails(
            command, "Unable to update inventory for resource provider %s: "
            "Invalid inventory for 'VCPU' on resource provider '%s'. The "
            "reserved value is greater than or equal to total. (HTTP 400)"
            % (rp, rp), version='1.25')
        self.assertEqual([row('VCPU', total=4, reserved=4)],
                         self.openstack(command, use_json=True,
                                        version='1.26'))
        self.assertCommandFails(
            ['resource', 'provider', 'inventory', 'class', 'set', rp, 'VCPU',
             '--total', '4', '--reserved', '5'],
            "The reserved value is greater than total. (HTTP 400)",
            version='1.26')
        self.assertCommandFails(
            ['resource', 'provider', 'inventory', 'set', rp,
             '--resource', 'VCPU=0'],
            'JSON does not validate: 0 is less than the minimum of 1',
            version='1.39')


class TestInventoryNegotiated(base.FunctionalTestCase):

    def test_delete_all_after_negotiation(self):
        rp = self.create_provider()['uuid']
        self.openstack(['resource', 'provider', 'inventory', 'set', rp,
                        '--resource', 'VCPU=1'])
        calls = self.record_requests()
        self.openstack('resource provider inventory delete ' + rp)
        self.assertEqual(
            [('GET', '/', 'placement 1.39'),
             ('DELETE', '/resource_providers/%s/inventories' % rp,
              'placement 1.39')], calls)

    def test_aggregate_after_negotiation(self):
        agg = str(uuid.uuid4())
        rps = sorted(self.create_provider()['uuid'] for _ in range(2))
        for rp in rps:
            self.set_provider_aggregates(rp, [agg])
        calls = self.record_requests()
        rows = self.openstack(['resource', 'provider', 'inventory', 'set',
                               agg, '--aggregate', '--resource', 'VCPU=1'],
                              use_json=True)
        self.assertEqual(rps, sorted(r['resource_provider'] for r in rows))
        self.assertEqual(('GET', '/', 'placement 1.39'), calls[0])
        # A bare UUID, as upstream sends it (no "in:").
        self.assertEqual(('GET', '/resource_providers?member_of=' + agg,
                          'placement 1.39'), calls[1])
        # The sharing providers are found (to be left alone), then each
        # member is read before any is written.
        self.assertEqual(
            ('GET', '/resource_providers?member_of=%s&required='
             'MISC_SHARES_VIA_AGGREGATE' % agg, 'placement 1.39'), calls[2])
        self.assertEqual(
            sorted(('GET', '/resource_providers/%s/inventories' % rp,
                    'placement 1.39') for rp in rps), sorted(calls[3:5]))
        self.assertEqual(
            sorted(('PUT', '/resource_providers/%s/inventories' % rp,
                    'placement 1.39') for rp in rps), sorted(calls[5:]))


class InventoryAggregateTests:
    """``inventory set --aggregate``: every member of the aggregate."""

    def setUp(self):
        super().setUp()
        self.agg = str(uuid.uuid4())
        self.members = sorted(self.create_provider()['uuid']
                              for _ in range(3))
        for rp in self.members:
            self.set_provider_aggregates(rp, [self.agg])
        self.outsider = self.create_provider()['uuid']

    def set_aggregate(self, *args, **kwargs):
        return self.openstack(
            ['resource', 'provider', 'inventory', 'set', self.agg,
             '--aggregate'] + list(args), **kwargs)

    def inventories(self, rp):
        return {r['resource_class']: r for r in self.openstack(
            'resource provider inventory list ' + rp, use_json=True)}

    def test_sets_every_member(self):
        rows = self.set_aggregate('--resource', 'VCPU=8',
                                  '--resource', 'VCPU:allocation_ratio=2.0',
                                  use_json=True)
        self.assertEqual(['resource_provider', 'resource_class'] + FIELDS,
                         list(rows[0]))
        self.assertEqual(
            [dict(row('VCPU', total=8, allocation_ratio=2.0),
                  resource_provider=rp) for rp in self.members],
            sorted(rows, key=lambda r: r['resource_provider']))
        for rp in self.members:
            self.assertEqual(8, self.inventories(rp)['VCPU']['total'])
        self.assertEqual({}, self.inventories(self.outsider))

    def test_amend_and_dry_run(self):
        first, second, third = self.members
        self.openstack(['resource', 'provider', 'inventory', 'set', first,
                        '--resource', 'MEMORY_MB=1024'])
        generations = {rp: self.provider_generation(rp)
                       for rp in self.members}
        dry = self.set_aggregate('--amend', '--dry-run',
                                 '--resource', 'VCPU=4', use_json=True)
        self.assertEqual(['resource_provider', 'name', 'change',
                          'resource_class'] + FIELDS, list(dry[0]))
        # Only the changes: first's MEMORY_MB stays as it is.
        self.assertEqual(
            sorted([(first, '+', 'VCPU'), (second, '+', 'VCPU'),
                    (third, '+', 'VCPU')]),
            sorted((r['resource_provider'], r['change'], r['resource_class'])
                   for r in dry))
        self.assertEqual(4, dry[0]['total'])
        self.assertEqual(generations, {rp: self.provider_generation(rp)
                                       for rp in self.members})
        self.assertEqual(['MEMORY_MB'], list(self.inventories(first)))
        # A replace would remove first's MEMORY_MB: the dry run says so.
        dry = self.set_aggregate('--dry-run', '--resource', 'VCPU=4',
                                 use_json=True)
        self.assertIn((first, '-', 'MEMORY_MB', 1024),
                      [(r['resource_provider'], r['change'],
                        r['resource_class'], r['total']) for r in dry])

        self.set_aggregate('--amend', '--resource', 'VCPU=4')
        self.assertEqual(['MEMORY_MB', 'VCPU'],
                         sorted(self.inventories(first)))
        self.assertEqual(['VCPU'], list(self.inventories(second)))

    def test_partial_failure(self):
        """One member cannot take the write; the others still get it."""
        first, second, third = self.members
        self.openstack(['resource', 'provider', 'inventory', 'set', second,
                        '--resource', 'VCPU=8'])
        # Amending only a reserved amount works where VCPU exists; the
        # others would get a VCPU without a total, which the server refuses.
        result = self.set_aggregate('--amend', '--resource',
                                    'VCPU:reserved=1', may_fail=True)
        self.assertEqual(1, result.code, result.stderr)
        self.assertEqual('', result.stdout)
        self.assertIn('Failed to set inventory for 2 of 3 resource '
                      'providers.', result.stderr)
        for rp in (first, third):
            self.assertIn('Failed to set inventory for resource provider '
                          '%s: ' % rp, result.stderr)
            self.assertIn("'total' is a required property", result.stderr)
        self.assertNotIn(second + ':', result.stderr)
        self.assertEqual(1, self.inventories(second)['VCPU']['reserved'])
        self.assertEqual({}, self.inventories(first))

    def test_partial_failure_class_in_use(self):
        first, second, third = self.members
        for rp in self.members:
            self.openstack(['resource', 'provider', 'inventory', 'set', rp,
                            '--resource', 'VCPU=8',
                            '--resource', 'DISK_GB=100'])
        self.allocate(str(uuid.uuid4()), {third: {'DISK_GB': 10}})
        result = self.set_aggregate('--resource', 'VCPU=16', '--yes',
                                    may_fail=True)
        self.assertEqual(1, result.code, result.stderr)
        self.assertIn(
            "Failed to set inventory for resource provider %s: update "
            "conflict: Inventory for 'DISK_GB' on resource provider '%s' in "
            "use. (HTTP 409) (Request-ID: req-"
            % (third, third), result.stderr)
        self.assertIn('Failed to set inventory for 1 of 3 resource '
                      'providers.', result.stderr)
        for rp in (first, second):
            self.assertEqual(['VCPU'], list(self.inventories(rp)))
            self.assertEqual(16, self.inventories(rp)['VCPU']['total'])
        self.assertEqual(['DISK_GB', 'VCPU'], sorted(self.inventories(third)))

    def test_empty_aggregate(self):
        empty = str(uuid.uuid4())
        self.assertCommandFails(
            ['resource', 'provider', 'inventory', 'set', empty,
             '--aggregate', '--resource', 'VCPU=1'],
            'No resource providers found in aggregate with uuid %s.' % empty)

    def test_concurrent_change_is_retried(self):
        """A member's generation moves between the listing and its write:
        the write gets a 409, the member is re-read and the write redone,
        keeping (with --amend) what the other writer added."""
        first, second, third = self.members
        custom = self.create_resource_class(self.unique_custom())
        original = inventory_mod.ProviderInventoryWriter._write
        writes = []
        test = self

        def racing_write(writer, rp, payload):
            writes.append((rp, payload['resource_provider_generation']))
            if rp == second and len([w for w in writes if w[0] == rp]) == 1:
                # Someone else writes to this provider first.
                body = {'resource_provider_generation':
                        payload['resource_provider_generation'],
                        'inventories': {custom: {'total': 5}}}
                test.http('PUT', '/resource_providers/%s/inventories' % rp,
                          body, expect=200)
            return original(writer, rp, payload)

        self.useFixture(base.fixtures.MonkeyPatch(
            'osc_placement.resources.inventory.ProviderInventoryWriter.'
            '_write', racing_write))
        rows = self.set_aggregate('--amend', '--resource', 'VCPU=2',
                                  use_json=True)
        self.assertEqual(
            sorted([(first, 'VCPU'), (second, custom), (second, 'VCPU'),
                    (third, 'VCPU')]),
            sorted((r['resource_provider'], r['resource_class'])
                   for r in rows))
        attempts = [generation for rp, generation in writes if rp == second]
        self.assertEqual(2, len(attempts))
        self.assertEqual(attempts[0] + 1, attempts[1])
        self.assertEqual(1, len([w for w in writes if w[0] == first]))
        self.assertEqual({custom: 5, 'VCPU': 2},
                         {rc: r['total'] for rc, r in
                          self.inventories(second).items()})

    def test_more_members_than_workers(self):
        """Writes run on a bounded pool; every member is still set once."""
        count = inventory_mod.WORKERS * 2 + 3
        members = set(self.members)
        for _ in range(count - len(self.members)):
            rp = self.http('POST', '/resource_providers',
                           {'name': self.unique('bulk')}, version='1.20',
                           expect=200).json()['uuid']
            self.set_provider_aggregates(rp, [self.agg])
            members.add(rp)
        calls = self.record_requests()
        rows = self.set_aggregate('--resource', 'DISK_GB=100',
                                  use_json=True)
        self.assertEqual(members, {r['resource_provider'] for r in rows})
        self.assertEqual(count, len(rows))
        puts = [url for method, url, _ in calls if method == 'PUT']
        self.assertEqual(count, len(puts))
        self.assertEqual(count, len(set(puts)))
        # One aggregate write, one inventory write each.
        for rp in members:
            self.assertEqual(2, self.provider_generation(rp))

    def fail_puts_to(self, rp, times, status='503 Service Unavailable'):
        """The first ``times`` inventory writes to ``rp`` get a proxy's
        HTML error page instead of reaching the server."""
        path = '/resource_providers/%s/inventories' % rp
        seen = []

        def hook(environ):
            if environ['REQUEST_METHOD'] != 'PUT' or \
                    environ['PATH_INFO'] != path:
                return None
            seen.append(rp)
            if len(seen) > times:
                return None
            return (status, [('Content-Type', 'text/html'),
                             ('x-openstack-request-id', 'req-proxy')],
                    b'<html>\n<h1>Service Unavailable</h1>\n</html>\n')

        self.hook_server(hook)
        self.useFixture(base.fixtures.MonkeyPatch(
            'osc_placement.resources.common.SERVER_ERROR_BACKOFF', 0.001))
        return seen

    def test_server_error_is_retried(self):
        first, second, third = self.members
        seen = self.fail_puts_to(second, times=2)
        rows = self.set_aggregate('--resource', 'VCPU=2', use_json=True)
        self.assertEqual(3, len(seen))
        self.assertEqual(self.members,
                         sorted(r['resource_provider'] for r in rows))
        self.assertEqual(2, self.inventories(second)['VCPU']['total'])

    def test_persistent_server_error_fails_that_member(self):
        first, second, third = self.members
        seen = self.fail_puts_to(second, times=100)
        result = self.set_aggregate('--resource', 'VCPU=2', may_fail=True)
        self.assertEqual(1, result.code, result.stderr)
        self.assertEqual(inventory_mod.MAX_ATTEMPTS, len(seen))
        self.assertIn(
            'Failed to set inventory for resource provider %s: Placement '
            'server error: <html> (HTTP 503) (Request-ID: req-proxy).'
            % second, result.stderr)
        self.assertIn('Failed to set inventory for 1 of 3 resource '
                      'providers.', result.stderr)
        self.assertEqual({}, self.inventories(second))
        self.assertEqual(2, self.inventories(third)['VCPU']['total'])

    def test_endless_race_gives_up(self):
        """A member whose generation always moves is given up on after
        MAX_ATTEMPTS writes, and counted as failed."""
        first, second, third = self.members
        path = '/resource_providers/%s/inventories' % second
        seen = []

        def hook(environ):
            if environ['REQUEST_METHOD'] != 'PUT' or \
                    environ['PATH_INFO'] != path:
                return None
            seen.append(environ['HTTP_OPENSTACK_API_VERSION'])
            error = {'status': 409, 'title': 'Conflict',
                     'detail': "resource provider generation conflict"}
            if environ['HTTP_OPENSTACK_API_VERSION'] >= 'placement 1.23':
                error['code'] = 'placement.concurrent_update'
            return ('409 Conflict', [('Content-Type', 'application/json')],
                    base.json.dumps({'errors': [error]}).encode())

        self.hook_server(hook)
        result = self.set_aggregate('--resource', 'VCPU=1', may_fail=True)
        self.assertEqual(1, result.code, result.stderr)
        self.assertEqual(inventory_mod.MAX_ATTEMPTS, len(seen))
        self.assertEqual({'placement %s' % self.VERSION}, set(seen))
        self.assertIn('Failed to set inventory for resource provider %s: '
                      'resource provider generation conflict (HTTP 409).'
                      % second, result.stderr)
        self.assertIn('Failed to set inventory for 1 of 3 resource '
                      'providers.', result.stderr)
        self.assertEqual(1, self.inventories(first)['VCPU']['total'])

    def test_concurrent_writer_loses_nothing(self):
        """Another client amends every member while the command runs;
        whatever the interleaving, both changes end up on every member."""
        import threading

        custom = self.create_resource_class(self.unique_custom())
        errors = []

        def other_client():
            try:
                for rp in self.members:
                    path = '/resource_providers/%s/inventories' % rp
                    for _ in range(50):
                        current = self.http('GET', path, expect=200).json()
                        current['inventories'][custom] = {'total': 7}
                        if self.http('PUT', path,
                                     current).status_code == 200:
                            break
                    else:
                        errors.append('gave up on %s' % rp)
            except Exception as exc:  # reported by the test thread
                errors.append(exc)

        original = inventory_mod.ProviderInventoryWriter._write
        writes = []

        def counting_write(writer, rp, payload):
            writes.append(rp)
            return original(writer, rp, payload)

        self.useFixture(base.fixtures.MonkeyPatch(
            'osc_placement.resources.inventory.ProviderInventoryWriter.'
            '_write', counting_write))
        thread = threading.Thread(target=other_client)
        thread.start()
        try:
            self.set_aggregate('--amend', '--resource', 'VCPU=4')
        finally:
            thread.join()
        self.assertEqual([], errors)
        # Races do happen here (one side or the other loses a round in
        # most runs); the outcome must not depend on who lost.
        self.assertGreaterEqual(len(writes), len(self.members))
        self.assertLessEqual(len(writes) - len(self.members),
                             len(self.members))
        for rp in self.members:
            self.assertEqual({'VCPU': 4, custom: 7},
                             {rc: r['total'] for rc, r in
                              self.inventories(rp).items()})


class TestInventoryAggregate_1_3(InventoryAggregateTests,
                                 base.FunctionalTestCase):
    VERSION = '1.3'


class TestInventoryAggregate_1_39(InventoryAggregateTests,
                                  base.FunctionalTestCase):
    VERSION = '1.39'
