# SPDX-License-Identifier: Apache-2.0
"""A provider named by its name or its UUID, in every command that takes
one; request ids at the end of errors; the hints of ``delete``'s 409s; the
note of ``resource usage show`` when nothing is used."""

import re
import uuid

from tests.functional import base

UNKNOWN = "No resource provider with a name or UUID of '%s' exists."
LOOKUP = '/resource_providers?name=%s'


class NamedProviderTests:
    """A name does what the UUID does; a UUID sends what it always sent."""

    def setUp(self):
        super().setUp()
        self.name = self.unique('host')
        self.rp = self.create_provider(self.name)['uuid']

    def test_show_and_set_by_name(self):
        shown = self.openstack(['resource', 'provider', 'show', self.name],
                               use_json=True)
        self.assertEqual(self.rp, shown['uuid'])
        renamed = self.unique('renamed')
        self.openstack(['resource', 'provider', 'set', self.name,
                        '--name', renamed])
        self.assertEqual(renamed, self.openstack(
            ['resource', 'provider', 'show', '-f', 'value', '-c', 'name',
             renamed]).strip())

    def test_a_uuid_is_not_looked_up(self):
        calls = self.record_requests()
        self.openstack(['resource', 'provider', 'show', self.rp])
        self.assertEqual([('GET', '/resource_providers/' + self.rp)],
                         [call.request for call in calls
                          if call.request != ('GET', '/')])

    def test_a_name_costs_one_lookup(self):
        calls = self.record_requests()
        self.openstack(['resource', 'provider', 'show', self.name])
        self.assertEqual([('GET', LOOKUP % self.name),
                          ('GET', '/resource_providers/' + self.rp)],
                         [call.request for call in calls
                          if call.request != ('GET', '/')])

    def test_inventory_by_name(self):
        inventory = ['resource', 'provider', 'inventory']
        self.openstack(inventory + ['set', self.name, '--resource', 'VCPU=8',
                                    '--resource', 'MEMORY_MB=1024'])
        self.openstack(inventory + ['set', self.name, '--amend',
                                    '--resource', 'DISK_GB=10'])
        self.openstack(inventory + ['class', 'set', self.name, 'DISK_GB',
                                    '--total', '50'])
        listed = self.openstack(inventory + ['list', self.name],
                                use_json=True)
        self.assertEqual({'VCPU': 8, 'MEMORY_MB': 1024, 'DISK_GB': 50},
                         {row['resource_class']: row['total']
                          for row in listed})
        shown = self.openstack(inventory + ['show', self.name, 'VCPU'],
                               use_json=True)
        self.assertEqual(8, shown['total'])
        self.openstack(inventory + ['delete', self.name,
                                    '--resource-class', 'DISK_GB'])
        self.assertEqual({'VCPU', 'MEMORY_MB'}, {
            row['resource_class'] for row in self.openstack(
                inventory + ['list', self.rp], use_json=True)})

    def test_usage_by_name(self):
        self.set_inventory(self.rp, {'VCPU': 8})
        self.allocate(str(uuid.uuid4()), {self.rp: {'VCPU': 3}})
        rows = self.openstack(['resource', 'provider', 'usage', 'show',
                               self.name], use_json=True)
        self.assertEqual([{'resource_class': 'VCPU', 'usage': 3}], rows)

    def test_delete_by_name(self):
        self.openstack(['resource', 'provider', 'delete', self.name])
        self.http('GET', '/resource_providers/' + self.rp, expect=404)
        self.assertCommandFails(['resource', 'provider', 'delete', self.name],
                                UNKNOWN % self.name)

    def test_unknown_name_changes_nothing(self):
        """Each command refuses a name nobody has, after the one lookup."""
        missing = self.unique('no-such-host')
        commands = [
            ['show', missing], ['set', missing, '--name', 'x'],
            ['delete', missing],
            ['inventory', 'list', missing],
            ['inventory', 'show', missing, 'VCPU'],
            ['inventory', 'set', missing, '--resource', 'VCPU=1'],
            ['inventory', 'class', 'set', missing, 'VCPU', '--total', '1'],
            ['inventory', 'delete', missing, '--resource-class', 'VCPU'],
            ['usage', 'show', missing],
        ] + self.newer_commands(missing)
        for command in commands:
            calls = self.record_requests()
            self.assertCommandFails(['resource', 'provider'] + command,
                                    UNKNOWN % missing)
            self.assertEqual([('GET', LOOKUP % missing)],
                             [call.request for call in calls
                              if call.request != ('GET', '/')], command)

    def newer_commands(self, missing):
        return []


class TestNamedProvider_1_0(NamedProviderTests, base.FunctionalTestCase):
    VERSION = '1.0'


class TestNamedProvider_1_39(NamedProviderTests, base.FunctionalTestCase):
    VERSION = '1.39'

    def newer_commands(self, missing):
        consumer = str(uuid.uuid4())
        return [
            ['trait', 'list', missing],
            ['trait', 'set', missing, '--trait', 'HW_CPU_X86_AVX'],
            ['trait', 'delete', missing],
            ['aggregate', 'list', missing],
            ['aggregate', 'set', missing, '--generation', '0'],
            ['list', '--in-tree', missing],
            ['create', self.unique('child'), '--parent-provider', missing],
            ['allocation', 'set', consumer, '--project-id', self.project,
             '--user-id', self.user, '--consumer-type', 'INSTANCE',
             '--allocation', 'rp=%s,VCPU=1' % missing],
        ]

    def test_traits_by_name(self):
        trait = ['resource', 'provider', 'trait']
        self.openstack(trait + ['set', self.name, '--trait', 'HW_CPU_X86_AVX',
                                '--trait', 'HW_CPU_X86_SSE'])
        self.openstack(trait + ['delete', self.name, '--trait',
                                'HW_CPU_X86_SSE'])
        self.assertEqual(['HW_CPU_X86_AVX'], [
            row['name'] for row in self.openstack(trait + ['list', self.name],
                                                  use_json=True)])
        self.openstack(trait + ['delete', self.name])
        self.assertEqual([], self.openstack(trait + ['list', self.rp],
                                            use_json=True))

    def test_aggregates_by_name(self):
        agg = str(uuid.uuid4())
        self.openstack(['resource', 'provider', 'aggregate', 'set', self.name,
                        '--aggregate', agg, '--generation',
                        str(self.provider_generation(self.rp))])
        self.assertEqual([{'uuid': agg}], self.openstack(
            ['resource', 'provider', 'aggregate', 'list', self.name],
            use_json=True))

    def test_parent_and_tree_by_name(self):
        child = self.openstack(['resource', 'provider', 'create',
                                self.unique('numa'), '--parent-provider',
                                self.name], use_json=True)
        self.assertEqual(self.rp, child['parent_provider_uuid'])
        other = self.create_provider()
        self.openstack(['resource', 'provider', 'set', other['name'],
                        '--name', other['name'], '--parent-provider',
                        self.name])
        listed = self.openstack(['resource', 'provider', 'list',
                                 '--in-tree', child['name']], use_json=True)
        self.assertEqual({self.rp, child['uuid'], other['uuid']},
                         {row['uuid'] for row in listed})

    def test_allocations_by_name(self):
        self.set_inventory(self.rp, {'VCPU': 8, 'MEMORY_MB': 1024})
        consumer = str(uuid.uuid4())
        rows = self.openstack(
            ['resource', 'provider', 'allocation', 'set', consumer,
             '--project-id', self.project, '--user-id', self.user,
             '--consumer-type', 'INSTANCE',
             '--allocation', 'rp=%s,VCPU=2' % self.name,
             '--allocation', 'rp=%s,MEMORY_MB=256' % self.rp], use_json=True)
        self.assertEqual([(self.rp, {'VCPU': 2, 'MEMORY_MB': 256})],
                         [(row['resource_provider'], row['resources'])
                          for row in rows])
        self.openstack(['resource', 'provider', 'allocation', 'unset',
                        consumer, '--provider', self.name])
        self.assertEqual([], self.show_allocations(consumer))

    def test_candidates_and_capacity_in_tree_by_name(self):
        self.set_inventory(self.rp, {'VCPU': 8})
        other = self.compute_node()
        rows = self.openstack(['allocation', 'candidate', 'list',
                               '--resource', 'VCPU=1', '--in-tree',
                               self.name], use_json=True)
        self.assertEqual({self.rp}, {row['resource provider'] for row in rows})
        rows = self.openstack(['resource', 'provider', 'capacity', 'list',
                               '--in-tree', self.name], use_json=True)
        self.assertNotIn(other, str(rows))
        self.assertIn(self.rp, str(rows))
        missing = self.unique('no-such-host')
        self.assertCommandFails(['allocation', 'candidate', 'list',
                                 '--resource', 'VCPU=1', '--in-tree',
                                 missing], UNKNOWN % missing)
        self.assertCommandFails(['resource', 'provider', 'capacity', 'list',
                                 '--in-tree', missing], UNKNOWN % missing)


class RequestIdTests:
    """A failed request's text is upstream's, then its request id."""

    def test_error_ends_with_the_failed_requests_id(self):
        given = self.record_request_ids()
        missing = str(uuid.uuid4())
        result = self.assertCommandFails(
            ['resource', 'provider', 'show', missing],
            'No resource provider with uuid %s found (HTTP 404)' % missing)
        self.assertEndsWithRequestId(result.stderr, 404)
        self.assertTrue(result.stderr.rstrip().endswith(
            '(HTTP 404) (Request-ID: %s)' % given[-1]), result.stderr)

    def test_delete_hints_at_the_consumers(self):
        name = self.unique('host')
        rp = self.create_provider(name)['uuid']
        self.set_inventory(rp, {'VCPU': 8})
        self.allocate(str(uuid.uuid4()), {rp: {'VCPU': 1}})
        given = self.record_request_ids()
        result = self.assertCommandFails(
            ['resource', 'provider', 'delete', name],
            'Unable to delete resource provider %s: Resource provider has '
            'allocations. (HTTP 409)' % rp)
        self.assertEqual(
            'Unable to delete resource provider %s: Resource provider has '
            'allocations. (HTTP 409) (Request-ID: %s). See: openstack '
            'resource provider consumer list %s' % (rp, given[-1], name),
            result.stderr.strip())

    def test_delete_hints_at_the_tree(self):
        parent = self.create_provider()['uuid']
        self.create_provider(parent=parent)
        result = self.assertCommandFails(
            ['resource', 'provider', 'delete', parent],
            'Unable to delete parent resource provider %s: It has child '
            'resource providers. (HTTP 409)' % parent)
        self.assertRegex(result.stderr.rstrip(), r'\(HTTP 409\)%s\. See: '
                         r'openstack resource provider tree show %s$'
                         % (base.REQUEST_ID, parent))

    def test_other_conflicts_have_no_hint(self):
        taken = self.create_provider()['name']
        result = self.assertCommandFails(
            ['resource', 'provider', 'create', taken], '(HTTP 409)')
        self.assertNotIn('See:', result.stderr)
        self.assertEndsWithRequestId(result.stderr, 409)

    def record_request_ids(self):
        """The ``x-openstack-request-id`` of each answer from now on."""
        ids = []
        intercept = self.placement.intercept
        if intercept is None:
            self.skipTest('needs the in-process server')
        app = intercept.app

        def recording(environ, start_response):
            def start(status, headers, *args):
                ids.extend(value for key, value in headers
                           if key.lower() == 'x-openstack-request-id')
                return start_response(status, headers, *args)
            return app(environ, start)

        intercept.app = recording
        self.addCleanup(setattr, intercept, 'app', app)
        return ids


class TestRequestIds_1_0(RequestIdTests, base.FunctionalTestCase):
    """Before error codes the hint follows the server's text."""
    VERSION = '1.0'


class TestRequestIds_1_39(RequestIdTests, base.FunctionalTestCase):
    VERSION = '1.39'


class TestProjectUsageNote(base.FunctionalTestCase):
    """An unknown project is told apart from nothing only by a note: the
    table stays empty and the exit code 0, as upstream's."""

    VERSION = '1.39'

    def test_typo_prints_a_note_and_an_empty_table(self):
        typo = 'no-such-project'
        result = self.openstack(['resource', 'usage', 'show', typo,
                                 '-f', 'json'], may_fail=True)
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual('[]', result.stdout.strip())
        self.assertEqual(
            'No usages recorded for project %s: it has no allocations, or '
            'the ID is not one Placement knows.' % typo,
            result.stderr.strip())

    def test_a_project_with_usages_prints_no_note(self):
        rp = self.compute_node()
        self.allocate(str(uuid.uuid4()), {rp: {'VCPU': 1}}, self.project,
                      self.user)
        result = self.openstack(['resource', 'usage', 'show', self.project,
                                 '--user-id', self.user], may_fail=True)
        self.assertEqual((0, ''), (result.code, result.stderr))
        self.assertTrue(re.search(r'VCPU\s*\|\s*1', result.stdout))
        other = self.openstack(['resource', 'usage', 'show', self.project,
                                '--user-id', 'someone-else'], may_fail=True)
        self.assertIn('project %s, user someone-else:' % self.project,
                      other.stderr)
