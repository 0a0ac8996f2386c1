# SPDX-License-Identifier: Apache-2.0
"""The verdicts of the Nova audits, on what Placement and Nova answered.

The commands are tested against a real Nova in tests/nova; here each rule
of ``osc_placement.audit`` is pinned on small hand-made answers.
"""

import testtools

from osc_placement import audit

ROOT_A, ROOT_B = 'aaaa', 'bbbb'
CHILD_A = 'aaaa-gpu'
SHARED_DISK = 'disk'
ROOT_OF = {ROOT_A: ROOT_A, ROOT_B: ROOT_B, CHILD_A: ROOT_A,
           SHARED_DISK: SHARED_DISK}
SHARING = {SHARED_DISK}
TREES = audit.Trees(ROOT_OF, SHARING, frozenset((ROOT_A, ROOT_B)))


def server(uuid, node='node-a', host='host-a', status='ACTIVE',
           task_state=None):
    return {'id': uuid, 'OS-EXT-SRV-ATTR:host': host,
            'OS-EXT-SRV-ATTR:hypervisor_hostname': node, 'status': status,
            'OS-EXT-STS:task_state': task_state}


def hypervisor(uuid, name, host):
    return {'id': uuid, 'hypervisor_hostname': name,
            'service': {'host': host}}


HYPERVISORS = [hypervisor(ROOT_A, 'node-a', 'host-a'),
               hypervisor(ROOT_B, 'node-b', 'host-b')]


def migration(uuid, instance, status, kind='resize'):
    return {'uuid': uuid, 'instance_uuid': instance, 'status': status,
            'migration_type': kind}


def detail(*held, consumer_type=None):
    """GET /allocations/{consumer} holding ``(provider, {class: n})``."""
    answer = {'allocations': {provider: {'resources': resources}
                              for provider, resources in held},
              'consumer_generation': 3, 'project_id': 'p', 'user_id': 'u'}
    if consumer_type:
        answer['consumer_type'] = consumer_type
    return answer


def view(servers=(), migrations=(), flavors=()):
    return audit.NovaView(list(servers), list(migrations), HYPERVISORS,
                          list(flavors))


def judge(consumer, answer, nova, trees=TREES):
    return audit.judge(consumer, answer, nova, trees)


class TestConsumerVerdicts(testtools.TestCase):

    def test_a_live_server_in_one_tree_is_fine(self):
        held = detail((ROOT_A, {'VCPU': 1}), (CHILD_A, {'VGPU': 1}),
                      (SHARED_DISK, {'DISK_GB': 10}))
        self.assertIsNone(judge('s1', held, view([server('s1')])))

    def test_no_server_or_migration_is_orphaned_and_loses_all(self):
        finding = judge('gone', detail((ROOT_A, {'VCPU': 1})), view())
        self.assertEqual(audit.ORPHANED, finding.problem)
        self.assertEqual(frozenset(), finding.keep)

    def test_a_nested_only_orphan_is_found(self):
        # What nova-manage's partial delete leaves: a vGPU alone.
        finding = judge('gone', detail((CHILD_A, {'VGPU': 1})), view())
        self.assertEqual(audit.ORPHANED, finding.problem)

    def test_flavor_classes_are_novas(self):
        held = detail((CHILD_A, {'CUSTOM_MAGIC': 1}))
        flavor = {'extra_specs': {'resources1:CUSTOM_MAGIC': '1',
                                  'resources:CUSTOM_OFF': '0'}}
        self.assertIsNone(judge('gone', held, view()))
        self.assertEqual(audit.ORPHANED,
                         judge('gone', held, view(flavors=[flavor])).problem)
        self.assertIsNone(judge('gone', detail((CHILD_A, {'CUSTOM_OFF': 1})),
                                view(flavors=[flavor])))

    def test_a_typed_consumer_is_novas_whatever_it_holds(self):
        held = detail((ROOT_A, {'CUSTOM_X': 1}), consumer_type='INSTANCE')
        self.assertEqual(audit.ORPHANED, judge('c', held, view()).problem)

    def test_other_consumers_are_never_judged(self):
        held = detail((ROOT_A, {'CUSTOM_RESERVATION': 1}),
                      consumer_type='BLAZAR')
        self.assertIsNone(judge('c', held, view()))

    def test_novas_classes_outside_novas_trees_are_not_novas(self):
        # Another service's VCPU on a root that is no node of Nova's.
        trees = audit.Trees(dict(ROOT_OF, zun='zun'), SHARING,
                            frozenset((ROOT_A, ROOT_B)))
        self.assertIsNone(judge('c', detail(('zun', {'VCPU': 1})), view(),
                                trees))
        self.assertEqual(audit.ORPHANED, judge(
            'c', detail(('zun', {'VCPU': 1})), view(),
            trees._replace(nova_roots=frozenset(('zun',)))).problem)
        self.assertEqual(audit.ORPHANED, judge(
            'c', detail((ROOT_A, {'CUSTOM_PCI_8086_1563': 1})),
            view()).problem)

    def test_nova_roots_by_uuid_or_by_a_nodes_name(self):
        every = [provider(ROOT_A, 'node-a'), provider('old', 'node-b'),
                 provider('seg', 'segment'),
                 provider(CHILD_A, 'gpu', ROOT_A, ROOT_A)]
        self.assertEqual({ROOT_A, 'old'}, audit.nova_roots(every, view()))

    def test_migration_under_way_is_fine_and_finished_is_reported(self):
        held = detail((ROOT_A, {'VCPU': 2}))
        moving = server('s1', 'node-b', 'host-b', status='VERIFY_RESIZE')
        for status in ('migrating', 'finished', 'running', 'pre-migrating',
                       'confirming', 'reverting', 'accepted'):
            nova = view([moving], [migration('m1', 's1', status)])
            self.assertIsNone(judge('m1', held, nova), status)
        for status in sorted(audit.FINISHED_MIGRATION_STATUSES):
            nova = view([server('s1', 'node-b', 'host-b')],
                        [migration('m1', 's1', status)])
            finding = judge('m1', held, nova)
            self.assertEqual(audit.MIGRATION_FINISHED, finding.problem,
                             status)
            self.assertIn(status, finding.detail)

    def test_two_trees_without_a_migration_is_doubled(self):
        held = detail((ROOT_A, {'VCPU': 1}), (CHILD_A, {'VGPU': 1}),
                      (ROOT_B, {'VCPU': 1}), (SHARED_DISK, {'DISK_GB': 5}))
        finding = judge('s1', held, view([server('s1', 'node-b', 'host-b')]))
        self.assertEqual(audit.DOUBLED, finding.problem)
        self.assertEqual({ROOT_B, SHARED_DISK}, finding.keep)
        self.assertEqual({ROOT_B: {'resources': {'VCPU': 1}},
                          SHARED_DISK: {'resources': {'DISK_GB': 5}}},
                         audit.fixed_allocations(held, finding))

    def test_two_trees_during_a_migration_is_fine(self):
        held = detail((ROOT_A, {'VCPU': 1}), (ROOT_B, {'VCPU': 1}))
        nova = view([server('s1', status='MIGRATING',
                            task_state='migrating')],
                    [migration('m1', 's1', 'post-migrating',
                               'live-migration')])
        self.assertIsNone(judge('s1', held, nova))

    def test_a_migration_under_way_whose_server_is_idle_is_stuck(self):
        # A resize whose source compute died: the migration stays
        # pre-migrating, the server is reset to ACTIVE on its source.
        held = detail((ROOT_A, {'VCPU': 2}))
        nova = view([server('s1')], [migration('m1', 's1', 'pre-migrating')])
        finding = judge('m1', held, nova)
        self.assertEqual(audit.MIGRATION_FINISHED, finding.problem)
        self.assertIn('pre-migrating, but the server is ACTIVE and not '
                      'moving', finding.detail)
        self.assertEqual('s1', finding.to)
        self.assertTrue(nova.is_over(nova.migrations['m1']))
        doubled = judge('s1', detail((ROOT_A, {'VCPU': 1}),
                                     (ROOT_B, {'VCPU': 1})), nova)
        self.assertEqual((audit.DOUBLED, frozenset((ROOT_A,))),
                         (doubled.problem, doubled.keep))

    def test_a_stuck_migrations_allocations_go_back_to_its_server(self):
        nova = view([server('s1')], [migration('m1', 's1', 'pre-migrating')])
        finding = judge('m1', detail((ROOT_A, {'VCPU': 2})), nova)
        # The server holds only the node it never reached: hand back.
        back = audit.hand_back(finding, detail((ROOT_B, {'VCPU': 2})),
                               TREES, nova)
        self.assertEqual('s1', back.to)
        self.assertIn('go back to the server', back.detail)
        # The server already holds its own node: just remove.
        self.assertIsNone(audit.hand_back(
            finding, detail((CHILD_A, {'VGPU': 1})), TREES, nova).to)

    def test_a_migration_of_a_server_elsewhere_is_only_removed(self):
        nova = view([server('s1', 'node-b', 'host-b')],
                    [migration('m1', 's1', 'error')])
        self.assertIsNone(judge('m1', detail((ROOT_A, {'VCPU': 2})),
                                nova).to)

    def test_an_evacuation_that_is_done_leaves_a_doubled_server(self):
        held = detail((ROOT_A, {'VCPU': 1}), (ROOT_B, {'VCPU': 1}))
        nova = view([server('s1', 'node-b', 'host-b')],
                    [migration('m1', 's1', 'done', 'evacuation')])
        finding = judge('s1', held, nova)
        self.assertEqual(audit.DOUBLED, finding.problem)
        self.assertEqual({ROOT_B}, finding.keep)
        self.assertIn('Nova frees the source when its compute starts',
                      finding.detail)

    def test_doubled_off_its_own_node_is_not_fixed(self):
        held = detail((ROOT_A, {'VCPU': 1}), (ROOT_B, {'VCPU': 1}))
        finding = judge('s1', held, view([server('s1', 'node-c', 'host-c')]))
        self.assertEqual(audit.DOUBLED, finding.problem)
        self.assertIsNone(finding.keep)

    def test_a_sharing_provider_is_not_a_second_tree(self):
        held = detail((ROOT_A, {'VCPU': 1}), (SHARED_DISK, {'DISK_GB': 1}))
        self.assertIsNone(judge('s1', held, view([server('s1')])))

    def test_a_consumer_emptied_meanwhile_is_not_judged(self):
        self.assertIsNone(judge('c', detail(), view()))


class TestNodeOfServer(testtools.TestCase):

    def test_same_name_on_two_hosts_is_told_apart_by_host(self):
        nova = audit.NovaView([], [], [hypervisor('n1', 'node', 'host-1'),
                                       hypervisor('n2', 'node', 'host-2')])
        self.assertEqual('n2', nova.node_of(server('s', 'node', 'host-2')))
        self.assertIsNone(nova.node_of(server('s', 'node', 'host-3')))
        self.assertIsNone(nova.node_of(server('s', None, None)))


class TestConsumerTypes(testtools.TestCase):

    def test_servers_and_migrations_get_nova_types(self):
        nova = view([server('s1')], [migration('m1', 's1', 'migrating')])
        self.assertEqual('INSTANCE', audit.nova_type('s1', nova))
        self.assertEqual('MIGRATION', audit.nova_type('m1', nova))
        self.assertIsNone(audit.nova_type('other', nova))


def provider(uuid, name, root=None, parent=None):
    return {'uuid': uuid, 'name': name, 'root_provider_uuid': root or uuid,
            'parent_provider_uuid': parent}


class TestStaleProviders(testtools.TestCase):

    def test_unknown_roots_leave_out_nodes_children_and_sharing(self):
        every = [provider(ROOT_A, 'node-a'), provider('old', 'node-x'),
                 provider(CHILD_A, 'gpu', ROOT_A, ROOT_A),
                 provider(SHARED_DISK, 'disk')]
        self.assertEqual(['old'], [item['uuid'] for item in
                                   audit.unknown_roots(every, view(),
                                                       SHARING)])

    def test_what_makes_a_root_a_stale_compute_nodes(self):
        nova = view()
        segment = provider('seg', 'segment')
        self.assertIsNone(audit.stale_verdict(
            segment, {'IPV4_ADDRESS': {}}, [], nova))
        by_classes = audit.stale_verdict(segment, {'MEMORY_MB': {}}, [], nova)
        self.assertFalse(by_classes.deletable)
        self.assertTrue(audit.stale_verdict(
            segment, {}, ['COMPUTE_STATUS_DISABLED'], nova).deletable)
        by_name = audit.stale_verdict(provider('old', 'node-b'), {}, [],
                                      nova)
        self.assertTrue(by_name.deletable)
        self.assertIn(ROOT_B, by_name.detail)

    def test_nodes_sharing_a_name_without_a_provider(self):
        nova = audit.NovaView([], [], HYPERVISORS + [
            hypervisor('new-b', 'node-b', 'host-b')])
        every = [provider(ROOT_A, 'node-a'), provider(ROOT_B, 'node-b')]
        rows = audit.nodes_without_provider(every, nova)
        self.assertEqual([('new-b', audit.DUPLICATE_NAME)],
                         [(row.provider['uuid'], row.problem)
                          for row in rows])
        self.assertIn(ROOT_B, rows[0].detail)
        self.assertEqual([], audit.nodes_without_provider(every, view()))

    def test_children_come_deepest_first(self):
        every = [provider('old', 'x'),
                 provider('numa', 'numa', 'old', 'old'),
                 provider('pf', 'pf', 'old', 'numa'),
                 provider(CHILD_A, 'gpu', ROOT_A, ROOT_A)]
        self.assertEqual(['pf', 'numa'], [
            item['uuid'] for item in audit.stale_children([every[0]],
                                                          every)])
