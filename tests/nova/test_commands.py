# SPDX-License-Identifier: Apache-2.0
"""Our Nova audits in the Nova world: each finds exactly the problems the
scenarios made, fixes them so that Nova's own audit then finds nothing,
never touches live servers, migrations under way or other services'
consumers, and leaves alone a consumer Nova changed meanwhile."""

import io

import fixtures
from nova.api.openstack.compute import versions

from osc_placement import compute
from tests.nova import base
from tests.nova import drivers
from tests.nova import scenarios

AUDIT = ('resource', 'provider', 'consumer', 'audit')
STALE = ('resource', 'provider', 'stale', 'list')
TYPES = ('resource', 'provider', 'consumer', 'type', 'sync')
FLAVOR = {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1}


class Terminal(io.StringIO):
    """A terminal the operator answers at; ``before_answer`` is what
    happens in the cloud while the question is on the screen."""

    def __init__(self, answer='y\n', before_answer=None):
        super().__init__(answer)
        self.before_answer = before_answer

    def isatty(self):
        return True

    def readline(self, *args):
        if self.before_answer:
            self.before_answer()
        return super().readline(*args)


class AuditWorldTest(base.NovaWorldTestCase, scenarios.ScenarioMixin):

    def audit(self, *options):
        code, rows, err = self.run_json(*(AUDIT + options))
        return code, {row['consumer_uuid']: row for row in rows or ()}, err

    def untouched(self, world):
        """Every allocation the audit must never change."""
        keep = (world['live'].servers + world['in_progress'].servers
                + world['in_progress'].migrations
                + world['external'].consumers
                + world['reinstalled'].consumers)
        return {uuid: self.consumer_allocations(uuid) for uuid in keep}

    def test_audit_finds_and_fixes_exactly_what_went_wrong(self):
        # Pages of two: every list the audit reads from Nova is paged.
        self.flags(max_limit=2, group='api')
        world = self.build_world()
        interrupted, deleted = world['interrupted'], world['deleted']
        evacuated, nested = world['evacuated'], world['nested']
        expected = {
            interrupted.migrations[0]: 'migration-finished',
            # Nova deletes a server's migrations with it.
            deleted.migrations[0]: 'orphaned',
            evacuated.servers[0]: 'doubled',
            nested.servers[0]: 'doubled',
        }
        before = self.untouched(world)

        code, found, err = self.audit()
        self.assertEqual(3, code, err)
        self.assertEqual(expected, {uuid: row['problem']
                                    for uuid, row in found.items()})
        self.assertIn('2 consumers are not Nova\'s', err)
        aggregate = self.add_provider_aggregate(self.provider_of('evac-src'))
        for scope in (('--resource-provider', 'evac-src'),
                      ('--aggregate', aggregate)):
            code, scoped, err = self.audit(*scope)
            self.assertEqual(3, code, err)
            self.assertEqual({evacuated.servers[0]: 'doubled'},
                             {uuid: row['problem']
                              for uuid, row in scoped.items()}, scope)
        self.assertIn('pre-migrating, but the server is ACTIVE and not '
                      'moving', found[interrupted.migrations[0]]['detail'])
        self.assertIn('go back to the server',
                      found[interrupted.migrations[0]]['detail'])

        # Nova's own audit, on the same cloud: the same consumers where
        # it can judge, except that it takes the interrupted server's
        # destination claim for a leak (and would delete a live server's
        # allocation) where ours hands the source back to the server.
        code, output = self.nova_manage_audit()
        self.assertEqual(3, code, output)
        judged_alike = set(expected) - {interrupted.migrations[0]}
        for consumer in judged_alike:
            self.assertIn('consumer UUID %s on' % consumer, output)
        self.assertIn('consumer UUID %s on Resource Provider %s can be '
                      'deleted' % (interrupted.servers[0],
                                   interrupted.providers[1]), output)
        self.assertEqual(4, output.count('can be deleted'))

        code, fixed, err = self.audit('--delete', '--yes')
        self.assertEqual(4, code, err)
        self.assertEqual(set(expected), set(fixed))
        self.assertTrue(all(row['result'].startswith('deleted')
                            for row in fixed.values()), fixed)

        source, dest = interrupted.providers
        self.assertEqual({source: FLAVOR},
                         self.consumer_allocations(interrupted.servers[0]))
        self.assertEqual({}, self.consumer_allocations(
            interrupted.migrations[0]))
        self.assertEqual({}, self.consumer_allocations(deleted.migrations[0]))
        self.assertEqual({evacuated.providers[1]: FLAVOR},
                         self.consumer_allocations(evacuated.servers[0]))
        # The nested share too, which Nova's audit cannot see.
        source, source_child, dest, dest_child = nested.providers
        self.assertEqual({dest: FLAVOR, dest_child: {drivers.MAGIC: 1}},
                         self.consumer_allocations(nested.servers[0]))
        self.assertEqual(before, self.untouched(world))

        self.assertEqual(0, self.audit()[0])
        code, output = self.nova_manage_audit()
        self.assertEqual(0, code, output)
        # And Nova goes on: the migration under way is confirmed.
        server = self.api.get_server(world['in_progress'].servers[0])
        self._confirm_resize(server)
        self.assertEqual({world['in_progress'].providers[1]: FLAVOR},
                         self.consumer_allocations(server['id']))

    def test_stale_providers_and_consumer_types(self):
        world = self.build_world()
        reinstalled = world['reinstalled']
        old_root, child = reinstalled.providers
        new_node = reinstalled.extra['new_node']

        code, rows, err = self.run_json(*STALE)
        self.assertEqual(3, code, err)
        self.assertEqual(
            [(old_root, 'stale'), (child, 'child-of-stale')],
            [(row['uuid'], row['problem']) for row in rows])
        self.assertIn(new_node, rows[0]['detail'])
        self.assertEqual(reinstalled.consumers[0], rows[1]['held_by'])

        # The child holds allocations: nothing of the tree is deleted.
        code, rows, err = self.run_json(*(STALE + ('--delete', '--yes')))
        self.assertEqual(3, code, err)
        self.assertTrue(all(row['result'].startswith('left alone')
                            for row in rows), rows)
        self.placement.delete('/allocations/%s' % reinstalled.consumers[0])
        code, rows, err = self.run_json(*(STALE + ('--delete', '--yes')))
        self.assertEqual(4, code, err)
        self.assertEqual(['deleted', 'deleted'],
                         [row['result'] for row in rows])
        self.assertEqual(0, self.run_command(*STALE)[0])
        # Nova can now make the new node's provider under its name.
        self._run_periodics()
        self.assertEqual('reinst', self.placement_get(
            '/resource_providers/%s' % new_node)['name'])

        before = {uuid: self.consumer_allocations(uuid)
                  for uuid in self.all_consumers()}
        code, rows, err = self.run_json(*TYPES)
        self.assertEqual(0, code, err)
        types = {row['consumer_uuid']: row['new_consumer_type']
                 for row in rows}
        migrations = {world[name].migrations[0] for name in
                      ('in_progress', 'interrupted', 'deleted')}
        migrations -= {world['deleted'].migrations[0]}  # server gone
        self.assertEqual(migrations, {uuid for uuid, kind in types.items()
                                      if kind == 'MIGRATION'})
        servers = set(world['live'].servers) | {
            world[name].servers[0] for name in
            ('in_progress', 'interrupted', 'evacuated', 'nested')}
        self.assertEqual(servers, {uuid for uuid, kind in types.items()
                                   if kind == 'INSTANCE'})
        self.assertNotIn(world['external'].consumers[0], types)
        self.assertEqual(before, {uuid: self.consumer_allocations(uuid)
                                  for uuid in self.all_consumers()})
        usages = self.placement_get('/usages?project_id=%s'
                                    % self.project_id)['usages']
        self.assertEqual(len(servers), usages['INSTANCE']['consumer_count'])
        self.assertEqual(len(migrations),
                         usages['MIGRATION']['consumer_count'])
        self.assertEqual(0, self.run_command(*TYPES)[0])


class ChangedMeanwhileTest(base.NovaWorldTestCase, scenarios.ScenarioMixin):

    def test_a_consumer_nova_changes_before_the_answer_is_left_alone(self):
        evacuated = self.make_evacuated_server('evac-src', 'evac-dst')
        server = evacuated.servers[0]

        def owner_deletes_the_server():
            self._delete_server({'id': server})

        terminal = Terminal(before_answer=owner_deletes_the_server)
        out, err = io.StringIO(), Terminal()
        app = base.InProcessShell(self.auth_plugin(), terminal, out, err)
        with base.captured_process_output():
            code = app.run(list(AUDIT + ('--delete', '-f', 'value', '-c',
                                         'consumer_uuid', '-c', 'result')))
        self.assertEqual(3, code, err.getvalue())
        self.assertIn('Remove them?', err.getvalue())
        self.assertEqual('%s left alone: changed since read' % server,
                         out.getvalue().strip())
        self.assertEqual({}, self.consumer_allocations(server))

    def test_a_move_started_after_nova_was_read_is_not_undone(self):
        # The interrupted resize: its stuck migration would hand the
        # source back to the server. Between the audit's read of Nova
        # and its read of the consumers, the operator evacuates the
        # server from the dead source to a new host.
        interrupted = self.make_interrupted_resize('int-src', 'int-dst')
        self.start_host('rescue')
        server = self.api.get_server(interrupted.servers[0])
        real_hypervisors = compute.ComputeClient.hypervisors
        evacuated = []

        def evacuate_then_list(client):
            if not evacuated:
                self._evacuate_server(server, {'host': 'rescue'},
                                      expected_host='rescue',
                                      expected_state='SHUTOFF')
                evacuated.append(True)
            return real_hypervisors(client)

        self.useFixture(fixtures.MonkeyPatch(
            'osc_placement.compute.ComputeClient.hypervisors',
            evacuate_then_list))
        code, rows, err = self.run_json(*(AUDIT + ('--delete', '--yes')))
        self.assertEqual([True], evacuated)
        rescue = self.provider_of('rescue')
        self.assertIn(rescue, self.consumer_allocations(server['id']))
        for row in rows or ():
            self.assertNotIn('moved to server', row['result'])

    def test_without_confirmation_nothing_is_removed(self):
        evacuated = self.make_evacuated_server('evac-src', 'evac-dst')
        before = self.consumer_allocations(evacuated.servers[0])
        code, out, err = self.run_command(*(AUDIT + ('--delete',)))
        self.assertEqual(1, code)
        self.assertIn('Refusing to remove the allocations of 1 consumers '
                      'without confirmation; nothing was changed', err)
        self.assertEqual(before,
                         self.consumer_allocations(evacuated.servers[0]))


class FlavorCapacityTest(base.NovaWorldTestCase, scenarios.ScenarioMixin):

    def test_fit_for_a_flavor_is_what_nova_boots(self):
        made = self.make_flavor_capacity('gold', 'pinned')
        # A second gold host, disabled, and a magic host without the
        # trait: neither may take a world.magic server.
        self.start_host('gold-off', driver='MagicResourceDriver')
        self.add_provider_trait(self.provider_of('gold-off'),
                                scenarios.GOLD_TRAIT)
        self.admin_api.put_service(self.service_of('gold-off')['id'],
                                   {'status': 'disabled'})
        self.start_host('plain-magic', driver='MagicResourceDriver')
        self.make_disabled_host('disabled')

        code, rows, err = self.run_json(
            'resource', 'provider', 'capacity', 'list',
            '--flavor', scenarios.MAGIC, '--show-request')
        self.assertEqual(0, code, err)
        self.assertIn('required=CUSTOM_GOLD', err)
        self.assertIn('root_required=!COMPUTE_STATUS_DISABLED', err)
        total = [row['fit'] for row in rows if row['uuid'] == '(total)']
        self.assertEqual([drivers.MAGIC_TOTAL], total)

        # Nova boots exactly that many, all on the enabled gold host,
        # then answers NoValidHost.
        for n in range(total[0]):
            server = self._create_server(
                name='magic-%d' % n, flavor_id=made.extra['magic'],
                networks='none')
            self.assertEqual('gold', server['OS-EXT-SRV-ATTR:host'])
        server = self._create_server(
            name='magic-too-many', flavor_id=made.extra['magic'],
            networks='none', expected_state='ERROR')
        self.assertIn('No valid host', server['fault']['message'])

        code, rows, err = self.run_json(
            'resource', 'provider', 'capacity', 'list',
            '--flavor', made.extra['magic'])
        self.assertEqual([0], [row['fit'] for row in rows
                               if row['uuid'] == '(total)'])

        # The dedicated-CPU flavor asks PCPU, which only pinned has. (The
        # fake driver has no NUMA topology, so Nova cannot boot it here.)
        code, rows, err = self.run_json(
            'resource', 'provider', 'capacity', 'list',
            '--flavor', scenarios.DEDICATED, '--show-request')
        self.assertIn('PCPU:2', err)
        self.assertNotIn('VCPU', err.split('\n')[0])
        self.assertEqual({'pinned': drivers.PCPU_TOTAL // 2,
                          '(total)': drivers.PCPU_TOTAL // 2},
                         {row['name']: row['fit'] for row in rows
                          if row['fit']})


class ErrorsTest(base.NovaWorldTestCase, scenarios.ScenarioMixin):

    def test_refusals_are_clear_and_change_nothing(self):
        evacuated = self.make_evacuated_server('evac-src', 'evac-dst')
        before = self.consumer_allocations(evacuated.servers[0])

        # A cloud whose policy keeps migrations from this admin.
        self.policy.set_rules({'os_compute_api:os-migrations:index':
                               'role:auditor'}, overwrite=False)
        code, out, err = self.run_command(*(AUDIT + ('--delete', '--yes')))
        self.assertEqual(1, code)
        self.assertIn('Nova refused GET /os-migrations', err)
        self.assertIn('(HTTP 403)', err)

        catalog = {'placement': self.placement_url}
        code, out, err = self.run_command(*(AUDIT + ('--delete', '--yes')),
                                          catalog=catalog)
        self.assertEqual(1, code)
        self.assertIn('No compute endpoint in the service catalog', err)

        # A Nova from before 2.69 (Rocky), in what it accepts and in
        # what its version document says.
        self.useFixture(fixtures.MonkeyPatch(
            'nova.api.openstack.api_version_request._MAX_API_VERSION',
            '2.68'))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.api.openstack.compute.versions.VERSIONS',
            {name: dict(document, version='2.68')
             for name, document in versions.VERSIONS.items()}))
        code, out, err = self.run_command(*(STALE + ('--delete', '--yes')))
        self.assertEqual(1, code)
        self.assertIn('speaks compute API microversions up to 2.68; this '
                      'command needs 2.69', err)
        self.assertEqual(before,
                         self.consumer_allocations(evacuated.servers[0]))
